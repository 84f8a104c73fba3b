#!/usr/bin/env bash
# live_output.sh: live output over Server-Sent Events end to end, with a real
# PostgreSQL, judge serve and judge worker (native, then gVisor): output that
# arrives while the program runs, a late reader, Last-Event-ID, a slow reader
# that delays no one, a client that leaves mid-run, an output flood kept under
# the stream's cap, one test event per test, the compiler's output, keep-alives,
# key scoping, MCP's streamed tools/call (progress, cancellation), and a worker
# killed mid-run (restart).
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
source tests/svc.sh

SSE=tests/clients/sse_client.py
# changed from judge.ini (svc.sh): a 30 s wait cap, two native slots
svc_up live-output "max_wait_s = 30" "[worker]" "worker_slots = 2" "[sandbox]" "sandbox = native"
KEY2=$("$JUDGE" --config "$ini" keys create --name other 2>/dev/null)
psql_q() { "$SVC_PG_BIN/psql" "$SVC_DB_URL" -Atc "$1" 2>&1; }

# body SOURCE [JQ ARGS...]: a python request of SOURCE
body() { jq -nc --arg s "$1" '{language: "python", source: $s}'; }
SLEEPY=$(body $'import time\nprint("one", flush=True)\ntime.sleep(2.5)\nprint("two")')
# events FILE: the events of a client's output, as a JSON array
events() { jq -s '[.[] | select(.event)]' "$1"; }

# ---- output arrives while the program runs ----
# live_run NAME: the print / sleep 2.5 s / print program (2.5: under gVisor
# and the sanitizers the first line once came 0.7 s late) through POST
# /v1/execute with Accept: text/event-stream; sets LIVE_ID
live_run() {
	local name=$1 out=$SVC_TMP/live-$1
	python3 $SSE "$U/v1/execute" --key "$KEY" --post "$SLEEPY" >"$out"
	expect_json "$name: 200 text/event-stream with Location" "$(head -1 "$out")" \
		'.status == 200 and (.content_type | startswith("text/event-stream")) and
		 (.location | test("^/v1/submissions/[0-9]+$"))'
	LIVE_ID=$(head -1 "$out" | jq -r '.location | split("/") | last')
	local ev
	ev=$(events "$out")
	# (how output is cut into events is not fixed: under gVisor, bytes that
	# may begin the run's trailer wait for the next ones)
	expect_json "$name: stdout one, stdout two, test, done, in order" "$ev" \
		'[.[].event] == ["stdout", "stdout", "test", "done"] and
		 ([.[0,1].data | fromjson] | add) == "one\ntwo\n" and
		 (.[0].data | fromjson | startswith("one")) and
		 ([.[].id] | . == sort and (unique | length) == 4)'
	expect_json "$name: the first line comes > 1 s before done" "$ev" \
		'(.[-1].t - .[0].t) > 1.0'
	expect_json "$name: done carries the result and id" "$ev" \
		".[-1].data | fromjson | .status == \"completed\" and .stdout == \"one\ntwo\n\" and
		 .id == $LIVE_ID"
	# done is the answer a plain execute gives: the result JSON plus id
	local sub
	sub=$(curl -s "${AUTH[@]}" "$U/v1/submissions/$LIVE_ID")
	expect_json "$name: done is the stored result + id" "$ev" \
		".[-1].data | fromjson | . == ($sub | .result + {id: .id})"
}
live_run native

# ---- a late reader gets everything; Last-Event-ID resumes ----
python3 $SSE "$U/v1/submissions/$LIVE_ID/events" --key "$KEY" >"$SVC_TMP/late"
LIVE=$(events "$SVC_TMP/live-native")
LATE=$(events "$SVC_TMP/late")
expect_json "late reader: the same events, ids and data" "$LATE" \
	"[.[] | {id, event, data}] == ($LIVE | [.[] | {id, event, data}])"
FIRST=$(jq '.[0].id' <<<"$LIVE")
python3 $SSE "$U/v1/submissions/$LIVE_ID/events" --key "$KEY" --last-event-id "$FIRST" \
	>"$SVC_TMP/resume"
expect_json "Last-Event-ID: the events after it" "$(events "$SVC_TMP/resume")" \
	"[.[] | {id, event, data}] == ($LIVE | .[1:] | [.[] | {id, event, data}])"
DONE_ID=$(jq '.[-1].id' <<<"$LIVE")
python3 $SSE "$U/v1/submissions/$LIVE_ID/events" --key "$KEY" --last-event-id "$DONE_ID" \
	>"$SVC_TMP/after-done"
expect_json "Last-Event-ID of done: 204, so an EventSource stops reconnecting" \
	"$(head -1 "$SVC_TMP/after-done")" '.status == 204'
python3 $SSE "$U/v1/submissions/$LIVE_ID/events" --key "$KEY" --last-event-id 999999999999 \
	>"$SVC_TMP/after-all"
expect_json "a Last-Event-ID the judge never gave: 400" "$(head -1 "$SVC_TMP/after-all")" \
	'.status == 400 and (.body | fromjson | .error.code == "invalid_field")'
python3 $SSE "$U/v1/submissions/$LIVE_ID" --key "$KEY" >"$SVC_TMP/accept"
expect_json "GET /v1/submissions/{id} with Accept: text/event-stream streams too" \
	"$(events "$SVC_TMP/accept")" "length == 4 and .[3].event == \"done\""
hd=$(curl -s -m 10 -I "${AUTH[@]}" "$U/v1/submissions/$LIVE_ID/events" | tr -d '\r')
grep -qi '^content-type: text/event-stream' <<<"$hd" && grep -q '^HTTP/1.1 200' <<<"$hd" &&
	pass "HEAD on events: 200 text/event-stream, at once" || fail "HEAD on events" "$hd"
# a plain GET is unchanged
expect "plain GET /v1/submissions/{id} is still JSON" 200 ".id == $LIVE_ID and .status == \"completed\"" \
	GET "/v1/submissions/$LIVE_ID"

# ---- key scoping and bad requests ----
python3 $SSE "$U/v1/submissions/$LIVE_ID/events" --key "$KEY2" >"$SVC_TMP/other"
expect_json "another key's events: 404" "$(head -1 "$SVC_TMP/other")" \
	'.status == 404 and (.body | fromjson | .error.code == "not_found")'
python3 $SSE "$U/v1/submissions/99999999/events" --key "$KEY" >"$SVC_TMP/unknown"
expect_json "unknown id: 404" "$(head -1 "$SVC_TMP/unknown")" \
	'.status == 404 and (.body | fromjson | .error.code == "not_found")'
bad "events of a malformed id" 404 not_found GET "/v1/submissions/abc/events"
# raw GET PATH [CURL ARGS...]: a request without the suite's key
raw() { curl -s -m 20 -w '\n%{http_code}' "${@:3}" "$U$2"; }
EXPECT_REQ=raw bad "events without a key" 401 unauthorized GET "/v1/submissions/$LIVE_ID/events"
EXPECT_REQ=raw bad "a malformed Last-Event-ID" 400 invalid_field GET "/v1/submissions/$LIVE_ID/events" \
	"${AUTH[@]}" -H "Last-Event-ID: x1"
bad "POST on events" 405 method_not_allowed POST "/v1/submissions/$LIVE_ID/events" '{}'
python3 $SSE "$U/v1/execute" --key "$KEY" --post '{"language": "cobol-2077", "source": "x"}' \
	>"$SVC_TMP/badreq"
expect_json "a bad request with Accept: text/event-stream is still a 4xx JSON error" \
	"$(head -1 "$SVC_TMP/badreq")" '.status == 422 and (.body | fromjson | .error.code | length > 0)'

# ---- one test event per test ----
TESTS=$(jq -nc '{language: "python", source: "print(int(input()) * 2)", run_all_tests: true,
	tests: [{name: "a", stdin: "1", expected_output: "2"}, {name: "b", stdin: "2", expected_output: "5"},
		{name: "c", stdin: "3", expected_output: "6"}]}')
python3 $SSE "$U/v1/execute_with_expected" --key "$KEY" --post "$TESTS" >"$SVC_TMP/tests"
expect_json "inline tests: a test event per test, each after its output, then done" \
	"$(events "$SVC_TMP/tests")" \
	'[.[] | select(.event == "test") | .data | fromjson | [.name, .status]] ==
	 [["a", "accepted"], ["b", "wrong_answer"], ["c", "accepted"]] and
	 [.[].event] == ["stdout", "test", "stdout", "test", "stdout", "test", "done"] and
	 (.[-1].data | fromjson | .status == "wrong_answer" and (.tests | length) == 3)'
PROB=$(jq -nc --arg s $'a, b = map(int, input().split())\nprint(a + b)' \
	'{language: "python", source: $s, problem: "sum"}')
python3 $SSE "$U/v1/submissions" --key "$KEY" --post "$PROB" >"$SVC_TMP/problem"
NTESTS=$(ls problems/sum/data/sample/*.in problems/sum/data/secret/*/*.in | wc -l)
expect_json "a problem package (POST /v1/submissions streamed): $NTESTS test events, accepted" \
	"$(events "$SVC_TMP/problem")" \
	"[.[] | select(.event == \"test\")] | length == $NTESTS and all(.data | fromjson | .status == \"accepted\")"
expect_json "... and done says accepted" "$(events "$SVC_TMP/problem")" \
	'.[-1].event == "done" and (.[-1].data | fromjson | .status == "accepted")'

# ---- the compiler's output streams too ----
CBAD=$(jq -nc '{language: "c", source: "int main(void) { return nosuch; }\n"}')
python3 $SSE "$U/v1/execute" --key "$KEY" --post "$CBAD" >"$SVC_TMP/compile"
expect_json "a compile error: the compiler's output as compile events, then done" \
	"$(events "$SVC_TMP/compile")" \
	'([.[] | select(.event == "compile") | .data | fromjson] | add | contains("nosuch")) and
	 .[-1].event == "done" and (.[-1].data | fromjson | .status == "compile_error") and
	 ([.[].event] | index("done") == length - 1)'

# ---- a slow reader delays no one ----
# it reads nothing for 3 s while its program writes 2 MiB (more than socket
# buffers hold); meanwhile another submission is answered at once
FLOODY=$(body $'import sys\nfor i in range(2048):\n    sys.stdout.write(str(i).rjust(1023) + "\\n")')
python3 $SSE "$U/v1/execute" --key "$KEY" --post "$FLOODY" --stall 20 >"$SVC_TMP/slow" &
SLOW_PID=$!
sleep 0.5
t0=$(date +%s.%N)
expect "another execute while a reader stalls" 200 '.status == "completed" and .stdout == "hi\n"' \
	POST /v1/execute "$(body 'print("hi")')"
took=$(echo "$(date +%s.%N) - $t0" | bc)
# the reader stalls 20 s: an answer well before that did not wait for it
[ "$(echo "$took < 15" | bc)" = 1 ] && pass "... answered in ${took}s, not after the stall" ||
	fail "another execute was delayed by a slow reader" "${took}s"
wait "$SLOW_PID"
# 2 MiB in a burst: the stream keeps at most 1 MiB (the cap, or the backlog
# when PostgreSQL lags the program), then one truncated marker
expect_json "the slow reader gets all it missed, then done" "$(events "$SVC_TMP/slow")" \
	'([.[] | select(.event == "stdout") | .data | fromjson] | add | length) as $n |
	 $n > 0 and $n <= 1048576 and (.[-1].event == "done") and (.[0].t >= 20) and
	 ([.[] | select(.event == "truncated")] | length == 1) and
	 (.[-1].data | fromjson | .status == "completed" and (.stdout | length) == 2097152)'

# ---- a client that leaves mid-run: the run completes, its result is stored ----
python3 $SSE "$U/v1/execute" --key "$KEY" --post "$SLEEPY" --close-after 1 >"$SVC_TMP/gone"
GONE_ID=$(head -1 "$SVC_TMP/gone" | jq -r '.location | split("/") | last')
expect_json "the leaving client got the first line only" "$(events "$SVC_TMP/gone")" \
	'length == 1 and (.[0].data | fromjson) == "one\n"'
expect "its run completes and is stored" 200 \
	'.status == "completed" and .result.stdout == "one\ntwo\n"' GET "/v1/submissions/$GONE_ID?wait=20"
python3 $SSE "$U/v1/submissions/$GONE_ID/events" --key "$KEY" >"$SVC_TMP/gone-late"
expect_json "... and its stream is whole" "$(events "$SVC_TMP/gone-late")" \
	'[.[].event] == ["stdout", "stdout", "test", "done"]'

# ---- an output flood: output_limit, and the stream stays under its cap ----
FLOOD=$(jq -nc '{language: "python", source: "import sys\nwhile True: sys.stdout.write(\"x\" * 65536)",
	limits: {output_kb: 4096}}')
python3 $SSE "$U/v1/execute" --key "$KEY" --post "$FLOOD" >"$SVC_TMP/flood"
FLOOD_ID=$(head -1 "$SVC_TMP/flood" | jq -r '.location | split("/") | last')
expect_json "a flood ends output_limit, with one truncated marker" "$(events "$SVC_TMP/flood")" \
	'(.[-1].data | fromjson | .status == "output_limit") and
	 ([.[] | select(.event == "truncated")] | length == 1)'
stored=$(psql_q "SELECT coalesce(sum(length(data)), 0) FROM output_chunks WHERE stream = 'sub:$FLOOD_ID'")
[ "$stored" -gt 0 ] 2>/dev/null && [ "$stored" -lt $((1024 * 1024 + 65536)) ] &&
	pass "the flood's stored chunks stay under the cap ($stored bytes)" ||
	fail "the flood's stored chunks stay under the cap" "$stored"

# ---- MCP: a tools/call with a progress token streams; cancelled, it ends ----
MCP_CALL=$(jq -nc --arg s "$(jq -r .source <<<"$SLEEPY")" '{jsonrpc: "2.0", id: 77, method: "tools/call",
	params: {name: "execute", arguments: {language: "python", source: $s}, _meta: {progressToken: "p1"}}}')
python3 $SSE "$U/mcp" --key "$KEY" --post "$MCP_CALL" >"$SVC_TMP/mcp-live"
expect_json "mcp: progress notifications with the output, then the reply" "$(events "$SVC_TMP/mcp-live")" \
	'[.[].data | fromjson] | (.[0].method == "notifications/progress" and .[0].params.progressToken == "p1" and
	 .[0].params.message == "stdout: one\n" and .[-1].id == 77 and
	 .[-1].result.structuredContent.stdout == "one\ntwo\n" and .[-1].result.isError == false and
	 ([.[:-1][].params.progress] | . == sort and length >= 3))'
expect_json "mcp: the first progress comes > 1 s before the reply" "$(events "$SVC_TMP/mcp-live")" \
	'(.[-1].t - .[0].t) > 1.0'
python3 $SSE "$U/mcp" --key "$KEY" --post "${MCP_CALL/\"id\":77/\"id\":78}" >"$SVC_TMP/mcp-cancel" &
CANCEL_PID=$!
for _ in $(seq 100); do grep -q progress "$SVC_TMP/mcp-cancel" 2>/dev/null && break; sleep 0.05; done
st=$(curl -s -o /dev/null -w '%{http_code}' "${AUTH[@]}" "${JSON[@]}" "$U/mcp" \
	--data-binary '{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 78}}')
[ "$st" = 202 ] && pass "mcp: notifications/cancelled is a 202" || fail "mcp: notifications/cancelled" "$st"
wait "$CANCEL_PID"
# "at once": before the program's second line, 2.5 s after its first (no
# duration is asserted: the machine may be loaded)
expect_json "mcp: the cancelled call's stream ends at once, with no reply" \
	"$(jq -s '{ev: .}' "$SVC_TMP/mcp-cancel")" \
	'(.ev[-1].end == true) and ([.ev[] | select(.data) | .data | fromjson | select(.id == 78)] | length == 0) and
	 ([.ev[] | select(.data) | .data | fromjson | select(.params.message? == "stdout: two\n")] | length == 0)'
CID=$(head -1 "$SVC_TMP/mcp-cancel" | jq -r '.location | split("/") | last')
expect "mcp: the cancelled call's run completes and is stored" 200 \
	'.status == "completed" and .result.stdout == "one\ntwo\n"' GET "/v1/submissions/$CID?wait=20"

# ---- keep-alives while nothing happens (no worker: the run stays queued) ----
svc_stop "$SVC_WORKER_PID"
Q=$(req POST /v1/submissions "$(body 'print("late")')")
QID=$(head -1 <<<"$Q" | jq -r .id)
python3 $SSE "$U/v1/submissions/$QID/events" --key "$KEY" --comments --timeout 60 >"$SVC_TMP/ka" &
KA_PID=$!

# ---- gVisor: the same live output (its stream's trailer is never shown) ----
sed 's/^sandbox = native/sandbox = gvisor/' "$ini" >"$SVC_TMP/gvisor.ini"
# a keep-alive is due after 15 s: wait for it (up to 45 s on a loaded machine)
for _ in $(seq 90); do grep -q '"comment"' "$SVC_TMP/ka" 2>/dev/null && break; sleep 0.5; done
expect_json "a keep-alive comment after 15 s of nothing" "$(cat "$SVC_TMP/ka")" \
	'select(.comment) | .comment == "keep-alive" and .t > 14'
svc_worker "$SVC_TMP/gvisor.ini" || fail "gvisor worker starts"
wait "$KA_PID"
expect_json "the queued submission streams once a worker takes it" "$(events "$SVC_TMP/ka")" \
	'[.[].event] == ["stdout", "test", "done"] and (.[0].data | fromjson) == "late\n"'
live_run gvisor

# ---- a worker lost mid-run: restart, then the new attempt's output ----
svc_stop "$SVC_WORKER_PID"
# one slot, and a lease that runs out 2 s after its worker is gone (the loss under test)
sed -e 's/^worker_slots = .*/worker_slots = 1/' -e 's/^lease_s = .*/lease_s = 2/' \
	-e 's/^reap_interval_s = .*/reap_interval_s = 1/' "$ini" >"$SVC_TMP/lease.ini"
svc_worker "$SVC_TMP/lease.ini" || fail "short-lease worker starts"
LOST=$SVC_WORKER_PID
python3 $SSE "$U/v1/execute" --key "$KEY" --post "$SLEEPY" >"$SVC_TMP/restart" &
RESTART_PID=$!
for _ in $(seq 300); do grep -q stdout "$SVC_TMP/restart" 2>/dev/null && break; sleep 0.05; done
# killed first: the program's next line is 2.5 s away, and starting the second
# worker first took longer than that on a loaded machine (the run ended whole)
kill -KILL "$LOST"
svc_worker "$SVC_TMP/lease.ini" || fail "second worker starts"
wait "$RESTART_PID"
expect_json "a lost worker: its output, restart (attempt 2), the new attempt's, done" \
	"$(events "$SVC_TMP/restart")" \
	'[.[].event] == ["stdout", "restart", "stdout", "stdout", "test", "done"] and
	 (.[1].data | fromjson | .attempt == 2) and
	 ([.[2,3].data | fromjson] | add) == "one\ntwo\n" and
	 (.[-1].data | fromjson | .status == "completed" and .stdout == "one\ntwo\n")'

kill -0 "$MAIN_PID" 2>/dev/null && pass "serve still running" || fail "serve still running"
# stopped first: a sanitizer build reports leaks at exit
for p in "${SVC_PIDS[@]}"; do svc_stop "$p"; done
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/worker.log"
finish
