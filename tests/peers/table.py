#!/usr/bin/env python3
"""tests/peers/table.py: the comparison table of tests/peers/compare.sh.

Reads the lines `judge verify` printed (prefixed with the side, kattis or
domjudge, and a tab), the list of host-specific cases, and optionally
problemtools' verdicts (tests/peers/problemtools.sh), and prints a Markdown
table: package, submission, language, expected, ours, problemtools, agree?.
The last line holds the counts; exits 1 when a submission that ran disagrees
and is not a listed host-specific case.

    table.py VERIFY_TXT HOST_SPECIFIC_TXT [PROBLEMTOOLS_TXT]
"""
import re
import sys

# "ok   hello accepted/x.c (c): accepted, 5 ms [expected accepted]"
OK = re.compile(r"^ok   (\S+) (.+?) \((\w+)\): (\w+)(?:, score [^,]+)?, \d+ ms \[expected (.*)\]$")
# "FAIL hello wrong_answer/x.c (c): got timeout (...), expected wrong_answer"
FAIL = re.compile(r"^FAIL (\S+) (.+?) \((\w+)\): (.*)$")
# "skip hello accepted/X.java: language java is not supported by the judge"
SKIP = re.compile(r"^skip (\S+) (.+?): (.*)$")


def load_host_specific(path):
    """package/submission -> why, from `side/package/submission  why` lines."""
    cases = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, _, why = line.partition(" ")
            cases[key] = why.strip()
    return cases


def load_problemtools(path):
    """side/package/submission -> problemtools' verdict, from `key verdict` lines."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2:
                    out[parts[0]] = parts[1]
    except OSError:
        pass
    return out


def main():
    verify, host_path = sys.argv[1], sys.argv[2]
    host = load_host_specific(host_path)
    pt = load_problemtools(sys.argv[3]) if len(sys.argv) > 3 else {}
    rows = []
    n = {"agree": 0, "disagree": 0, "host-specific": 0, "not run": 0}
    with open(verify) as f:
        for raw in f:
            side, _, line = raw.rstrip("\n").partition("\t")
            m = OK.match(line)
            if m:
                pkg, sub, lang, ours, want = m.groups()
                key = f"{side}/{pkg}/{sub}"
                rows.append((side, pkg, sub, lang, want, ours, pt.get(key, ""), "yes"))
                n["agree"] += 1
                continue
            m = FAIL.match(line)
            if m and " " in m.group(2) and m.group(2).startswith("/"):
                m = None  # a package that failed to load: not a submission line
            if m:
                pkg, sub, lang, why = m.groups()
                key = f"{side}/{pkg}/{sub}"
                got = re.match(r"got (\w+)", why)
                exp = re.search(r"expected (.*)$", why)
                verdict = "host-specific" if key in host else "NO"
                rows.append((side, pkg, sub, lang, exp.group(1) if exp else "?",
                             got.group(1) if got else why, pt.get(key, ""),
                             verdict + (f": {host[key]}" if key in host else "")))
                n["host-specific" if key in host else "disagree"] += 1
                continue
            m = SKIP.match(line)
            if m and "/" in m.group(2):
                pkg, sub, why = m.groups()
                key = f"{side}/{pkg}/{sub}"
                rows.append((side, pkg, sub, "", "", "not run", pt.get(key, ""), why))
                n["not run"] += 1
            elif line.startswith("FAIL "):
                rows.append((side, line[5:], "", "", "", "", "", "NO (package)"))
                n["disagree"] += 1
    print("| package | submission | language | expected | ours | problemtools | agree? |")
    print("|---|---|---|---|---|---|---|")
    for side, pkg, sub, lang, want, ours, ptv, agree in rows:
        print(f"| {side}/{pkg} | {sub} | {lang} | {want} | {ours} | {ptv} | {agree} |")
    print()
    print(f"{n['agree']} agree, {n['disagree']} disagree, {n['host-specific']} host-specific, "
          f"{n['not run']} not run")
    return 1 if n["disagree"] else 0


if __name__ == "__main__":
    sys.exit(main())
