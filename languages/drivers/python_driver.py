# python_driver.py: the Python 3.12 session driver (languages/drivers/PROTOCOL.md).
# One namespace (a __main__ module) lives across cells; a cell's last expression
# statement is evaluated apart so that its repr() is the cell's result.
import ast
import importlib
import json
import linecache
import os
import signal
import sys
import tempfile
import traceback
import types

# all imported at start, before the box (sys.path[0]) can shadow them: a user's
# traceback.py must not break the driver's error replies
# runner/install/install.h PKG_DIR_PYTHON, under the session folder (the cwd: /box in a sandbox)
PKG_DIR = os.path.join(os.getcwd(), ".packages", "python")
RESULT_MAX = 1 << 20  # a repr longer than this is cut: the reply is not output


def setup():
    """Moves the request stream off fd 0 and keeps a private copy of fd 1 for
    replies (user code may close or redirect its own stdout)."""
    token = os.environ.pop("JUDGE_TOKEN", "")
    req = os.dup(0)
    reply = os.dup(1)
    for fd in (req, reply):
        os.set_inheritable(fd, False)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return token, os.fdopen(req, "rb", buffering=0), reply


def send(reply_fd, token, obj):
    for f in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            f.flush()
        except Exception:
            pass
    body = json.dumps(obj).encode()
    data = b"%s %d\n" % (token.encode(), len(body)) + body
    while data:
        data = data[os.write(reply_fd, data) :]


def read_exact(req, n):
    buf = b""
    while len(buf) < n:
        chunk = req.read(n - len(buf))
        if not chunk:
            sys.exit(0)
        buf += chunk
    return buf


def user_frames(tb):
    """The user's frames: from the first cell frame on, the driver's own left out
    (ast.parse before it, the SIGINT handler after it)."""
    frames = traceback.extract_tb(tb)
    first = next((i for i, f in enumerate(frames) if f.filename.startswith("<cell-")), None)
    if first is None:
        return []
    return [f for f in frames[first:] if f.filename != __file__]


def error_of(e):
    frames = user_frames(e.__traceback__)
    text = "".join(traceback.format_exception_only(type(e), e))
    if frames:
        head = "Traceback (most recent call last):\n"
        text = head + "".join(traceback.format_list(frames)) + text
    return {"name": type(e).__name__, "value": str(e), "traceback": text}


def set_stdin(data):
    """The cell's stdin at fd level (children read it too), sys.stdin reopened."""
    if data:
        f = tempfile.TemporaryFile()  # O_TMPFILE where it works (not in gVisor)
        f.write(data)
        f.seek(0)
        os.dup2(f.fileno(), 0)
        f.close()
    else:
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    sys.stdin = open(0, "r", closefd=False, errors="surrogateescape")


def run_cell(ns, n, code):
    """Runs code in ns; returns the repr of the last expression (or None)."""
    name = "<cell-%d>" % n
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    tree = ast.parse(code, name, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, name, "exec"), ns)
    if last is None:
        return None
    value = eval(compile(last, name, "eval"), ns)
    if value is None:
        return None
    ns["_"] = value
    text = repr(value)
    return text if len(text) <= RESULT_MAX else text[:RESULT_MAX] + "..."


class Interrupts:
    """SIGINT stops a running cell (KeyboardInterrupt); between cells it is
    ignored, so a late interrupt never kills the driver."""

    in_cell = False

    @classmethod
    def handler(cls, signum, frame):
        if cls.in_cell:
            raise KeyboardInterrupt


def main():
    token, req, reply = setup()
    os.makedirs(PKG_DIR, exist_ok=True)
    # the cwd (/box) first, as in an interactive Python, not the drivers folder
    sys.path[0] = ""
    sys.path.insert(1, PKG_DIR)
    main_mod = types.ModuleType("__main__")
    main_mod.__builtins__ = __builtins__
    sys.modules["__main__"] = main_mod
    ns = main_mod.__dict__
    signal.signal(signal.SIGINT, Interrupts.handler)
    send(reply, token, {"ready": True, "version": sys.version.split()[0]})
    n = 0
    while True:
        line = req.readline()
        if not line:
            return
        word, code_len, stdin_len = line.split()
        code = read_exact(req, int(code_len)).decode("utf-8", "surrogateescape")
        stdin = read_exact(req, int(stdin_len))
        n += 1
        out = {"status": "ok", "result": None, "error": None}
        try:
            importlib.invalidate_caches()
            set_stdin(stdin)
            Interrupts.in_cell = True
            out["result"] = run_cell(ns, n, code)
        except SystemExit:
            Interrupts.in_cell = False
            raise
        except BaseException as e:
            Interrupts.in_cell = False
            out["status"] = "error"
            out["error"] = error_of(e)
        Interrupts.in_cell = False
        set_stdin(b"")
        send(reply, token, out)


if __name__ == "__main__":
    main()
