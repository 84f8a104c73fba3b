#!/usr/bin/env python3
"""sse_client.py: a small Server-Sent Events client for the live output tests
(stdlib only). Prints one JSON line per event, each with "t", the seconds since
the request was sent:

  {"t": 0.01, "status": 200, "content_type": ..., "location": ...}  first
  {"t": 0.35, "id": 12, "event": "stdout", "data": "..."}          each event
  {"t": 2.10, "end": true}                                           the end

A response that is not 200 prints {"status": N, "body": "..."} and exits 0.

usage: sse_client.py URL [--post JSON] [--key KEY] [--last-event-id N]
                         [--stall S] [--close-after N] [--timeout S]
  --stall S        read nothing for S seconds after the headers
  --close-after N  close the connection after N events (a client that leaves)
"""
import argparse
import http.client
import json
import sys
import time
import urllib.parse


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--post")
    ap.add_argument("--key")
    ap.add_argument("--last-event-id")
    ap.add_argument("--stall", type=float, default=0)
    ap.add_argument("--close-after", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--comments", action="store_true", help="print comments too")
    a = ap.parse_args()

    u = urllib.parse.urlsplit(a.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=a.timeout)
    headers = {"Accept": "text/event-stream"}
    if a.key:
        headers["Authorization"] = "Bearer " + a.key
    if a.last_event_id is not None:
        headers["Last-Event-ID"] = a.last_event_id
    body = None
    if a.post is not None:
        headers["Content-Type"] = "application/json"
        body = a.post.encode()
    path = u.path + ("?" + u.query if u.query else "")
    t0 = time.monotonic()
    conn.request("POST" if body is not None else "GET", path, body=body, headers=headers)
    resp = conn.getresponse()

    def out(obj):
        obj = {"t": round(time.monotonic() - t0, 3), **obj}
        print(json.dumps(obj), flush=True)

    if resp.status != 200:
        out({"status": resp.status, "body": resp.read().decode(errors="replace")})
        return 0
    out({"status": 200, "content_type": resp.getheader("Content-Type"),
         "location": resp.getheader("Location")})
    if a.stall:
        time.sleep(a.stall)
    n = 0
    ev = {"id": None, "event": "message", "data": []}
    while True:
        line = resp.readline()
        if not line:
            break
        line = line.decode("utf-8").rstrip("\r\n")
        if not line:
            if ev["data"]:
                out({"id": ev["id"], "event": ev["event"], "data": "\n".join(ev["data"])})
                n += 1
                if a.close_after and n >= a.close_after:
                    conn.sock.close()
                    return 0
            ev = {"id": ev["id"], "event": "message", "data": []}
            continue
        if line.startswith(":"):
            if a.comments:
                out({"comment": line[1:].strip()})
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "id":
            ev["id"] = int(value)
        elif field == "event":
            ev["event"] = value
        elif field == "data":
            ev["data"].append(value)
    out({"end": True})
    return 0


if __name__ == "__main__":
    sys.exit(main())
