#!/usr/bin/env bash
# abuse.sh: requests and faults api.sh does not send, against a real judge serve
# (native worker): raw HTTP framing (refused before the body, conflicting
# Content-Length, unknown Transfer-Encoding, %00, pipelining, HTTP/1.0), idle and
# half-sent connections, odd ?wait values and Authorization headers, JSON the
# validator must refuse (callback URL with CR/LF, bad regex, huge numbers, batch
# bodies, reused idempotency keys), clients that go away while they wait; and
# after all of it the server still healthy, with nothing left in flight.
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
source tests/svc.sh

# no per-address cap: 600 connections from 127.0.0.1 below (http.sh tests the cap)
svc_up abuse "max_wait_s = 10" "callback_hosts = 127.0.0.1:9" "max_body_kb = 64" "max_batch = 5" \
	"http_threads = 2" "max_in_flight = 8" "http_max_conns_per_ip = 0" "[worker]" "worker_slots = 2" \
	"[sandbox]" "sandbox = native"

PY=$(command -v python3 || echo /opt/judge/runtimes/python3.12/bin/python3)
AH="Authorization: Bearer $KEY"

# raw TIMEOUT_S: sends stdin as it is to the server, prints what comes back
# until the server closes, then "<<TIMEOUT>>" if it did not close in time.
cat >"$SVC_TMP/raw.py" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(float(sys.argv[2]))
s.sendall(sys.stdin.buffer.read())
out = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
except socket.timeout:
    out += b"\n<<TIMEOUT>>"
sys.stdout.write(out.decode("latin-1"))
EOF
raw() { "$PY" "$SVC_TMP/raw.py" "$PORT" "$1"; }
# rq FORMAT ARGS...: printf's the request for the next raw_expect
rq() { printf "$@" >"$SVC_TMP/req"; }
# raw_expect NAME TIMEOUT STATUS CODE: sends the request of rq; the answer must
# come before the timeout, with STATUS and the error JSON with CODE. (Not in a
# pipeline: pass/fail must count in this shell.)
raw_expect() {
	local name=$1 to=$2 want=$3 code=$4 out
	out=$(raw "$to" <"$SVC_TMP/req")
	if grep -q "<<TIMEOUT>>" <<<"$out" || ! head -1 <<<"$out" | grep -q "^HTTP/1.1 $want "; then
		fail "$name" "want $want within ${to}s, got: $(head -c 300 <<<"$out")"
		return
	fi
	expect_json "$name" "$(tail -1 <<<"$out")" \
		".error.code == \"$code\" and (.error.message | length > 0)"
}

in_flight() { curl -s "$U/metrics" | awk '$1 == "judge_http_in_flight" {print $2}'; }

PY_OK='{"language":"python","source":"print(1)","expected_output":"1"}'
P='"language":"python","source":"print(1)"'

# ---- HTTP framing ----
# a request the headers already refuse is answered before its body comes:
# the server must not buffer the body of a client without a key
rq 'POST /v1/execute HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n{'
raw_expect "no key: 401 before the body is read" 3 401 unauthorized
rq 'PUT /v1/execute HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n{'
raw_expect "wrong method: 405 before the body is read" 3 405 method_not_allowed
rq 'POST /v1/nothing HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n{'
raw_expect "unknown route: 404 before the body is read" 3 404 not_found
rq 'POST /v1/execute HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Type: text/plain\r\nContent-Length: 60000\r\n\r\n{' "$AH"
raw_expect "wrong content type: 415 before the body is read" 3 415 unsupported_media_type
rq 'POST /v1/execute HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nContent-Length: 3\r\n\r\n%s' \
	"$AH" ${#PY_OK} "$PY_OK"
raw_expect "conflicting Content-Length: 400" 3 400 bad_request
rq 'POST /v1/execute HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n' \
	"$AH" ${#PY_OK} "$PY_OK"
raw_expect "Content-Length with chunked: 400" 3 400 bad_request
rq 'POST /v1/execute HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip\r\n\r\n%s' \
	"$AH" "$PY_OK"
raw_expect "unknown Transfer-Encoding: 400, no hang" 3 400 bad_request
out=$(printf 'POST /v1/execute_with_expected HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Type: application/json; charset=UTF-8\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n%x\r\n%s\r\n0\r\n\r\n' \
	"$AH" ${#PY_OK} "$PY_OK" | raw 20)
grep -q '^HTTP/1.1 200 ' <<<"$out" && expect_json "chunked body without Content-Length" \
	"$(tail -1 <<<"$out")" '.status == "accepted"' ||
	fail "chunked body without Content-Length" "$(head -c 300 <<<"$out")"
out=$(printf 'GET /health HTTP/1.1\r\nHost: x\r\n\r\nPOST /v1/execute_with_expected HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%sGET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' \
	"$AH" ${#PY_OK} "$PY_OK" | raw 20)
[ "$(grep -o '^HTTP/1.1 [0-9]*' <<<"$out" | tr '\n' ' ')" = "HTTP/1.1 200 HTTP/1.1 200 HTTP/1.1 404 " ] &&
	pass "three pipelined requests answered in order" ||
	fail "three pipelined requests answered in order" "$(grep '^HTTP' <<<"$out")"
out=$(printf 'GET /health HTTP/1.0\r\n\r\n' | raw 3)
grep -q '^HTTP/1.1 200 ' <<<"$out" && ! grep -q TIMEOUT <<<"$out" && pass "HTTP/1.0 request" ||
	fail "HTTP/1.0 request" "$out"
hdr=$(curl -s -D - -o /dev/null -X OPTIONS "${AUTH[@]}" "$U/v1/execute")
grep -q '^HTTP/1.1 405' <<<"$hdr" && grep -qi '^Allow: POST' <<<"$hdr" && pass "OPTIONS: 405 with Allow" ||
	fail "OPTIONS: 405 with Allow" "$hdr"
[ "$(curl -s -I -o /dev/null -w '%{http_code}' "$U/health")" = 200 ] && pass "HEAD /health" || fail "HEAD /health"

# ---- paths and query strings ----
sid=$(req POST /v1/submissions "{$P}" | head -1 | jq -r .id)
bad "%00 in a submission id" 404 not_found GET "/v1/submissions/$sid%00x"
bad "%00 after a route" 404 not_found GET "/health%00"
bad "%00 in a query value" 400 invalid_field GET "/v1/submissions/$sid?wait=1%00"
bad "trailing slash" 404 not_found GET /v1/languages/
bad "double slash" 404 not_found GET //v1/languages
bad "percent-encoded dots" 404 unknown_problem GET "/v1/problems/%2e%2e"
for w in -1 1e9 abc "" 99999999999999999999 0x10 %20%2B1 1.5; do
	bad "wait=$w" 400 invalid_field GET "/v1/submissions/$sid?wait=$w"
done
bad "SQL in an id" 404 not_found GET "/v1/submissions/1%27%20OR%201=1"

# ---- Authorization variants ----
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code -H "authorization: bearer $KEY" "$U/v1/languages")" = 200 ] &&
	pass "auth: lower-case header and scheme" || fail "auth: lower-case header and scheme"
[ "$(code -H "Authorization: Bearer $KEY junk" "$U/v1/languages")" = 401 ] &&
	pass "auth: junk after the key 401" || fail "auth: junk after the key 401"
[ "$(code -H "Authorization: Bearer $KEY   " "$U/v1/languages")" = 200 ] &&
	pass "auth: spaces after the key" || fail "auth: spaces after the key"
[ "$(code -H "Authorization: Bearer " "$U/v1/languages")" = 401 ] &&
	pass "auth: empty token 401" || fail "auth: empty token 401"
[ "$(code -H "Authorization: Bearer $(head -c 6000 /dev/zero | tr '\0' k)" "$U/v1/languages")" = 401 ] &&
	pass "auth: long token 401" || fail "auth: long token 401"
[ "$(code -H "$(printf 'Authorization: Bearer jk_\xff\xfe\xc3\xa9')" "$U/v1/languages")" = 401 ] &&
	pass "auth: non-ASCII token 401" || fail "auth: non-ASCII token 401"

# ---- bodies the validator must refuse ----
B=/v1/execute_with_expected
bad "callback_url with CR/LF in the query" 422 invalid_field POST /v1/submissions \
	"{$P,\"callback_url\":\"http://127.0.0.1:9?x\\r\\nX-Evil: 1\"}"
bad "callback_url with a space in the query" 422 invalid_field POST /v1/submissions \
	"{$P,\"callback_url\":\"http://127.0.0.1:9?a b\"}"
bad "callback_url with user info" 422 invalid_field POST /v1/submissions \
	"{$P,\"callback_url\":\"http://u@127.0.0.1:9/x\"}"
expect "callback_url with a plain query" 201 '.status == "queued"' POST /v1/submissions \
	"{$P,\"callback_url\":\"http://127.0.0.1:9?a=1\"}"
bad "bad regex in expected_output" 422 invalid_field POST $B \
	"{$P,\"compare\":\"regex\",\"expected_output\":\"((\"}"
bad "bad regex in a test" 422 invalid_field POST /v1/submissions \
	"{$P,\"compare\":{\"mode\":\"regex\"},\"tests\":[{\"expected_output\":\"1\"},{\"expected_output\":\"[\"}]}"
expect "good regex still accepted" 200 '.status == "accepted"' POST $B \
	"{$P,\"compare\":\"regex\",\"expected_output\":\"\\\\d+\"}"
for n in 1e300 1e309 -1e309 9223372036854775808; do
	expect "limit $n" 422 '.error.code == "invalid_field" and (.error.message | test("between"))' \
		POST $B "{$P,\"expected_output\":\"1\",\"limits\":{\"time_ms\":$n}}"
done
bad "NaN" 400 invalid_json POST $B "{$P,\"limits\":{\"time_ms\":NaN}}"
bad "top-level string" 422 invalid_field POST $B '"x"'
bad "top-level null" 422 invalid_field POST $B 'null'
bad "deep nesting" 400 invalid_json POST $B "$(printf '{"a":%.0s' $(seq 3000))"
bad "tests with null items" 422 invalid_field POST /v1/submissions "{$P,\"tests\":[null]}"

# ---- batch ----
bad "batch: \\u0000" 422 invalid_field POST /v1/submissions/batch \
	'{"submissions":[{"language":"python","source":"print(1)\u0000"}]}'
bad "batch: trailing garbage" 400 invalid_json POST /v1/submissions/batch "{\"submissions\":[{$P}]} x"
bad "batch: unknown field" 422 invalid_field POST /v1/submissions/batch "{\"submissions\":[{$P}],\"x\":1}"
bad "batch: one key twice" 422 invalid_field POST /v1/submissions/batch \
	"{\"submissions\":[{$P,\"idempotency_key\":\"b1\"},{\"language\":\"python\",\"source\":\"print(2)\",\"idempotency_key\":\"b1\"}]}"
bad "batch: Idempotency-Key header" 422 invalid_field POST /v1/submissions/batch \
	"{\"submissions\":[{$P}]}" -H "Idempotency-Key: bh"
expect "batch: two keys" 201 '.ids | length == 2 and .[0] != .[1]' POST /v1/submissions/batch \
	"{\"submissions\":[{$P,\"idempotency_key\":\"b2\"},{$P,\"idempotency_key\":\"b3\"}]}"

# ---- one idempotency key check for a request and a batch's item ----
# each bad key is refused the same way, by the same check, in both places
LONG_KEY=$(printf 'k%.0s' {1..201})
for kk in "empty:\"\"" "201 bytes:\"$LONG_KEY\"" "a number:7" "an array:[\"a\"]"; do
	what=${kk%%:*} key=${kk#*:}
	expect "idempotency key $what: refused in a request" 422 \
		'.error.code == "invalid_field" and (.error.message | test("idempotency"))' \
		POST /v1/submissions "{$P,\"idempotency_key\":$key}"
	single=$(jq -r .error.message <<<"$LAST")
	expect "idempotency key $what: refused alike in a batch item" 422 \
		".error.code == \"invalid_field\" and .error.message == \"submissions[1]: $single\"" \
		POST /v1/submissions/batch "{\"submissions\":[{$P},{$P,\"idempotency_key\":$key}]}"
done
# bytes that are not UTF-8: the body's own check, alike; in the header, the key's check
bad "idempotency key not UTF-8: request" 400 invalid_encoding POST /v1/submissions \
	"{$P,\"idempotency_key\":\"a"$'\xff'"\"}"
bad "idempotency key not UTF-8: batch item" 400 invalid_encoding POST /v1/submissions/batch \
	"{\"submissions\":[{$P,\"idempotency_key\":\"a"$'\xff'"\"}]}"
expect "idempotency key not UTF-8: header" 422 \
	'.error.code == "invalid_field" and (.error.message | test("UTF-8"))' \
	POST /v1/submissions "{$P}" -H "Idempotency-Key: a"$'\xff'

# ---- idempotency key reused ----
id1=$(req POST /v1/submissions "{$P}" -H "Idempotency-Key: same" | head -1 | jq -r .id)
expect "idempotency: same request, same id and its real state" 200 \
	".id == $id1 and (.status | IN(\"queued\", \"running\", \"completed\"))" POST /v1/submissions "{$P}" \
	-H "Idempotency-Key: same"
bad "idempotency: different request refused" 422 invalid_field POST /v1/submissions \
	'{"language":"python","source":"print(2)"}' -H "Idempotency-Key: same"

# ---- idle, half-sent and stalled connections ----
cat >"$SVC_TMP/hold.py" <<'EOF'
import socket, sys, time, urllib.request
port, key = int(sys.argv[1]), sys.argv[2]
held = []
for i in range(600):
    s = socket.create_connection(("127.0.0.1", port))
    if i % 3 == 1:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-A: ")
    elif i % 3 == 2:  # an admitted request whose body stops midway
        s.sendall(("POST /v1/execute HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                   "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"a\":" % key).encode())
    held.append(s)
t = time.time()
r = urllib.request.urlopen("http://127.0.0.1:%d/health" % port, timeout=5)
print(r.status, "%.2f" % (time.time() - t))
EOF
out=$("$PY" "$SVC_TMP/hold.py" "$PORT" "$KEY" 2>&1)
[ "${out%% *}" = 200 ] && pass "health answers beside 600 idle/half-sent connections ($out s)" ||
	fail "health beside 600 idle/half-sent connections" "$out"
expect "grading goes on after them" 200 '.status == "accepted"' POST $B "$PY_OK"

# ---- clients that go away while they wait ----
before=$(curl -s "$U/metrics" | awk -F'[ }]' '/^judge_submissions\{status="completed"\}/ {print $NF}')
gone=() # only these: a bare wait would wait for serve and worker too
for i in 1 2 3; do
	curl -s -o /dev/null -m 0.5 "${AUTH[@]}" "${JSON[@]}" "$U/v1/execute" \
		-d '{"language":"python","source":"import time\ntime.sleep(1.5)\nprint(1)"}' &
	gone+=($!)
done
sid=$(req POST /v1/submissions '{"language":"python","source":"import time\ntime.sleep(1.5)"}' | head -1 | jq -r .id)
for i in 1 2 3; do
	curl -s -o /dev/null -m 0.5 "${AUTH[@]}" "$U/v1/submissions/$sid?wait=10" &
	gone+=($!)
done
wait "${gone[@]}"
for _ in $(seq 100); do [ "$(in_flight)" = 1 ] && break; sleep 0.1; done
[ "$(in_flight)" = 1 ] && pass "nothing left in flight after clients went away" ||
	fail "nothing left in flight after clients went away" "judge_http_in_flight $(in_flight)"
for _ in $(seq 100); do
	now=$(curl -s "$U/metrics" | awk -F'[ }]' '/^judge_submissions\{status="completed"\}/ {print $NF}')
	[ "$now" -ge $((before + 4)) ] && break
	sleep 0.1
done
[ "$now" -ge $((before + 4)) ] && pass "their submissions still finished" ||
	fail "their submissions still finished" "completed $before -> $now"
# max_in_flight = 8: had the 6 clients kept their slots, most of these 8 would get 429
sid=$(req POST /v1/submissions '{"language":"python","source":"import time\ntime.sleep(1)"}' | head -1 | jq -r .id)
slots=()
for i in $(seq 7); do
	curl -s -o /dev/null -w '%{http_code}\n' -m 20 "${AUTH[@]}" "$U/v1/submissions/$sid?wait=10" >"$SVC_TMP/slot.$i" &
	slots+=($!)
done
wait "${slots[@]}"
codes=$(cat "$SVC_TMP"/slot.* | sort | uniq -c | tr -s ' ' | tr '\n' ';')
[ "$(cat "$SVC_TMP"/slot.* | grep -c '^200$')" = 7 ] && pass "their admission slots were given back" ||
	fail "their admission slots were given back" "$codes"

# ---- still standing ----
expect "healthy at the end" 200 '.status == "ok"' GET /health
kill -0 "$MAIN_PID" 2>/dev/null && pass "serve still running" || fail "serve still running"
svc_log_clean "$SVC_TMP/serve.log"
finish
