# python_zygote.py: a started Python 3.12 that forks one child per run (docs/warm-start.md).
# box_init (runner/gvisor/init/box_init.c) starts it as root inside a gVisor sandbox
# with the env of the runs it will serve; it never runs user code. Per run it gets,
# on fd 3 (a SOCK_SEQPACKET socket), the job (box_proto.h's struct bx_job, token
# zeroed, then argv, env and the seccomp filter) and four fds: stdin, stdout,
# stderr and box_init's error pipe. It forks a child, replies with its pid, waits
# for it (gVisor has no CLONE_PARENT: box_init cannot) and sends its wait status
# and rusage; then it takes the next job. The child enters the run as box_init's
# own child() does before execve, then becomes `python3 main.py`.
# The native backend (runner/native/nzygote.c) starts it as root on the host and
# sends jobs of another kind (NJOB): see native_job() below. Those programs are
# its children too, but it does not wait for each: it reports their ends as they
# come (native_wait) and takes the next jobs meanwhile.
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
import resource  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import struct  # noqa: E402

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

JOB = struct.Struct("<IIqqqqqqqIIIIIIqII16s")
JOB_MAGIC = 0x314A4258
SOCK_FD = 3
# runner/native/nzygote.c's struct nz_job, and ns_proto.h's struct nsinit_report
NJOB = struct.Struct("<IIIIiI8Q")
NJOB_MAGIC = 0x5A4E4A31
REPORT = struct.Struct("<iiiii4xq")
NSINIT_FAIL, NSINIT_EXIT = 1, 2
# ns_proto.h's enum nsinit_step, the steps a warm native program goes through
(S_CGJOIN, S_SETGROUPS, S_SETGID, S_KEEPCAPS, S_SETUID, S_CAPSET, S_FDS) = (1, 6, 7, 8, 9, 10, 0)
(S_SECUREBITS, S_CAPBSET, S_NNP, S_RLIMIT, S_CHDIR_BOX, S_SECCOMP, S_SETNS) = (
    19, 20, 21, 22, 23, 24, 26)
INSIDE_ID = 1000  # NSINIT_INSIDE_ID

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.prctl.restype = ctypes.c_int
SYS_CAPSET, SYS_CAPGET = 126, 125
PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = 24, 38, 22
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_KEEPCAPS, PR_SET_SECUREBITS = 1, 4, 8, 28
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
# SECBIT_NOROOT, _LOCKED, NO_SETUID_FIXUP, _LOCKED, KEEP_CAPS_LOCKED (as ns_init)
SECUREBITS = 0x01 | 0x02 | 0x04 | 0x08 | 0x20
CAPS_DROPPED = (21, 7, 6, 5)  # CAP_SYS_ADMIN, CAP_SETUID, CAP_SETGID, CAP_KILL
U = ctypes.c_ulong


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


def fail(errfd, err):
    try:
        os.write(errfd, struct.pack("=i", err or 1))
    finally:
        os._exit(127)


def enter_run(job, filt, fds):
    """In the child: the run's session, stdio, limits, IPC namespace, uid, no
    capabilities, no_new_privs, /box and seccomp, in box_init's child() order."""
    (_, _, cpu_ms, _, _, processes, file_bytes, open_files, stack_kb, uid, gid,
     _, _, filter_len, _, _, _, _, _) = job
    stdin_fd, out_fd, err_fd, errfd = fds
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, ())
        os.setsid()
        os.dup2(stdin_fd, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        for fd in (stdin_fd, out_fd, err_fd, SOCK_FD):
            if fd > 2 and fd != errfd:
                os.close(fd)
        if cpu_ms > 0:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_ms // 1000 + 1, cpu_ms // 1000 + 2))
        if processes > 0:
            n = processes - 1 if processes > 1 else 0
            resource.setrlimit(resource.RLIMIT_NPROC, (n, n))
        if file_bytes > 0:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
        if open_files > 0:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))
        if stack_kb > 0:
            resource.setrlimit(resource.RLIMIT_STACK, (stack_kb * 1024, stack_kb * 1024))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.unshare(os.CLONE_NEWIPC)
        for cap in CAPS_DROPPED:
            libc.prctl(PR_CAPBSET_DROP, U(cap), U(0), U(0), U(0))
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        hdr = CapHeader(0x20080522, 0)
        data = (ctypes.c_uint32 * 6)()
        if libc.syscall(ctypes.c_long(SYS_CAPSET), ctypes.byref(hdr), data) < 0:
            fail(errfd, ctypes.get_errno())
        if libc.prctl(PR_SET_NO_NEW_PRIVS, U(1), U(0), U(0), U(0)) < 0:
            fail(errfd, ctypes.get_errno())
        os.chdir("/box")
        if filter_len:
            buf = ctypes.create_string_buffer(filt, len(filt))
            prog = SockFprog(filter_len, ctypes.addressof(buf))
            if libc.prctl(PR_SET_SECCOMP, U(2), ctypes.byref(prog), U(0), U(0)) < 0:
                fail(errfd, ctypes.get_errno())
    except OSError as e:
        fail(errfd, e.errno)
    except BaseException:
        fail(errfd, 22)


def become_main(argv):
    """In the child, after enter_run: the interpreter as `python3 <script>` left
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
    try:
        with open(script, "rb") as f:
            source = f.read()
    except OSError as e:
        sys.stderr.write("%s: can't open file %r: [Errno %d] %s\n"
                         % (argv[0], script, e.errno, e.strerror))
        sys.stderr.flush()
        os._exit(2)
    return main, source, script


def native_fail(rep_fd, step, err):
    """A warm native program's set-up failed: ns_init's report, exit 127."""
    try:
        os.write(rep_fd, REPORT.pack(NSINIT_FAIL, step, -1, err or 22, 0, 0))
    finally:
        os._exit(127)


def caps_set(effective):
    """Every permitted capability effective (True), or none at all (False)."""
    hdr = CapHeader(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    if libc.syscall(ctypes.c_long(SYS_CAPGET), ctypes.byref(hdr), data) < 0:
        return ctypes.get_errno()
    for i in (0, 3):  # effective, permitted, inheritable per 32 capabilities
        data[i] = data[i + 1] if effective else 0
        if not effective:
            data[i + 1] = data[i + 2] = 0
    if libc.syscall(ctypes.c_long(SYS_CAPSET), ctypes.byref(hdr), data) < 0:
        return ctypes.get_errno()
    return 0


def native_enter(limits, last_cap, filt, filter_len, fds):
    """In the program (pid 2 of the run): its cgroup, then init's namespaces, then
    what ns_init and its program_main do before execve, in their order."""
    stdin_fd, out_fd, err_fd, rep_fd, pidfd = fds[:5]
    step = S_CGJOIN

    def must(rc):
        if rc < 0:
            native_fail(rep_fd, step, ctypes.get_errno())

    try:
        for fd in fds[5:]:
            os.write(fd, b"0")
        step = S_SETNS
        os.setns(pidfd, os.CLONE_NEWUSER | os.CLONE_NEWNS | os.CLONE_NEWIPC
                 | os.CLONE_NEWUTS | os.CLONE_NEWNET | os.CLONE_NEWCGROUP)
        step = S_SETGROUPS
        os.setgroups([])
        step = S_SETGID
        os.setresgid(INSIDE_ID, INSIDE_ID, INSIDE_ID)
        step = S_KEEPCAPS
        must(libc.prctl(PR_SET_KEEPCAPS, U(1), U(0), U(0), U(0)))
        step = S_SETUID
        os.setresuid(INSIDE_ID, INSIDE_ID, INSIDE_ID)
        step = S_CAPSET
        err = caps_set(True)
        if err:
            native_fail(rep_fd, step, err)
        # the uid change cleared it: the zygote's end is the run's end
        libc.prctl(PR_SET_PDEATHSIG, U(signal.SIGKILL), U(0), U(0), U(0))
        step = S_SECUREBITS
        must(libc.prctl(PR_SET_SECUREBITS, U(SECUREBITS), U(0), U(0), U(0)))
        step = S_CAPBSET
        for cap in range(last_cap + 1):
            if libc.prctl(PR_CAPBSET_DROP, U(cap), U(0), U(0), U(0)) < 0 \
                    and ctypes.get_errno() != 22:
                native_fail(rep_fd, step, ctypes.get_errno())
        libc.prctl(PR_CAP_AMBIENT, U(PR_CAP_AMBIENT_CLEAR_ALL), U(0), U(0), U(0))
        step = S_CAPSET
        err = caps_set(False)
        if err:
            native_fail(rep_fd, step, err)
        step = S_NNP
        must(libc.prctl(PR_SET_NO_NEW_PRIVS, U(1), U(0), U(0), U(0)))
        step = S_RLIMIT
        for i, res in enumerate((resource.RLIMIT_FSIZE, resource.RLIMIT_NOFILE,
                                 resource.RLIMIT_STACK, resource.RLIMIT_CPU)):
            resource.setrlimit(res, (limits[2 * i], limits[2 * i + 1]))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        step = S_FDS
        signal.pthread_sigmask(signal.SIG_SETMASK, ())
        os.dup2(stdin_fd, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        keep = os.dup(rep_fd) if rep_fd > 2 else rep_fd
        os.closerange(3, keep)
        os.closerange(keep + 1, 1 << 20)
        os.set_inheritable(keep, False)
        rep_fd = keep
        step = S_CHDIR_BOX
        os.chdir("/box")
        # an execve without a change of uid leaves a process dumpable; the
        # setresuid above made it not (its /proc files root's)
        libc.prctl(PR_SET_DUMPABLE, U(1), U(0), U(0), U(0))
        step = S_SECCOMP
        if filter_len:
            buf = ctypes.create_string_buffer(filt, len(filt))
            prog = SockFprog(filter_len, ctypes.addressof(buf))
            must(libc.prctl(PR_SET_SECCOMP, U(2), ctypes.byref(prog), U(0), U(0)))
        os.close(rep_fd)
    except OSError as e:
        native_fail(rep_fd, step, e.errno)
    except BaseException:
        native_fail(rep_fd, step, 22)


# the native runs in flight: the program's pidfd -> (its pid, the run's report
# pipe, its init's pidfd); the zygote is their parent and reports their ends
RUNS = {}


def native_job(sock, msg, fds):
    """A job of the native backend: fork the program into the run's pid namespace
    (pid 2 there, as fresh); returns argv in the program, None in the zygote."""
    try:
        job = NJOB.unpack_from(msg)
        argc, envc, filter_len, last_cap = job[1:5]
        limits = job[6:]
        if len(fds) < 5:
            raise ValueError("bad job")
        end = len(msg) - filter_len * 8
        words = msg[NJOB.size:end].split(b"\0")[:argc + envc]
        argv = [os.fsdecode(w) for w in words[:argc]]
        env = [os.fsdecode(w) for w in words[argc:]]
        filt = msg[end:]
        ok = (len(argv) >= 2 and argv[0] == sys.orig_argv[0] and argv[1]
              and not argv[1].startswith("-")
              and env == ["%s=%s" % kv for kv in os.environ.items()])
    except (ValueError, struct.error):
        ok = False
    pid = -1
    if ok:
        try:
            # our children's pid namespace, until the next job's: never fork
            # when it failed (it would be another run's)
            os.setns(fds[4], os.CLONE_NEWPID)
            pid = os.fork()
        except OSError:
            pid = -1
        if pid == 0:
            sock.detach()
            others = [fd for run in RUNS.items() for fd in (run[0], run[1][1], run[1][2])]
            for fd in others + [SOCK_FD]:
                os.close(fd)
            native_enter(limits, last_cap, filt, filter_len, fds)
            return argv, -1
    if pid > 0:
        try:
            RUNS[os.pidfd_open(pid)] = (pid, fds[3], fds[4])
            fds = fds[:3] + fds[5:]
        except OSError:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pid = 0
    for fd in fds:
        os.close(fd)
    sock.send(struct.pack("=i", max(pid, 0)))
    return None


def native_end(pidfd):
    """A program of RUNS ended: its wait status and rusage on the report pipe as
    ns_init would write them, then init is killed, which ends the run's other
    processes as a fresh run's init does when it exits."""
    pid, rep_fd, init_fd = RUNS.pop(pidfd)
    try:
        _, status, ru = os.wait4(pid, 0)
        os.write(rep_fd, REPORT.pack(NSINIT_EXIT, 0, 0, 0, status, ru.ru_maxrss))
    except OSError:
        pass
    try:
        signal.pidfd_send_signal(init_fd, signal.SIGKILL)
    except OSError:
        pass
    for fd in (pidfd, rep_fd, init_fd):
        os.close(fd)


def native_wait(sock, block):
    """Reports the ends of RUNS' programs that ended; returns whether a job waits
    on sock. block: until every program of RUNS has ended (sock is not read)."""
    import select
    while RUNS:
        p = select.poll()
        if not block:
            p.register(SOCK_FD, select.POLLIN)
        for fd in RUNS:
            p.register(fd, select.POLLIN)
        ready = [fd for fd, _ in p.poll()]
        for fd in ready:
            if fd in RUNS:
                native_end(fd)
        if not block:
            return SOCK_FD in ready
    return True


def serve():
    """Forks one child per job; returns in the child (its argv and error pipe),
    never in the zygote."""
    sock = socket.socket(fileno=SOCK_FD)
    gc.freeze()
    global ZYGOTE_BLOCKS
    ZYGOTE_BLOCKS = _blocks()
    sock.send(b"R")  # box_init sends no job before this
    while True:
        if RUNS and not native_wait(sock, False):
            continue
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 1 << 20, 16)
        except InterruptedError:
            continue
        if not msg:
            # box_init closed its end: the sandbox ends. The native backend's
            # runs in flight are ours until they end: report them first
            native_wait(sock, True)
            os._exit(0)
        if msg[:4] == struct.pack("<I", NJOB_MAGIC):
            child = native_job(sock, msg, fds)
            if child:
                return child
            continue
        try:
            job = JOB.unpack_from(msg)
            argc, envc, filter_len = job[11], job[12], job[13]
            if job[0] != JOB_MAGIC or len(fds) != 4:
                raise ValueError("bad job")
            strs = msg[JOB.size:len(msg) - filter_len * 8]
            filt = msg[len(msg) - filter_len * 8:]
            words = strs.split(b"\0")[:argc + envc]
            argv = [os.fsdecode(w) for w in words[:argc]]
            env = [os.fsdecode(w) for w in words[argc:]]
            # only `<this python> <script> [args]` with the env it started with
            ok = (len(argv) >= 2 and argv[0] == sys.orig_argv[0] and argv[1]
                  and not argv[1].startswith("-")
                  and env == ["%s=%s" % kv for kv in os.environ.items()])
        except (ValueError, struct.error):
            ok = False
        if not ok:
            for fd in fds:
                os.close(fd)
            sock.send(struct.pack("=i", 0))
            continue
        try:
            pid = os.fork()
        except OSError:
            pid = -1
        if pid == 0:
            sock.detach()
            enter_run(job, filt, fds)
            return argv, fds[3]
        for fd in fds:
            os.close(fd)
        sock.send(struct.pack("=i", pid if pid > 0 else 0))
        if pid <= 0:
            continue
        # box_init kills the run's processes (never this one) at its limits
        while True:
            try:
                _, status, ru = os.wait4(pid, 0)
                break
            except InterruptedError:
                continue
        sock.send(struct.pack("=iqqq", status, int(ru.ru_utime * 1e6),
                              int(ru.ru_stime * 1e6), ru.ru_maxrss))


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
