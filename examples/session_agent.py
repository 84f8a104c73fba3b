#!/usr/bin/env python3
"""session_agent.py: an agent's session loop against a judge, with a scripted
stand-in for the model (Python standard library only).

The pattern an agent follows with a stateful session:
  1. open a Python session (POST /v1/sessions)
  2. upload its data (PUT /v1/sessions/{id}/files/data.csv)
  3. run a cell that loads the data into a variable
  4. run a cell that imports a package the sandbox lacks: ModuleNotFoundError
  5. the "model" reads the error and installs the package (POST .../install)
  6. run the cell again: the package imports, and the variable of step 3 is
     still there; the cell writes a result file
  7. download the file (GET .../files/out/summary.txt) and close the session

usage: session_agent.py [--url URL] [--key KEY] [--package NAME] [--module MOD]
                        [--call EXPR] [--json]
  URL and KEY default to $JUDGE_URL (http://127.0.0.1:8080) and $JUDGE_API_KEY.
  --package, --module, --call: what the scripted model installs, imports and
  calls on the data (default: humanize, humanize, intcomma(total)).
Exit status: 0 when the loop went as above, 1 when a step did not, 2 when the
judge refused a request.
"""
import argparse
import json
import os
import sys
import urllib.error
import urllib.request

CSV = "city,population\nOslo,709037\nLima,10092000\nCairo,10230350\n"


class Refused(Exception):
    pass


class Judge:
    def __init__(self, url, key):
        self.url, self.key = url.rstrip("/"), key

    def call(self, method, path, body=None, raw=None, want_json=True):
        headers = {"Authorization": "Bearer " + self.key} if self.key else {}
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=300) as r:
                text = r.read()
        except urllib.error.HTTPError as e:
            raise Refused(f"{method} {path}: {e.code} {e.read().decode(errors='replace')[:300]}")
        except urllib.error.URLError as e:
            raise Refused(f"{method} {path}: cannot reach the judge: {e.reason}")
        return json.loads(text) if want_json else text


class ScriptedModel:
    """Writes the cells an LLM would write, and reacts to errors as one would."""

    def __init__(self, package, module, call):
        self.package, self.module, self.call = package, module, call

    def load_cell(self):
        return ("import csv\nrows = list(csv.DictReader(open('data.csv')))\n"
                "total = sum(int(r['population']) for r in rows)\nlen(rows)")

    def analysis_cell(self):
        return (f"import os, {self.module}\nos.makedirs('out', exist_ok=True)\n"
                f"line = f'{{len(rows)}} cities, {{{self.module}.{self.call}}}'\n"
                "open('out/summary.txt', 'w').write(line)\nline")

    def fix(self, cell_answer):
        """The next action after a failed cell: an install when a module is missing."""
        err = cell_answer.get("error") or {}
        if err.get("name") == "ModuleNotFoundError":
            return {"manager": "pip", "packages": [self.package]}
        return None


def run(judge, model, log):
    steps = []

    def step(name, **facts):
        steps.append({"step": name, **facts})
        log(f"{name}: " + ", ".join(f"{k}={v}" for k, v in facts.items()))

    s = judge.call("POST", "/v1/sessions", {"language": "python", "idle_ttl": 300})
    sid = s["id"]
    step("create", id=sid, status=s["status"])
    try:
        up = judge.call("PUT", f"/v1/sessions/{sid}/files/data.csv", raw=CSV.encode())
        step("upload", path=up["path"], size=up["size"])
        a = judge.call("POST", f"/v1/sessions/{sid}/execute", {"code": model.load_cell()})
        step("load", status=a["status"], result=a["result"])
        code = model.analysis_cell()
        a = judge.call("POST", f"/v1/sessions/{sid}/execute", {"code": code})
        step("analyse", status=a["status"], error=(a.get("error") or {}).get("name"))
        action = model.fix(a) if a["status"] == "error" else None
        if action:
            inst = judge.call("POST", f"/v1/sessions/{sid}/install", action)
            step("install", status=inst["status"], packages=inst["packages"])
            a = judge.call("POST", f"/v1/sessions/{sid}/execute", {"code": code})
            step("retry", status=a["status"], result=a["result"], restarted=a.get("restarted"))
        if a["status"] == "ok":
            text = judge.call("GET", f"/v1/sessions/{sid}/files/out/summary.txt",
                              want_json=False).decode()
            step("download", content=text)
    finally:
        judge.call("DELETE", f"/v1/sessions/{sid}")
        step("close")
    names = [s["step"] for s in steps]
    ok = names == ["create", "upload", "load", "analyse", "install", "retry", "download",
                   "close"] and steps[3]["error"] == "ModuleNotFoundError" and \
        steps[5]["status"] == "ok"
    return ok, steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", default=os.environ.get("JUDGE_URL", "http://127.0.0.1:8080"))
    ap.add_argument("--key", default=os.environ.get("JUDGE_API_KEY", ""))
    ap.add_argument("--package", default="humanize")
    ap.add_argument("--module", default=None)
    ap.add_argument("--call", default="intcomma(total)")
    ap.add_argument("--json", action="store_true", help="print the steps as JSON on stdout")
    a = ap.parse_args()
    model = ScriptedModel(a.package, a.module or a.package.replace("-", "_"), a.call)
    try:
        ok, steps = run(Judge(a.url, a.key), model, lambda m: print(m, file=sys.stderr))
    except Refused as e:
        print(f"refused: {e}", file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps({"ok": ok, "steps": steps}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
