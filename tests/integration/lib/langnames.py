#!/usr/bin/env python3
"""langnames.py: finds language names in C code (tests/integration/layers.sh).

Facts about a language live in languages/, not in C (docs/ARCHITECTURE.md,
"Add a language"). This prints every place in the given C files where a
language name is used as data or to decide something, one line each
(file:line: what: token), and exits 1 when there is any:

- a string literal that is a language's name: its `name` or file name, an
  alias, its Piston name or aliases, or a language of the package format's
  table (languages/problem/languages.ini), compared without case ("python",
  "C#", "java");
- a string literal holding a name or alias of ours (3 letters or more) as a
  word ("supported in python and node"): a list of languages written in C;
- an identifier with a name or alias of ours as one of its _-separated parts
  (harness_cpp, PKG_DIR_PYTHON, o->python), except "c" and "node", which are
  ordinary words of C code (a variable, a list node).

Not flagged: comments, which may name languages; a literal that is a media
type ("text/x-python", "text/javascript; charset=utf-8"), which names a file
format; a line whose comment holds "lang-ok:" and says why the word there is
no language (a JSON key "c").

usage: langnames.py LANGUAGES_DIR FILE...
"""
import glob
import os
import re
import sys

IDENT_COMMON = {"c", "node"}
MEDIA_TYPE = re.compile(r"^[a-z]+/[A-Za-z0-9.+-]+(;.*)?$")
TOKEN = re.compile(
    r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[A-Za-z_][A-Za-z0-9_]*|\n|.',
    re.S,
)
WORD = re.compile(r"[A-Za-z0-9_+#]+")


def ini_values(path, keys):
    """The values of keys in an ini file (no sections), split on blanks."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*([A-Za-z_0-9]+)\s*=\s*(.*?)\s*$", line)
            if m and m.group(1) in keys:
                out += m.group(2).split()
    return out


def names_of(langdir):
    ours, others = set(), set()
    for path in glob.glob(os.path.join(langdir, "*.ini")):
        ours.add(os.path.basename(path)[:-4].lower())
        ours.update(w.lower() for w in ini_values(path, {"name", "aliases"}))
        others.update(w.lower() for w in ini_values(path, {"piston_language", "piston_aliases"}))
    table = os.path.join(langdir, "problem", "languages.ini")
    if os.path.exists(table):
        with open(table, encoding="utf-8") as f:
            others.update(m.group(1).lower() for m in re.finditer(r"^\[([^\]]+)\]", f.read(), re.M))
    return ours, ours | others


def scan(path, ours, every):
    hits = []
    with open(path, encoding="utf-8", errors="replace") as f:
        src = f.read()
    ok_lines = {i + 1 for i, text in enumerate(src.split("\n")) if "lang-ok:" in text}
    line = 1
    for m in TOKEN.finditer(src):
        tok = m.group(0)
        at = line
        line += tok.count("\n")
        if at in ok_lines:
            continue
        if tok.startswith('"'):
            text = tok[1:-1]
            if MEDIA_TYPE.match(text):
                continue
            if text.lower() in every:
                hits.append((at, "string literal", tok))
                continue
            for w in WORD.findall(text):
                if w in ours and len(w) >= 3:
                    hits.append((at, "name in a string literal", w))
        elif tok[0].isalpha() or tok[0] == "_":
            for part in tok.lower().split("_"):
                if part in ours and part not in IDENT_COMMON:
                    hits.append((at, "identifier", tok))
                    break
    return ["%s:%d: %s: %s" % (path, at, what, t) for at, what, t in hits]


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    ours, every = names_of(sys.argv[1])
    if not ours:
        print("no language files in %s" % sys.argv[1], file=sys.stderr)
        return 2
    hits = []
    for path in sys.argv[2:]:
        hits += scan(path, ours, every)
    for h in hits:
        print(h)
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main())
