#!/usr/bin/env bash
# drivers.sh: the session drivers (languages/drivers/PROTOCOL.md) run directly as
# host subprocesses, no sandbox (runner/session/session.c's path is tested with it):
# state across cells, results, errors with tracebacks trimmed to the user's
# cells, stdin, output that streams, SIGINT, exit and EOF. Each language's argv
# and env come from the `session` and `session_env`/`env` keys of its
# languages/<name>.ini; a language whose file has no `session` key, or whose
# runtime is not installed, is counted as skipped. The session folder (/box in
# a sandbox) is a temp folder, the drivers' working directory. As root the
# drivers run as nobody, as the sandbox would.
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
exec python3 - "$tmp" "${DRIVERS_LANGS:-node csharp python bash}" <<'PY'
import os, signal, sys, time

sys.path.insert(0, "tests/integration/lib")
from driver_client import Driver, DriverError, ini_session

tmp, langs = sys.argv[1], sys.argv[2].split()
drivers_dir = os.path.abspath("languages/drivers")
counts = {"passed": 0, "failed": 0, "skipped": 0}


def report(kind, name, why=""):
    counts[kind] += 1
    tag = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}[kind]
    print("%s drivers: %s%s" % (tag, name, " -- " + why if why else ""), flush=True)


def check(name, cond, why=""):
    report("passed" if cond else "failed", name, "" if cond else why)
    return cond


def as_nobody():
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)


def session_dir(lang):
    d = os.path.join(tmp, lang)
    os.mkdir(d)
    if os.getuid() == 0:
        os.chown(d, 65534, 65534)
    return d


def new_driver(lang, folder):
    found = ini_session("languages/%s.ini" % lang, drivers_dir)
    if found is None:
        return None
    argv, env = found
    return Driver(
        argv,
        cwd=folder,
        env=dict(e.split("=", 1) for e in env),
        preexec_fn=as_nobody if os.getuid() == 0 else None,
    )


# Per language: cells for each check. "result" holds what the driver's result
# text must be; "tb" what the trimmed traceback must mention.
CASES = {
    "node": dict(
        env_code="console.log((process.env.CELL_VAR ?? '') + '|' + require('child_process').execSync('echo \"$CELL_VAR\"').toString().trim() + '|' + (process.env.HOME ?? ''))",
        fd0="require('fs').readFileSync(0, 'utf8').length",
        fd0_result="0",
        bigout="for (let i = 0; i < 100000; i++) console.log('line ' + i)",
        define="let counter = 40; function add(a, b) { return a + b }",
        use="add(counter, 2)",
        use_result="42",
        raise_="function inner() { throw new RangeError('too far') }\nfunction outer() { inner() }\nouter()",
        raise_name="RangeError",
        raise_value="too far",
        stdin_code="stdin.split('\\n').map(Number).reduce((a, b) => a + b, 0)",
        stdin_result="6",
        stream="console.log('first'); const t0 = Date.now(); while (Date.now() - t0 < 1500) {} console.log('second')",
        stream_async="console.log('first'); await new Promise(r => setTimeout(r, 1500)); console.log('second')",
        runaway="while (true) {}",
        exit="process.exit(3)",
        stderr="console.error('to stderr')",
        string_result=("'a' + 'b'", "'ab'"),
    ),
    "csharp": dict(
        env_code="var psi = new System.Diagnostics.ProcessStartInfo(\"sh\", new[] { \"-c\", \"echo \\\"$CELL_VAR\\\"\" }) { RedirectStandardOutput = true };\nvar p = System.Diagnostics.Process.Start(psi);\nConsole.WriteLine((Environment.GetEnvironmentVariable(\"CELL_VAR\") ?? \"\") + \"|\" + p.StandardOutput.ReadToEnd().Trim() + \"|\" + (Environment.GetEnvironmentVariable(\"HOME\") ?? \"\"));",
        fd0="Console.OpenStandardInput().ReadByte()",
        fd0_result="-1",
        bigout="for (int i = 0; i < 100000; i++) Console.WriteLine(\"line \" + i);",
        define="int counter = 40; int Add(int a, int b) => a + b;",
        use="Add(counter, 2)",
        use_result="42",
        raise_="void Inner() => throw new ArgumentOutOfRangeException(\"x\", \"too far\");\nvoid Outer() => Inner();\nOuter();",
        raise_name="ArgumentOutOfRangeException",
        raise_value="too far",
        stdin_code="var sum = 0; string line; while ((line = Console.ReadLine()) != null) sum += int.Parse(line);\nsum",
        stdin_result="6",
        stream="Console.WriteLine(\"first\"); Thread.Sleep(1500); Console.WriteLine(\"second\");",
        stream_async="Console.WriteLine(\"first\"); await Task.Delay(1500); Console.WriteLine(\"second\");",
        runaway="Thread.Sleep(60000);",
        exit="Environment.Exit(3);",
        stderr="Console.Error.WriteLine(\"to stderr\");",
        string_result=("\"a\" + \"b\"", '"ab"'),
    ),
    "python": dict(
        env_code="import os, subprocess\nprint(os.environ.get('CELL_VAR', '') + '|' + subprocess.run(['sh', '-c', 'echo \"$CELL_VAR\"'], capture_output=True, text=True).stdout.strip() + '|' + os.environ.get('HOME', ''))",
        fd0="import os\nlen(os.read(0, 100))",
        fd0_result="0",
        bigout="for i in range(100000):\n    print('line', i)",
        define="counter = 40\ndef add(a, b):\n    return a + b",
        use="add(counter, 2)",
        use_result="42",
        raise_="def inner():\n    raise ValueError('too far')\ndef outer():\n    inner()\nouter()",
        raise_name="ValueError",
        raise_value="too far",
        stdin_code="import sys\nsum(int(l) for l in sys.stdin)",
        stdin_result="6",
        stream="import time\nprint('first')\ntime.sleep(1.5)\nprint('second')",
        runaway="while True:\n    pass",
        exit="exit(3)",
        stderr="import sys\nprint('to stderr', file=sys.stderr)",
        string_result=("'a' + 'b'", "'ab'"),
    ),
    "bash": dict(
        env_code="echo \"${CELL_VAR:-}|$(sh -c 'echo \"$CELL_VAR\"')|${HOME:-}\"",
        fd0="head -c 100 <&0 | wc -c",
        fd0_stdout="0\n",
        bigout="seq -f 'line %g' 0 99999",
        define="counter=40\nadd() { echo $(($1 + $2)); }",
        use="add $counter 2",
        use_stdout="42\n",
        stdin_code="s=0; while read -r l; do s=$((s + l)); done; echo $s",
        stdin_stdout="6\n",
        stream="echo first; sleep 1.5; echo second",
        runaway="while :; do :; done",
        exit="exit 3",
        stderr="echo to stderr >&2",
    ),
}


def run_lang(lang):
    case = CASES[lang]
    folder = session_dir(lang)
    d = new_driver(lang, folder)
    if d is None:
        report("skipped", "%s: languages/%s.ini has no session key" % (lang, lang))
        return
    # the runtime and the driver: every absolute path the argv names
    paths = [w for word in d.argv for w in word.split() if w.startswith("/")]
    if not all(os.path.exists(p) for p in paths):
        report("skipped", "%s: %s is not installed" % (lang, " ".join(d.argv)))
        return
    try:
        try:
            ready = d.start()
        except DriverError as e:
            if "'/box'" in str(e) and not os.path.isdir("/box"):
                # the driver hard-codes /box for its package folder instead of
                # taking the session folder from its cwd: it runs only in a sandbox
                report("skipped", "%s: the driver needs /box (hard-coded), absent on the host" % lang)
            else:
                check("%s: the driver starts and says ready" % lang, False, str(e))
            return
        check("%s: ready in %.0f ms, version %s" % (lang, d.start_ms, ready.get("version")),
              ready.get("ready") is True and isinstance(ready.get("version"), str), repr(ready))
        if lang == "csharp":
            print("     drivers: csharp: start to ready %.0f ms" % d.start_ms, flush=True)

        c = d.cell(case["define"])
        check("%s: a cell that defines state is ok with no result" % lang,
              c.status == "ok" and c.result is None, repr(c))
        t0 = time.monotonic()
        c = d.cell(case["use"])
        ms = (time.monotonic() - t0) * 1000
        if "use_result" in case:
            check("%s: state from the last cell, result %s (%.0f ms)" % (lang, case["use_result"], ms),
                  c.status == "ok" and c.result == case["use_result"], repr(c))
        else:
            check("%s: state from the last cell (%.0f ms)" % (lang, ms),
                  c.status == "ok" and c.out == case["use_stdout"], repr(c))
        if lang == "csharp":
            print("     drivers: csharp: a trivial cell %.0f ms" % ms, flush=True)

        if "string_result" in case:
            code, want = case["string_result"]
            c = d.cell(code)
            check("%s: a string result is quoted (%s)" % (lang, want), c.result == want, repr(c))

        if "raise_" in case:
            c = d.cell(case["raise_"])
            tb = c.error.get("traceback", "")
            check("%s: an exception is an error reply with name and value" % lang,
                  c.status == "error" and c.error.get("name") == case["raise_name"]
                  and case["raise_value"] in c.error.get("value", ""), repr(c))
            check("%s: the traceback names the user's functions in a cell" % lang,
                  "inner" in tb.lower() and "outer" in tb.lower() and "cell-" in tb, tb)
            check("%s: the traceback leaves the driver out" % lang,
                  "driver" not in tb.lower() and "node:" not in tb
                  and "Microsoft.CodeAnalysis" not in tb, tb)
        else:
            c = d.cell("false")
            check("%s: a failing last command is an ExitStatus error" % lang,
                  c.status == "error" and c.error.get("name") == "ExitStatus"
                  and c.error.get("value") == "1", repr(c))
        c = d.cell(case["use"])
        check("%s: an error does not lose state" % lang,
              c.status == "ok" and (c.result == case.get("use_result") or c.out == case.get("use_stdout")),
              repr(c))

        c = d.cell(case["stdin_code"], stdin=b"1\n2\n3\n")
        if "stdin_result" in case:
            check("%s: the cell reads its stdin" % lang, c.result == case["stdin_result"], repr(c))
        else:
            check("%s: the cell reads its stdin" % lang, c.out == case["stdin_stdout"], repr(c))

        # a cell's own variables (PROTOCOL.md): its code and its children see
        # them, HOME too; the next cell has the driver's environment again
        before = d.cell(case["env_code"])
        home = before.out.rstrip("\n").split("|")[-1]
        c = d.cell(case["env_code"], env={"CELL_VAR": "a b=c", "HOME": "/elsewhere"})
        check("%s: a cell's env reaches its code and its children" % lang,
              c.status == "ok" and c.out == "a b=c|a b=c|/elsewhere\n", repr(c))
        c = d.cell(case["env_code"])
        check("%s: the next cell has the environment it had before" % lang,
              before.status == "ok" and before.out.startswith("||/") and c.out == before.out
              and home != "/elsewhere", repr(before) + " " + repr(c))

        c = d.cell(case["fd0"])
        check("%s: fd 0 of a cell without input is empty (requests are elsewhere)" % lang,
              c.result == case.get("fd0_result") if "fd0_result" in case else c.out == case["fd0_stdout"],
              repr(c))
        c = d.cell(case["bigout"], timeout=120)
        want = "".join("line %d\n" % i for i in range(100000))
        check("%s: 100000 lines of output, then the reply" % lang,
              c.status == "ok" and c.out == want, "%d bytes, %r" % (len(c.stdout), c.reply))

        c = d.cell(case["stderr"])
        check("%s: stderr is apart from stdout" % lang,
              c.err == "to stderr\n" and c.out == "" and c.status == "ok", repr(c))

        for key in ("stream", "stream_async"):
            if key not in case:
                continue
            c = d.cell(case[key], timeout=20)
            firsts = [t for t, fd, data in c.chunks if fd == 1 and b"first" in data]
            lead = (c.replied - firsts[0]) if firsts else 0
            check("%s: output streams (%s: 'first' came %.2f s before the reply)" % (lang, key, lead),
                  c.out == "first\nsecond\n" and lead >= 1.0, repr(c))

        d.begin(case["runaway"])
        time.sleep(1.0)
        d.interrupt()
        t0 = time.monotonic()
        try:
            c = d.wait(timeout=3)
        except DriverError as e:
            c = None
            why = str(e)
        if c is not None and c.reply is not None:
            check("%s: SIGINT ends a runaway cell with an error reply in %.2f s" % (lang, time.monotonic() - t0),
                  c.status == "error" and time.monotonic() - t0 < 1.0, repr(c))
            c = d.cell(case["use"])
            check("%s: state survives the interrupt" % lang,
                  c.status == "ok" and (c.result == case.get("use_result") or c.out == case.get("use_stdout")),
                  repr(c))
        else:
            check("%s: SIGINT ends a runaway cell with an error reply" % lang, False,
                  why if c is None else "the driver ended: %r" % c)
        # SIGINT between cells is ignored
        d.interrupt()
        time.sleep(0.3)
        c = d.cell(case["use"])
        check("%s: SIGINT between cells is ignored" % lang, c.status == "ok", repr(c))

        extra = globals().get("extra_" + lang)
        if extra:
            extra(d, folder)
    finally:
        d.kill()

    d = new_driver(lang, folder)
    try:
        d.start()
        d.cell(case["define"])
        c = d.cell(case["exit"])
        check("%s: exiting ends the cell and the driver, with no reply" % lang,
              c.reply is None and c.exited == 3, repr(c))
    finally:
        d.kill()
    d = new_driver(lang, folder)
    d.start()
    d.cell(case["define"])
    rc = d.close()
    check("%s: EOF on the request stream ends the driver with 0" % lang, rc == 0, "exit %r" % rc)


NODE_RICH = """class Page { _repr_html_() { return '<b>bold</b>' }
  _repr_svg_() { return '<svg xmlns="http://www.w3.org/2000/svg"/>' }
  _repr_markdown_() { throw new Error('no markdown today') } }
class Pic { _repr_png_() { return Buffer.from([137, 80, 78, 71, 13, 10, 26, 10, 0, 0]) } }
class Kernel { [Symbol.for('Jupyter.display')]() { return { 'text/markdown': '**md**', 'application/json': { a: [1, 2] } } } }
"""


def node_rich_checks(d):
    """Node's display protocol (PROTOCOL.md "results", node_driver.js)."""
    import base64
    c = d.cell(NODE_RICH + "new Pic()")
    res = (c.reply or {}).get("results") or [{}]
    png = base64.b64decode(res[0].get("image/png", ""))
    check("node: _repr_png_ of the last expression: the main result, bytes in base64",
          c.result == "Pic {}" and len(res) == 1 and res[0].get("is_main_result") is True
          and png.startswith(b"\x89PNG\r\n\x1a\n") and res[0].get("text/plain") == "Pic {}", repr(c))
    c = d.cell("new Page()")
    r = ((c.reply or {}).get("results") or [{}])[0]
    check("node: _repr_html_ and _repr_svg_; a throwing method left out",
          c.status == "ok" and r.get("text/html") == "<b>bold</b>"
          and r.get("image/svg+xml", "").startswith("<svg") and "text/markdown" not in r, repr(c))
    c = d.cell("new Kernel()")
    r = ((c.reply or {}).get("results") or [{}])[0]
    check("node: Symbol.for('Jupyter.display') gives a bundle, JSON as an object",
          r.get("text/markdown") == "**md**" and r.get("application/json") == {"a": [1, 2]}, repr(c))
    c = d.cell("display(new Page()); console.log('between'); display.mime({ 'text/html': '<i>raw</i>' });\n"
               "display.png(Buffer.from('x')); 40 + 2")
    res = (c.reply or {}).get("results") or []
    check("node: display(), display.mime, display.png, then the value: in order, only the last main",
          [r.get("is_main_result") for r in res] == [False, False, False, True]
          and res[0].get("text/html") == "<b>bold</b>" and res[1].get("text/html") == "<i>raw</i>"
          and res[2].get("image/png") == "eA==" and res[3].get("text/plain") == "42"
          and c.out == "between\n" and c.result == "42", repr(c))
    c = d.cell("Page")
    r = ((c.reply or {}).get("results") or [{}])[0]
    check("node: a class's methods are not its representation",
          "text/html" not in r and r.get("text/plain", "").startswith("[class Page"), repr(c))
    c = d.cell("const nothing = 1")
    check("node: no value, no display: no results", c.status == "ok" and "results" not in c.reply, repr(c))
    c = d.cell("display({ _repr_html_: () => 'x'.repeat(5 << 20) }); 'small'", timeout=30)
    res = (c.reply or {}).get("results") or []
    check("node: a display over the cell's cap is left out and counted; the value still comes",
          (c.reply or {}).get("results_dropped") == 1 and len(res) == 1
          and res[0].get("text/plain") == "'small'", repr(c)[:600])
    c = d.cell("display(new Page()); null.x")
    res = (c.reply or {}).get("results") or []
    check("node: a cell that throws keeps what it displayed before",
          c.status == "error" and len(res) == 1 and res[0].get("text/html") == "<b>bold</b>", repr(c))


def extra_node(d, folder):
    node_rich_checks(d)
    c = d.cell("const r = await Promise.resolve(5)")
    check("node: a cell with top-level await is ok", c.status == "ok" and c.result is None, repr(c))
    c = d.cell("r + 1")
    check("node: a const declared in an awaiting cell persists", c.result == "6", repr(c))
    c = d.cell("const { p, q: [s] } = await Promise.resolve({ p: 1, q: [2] });\nclass K { v() { return p + s } }\nawait 0; new K().v()")
    check("node: destructuring and class in an awaiting cell, its last value", c.result == "3", repr(c))
    c = d.cell("new K().v() * 10")
    check("node: the class persists", c.result == "30", repr(c))
    c = d.cell("let counter = 1; const r = 2; counter + r")
    check("node: let/const may be declared again in a later cell", c.result == "3", repr(c))
    c = d.cell("throw new Proxy(new Error('x'), { get() { throw new Error('no') } })")
    check("node: an error that cannot be shown still gets an error reply", c.status == "error", repr(c))
    c = d.cell("new Proxy({}, { get() { throw new Error('no') }, ownKeys() { throw new Error('no') } })")
    check("node: a result that cannot be shown still gets a reply", c.status == "ok" and c.result, repr(c))
    c = d.cell("{ a: 1, b: [2] }")
    check("node: an object literal alone is a value, not a block", c.result == "{ a: 1, b: [ 2 ] }", repr(c))
    c = d.cell("const w = 1; null.y")
    check("node: a column in the traceback is the user's own (const is not moved)",
          "cell-" in c.error.get("traceback", "") and ":1:19)" in c.error.get("traceback", "") + ")", repr(c))
    c = d.cell("let x = ")
    check("node: a syntax error is a SyntaxError reply",
          c.status == "error" and c.error.get("name") == "SyntaxError", repr(c))
    c = d.cell("await new Promise(r => setTimeout(r, 50)); null.x")
    check("node: an error after an await is the cell's error",
          c.error.get("name") == "TypeError" and "cell-" in c.error.get("traceback", ""), repr(c))
    c = d.cell("setTimeout(() => { throw new Error('in timer') }, 10); await new Promise(r => setTimeout(r, 100)); 1")
    check("node: an error thrown in a timer during the cell is its error",
          c.status == "error" and c.error.get("value") == "in timer", repr(c))
    c = d.cell("Promise.reject(new Error('nobody caught me')); 2")
    check("node: an unhandled rejection during the cell is its error",
          c.status == "error" and c.error.get("value") == "nobody caught me", repr(c))
    c = d.cell("setTimeout(() => { throw new Error('late') }, 200); 3")
    time.sleep(0.5)
    c2 = d.cell("r")
    check("node: an error thrown after its cell is on stderr, not fatal",
          c.result == "3" and c2.result == "2" and "late" in c2.err, "%r %r" % (c, c2))
    d.begin("await new Promise(() => {})")
    time.sleep(0.5)
    d.interrupt()
    try:
        c = d.wait(timeout=2)
        check("node: SIGINT ends a cell awaiting forever", c.status == "error" and "SIGINT" in c.error.get("value", ""), repr(c))
    except DriverError as e:
        check("node: SIGINT ends a cell awaiting forever", False, str(e))
    # packages: npm installs into <session>/.packages/node (node.ini package_dir)
    for base, val in ((".packages/node/node_modules", "from packages"), ("node_modules", "from the folder")):
        p = os.path.join(folder, base, "judge-test-pkg")
        os.makedirs(p)
        with open(os.path.join(p, "package.json"), "w") as f:
            f.write('{"name": "judge-test-pkg", "version": "1.0.0", "main": "index.js"}')
        with open(os.path.join(p, "index.js"), "w") as f:
            f.write("module.exports = { where: %r };" % val)
    c = d.cell("require('judge-test-pkg').where")
    check("node: require finds a package in .packages/node/node_modules first",
          c.result == "'from packages'", repr(c))
    c = d.cell("import pkg, { where } from 'judge-test-pkg';\nimport * as nodePath from 'node:path';\n"
               "import { join as j } from 'path';\nimport 'os';\n[pkg.where, where, nodePath.join('a', 'b'), j('c', 'd')]")
    check("node: static imports (default, named, namespace, bare) become bindings",
          c.result == "[ 'from packages', 'from packages', 'a/b', 'c/d' ]", repr(c))
    p = os.path.join(folder, ".packages/node/node_modules/judge-esm-pkg")
    os.makedirs(p)
    with open(os.path.join(p, "package.json"), "w") as f:
        f.write('{"name": "judge-esm-pkg", "version": "1.0.0", "type": "module", "exports": "./index.js"}')
    with open(os.path.join(p, "index.js"), "w") as f:
        f.write("export default 40; export const two = 2;")
    c = d.cell("import forty, { two } from 'judge-esm-pkg'; forty + two")
    check("node: an ES module package's default and named exports", c.result == "42", repr(c))
    c = d.cell("where.length + j('x').length")
    check("node: imported names persist", c.result == "14", repr(c))
    c = d.cell("import x from 'no-such-package-here'")
    check("node: importing a missing package is an error reply",
          c.status == "error" and "no-such-package-here" in c.error.get("value", ""), repr(c))
    with open(os.path.join(folder, "local.js"), "w") as f:
        f.write("module.exports = 7;")
    c = d.cell("require('./local') * 6")
    check("node: a relative require is from the session folder", c.result == "42", repr(c))
    c = d.cell("require('node:path').join('a', 'b')")
    check("node: built-in modules", c.result == "'a/b'", repr(c))
    c = d.cell("const m = await import('node:os'); typeof m.cpus")
    check("node: dynamic import()", c.result == "'function'", repr(c))
    c = d.cell("fs = require('fs'); fs.writeFileSync('made.txt', 'x'); fs.readdirSync('.').includes('made.txt')")
    check("node: files are written in the session folder",
          c.result == "true" and os.path.exists(os.path.join(folder, "made.txt")), repr(c))
    c = d.cell("require('child_process').execSync('ls /proc/self/fd', "
               "{ stdio: ['inherit', 'pipe', 'ignore'] }).toString().split('\\n').filter(Boolean).length")
    # 0, 1, 2 and the fd of ls's own listing of /proc/self/fd
    check("node: a child of user code gets no request stream", c.result == "4", repr(c))
    c = d.cell("[1, 2].length")
    c = d.cell("_ * 10")
    check("node: _ is the last result", c.result == "20", repr(c))
    c = d.cell("const _ = { lib: true }; 5")
    c = d.cell("_.lib")
    check("node: _ given a value by the user stays theirs", c.result == "true", repr(c))
    c = d.cell("typeof stdin + ':' + stdin")
    check("node: stdin is an empty string without input", c.result == "'string:'", repr(c))


def extra_python(d, folder):
    # issue 22: a process the cell forked is a copy of the driver; once its copy
    # of the cell ends it must leave without a reply, or the next cell reads
    # that stale reply instead of its own
    c = d.cell("import os\nme = os.getpid()\npid = os.fork()\nif pid == 0:\n    print('child')\n"
               "else:\n    os.waitpid(pid, 0)\nos.getpid() == me", timeout=20)
    c2 = d.cell("1 + 1", timeout=20)
    check("python: a forked child of a cell ends without a reply; the next cell answers for itself",
          c.result == "True" and c.out == "child\n" and c2.result == "2" and c2.out == "",
          "%r %r" % (c, c2))
    # a copy that gets the cell's SIGINT too (the host signals every process of the
    # sandbox) ends as well, and the cells after answer for themselves
    d.begin("import os, time\nif os.fork() == 0:\n    time.sleep(60)\ntime.sleep(60)")
    time.sleep(1.0)
    for pid in child_pids(d.proc.pid) + [d.proc.pid]:
        try:
            os.kill(pid, signal.SIGINT)
        except ProcessLookupError:
            pass
    c = d.wait(timeout=5)
    c2 = d.cell("print('alive')", timeout=20)
    check("python: after an interrupted cell whose fork was interrupted too, the next cell answers for itself",
          c.status == "error" and c.error.get("name") == "KeyboardInterrupt" and c2.out == "alive\n"
          and c2.status == "ok", "%r %r" % (c, c2))
    rich_checks(d, "python")
    figure_checks(os.environ.get("DRIVERS_MPL_PYTHON", "/usr/bin/python3"), folder)


# a real PNG (4x2 pixels, RGB), made here with zlib: what a _repr_png_ returns
PNG_CELL = r"""import struct, zlib
def _chunk(kind, data):
    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
def png_bytes(w=4, h=2):
    rows = b''.join(b'\x00' + bytes([255, 0, 0] * w) for _ in range(h))
    return (b'\x89PNG\r\n\x1a\n' + _chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
            + _chunk(b'IDAT', zlib.compress(rows)) + _chunk(b'IEND', b''))
class Pic:
    def _repr_png_(self):
        return png_bytes()
    def __repr__(self):
        return 'Pic()'
class Page:
    def _repr_html_(self):
        return '<b>bold</b>'
    def _repr_svg_(self):
        return '<svg xmlns="http://www.w3.org/2000/svg"/>'
    def _repr_latex_(self):
        return ('$x^2$', {'meta': 1})
    def _repr_markdown_(self):
        raise RuntimeError('no markdown today')
class Bundle:
    def _repr_mimebundle_(self, include=None, exclude=None):
        return {'text/markdown': '**md**', 'application/json': {'a': [1, 2]},
                'application/vnd.custom': 'x'}
"""


def rich_checks(d, tag):
    """The display protocol (PROTOCOL.md "results") in driver d."""
    import base64
    c = d.cell(PNG_CELL + "Pic()", timeout=20)
    res = (c.reply or {}).get("results") or [{}]
    png = base64.b64decode(res[0].get("image/png", ""))
    check("%s: _repr_png_ of the last expression: the main result, a real PNG in base64" % tag,
          c.result == "Pic()" and len(res) == 1 and res[0].get("is_main_result") is True
          and png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 40
          and res[0].get("text/plain") == "Pic()", repr(c))
    c = d.cell("Page()", timeout=20)
    r = ((c.reply or {}).get("results") or [{}])[0]
    check("%s: _repr_html_, _repr_svg_, a (data, metadata) _repr_latex_; a raising method left out" % tag,
          c.status == "ok" and r.get("text/html") == "<b>bold</b>" and r.get("text/latex") == "$x^2$"
          and r.get("image/svg+xml", "").startswith("<svg") and "text/markdown" not in r, repr(c))
    c = d.cell("Bundle()", timeout=20)
    r = ((c.reply or {}).get("results") or [{}])[0]
    check("%s: _repr_mimebundle_: its types, JSON as an object" % tag,
          r.get("text/markdown") == "**md**" and r.get("application/json") == {"a": [1, 2]}
          and r.get("application/vnd.custom") == "x", repr(c))
    c = d.cell("display(Page())\nprint('between')\ndisplay({'text/html': '<i>raw</i>'}, raw=True)\n40 + 2",
               timeout=20)
    res = (c.reply or {}).get("results") or []
    check("%s: display() twice, then the value: three results in order, only the last main" % tag,
          [r.get("is_main_result") for r in res] == [False, False, True]
          and res[0].get("text/html") == "<b>bold</b>" and res[1].get("text/html") == "<i>raw</i>"
          and res[2].get("text/plain") == "42" and c.out == "between\n" and c.result == "42", repr(c))
    c = d.cell("x = 1\nPage", timeout=20)
    r = ((c.reply or {}).get("results") or [{}])[0]
    check("%s: a class's _repr_html_ is not its representation" % tag,
          "text/html" not in r and r.get("text/plain", "").startswith("<class"), repr(c))
    c = d.cell("y = 2", timeout=20)
    check("%s: no value, no display: no results" % tag,
          c.status == "ok" and "results" not in c.reply, repr(c))
    c = d.cell("class Big:\n    def _repr_html_(self):\n        return 'x' * (5 << 20)\ndisplay(Big())\n'small'",
               timeout=30)
    res = (c.reply or {}).get("results") or []
    check("%s: a display over the cell's cap is left out and counted; the value still comes" % tag,
          (c.reply or {}).get("results_dropped") == 1 and len(res) == 1
          and res[0].get("text/plain") == "'small'", repr(c)[:600])
    c = d.cell("def f():\n    display(Page())\n    raise ValueError('late')\nf()", timeout=20)
    res = (c.reply or {}).get("results") or []
    check("%s: a cell that raises keeps what it displayed before" % tag,
          c.status == "error" and len(res) == 1 and res[0].get("text/html") == "<b>bold</b>", repr(c))


MPL_CELL = """import matplotlib.pyplot as plt
plt.plot([1, 2, 3], [1, 4, 9])
plt.show()
fig, ax = plt.subplots()
bars = ax.bar(['a', 'b'], [3, 5])
"""


def figure_checks(python, folder):
    """pyplot.show() and figures left open, under a Python that has matplotlib
    (the sandbox's 3.12 has none here: Debian's python3 with python3-matplotlib)."""
    import base64, subprocess
    tag = "python (%s): matplotlib" % python
    try:
        subprocess.run([python, "-c", "import matplotlib"], check=True, capture_output=True, timeout=60)
    except Exception:
        report("skipped", tag, "%s has no matplotlib (apt-get install python3-matplotlib)" % python)
        return
    d = Driver([python, "-u", os.path.join(drivers_dir, "python_driver.py")], cwd=folder,
               env={"PATH": "/usr/bin:/bin", "HOME": folder, "LANG": "C.UTF-8"},
               preexec_fn=as_nobody if os.getuid() == 0 else None)
    d.start()
    try:
        c = d.cell(MPL_CELL, timeout=120)
        res = (c.reply or {}).get("results") or []
        pngs = [base64.b64decode(r.get("image/png", "")) for r in res]
        check("%s: plt.show() and a figure left open: two PNG results, not main, no warning" % tag,
              c.status == "ok" and len(res) == 2 and all(p.startswith(b"\x89PNG") and len(p) > 1000 for p in pngs)
              and not any(r.get("is_main_result") for r in res) and "Figure" in res[0].get("text/plain", "")
              and c.err == "",  # no "non-interactive, cannot be shown" warning
              repr(c)[:800])
        charts = [r.get("e2b/chart") or {} for r in res]
        check("%s: each figure's data as E2B's chart: a line's points, the bars' categories and values" % tag,
              len(charts) == 2 and charts[0].get("type") == "line"
              and charts[0]["elements"][0]["points"] == [[1.0, 1.0], [2.0, 4.0], [3.0, 9.0]]
              and charts[0].get("x_scale") == "linear" and "2.0" in "".join(charts[0].get("x_tick_labels", []))
              and charts[1].get("type") == "bar"
              and [(e["label"], e["value"]) for e in charts[1]["elements"]] == [("a", 3.0), ("b", 5.0)],
              repr(charts)[:800])
        c = d.cell("fig, (a, b) = plt.subplots(1, 2)\nfig.suptitle('both')\n"
                   "a.pie([1, 3], labels=['x', 'y'])\nb.scatter([1, 2], [5, 6], label='pts')\n"
                   "b.set_ylabel('Speed (m/s)')\nplt.show()", timeout=60)
        res = (c.reply or {}).get("results") or []
        chart = (res[0].get("e2b/chart") or {}) if len(res) == 1 else {}
        parts = chart.get("elements") or [{}, {}]
        check("%s: two axes: a superchart of a pie (angles) and a scatter (points, unit)" % tag,
              chart.get("type") == "superchart" and chart.get("title") == "both"
              and parts[0].get("type") == "pie"
              and [(e["label"], e["angle"]) for e in parts[0]["elements"]] == [("x", 90.0), ("y", 270.0)]
              and parts[1].get("type") == "scatter" and parts[1]["elements"][0]["label"] == "pts"
              and parts[1]["elements"][0]["points"] == [[1.0, 5.0], [2.0, 6.0]]
              and parts[1].get("y_unit") == "m/s" and c.err == "", repr(c)[:800])
        c = d.cell("import matplotlib.pyplot as plt\nlen(plt.get_fignums())", timeout=60)
        check("%s: the figures are closed after the cell" % tag, c.result == "0", repr(c))
        c = d.cell("fig, ax = plt.subplots()\nax.plot([0, 1])\nfig", timeout=60)
        res = (c.reply or {}).get("results") or []
        check("%s: a figure as the value: one main PNG result (not sent twice)" % tag,
              len(res) == 1 and res[0].get("is_main_result") is True
              and base64.b64decode(res[0].get("image/png", "")).startswith(b"\x89PNG"), repr(c)[:800])
        c = d.cell("import subprocess, sys\nsubprocess.run([sys.executable, '-c', "
                   "'import matplotlib.pyplot as p; p.plot([1]); p.savefig(\"c.png\"); print(p.get_backend())'],"
                   " capture_output=True, text=True).stdout.strip()", timeout=120)
        check("%s: a subprocess's matplotlib keeps its own backend" % tag,
              c.status == "ok" and c.result and "judge" not in c.result.lower()
              and os.path.exists(os.path.join(folder, "c.png")), repr(c))
    finally:
        d.close()


def child_pids(pid):
    """The children of pid (/proc/PID/task/*/children)."""
    out = []
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                out += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def extra_csharp(d, folder):
    c = d.cell("int x = ")
    check("csharp: a compile error is a CompilationError reply",
          c.status == "error" and c.error.get("name") == "CompilationError"
          and "error CS" in c.error.get("value", ""), repr(c))
    c = d.cell("var r = await Task.FromResult(5);")
    c = d.cell("r + 1")
    check("csharp: await, and its variable persists", c.result == "6", repr(c))
    c = d.cell("class K { public int V() => 3; }\nnew K().V()")
    check("csharp: a class and its value", c.result == "3", repr(c))
    c = d.cell("new K().V() * 10")
    check("csharp: the class persists", c.result == "30", repr(c))
    c = d.cell("new List<int> { 1, 2, 3 }.Select(v => v * 2).ToList()")
    check("csharp: a list is formatted", c.status == "ok" and "2, 4, 6" in (c.result or ""), repr(c))
    c = d.cell("System.Numerics.BigInteger.Pow(2, 70).ToString() + System.Text.Json.JsonSerializer.Serialize(new[] { 1 })")
    check("csharp: common framework assemblies are referenced (numerics, JSON)",
          c.result == '"1180591620717411303424[1]"', repr(c))
    c = d.cell("#r \"System.Data.Common.dll\"\nnew System.Data.DataTable(\"t\").TableName")
    check("csharp: #r adds another framework assembly by file name", c.result == '"t"', repr(c))
    c = d.cell("null")
    check("csharp: null is no result", c.status == "ok" and c.result is None, repr(c))
    c = d.cell("File.WriteAllText(\"made.txt\", \"x\"); File.Exists(\"made.txt\")")
    check("csharp: files are written in the session folder",
          c.result == "true" and os.path.exists(os.path.join(folder, "made.txt")), repr(c))
    c = d.cell("Console.ReadLine() == null")
    check("csharp: stdin is empty without input", c.result == "true", repr(c))
    c = d.cell("class Bad : Exception { public override string Message => throw new Exception(); "
               "public override string ToString() => throw new Exception(); }\nthrow new Bad();")
    check("csharp: an exception that cannot be shown still gets an error reply",
          c.status == "error" and c.error.get("name") == "Bad", repr(c))
    c = d.cell("class BadStr { public override string ToString() => throw new Exception(); }\nnew BadStr()")
    check("csharp: a result whose ToString throws still gets a reply", c.status == "ok" and c.result, repr(c))
    c = d.cell("var keep = Console.Out; Console.SetOut(new StreamWriter(new MemoryStream()));\n"
               "Console.Out.Dispose(); 1")
    c2 = d.cell("Console.SetOut(keep); Console.WriteLine(\"back\"); 2")
    check("csharp: a disposed Console.Out of the user's own does not stop the driver",
          c.status is not None and c2.result == "2" and c2.out == "back\n", "%r %r" % (c, c2))
    c = d.cell("int.Parse(\"zz\")")
    check("csharp: a framework exception is its type name and message",
          c.error.get("name") == "FormatException" and "cell-" in c.error.get("traceback", ""), repr(c))
    d.begin("while (true) {}")
    time.sleep(1.0)
    d.interrupt()
    try:
        c = d.wait(timeout=1.5)
        ok = c.reply is not None and c.status == "error"
        why = repr(c)
    except DriverError as e:
        # PROTOCOL.md: a driver that cannot stop the cell does not reply; the host kills it
        ok, why = True, ""
    check("csharp: SIGINT of a busy loop: an error reply or none (the host restarts it)", ok, why)


for lang in langs:
    if lang not in CASES:
        report("failed", "%s: no cases for this language" % lang)
        continue
    try:
        run_lang(lang)
    except Exception as e:  # a broken driver fails its language, not the suite
        report("failed", "%s: %s: %s" % (lang, type(e).__name__, e))

print("%(passed)d passed, %(failed)d failed, %(skipped)d skipped" % counts)
sys.exit(1 if counts["failed"] else 0)
PY
