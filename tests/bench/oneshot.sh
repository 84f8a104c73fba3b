#!/usr/bin/env bash
# tests/bench/oneshot.sh [BIN]: what one-shot `judge run` adds over bare Python (issue 9).
# Runs, interleaved, bare `python3.12 x.py` (x.py = print(1)) and `BIN run --sandbox B x.py`
# for each backend, N times each (default 15), one process each (no pool, no service), and
# prints the median wall times and the added ms against the targets: native <= +6 ms,
# gvisor <= +200 ms. A backend that cannot run here is reported and skipped.
# added_cpu_ms: CPU of the command and of what it waited for (native rows only).
# Env: N; BACKENDS (default "native gvisor"); BASE=DIR also measures DIR/bin/judge run
# (a build of another commit, run from DIR with its own judge.ini and languages/),
# interleaved with the rest, as the rows base-native and base-gvisor: a before/after
# under the same load, which on a shared machine says more than two separate runs.
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

# CPU_US = CPU microseconds (user + system) of the shell's waited-for children so
# far; no subshell or fork (they would count themselves)
tus() { # "0m0.012s" -> microseconds, into T_US
	local m=${1%%m*} s=${1#*m}
	s=${s%s}
	T_US=$(((10#$m * 60 + 10#${s%.*}) * 1000000 + 10#${s#*.} * 1000))
}
child_cpu() {
	local a b
	times >"$out/times"
	{
		read -r _
		read -r a b
	} <"$out/times"
	tus "$a"
	CPU_US=$T_US
	tus "$b"
	CPU_US=$((CPU_US + T_US))
}

# "WALL CPU" microseconds of one command (its output discarded), or "fail". CPU is
# that of the command and the descendants it waited for (with `judge run`: the
# sandbox and the program): on a busy machine it moves much less than wall time.
us() {
	local t0 t1 c0
	child_cpu
	c0=$CPU_US
	t0=${EPOCHREALTIME/[.,]/}
	"$@" >"$out/last" 2>&1 || {
		echo fail
		return
	}
	t1=${EPOCHREALTIME/[.,]/}
	child_cpu
	echo "$((t1 - t0)) $((CPU_US - c0))"
}
base_run() { (cd "$BASE" && bin/judge run "$@"); }

# median of column $1 of the lines on stdin
median() { awk -v c="$1" '{print $c}' | sort -n | awk '{a[NR] = $1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo "one-shot benchmark: N=$N, bare $PY x.py vs $BIN run --sandbox B x.py (x.py = print(1));" \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
rows=""
for b in $BACKENDS; do
	if "$BIN" run --sandbox "$b" "$out/x.py" >"$out/probe" 2>&1 && grep -q '"status":[[:space:]]*"completed"' "$out/probe"; then
		rows="$rows $b"
		[ -n "$BASE" ] && rows="$rows base-$b"
	else
		echo "$b: SKIPPED: judge run --sandbox $b x.py did not complete: $(head -c 300 "$out/probe")" >&2
	fi
done
: >"$out/bare"
for r in $rows; do : >"$out/$r"; done
for _ in $(seq "$N"); do
	us "$PY" "$out/x.py" >>"$out/bare"
	for r in $rows; do
		case $r in
		base-*) us base_run --sandbox "${r#base-}" "$out/x.py" >>"$out/$r" ;;
		*) us "$BIN" run --sandbox "$r" "$out/x.py" >>"$out/$r" ;;
		esac
	done
done
bare=$(grep -v fail "$out/bare" | median 1)
bare_cpu=$(grep -v fail "$out/bare" | median 2)
printf '\n%-12s %5s %10s %12s %10s %13s  %s\n' row runs bare_ms judge_run_ms added_ms added_cpu_ms target
for r in $rows; do
	fails=$(grep -c fail "$out/$r")
	med=$(grep -v fail "$out/$r" | median 1)
	cpu=$(grep -v fail "$out/$r" | median 2)
	case $r in
	native) target=6 ;;
	gvisor) target=200 ;;
	*) target=0 ;;
	esac
	awk -v r="$r" -v n="$N" -v bare="$bare" -v med="$med" -v t="$target" -v f="$fails" \
		-v cpu="$cpu" -v bcpu="$bare_cpu" 'BEGIN {
		added = (med - bare) / 1000
		verdict = t == 0 ? "reference" : (added <= t ? sprintf("ok (<= +%d ms)", t) : sprintf("MISSED (<= +%d ms)", t))
		if (f > 0) verdict = verdict sprintf(", %d runs failed", f)
		# gvisor: the sandbox processes are reaped by the teardown child, after the
		# command exits, so the command waits for none of them: no CPU to show
		c = r ~ /gvisor/ ? "-" : sprintf("%.1f", (cpu - bcpu) / 1000)
		printf "%-12s %5d %10.1f %12.1f %10.1f %13s  %s\n", r, n, bare / 1000, med / 1000, added, c, verdict
	}'
done
