#!/usr/bin/env bash
# sessions_memory.sh: a gVisor session paused, snapshotted and forked with its
# memory (runsc checkpoint, docs/sessions.md "Pause, resume, snapshots and
# forks") against a real service: variables of every context and a running
# process that ignores SIGTERM come back (`restarted: false`), also on a new
# worker after the old one was killed; snapshots and forks start with the
# parent's variables and diverge; another key gets 404; an image whose memory
# was tampered with in PostgreSQL is a clear error; a full disk still pauses;
# an idle session pauses with its memory; a session with network access falls
# back to files only and says why; a pause over the key's cap goes on with its
# memory. Skipped (counted) without runsc.
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
source tests/svc.sh

if ! runsc --version >/dev/null 2>&1; then
	skip "sessions_memory" "runsc is not installed"
	finish
	exit 0
fi
INI=("[sandbox]" "sandbox = gvisor" "session_pool = 0" "[worker]" "worker_slots = 2"
	"[sessions]" "session_images_mb_per_key = 32" "sessions_per_key = 10" "egress = allowlist")
svc_up memory-test "${INI[@]}"
KEY2=$("$JUDGE" --config "$ini" keys create --name other 2>/dev/null)
sql() { "$SVC_PG_BIN/psql" -XAtq "$SVC_DB_URL" -c "$1"; }
create() { svc_session "{\"language\": \"$1\"${2:+, $2}}"; }
cell() { svc_cell "$@"; }
as() {
	local saved=("${AUTH[@]}")
	AUTH=(-H "Authorization: Bearer $1")
	shift
	"$@"
	AUTH=("${saved[@]}")
}
# ctxcell NAME SID CTX CODE JQ: a cell in context CTX
ctxcell() { svc_cell "$1" "$2" "$4" "$5" "\"context\": \"$3\""; }

# ---- pause, then resume on the same worker and on a new one ----
create python
S=$SID
cell "a variable, a file, a running process that ignores SIGTERM" "$S" "$(cat <<'PY'
x = 41
open("notes.txt", "w").write("kept")
import subprocess, time
p = subprocess.Popen(["python3", "-c", """
import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
n = 0
while True:
    n += 1
    # whole or not at all: a reader never finds it just truncated
    open("/tmp/n.new", "w").write(str(n))
    os.replace("/tmp/n.new", "/tmp/n")
    time.sleep(0.05)
"""], start_new_session=True)
time.sleep(0.3)
PY
)" '.status == "ok"'
expect "a bash context with a variable" 201 '.language == "bash"' POST "/v1/sessions/$S/contexts" '{"language": "bash"}'
CX=$(jq -r .id <<<"$LAST")
ctxcell "bash: export V=7" "$S" "$CX" 'export V=7' '.status == "ok"'
expect "pause: the image holds the memory" 200 '.status == "paused" and .memory == true and .stored > 0' \
	POST "/v1/sessions/$S/pause"
cell "an execute on the paused session resumes it with its variables" "$S" 'x + 1' \
	'.status == "ok" and .result == "42" and .restarted == false'
ctxcell "bash: its variable is back" "$S" "$CX" 'echo $V' '.stdout == "7\n" and .restarted == false'
cell "the process runs on after the resume" "$S" \
	$'a = int(open("/tmp/n").read())\ntime.sleep(0.5)\nprint(p.poll() is None, int(open("/tmp/n").read()) > a)' \
	'.stdout == "True True\n"'
cell "the file is back" "$S" 'print(open("notes.txt").read())' '.stdout == "kept\n"'
n=$(sql "SELECT resumed_memory FROM sessions WHERE id = '$S'")
[ "$n" = t ] && pass "the row says it resumed with its memory" || fail "resumed_memory" "$n"

expect "pause again" 200 '.status == "paused" and .memory == true' POST "/v1/sessions/$S/pause"
kill -KILL "$SVC_WORKER_PID" 2>/dev/null
wait "$SVC_WORKER_PID" 2>/dev/null
svc_worker "$ini" && pass "a new worker (the first one killed)" || fail "a new worker starts"
expect "resume on the new worker" 200 '.status == "ready" and .restarted == false and (.message | contains("memory"))' \
	POST "/v1/sessions/$S/resume"
cell "... with its variables" "$S" 'x + 1' '.result == "42" and .restarted == false'
ctxcell "... in every context" "$S" "$CX" 'echo $V' '.stdout == "7\n"'
cell "... and its process" "$S" 'print(p.poll() is None)' '.stdout == "True\n"'

# ---- snapshots and forks start with the parent's memory, then diverge ----
expect "snapshot" 201 '(.snapshot_id | length == 36) and .memory == true' POST "/v1/sessions/$S/snapshot" '{"name": "m"}'
SNAP=$(jq -r .snapshot_id <<<"$LAST")
cell "the parent goes on with its variables" "$S" 'x' '.result == "41" and .restarted == false'
as "$KEY2" bad "another key cannot start from the snapshot" 404 not_found POST /v1/sessions \
	"{\"from_snapshot\": \"$SNAP\"}"
expect "from_snapshot" 201 '.status == "ready"' POST /v1/sessions "{\"from_snapshot\": \"$SNAP\"}"
C=$(jq -r .id <<<"$LAST")
cell "from_snapshot: the parent's variable" "$C" 'x + 1' '.result == "42" and .restarted == false'
expect "fork" 201 '.status == "ready" and .forked_from == "'"$S"'"' POST "/v1/sessions/$S/fork"
F=$(jq -r .id <<<"$LAST")
cell "fork: the child changes x" "$F" 'x = 100; x' '.result == "100" and .restarted == false'
cell "fork: the parent's x is its own" "$S" 'x' '.result == "41"'
ctxcell "fork: the child's bash context has V" "$F" "$CX" 'echo $V' '.stdout == "7\n"'
for s in "$C" "$F"; do req DELETE "/v1/sessions/$s" >/dev/null; done
req DELETE "/v1/snapshots/$SNAP" >/dev/null

# ---- the worker's copy of an image: used when intact, else PostgreSQL ----
create python
W=$SID
cell "copy: a variable" "$W" 'z = 9' '.status == "ok"'
expect "copy: pause" 200 '.status == "paused" and .memory == true' POST "/v1/sessions/$W/pause"
expect "copy: resume" 200 '.status == "ready" and .restarted == false' POST "/v1/sessions/$W/resume"
cell "copy: the variable is back" "$W" 'z' '.result == "9"'
grep -q "$W restored with its memory .*from this worker's copy" "$SVC_TMP/worker.log" &&
	pass "copy: the resume read the worker's copy" || fail "copy: the resume read the worker's copy"
expect "copy: pause again" 200 '.status == "paused" and .memory == true' POST "/v1/sessions/$W/pause"
# the copy is the checkpoint's folder (and the head-<image id>): its largest file damaged
wdir="/run/judge/ckpt-$SVC_WORKER_PID-copy"
wcopy="$wdir/$(ls -S "$wdir" | head -1)"
if [ -f "$wdir/head-$(sql "SELECT image_id FROM sessions WHERE id = '$W'")" ] && [ -f "$wcopy" ]; then
	printf '\x00\xff\x00\xff' | dd of="$wcopy" bs=1 seek=100000 conv=notrunc status=none
	pass "copy: the worker's copy damaged"
else
	fail "copy: the worker keeps a copy" "$wcopy"
fi
cell "copy: a damaged copy: the stored image, variable and all" "$W" 'z' '.result == "9"'
grep -q "its copy .* is not used: chunk [0-9]* does not match" "$SVC_TMP/worker.log" &&
	pass "copy: the damaged copy was refused" || fail "copy: the damaged copy was refused"
req DELETE "/v1/sessions/$W" >/dev/null

# ---- an image whose memory was tampered with in PostgreSQL ----
create python
T=$SID
cell "tamper: a variable" "$T" 'y = 5' '.status == "ok"'
expect "tamper: pause" 200 '.status == "paused" and .memory == true' POST "/v1/sessions/$T/pause"
# as on another worker: without this worker's copy of the image
rm -rf "/run/judge/ckpt-$SVC_WORKER_PID-copy"
# the last chunk: the runsc image's end
sql "UPDATE blob_chunks SET data = overlay(data placing '\\x00ff00ff'::bytea from 40) WHERE blob_id = (SELECT i.blob_id FROM session_images i JOIN sessions s ON s.image_id = i.id WHERE s.id = '$T') AND seq = (SELECT max(seq) FROM blob_chunks c JOIN session_images i ON i.blob_id = c.blob_id JOIN sessions s ON s.image_id = i.id WHERE s.id = '$T')"
expect "tamper: resume is a clear JSON error" 503 '.error.code == "session_failed" and
	(.error.message | test("damaged|SHA-256"))' POST "/v1/sessions/$T/resume"
kill -0 "$SVC_WORKER_PID" 2>/dev/null && pass "the worker survives a damaged memory image" || fail "worker alive"

# ---- a session that filled its disk ----
create python '"limits": {"disk_mb": 4}'
D=$SID
cell "disk: fill the folder, keep a variable" "$D" \
	$'import os\nv = 3\ntry:\n    with open("big.bin", "wb") as f:\n        while True:\n            f.write(os.urandom(65536))\nexcept OSError as e:\n    print("full", e.errno)' \
	'.stdout | startswith("full")'
expect "disk: a full session pauses with its memory" 200 '.status == "paused" and .memory == true' \
	POST "/v1/sessions/$D/pause"
cell "disk: its variable and file come back" "$D" 'v, os.path.getsize("big.bin") > 3000000' \
	'.result == "(3, True)" and .restarted == false'
req DELETE "/v1/sessions/$D" >/dev/null

# ---- idle_action pause keeps the memory ----
create python '"idle_ttl": 2, "idle_action": "pause"'
I=$SID
cell "idle: a variable" "$I" 'w = 9' '.status == "ok"'
for _ in $(seq 60); do
	[ "$(req GET "/v1/sessions/$I" | head -1 | jq -r .status)" = paused ] && break
	sleep 0.5
done
expect "idle: paused" 200 '.status == "paused"' GET "/v1/sessions/$I"
cell "idle: the next call has the variable" "$I" 'w' '.result == "9" and .restarted == false'
req DELETE "/v1/sessions/$I" >/dev/null

# ---- a session's own checkpoints, where judge.ini takes none ----
bad "checkpoint_interval_s out of range: 422" 422 invalid_field POST /v1/sessions \
	'{"language": "python", "checkpoint_interval_s": -5}'
create python '"checkpoint_interval_s": 1'
K=$SID
expect "checkpoint_interval_s is shown" 200 '.checkpoint_interval_s == 1' GET "/v1/sessions/$K"
cell "own checkpoints: a variable" "$K" 'c = 3' '.status == "ok"'
after_use="SELECT coalesce(checkpoint_at > last_used, false) FROM sessions WHERE id = '$K'"
for _ in $(seq 60); do
	[ "$(sql "$after_use")" = t ] && break
	sleep 0.5
done
[ "$(sql "$after_use")" = t ] &&
	pass "a session that asks for checkpoints is checkpointed (judge.ini's checkpoint_interval_s = 0)" ||
	fail "a session that asks for checkpoints is checkpointed"
req DELETE "/v1/sessions/$K" >/dev/null

# ---- a session with network access: files only, and it says why ----
create python '"network": {"allow": ["example.com"]}'
N=$SID
if [ -n "$N" ]; then
	cell "network: a variable and a file" "$N" $'z = 1\nopen("n.txt", "w").write("n")' '.status == "ok"'
	expect "network: the pause keeps no memory" 200 '.status == "paused" and .memory == false' \
		POST "/v1/sessions/$N/pause"
	expect "network: resume says restarted" 200 '.restarted == true' POST "/v1/sessions/$N/resume"
	cell "network: the first cell says why" "$N" 'print(open("n.txt").read())' \
		'.stdout == "n\n" and .restarted == true and (.message | contains("network access"))'
	req DELETE "/v1/sessions/$N" >/dev/null
else
	fail "network: a session with an allowlist"
fi

# ---- a pause over the key's cap goes on with its memory ----
create python '"limits": {"disk_mb": 64}'
B=$SID
cell "cap: 40 MB of random bytes in memory" "$B" 'import os; b = os.urandom(40 << 20); len(b)' '.result == "41943040"'
bad "cap: a pause over the key's cap" 413 image_too_large POST "/v1/sessions/$B/pause"
cell "cap: the session goes on with its memory" "$B" 'len(b)' '.result == "41943040" and .restarted == false'

for s in "$S" "$B"; do req DELETE "/v1/sessions/$s" >/dev/null; done
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/worker.log"
finish
