#!/usr/bin/env bash
# tests/bench/oneshot.sh [BIN]: what one-shot `judge run` adds over bare Python (issue 9).
# Runs, interleaved, bare `python3.12 x.py` (x.py = print(1)) and `BIN run --sandbox B x.py`
# for each backend, N times each (default 15), one process each (no pool, no service), and
# prints the median wall times and the added ms against the targets: native <= +6 ms,
# gvisor <= +200 ms. A backend that cannot run here is reported and skipped.
# Env: N, BACKENDS (default "native gvisor").
cd "$(dirname "$0")/../.." || exit 1
BIN=${1:-bin/judge}
N=${N:-15}
BACKENDS=${BACKENDS:-native gvisor}
PY=/opt/judge/runtimes/python3.12/bin/python3.12
if [ ! -x "$PY" ]; then
	echo "oneshot benchmark: SKIPPED: $PY is missing (make deps)" >&2
	exit 0
fi
out=$(mktemp -d /tmp/judge-bench-oneshot.XXXXXX)
trap 'rm -rf "$out"' EXIT
echo 'print(1)' >"$out/x.py"

# wall ms of one command, its output discarded; "fail" when it failed
ms() {
	local t0 t1
	t0=${EPOCHREALTIME/[.,]/}
	"$@" >"$out/last" 2>&1 || {
		echo fail
		return
	}
	t1=${EPOCHREALTIME/[.,]/}
	echo $((t1 - t0))
}

median() { sort -n | awk '{a[NR] = $1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo "one-shot benchmark: N=$N, bare $PY x.py vs $BIN run --sandbox B x.py (x.py = print(1)); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
usable=""
for b in $BACKENDS; do
	if "$BIN" run --sandbox "$b" "$out/x.py" >"$out/probe" 2>&1 && grep -q '"status":[[:space:]]*"completed"' "$out/probe"; then
		usable="$usable $b"
	else
		echo "$b: SKIPPED: judge run --sandbox $b x.py did not complete: $(head -c 300 "$out/probe")" >&2
	fi
done
: >"$out/bare"
for b in $usable; do : >"$out/$b"; done
for _ in $(seq "$N"); do
	ms "$PY" "$out/x.py" >>"$out/bare"
	for b in $usable; do
		ms "$BIN" run --sandbox "$b" "$out/x.py" >>"$out/$b"
	done
done
# microseconds to ms with one decimal
bare=$(grep -v fail "$out/bare" | median)
printf '\n%-8s %5s %10s %12s %10s  %s\n' backend runs bare_ms judge_run_ms added_ms target
for b in $usable; do
	fails=$(grep -c fail "$out/$b")
	med=$(grep -v fail "$out/$b" | median)
	case $b in
	native) target=6 ;;
	gvisor) target=200 ;;
	*) target=0 ;;
	esac
	awk -v b="$b" -v n="$N" -v bare="$bare" -v med="$med" -v t="$target" -v f="$fails" 'BEGIN {
		added = (med - bare) / 1000
		verdict = t == 0 ? "reference" : (added <= t ? sprintf("ok (<= +%d ms)", t) : sprintf("MISSED (<= +%d ms)", t))
		if (f > 0) verdict = verdict sprintf(", %d runs failed", f)
		printf "%-8s %5d %10.1f %12.1f %10.1f  %s\n", b, n, bare / 1000, med / 1000, added, verdict
	}'
done
