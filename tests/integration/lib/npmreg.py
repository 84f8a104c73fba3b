#!/usr/bin/env python3
"""npmreg.py: a tiny npm registry for tests, serving packages it builds itself.

Usage:
    python3 tests/integration/lib/npmreg.py --root DIR --port P \
        [--package tinynpm@1.0.0] [--hostile HOST:PORT]

Builds into DIR one tarball per --package (index.js exporting
hello() -> "hello from <name> <version>"), and with --hostile the package
"hostile-post" 1.0.0 whose postinstall script makes an HTTP request to
HOST:PORT and exits 1 when it fails (so an install that succeeds means the
request went through). Serves the package documents at /<name> and the
tarballs at /<name>/-/<name>-<version>.tgz on 127.0.0.1:P (0: any free port),
with the dist.tarball URLs absolute on this registry, as registry.npmjs.org
does.

When ready it prints one line to stdout and flushes it:
    ready http://127.0.0.1:<port>/
then serves until killed. Every request is logged to stderr.
"""
import argparse
import base64
import hashlib
import http.server
import io
import json
import os
import re
import sys
import tarfile

POSTINSTALL = (
    "require('http').get('http://%s:%d/', r => { console.log('reached', r.statusCode); process.exit(0) })"
    ".on('error', e => { console.error('hostile-post: ' + e.message); process.exit(1) })"
    ".setTimeout(3000, function () { this.destroy(new Error('timeout')) })"
)


def build(root, name, version, scripts=None):
    pkg = {"name": name, "version": version, "main": "index.js"}
    if scripts:
        pkg["scripts"] = scripts
    files = {
        "package.json": json.dumps(pkg, indent=1),
        "index.js": f'exports.hello = () => "hello from {name} {version}";\n',
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for p, d in files.items():
            data = d.encode()
            info = tarfile.TarInfo("package/" + p)
            info.size = len(data)
            info.mode = 0o644
            t.addfile(info, io.BytesIO(data))
    data = buf.getvalue()
    fname = f"{name}-{version}.tgz"
    with open(os.path.join(root, fname), "wb") as fh:
        fh.write(data)
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    return pkg, fname, integrity, hashlib.sha1(data).hexdigest()


def main():
    ap = argparse.ArgumentParser(description="a tiny npm registry for tests")
    ap.add_argument("--root", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--package", action="append", default=[], help="name@version")
    ap.add_argument("--hostile", metavar="HOST:PORT")
    a = ap.parse_args()
    os.makedirs(a.root, exist_ok=True)
    built = []
    for spec in a.package:
        m = re.fullmatch(r"([a-z0-9][a-z0-9._-]*)@([0-9]+\.[0-9]+\.[0-9]+)", spec)
        if not m:
            ap.error(f"bad --package '{spec}' (name@x.y.z)")
        built.append(build(a.root, m.group(1), m.group(2)))
    if a.hostile:
        host, port = a.hostile.rsplit(":", 1)
        script = "node -e \"" + (POSTINSTALL % (host, int(port))).replace('"', '\\"') + "\""
        built.append(build(a.root, "hostile-post", "1.0.0", {"postinstall": script}))

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), None)
    base = f"http://127.0.0.1:{srv.server_address[1]}/"
    docs, tarballs = {}, {}
    for pkg, fname, integrity, shasum in built:
        name, ver = pkg["name"], pkg["version"]
        version = dict(pkg)
        version["dist"] = {"tarball": f"{base}{name}/-/{fname}", "integrity": integrity,
                           "shasum": shasum}
        if "scripts" in pkg:
            version["hasInstallScript"] = True
        doc = docs.setdefault(name, {"name": name, "dist-tags": {}, "versions": {}})
        doc["versions"][ver] = version
        doc["dist-tags"]["latest"] = ver
        tarballs[f"/{name}/-/{fname}"] = os.path.join(a.root, fname)

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):
            sys.stderr.write("npmreg: " + (fmt % args) + "\n")

        def send(self, code, ctype, body):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            path = self.path.split("?")[0]
            if path in tarballs:
                with open(tarballs[path], "rb") as fh:
                    return self.send(200, "application/octet-stream", fh.read())
            name = path[1:].replace("%2f", "/").replace("%2F", "/")
            if name in docs:
                return self.send(200, "application/json", json.dumps(docs[name]).encode())
            self.send(404, "application/json", b'{"error":"not found"}')

    srv.RequestHandlerClass = Handler
    print(f"ready {base}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
