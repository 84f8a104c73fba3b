#!/usr/bin/env bash
# tests/bench/forks.sh: gVisor's floor for a warm Python run (docs/warm-start.md,
# "gVisor's floor"): under gVisor (`runsc do`, ptrace as the judge runs it) fork +
# _exit and fork + hello from a Python holding the zygote's modules
# (forks/python_fork.py) against fresh `python3 main.py` in the same kind of sandbox.
# The machine's CPU per run (/proc/stat: keep the machine otherwise idle), a
# sandbox's own start (`runsc do true`) subtracted. Not the judge: the interpreter
# alone, in one run. Env: N (default 200).
cd "$(dirname "$0")" || exit 1
N=${N:-200}
PY=/opt/judge/runtimes/python3.12/bin/python3.12
TMP=$(mktemp -d /tmp/judge-forks.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
echo 'print("hello")' >"$TMP/main.py"
cp forks/python_fork.py "$TMP/"
chmod -R a+rX "$TMP"
machine_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
machine_ms() {
	local a b
	a=$(machine_ticks)
	"$@" >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err" >&2; return 1; }
	b=$(machine_ticks)
	echo $(((b - a) * 1000 / $(getconf CLK_TCK)))
}
per() { awk -v t="$1" -v n="$2" 'BEGIN {printf "%.1f", t / n}'; }

RUNSC=(runsc --platform=ptrace --network=none --ignore-cgroups do)
base=$(machine_ms "${RUNSC[@]}" true) || exit 1
fresh=$(machine_ms "${RUNSC[@]}" sh -c "for i in \$(seq $N); do $PY $TMP/main.py; done") || exit 1
fexit=$(machine_ms "${RUNSC[@]}" "$PY" "$TMP/python_fork.py" "$N" exit) || exit 1
fhello=$(machine_ms "${RUNSC[@]}" "$PY" "$TMP/python_fork.py" "$N" hello) || exit 1
echo "python under gVisor (runsc do, ptrace; N=$N), the machine's CPU per run, a sandbox's start ($base ms) subtracted:"
echo "  fresh python3 main.py $(per $((fresh - base)) "$N") ms; fork + _exit $(per $((fexit - base)) "$N") ms;" \
	"fork + hello $(per $((fhello - base)) "$N") ms"
