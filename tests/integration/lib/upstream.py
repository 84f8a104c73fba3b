#!/usr/bin/env python3
"""upstream.py: a stand-in upstream for the egress proxy's tests
(tests/integration/sessions_proxy.sh): plain HTTP on ADDR, a free port.

  GET  /hello  -> "hello from upstream" and the Host header it got
  GET  /big    -> 3 MiB of 'x' (the byte cap's test)
  POST /echo   -> the request body back
Prints "ready PORT" once it listens; serves until killed.
"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _send(self, body, ctype="text/plain"):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/hello":
            self._send(b"hello from upstream, host " + self.headers.get("Host", "").encode())
        elif self.path == "/big":
            self._send(b"x" * (3 << 20))
        else:
            self.send_error(404)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self._send(self.rfile.read(n))

    def log_message(self, fmt, *args):
        pass


def main():
    srv = ThreadingHTTPServer((sys.argv[1], 0), Handler)
    print("ready", srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
