#!/usr/bin/env bash
# bench/soak.sh BIN: a bounded soak of the whole service (`make soak`): a
# private PostgreSQL, serve and one native worker (tests/svc.sh), three API
# keys driven by tests/bench/soak.py: a loud key keeping bulk submissions
# queued and sending interactive executes back to back, a quiet key sending
# one bulk submission and one execute a second (alone for IDLE_S seconds
# first: its baseline), and a key opening sessions and running cells.
# Reports, as numbers and ratios (it asserts no duration):
# - per key and phase: count, p50/p99 end to end, errors by status, per second
#   under load; the quiet key's bulk queue wait (started - created) p50/p99;
# - the quiet key's loaded p99 over its idle p50;
# - the fair queue's view: /metrics judge_queue_wait_seconds per key;
# - RSS of serve, the worker and PostgreSQL every 5 s: start, end, most, and
#   serve's end / start (flat is ~1).
# Env: SOAK_S (seconds of load, default 60: the short run; a long one is e.g.
# SOAK_S=1800), IDLE_S (default 10), WORKER_SLOTS (default 2).
cd "$(dirname "$0")/../.." || exit 1
export JUDGE=${1:-bin/judge}
source tests/lib.sh
source tests/svc.sh
SOAK_S=${SOAK_S:-60}
IDLE_S=${IDLE_S:-10}
PY=/opt/judge/runtimes/python3.12/bin/python3.12
[ -x "$PY" ] || PY=python3

svc_up soak-loud "[sandbox]" "sandbox = native" "[worker]" "worker_slots = ${WORKER_SLOTS:-2}"
QUIET=$("$JUDGE" --config "$ini" keys create --name soak-quiet 2>/dev/null)
SKEY=$("$JUDGE" --config "$ini" keys create --name soak-sessions 2>/dev/null)
[ -n "$QUIET" ] && [ -n "$SKEY" ] || { fail "keys"; finish; exit 1; }

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
# PostgreSQL: the postmaster and its backends
pg_rss() {
	local pm t=0 p
	pm=$(head -1 "$SVC_TMP/pg/data/postmaster.pid" 2>/dev/null) || { echo 0; return; }
	for p in "$pm" $(pgrep -P "$pm"); do t=$((t + $(rss "$p"))); done
	echo "$t"
}
sample() { echo "$(date +%s) $(rss "$SVC_SERVE_PID") $(rss "$SVC_WORKER_PID") $(pg_rss)"; }
RSS=$SVC_TMP/rss
sample >"$RSS"
(while sleep 5; do sample >>"$RSS"; done) &
SAMPLER=$!

echo "soak: ${IDLE_S} s quiet key alone, then ${SOAK_S} s of load (SOAK_S=... for longer)"
OUT=$("$PY" tests/bench/soak.py "$U" "$KEY" "$QUIET" "$SKEY" "$IDLE_S" "$SOAK_S")
kill "$SAMPLER" 2>/dev/null
wait "$SAMPLER" 2>/dev/null
sample >>"$RSS"

if ! jq -e . >/dev/null 2>&1 <<<"$OUT"; then
	fail "the load ran" "$(head -c 400 <<<"$OUT")"
	finish
	exit 1
fi
pass "the load ran"
printf '%-14s %-5s %6s %9s %9s %8s %14s %14s  %s\n' who phase n p50_ms p99_ms per_s qwait_p50_ms qwait_p99_ms errors
jq -r '.rows[] | [.who, .phase, .n, (.p50_ms // "-"), (.p99_ms // "-"), (.per_s // "-"),
	(.queue_wait_p50_ms // "-"), (.queue_wait_p99_ms // "-"), (.errors | tostring)] | @tsv' <<<"$OUT" |
	while IFS=$'\t' read -r a b c d e f g h i; do
		printf '%-14s %-5s %6s %9s %9s %8s %14s %14s  %s\n' "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$h" "$i"
	done
echo "ratios: $(jq -c .ratios <<<"$OUT")"
echo "queue wait per key (/metrics, the last 10 minutes):"
curl -s -m 10 "$U/metrics" | grep -E '^judge_queue_wait_seconds\{.*quantile="0.99"' | sed 's/^/  /'
awk 'NR == 1 { t0 = $1; s0 = $2; w0 = $3; p0 = $4 }
	{ if ($2 > sm) sm = $2; if ($3 > wm) wm = $3; if ($4 > pm) pm = $4; t = $1; s = $2; w = $3; p = $4 }
	END {
		printf "RSS (KiB) over %d s: serve %d -> %d (most %d, end/start %.2f); worker %d -> %d (most %d); postgres %d -> %d (most %d)\n",
			t - t0, s0, s, sm, s0 ? s / s0 : 0, w0, w, wm, p0, p, pm
	}' "$RSS"
echo "RSS over time (s, serve, worker, postgres KiB; at most 13 samples):"
awk -v n="$(wc -l <"$RSS")" 'NR == 1 { t0 = $1 } (NR - 1) % int((n + 11) / 12) == 0 || NR == n {
	printf "  %5d %8d %8d %8d\n", $1 - t0, $2, $3, $4 }' "$RSS"
svc_log_clean "$SVC_TMP/serve.log"
finish
