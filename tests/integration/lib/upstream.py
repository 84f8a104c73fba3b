#!/usr/bin/env python3
"""upstream.py: a stand-in upstream for the egress proxy's tests
(tests/integration/sessions_proxy.sh, sessions_egress_net.sh): plain HTTP on
ADDR, a free port; with CERT and KEY also HTTPS on another free port.

  GET  /hello  -> "hello from upstream" and the Host header it got
  GET  /big    -> 3 MiB of 'x' (the byte cap's test)
  POST /echo   -> the request body back
Prints "ready PORT" (or "ready PORT TLSPORT") once it listens; serves until
killed. Usage: upstream.py ADDR [CERT KEY]
"""
import ssl
import sys
import threading
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
    ports = [srv.server_address[1]]
    if len(sys.argv) > 3:
        tls = ThreadingHTTPServer((sys.argv[1], 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[2], sys.argv[3])
        tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
        ports.append(tls.server_address[1])
        threading.Thread(target=tls.serve_forever, daemon=True).start()
    print("ready", *ports, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
