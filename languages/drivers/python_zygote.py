# python_zygote.py: a started Python 3.12 that forks one child per run (docs/warm-start.md).
# box_init (runner/gvisor/init/box_init.c) starts it as root inside a gVisor sandbox,
# the native backend (runner/native/nzygote.c) on the host, with the env of the runs
# it will serve; it never runs user code. Its serving loop is zcore's
# (runner/zygote/zcore.c, built beside this file as zcore.so): both protocols, the
# fork, the child's entry into its run (box_init's or ns_init's steps before an
# execve), the reports of the runs' ends. zcore returns only in a child that has
# entered its run, which then becomes `python3 main.py` (become_main, run).
import sys

# what a fresh `python3 main.py` has, taken before this file imports anything
FRESH_MODULES = frozenset(sys.modules)
SourceFileLoader = type(__loader__)
# The standard modules named as arguments (python.ini) are imported here once and
# kept in the children: modules without per-process state at import (no seeds, no
# clock, no cwd), so that a run finds them as a fresh import would make them. A run
# whose box holds a file of the same name gets a fresh import instead.
for _name in sys.argv[1:]:
    try:
        __import__(_name)
    except Exception:
        pass
KEPT_MODULES = frozenset(sys.modules)

import atexit  # noqa: E402
import builtins  # noqa: E402
import ctypes  # noqa: E402
import gc  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402

# the end's steps that the Python harnesses take too (beside this file)
from python_ending import _finish  # noqa: E402

# what a run's end calls, bound before any program runs: a program that
# replaces them (os._exit = print) changes nothing of how it ends
_exit, _collect, _objects = os._exit, gc.collect, gc.get_objects
_IOBase, _TextIOBase = io.IOBase, io.TextIOBase
_blocks = sys.getallocatedblocks
# a program that holds more objects than this at its end gets the interpreter's
# own teardown: end() lists the program's objects (gc.get_objects, 8 bytes each),
# memory a run near its limit may not have, and the teardown's faults are then
# a small part of its CPU
END_BLOCKS_MAX = 200000
ZYGOTE_BLOCKS = 0  # pymalloc's blocks when the zygote is ready


class _Child(ctypes.Structure):
    """zcore.h's struct zc_child: the run's argv, box_init's error pipe (-1 natively)"""
    _fields_ = [("argv", ctypes.POINTER(ctypes.c_char_p)), ("errfd", ctypes.c_int)]


def become_main(argv):
    """In the child, once it has entered its run: the interpreter as `python3 <script>` left
    it just before the script's first line. Returns the new __main__, the
    script's bytes and its absolute path; a script it cannot open ends the child
    with CPython's message and exit status 2."""
    script = os.path.abspath(argv[1])
    try:
        shadow = {e.partition(".")[0] for e in os.listdir(os.path.dirname(script))}
    except OSError:
        shadow = set()
    for name in list(sys.modules):
        if name not in KEPT_MODULES or (name not in FRESH_MODULES
                                        and name.partition(".")[0] in shadow):
            del sys.modules[name]
    sys.path_importer_cache.pop(sys.path[0], None)
    sys.argv = list(argv[1:])
    sys.orig_argv = list(argv)
    sys.path[0] = os.path.dirname(script)
    main = type(sys)("__main__")
    d = main.__dict__
    d["__package__"] = None
    d["__loader__"] = SourceFileLoader("__main__", script)
    d["__spec__"] = None
    d["__annotations__"] = {}
    d["__builtins__"] = builtins
    d["__file__"] = script
    d["__cached__"] = None
    sys.modules["__main__"] = main
    # os-level reads: open() adds an fstat, an isatty ioctl and two lseeks, each
    # a trip through gVisor's sentry
    try:
        fd = os.open(script, os.O_RDONLY | os.O_CLOEXEC)
        try:
            # one read of the whole file (a short read is its end), into a buffer
            # of its size, not a large one that malloc would map and unmap
            size = os.fstat(fd).st_size
            source = os.read(fd, size + 1)
            if len(source) > size:  # longer than fstat says (not a regular file)
                chunks = [source]
                while chunk := os.read(fd, 65536):
                    chunks.append(chunk)
                source = b"".join(chunks)
        finally:
            os.close(fd)
    except OSError as e:
        sys.stderr.write("%s: can't open file %r: [Errno %d] %s\n"
                         % (argv[0], script, e.errno, e.strerror))
        sys.stderr.flush()
        os._exit(2)
    return main, source, script


def serve():
    """zcore's loop: returns in a forked child that has entered its run (its
    argv and box_init's error pipe), never in the zygote. The call holds the
    GIL (PyDLL) and the fork is zcore's, so the child does what os.fork does
    in a child (PyOS_AfterFork_Child: locks re-made, the at-fork hooks, such
    as random's re-seed)."""
    here = os.path.dirname(os.path.abspath(__file__))
    zc = ctypes.PyDLL(os.path.join(here, "zcore.so"))
    zc.zc_serve.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p)
    zc.zc_serve.restype = ctypes.c_int
    after_fork = ctypes.pythonapi.PyOS_AfterFork_Child
    after_fork.restype = None
    exe, child = os.fsencode(sys.orig_argv[0]), _Child()
    gc.freeze()
    global ZYGOTE_BLOCKS
    ZYGOTE_BLOCKS = _blocks()
    # any script: become_main opens the one a job names
    if zc.zc_serve(exe, None, None, ctypes.byref(child)) < 0:
        _exit(1)
    after_fork()
    argv = []
    while child.argv[len(argv)] is not None:
        argv.append(os.fsdecode(child.argv[len(argv)]))
    return argv, child.errfd


def exit_status(e):
    """The exit status of an uncaught SystemExit, as CPython's
    _Py_HandleSystemExit makes it (a code that is not an int is printed)."""
    code, status = e.code, 1
    if code is None:
        return 0
    if isinstance(code, int):
        if -(1 << 63) <= code < (1 << 63):
            code &= 0xFFFFFFFF  # a C long cast to int
            return code - (1 << 32) if code >= 1 << 31 else code
        code, status = "OverflowError: Python int too large to convert to C long", -1
    try:
        err = sys.stderr
        if err is None:
            os.write(2, (str(code) + "\n").encode(errors="backslashreplace"))
        else:
            err.write(str(code) + "\n")
    except BaseException:
        pass
    return status


def drop_programs_modules():
    """What the interpreter's teardown does to the program's modules: out of
    sys.modules, then their globals set to None, the last imported first, in
    each the names with _ first (CPython's _PyModule_ClearDict)."""
    for name in ("last_exc", "last_type", "last_value", "last_traceback"):
        setattr(sys, name, None)
    names = [n for n in sys.modules if n == "__main__" or n not in KEPT_MODULES]
    mods = [sys.modules.pop(n) for n in names]
    while mods:
        d = getattr(mods.pop(), "__dict__", None)
        if not isinstance(d, dict):
            continue
        for first in (True, False):
            for k in list(d):
                if isinstance(k, str) and k != "__builtins__" and k.startswith("_") == first:
                    d[k] = None


def programs_files(action, std):
    """Calls action (flush, close) on every file object the program made that
    is still open, text layers first (theirs flushes their buffer too). Errors
    are ignored, as io's finalizer ignores them outside development mode (a
    closed descriptor, a detached buffer)."""
    files = [o for o in _objects()
             if isinstance(o, _IOBase) and not any(o is f for f in std)]
    files.sort(key=lambda f: not isinstance(f, _TextIOBase))
    for f in files:
        try:
            if not f.closed:
                getattr(f, action)()
        except BaseException:
            pass


def end(status):
    """Ends the run as Py_FinalizeEx would, for everything the program can see,
    without tearing down the interpreter the zygote started: that teardown
    writes to nearly every page the zygote shares with the child (refcounts),
    and its copy-on-write faults were about half of a warm run's CPU. In
    Py_FinalizeEx's order: python_ending's _finish (threading._shutdown,
    atexit handlers, sys.stdout and sys.stderr flushed: status 120 when that
    fails), as the harnesses end; then the program's own objects as the
    teardown ends them: its files flushed, its modules dropped
    (drop_programs_modules) and its garbage collected (the zygote's objects
    are frozen, gc.freeze in serve), so their __del__ methods run, then its
    files still open closed; os._exit.
    Left out: the zygote's own modules and objects, which the program did not
    make (this file's are bound before the program runs: it may replace them)."""
    status = _finish(status)
    std = (sys.__stdin__, sys.__stdout__, sys.__stderr__)
    sys.stdin, sys.stdout, sys.stderr = std
    # the program's files flushed first: the collector finalizes a cycle's
    # objects in no set order, and a buffer closed before its text layer
    # loses the text (the teardown flushes every buffered file before it)
    programs_files("flush", std)
    drop_programs_modules()
    _collect()
    programs_files("close", std)
    for f in std[1:]:
        try:
            f.flush()
        except BaseException:
            pass
    _exit(status)


def run(argv, errfd):
    main, source, script = become_main(argv)
    if errfd >= 0:
        os.close(errfd)  # box_init's "execve succeeded"
    exc, code, tb = None, None, None
    try:
        code = compile(source, script, "exec")
        del source
        exec(code, main.__dict__)
    except SystemExit as e:
        exc = e
    except BaseException as e:
        # as CPython prints an uncaught exception: without this file's frame
        tb = e.__traceback__.tb_next if e.__traceback__ else None
        e.__traceback__ = tb
        sys.last_exc = e
        sys.last_type, sys.last_value, sys.last_traceback = type(e), e, tb
        sys.excepthook(type(e), e, tb)
        if isinstance(e, KeyboardInterrupt):
            # CPython ends by SIGINT after finalizing
            atexit._run_exitfuncs()
            sys.stdout.flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        exc = SystemExit(1)
    del main, code, tb  # the program's objects: the end drops them
    if _blocks() - ZYGOTE_BLOCKS > END_BLOCKS_MAX:
        if exc is not None:
            raise exc  # the interpreter's own end, as before end()
        return
    status = exit_status(exc) if exc is not None else 0
    del exc
    end(status)


if __name__ == "__main__":
    run(*serve())
