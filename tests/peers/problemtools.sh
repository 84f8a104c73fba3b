#!/usr/bin/env bash
# tests/peers/problemtools.sh: runs Kattis problemtools' own verifyproblem
# (submissions part) on packages already copied by tests/peers/compare.sh and
# prints one line per submission: `kattis/<package>/<folder>/<name> <verdict>`
# (AC, WA, TLE, RTE, PAC, CE, or "-" when its language is not installed here).
#
#   tests/peers/problemtools.sh KATTIS OUT PACKAGE...
#
# KATTIS is the problemtools clone (work tree or bare folder); OUT the folder
# compare.sh filled (OUT/kattis/<package>). Needs python3 with PyYAML and
# pydantic >= 2 (problemtools' requirements), colorlog (Debian's
# python3-colorlog is found too), g++ and make. Two things are set up for this
# host and said here: problemtools' python3 is PyPy, absent here, so CPython
# (/usr/bin/python3) stands in; and nh3, which only sanitises rendered
# statements (not built by `-p submissions`), is a stand-in module.
set -u
KATTIS=$1
OUT=$2
shift 2
PT=$OUT/problemtools-src
mkdir -p "$PT" "$OUT/pydeps" "$OUT/ptconf/problemtools"
if [ -d "$KATTIS/problemtools" ]; then
	cp -a "$KATTIS/problemtools" "$KATTIS/support" "$PT/"
else
	git -C "$KATTIS" archive HEAD problemtools support | tar -x -C "$PT"
fi
make -s -C "$PT/support" >&2 || exit 1
if ! python3 -c 'import colorlog' 2>/dev/null; then
	[ -d /usr/lib/python3/dist-packages/colorlog ] || {
		echo "problemtools.sh: no colorlog (apt-get install python3-colorlog)" >&2
		exit 1
	}
	ln -sfn /usr/lib/python3/dist-packages/colorlog "$OUT/pydeps/colorlog"
fi
python3 -c 'import nh3' 2>/dev/null ||
	printf '# stand-in: nh3 only sanitises rendered statements, not built here\ndef clean(html, **kw):\n    return html\n' >"$OUT/pydeps/nh3.py"
cat >"$OUT/ptconf/problemtools/languages.yaml" <<'EOF'
# problemtools' python3 is PyPy, which this host lacks: CPython stands in
python3:
    compile: '/usr/bin/python3 -m py_compile {files}'
    run: '/usr/bin/python3 "{mainfile}"'
EOF
export PYTHONPATH=$PT:$OUT/pydeps XDG_CONFIG_HOME=$OUT/ptconf
for p in "$@"; do
	python3 -m problemtools.verifyproblem -p submissions -l info "$OUT/kattis/$p" 2>&1 |
		tee "$OUT/problemtools-$p.log" |
		python3 -c '
import re, sys
pkg = sys.argv[1]
folder = {"AC": "accepted", "PAC": "partially_accepted", "WA": "wrong_answer",
          "RTE": "run_time_error", "TLE": "time_limit_exceeded"}
for line in sys.stdin:
    m = re.search(r"\b(AC|PAC|WA|RTE|TLE) submission (\S+) \(.*?\) (?:OK(?: with extra time)?: (\w+)|got (\w+))", line)
    if m:
        acr, name, ok, got = m.groups()
        print(f"kattis/{pkg}/{folder[acr]}/{name} {ok or got}")
        continue
    m = re.search(r"Compile error for (AC|PAC|WA|RTE|TLE) submission (\S+) \(", line)
    if m:
        missing = "could not find compiler" in line or "is it installed" in line
        verdict = "-" if missing else "CE"
        print(f"kattis/{pkg}/{folder[m.group(1)]}/{m.group(2)} {verdict}")
' "$p"
done
