#!/usr/bin/env bash
# tests/bench/runner.sh [BIN]: the wall time each sandbox backend adds to one run,
# against bare execution of the same program measured in the same run (interleaved),
# median of N runs (default 30), for a C program that exits at once and for Python
# print(1). A small C driver (runner_bench.c) calls sandbox_run() directly, so no CLI
# process start-up is counted. Rows: native; gvisor with sandboxes started ahead of
# need (a pool; each run is a new submission, so it gets a fresh sandbox);
# gvisor-session (the runs after the first of one submission: its tests, which
# share its sandbox); gvisor-reuse (each run a new submission of one API key: the
# sandbox of the last one serves it, gvisor_reuse = key); gvisor cold (no pool, for
# reference, N/3 runs). Then the machine's CPU per Python print(1) submission
# (runsc, sentry, gofer and the driver, all reaped), each in a fresh sandbox and
# with reuse. Targets (issue 2): native adds <= 2.5 ms, gvisor <= 60 ms.
# Env: N, BUILD (object folder, default build), BACKENDS (default "native gvisor").
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
N=${N:-30}
BACKENDS=${BACKENDS:-native gvisor}
out=$(mktemp -d /tmp/judge-bench-runner.XXXXXX)
trap 'rm -rf "$out"' EXIT

make -s all >/dev/null || exit 1
objs=$(ls "$BUILD"/common/*.o "$BUILD"/judge/*/*.o "$BUILD"/runner/*.o "$BUILD"/runner/*/*.o "$BUILD"/gen/*.o 2>/dev/null | grep -v "/judge/cli/main\.o$")
PKGS="libpq libmicrohttpd libcjson libseccomp libpcre2-8 yaml-0.1 libcurl"
libs=$(pkg-config --libs $PKGS 2>/dev/null || echo -lpq -lmicrohttpd -lcjson -lseccomp -lpcre2-8 -lyaml -lcurl)
gcc -std=gnu11 -O2 -pthread -fPIE -pie -I. -I/usr/include/postgresql -o "$out/runner_bench" \
	tests/bench/runner_bench.c $objs $libs -lm || exit 1

printf 'int main(void) { return 0; }\n' >"$out/exit.c"
gcc -O2 -o "$out/exit" "$out/exit.c" || exit 1

# The judge's Python when installed; else the system's (the same binary for bare and
# sandboxed runs: pyenv's lives under /root, which no sandbox uid may read).
PY=/opt/judge/runtimes/python3.12/bin/python3
[ -x "$PY" ] || PY=/usr/bin/python3
echo "runner benchmark: N=$N, C program that exits at once, $PY -c 'print(1)'"

rows="$out/rows"
: >"$rows"
for b in $BACKENDS; do
	JUDGE_BOX_INIT=$PWD/bin/box_init "$out/runner_bench" "$b" "$N" "$out/exit" "$PY" >>"$rows" ||
		echo "$b: benchmark failed" >&2
	if [ "$b" = gvisor ]; then
		JUDGE_BOX_INIT=$PWD/bin/box_init "$out/runner_bench" gvisor "$N" "$out/exit" "$PY" session \
			>>"$rows" || echo "gvisor session: benchmark failed" >&2
		JUDGE_BOX_INIT=$PWD/bin/box_init "$out/runner_bench" gvisor "$N" "$out/exit" "$PY" reuse \
			>>"$rows" || echo "gvisor reuse: benchmark failed" >&2
		for m in cpu cpu-reuse; do
			JUDGE_BOX_INIT=$PWD/bin/box_init "$out/runner_bench" gvisor "$N" "$out/exit" "$PY" $m \
				>>"$out/cpu" || echo "gvisor $m: benchmark failed" >&2
		done
		nc=$((N / 3 < 10 ? 10 : N / 3))
		JUDGE_BOX_INIT=$PWD/bin/box_init "$out/runner_bench" gvisor "$nc" "$out/exit" "$PY" cold \
			>>"$rows" || echo "gvisor cold: benchmark failed" >&2
	fi
done

printf '\n%-14s %-13s %5s %10s %12s %10s %8s  %s\n' backend program runs bare_ms sandbox_ms added_ms ratio target
awk '{
	added = $5 - $4; ratio = $4 > 0 ? $5 / $4 : 0
	target = ""
	if ($1 == "native") target = (added <= 2.5 ? "ok (<= 2.5 ms)" : "MISSED (<= 2.5 ms)")
	if ($1 == "gvisor") target = (added <= 60 ? "ok (<= 60 ms)" : "MISSED (<= 60 ms)")
	if ($1 == "gvisor-cold" || $1 == "gvisor-session" || $1 == "gvisor-reuse") target = "reference"
	printf "%-14s %-13s %5d %10.2f %12.2f %10.2f %7.1fx  %s\n", $1, $2, $3, $4, $5, added, ratio, target
}' "$rows"
if [ -s "$out/cpu" ]; then
	printf '\n%-17s %-13s %5s %14s %14s\n' mode program runs cpu_ms_per_run wall_ms_per_run
	awk '{ printf "%-17s %-13s %5d %14.2f %14.2f\n", $1, $2, $3, $4, $5 }' "$out/cpu"
fi
