# The judge's harness for function problems (judge/grading/harness.h), run as
# main.py beside the user's solution.py. It reads {"nonce", "function",
# "tests": [[args...], ...]} on stdin and writes one record per call on the
# real stdout: "\x1ejudge:NONCE {json}". Expected values never come here: the
# host compares. What the user prints is kept apart, per call.
import io
import json
import os
import sys
import time
import traceback

# _end, which ends the run after _main: shared, its readers put python_ending.py here
#judge:include ../drivers/python_ending.py

OUT_CAP = 64 * 1024


class _Capture(io.TextIOBase):
    """What a call prints, cut at OUT_CAP characters."""

    def __init__(self):
        self.parts, self.size = [], 0

    def writable(self):
        return True

    def write(self, s):
        if self.size < OUT_CAP:
            self.parts.append(s[: OUT_CAP - self.size])
        self.size += len(s)
        return len(s)

    def text(self):
        return "".join(self.parts)


def _error(e):
    line = 0
    for fr in traceback.extract_tb(e.__traceback__):
        if fr.filename == "solution.py":
            line = fr.lineno or 0
    msg = str(e)
    if isinstance(e, SyntaxError) and e.filename == "solution.py":
        line, msg = e.lineno or 0, e.msg
    return {"type": type(e).__name__, "message": msg[:2000], "line": line}


def _plain(v):
    if isinstance(v, (set, frozenset, tuple)):
        return list(v)
    raise TypeError("a value of type %s is not JSON" % type(v).__name__)


def _main():
    data = json.loads(sys.stdin.buffer.read())
    sys.stdin.close()
    nonce, name = data["nonce"], data["function"]
    real = os.dup(1)
    os.dup2(2, 1)  # what the user writes to fd 1 goes to stderr

    def emit(text):
        b = ("\x1ejudge:%s %s\n" % (nonce, text)).encode("utf-8", "replace")
        while b:
            b = b[os.write(real, b) :]

    g = {"__name__": "solution"}
    exec(
        "from typing import *\nfrom collections import *\n"
        "import math, heapq, bisect, itertools, functools, re, string, collections",
        g,
    )
    cap = _Capture()
    sys.stdout = cap
    try:
        with open("solution.py", encoding="utf-8") as f:
            exec(compile(f.read(), "solution.py", "exec"), g)
    except BaseException as e:
        sys.stdout = sys.__stdout__
        emit(json.dumps({"i": -1, "ok": False, "error": _error(e), "stdout": cap.text()}))
        return
    sys.stdout = sys.__stdout__
    for i, args in enumerate(data["tests"]):
        cls = g.get("Solution")
        if isinstance(cls, type) and callable(getattr(cls, name, None)):
            fn = getattr(cls(), name)
        elif callable(g.get(name)):
            fn = g[name]
        else:
            msg = "no function '%s' and no method Solution.%s" % (name, name)
            emit(json.dumps({"i": i, "ok": False, "error": {"type": "NameError", "message": msg, "line": 0}}))
            return
        cap = _Capture()
        sys.stdout = cap
        t0 = time.perf_counter()
        try:
            value, err = fn(*args), None
        except BaseException as e:
            value, err = None, _error(e)
        finally:
            sys.stdout = sys.__stdout__
        ms = int((time.perf_counter() - t0) * 1000)
        rec = {"i": i, "ok": err is None, "ms": ms, "stdout": cap.text()}
        if err is None:
            try:
                rec["value"] = json.loads(json.dumps(value, allow_nan=False, default=_plain))
            except (TypeError, ValueError) as e:
                rec["ok"], rec["error"] = False, {"type": "TypeError", "message": "return value: %s" % e, "line": 0}
        else:
            rec["error"] = err
        emit(json.dumps(rec))
    emit('{"end": true}')


_main()
_end()
