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
#   serve's end / start (flat is ~1);
# - SSE readers' streams, events and reconnects.
# Faults under load: at a third of it the worker is SIGKILLed and a new one
# started (as `judge up` restarts it), at two thirds PostgreSQL restarts (-m
# fast); after each, the seconds until an execute is answered again.
# Checks (pass/fail; none depends on the machine's speed): no submission lost
# (every one answered 201/202 reaches a final verdict within 180 s after the
# load), the killed worker's owner folder reclaimed by the next one, nothing
# left after a graceful stop of serve and the worker (mounts under this run's
# box_root, cgroups under its own cgroup parent, owner and box folders, runsc
# processes), both faults done and answered after, SSE readers got events.
# tests/integration/soak.sh runs it short in CI.
# Env: SOAK_S (seconds of load, default 60: the short run; a long one is e.g.
# SOAK_S=1800), IDLE_S (default 10), WORKER_SLOTS (default 2), SOAK_SANDBOX
# (default native; gvisor: runsc sandboxes, and runsc among the leftovers).
cd "$(dirname "$0")/../.." || exit 1
export JUDGE=${1:-bin/judge}
source tests/lib.sh
source tests/svc.sh
SOAK_S=${SOAK_S:-60}
IDLE_S=${IDLE_S:-10}
PY=/opt/judge/runtimes/python3.12/bin/python3.12
[ -x "$PY" ] || PY=python3

# box_root and cgroup parent of this run's own: leftovers are counted only where
# its processes put things (other suites run sandboxes here at the same time);
# lease_s 5: the killed worker's runs go back to the queue soon
CGP=judge-soak-$$
# the cgroups below it (native: $CGP, gVisor: $CGP-gvisor)
cgs() { find /sys/fs/cgroup/$CGP /sys/fs/cgroup/*/$CGP /sys/fs/cgroup/$CGP-gvisor /sys/fs/cgroup/*/$CGP-gvisor -mindepth 1 -type d 2>/dev/null | wc -l; }
soak_cleanup() {
	svc_cleanup_cg
	svc_cleanup
}
svc_cleanup_cg() {
	grep " $SVC_TMP/" /proc/self/mountinfo | cut -d' ' -f5 | sort -r | xargs -r umount -l 2>/dev/null
	local d
	for d in /sys/fs/cgroup/$CGP /sys/fs/cgroup/*/$CGP /sys/fs/cgroup/$CGP-gvisor /sys/fs/cgroup/*/$CGP-gvisor; do
		[ -d "$d" ] || continue
		find "$d" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
		rmdir "$d" 2>/dev/null
	done
}
trap soak_cleanup EXIT
svc_up soak-loud "[sandbox]" "sandbox = ${SOAK_SANDBOX:-native}" "box_root = $SVC_TMP/box" "cgroup_parent = $CGP" \
	"[worker]" "worker_slots = ${WORKER_SLOTS:-2}" "lease_s = 5" "reap_interval_s = 1"
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
# the worker's pid through a file: the sampler outlives the killed one
echo "$SVC_WORKER_PID" >"$SVC_TMP/worker.pid"
# then this run's cgroups and box folders at the time: the leftover check
# below counts the same things, which the load did make
sample() {
	echo "$(date +%s) $(rss "$SVC_SERVE_PID") $(rss "$(cat "$SVC_TMP/worker.pid")") $(pg_rss)" \
		"$(cgs)" \
		"$(find "$SVC_TMP/box" -name 'box-*' 2>/dev/null | wc -l)" "$(pgrep -fc -- "$SVC_TMP/box")"
}
RSS=$SVC_TMP/rss
sample >"$RSS"
(while sleep 5; do sample >>"$RSS"; done) &
SAMPLER=$!

echo "soak: ${IDLE_S} s quiet key alone, then ${SOAK_S} s of load (SOAK_S=... for longer)"
"$PY" tests/bench/soak.py "$U" "$KEY" "$QUIET" "$SKEY" "$IDLE_S" "$SOAK_S" >"$SVC_TMP/soak.json" \
	2>"$SVC_TMP/soak.err" &
LOAD=$!
T0=$(date +%s)

# answered NAME: seconds until an execute of the quiet key is answered 200 (at most 120)
answered() {
	local t=$(date +%s) s
	for _ in $(seq 120); do
		s=$(curl -s -o /dev/null -w '%{http_code}' -m 30 -H "Authorization: Bearer $QUIET" \
			-H 'Content-Type: application/json' "$U/v1/execute" \
			-d '{"language": "python", "source": "print(1)"}')
		if [ "$s" = 200 ]; then
			pass "$1: the service answers after it"
			echo "  $1: an execute answered $(($(date +%s) - t)) s after it"
			return
		fi
		sleep 1
	done
	fail "$1: the service answers after it" "no 200 within 120 s (last $s)"
}
# owners KEY: owner folders of the processes whose pid is KEY (o<pid>x...)
owners_of() { find "$SVC_TMP/box/owners" -mindepth 1 -maxdepth 1 -name "*o$1x*" 2>/dev/null | wc -l; }

sleep $((IDLE_S + SOAK_S / 3))
OLD=$SVC_WORKER_PID
if [ "$(owners_of "$OLD")" -gt 0 ] && kill -KILL "$OLD" 2>/dev/null; then
	wait "$OLD" 2>/dev/null # reaped here, so bash prints no "Killed" line
	pass "worker SIGKILLed under load (at $(($(date +%s) - T0)) s)"
	svc_worker "$ini" && echo "$SVC_WORKER_PID" >"$SVC_TMP/worker.pid" &&
		pass "a new worker started" || fail "a new worker started"
	answered "worker kill"
	# the new worker reclaims the dead one's owner folder (and what it holds) at its start
	for _ in $(seq 300); do [ "$(owners_of "$OLD")" = 0 ] && break; sleep 0.1; done
	[ "$(owners_of "$OLD")" = 0 ] && pass "the killed worker's owner folder reclaimed" ||
		fail "the killed worker's owner folder reclaimed" "$(ls "$SVC_TMP/box/owners")"
else
	fail "worker SIGKILLed under load" "no owner folder of $OLD, or not running"
fi

W=$((IDLE_S + 2 * SOAK_S / 3 - ($(date +%s) - T0)))
[ "$W" -gt 0 ] && sleep "$W"
if svc_as_pg "$SVC_PG_BIN/pg_ctl -D '$SVC_TMP/pg/data' -m fast -w -t 60 restart" >"$SVC_TMP/pgr.log" 2>&1; then
	pass "PostgreSQL restarted under load (at $(($(date +%s) - T0)) s)"
	answered "PostgreSQL restart"
else
	fail "PostgreSQL restarted under load" "$(tail -3 "$SVC_TMP/pgr.log")"
fi

wait "$LOAD"
OUT=$(cat "$SVC_TMP/soak.json")
kill "$SAMPLER" 2>/dev/null
wait "$SAMPLER" 2>/dev/null
sample >>"$RSS"

if ! jq -e . >/dev/null 2>&1 <<<"$OUT"; then
	fail "the load ran" "$(head -c 400 <<<"$OUT") $(tail -5 "$SVC_TMP/soak.err")"
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

S=$(jq -c .submissions <<<"$OUT")
echo "submissions: $S"
# runs a lost worker cut short and another ran again (a number: it depends on timing)
echo "submissions run more than once (their worker lost): $(psql -XAtq "$SVC_DB_URL" \
	-c "SELECT count(*) FROM submissions WHERE attempts > 1" 2>/dev/null)"
[ "$(jq .lost <<<"$S")" = 0 ] && [ "$(jq .created <<<"$S")" -gt 0 ] &&
	pass "no submission lost ($(jq .created <<<"$S") created, all final)" ||
	fail "no submission lost" "$S"
echo "SSE readers: $(jq -c .sse <<<"$OUT")"
[ "$(jq .sse.events <<<"$OUT")" -gt 0 ] && [ "$(jq .sse.done <<<"$OUT")" -gt 0 ] &&
	pass "SSE readers received events" || fail "SSE readers received events" "$(jq -c .sse <<<"$OUT")"

# a graceful stop, then what this run's processes left on the host
svc_stop "$SVC_WORKER_PID"
svc_stop "$SVC_SERVE_PID"
m=$(grep -c " $SVC_TMP/" /proc/self/mountinfo)
c=$(cgs)
o=$(find "$SVC_TMP/box/owners" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
b=$(find "$SVC_TMP/box" -name 'box-*' 2>/dev/null | wc -l)
r=$(pgrep -f -- "$SVC_TMP/box" | wc -l)
left="mounts=$m cgroups=$c owners=$o boxes=$b processes=$r"
echo "during the load (samples every 5 s), most: $(awk '{ if ($5 > c) c = $5; if ($6 > b) b = $6; if ($7 > r) r = $7 }
	END { printf "cgroups=%d boxes=%d processes=%d", c, b, r }' "$RSS")"
echo "leftovers after the stop: $left"
[ "$left" = "mounts=0 cgroups=0 owners=0 boxes=0 processes=0" ] && pass "nothing left after the stop" ||
	fail "nothing left after the stop" "$left"
svc_log_clean "$SVC_TMP/serve.log"
finish
