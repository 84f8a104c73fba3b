#!/usr/bin/env bash
# sessions_pause.sh: sessions that outlive their sandbox (docs/sessions.md,
# "Pause, resume, snapshots and forks") against a real service (tests/svc.sh):
# pause stores the session folder in PostgreSQL and ends the sandbox; resume
# (or simply the next call) restores it on a new sandbox, `restarted: true`;
# files survive two pause/resume rounds; snapshots, from_snapshot and forks
# diverge from their parent; another key gets 404; an image tampered with in
# PostgreSQL is a clear error; a session that filled its disk still pauses;
# the per-key image cap answers 413. SESSIONS_SANDBOX=gvisor runs it on gVisor,
# where the image holds the memory too (runsc checkpoint): variables come back,
# `restarted: false` (tests/integration/sessions_memory.sh has the rest).
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
source tests/svc.sh
SANDBOX=${SESSIONS_SANDBOX:-native}
# what a call after a resume says: native keeps no memory (restarted), gVisor does
R=true
[ "$SANDBOX" = gvisor ] && R=false
# the key's image cap in MB: gVisor's images hold the sandbox's memory (a
# C# session's is ~55 MB, deleted once it is closed and swept)
CAP=8
[ "$SANDBOX" = gvisor ] && CAP=64

# a small image cap (under test), one slot; paused sessions kept 20 s, not a
# day (under test: the retention's end is seen here)
svc_up pause-test "[sandbox]" "sandbox = $SANDBOX" "[worker]" "worker_slots = 1" \
	"[sessions]" "session_images_mb_per_key = $CAP" "sessions_per_key = 10" "paused_retention_s = 20"
KEY2=$("$JUDGE" --config "$ini" keys create --name other 2>/dev/null)
KEY3=$("$JUDGE" --config "$ini" keys create --name disk 2>/dev/null)
sql() { "$SVC_PG_BIN/psql" -XAtq "$SVC_DB_URL" -c "$1"; }

# create LANG [EXTRA]: a session's id into SID; cell: svc.sh's svc_cell
create() { svc_session "{\"language\": \"$1\"${2:+, $2}}"; }
cell() { svc_cell "$@"; }
# raw NAME SID PATH WANT: a file of the session whose bytes are WANT
raw() {
	local out st
	out=$(req GET "/v1/sessions/$2/files/$3")
	st=${out##*$'\n'}
	out=${out%$'\n'*}
	[ "$st" = 200 ] && [ "$out" = "$4" ] && pass "$1" || fail "$1" "status $st: $(head -c 200 <<<"$out")"
}
# as KEY CMD...: run CMD with another key's header
as() {
	local saved=("${AUTH[@]}")
	AUTH=(-H "Authorization: Bearer $1")
	shift
	"$@"
	AUTH=("${saved[@]}")
}

# per language: a cell that writes notes.txt and sets x (SET, its filter),
# one that shows x (SHOW_X) with the filter of x gone (GONE), one that prints
# notes.txt (SHOW_F), one that writes second.txt (NEW_F)
GONE_UNSET='.stdout == "x=unset\n"'
for lang in python bash node csharp; do
	case $lang in
	python)
		SET=$'open("notes.txt", "w").write("before pause")\nx = 41\nx + 1'
		SET_OK='.status == "ok" and .result == "42"'
		SHOW_X='print(x)'
		GONE='.status == "error" and .error.name == "NameError"'
		KEPT='.stdout == "41\n"'
		SHOW_F='print(open("notes.txt").read())'
		NEW_F='open("second.txt", "w").write("after the first resume")'
		;;
	bash)
		SET='echo -n "before pause" > notes.txt; x=41; echo $((x + 1))'
		SET_OK='.status == "ok" and .stdout == "42\n"'
		SHOW_X='echo "x=${x:-unset}"'
		GONE=$GONE_UNSET
		KEPT='.stdout == "x=41\n"'
		SHOW_F='cat notes.txt'
		NEW_F='echo -n "after the first resume" > second.txt'
		;;
	node)
		SET=$'require("fs").writeFileSync("notes.txt", "before pause")\nvar x = 41\nx + 1'
		SET_OK='.status == "ok" and .result == "42"'
		SHOW_X='console.log(typeof x === "undefined" ? "x=unset" : "x=" + x)'
		GONE=$GONE_UNSET
		KEPT='.stdout == "x=41\n"'
		SHOW_F='console.log(require("fs").readFileSync("notes.txt", "utf8"))'
		NEW_F='require("fs").writeFileSync("second.txt", "after the first resume")'
		;;
	csharp)
		SET=$'System.IO.File.WriteAllText("notes.txt", "before pause");\nvar x = 41;\nx + 1'
		SET_OK='.status == "ok" and .result == "42"'
		SHOW_X='x'
		GONE='.status == "error" and (.error.value | test("CS0103"))'
		KEPT='.result == "41"'
		SHOW_F='System.Console.WriteLine(System.IO.File.ReadAllText("notes.txt"));'
		NEW_F='System.IO.File.WriteAllText("second.txt", "after the first resume");'
		;;
	esac
	# Roslyn needs more than the default 512 MB
	create "$lang" "$([ "$lang" = csharp ] && echo '"limits": {"memory_mb": 1024}')"
	S=$SID
	[ -n "$S" ] || { fail "$lang: create"; continue; }
	cell "$lang: write a file and set a variable" "$S" "$SET" "$SET_OK"
	expect "$lang: pause" 200 '.status == "paused" and .id == "'"$S"'" and (.image_id | length == 36) and
		.files >= 1 and .stored > 0 and .size > 0' POST "/v1/sessions/$S/pause"
	expect "$lang: GET shows paused" 200 '.status == "paused"' GET "/v1/sessions/$S"
	n=$(sql "SELECT count(*) FROM sessions WHERE id = '$S' AND worker_id IS NULL")
	[ "$n" = 1 ] && pass "$lang: a paused session has no worker" || fail "$lang: paused has no worker" "$n"
	expect "$lang: listed while paused" 200 '[.sessions[] | select(.id == "'"$S"'") | .status] == ["paused"]' \
		GET /v1/sessions
	bad "$lang: pause a paused session" 409 session_paused POST "/v1/sessions/$S/pause"
	as "$KEY2" bad "$lang: another key's pause" 404 not_found POST "/v1/sessions/$S/pause"
	as "$KEY2" bad "$lang: another key's resume" 404 not_found POST "/v1/sessions/$S/resume"
	if [ "$SANDBOX" = gvisor ]; then
		expect "$lang: resume, with its memory" 200 '.status == "ready" and .restarted == false and
			(.message | contains("memory"))' POST "/v1/sessions/$S/resume"
	else
		expect "$lang: resume" 200 '.status == "ready" and .restarted == true and (.message | contains("variables"))' \
			POST "/v1/sessions/$S/resume"
	fi
	expect "$lang: resume of a ready session changes nothing" 200 '.status == "ready" and .restarted == false' \
		POST "/v1/sessions/$S/resume"
	if [ "$SANDBOX" = gvisor ]; then
		cell "$lang: the variable is back" "$S" "$SHOW_X" "$KEPT"' and .restarted == false'
	else
		cell "$lang: the variable is gone, and the cell says so" "$S" "$SHOW_X" \
			"$GONE"' and .restarted == true and (.message | contains("resumed"))'
	fi
	cell "$lang: the file is back" "$S" "$SHOW_F" '(.stdout | startswith("before pause")) and .restarted == false'
	cell "$lang: write a file after the first resume" "$S" "$NEW_F" '.status == "ok"'
	expect "$lang: pause again" 200 '.status == "paused"' POST "/v1/sessions/$S/pause"
	# no resume: the next call brings it back
	raw "$lang: a file read on a paused session resumes it" "$S" second.txt "after the first resume"
	raw "$lang: ... and the first file is still there" "$S" notes.txt "before pause"
	expect "$lang: pause a third time" 200 '.status == "paused"' POST "/v1/sessions/$S/pause"
	cell "$lang: an execute on a paused session resumes it" "$S" "$SHOW_F" \
		'(.stdout | startswith("before pause")) and .restarted == '$R
	n=$(sql "SELECT count(*) FROM session_images WHERE session_id = '$S' AND kind = 'pause'")
	[ "$n" = 1 ] && pass "$lang: one pause image kept per session" || fail "$lang: pause images" "$n"
	expect "$lang: close" 200 '.status == "closed"' DELETE "/v1/sessions/$S"
	bad "$lang: pause a closed session" 409 session_closed POST "/v1/sessions/$S/pause"
done

# ---- contexts come back with their ids and working folders ----
create python
S=$SID
req PUT "/v1/sessions/$S/files/sub/in.txt" "in sub" >/dev/null
expect "contexts: a bash context in sub/" 201 '.language == "bash" and .cwd == "sub"' \
	POST "/v1/sessions/$S/contexts" '{"language": "bash", "cwd": "sub"}'
CX=$(jq -r .id <<<"$LAST")
expect "contexts: pause" 200 '.status == "paused"' POST "/v1/sessions/$S/pause"
expect "contexts: listed after the resume, same ids" 200 \
	'[.contexts[] | [.id, .language, .cwd]] == [["default", "python", ""], ["'"$CX"'", "bash", "sub"]]' \
	GET "/v1/sessions/$S/contexts"
out=$(req POST "/v1/sessions/$S/execute" "{\"code\": \"cat in.txt\", \"context\": \"$CX\"}")
expect_json "contexts: the bash context runs in its folder again" "${out%$'\n'*}" '.stdout == "in sub"'
req DELETE "/v1/sessions/$S" >/dev/null

# ---- symlinks come back as links (a virtualenv's python is one); a FIFO is skipped ----
create python
S=$SID
cell "links: a folder, links to it, to a runtime, to nothing; a venv; a FIFO" "$S" "$(cat <<'PY'
import os, subprocess, sys
os.makedirs("v2")
open("v2/data.txt", "w").write("in v2")
os.symlink("v2", "latest")
os.symlink("/usr/bin/env", "envlink")
os.symlink("nowhere", "gone")
subprocess.run([sys.executable, "-m", "venv", "--without-pip", "venv"], check=True)
os.mkfifo("pipe")
PY
)" '.status == "ok"'
# native: the FIFO is the one entry skipped; gVisor: the sentry holds it (the
# host sees no FIFO), and it comes back with the memory
FIFO=False SKIPPED=1
[ "$SANDBOX" = gvisor ] && FIFO=True SKIPPED=0
expect "links: pause (FIFOs are not packed)" 200 '.status == "paused" and .skipped == '$SKIPPED \
	POST "/v1/sessions/$S/pause"
cell "links: after the resume, each link is a link to the same target" "$S" "$(cat <<'PY'
import os, subprocess
print(os.readlink("latest"), open("latest/data.txt").read(), os.readlink("envlink"), os.readlink("gone"), os.path.exists("pipe"))
print(subprocess.run(["venv/bin/python", "-c", "import sys; print(sys.prefix != sys.base_prefix)"], capture_output=True, text=True).stdout, end="")
PY
)" '.stdout == "v2 in v2 /usr/bin/env nowhere '$FIFO'\nTrue\n" and .restarted == '$R
req DELETE "/v1/sessions/$S" >/dev/null

# ---- a paused session closed without a sandbox ----
# a process before the pause left its output stream: the first process after
# the resume takes a new pid, and its events are its own (a reused pid
# replayed the earlier process's output)
create python
S=$SID
expect "processes: one before the pause" 201 '.pid > 0' POST "/v1/sessions/$S/processes" \
	'{"argv": ["sh", "-c", "echo before"]}'
P1=$(jq -r .pid <<<"$LAST")
expect "processes: it ended" 200 '.running == false and .exit_code == 0' \
	GET "/v1/sessions/$S/processes/$P1?wait_ms=20000"
expect "processes: pause" 200 '.status == "paused"' POST "/v1/sessions/$S/pause"
expect "processes: one after the resume takes a new pid" 201 ".pid > $P1" POST "/v1/sessions/$S/processes" \
	'{"argv": ["sh", "-c", "echo after"]}'
P2=$(jq -r .pid <<<"$LAST")
expect "processes: ... and it ended" 200 '.running == false' GET "/v1/sessions/$S/processes/$P2?wait_ms=20000"
ev=$(curl -s -m 20 "${AUTH[@]}" "$U/v1/sessions/$S/processes/$P2/events")
grep -q '"after' <<<"$ev" && ! grep -q '"before' <<<"$ev" &&
	pass "processes: its events are its own output" || fail "processes: its events are its own output" "$ev"
expect "pause, then close while paused" 200 '.status == "paused"' POST "/v1/sessions/$S/pause"
expect "close a paused session" 200 '.status == "closed"' DELETE "/v1/sessions/$S"
expect "it stays closed" 200 '.status == "closed"' GET "/v1/sessions/$S"

# ---- snapshots and forks (the session's own env goes with them) ----
create python '"env": {"PARENT_VAR": "p1"}'
P=$SID
cell "parent: a file" "$P" 'open("shared.txt", "w").write("from the parent")' '.status == "ok"'
expect "snapshot" 201 '(.snapshot_id | length == 36) and .name == "base" and .session_id == "'"$P"'"' \
	POST "/v1/sessions/$P/snapshot" '{"name": "base"}'
SNAP=$(jq -r .snapshot_id <<<"$LAST")
expect "the parent goes on after a snapshot" 200 '.status == "ready"' GET "/v1/sessions/$P"
bad "snapshot: unknown field" 422 unknown_field POST "/v1/sessions/$P/snapshot" '{"nme": "x"}'
as "$KEY2" bad "another key's snapshot call" 404 not_found POST "/v1/sessions/$P/snapshot"
as "$KEY2" bad "another key's from_snapshot" 404 not_found POST /v1/sessions \
	"{\"from_snapshot\": \"$SNAP\"}"
as "$KEY2" bad "another key's fork" 404 not_found POST "/v1/sessions/$P/fork"
bad "from_snapshot: not an id" 422 invalid_field POST /v1/sessions '{"from_snapshot": "nope"}'
bad "from_snapshot: another language" 422 invalid_field POST /v1/sessions \
	"{\"from_snapshot\": \"$SNAP\", \"language\": \"bash\"}"
expect "from_snapshot: a new session" 201 '.status == "ready" and .language == "python" and .id != "'"$P"'"' \
	POST /v1/sessions "{\"from_snapshot\": \"$SNAP\"}"
C1=$(jq -r .id <<<"$LAST")
raw "from_snapshot: the file is there" "$C1" shared.txt "from the parent"
cell "from_snapshot: the session's env is there" "$C1" 'import os; os.environ["PARENT_VAR"]' \
	'.result == "'"'"'p1'"'"'"'
expect "fork" 201 '.status == "ready" and .forked_from == "'"$P"'" and (.snapshot_id | length == 36)' \
	POST "/v1/sessions/$P/fork"
F=$(jq -r .id <<<"$LAST")
cell "fork: the parent's file" "$F" 'print(open("shared.txt").read())' '.stdout == "from the parent\n" and .restarted == '$R
cell "fork: the session's env is there" "$F" 'import os; os.environ["PARENT_VAR"]' '.result == "'"'"'p1'"'"'"'
cell "fork: the child writes" "$F" $'open("child.txt", "w").write("child")\nopen("shared.txt", "w").write("changed by the child")' '.status == "ok"'
cell "fork: the parent writes" "$P" 'open("parent.txt", "w").write("parent")' '.status == "ok"'
bad "fork: the child's file is not in the parent" 404 not_found GET "/v1/sessions/$P/files/child.txt"
bad "fork: the parent's later file is not in the child" 404 not_found GET "/v1/sessions/$F/files/parent.txt"
raw "fork: the parent's shared file is its own" "$P" shared.txt "from the parent"
raw "fork: the child's shared file is its own" "$F" shared.txt "changed by the child"

# ---- a key's snapshots: listed, read, deleted (room under the cap) ----
expect "snapshots: listed, newest first (the fork's, then base), with their sizes" 200 \
	'(.snapshots | length) == 2 and .snapshots[1].id == "'"$SNAP"'" and .snapshots[1].name == "base" and
	 .snapshots[1].session_id == "'"$P"'" and .snapshots[1].language == "python" and .snapshots[1].files >= 1 and
	 .snapshots[1].size >= 15 and .snapshots[1].stored > 0 and (.snapshots[1].created_at | test("Z$")) and
	 .stored >= ([.snapshots[].stored] | add) and .cap == '$((CAP << 20)) GET /v1/snapshots
USED0=$(jq .stored <<<"$LAST")
expect "snapshots: one by id" 200 '.id == "'"$SNAP"'" and .name == "base"' GET "/v1/snapshots/$SNAP"
as "$KEY2" expect "snapshots: another key's list has none of them" 200 '.snapshots == []' GET /v1/snapshots
as "$KEY2" bad "snapshots: another key's, by id" 404 not_found GET "/v1/snapshots/$SNAP"
as "$KEY2" bad "snapshots: another key cannot delete it" 404 not_found DELETE "/v1/snapshots/$SNAP"
bad "snapshots: not an id" 404 not_found GET /v1/snapshots/nope
bad "snapshots: not an id (delete)" 404 not_found DELETE "/v1/snapshots/nope%27"
bad "snapshots: POST is not a method of it" 405 method_not_allowed POST "/v1/snapshots/$SNAP" '{}'
# a session starting from it (made so by hand: its worker holds it) keeps it
sql "UPDATE sessions SET status = 'starting' WHERE id = '$C1'"
bad "snapshots: kept while a session starts from it" 409 conflict DELETE "/v1/snapshots/$SNAP"
sql "UPDATE sessions SET status = 'ready' WHERE id = '$C1'"
SNAP_BLOB=$(sql "SELECT blob_id FROM session_images WHERE id = '$SNAP'")
expect "snapshots: delete" 200 '.deleted == true and .id == "'"$SNAP"'"' DELETE "/v1/snapshots/$SNAP"
expect "snapshots: gone from the list, its bytes freed" 200 \
	'(.snapshots | map(.id) | index("'"$SNAP"'") == null) and (.snapshots | length) == 1 and .stored < '"$USED0" \
	GET /v1/snapshots
bad "snapshots: a deleted one, by id" 404 not_found GET "/v1/snapshots/$SNAP"
bad "snapshots: deleted twice" 404 not_found DELETE "/v1/snapshots/$SNAP"
bad "snapshots: a deleted one starts no session" 404 not_found POST /v1/sessions "{\"from_snapshot\": \"$SNAP\"}"
raw "snapshots: the session made from it keeps its files" "$C1" shared.txt "from the parent"
left=$(sql "SELECT (SELECT count(*) FROM session_images WHERE id = '$SNAP') + (SELECT count(*) FROM blobs WHERE id = $SNAP_BLOB) + (SELECT count(*) FROM blob_chunks WHERE blob_id = $SNAP_BLOB)")
[ "$left" = 0 ] && pass "snapshots: its image, blob and chunks are gone from PostgreSQL" ||
	fail "snapshots: rows left after the delete" "$left"
for s in "$P" "$C1" "$F"; do req DELETE "/v1/sessions/$s" >/dev/null; done

# ---- an image tampered with in PostgreSQL ----
create python
T=$SID
cell "tamper: a file" "$T" 'open("t.txt", "w").write("t" * 100000)' '.status == "ok"'
expect "tamper: pause" 200 '.status == "paused"' POST "/v1/sessions/$T/pause"
# the worker keeps a copy of the image it stored, checked against the stored
# hashes on a resume there; another worker has none and reads PostgreSQL: so
# here, without the copy
copy="/run/judge/ckpt-$SVC_WORKER_PID-copy"
[ -f "$copy/head-$(sql "SELECT image_id FROM sessions WHERE id = '$T'")" ] &&
	pass "tamper: the worker keeps a copy of the image" || fail "tamper: the worker keeps a copy" "$copy"
rm -rf "$copy"
sql "UPDATE blob_chunks SET data = overlay(data placing '\\x00ff00ff'::bytea from 20) WHERE blob_id = (SELECT i.blob_id FROM session_images i JOIN sessions s ON s.image_id = i.id WHERE s.id = '$T') AND seq = 0"
expect "tamper: resume is a clear JSON error" 503 '.error.code == "session_failed" and
	(.error.message | test("damaged|SHA-256|inflate"))' POST "/v1/sessions/$T/resume"
expect "tamper: the session says why" 200 '.status == "failed" and (.reason | test("damaged"))' GET "/v1/sessions/$T"
create python
T2=$SID
cell "truncate: a file" "$T2" 'open("t.txt", "w").write("u" * 3000000)' '.status == "ok"'
expect "truncate: pause" 200 '.status == "paused"' POST "/v1/sessions/$T2/pause"
sql "DELETE FROM blob_chunks WHERE blob_id = (SELECT i.blob_id FROM session_images i JOIN sessions s ON s.image_id = i.id WHERE s.id = '$T2') AND seq > 0"
expect "truncate: the next call is a clear JSON error" 503 '.error.code == "session_failed" and
	(.error.message | test("truncated"))' POST "/v1/sessions/$T2/execute" '{"code": "1"}'
kill -0 "$SVC_WORKER_PID" 2>/dev/null && pass "the worker survives damaged images" || fail "worker alive"

# ---- blobs not marked complete: never read; left unfinished, swept ----
create python
T3=$SID
cell "unfinished: a file" "$T3" 'open("t.txt", "w").write("v")' '.status == "ok"'
expect "unfinished: pause" 200 '.status == "paused"' POST "/v1/sessions/$T3/pause"
sql "UPDATE blobs SET complete = false WHERE id = (SELECT i.blob_id FROM session_images i JOIN sessions s ON s.image_id = i.id WHERE s.id = '$T3')"
expect "unfinished: a blob not marked complete is never read" 503 '.error.code == "session_failed" and
	(.error.message | test("missing"))' POST "/v1/sessions/$T3/resume"
ub=$(sql "INSERT INTO blobs (size, stored, chunks, sha256, complete, created) VALUES (1, 1, 0, '', false, now() - interval '11 minutes') RETURNING id")
for _ in $(seq 40); do
	[ "$(sql "SELECT count(*) FROM blobs WHERE id = $ub")" = 0 ] && break
	sleep 0.5
done
[ "$(sql "SELECT count(*) FROM blobs WHERE id = $ub")" = 0 ] &&
	pass "unfinished: an old unfinished blob is swept" || fail "unfinished: an old unfinished blob is swept" "blob $ub"

# ---- a session that filled its disk ----
as "$KEY3" create python '"limits": {"disk_mb": 4}'
D=$SID
as "$KEY3" cell "disk: fill the folder" "$D" \
	$'import os\ntry:\n    with open("big.bin", "wb") as f:\n        while True:\n            f.write(os.urandom(65536))\nexcept OSError as e:\n    print("full", e.errno)' \
	'.stdout | startswith("full")'
as "$KEY3" expect "disk: a full session pauses" 200 '.status == "paused" and .size > 3000000' \
	POST "/v1/sessions/$D/pause"
as "$KEY3" expect "disk: ... and resumes (its folder as big as before)" 200 '.status == "ready" and .restarted == '$R \
	POST "/v1/sessions/$D/resume"
as "$KEY3" cell "disk: the file is back, as large" "$D" 'import os; os.path.getsize("big.bin") > 3000000' \
	'.result == "True"'

# ---- idle_action pause: idle, the session pauses; paused, it is kept 20 s ----
# wait_status NAME SID STATUS SECONDS: GET the session until it says STATUS
wait_status() {
	local i out
	for ((i = 0; i < $4 * 2; i++)); do
		out=$(req GET "/v1/sessions/$2")
		[ "$(jq -r .status <<<"${out%$'\n'*}" 2>/dev/null)" = "$3" ] && break
		sleep 0.5
	done
	LAST=${out%$'\n'*}
	expect_json "$1" "$LAST" ".status == \"$3\""
}
bad "idle_action: only close or pause" 422 invalid_field POST /v1/sessions \
	'{"language": "python", "idle_action": "sleep"}'
create python '"idle_ttl": 2, "idle_action": "pause"'
I=$SID
expect "idle_action: the session says it" 200 '.idle_action == "pause" and .idle_ttl == 2' GET "/v1/sessions/$I"
cell "idle_action: a file and a variable" "$I" $'open("idle.txt", "w").write("kept while idle")\nv = 7' '.status == "ok"'
wait_status "idle_action: idle past its idle_ttl, it is paused, not closed" "$I" paused 60
expect_json "idle_action: paused, it ends at its retention (20 s after the pause)" "$LAST" \
	'.reason == "" and ((.expires_at | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) - (.last_used_at | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601)) <= 21'
[ -n "$(sql "SELECT 1 FROM session_calls WHERE session_id = '$I' AND kind = 'pause' AND request->>'idle' = 'true' AND response ? 'reply'")" ] &&
	pass "idle_action: the worker's own pause call is in its history" ||
	fail "idle_action: no stored idle pause call"
cell "idle_action: the next call resumes it with its files" "$I" 'print(open("idle.txt").read())' \
	'.stdout == "kept while idle\n" and .restarted == '$R
wait_status "idle_action: idle again, it pauses again" "$I" paused 60
END=$(jq -r .expires_at <<<"$LAST")
expect "PATCH idle_ttl of a paused session: its end stays its retention's" 200 \
	'.status == "paused" and .idle_ttl == 30 and .expires_at == "'"$END"'"' PATCH "/v1/sessions/$I" '{"idle_ttl": 30}'
IMG=$(sql "SELECT image_id FROM sessions WHERE id = '$I'")
wait_status "retention: a paused session past it ends" "$I" expired 90
expect_json "retention: ... saying why" "$LAST" '.reason | test("paused for more than 20 s")'
bad "retention: it resumes no more" 410 session_expired POST "/v1/sessions/$I/resume"
for ((i = 0; i < 60; i++)); do
	left=$(sql "SELECT count(*) FROM session_images WHERE id = '$IMG'")
	[ "$left" = 0 ] && break
	sleep 0.5
done
[ "$left" = 0 ] && pass "retention: its image is deleted" || fail "retention: its image is still stored" "$IMG"
# a closed session's pause image goes too (its bytes count against the cap)
create python
Z=$SID
expect "closed: pause" 200 '.status == "paused"' POST "/v1/sessions/$Z/pause"
ZIMG=$(sql "SELECT image_id FROM sessions WHERE id = '$Z'")
expect "closed: close it while paused" 200 '.status == "closed"' DELETE "/v1/sessions/$Z"
for ((i = 0; i < 60; i++)); do
	left=$(sql "SELECT count(*) FROM session_images WHERE id = '$ZIMG'")
	[ "$left" = 0 ] && break
	sleep 0.5
done
[ "$left" = 0 ] && pass "closed: a closed session's pause image is deleted" ||
	fail "closed: its pause image is still stored" "$ZIMG"

# ---- the per-key cap (8 MiB compressed) ----
create python '"limits": {"disk_mb": '$((CAP + 24))'}'
B=$SID
# two files: one is at most 64 MB (the files' limit)
cell "cap: $((CAP + 2)) MB of random bytes" "$B" 'import os
for f in ("r1.bin", "r2.bin"): open(f, "wb").write(os.urandom('$((CAP / 2 + 1))' << 20))
kept = 7' '.status == "ok"'
bad "cap: a pause over the key's cap" 413 image_too_large POST "/v1/sessions/$B/pause"
expect "cap: the session goes on" 200 '.status == "ready"' GET "/v1/sessions/$B"
bad "cap: a snapshot over it too" 413 image_too_large POST "/v1/sessions/$B/snapshot"
cell "cap: the session still runs cells, its variables kept" "$B" '6 * kept' '.result == "42" and .restarted == false'

expect "history lists pause and snapshot calls" 200 '[.calls[].kind] | index("pause") != null and index("snapshot") != null' \
	GET "/v1/sessions/$B/history"
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/worker.log"
finish
