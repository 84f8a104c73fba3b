#!/usr/bin/env bash
# soak: the short soak of issue 29 in CI: tests/bench/soak.sh (`make soak`) for
# 20 s of load, with its worker SIGKILL and PostgreSQL restart, checking only
# what does not depend on the machine's speed: no submission lost, the killed
# worker's folder reclaimed, nothing left after the stop, both faults done and
# the service answering after each, SSE readers got events. Its durations and
# RSS are printed, never checked (a shared, noisy machine): those are the
# bench's, run long with SOAK_S=1800 make soak.
cd "$(dirname "$0")/../.." || exit 1
if [ "$(id -u)" != 0 ]; then
	source tests/lib.sh
	fail "run as root" "the worker's sandboxes need root"
	finish
	exit
fi
SOAK_S=${SOAK_S:-20} IDLE_S=${IDLE_S:-5} exec bash tests/bench/soak.sh "${JUDGE:-bin/judge}"
