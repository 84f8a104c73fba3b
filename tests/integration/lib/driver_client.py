"""driver_client.py: the host side of languages/drivers/PROTOCOL.md for tests.

Starts a session driver's argv as a subprocess (JUDGE_TOKEN set, a given cwd
standing in for /box), sends cells, and splits what comes back into the
cell's stdout, its stderr and the driver's reply. Python stdlib only.

    d = Driver(argv, cwd=folder, env=env)
    ready = d.start()                 # the ready reply's JSON
    c = d.cell("x = 1\\nx + 1")      # Cell: .stdout .stderr .reply .chunks ...
    d.interrupt()                     # SIGINT to the driver
    d.close()                         # EOF on requests; the driver's exit code
"""

import ctypes
import json
import os
import secrets
import select
import signal
import subprocess
import time


class DriverError(Exception):
    """The driver broke the protocol, died, or did not answer in time."""


class Cell:
    """One cell's outcome. reply is the JSON (dict), or None when the driver
    ended before replying (then exited holds its exit status)."""

    def __init__(self):
        self.stdout = b""
        self.stderr = b""
        self.reply = None
        self.exited = None
        self.started = 0.0  # monotonic time the request was sent
        self.replied = 0.0  # monotonic time the reply was complete
        self.chunks = []  # (monotonic time, fd, bytes) as they arrived

    @property
    def out(self):
        return self.stdout.decode("utf-8", "replace")

    @property
    def err(self):
        return self.stderr.decode("utf-8", "replace")

    @property
    def status(self):
        return self.reply and self.reply.get("status")

    @property
    def result(self):
        return self.reply and self.reply.get("result")

    @property
    def error(self):
        return (self.reply and self.reply.get("error")) or {}

    def __repr__(self):
        return "Cell(reply=%r, stdout=%r, stderr=%r, exited=%r)" % (
            self.reply,
            self.stdout[:300],
            self.stderr[:300],
            self.exited,
        )


class Driver:
    def __init__(self, argv, cwd, env=None, preexec_fn=None):
        self.argv = list(argv)
        self.cwd = cwd
        self.env = dict(env if env is not None else os.environ)
        self.preexec_fn = preexec_fn
        self.token = secrets.token_hex(16)
        self.proc = None
        self._out = b""  # stdout not yet given to a cell
        self._err = b""
        self.start_ms = None

    # -- process --

    def start(self, timeout=120.0):
        """Starts the driver and waits for its ready reply; returns its JSON."""
        env = dict(self.env)
        env["JUDGE_TOKEN"] = self.token
        t0 = time.monotonic()
        self.proc = subprocess.Popen(
            self.argv,
            cwd=self.cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=self._child_setup,
        )
        for f in (self.proc.stdout, self.proc.stderr):
            os.set_blocking(f.fileno(), False)
        c = self._wait_reply(Cell(), timeout)
        if c.reply is None:
            raise DriverError("driver ended before ready (exit %r): %s" % (c.exited, c.err[-2000:]))
        self.start_ms = (time.monotonic() - t0) * 1000
        self.start_output = c
        return c.reply

    def _child_setup(self):
        # default signal dispositions, as a sandbox gives them: a test run from a
        # shell's background job inherits SIGINT ignored, which bash cannot trap
        for sig in (signal.SIGINT, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_DFL)
        if self.preexec_fn:
            self.preexec_fn()
        # the driver dies with this client: a client killed mid-test (a cell
        # spinning, say) must not leave a driver running unsandboxed on the host.
        # Set after preexec_fn: a change of uid clears it.
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    @staticmethod
    def request(code, stdin, env):
        """The CELL request of PROTOCOL.md: env is a dict of the cell's variables."""
        blob = b"".join(("%s=%s" % kv).encode() + b"\0" for kv in (env or {}).items())
        return b"CELL %d %d %d\n" % (len(code), len(stdin), len(blob)) + code + stdin + blob

    def cell(self, code, stdin=b"", timeout=30.0, env=None):
        """Runs one cell; returns a Cell. Raises DriverError on timeout."""
        if isinstance(code, str):
            code = code.encode()
        if isinstance(stdin, str):
            stdin = stdin.encode()
        c = Cell()
        c.started = time.monotonic()
        try:
            self.send_raw(self.request(code, stdin, env))
        except BrokenPipeError:
            c.exited = self.proc.wait(5)
            return c
        return self._wait_reply(c, timeout)

    def begin(self, code, stdin=b""):
        """Sends a cell without waiting; finish it with wait()."""
        if isinstance(code, str):
            code = code.encode()
        self._pending = Cell()
        self._pending.started = time.monotonic()
        self.send_raw(self.request(code, stdin, None))

    def wait(self, timeout=30.0):
        return self._wait_reply(self._pending, timeout)

    def interrupt(self):
        self.proc.send_signal(signal.SIGINT)

    def close(self, timeout=10.0):
        """EOF on the request stream; returns the exit code (None: it had to be killed)."""
        if self.proc is None:
            return None
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    # -- the stream --

    def _take_reply(self, c):
        """Moves stdout before the token into c and parses a complete reply."""
        tok = self.token.encode() + b" "
        i = self._out.find(tok)
        if i < 0:
            # keep a tail that could be the start of the token
            keep = len(tok) - 1
            if len(self._out) > keep:
                self._give(c, self._out[: len(self._out) - keep])
                self._out = self._out[len(self._out) - keep :]
            return False
        if i:
            self._give(c, self._out[:i])
            self._out = self._out[i:]
        nl = self._out.find(b"\n")
        if nl < 0:
            return False
        head = self._out[len(tok) : nl]
        if not head.isdigit():
            raise DriverError("bad reply header %r" % self._out[:nl])
        n = int(head)
        if len(self._out) < nl + 1 + n:
            return False
        body = self._out[nl + 1 : nl + 1 + n]
        self._out = self._out[nl + 1 + n :]
        try:
            c.reply = json.loads(body)
        except ValueError as e:
            raise DriverError("reply is not JSON (%s): %r" % (e, body[:500]))
        return True

    def _give(self, c, data):
        c.stdout += data

    def _wait_reply(self, c, timeout):
        deadline = time.monotonic() + timeout
        out, err = self.proc.stdout.fileno(), self.proc.stderr.fileno()
        open_fds = [out, err]
        while True:
            if self._take_reply(c):
                # what the driver wrote to stderr before its reply is in the pipe now
                self._drain(err, c)
                c.replied = time.monotonic()
                return c
            if out not in open_fds:
                self._drain(err, c)
                c.stdout += self._out
                self._out = b""
                try:
                    c.exited = self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    c.exited = None
                return c
            left = deadline - time.monotonic()
            if left <= 0:
                raise DriverError("no reply within %.1f s; so far %r" % (timeout, c))
            ready, _, _ = select.select(open_fds, [], [], left)
            for fd in ready:
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not data:
                    open_fds.remove(fd)
                    continue
                c.chunks.append((time.monotonic(), 1 if fd == out else 2, data))
                if fd == out:
                    self._out += data
                else:
                    c.stderr += data

    def _drain(self, fd, c):
        while True:
            r, _, _ = select.select([fd], [], [], 0.05)
            if not r:
                return
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                return
            if not data:
                return
            c.chunks.append((time.monotonic(), 2, data))
            c.stderr += data


def ini_session(path, drivers_dir):
    """(argv, env list) of a language file's session driver, or None without one.
    Words split on blanks ('...' and "..." quoting as in judge/grading/lang.h)."""
    import shlex

    keys = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            k, v = line.split("=", 1)
            keys[k.strip()] = v.strip()
    if "session" not in keys or keys["session"] in ("", "none"):
        return None
    argv = [w.replace("{drivers}", drivers_dir) for w in shlex.split(keys["session"])]
    env = shlex.split(keys.get("session_env", keys.get("env", "")))
    return argv, env
