#!/usr/bin/env python3
"""soak.py: the load of `make soak` (tests/bench/soak.sh starts the service).

Three API keys against one running judge, standard library only:
- loud: LOUD_BULK threads keep bulk submissions queued (POST /v1/submissions,
  at most 8 outstanding each, then GET ?wait for the oldest) and LOUD_EXEC
  threads send interactive POST /v1/execute back to back;
- quiet: one bulk submission and one interactive execute a second, each
  timed end to end, and the bulk one's queue wait (started_ms - created_ms);
- sessions: a thread that opens a session, runs cells, closes it, again;
- SSE readers: SSE_READERS threads following the live events of the loud and
  quiet keys' submissions (GET /v1/submissions/{id}/events) to their `done`,
  reconnecting with Last-Event-ID when a stream ends early.
The quiet key runs alone for IDLE_S seconds first (its baseline), then with
the load for LOAD_S seconds. Prints one JSON object: per key and phase the
count, p50 and p99 in ms, errors by HTTP status, and the ratios of the
quiet key's loaded p99 to its idle p50, the SSE readers' events and
reconnects, and `lost`: submissions answered 201/202 that never reach a final
verdict, read back through the API within FINAL_WAIT_S after the load.
Usage: soak.py URL LOUD_KEY QUIET_KEY SESSION_KEY IDLE_S LOAD_S
"""
import collections
import http.client
import json
import sys
import threading
import time
import urllib.error
import urllib.request

URL, LOUD, QUIET, SESS = sys.argv[1:5]
IDLE_S, LOAD_S = float(sys.argv[5]), float(sys.argv[6])
LOUD_BULK, LOUD_EXEC = 3, 2
# ~50 ms of Python CPU: enough that the bulk queue stays deep
BUSY = "s = 0\nfor i in range(300000):\n    s += i\nprint(s)\n"
HELLO = 'print("hello")\n'
SSE_READERS = 3
FINAL_WAIT_S = 180

created = []  # (key, id) of every submission answered 201/202
recent = collections.deque(maxlen=32)  # (key, id) for the SSE readers
sse = {"streams": 0, "done": 0, "events": 0, "reconnects": 0, "errors": 0}

lock = threading.Lock()
stats = {}  # (who, phase) -> {"ms": [...], "wait_ms": [...], "errors": {status: n}}
stop = threading.Event()
loaded = threading.Event()


def phase():
    return "load" if loaded.is_set() else "idle"


def record(who, ms=None, wait_ms=None, error=None, ph=None):
    with lock:
        s = stats.setdefault((who, ph or phase()), {"ms": [], "wait_ms": [], "errors": {}})
        if ms is not None:
            s["ms"].append(ms)
        if wait_ms is not None:
            s["wait_ms"].append(wait_ms)
        if error is not None:
            s["errors"][str(error)] = s["errors"].get(str(error), 0) + 1


def call(method, path, key, body=None, timeout=120):
    """(status, parsed JSON or None)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(URL + path, data=data, method=method)
    req.add_header("Authorization", "Bearer " + key)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, None
    except Exception:  # a reset, a timeout: counted as status 0
        return 0, None


def submit(key, source):
    st, o = call("POST", "/v1/submissions", key, {"language": "python", "source": source})
    if st in (201, 202) and o and o.get("id"):
        with lock:
            created.append((key, o["id"]))
            recent.append((key, o["id"]))
    return st, o


def wait_done(key, sid, wait_s=60):
    return call("GET", "/v1/submissions/%s?wait=%d" % (sid, wait_s), key, timeout=wait_s + 30)


def loud_bulk():
    outstanding = []
    while not stop.is_set():
        if len(outstanding) >= 8:
            # short waits: the stop is seen soon
            st, r = wait_done(LOUD, outstanding[0], 5)
            if st == 200 and r and r.get("finished_ms"):
                outstanding.pop(0)
            elif st != 200:
                outstanding.pop(0)
            continue
        t0 = time.monotonic()
        st, o = submit(LOUD, BUSY)
        if st in (200, 201, 202) and o:
            outstanding.append(o["id"])
            # the submit's own time: the loud key's bulk is measured by its rate
            record("loud_bulk", ms=(time.monotonic() - t0) * 1000)
        else:
            record("loud_bulk", error=st)
            time.sleep(0.2)


def loud_exec():
    while not stop.is_set():
        t0 = time.monotonic()
        st, _ = call("POST", "/v1/execute", LOUD, {"language": "python", "source": BUSY})
        if st == 200:
            record("loud_execute", ms=(time.monotonic() - t0) * 1000)
        else:
            record("loud_execute", error=st)
            time.sleep(0.2)


def quiet_bulk():
    while not stop.is_set():
        ph, t0 = phase(), time.monotonic()
        st, o = submit(QUIET, HELLO)
        if st not in (200, 201, 202) or not o:
            record("quiet_bulk", error=st, ph=ph)
        else:
            st, r = wait_done(QUIET, o["id"])
            if st == 200 and r and r.get("finished_ms"):
                wait = None
                if r.get("started_ms") and r.get("created_ms"):
                    wait = r["started_ms"] - r["created_ms"]
                record("quiet_bulk", ms=(time.monotonic() - t0) * 1000, wait_ms=wait, ph=ph)
            else:
                record("quiet_bulk", error=st, ph=ph)
        stop.wait(max(0.0, 1 - (time.monotonic() - t0)))


def quiet_exec():
    while not stop.is_set():
        ph, t0 = phase(), time.monotonic()
        st, _ = call("POST", "/v1/execute", QUIET, {"language": "python", "source": HELLO})
        if st == 200:
            record("quiet_execute", ms=(time.monotonic() - t0) * 1000, ph=ph)
        else:
            record("quiet_execute", error=st, ph=ph)
        stop.wait(max(0.0, 1 - (time.monotonic() - t0)))


def sessions():
    while not stop.is_set():
        st, o = call("POST", "/v1/sessions", SESS, {"language": "python", "idle_ttl": 60})
        if st != 201 or not o:
            record("session_cell", error="create %s" % st)
            stop.wait(1)
            continue
        sid = o["id"]
        for i in range(10):
            if stop.is_set():
                break
            t0 = time.monotonic()
            st, _ = call("POST", "/v1/sessions/%s/execute" % sid, SESS, {"code": "x = %d\nx * 2" % i})
            if st == 200:
                record("session_cell", ms=(time.monotonic() - t0) * 1000)
            else:
                record("session_cell", error=st)
            stop.wait(0.2)
        call("DELETE", "/v1/sessions/%s" % sid, SESS)


def follow(key, sid):
    """Reads the events of submission sid to its done; (events, reconnects, done)."""
    host = URL.split("//", 1)[1].split("/", 1)[0]
    last, events, reconnects = None, 0, 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            c = http.client.HTTPConnection(host, timeout=30)
            h = {"Authorization": "Bearer " + key, "Accept": "text/event-stream"}
            if last is not None:
                h["Last-Event-ID"] = last
            c.request("GET", "/v1/submissions/%s/events" % sid, headers=h)
            r = c.getresponse()
            if r.status == 204:  # done was read before the reconnect
                return events, reconnects, True
            if r.status != 200:
                raise OSError("status %d" % r.status)
            while True:
                line = r.readline()
                if not line:
                    break
                line = line.decode("utf-8", "replace").rstrip("\r\n")
                if line.startswith("id:"):
                    last = line[3:].strip()
                elif line.startswith("event:"):
                    events += 1
                    if line[6:].strip() == "done":
                        c.close()
                        return events, reconnects, True
            c.close()
        except Exception:
            pass
        # the stream ended before done (a restart, a reset): again, after the last id
        reconnects += 1
        time.sleep(0.5)
    return events, reconnects, False


def sse_reader():
    while not stop.is_set():
        with lock:
            item = recent.pop() if recent else None
        if not item:
            stop.wait(0.2)
            continue
        ev, rc, done = follow(*item)
        with lock:
            sse["streams"] += 1
            sse["events"] += ev
            sse["reconnects"] += rc
            sse["done" if done else "errors"] += 1


def final_check():
    """Every created submission read back: (finished, lost ids)."""
    deadline = time.monotonic() + FINAL_WAIT_S
    finished, lost = 0, []
    for key, sid in created:
        while True:
            left = deadline - time.monotonic()
            st, r = wait_done(key, sid, max(1, min(30, int(left))))
            if st == 200 and r and r.get("finished_ms"):
                finished += 1
                break
            if left <= 0:
                lost.append(sid)
                break
            if st != 200:
                time.sleep(1)
    return finished, lost


def pct(v, p):
    if not v:
        return None
    v = sorted(v)
    return round(v[min(len(v) - 1, max(0, int((len(v) * p + 99) // 100) - 1))], 1)


def main():
    quiet = [threading.Thread(target=f, daemon=True) for f in (quiet_bulk, quiet_exec)]
    for t in quiet:
        t.start()
    time.sleep(IDLE_S)
    loaded.set()
    t_load = time.monotonic()
    load = [threading.Thread(target=loud_bulk, daemon=True) for _ in range(LOUD_BULK)]
    load += [threading.Thread(target=loud_exec, daemon=True) for _ in range(LOUD_EXEC)]
    load.append(threading.Thread(target=sessions, daemon=True))
    load += [threading.Thread(target=sse_reader, daemon=True) for _ in range(SSE_READERS)]
    for t in load:
        t.start()
    time.sleep(LOAD_S)
    stop.set()
    took = time.monotonic() - t_load
    for t in quiet + load:
        t.join(timeout=100)
    finished, lost = final_check()
    out = {"idle_s": IDLE_S, "load_s": round(took, 1), "rows": [], "sse": sse,
           "submissions": {"created": len(created), "finished": finished, "lost": len(lost),
                           "lost_ids": lost[:20]}}
    with lock:
        for (who, ph), s in sorted(stats.items()):
            row = {"who": who, "phase": ph, "n": len(s["ms"]), "p50_ms": pct(s["ms"], 50),
                   "p99_ms": pct(s["ms"], 99), "errors": s["errors"]}
            if ph == "load":
                row["per_s"] = round(len(s["ms"]) / took, 2)
            if s["wait_ms"]:
                row["queue_wait_p50_ms"] = pct(s["wait_ms"], 50)
                row["queue_wait_p99_ms"] = pct(s["wait_ms"], 99)
            out["rows"].append(row)
        ratios = {}
        for who in ("quiet_bulk", "quiet_execute"):
            idle, ld = stats.get((who, "idle")), stats.get((who, "load"))
            if idle and ld and idle["ms"] and ld["ms"]:
                ratios[who + "_load_p99_over_idle_p50"] = round(pct(ld["ms"], 99) / pct(idle["ms"], 50), 2)
        out["ratios"] = ratios
    print(json.dumps(out))


main()
