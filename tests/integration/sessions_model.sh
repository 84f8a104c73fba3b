#!/usr/bin/env bash
# sessions_model.sh: a session's code contexts and processes end to end against a
# real service (tests/svc.sh): contexts of two languages with their own state and
# the session's folder shared, a context's working directory, restart (state
# lost, id kept), remove, the limit; processes with argv, cwd and env, output
# streamed (SSE: start, stdout, stderr, done), stdin fed and closed, signals,
# waits, a lifetime, a list; everything in the one sandbox of the session
# (a cell sees a process, a process sees a cell's files); process calls that do
# not wait behind a running cell; close ending the processes; and the errors
# (404, 422, 429) of each. SESSIONS_SANDBOX=gvisor runs it on gVisor.
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
source tests/svc.sh
SANDBOX=${SESSIONS_SANDBOX:-native}

svc_up sessions-model "[sandbox]" "sandbox = $SANDBOX" "[worker]" "worker_slots = 1"

# run and cell: svc.sh's svc_run and svc_cell
run() { svc_run "$@"; }
cell() { svc_cell "$@"; }

out=$(req POST /v1/sessions '{"language": "python"}')
S=$(jq -r '.id // empty' <<<"${out%$'\n'*}")
[ -n "$S" ] && pass "create a python session" || { fail "create a python session" "$out"; finish; exit 1; }

# ---- code contexts ----
expect "the default context is listed" 200 \
	'.contexts == [{"id": "default", "language": "python", "cwd": ""}]' GET "/v1/sessions/$S/contexts"
expect "create a bash context: 201" 201 '.language == "bash" and .cwd == "" and (.id | test("^[0-9a-f]{16}$"))' \
	POST "/v1/sessions/$S/contexts" '{"language": "bash"}'
SH=$(jq -r .id <<<"$LAST")
expect "create a second python context (the session's language)" 201 '.language == "python"' \
	POST "/v1/sessions/$S/contexts" '{}'
P2=$(jq -r .id <<<"$LAST")
expect "list: the three, the default first" 200 \
	'[.contexts[].id] == ["default", "'"$SH"'", "'"$P2"'"]' GET "/v1/sessions/$S/contexts"
cell "default context: x = 1" "$S" 'x = 1' '.status == "ok"'
cell "the other python context has its own state" "$S" 'x' \
	'.status == "error" and .error.name == "NameError"' '"context": "'"$P2"'"'
cell "which it keeps" "$S" 'x = 2' '.status == "ok"' '"context": "'"$P2"'"'
cell "its x" "$S" 'x' '.result == "2"' '"context": "'"$P2"'"'
cell "the default's x is still 1" "$S" 'x' '.result == "1"'
cell "explicitly named: the default" "$S" 'x' '.result == "1"' '"context": "default"'
cell "bash context: a shell's state" "$S" 'cd /tmp; Y=7' '.status == "ok"' '"context": "'"$SH"'"'
cell "kept" "$S" 'echo "$Y $PWD"' '.stdout == "7 /tmp\n"' '"context": "'"$SH"'"'
cell "contexts share the session folder" "$S" 'open("shared.txt", "w").write("from python")' '.status == "ok"'
cell "the bash context reads it" "$S" 'cat /box/shared.txt' '.stdout == "from python"' '"context": "'"$SH"'"'
cell "contexts share the sandbox: a process of one" "$S" \
	$'import subprocess\np = subprocess.Popen(["/bin/sleep", "60"])\np.pid' '.status == "ok"'
cell "is seen by the other" "$S" 'pgrep -x sleep >/dev/null && echo seen' '.stdout == "seen\n"' \
	'"context": "'"$SH"'"'
cell "and ends when the first kills it" "$S" 'p.kill(); p.wait()' '.status == "ok"'
expect "upload into a folder" 200 '.size == 2' PUT "/v1/sessions/$S/files/work/a.txt" "hi"
expect "a context working in a folder" 201 '.cwd == "work"' POST "/v1/sessions/$S/contexts" \
	'{"language": "bash", "cwd": "work"}'
W=$(jq -r .id <<<"$LAST")
cell "its cells start there" "$S" 'pwd; cat a.txt' '.stdout == "/home/user/work\nhi"' '"context": "'"$W"'"'
expect "restart a context: 200, its id kept" 200 '.id == "'"$P2"'" and .language == "python"' \
	POST "/v1/sessions/$S/contexts/$P2/restart"
cell "its state is gone" "$S" 'x' '.error.name == "NameError"' '"context": "'"$P2"'"'
cell "the default's is not" "$S" 'x' '.result == "1"'
expect "remove a context" 200 '.id == "'"$W"'" and .removed == true' DELETE "/v1/sessions/$S/contexts/$W"
bad "a removed context: 404" 404 not_found POST "/v1/sessions/$S/execute" \
	'{"code": "pwd", "context": "'"$W"'"}'
bad "removed twice: 404" 404 not_found DELETE "/v1/sessions/$S/contexts/$W"
bad "the default context is not removed" 422 invalid_field DELETE "/v1/sessions/$S/contexts/default"
expect "the default context restarts" 200 '.id == "default"' POST "/v1/sessions/$S/contexts/default/restart"
cell "and loses its state" "$S" 'x' '.error.name == "NameError"'
bad "an unknown context: 404" 404 not_found POST "/v1/sessions/$S/execute" \
	'{"code": "1", "context": "nosuchcontext"}'
bad "a context id that cannot be one: 422" 422 invalid_field POST "/v1/sessions/$S/execute" \
	'{"code": "1", "context": "../x"}'
bad "a language without sessions" 422 unknown_language POST "/v1/sessions/$S/contexts" '{"language": "c"}'
# execute with a language: that language's default context, made at its first cell
cell "execute by language: a bash cell in a context made for it" "$S" 'Z=5; echo $Z' \
	'.status == "ok" and .stdout == "5\n"' '"language": "bash"'
cell "the next bash cell by language: the same context" "$S" 'echo "z=$Z"' '.stdout == "z=5\n"' \
	'"language": "bash"'
expect "it is listed, once" 200 '[.contexts[] | select(.language == "bash" and .cwd == "")] | length == 2' \
	GET "/v1/sessions/$S/contexts"
cell "language python: the session's own default context" "$S" $'x = 3\nx' '.result == "3"' \
	'"language": "python3"'
cell "which is the default" "$S" 'x' '.result == "3"'
bad "context and language together: 422" 422 invalid_field POST "/v1/sessions/$S/execute" \
	'{"code": "1", "context": "default", "language": "bash"}'
bad "execute in a language without sessions: 422" 422 unknown_language POST "/v1/sessions/$S/execute" \
	'{"code": "1", "language": "c"}'
bad "cwd outside the folder" 400 bad_path POST "/v1/sessions/$S/contexts" '{"cwd": "../etc"}'
bad "cwd that is no folder" 422 invalid_field POST "/v1/sessions/$S/contexts" '{"cwd": "nope"}'
bad "an unknown field" 422 invalid_field POST "/v1/sessions/$S/contexts" '{"shell": "zsh"}'
n=$(req GET "/v1/sessions/$S/contexts" | head -1 | jq '.contexts | length')
for _ in $(seq $((8 - n))); do req POST "/v1/sessions/$S/contexts" '{"language": "bash"}' >/dev/null; done
bad "a ninth context: 429" 429 too_many POST "/v1/sessions/$S/contexts" '{"language": "bash"}'
expect "eight are listed" 200 '.contexts | length == 8' GET "/v1/sessions/$S/contexts"

# ---- processes ----
# start NAME BODY: a process started (201); its pid in PID
start() {
	expect "$1" 201 '.pid > 0 and (.running | type == "boolean")' POST "/v1/sessions/$S/processes" "$2"
	PID=$(jq -r .pid <<<"$LAST")
}
start "start a process" '{"argv": ["bash", "-c", "echo hi; echo err >&2; exit 3"], "tag": "t1"}'
P1=$PID
expect "wait for its end" 200 '.running == false and .exit_code == 3 and .signal == null and .tag == "t1"' \
	GET "/v1/sessions/$S/processes/$P1?wait_ms=20000"
EV=$SVC_TMP/ev.out
python3 tests/clients/sse_client.py "$U/v1/sessions/$S/processes/$P1/events" --key "$KEY" --timeout 30 >"$EV" 2>&1
expect_json "its events: start, stdout, stderr, done with its end" "$(jq -s . "$EV")" \
	'([.[] | select(.event) | .event] | .[0] == "start" and .[-1] == "done") and
	([.[] | select(.event == "stdout") | .data | fromjson] | add) == "hi\n" and
	([.[] | select(.event == "stderr") | .data | fromjson] | add) == "err\n" and
	([.[] | select(.event == "done")][0].data | fromjson | .exit_code == 3 and .pid == '"$P1"')'
start "env, cwd and PATH" '{"argv": ["sh", "-c", "echo $FOO; pwd; python3 -c \"print(6*7)\""], "env": {"FOO": "bar"}, "cwd": "work"}'
expect "its end" 200 '.exit_code == 0' GET "/v1/sessions/$S/processes/$PID?wait_ms=20000"
python3 tests/clients/sse_client.py "$U/v1/sessions/$S/processes/$PID/events" --key "$KEY" --timeout 30 >"$EV" 2>&1
expect_json "its output: the env, the cwd, python3 found in PATH" "$(jq -s . "$EV")" \
	'([.[] | select(.event == "stdout") | .data | fromjson] | add) == "bar\n/home/user/work\n42\n"'
# stdout_of PID: a finished process's stdout
stdout_of() {
	python3 tests/clients/sse_client.py "$U/v1/sessions/$S/processes/$1/events" --key "$KEY" --timeout 30 |
		jq -rj 'select(.event == "stdout") | .data | fromjson'
}
# `bash -l -c env` (as E2B's commands.run sends it) starts without bash (sessd's
# shell shortcut); `exec env` goes through bash: the same environment, sorted,
# but for bash's _ (the program's path)
start "bash -l -c env" '{"argv": ["/bin/bash", "-l", "-c", "env"], "env": {"FOO": "bar"}, "cwd": "work"}'
QUICK=$PID
start "bash -l -c 'exec env'" '{"argv": ["/bin/bash", "-l", "-c", "exec env"], "env": {"FOO": "bar"}, "cwd": "work"}'
VIA_BASH=$PID
req GET "/v1/sessions/$S/processes/$QUICK?wait_ms=20000" >/dev/null
req GET "/v1/sessions/$S/processes/$VIA_BASH?wait_ms=20000" >/dev/null
A=$(stdout_of "$QUICK" | LC_ALL=C sort)
B=$(stdout_of "$VIA_BASH" | LC_ALL=C sort)
[ "$(grep -v '^_=' <<<"$A")" = "$B" ] && grep -qx '_=/usr/bin/env' <<<"$A" && grep -qx 'PWD=/home/user/work' <<<"$A" &&
	pass "a simple command under bash -l -c sees what bash gives it" ||
	fail "a simple command under bash -l -c sees what bash gives it" "$(diff <(echo "$A") <(echo "$B") | head -20)"
start "a process reading stdin" '{"argv": ["cat"], "stdin": true}'
CAT=$PID
expect "stdin fed" 200 '.pid == '"$CAT"' and .running == true' POST "/v1/sessions/$S/processes/$CAT/stdin" \
	'{"data": "piped\n"}'
expect "stdin fed as base64" 200 '.running == true' POST "/v1/sessions/$S/processes/$CAT/stdin" \
	'{"data": "bW9yZQo=", "encoding": "base64"}'
expect "stdin closed" 200 '.pid == '"$CAT" DELETE "/v1/sessions/$S/processes/$CAT/stdin"
expect "cat ends at EOF" 200 '.running == false and .exit_code == 0' \
	GET "/v1/sessions/$S/processes/$CAT?wait_ms=20000"
python3 tests/clients/sse_client.py "$U/v1/sessions/$S/processes/$CAT/events" --key "$KEY" --timeout 30 >"$EV" 2>&1
expect_json "what it read, in order" "$(jq -s . "$EV")" \
	'([.[] | select(.event == "stdout") | .data | fromjson] | add) == "piped\nmore\n"'
start "a long process" '{"argv": ["sleep", "60"]}'
SL=$PID
expect "the list shows it running" 200 '[.processes[] | select(.pid == '"$SL"')][0].running == true and
	([.processes[] | select(.pid == '"$P1"')][0].exit_code == 3)' GET "/v1/sessions/$S/processes"
cell "a cell sees the session's process" "$S" \
	'import os; any(b"sleep" in open(f"/proc/{p}/cmdline", "rb").read() for p in os.listdir("/proc") if p.isdigit())' \
	'.result == "True"'
expect "wait with a short wait: still running" 200 '.running == true' \
	GET "/v1/sessions/$S/processes/$SL?wait_ms=200"
expect "SIGTERM" 200 '.pid == '"$SL" POST "/v1/sessions/$S/processes/$SL/signal" '{"signal": "SIGTERM"}'
expect "it ended by the signal" 200 '.running == false and .signal == 15 and .exit_code == null' \
	GET "/v1/sessions/$S/processes/$SL?wait_ms=20000"
start "a process with a lifetime" '{"argv": ["sleep", "30"], "timeout_ms": 500}'
expect "killed at its end of life" 200 '.running == false and .signal == 9 and (.message | test("lifetime"))' \
	GET "/v1/sessions/$S/processes/$PID?wait_ms=20000"
start "a process writing a file" '{"argv": ["sh", "-c", "echo made > out.txt"]}'
req GET "/v1/sessions/$S/processes/$PID?wait_ms=20000" >/dev/null
[ "$(curl -s -m 30 "${AUTH[@]}" "$U/v1/sessions/$S/files/out.txt")" = made ] &&
	pass "its file, through the files API" || fail "its file, through the files API"
cell "and through a cell" "$S" 'open("out.txt").read().strip()' '.result == "'"'made'"'"'

# a process call does not wait behind a running cell
start "cat, for during a cell" '{"argv": ["cat"], "stdin": true}'
CAT2=$PID
( req POST "/v1/sessions/$S/execute" '{"code": "import time; time.sleep(4); 1"}' >"$SVC_TMP/long.out" ) &
LONG=$!
sleep 1
t0=$(date +%s%N)
req POST "/v1/sessions/$S/processes/$CAT2/stdin" '{"data": "x"}' >/dev/null
req DELETE "/v1/sessions/$S/processes/$CAT2/stdin" >/dev/null
out=$(req GET "/v1/sessions/$S/processes/$CAT2?wait_ms=10000")
t1=$(date +%s%N)
wait "$LONG"
expect_json "stdin, close and wait answered while a cell ran ($(((t1 - t0) / 1000000)) ms)" "${out%$'\n'*}" \
	'.running == false and .exit_code == 0'
[ "$(((t1 - t0) / 1000000))" -lt 2500 ] && pass "...before the cell ended" ||
	fail "...before the cell ended" "$(((t1 - t0) / 1000000)) ms"
expect_json "and the cell ran to its end" "$(head -1 "$SVC_TMP/long.out")" '.result == "1"'

bad "an unknown pid" 404 not_found GET "/v1/sessions/$S/processes/999"
bad "a pid that is not a number" 404 not_found GET "/v1/sessions/$S/processes/abc"
start "a process without stdin" '{"argv": ["sleep", "60"]}'
bad "stdin of a process without one" 422 invalid_field POST "/v1/sessions/$S/processes/$PID/stdin" '{"data": "x"}'
expect "SIGKILL" 200 '.pid == '"$PID" POST "/v1/sessions/$S/processes/$PID/signal" '{"signal": 9}'
bad "stdin of an ended process" 404 not_found POST "/v1/sessions/$S/processes/$P1/stdin" '{"data": "x"}'
bad "a signal to an ended process" 404 not_found POST "/v1/sessions/$S/processes/$P1/signal" '{"signal": "SIGKILL"}'
bad "an unknown signal" 422 invalid_field POST "/v1/sessions/$S/processes/$P1/signal" '{"signal": "SIGSEGV"}'
bad "no such program" 422 invalid_field POST "/v1/sessions/$S/processes" '{"argv": ["no-such-program-here"]}'
bad "argv missing" 422 missing_field POST "/v1/sessions/$S/processes" '{}'
bad "argv empty" 422 invalid_field POST "/v1/sessions/$S/processes" '{"argv": []}'
bad "a bad env name" 422 invalid_field POST "/v1/sessions/$S/processes" '{"argv": ["true"], "env": {"A-B": "1"}}'
bad "cwd outside" 400 bad_path POST "/v1/sessions/$S/processes" '{"argv": ["true"], "cwd": "/etc"}'
bad "a wait_ms that is not a number" 422 invalid_field GET "/v1/sessions/$S/processes/$P1?wait_ms=soon"
bad "events of an unknown pid" 404 not_found GET "/v1/sessions/$S/processes/999/events"

# ---- another key sees none of it ----
KEY2=$("$JUDGE" --config "$ini" keys create --name other 2>/dev/null)
req2() { local AUTH=(-H "Authorization: Bearer $KEY2"); req "$@"; }
EXPECT_REQ=req2
bad "another key: the contexts are 404" 404 not_found GET "/v1/sessions/$S/contexts"
bad "another key: the processes are 404" 404 not_found GET "/v1/sessions/$S/processes"
bad "another key: a process's events are 404" 404 not_found GET "/v1/sessions/$S/processes/$P1/events"
EXPECT_REQ=req

# ---- close ends the processes ----
start "a process running at the close" '{"argv": ["sleep", "60"]}'
LAST_PID=$PID
expect "close the session" 200 '.status == "closed"' DELETE "/v1/sessions/$S"
python3 tests/clients/sse_client.py "$U/v1/sessions/$S/processes/$LAST_PID/events" --key "$KEY" --timeout 30 >"$EV" 2>&1
expect_json "its events end with done: killed, the session ended" "$(jq -s . "$EV")" \
	'[.[] | select(.event == "done")][0].data | fromjson | .running == false and .signal == 9 and
	(.message | test("session"))'
bad "calls after the close: 410" 410 session_closed GET "/v1/sessions/$S/processes"

kill -0 "$MAIN_PID" 2>/dev/null && pass "serve still running" || fail "serve still running"
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/worker.log"
finish
