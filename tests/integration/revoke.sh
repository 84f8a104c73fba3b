#!/usr/bin/env bash
# revoke: revoking an API key ends its work (docs/operations.md, "Queue
# policy"): its queued submissions become `cancelled` at once and never run,
# its open sessions are closed and the worker ends their sandboxes with the
# processes in them (a background process included), the key is refused; another
# key's running and queued work goes on. Native sandbox; the session's
# processes are looked for only under this test's own cgroup parent (other
# suites run sandboxes on this machine at the same time).
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
if [ "$(id -u)" != 0 ]; then
	fail "run as root" "the worker's sandboxes need root"
	finish
	exit
fi
source tests/svc.sh
CGP=judge-revoke-$$
cleanup_revoke() {
	svc_cleanup
	for d in /sys/fs/cgroup/$CGP /sys/fs/cgroup/*/$CGP; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
}
trap cleanup_revoke EXIT
SVC_KEEP=1
svc_up revoke-a "[sandbox]" "sandbox = native" "box_root = $SVC_TMP/box" "cgroup_parent = $CGP" \
	"[worker]" "worker_slots = 1"
KEYB=$("$JUDGE" --config "$ini" keys create --name revoke-b 2>/dev/null)
AUTHB=(-H "Authorization: Bearer $KEYB")
sql() { psql -XAtq "$SVC_DB_URL" -c "$1"; }
AID=$(sql "SELECT id FROM api_keys WHERE name = 'revoke-a'")

# the processes of this test's native sandboxes (sessions and runs)
sandboxed() {
	cat /sys/fs/cgroup/$CGP/*/cgroup.procs /sys/fs/cgroup/pids/$CGP/*/cgroup.procs 2>/dev/null | wc -l
}

# a session of key a with a process of its own left running in the background
out=$(req POST /v1/sessions '{"language": "python"}')
SID=$(jq -r '.id // empty' <<<"${out%$'\n'*}")
[ -n "$SID" ] && pass "a session of key a" || fail "a session of key a" "$out"
expect "a background process in it" 200 '.stdout | test("^[0-9]+")' POST "/v1/sessions/$SID/execute" \
	'{"code": "import subprocess\np = subprocess.Popen([\"sleep\", \"1000\"])\nprint(p.pid)"}'
n=$(sandboxed)
[ "$n" -ge 2 ] && pass "its processes run ($n)" || fail "its processes run" "$n"

# key b's submission holds the only slot; key a's queue up behind it (15 s:
# at load a 4 s blocker ended while the three were still being posted)
blocker=$(curl -s "${AUTHB[@]}" "${JSON[@]}" "$U/v1/submissions" \
	-d '{"language": "python", "source": "import time\ntime.sleep(15)\nprint(1)", "expected_output": "1",
	     "limits": {"wall_ms": 60000}}' | jq -r .id)
for _ in $(seq 100); do
	[ "$(sql "SELECT status FROM submissions WHERE id = $blocker")" = running ] && break
	sleep 0.1
done
ids=()
for i in 1 2 3; do
	ids+=("$(curl -s "${AUTH[@]}" "${JSON[@]}" "$U/v1/submissions" \
		-d "{\"language\": \"python\", \"source\": \"print($i)\"}" | jq -r .id)")
done
queued=$(curl -s "${AUTHB[@]}" "${JSON[@]}" "$U/v1/submissions" \
	-d '{"language": "python", "source": "print(2)", "expected_output": "2"}' | jq -r .id)
st=$(sql "SELECT string_agg(status, ',' ORDER BY id) FROM submissions WHERE id IN (${ids[0]}, ${ids[1]}, ${ids[2]})")
[ "$st" = "queued,queued,queued" ] && pass "key a's submissions wait behind the blocker" ||
	fail "key a's submissions wait" "$st"

out=$("$JUDGE" --config "$ini" keys revoke "$AID" 2>&1)
[ "$out" = "revoked key $AID: 3 queued submissions cancelled, 1 session closed" ] &&
	pass "judge keys revoke says what ended" || fail "judge keys revoke says what ended" "$out"
row=$(sql "SELECT json_agg(json_build_object('status', status, 'message', result->>'message',
	'started', started) ORDER BY id) FROM submissions WHERE id IN (${ids[0]}, ${ids[1]}, ${ids[2]})")
expect_json "its queued submissions are cancelled, never started" "$row" \
	'length == 3 and all(.[]; .status == "cancelled" and .message == "its API key was revoked" and .started == null)'
expect_json "its session is closed" "$(sql "SELECT json_build_object('status', status,
	'reason', close_reason) FROM sessions WHERE id = '$SID'")" \
	'.status == "closed" and .reason == "its API key was revoked"'
# the worker ends the sandbox at its next look (about a second)
for _ in $(seq 150); do [ "$(sandboxed)" -le 1 ] && break; sleep 0.1; done
left=$(pgrep -f "^sleep 1000$" | while read -r p; do
	grep -q "$CGP" "/proc/$p/cgroup" 2>/dev/null && echo "$p"; done | wc -l)
[ "$left" = 0 ] && pass "the session's sandbox and its background process are gone" ||
	fail "the session's sandbox and its background process are gone" "$left left"
st=000
for _ in $(seq 50); do
	st=$(curl -s -o /dev/null -w '%{http_code}' "${AUTH[@]}" "$U/v1/languages")
	[ "$st" = 401 ] && break
	sleep 0.1
done
[ "$st" = 401 ] && pass "the revoked key is refused" || fail "the revoked key is refused" "status $st"
# key b's work goes on: the running one and the one queued after a's
for id in "$blocker" "$queued"; do
	for _ in $(seq 900); do
		s=$(sql "SELECT status FROM submissions WHERE id = $id")
		[ "$s" != queued ] && [ "$s" != running ] && break
		sleep 0.1
	done
	[ "$s" = accepted ] && pass "key b's submission $id ends accepted" || fail "key b's submission $id" "$s"
done
st=$(sql "SELECT string_agg(status, ',') FROM submissions WHERE id IN (${ids[0]}, ${ids[1]}, ${ids[2]})")
[ "$st" = "cancelled,cancelled,cancelled" ] && pass "the cancelled ones never ran" || fail "the cancelled ones never ran" "$st"
expect_json "revoking again finds no active key" "\"$("$JUDGE" --config "$ini" keys revoke "$AID" 2>&1)\"" \
	'test("no active key")'
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/worker.log"
finish
