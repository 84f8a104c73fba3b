#!/usr/bin/env python3
"""doctest.py: runs the shell examples of Markdown files and checks the answers
they show (tests/integration/docs_examples.sh starts the service first).

Usage:
    python3 tests/integration/lib/doctest.py --workdir DIR --port P [--timeout S] FILE.md...

What runs. Every fenced block whose info string is sh, bash, shell or console,
in the order of the file, in one bash process per file whose working folder is
DIR (a folder laid out like the checkout, where the service runs as `make run`
starts it): variables set in one block are there in the next. The one change
made to the text: the README's address 127.0.0.1:8080 becomes 127.0.0.1:P (the
test's service cannot take 8080, which a `make run` on the machine may hold).

What is not run. A block whose last non-blank line before its fence is an HTML
comment `<!-- not run: WHY -->` is counted as a skip, with WHY. Blocks of any
other language (json, text ...) are text, not examples.

What is checked. A block is cut into steps at its answer comments: the
commands since the last answer (or the block's start), then the answer shown.
  - `# {...}` or `# [...]`: a JSON answer. It may go on over the next comment
    lines until its brackets close. The step's output (its last JSON value,
    when it prints several) must match it field by field: every field shown
    must be there with a matching value, and a `...` in an object or a list
    stands for more fields or elements (without one, nothing more may be
    there; list elements shown with `...` may come in any order). A string
    "..." matches any value; a string ending in "..." ("jk_...") any string
    that starts with what comes before.
  - `#> TEXT`: one line of the output (blank lines of the output are not
    compared); `#> ...` matches any number of lines. A line whose expected
    text holds a `{` is compared as its text up to the `{`, then JSON as above.
  - Every step must exit 0 (the status of its last command).
A step without an answer still runs and must exit 0. Each step and each
answer prints one line: "ok   docs: FILE:LINE: what" or "FAIL ..." or "skip
...", and the last line is "= PASSED FAILED SKIPPED".
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

SHELL_LANGS = {"sh", "bash", "shell", "console"}
NOT_RUN = re.compile(r"^<!--\s*not run:\s*(.*?)\s*-->$")
MORE = "\u2026more\u2026"  # stands for `...` in an expected JSON value
ADDRESS = "127.0.0.1:8080"


class Block:
    def __init__(self, path, line, lang, lines, skip):
        self.path, self.line, self.lang, self.lines, self.skip = path, line, lang, lines, skip


def blocks_of(path):
    """The fenced code blocks of a Markdown file: (first line number, info, lines, skip reason)."""
    out = []
    with open(path, encoding="utf-8") as f:
        text = f.read().split("\n")
    i = 0
    last_text = ""
    while i < len(text):
        m = re.match(r"^(\s*)(```+|~~~+)\s*([A-Za-z0-9_+-]*)", text[i])
        if not m:
            if text[i].strip():
                last_text = text[i].strip()
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        start = i + 1
        i += 1
        body = []
        while i < len(text) and not text[i].strip().startswith(fence):
            body.append(text[i][len(indent):] if text[i].startswith(indent) else text[i])
            i += 1
        i += 1  # the closing fence
        nr = NOT_RUN.match(last_text)
        out.append(Block(path, start + 1, lang, body, nr.group(1) if nr else None))
        last_text = ""
    return out


def comment_text(line):
    """The text of a full-line comment (`# x` -> `x`), or None."""
    s = line.strip()
    if not s.startswith("#") or s.startswith("#!"):
        return None
    return s[1:][1:] if s[1:].startswith(" ") else s[1:]


def balanced(text):
    """True when the brackets of text (outside strings) close."""
    depth, in_str, esc = 0, False, False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return depth <= 0


class Step:
    def __init__(self, block, line, code):
        self.block, self.line, self.code = block, line, code
        self.answer = None  # ("json", text) or ("text", [lines])
        self.answer_line = None


def steps_of(block):
    """Cuts a block into steps at its answers."""
    steps = []
    code, code_line = [], None
    lines = block.lines
    i = 0
    while i < len(lines):
        line = lines[i]
        c = comment_text(line)
        if c is not None and (c.startswith("{") or c.startswith("[")):
            # a JSON answer, maybe over several comment lines
            first = i
            text = c
            while not balanced(text) and i + 1 < len(lines) and comment_text(lines[i + 1]) is not None:
                i += 1
                text += "\n" + comment_text(lines[i])
            st = Step(block, block.line + (code_line if code_line is not None else first), "\n".join(code))
            st.answer, st.answer_line = ("json", text), block.line + first
            steps.append(st)
            code, code_line = [], None
        elif line.strip().startswith("#>"):
            first = i
            want = []
            while i < len(lines) and lines[i].strip().startswith("#>"):
                t = lines[i].strip()[2:]
                want.append(t[1:] if t.startswith(" ") else t)
                i += 1
            i -= 1
            st = Step(block, block.line + (code_line if code_line is not None else first), "\n".join(code))
            st.answer, st.answer_line = ("text", want), block.line + first
            steps.append(st)
            code, code_line = [], None
        else:
            if line.strip() and code_line is None and c is None:
                code_line = i
            code.append(line)
        i += 1
    if any(l.strip() and comment_text(l) is None for l in code):
        steps.append(Step(block, block.line + (code_line or 0), "\n".join(code)))
    return steps


# ---- expected JSON with `...` ----

def parse_expected(text):
    """Parses an expected JSON value in which a bare `...` (outside strings)
    stands for more fields or elements."""
    out, stack, i, in_str, esc = [], [], 0, False, False
    while i < len(text):
        ch = text[i]
        if in_str:
            out.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            i += 1
            continue
        if ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]":
            stack.pop() if stack else None
        if text.startswith("...", i):
            if stack and stack[-1] == "{":
                out.append(json.dumps(MORE) + ": true")
            else:
                out.append(json.dumps(MORE))
            i += 3
            continue
        out.append(ch)
        i += 1
    return json.loads("".join(out))


def match(want, got, where="$"):
    """None when got matches want, else why not."""
    if isinstance(want, str) and want == "...":
        return None
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return "%s: want an object, got %s" % (where, json.dumps(got)[:200])
        more = MORE in want
        for k, v in want.items():
            if k == MORE:
                continue
            if k not in got:
                return "%s: no field %r (fields: %s)" % (where, k, ", ".join(got)[:300])
            why = match(v, got[k], "%s.%s" % (where, k))
            if why:
                return why
        extra = [k for k in got if k not in want]
        if extra and not more:
            return "%s: fields not shown (and no ...): %s" % (where, ", ".join(extra))
        return None
    if isinstance(want, list):
        if not isinstance(got, list):
            return "%s: want a list, got %s" % (where, json.dumps(got)[:200])
        items = [w for w in want if w != MORE]
        if MORE not in want:
            if len(items) != len(got):
                return "%s: want %d elements, got %d" % (where, len(items), len(got))
            for n, (w, g) in enumerate(zip(items, got)):
                why = match(w, g, "%s[%d]" % (where, n))
                if why:
                    return why
            return None
        left = list(got)
        for n, w in enumerate(items):
            hit = next((g for g in left if match(w, g) is None), None)
            if hit is None:
                return "%s: no element matches %s in %s" % (where, json.dumps(w)[:200], json.dumps(got)[:300])
            left.remove(hit)
        return None
    if isinstance(want, str) and want.endswith("...") and len(want) > 3:
        if isinstance(got, str) and got.startswith(want[:-3]):
            return None
        return "%s: want a string starting %r, got %s" % (where, want[:-3], json.dumps(got)[:200])
    if isinstance(want, bool) or isinstance(got, bool) or want is None or got is None:
        return None if want is got or want == got and type(want) is type(got) else \
            "%s: want %s, got %s" % (where, json.dumps(want), json.dumps(got)[:200])
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return None if want == got else "%s: want %s, got %s" % (where, want, got)
    return None if want == got else "%s: want %s, got %s" % (where, json.dumps(want), json.dumps(got)[:300])


def json_values(text):
    """The JSON values printed one after another in text."""
    dec, i, out = json.JSONDecoder(), 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        v, i = dec.raw_decode(text, i)
        out.append(v)


def match_text(want, got_text):
    """None when the output's non-blank lines match the expected lines."""
    got = [l for l in got_text.split("\n") if l.strip()]
    want = [w for w in want if w.strip()]

    def line_ok(w, g):
        if "{" in w:
            at = w.index("{")
            if not g.startswith(w[:at]):
                return False
            try:
                return match(parse_expected(w[at:]), json.loads(g[at:])) is None
            except ValueError:
                return False
        if w.endswith("...") and len(w) > 3:
            return g.startswith(w[:-3])
        return w == g

    def go(i, j):
        if i == len(want):
            return j == len(got)
        if want[i].strip() == "...":
            return any(go(i + 1, k) for k in range(j, len(got) + 1))
        return j < len(got) and line_ok(want[i], got[j]) and go(i + 1, j + 1)

    if go(0, 0):
        return None
    return "output does not match; got:\n" + "\n".join("    " + l for l in got[:40])


# ---- running ----

def run_file(path, workdir, port, timeout, counts, shown):
    blocks = [b for b in blocks_of(path) if b.lang in SHELL_LANGS]
    rel = os.path.relpath(path)
    if not blocks:
        return
    steps = []
    for b in blocks:
        if b.skip:
            report(counts, "skipped", "%s:%d: block not run" % (rel, b.line), b.skip)
            continue
        steps += steps_of(b)
    if not steps:
        return
    tmp = tempfile.mkdtemp(prefix="doctest-", dir=workdir)
    script = ["cd %s || exit 99" % sh_quote(workdir)]
    for n, st in enumerate(steps):
        seg = os.path.join(tmp, "step%d.sh" % n)
        with open(seg, "w") as f:
            f.write(st.code.replace(ADDRESS, "127.0.0.1:%d" % port) + "\n")
        out, err, rc = (os.path.join(tmp, "step%d.%s" % (n, x)) for x in ("out", "err", "rc"))
        # sourced: the step runs in this shell, so its variables stay for the next
        script.append("source %s >%s 2>%s </dev/null; echo $? >%s" % (seg, out, err, rc))
    runner = os.path.join(tmp, "run.sh")
    with open(runner, "w") as f:
        f.write("\n".join(script) + "\n")
    try:
        subprocess.run(["bash", runner], timeout=timeout, cwd=workdir)
    except subprocess.TimeoutExpired:
        pass
    for n, st in enumerate(steps):
        base = os.path.join(tmp, "step%d." % n)
        try:
            rc = int(open(base + "rc").read().strip())
        except (OSError, ValueError):
            report(counts, "failed", "%s:%d: step did not run (the file's %d s ran out?)" % (rel, st.line, timeout))
            continue
        out = open(base + "out", encoding="utf-8", errors="replace").read()
        err = open(base + "err", encoding="utf-8", errors="replace").read()
        what = first_command(st.code)
        if rc != 0:
            report(counts, "failed", "%s:%d: %s" % (rel, st.line, what),
                   "exit status %d; stderr: %s; stdout: %s" % (rc, err.strip()[-600:], out.strip()[-400:]))
            continue
        if st.answer is None:
            report(counts, "passed", "%s:%d: %s" % (rel, st.line, what))
            continue
        kind, want = st.answer
        if kind == "json":
            try:
                expected = parse_expected(want)
            except ValueError as e:
                report(counts, "failed", "%s:%d: the answer shown is not JSON (with ...)" % (rel, st.answer_line), str(e))
                continue
            try:
                values = json_values(out)
            except ValueError as e:
                values = None
                why = "the output is not JSON (%s): %s" % (e, out.strip()[:600])
            if values:
                why = match(expected, values[-1])
            elif values is not None:
                why = "no output (stderr: %s)" % err.strip()[-400:]
        else:
            why = match_text(want, out)
        report(counts, "failed" if why else "passed",
               "%s:%d: %s -> answer of line %d" % (rel, st.line, what, st.answer_line), why or "")
        if shown and why:
            print("    step:\n" + "\n".join("      " + l for l in st.code.split("\n")), flush=True)


def first_command(code):
    for l in code.split("\n"):
        s = l.strip()
        if s and not s.startswith("#"):
            return s[:90]
    return "(comments only)"


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def report(counts, kind, name, why=""):
    counts[kind] += 1
    tag = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}[kind]
    print("%s docs: %s%s" % (tag, name, " -- " + why if why else ""), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--timeout", type=int, default=1200, help="seconds for all steps of one file")
    ap.add_argument("--show", action="store_true", help="print a failed step's commands")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for path in a.files:
        run_file(path, os.path.abspath(a.workdir), a.port, a.timeout, counts, a.show)
    print("= %d %d %d" % (counts["passed"], counts["failed"], counts["skipped"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
