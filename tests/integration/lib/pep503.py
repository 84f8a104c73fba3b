#!/usr/bin/env python3
"""pep503.py: a PEP 503 simple index for tests, serving wheels it builds itself.

Usage:
    python3 tests/integration/lib/pep503.py --root DIR --port P \
        --package tinypkg==1.0 [--package other==2.1] [--depends tinypkg:other]
        [--absolute] [--sdist-hostile HOST:PORT]

Builds into DIR (made as needed) one pure-Python wheel per --package: a module
named after the package (dashes become underscores) with

    def hello(): return "hello from <name> <version>"

(METADATA, WHEEL and RECORD with sha256 digests), then serves DIR on
127.0.0.1:P (P = 0: any free port) as http://127.0.0.1:P/simple/ with one page
per project (/simple/<normalized-name>/) linking its files relatively, with
#sha256= fragments.

--depends NAME:DEP makes NAME's wheel require DEP (Requires-Dist), so pip
fetches DEP from the index too. --absolute links the files by absolute URLs
(http://127.0.0.1:P/<file>) instead of relative ones, as pypi.org does with
its file host.

--sdist-hostile HOST:PORT adds the project "hostile-sdist" 1.0 as an sdist
only, whose in-tree build backend (no build requirements) opens a TCP
connection to HOST:PORT while building and fails the build when it cannot
(so an install that succeeds means the connection went through).

When ready it prints one line to stdout and flushes it:
    ready http://127.0.0.1:<port>/simple/
then serves until killed (SIGTERM). Every request is logged to stderr.
"""
import argparse
import base64
import hashlib
import http.server
import io
import os
import re
import sys
import tarfile
import zipfile


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build_wheel(root, name, version, deps=()):
    mod = name.replace("-", "_")
    dist = f"{mod}-{version}.dist-info"
    requires = "".join(f"Requires-Dist: {d}\n" for d in deps)
    files = {
        f"{mod}/__init__.py": f'def hello():\n    return "hello from {name} {version}"\n',
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{requires}",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: pep503.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [record_line(p, d.encode()) for p, d in files.items()]
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = "\n".join(record) + "\n"
    fname = f"{mod}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(root, fname), "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in files.items():
            z.writestr(p, d)
    return name, fname


BACKEND = '''
import os, socket, zipfile
HOST, PORT = %r, %d
def _dial():
    s = socket.create_connection((HOST, PORT), timeout=3)
    s.sendall(b"hostile-sdist was here\\n")
    s.close()
def get_requires_for_build_wheel(config_settings=None):
    return []
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    try:
        _dial()
    except OSError as e:
        raise SystemExit("hostile-sdist: cannot reach %%s:%%d: %%s" %% (HOST, PORT, e))
    dist = "hostile_sdist-1.0.dist-info"
    name = "hostile_sdist-1.0-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as z:
        z.writestr("hostile_sdist.py", "REACHED = True\\n")
        z.writestr(dist + "/METADATA", "Metadata-Version: 2.1\\nName: hostile-sdist\\nVersion: 1.0\\n")
        z.writestr(dist + "/WHEEL", "Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
        z.writestr(dist + "/RECORD", "")
    return name
'''


def build_hostile_sdist(root, target):
    host, port = target.rsplit(":", 1)
    top = "hostile_sdist-1.0"
    files = {
        "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
        "backend.py": BACKEND % (host, int(port)),
        "PKG-INFO": "Metadata-Version: 2.1\nName: hostile-sdist\nVersion: 1.0\n",
    }
    fname = f"{top}.tar.gz"
    with tarfile.open(os.path.join(root, fname), "w:gz") as t:
        for p, d in files.items():
            data = d.encode()
            info = tarfile.TarInfo(f"{top}/{p}")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return "hostile-sdist", fname


def write_pages(root, projects, prefix):
    simple = os.path.join(root, "simple")
    os.makedirs(simple, exist_ok=True)
    links = []
    for proj, fnames in sorted(projects.items()):
        d = os.path.join(simple, proj)
        os.makedirs(d, exist_ok=True)
        anchors = []
        for f in fnames:
            with open(os.path.join(root, f), "rb") as fh:
                digest = hashlib.sha256(fh.read()).hexdigest()
            anchors.append(f'<a href="{prefix}{f}#sha256={digest}">{f}</a><br/>')
        with open(os.path.join(d, "index.html"), "w") as fh:
            fh.write("<!DOCTYPE html><html><body>\n" + "\n".join(anchors) + "\n</body></html>\n")
        links.append(f'<a href="{proj}/">{proj}</a><br/>')
    with open(os.path.join(simple, "index.html"), "w") as fh:
        fh.write("<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n")


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write("pep503: " + (fmt % args) + "\n")


def main():
    ap = argparse.ArgumentParser(description="a PEP 503 simple index for tests")
    ap.add_argument("--root", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--package", action="append", default=[], help="name==version")
    ap.add_argument("--depends", action="append", default=[], help="name:dep")
    ap.add_argument("--absolute", action="store_true")
    ap.add_argument("--sdist-hostile", metavar="HOST:PORT")
    a = ap.parse_args()
    os.makedirs(a.root, exist_ok=True)
    deps = {}
    for d in a.depends:
        name, _, dep = d.partition(":")
        deps.setdefault(normalize(name), []).append(dep)
    # the port comes first: absolute links name it
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    port = srv.server_address[1]
    projects = {}
    for spec in a.package:
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][0-9.]*)", spec)
        if not m:
            ap.error(f"bad --package '{spec}' (name==version)")
        name, fname = build_wheel(a.root, m.group(1), m.group(2), deps.get(normalize(m.group(1)), ()))
        projects.setdefault(normalize(name), []).append(fname)
    if a.sdist_hostile:
        name, fname = build_hostile_sdist(a.root, a.sdist_hostile)
        projects.setdefault(normalize(name), []).append(fname)
    write_pages(a.root, projects, f"http://127.0.0.1:{port}/" if a.absolute else "../../")
    os.chdir(a.root)
    print(f"ready http://127.0.0.1:{port}/simple/", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
