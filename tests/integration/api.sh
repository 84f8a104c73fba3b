#!/usr/bin/env bash
# api.sh: the HTTP API end to end: a real PostgreSQL, judge migrate, judge serve and
# judge worker (native, then gvisor), every endpoint, malformed requests, auth, 429,
# callbacks, and the server still healthy afterwards.
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
source tests/svc.sh

svc_pg_start || { fail "postgresql starts"; finish; exit 1; }
PORT=$(svc_port)
CB_PORT=$(svc_port)
U=http://127.0.0.1:$PORT
ini=$SVC_TMP/judge.ini
# changed from judge.ini (svc.sh): small size caps and batch, so that the limit checks
# below are cheap; a callback receiver of this suite; a 30 s wait cap; two native slots
svc_config "$ini" "listen = 127.0.0.1:$PORT" "auth = on" "max_wait_s = 30" \
	"callback_hosts = 127.0.0.1:$CB_PORT" "callback_attempts = 3" "max_tests = 20" \
	"max_body_kb = 256" "max_source_kb = 64" "max_stdin_kb = 64" "max_batch = 10" \
	"[worker]" "worker_slots = 2" "[sandbox]" "sandbox = native"
sed 's/^sandbox = native/sandbox = gvisor/' "$ini" >"$SVC_TMP/gvisor.ini"

check "migrate" "$JUDGE" --config "$ini" migrate
check "migrate twice" "$JUDGE" --config "$ini" migrate
KEY=$("$JUDGE" --config "$ini" keys create --name api-test 2>/dev/null)
KEY2=$("$JUDGE" --config "$ini" keys create --name to-revoke 2>/dev/null)
KEY3=$("$JUDGE" --config "$ini" keys create --name limited 2>/dev/null)
KEY4=$("$JUDGE" --config "$ini" keys create --name other-tenant 2>/dev/null)
[[ $KEY =~ ^jk_[0-9a-f]{40}$ ]] && pass "keys create prints a key" || fail "keys create" "$KEY"
"$JUDGE" --config "$ini" keys list >"$SVC_TMP/keys" 2>&1
if grep -q api-test "$SVC_TMP/keys" && ! grep -q "${KEY#jk_}" "$SVC_TMP/keys"; then
	pass "keys list shows names, never keys"
else
	fail "keys list" "$(cat "$SVC_TMP/keys")"
fi

# auth = off outside loopback is refused at start
# auth = off on a non-loopback address: the refusal under test
svc_config "$SVC_TMP/open.ini" "listen = 0.0.0.0:$(svc_port)" "auth = off"
svc_refused "auth off on 0.0.0.0 refused" "$SVC_TMP/open.ini" "loopback"

svc_serve "$ini" || { fail "serve starts"; finish; exit 1; }
MAIN_PID=$SVC_SERVE_PID
pass "serve starts"
svc_worker "$ini" || { fail "worker starts"; finish; exit 1; }

AUTH=(-H "Authorization: Bearer $KEY")
JSON=(-H "Content-Type: application/json")

PY_HELLO='{"language":"python","source":"print(\"hello\")","expected_output":"hello\n"}'
C_HELLO='{"language":"c","source":"#include <stdio.h>\nint main(void){puts(\"hello\");return 0;}","expected_output":"hello"}'

# ---- every endpoint, on one backend ($1) ----
endpoints() {
	local sb=$1 out id ids
	expect "$sb: execute_with_expected python accepted" 200 \
		'.status == "accepted" and (.id | type == "number")' \
		POST /v1/execute_with_expected "$PY_HELLO"
	expect "$sb: execute_with_expected c accepted" 200 '.status == "accepted"' \
		POST /v1/execute_with_expected "$C_HELLO"
	expect "$sb: wrong answer with feedback" 200 \
		'.status == "wrong_answer" and .feedback.line == 1' \
		POST /v1/execute_with_expected \
		'{"language":"python","source":"print(41)","expected_output":"42"}'
	expect "$sb: execute without expected: completed + stdout" 200 \
		'.status == "completed" and .stdout == "6\n"' \
		POST /v1/execute '{"language":"node","source":"console.log(2*3)"}'
	expect "$sb: execute with stdin" 200 '.status == "completed" and .stdout == "cba\n"' \
		POST /v1/execute '{"language":"python","source":"print(input()[::-1])","stdin":"abc\n"}'
	expect "$sb: compile error" 200 '.status == "compile_error"' \
		POST /v1/execute '{"language":"c","source":"int main(void){ return x; }"}'
	expect "$sb: python syntax error is a compile error with the message" 200 \
		'.status == "compile_error" and (.compile.output | contains("SyntaxError"))' \
		POST /v1/execute '{"language":"python","source":"print(\"unclosed\"\n"}'
	expect "$sb: runtime error" 200 '.status == "runtime_error" and .exit_code == 3' \
		POST /v1/execute '{"language":"python","source":"import sys; sys.exit(3)"}'
	expect "$sb: timeout from a request limit" 200 '.status == "timeout"' \
		POST /v1/execute '{"language":"python","source":"while True: pass","limits":{"time_ms":300}}'

	out=$(req POST /v1/submissions '{"language":"python","source":"a,b=map(int,input().split())\nprint(a+b)","tests":[{"name":"t1","stdin":"1 2","expected_output":"3"},{"name":"t2","stdin":"5 5","expected_output":"10"}]}')
	id=$(head -1 <<<"$out" | jq -r .id)
	[ "${out##*$'\n'}" = 201 ] && [[ $id =~ ^[0-9]+$ ]] && pass "$sb: submissions 201" ||
		fail "$sb: submissions 201" "$out"
	expect "$sb: GET submission ?wait" 200 \
		".id == $id and .status == \"accepted\" and (.result.tests | length) == 2" \
		GET "/v1/submissions/$id?wait=30"
	expect "$sb: GET submission without wait" 200 ".id == $id and .status == \"accepted\"" \
		GET "/v1/submissions/$id"

	out=$(req POST /v1/submissions '{"language":"python","source":"a,b=map(int,input().split())\nprint(a+b)","problem":"sum"}')
	id=$(head -1 <<<"$out" | jq -r .id)
	expect "$sb: problem submission accepted" 200 '.status == "accepted" and .problem == "sum"' \
		GET "/v1/submissions/$id?wait=60"
	out=$(req POST /v1/submissions '{"language":"cpp","source":"#include <iostream>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<a-b<<\"\\n\";}","problem":"sum","run_all_tests":true}')
	id=$(head -1 <<<"$out" | jq -r .id)
	expect "$sb: problem submission wrong_answer" 200 '.status == "wrong_answer"' \
		GET "/v1/submissions/$id?wait=60"

	out=$(req POST /v1/submissions/batch '{"submissions":[{"language":"python","source":"print(1)","expected_output":"1"},{"language":"c","source":"int main(void){return 1;}"},{"language":"python","source":"print(2)","expected_output":"1"}]}')
	ids=$(head -1 <<<"$out" | jq -r '.ids | map(tostring) | join(" ")')
	[ "${out##*$'\n'}" = 201 ] && [ "$(wc -w <<<"$ids")" = 3 ] && pass "$sb: batch 201 with 3 ids" ||
		fail "$sb: batch" "$out"
	local want=(accepted runtime_error wrong_answer) i=0
	for id in $ids; do
		expect "$sb: batch item $i" 200 ".status == \"${want[$i]}\"" GET "/v1/submissions/$id?wait=60"
		i=$((i + 1))
	done
}

endpoints native

expect "languages" 200 '[.languages[].name] | contains(["c","cpp","csharp","node","python"])' \
	GET /v1/languages
expect "problems" 200 '[.problems[].id] | index("sum") != null' GET /v1/problems
expect "problem sum: statement and samples" 200 \
	'.id == "sum" and (.statement | length > 0) and (.samples | length > 0) and (.samples[0].input | length > 0)' \
	GET /v1/problems/sum
out=$(req GET /v1/problems/sum)
if grep -q secret <<<"$out"; then fail "problem: no secret data" "$(head -c 300 <<<"$out")"; else
	pass "problem: no secret data"; fi
expect "health" 200 '.status == "ok"' GET /health
m=$(curl -s "$U/metrics")
for metric in 'judge_submissions{status="accepted"}' judge_queue_depth \
	'judge_http_request_duration_seconds_bucket{route="execute_with_expected",le="+Inf"}' \
	judge_sandbox_failures judge_execute_latency_seconds_count; do
	grep -qF "$metric" <<<"$m" && pass "metrics: $metric" || fail "metrics: $metric"
done

# idempotency: the same key gives the same submission
o1=$(curl -s "${AUTH[@]}" "${JSON[@]}" -H "Idempotency-Key: idem-1" "$U/v1/submissions" -d '{"language":"python","source":"print(1)"}')
o2=$(curl -s -w ' %{http_code}' "${AUTH[@]}" "${JSON[@]}" -H "Idempotency-Key: idem-1" "$U/v1/submissions" -d '{"language":"python","source":"print(1)"}')
[ "$(jq .id <<<"$o1")" = "$(jq .id <<<"${o2% *}")" ] && [ "${o2##* }" = 200 ] &&
	pass "idempotency key: same id, 200" || fail "idempotency key" "$o1 / $o2"

# ---- callbacks: a receiver on loopback records what it gets ----
PY=$(command -v python3 || echo /opt/judge/runtimes/python3.12/bin/python3)
cat >"$SVC_TMP/recv.py" <<'EOF'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    n = 0
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        H.n += 1
        if H.n == 1:  # the first attempt fails: the judge must retry
            self.send_response(500); self.end_headers(); return
        open(sys.argv[2], "ab").write(body + b"\n")
        self.send_response(204); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
"$PY" "$SVC_TMP/recv.py" "$CB_PORT" "$SVC_TMP/callbacks" &
SVC_PIDS+=($!)
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$CB_PORT/" && break; sleep 0.1; done
out=$(req POST /v1/submissions "{\"language\":\"python\",\"source\":\"print(7)\",\"expected_output\":\"7\",\"callback_url\":\"http://127.0.0.1:$CB_PORT/hook\"}")
cbid=$(head -1 <<<"$out" | jq -r .id)
for _ in $(seq 100); do [ -s "$SVC_TMP/callbacks" ] && break; sleep 0.1; done
if [ -s "$SVC_TMP/callbacks" ] && jq -e ".id == $cbid and .status == \"accepted\" and .result.status == \"accepted\"" "$SVC_TMP/callbacks" >/dev/null; then
	pass "callback delivered after a failed attempt"
else
	fail "callback delivered after a failed attempt" "$(cat "$SVC_TMP/callbacks" 2>/dev/null)"
fi
bad "callback host not allowed" 422 callback_not_allowed POST /v1/submissions \
	'{"language":"python","source":"print(1)","callback_url":"http://127.0.0.2:1/x"}'
# https follows the same allowlist (tests/integration/callbacks.sh delivers over TLS)
bad "callback https host not allowed" 422 callback_not_allowed POST /v1/submissions \
	"{\"language\":\"python\",\"source\":\"print(1)\",\"callback_url\":\"https://127.0.0.2:$CB_PORT/x\"}"
bad "callback userinfo" 422 invalid_field POST /v1/submissions \
	"{\"language\":\"python\",\"source\":\"print(1)\",\"callback_url\":\"https://127.0.0.1:$CB_PORT@127.0.0.2/x\"}"
bad "callback file://" 422 invalid_field POST /v1/submissions \
	'{"language":"python","source":"print(1)","callback_url":"file:///etc/passwd"}'

# ---- malformed requests ----
B=/v1/execute_with_expected
bad "invalid json" 400 invalid_json POST $B '{"language": "python",'
bad "empty body" 400 invalid_json POST $B ''
bad "trailing garbage" 400 invalid_json POST $B '{"language":"python","source":"x","expected_output":""} x'
bad "json array" 422 invalid_field POST $B '[1,2,3]'
bad "json number" 422 invalid_field POST $B '42'
bad "source wrong type" 422 invalid_field POST $B '{"language":"python","source":5,"expected_output":"1"}'
bad "language wrong type" 422 invalid_field POST $B '{"language":["python"],"source":"x","expected_output":"1"}'
bad "unknown language" 422 unknown_language POST $B '{"language":"cobol","source":"x","expected_output":"1"}'
bad "missing source" 422 missing_field POST $B '{"language":"python","expected_output":"1"}'
bad "empty source" 422 missing_field POST $B '{"language":"python","source":"","expected_output":"1"}'
bad "missing language" 422 missing_field POST $B '{"source":"x","expected_output":"1"}'
bad "missing expected output" 422 missing_field POST $B '{"language":"python","source":"x"}'
bad "unknown field" 422 invalid_field POST $B '{"language":"python","source":"x","expected_output":"1","sudo":true}'
bad "negative time limit" 422 invalid_field POST $B '{"language":"python","source":"x","expected_output":"1","limits":{"time_ms":-1}}'
bad "huge time limit" 422 invalid_field POST $B '{"language":"python","source":"x","expected_output":"1","limits":{"time_ms":1e18}}'
bad "huge memory limit" 422 invalid_field POST $B '{"language":"python","source":"x","expected_output":"1","limits":{"memory_mb":99999999}}'
bad "fractional limit" 422 invalid_field POST $B '{"language":"python","source":"x","expected_output":"1","limits":{"processes":2.5}}'
bad "limit as string" 422 invalid_field POST $B '{"language":"python","source":"x","expected_output":"1","limits":{"time_ms":"100"}}'
bad "unknown compare mode" 422 invalid_field POST $B '{"language":"python","source":"x","expected_output":"1","compare":"fuzzy"}'
bad "NUL in source" 422 invalid_field POST $B '{"language":"python","source":"a\u0000b","expected_output":"1"}'
bad "lone surrogate" 400 invalid_json POST $B '{"language":"python","source":"\ud800","expected_output":"1"}'
bad "invalid utf-8" 400 invalid_encoding POST $B "$(printf '{"language":"python","source":"\xff\xfe","expected_output":"1"}')"
bad "source too large" 413 too_large POST $B "{\"language\":\"python\",\"source\":\"$(head -c 70000 /dev/zero | tr '\0' a)\",\"expected_output\":\"1\"}"
bad "stdin too large" 413 too_large POST /v1/execute "{\"language\":\"python\",\"source\":\"x\",\"stdin\":\"$(head -c 70000 /dev/zero | tr '\0' a)\"}"
bad "too many tests" 413 too_large POST /v1/submissions "{\"language\":\"python\",\"source\":\"x\",\"tests\":[$(printf '{},%.0s' $(seq 20)){}]}"
bad "tests not an array" 422 invalid_field POST /v1/submissions '{"language":"python","source":"x","tests":{"a":1}}'
bad "test item wrong type" 422 invalid_field POST /v1/submissions '{"language":"python","source":"x","tests":["1"]}'
head -c 400000 /dev/zero | tr '\0' ' ' >"$SVC_TMP/huge"
bad "oversized body" 413 too_large POST $B "@$SVC_TMP/huge"
out=$(curl -s -w '\n%{http_code}' "${AUTH[@]}" "${JSON[@]}" -H "Transfer-Encoding: chunked" --data-binary @"$SVC_TMP/huge" "$U$B")
[ "${out##*$'\n'}" = 413 ] && pass "bad: oversized chunked body" || fail "bad: oversized chunked body" "$out"
# past HTTP_DRAIN_BYTES (16 MiB) the server stops reading a refused body and
# closes the connection: an endless upload does not keep it busy
t0=$SECONDS
timeout 60 cat /dev/zero | timeout 60 curl -s -o /dev/null "${AUTH[@]}" "${JSON[@]}" \
	-H "Transfer-Encoding: chunked" --data-binary @- "$U$B"
rc=$?
[ "$rc" != 124 ] && [ $((SECONDS - t0)) -lt 50 ] && pass "bad: endless chunked body cut off" ||
	fail "bad: endless chunked body cut off" "curl exit $rc after $((SECONDS - t0)) s"
out=$(curl -s -w '\n%{http_code}' "${AUTH[@]}" -H "Content-Type: text/plain" -d "$PY_HELLO" "$U$B")
[ "${out##*$'\n'}" = 415 ] && jq -e '.error.code == "unsupported_media_type"' <<<"${out%$'\n'*}" >/dev/null &&
	pass "bad: wrong content type" || fail "bad: wrong content type" "$out"
out=$(curl -s -w '\n%{http_code}' "${AUTH[@]}" -d "$PY_HELLO" "$U$B")
[ "${out##*$'\n'}" = 415 ] && pass "bad: form content type" || fail "bad: form content type" "$out"
bad "unknown submission id" 404 not_found GET /v1/submissions/987654321
bad "non-numeric submission id" 404 not_found GET /v1/submissions/abc
bad "huge submission id" 404 not_found GET /v1/submissions/99999999999999999999999
bad "bad wait" 400 invalid_field GET "/v1/submissions/1?wait=soon"
bad "problem path traversal" 422 invalid_field POST /v1/submissions '{"language":"python","source":"x","problem":"../../etc"}'
bad "problem absolute path" 422 invalid_field POST /v1/submissions '{"language":"python","source":"x","problem":"/etc/passwd"}'
bad "unknown problem" 422 unknown_problem POST /v1/submissions '{"language":"python","source":"x","problem":"no-such-problem"}'
bad "problem id dots" 404 unknown_problem GET /v1/problems/..
bad "problem id encoded slash" 404 not_found GET "/v1/problems/..%2f..%2fetc%2fpasswd"
bad "problem id uppercase" 404 unknown_problem GET /v1/problems/SUM
bad "unknown route" 404 not_found GET /v1/nothing
bad "wrong method" 405 method_not_allowed GET /v1/execute
bad "wrong method on GET route" 405 method_not_allowed DELETE /v1/submissions/1
bad "batch empty" 422 invalid_field POST /v1/submissions/batch '{"submissions":[]}'
bad "batch too big" 413 too_large POST /v1/submissions/batch "{\"submissions\":[$(printf '{},%.0s' $(seq 10)){}]}"
bad "batch bad item" 422 unknown_language POST /v1/submissions/batch '{"submissions":[{"language":"python","source":"x"},{"language":"x","source":"x"}]}'
bad "batch not an array" 422 missing_field POST /v1/submissions/batch '{"submissions":5}'
expect "still healthy after malformed requests" 200 '.status == "ok"' GET /health
expect "still grading after malformed requests" 200 '.status == "accepted"' POST $B "$PY_HELLO"

# ---- auth ----
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "$U/v1/languages")" = 401 ] && pass "auth: no key 401" || fail "auth: no key 401"
[ "$(code -H "Authorization: Bearer jk_0123456789012345678901234567890123456789" "$U/v1/languages")" = 401 ] &&
	pass "auth: bad key 401" || fail "auth: bad key 401"
[ "$(code -H "Authorization: Basic dXNlcjpwYXNz" "$U/v1/languages")" = 401 ] &&
	pass "auth: basic auth 401" || fail "auth: basic auth 401"
[ "$(code -H "Authorization: Bearer $KEY2" "$U/v1/languages")" = 200 ] &&
	pass "auth: second key works" || fail "auth: second key works"
id2=$("$JUDGE" --config "$ini" keys list 2>/dev/null | awk '$2 == "to-revoke" {print $1}')
check "keys revoke" "$JUDGE" --config "$ini" keys revoke "$id2"
# a second revoke finds no active key: an error, not a success
out=$("$JUDGE" --config "$ini" keys revoke "$id2" 2>&1) && fail "keys revoke twice" "exit 0" ||
	{ [[ $out == *"no active key"* ]] && pass "keys revoke twice" || fail "keys revoke twice" "$out"; }
sleep 2.5 # serve hears of the revoke through PostgreSQL (NOTIFY judge_keys, migrations/0008)
[ "$(code -H "Authorization: Bearer $KEY2" "$U/v1/languages")" = 401 ] &&
	pass "auth: revoked key 401" || fail "auth: revoked key 401"
# a submission of one key is not visible to another
sid=$(curl -s "${AUTH[@]}" "${JSON[@]}" "$U/v1/submissions" -d '{"language":"python","source":"print(1)"}' | jq .id)
[ "$(code -H "Authorization: Bearer $KEY3" "$U/v1/submissions/$sid")" = 404 ] &&
	pass "auth: other key's submission 404" || fail "auth: other key's submission 404"

# ---- 429: a second server with small limits ----
P2=$(svc_port)
# a low rate and in-flight cap: the admission control under test
svc_config "$SVC_TMP/limited.ini" "listen = 127.0.0.1:$P2" "rate_limit_per_min = 60" "max_in_flight = 2" "max_wait_s = 30"
if svc_serve "$SVC_TMP/limited.ini"; then
	L=http://127.0.0.1:$P2
	A3=(-H "Authorization: Bearer $KEY3")
	sid=$(curl -s "${A3[@]}" "${JSON[@]}" "$L/v1/submissions" -d '{"language":"python","source":"import time\ntime.sleep(3)"}' | jq .id)
	curl -s -o /dev/null "${A3[@]}" "$L/v1/submissions/$sid?wait=20" &
	w1=$!
	curl -s -o /dev/null "${A3[@]}" "$L/v1/submissions/$sid?wait=20" &
	w2=$!
	sleep 0.5
	hdr=$(curl -s -D - -o "$SVC_TMP/429.json" "${A3[@]}" "$L/v1/languages")
	if grep -q "^HTTP/1.1 429" <<<"$hdr" && grep -qi "^Retry-After: [0-9]" <<<"$hdr" &&
		jq -e '.error.code == "rate_limited"' "$SVC_TMP/429.json" >/dev/null; then
		pass "429: in-flight cap with Retry-After"
	else
		fail "429: in-flight cap with Retry-After" "$hdr"
	fi
	wait $w1 $w2
	# 10 requests from one curl on one connection: back to back even on a busy
	# machine, where 10 curl processes could take long enough to refill the bucket
	urls=()
	for _ in $(seq 10); do urls+=(-o /dev/null "$L/v1/languages"); done
	n429=$(curl -s "${A3[@]}" -w '%{http_code}\n' "${urls[@]}" | grep -c '^429$')
	[ "$n429" -ge 3 ] && pass "429: rate limit ($n429 of 10 refused)" || fail "429: rate limit" "$n429 of 10 refused"
	[ "$(code "${AUTH[@]}" "$L/v1/languages")" = 200 ] && pass "429: other keys unaffected" ||
		fail "429: other keys unaffected"
fi

# ---- 50 waiting clients on a server with 2 threads ----
sid=$(curl -s "${AUTH[@]}" "${JSON[@]}" "$U/v1/submissions" -d '{"language":"python","source":"import time\ntime.sleep(2)\nprint(1)"}' | jq .id)
waiters=()
for i in $(seq 50); do
	curl -s -m 40 "${AUTH[@]}" "$U/v1/submissions/$sid?wait=30" >"$SVC_TMP/wait.$i" &
	waiters+=($!)
done
sleep 0.3
expect "health answers while 50 clients wait" 200 '.status == "ok"' GET /health
wait "${waiters[@]}"
nok=$(cat "$SVC_TMP"/wait.* | jq -r 'select(.status == "completed") | .id' | wc -l)
[ "$nok" = 50 ] && pass "50 waiting clients all answered" || fail "50 waiting clients" "$nok of 50"

# gVisor reuse (gvisor_reuse = key, the default): the submissions of one API key may
# share a sandbox one after the other, those of two keys never. A sandbox's
# /proc/sys/kernel/random/boot_id is its sentry's own (random per sandbox).
BOOT='{"language":"python","source":"print(open(\"/proc/sys/kernel/random/boot_id\").read().strip())"}'
boot_id() { req POST /v1/execute "$BOOT" | head -1 | jq -r .stdout; }
reuse() {
	local a1 a2 b1 a3
	a1=$(boot_id)
	a2=$(boot_id)
	b1=$(AUTH=(-H "Authorization: Bearer $KEY4") && boot_id)
	a3=$(boot_id)
	if [[ $a1 =~ ^[0-9a-f-]{36}$ ]] && [ "$a1" = "$a2" ] && [ "$a3" = "$a1" ]; then
		pass "gvisor: submissions of one key share a sandbox"
	else
		fail "gvisor: submissions of one key share a sandbox" "$a1 / $a2 / $a3"
	fi
	if [[ $b1 =~ ^[0-9a-f-]{36}$ ]] && [ "$b1" != "$a1" ]; then
		pass "gvisor: another key's submission gets another sandbox"
	else
		fail "gvisor: another key's submission gets another sandbox" "$a1 / $b1"
	fi
}

# ---- the same endpoints on gvisor ----
svc_stop "$SVC_WORKER_PID"
if svc_worker "$SVC_TMP/gvisor.ini"; then
	endpoints gvisor
	reuse
else
	fail "gvisor worker starts" "$(tail -5 "$SVC_TMP/worker.log")"
fi

expect "healthy at the end" 200 '.status == "ok"' GET /health
svc_log_clean "$SVC_TMP/serve.log"
kill -0 "$MAIN_PID" 2>/dev/null && pass "serve still running" || fail "serve still running"
finish
