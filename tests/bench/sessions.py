#!/usr/bin/env python3
"""bench/sessions.py URL KEY BACKEND: the session benchmark's measurements against
a running judge (tests/bench/sessions.sh starts it), stdlib only, one HTTP/1.1
connection kept open (so the client's own cost is small and steady).

Prints one line per measurement, "name value unit", and the targets' verdicts:
  create_p50        POST /v1/sessions python, to 201 (then closed), N_CREATE times
  cell_p50          POST .../execute {"code": "x = 1"}, N_CELL times, one session
  bare_cell_p50     the same cell in a bare python3.12 process held open here
  idle_memory_mb    host memory of an idle Python session (its sandbox's processes)
  open_50           50 idle sessions open at once, each answering a cell
  npm_repeat_s      a repeat install of a cached npm package (another session)
"""
import http.client
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.parse

PY = "/opt/judge/runtimes/python3.12/bin/python3.12"
N_CREATE = int(os.environ.get("N_CREATE", "20"))
N_CELL = int(os.environ.get("N_CELL", "200"))
N_OPEN = int(os.environ.get("N_OPEN", "50"))

url, key, backend = sys.argv[1], sys.argv[2], sys.argv[3]
host = urllib.parse.urlparse(url)
conn = http.client.HTTPConnection(host.hostname, host.port, timeout=120)
results = {}


def call(method, path, body=None):
    headers = {"Authorization": "Bearer " + key}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=headers)
    r = conn.getresponse()
    text = r.read()
    return r.status, (json.loads(text) if text else None)


def out(name, value, unit):
    results[name] = value
    print(f"{backend} {name} {value:.2f} {unit}" if isinstance(value, float)
          else f"{backend} {name} {value} {unit}", flush=True)


def ms_since(t0):
    return (time.perf_counter() - t0) * 1000


def create(language="python"):
    t0 = time.perf_counter()
    st, o = call("POST", "/v1/sessions", {"language": language})
    if st != 201:
        raise SystemExit(f"create {language}: {st} {o}")
    return o["id"], ms_since(t0)


def cell(sid, code):
    t0 = time.perf_counter()
    st, o = call("POST", f"/v1/sessions/{sid}/execute", {"code": code})
    if st != 200 or o["status"] != "ok":
        raise SystemExit(f"cell: {st} {o}")
    return o, ms_since(t0)


def close(sid):
    call("DELETE", f"/v1/sessions/{sid}")


# the bare baseline: one python process, the cell sent over a pipe and run in
# one namespace, the reply a line back (what a driver does, without a sandbox)
BARE = r"""
import sys
ns = {}
inp, outp = sys.stdin.buffer, sys.stdout.buffer
while True:
    n = inp.readline()
    if not n:
        break
    exec(compile(inp.read(int(n)).decode(), "<cell>", "exec"), ns)
    outp.write(b"ok\n")
    outp.flush()
"""


def bare_cells(n):
    p = subprocess.Popen([PY, "-c", BARE], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    code = b"x = 1"
    times = []
    for i in range(n + 10):
        t0 = time.perf_counter()
        p.stdin.write(b"%d\n" % len(code) + code)
        p.stdin.flush()
        p.stdout.readline()
        if i >= 10:
            times.append(ms_since(t0))
    p.stdin.close()
    p.wait()
    return times


def main():
    # create, each closed before the next (sandboxes started ahead of need)
    create("python")  # the first also warms the worker's caches
    times = []
    for _ in range(N_CREATE):
        sid, ms = create()
        times.append(ms)
        close(sid)
        time.sleep(0.5)  # the pool refills between creates, as between an agent's
    out("create_p50", statistics.median(times), "ms")

    sid, _ = create()
    for _ in range(10):
        cell(sid, "x = 1")
    times = [cell(sid, "x = 1")[1] for _ in range(N_CELL)]
    bare = bare_cells(N_CELL)
    out("cell_p50", statistics.median(times), "ms")
    out("bare_cell_p50", statistics.median(bare), "ms")
    out("cell_over_bare", statistics.median(times) - statistics.median(bare), "ms")
    time.sleep(2)
    o, _ = cell(sid, "pass")
    mem = o.get("session_memory_kb", -1)
    out("idle_memory_mb", mem / 1024 if mem > 0 else -1.0, "MB")
    close(sid)

    sids, t0 = [], time.perf_counter()
    for _ in range(N_OPEN):
        sids.append(create()[0])
    out("open_create_total", ms_since(t0) / 1000, "s")
    mems = [cell(s, "x = 1")[0].get("session_memory_kb", 0) for s in sids]
    out("open_sessions", len(sids), "answering")
    out("open_memory_total_mb", sum(mems) / 1024, "MB")
    for s in sids:
        close(s)

    try:
        a, _ = create("node")
        b, _ = create("node")
    except SystemExit as e:
        print(f"{backend} npm_repeat skipped: {e}", flush=True)
        return
    for s in (a, b):
        t0 = time.perf_counter()
        st, o = call("POST", f"/v1/sessions/{s}/install", {"manager": "npm", "packages": ["is-number@7"]})
        if st != 200 or o["status"] != "ok":
            print(f"{backend} npm install failed: {st} {o}", flush=True)
            break
        out("npm_first_s" if s == a else "npm_repeat_s", ms_since(t0) / 1000, "s")
    close(a)
    close(b)


main()
json.dump(results, open(os.environ.get("BENCH_JSON", "/dev/null"), "w"))
