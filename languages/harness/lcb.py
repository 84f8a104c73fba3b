# The judge's harness for LiveCodeBench's code-generation scenario
# (judge/grading/evrun.h, rule "lcb"), run as main.py beside program.py, a JSON
# document {"code", "fn_name" (null: stdin tests), "inputs", "outputs",
# "timeout"} that judge/grading/evformat_livecodebench.c wrote. It grades the
# code as LiveCodeBench's lcb_runner/evaluation/testing_util.py run_test does
# (read at 28fef95, re-implemented here, not copied):
#  - one header of star imports and plain imports, recursion limit 50000, the
#    same functions disabled (quit, help, os.kill, os.remove, os.getcwd ...;
#    exit is kept), int-to-str digits up to 50000 as the parent sets them;
#  - call-based (fn_name set): header + "\n\n" + code exec'd into a fresh module;
#    Solution() when the text "class Solution" is anywhere in it; each input's
#    lines json-decoded into the arguments; a tuple result becomes a list and is
#    compared with Python == to the decoded expected value (no tolerance);
#  - stdin: a last `if __name__ == '__main__':` replaced by its body, the
#    top-level imports kept and everything else moved into wrapped_function(),
#    called once per test with sys.stdin, its read/readline/readlines and open
#    patched on the test's input and sys.stdout captured; SystemExit ends the
#    test, what was printed is graded: both texts stripped, split on "\n",
#    each line stripped; same count of lines; a line passes when equal, else
#    when both split into Decimal tokens that are all equal;
#  - signal.alarm(timeout) over the load and over each test; a test's result is
#    True, False (call-based wrong answer), -2 (stdin wrong answer), -3
#    (timeout) or -4 (any other error); the first test that does not pass ends
#    the run; a failure to load gives [-4].
# It reads a nonce on stdin and writes "\x1ejudge:NONCE {json}" on the real
# stdout at the end: {"end": passed, "error"?: {...}, "lcb": {"results": [...],
# "metadata": "{...}"}}, the metadata as the runner stores it (json.dumps). A program that
# kills this process (sys.exit() in call-based code) writes no record: the host
# records what LiveCodeBench's runner records when its worker dies.
import ast
import builtins
import decimal
import faulthandler
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import types
from unittest import mock

HEADER_MODULES = ("string re datetime collections heapq bisect copy math random statistics "
                  "itertools functools operator io sys json builtins typing").split()
HEADER = "".join("from %s import *\n" % m for m in HEADER_MODULES) + "".join(
    "import %s\n" % m for m in HEADER_MODULES if m not in ("builtins", "typing")
) + "sys.setrecursionlimit(50000)\n"


class TimeoutException(Exception):
    """Raised by the alarm; its name is how a timeout is told from an error."""


def _on_alarm(signum, frame):
    print("timeout occured: alarm went off")
    raise TimeoutException


def _cut(v, n=300):
    s = v if isinstance(v, str) else str(v)
    return s if len(s) <= n else s[: n // 2] + "...(truncated) ..." + s[-n // 2:]


def _disable():
    faulthandler.disable()
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


def _load(code, timeout):
    """The module (or its Solution()), as the alarm allows."""
    signal.alarm(timeout)
    try:
        mod = types.ModuleType("tmp_sol", "")
        exec(code, mod.__dict__)
        sol = mod.Solution() if "class Solution" in code else mod
        assert sol is not None
    finally:
        signal.alarm(0)
    return sol


def _failed(e, code, inp, exp):
    timed_out = "timeoutexception" in repr(e).lower()
    return (-3 if timed_out else -4), {
        "error": repr(e),
        "error_code": -3 if timed_out else -4,
        "error_message": "Time Limit Exceeded" if timed_out else "Runtime Error",
        "inputs": _cut(inp),
        "expected": _cut(exp),
    }


def _call_based(code, inputs, outputs, fn_name, timeout):
    sol = _load(HEADER + "\n\n" + code, timeout)
    fn = getattr(sol, fn_name) if hasattr(sol, fn_name) else None
    if fn is None:
        raise TypeError("cannot unpack non-iterable NoneType object")
    args = [[json.loads(line) for line in i.split("\n")] for i in inputs]
    exps = [json.loads(o) for o in outputs]
    results, spent = [], 0.0
    for inp, exp in zip(args, exps):
        signal.alarm(timeout)
        faulthandler.enable()
        try:
            t0 = time.time()
            got = fn(*inp)
            spent += time.time() - t0
            signal.alarm(0)
            if isinstance(got, tuple):
                got = list(got)
            ok = got == exp
            results.append(ok)
            if not ok:
                return results, {"output": _cut(got), "inputs": _cut(inp), "expected": _cut(exp),
                                 "error_code": -2, "error_message": "Wrong Answer"}
        except Exception as e:
            signal.alarm(0)
            r, meta = _failed(e, code, inp, exp)
            results.append(r)
            return results, meta
        finally:
            signal.alarm(0)
            faulthandler.disable()
    return results, {"execution time": spent}


def _main_unwrapped(code):
    """The code without a last `if __name__ == '__main__':`, its body in its place."""
    try:
        tree = ast.parse(code)
        last = tree.body[-1]
        if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
            return ast.unparse(tree.body[:-1]) + "\n" + ast.unparse(last.body)
    except Exception:
        pass
    return code


def _wrapped(code):
    """Top-level imports kept, the rest the body of wrapped_function()."""
    try:
        tree = ast.parse(code)
        imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        rest = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
        fn = ast.FunctionDef(name="wrapped_function",
                             args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                kw_defaults=[], defaults=[]),
                             body=rest, decorator_list=[], lineno=-1)
        return HEADER + "\n" + ast.unparse(imports) + "\n" + ast.unparse(fn)
    except Exception:
        return code


class _Bytes:
    def __init__(self, text):
        self.data = text.encode("utf-8")

    def read(self, *a):
        return self.data

    def readline(self, *a):
        return self.data.split(b"\n")[0] + b"\n"


class _Stdin:
    """What sys.stdin is during a test (no __iter__: `for l in sys.stdin` fails)."""

    def __init__(self, text):
        self.text = text
        self._io = io.StringIO(text)
        self.buffer = _Bytes(text)

    def read(self, *a):
        return self.text

    def readline(self, *a):
        return self._io.readline(*a)

    def readlines(self, *a):
        return self.text.split("\n")

    def __getattr__(self, name):
        return getattr(self._io, name)


def _run_stdin(fn, text):
    lines = iter(text.split("\n"))
    # entered in this order: the real stdin's read, readlines and readline
    # first (code that bound `stdin` at import sees these), then sys.stdin, open
    with mock.patch("sys.stdin.read", lambda *a: text), \
            mock.patch("sys.stdin.readlines", lambda *a: text.split("\n")), \
            mock.patch("sys.stdin.readline", lambda *a: next(lines)), \
            mock.patch("sys.stdin", _Stdin(text)), \
            mock.patch("builtins.open", mock.mock_open(read_data=text)):
        try:
            return fn()
        except SystemExit:
            pass


def _lines(s):
    return [x.strip() for x in s.strip().split("\n")]


def _decimals(line):
    try:
        return True, [decimal.Decimal(t) for t in line.split()]
    except Exception:
        return False, []


def _stdin_based(code, inputs, outputs, timeout):
    sol = _load(_wrapped(_main_unwrapped(code)), timeout)
    fn = getattr(sol, "wrapped_function") if hasattr(sol, "wrapped_function") else None
    if fn is None:
        raise TypeError("cannot unpack non-iterable NoneType object")
    results, spent = [], 0.0
    for inp, exp in zip(inputs, outputs):
        signal.alarm(timeout)
        faulthandler.enable()
        saved, buf = sys.stdout, io.StringIO()
        sys.stdout = buf
        try:
            t0 = time.time()
            _run_stdin(fn, inp)
            spent += time.time() - t0
            signal.alarm(0)
        except Exception as e:
            signal.alarm(0)
            r, meta = _failed(e, code, inp, exp)
            results.append(r)
            return results, meta
        finally:
            signal.alarm(0)
            faulthandler.disable()
            sys.stdout = saved
        got = buf.getvalue()
        wa = {"output": _cut(got), "inputs": _cut(inp), "expected": _cut(exp), "error_code": -2}
        a, b = _lines(got), _lines(exp)
        if len(a) != len(b):
            results.append(-2)
            wa["error_message"] = "Wrong answer: mismatched output length"
            return results, wa
        for i, (x, y) in enumerate(zip(a, b)):
            wa["error_message"] = "Wrong answer at output_line_idx=%d: %s != %s" % (i, _cut(x), _cut(y))
            if x == y:
                continue
            okx, dx = _decimals(x)
            oky, dy = _decimals(y)
            if okx and oky and dx == dy:
                continue
            results.append(-2)
            return results, wa
        results.append(True)
    return results, {"execution time": spent}


def _main():
    nonce = sys.stdin.readline().strip()
    rec_fd = os.dup(1)
    # the worker's own stdin and stdout as LiveCodeBench's child has them: empty
    # and not graded (code that bound them at import reads nothing, prints away)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
    with open("program.py", encoding="utf-8") as f:
        doc = json.load(f)
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(50000)
    signal.signal(signal.SIGALRM, _on_alarm)
    write = os.write
    _disable()
    timeout = int(doc.get("timeout", 6))
    try:
        if doc.get("fn_name") is not None:
            results, meta = _call_based(doc["code"], doc["inputs"], doc["outputs"], doc["fn_name"],
                                        timeout)
        else:
            results, meta = _stdin_based(doc["code"], doc["inputs"], doc["outputs"], timeout)
    except Exception as e:
        results, meta = [-4], {"error_code": -4, "error_message": "Error during testing: %s" % e}
    finally:
        signal.alarm(0)
    results = [r if isinstance(r, int) else bool(r) for r in results]
    passed = all(r is True or (r is not False and r > 0) for r in results)
    # the metadata as the runner stores it: json.dumps's text
    rec = {"end": passed, "lcb": {"results": results, "metadata": json.dumps(meta, default=str)}}
    if not passed:
        rec["error"] = {"type": meta.get("error_message", "Wrong Answer"),
                        "message": _cut(meta.get("error", ""), 200)}
    b = ("\x1ejudge:%s %s\n" % (nonce, json.dumps(rec, default=str))).encode()
    while b:
        b = b[write(rec_fd, b):]


_main()
