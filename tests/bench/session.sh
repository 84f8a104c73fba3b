#!/usr/bin/env bash
# tests/bench/session.sh: what a session costs at the runner level, per backend:
# creating one (sandbox_open + session_start) from the start pool and cold, and a
# trivial cell (`1 + 1`, the driver's reply read), medians (session_bench.c calls
# the runner directly: no HTTP, no database). Targets (issue 11, whole API): create
# p50 <= 60 ms; a trivial cell p50 <= 15 ms in gVisor, <= 8 ms native.
# Env: N sessions (default 10), M cells each (default 20), BUILD, BACKENDS, LANGS.
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
N=${N:-10}
M=${M:-20}
BACKENDS=${BACKENDS:-native gvisor}
LANGS=${LANGS:-python bash}
out=$(mktemp -d /tmp/judge-bench-session.XXXXXX)
trap 'rm -rf "$out"' EXIT

make -s all >/dev/null || exit 1
objs=$(ls "$BUILD"/common/*.o "$BUILD"/judge/*/*.o "$BUILD"/runner/*.o "$BUILD"/runner/*/*.o "$BUILD"/gen/*.o 2>/dev/null | grep -v "/judge/cli/main\.o$")
PKGS="libpq libmicrohttpd libcjson libseccomp libpcre2-8 yaml-0.1 libcurl"
libs=$(pkg-config --libs $PKGS 2>/dev/null || echo -lpq -lmicrohttpd -lcjson -lseccomp -lpcre2-8 -lyaml -lcurl)
gcc -std=gnu11 -O2 -pthread -fPIE -pie -I. -I/usr/include/postgresql -I/usr/include/cjson \
	-o "$out/session_bench" tests/bench/session_bench.c $objs $libs -lm || exit 1
for b in $BACKENDS; do
	for l in $LANGS; do
		JUDGE_BOX_INIT=$PWD/bin/box_init "$out/session_bench" "$b" "$N" "$M" pooled "$l" ||
			echo "$b $l: benchmark failed" >&2
	done
	JUDGE_BOX_INIT=$PWD/bin/box_init "$out/session_bench" "$b" $(((N + 1) / 2)) "$M" cold python ||
		echo "$b cold: benchmark failed" >&2
done
