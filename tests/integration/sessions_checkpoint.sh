#!/usr/bin/env bash
# sessions_checkpoint.sh: periodic checkpoints (judge.ini checkpoint_interval_s,
# docs/sessions.md) on gVisor against a real service: a used session is
# checkpointed (its memory and files, in its history as the worker's own
# snapshot call, not among the key's snapshots); when its worker is killed, the
# next call resumes it from the checkpoint on another worker with its
# variables, and the answer says how old the checkpoint was
# (restored_from_checkpoint.age_s); a session never checkpointed (network
# access) is still lost (410). Skipped (counted) without runsc.
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
source tests/svc.sh

if ! runsc --version >/dev/null 2>&1; then
	skip "sessions_checkpoint" "runsc is not installed"
	finish
	exit 0
fi
# a checkpoint folder a killed worker left in box_root (its pid gone): the
# next worker removes it
BOX_ROOT=$(sed -n 's/^box_root *= *//p' judge.ini | tail -1)
true &
DEAD=$!
wait "$DEAD"
LEFT="$BOX_ROOT/ckpt-$DEAD-test$$"
mkdir -p "$LEFT" && echo image >"$LEFT/checkpoint.img"
# every second; a worker silent for 3 s is dead
svc_up checkpoint-test "[sandbox]" "sandbox = gvisor" "session_pool = 0" "[worker]" "worker_slots = 2" \
	"[sessions]" "checkpoint_interval_s = 1" "worker_timeout_s = 3" "egress = allowlist"
sql() { "$SVC_PG_BIN/psql" -XAtq "$SVC_DB_URL" -c "$1"; }
[ ! -e "$LEFT" ] && pass "a dead worker's checkpoint folder is removed at start" ||
	{ fail "a dead worker's checkpoint folder is removed at start" "$LEFT"; rm -rf "$LEFT"; }

svc_session '{"language": "python"}'
S=$SID
svc_cell "a variable" "$S" 'x = 41' '.status == "ok"'
# a checkpoint taken after the cell (one may have begun before it: an unused
# session is checkpointed too, and the cell waited for it)
after_use="SELECT checkpoint_at > last_used FROM sessions WHERE id = '$S'"
for _ in $(seq 60); do
	[ "$(sql "$after_use")" = t ] && break
	sleep 0.5
done
[ "$(sql "$after_use")" = t ] &&
	pass "the session was checkpointed" || fail "the session was checkpointed"
out=$(req GET "/v1/sessions/$S/history")
TAKEN=$(jq '[.calls[] | select(.kind == "snapshot")] | length' <<<"${out%$'\n'*}")
expect "the checkpoint is in its history, the worker's own snapshot call" 200 \
	'[.calls[] | select(.kind == "snapshot")] | length >= 1' GET "/v1/sessions/$S/history"
expect "it is not one of the key's snapshots" 200 '.snapshots == []' GET /v1/snapshots
svc_session '{"language": "python", "checkpoint_interval_s": 0}'
O=$SID
svc_cell "checkpoint_interval_s 0: a variable" "$O" 'o = 1' '.status == "ok"'
svc_session '{"language": "python", "network": {"allow": ["example.com"]}}'
N=$SID
svc_cell "network: a variable" "$N" 'z = 1' '.status == "ok"'
sleep 2
[ "$(sql "SELECT checkpoint_at IS NULL FROM sessions WHERE id = '$N'")" = t ] &&
	pass "network: never checkpointed (its memory is not kept)" || fail "network: checkpointed"
[ "$(sql "SELECT checkpoint_at IS NULL FROM sessions WHERE id = '$O'")" = t ] &&
	pass "a session's checkpoint_interval_s 0 takes none (judge.ini's is 1 s)" ||
	fail "checkpoint_interval_s 0: checkpointed"
# two intervals and more since: a checkpoint does not count as a use (each one
# was taken again an interval later, and the idle deadline moved on)
expect "an unused session is not checkpointed again" 200 \
	'[.calls[] | select(.kind == "snapshot")] | length == '"$TAKEN" GET "/v1/sessions/$S/history"
[ "$(sql "$after_use")" = t ] &&
	pass "the checkpoint leaves last_used alone" ||
	fail "the checkpoint leaves last_used alone" "$(sql "SELECT last_used, checkpoint_at FROM sessions WHERE id = '$S'")"

kill -KILL "$SVC_WORKER_PID" 2>/dev/null
wait "$SVC_WORKER_PID" 2>/dev/null
svc_worker "$ini" && pass "a new worker (the first one killed)" || fail "a new worker starts"
svc_cell "the next call resumes it from its checkpoint, with its variables" "$S" 'x + 1' \
	'.status == "ok" and .result == "42" and .restarted == false and .restored_from_checkpoint.age_s >= 0'
svc_cell "the call after it says nothing of it" "$S" 'x' '.result == "41" and (has("restored_from_checkpoint") | not)'
out=$(req POST "/v1/sessions/$N/execute" '{"code": "z"}')
for _ in $(seq 20); do
	[ "${out##*$'\n'}" = 410 ] && break
	sleep 0.5
	out=$(req POST "/v1/sessions/$N/execute" '{"code": "z"}')
done
expect_json "network: lost with its worker (410 session_lost)" "${out%$'\n'*}" '.error.code == "session_lost"'

req DELETE "/v1/sessions/$S" >/dev/null
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/worker.log"
finish
