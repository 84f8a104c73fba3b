#!/usr/bin/env bash
# http.sh: the HTTP layer's limits against a real judge serve over raw sockets
# (python3 clients): header and body deadlines (slowloris), the per-address
# connection cap, strict header syntax with exactly one answer per request,
# a key twice in a JSON body (every front), conflicting idempotency keys, and
# clients that hang up mid-body counted as 499, not 5xx.
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
source tests/svc.sh

svc_up http "http_header_timeout_s = 2" "http_body_timeout_s = 3" "http_max_conns_per_ip = 40" \
	"max_wait_s = 20" "http_threads = 2" "[worker]" "worker_slots = 2" "[sandbox]" "sandbox = native"

PY=$(command -v python3 || echo /opt/judge/runtimes/python3.12/bin/python3)
AH="Authorization: Bearer $KEY"

# raw TIMEOUT_S: sends stdin as it is, prints what comes back until the server
# closes, then "<<TIMEOUT>>" if it did not close in time.
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
except ConnectionResetError:
    out += b"\n<<RESET>>"
sys.stdout.write(out.decode("latin-1"))
EOF
raw() { "$PY" "$SVC_TMP/raw.py" "$PORT" "$1"; }
# one_answer NAME STATUS CODE: the request in $SVC_TMP/req gets exactly one
# response, STATUS with the JSON error CODE, and the server closes or waits
one_answer() {
	local name=$1 want=$2 code=$3 out heads
	out=$(raw 5 <"$SVC_TMP/req")
	heads=$(grep -c '^HTTP/1\.[01] ' <<<"$out")
	if [ "$heads" != 1 ] || ! head -1 <<<"$out" | grep -q "^HTTP/1.1 $want "; then
		fail "$name" "want one $want answer, got $heads: $(head -c 400 <<<"$out" | tr '\r\n' '  ')"
		return
	fi
	expect_json "$name" "$(grep '^{' <<<"$out" | head -1)" \
		".error.code == \"$code\" and (.error.message | length > 0)"
}
rq() { printf "$@" >"$SVC_TMP/req"; }
metric() { curl -s "$U/metrics" | awk -v k="$1" '$1 == k {print $2}'; }

PY_OK='{"language":"python","source":"print(1)","expected_output":"1"}'
P='"language":"python","source":"print(1)"'

# ---- header syntax: one answer, JSON, never a second head ----
rq 'POST /v1/execute_with_expected HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Type: application/json\r\nTransfer-Encoding : chunked\r\nContent-Length: %d\r\n\r\n%s' \
	"$AH" ${#PY_OK} "$PY_OK"
one_answer "space before the colon of Transfer-Encoding: 400" 400 bad_request
rq 'GET /health HTTP/1.1\r\nHost: x\r\nX-Thing\t: 1\r\n\r\n'
one_answer "tab before a colon: 400" 400 bad_request
rq 'POST /v1/execute HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n%s' \
	"$AH" "$PY_OK"
one_answer "Content-Length: -1: one 400" 400 bad_request
rq 'POST /v1/execute HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Type: application/json\r\nContent-Length: 1x\r\n\r\n%s' \
	"$AH" "$PY_OK"
one_answer "Content-Length: 1x: one 400" 400 bad_request
rq 'POST /v1/execute HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Type: application/json\r\nContent-Length: 99999999999999999999999\r\n\r\n%s' \
	"$AH" "$PY_OK"
one_answer "Content-Length past 64 bits: one 413" 413 too_large
rq 'POST /v1/execute HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Type: application/json\r\nContent-Length: +5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n' "$AH"
one_answer "Content-Length: +5 beside chunked: 400" 400 bad_request
# a malformed request after a good one on the same connection: the good one's
# answer, then one answer for the bad one
out=$(printf 'GET /health HTTP/1.1\r\nHost: x\r\n\r\nPOST /v1/execute HTTP/1.1\r\nHost: x\r\nContent-Length: -7\r\n\r\n' | raw 5)
[ "$(grep -o '^HTTP/1.1 [0-9]*' <<<"$out" | tr '\n' ' ')" = "HTTP/1.1 200 HTTP/1.1 400 " ] &&
	pass "keep-alive: a bad length after a good request gets one 400" ||
	fail "keep-alive: a bad length after a good request gets one 400" "$(grep '^HTTP' <<<"$out")"
expect "well-formed requests still served" 200 '.status == "accepted"' POST /v1/execute_with_expected "$PY_OK"

# ---- a key twice in a JSON body: 400 naming it, on every front ----
DUP='{"language":"python","source":"print(1)","source":"print(2)"}'
expect "duplicate key: /v1" 400 '.error.code == "invalid_json" and (.error.message | test("\"source\""))' \
	POST /v1/execute "$DUP"
expect "duplicate key in a nested object" 400 '.error.code == "invalid_json" and (.error.message | test("time_ms"))' \
	POST /v1/execute "{$P,\"limits\":{\"time_ms\":100,\"time_ms\":200}}"
expect "duplicate key: Judge0" 400 '.error | test("source_code")' \
	POST /submissions '{"language_id":71,"source_code":"print(1)","source_code":"x"}'
expect "duplicate key: Piston" 400 '.message | test("content")' \
	POST /api/v2/execute '{"language":"python","version":"*","files":[{"content":"print(1)","content":"x"}]}'
out=$(curl -s -m 20 "${AUTH[@]}" "${JSON[@]}" -H "Accept: application/json, text/event-stream" \
	-w '\n%{http_code}' "$U/mcp" -d '{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}')
[ "${out##*$'\n'}" = 400 ] && grep -q '"id"' <<<"$out" && pass "duplicate key: MCP" ||
	fail "duplicate key: MCP" "$out"

# ---- idempotency: the header and the body must agree ----
bad "Idempotency-Key header differs from the body's" 422 invalid_field POST /v1/submissions \
	"{$P,\"idempotency_key\":\"body-key\"}" -H "Idempotency-Key: header-key"
expect "the same key in both" 201 '.status == "queued"' POST /v1/submissions \
	"{$P,\"idempotency_key\":\"both-key\"}" -H "Idempotency-Key: both-key"
expect "and it is that key" 200 '.status | IN("queued", "running", "completed")' POST /v1/submissions \
	"{$P}" -H "Idempotency-Key: both-key"

# ---- a client that hangs up mid-body: 499, not 5xx ----
r499=$(metric 'judge_http_requests_total{route="execute",code="499"}')
r5xx=$(metric 'judge_http_requests_total{route="execute",code="5xx"}')
"$PY" - "$PORT" "$KEY" <<'EOF'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(("POST /v1/execute HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
           "Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"language\":" % sys.argv[2]).encode())
time.sleep(0.3)
s.close()
EOF
for _ in $(seq 50); do [ "$(metric 'judge_http_requests_total{route="execute",code="499"}')" -gt "$r499" ] && break; sleep 0.1; done
n499=$(metric 'judge_http_requests_total{route="execute",code="499"}')
n5xx=$(metric 'judge_http_requests_total{route="execute",code="5xx"}')
[ "$n499" = $((r499 + 1)) ] && [ "$n5xx" = "$r5xx" ] && pass "hang-up mid-body counted 499, not 5xx" ||
	fail "hang-up mid-body counted 499, not 5xx" "499: $r499 -> $n499, 5xx: $r5xx -> $n5xx"

# ---- blame: a submitter's own regex over its limits is a verdict ----
sf=$(metric judge_sandbox_failures)
expect "regex (a+)+\$ over its match limit: wrong_answer with the reason" 200 \
	'.status == "wrong_answer" and (.feedback.message | test("match limit exceeded"))' \
	POST /v1/execute_with_expected \
	'{"language":"python","source":"print(\"a\" * 5000 + \"!\")","compare":"regex","expected_output":"(a+)+$"}'
[ "$(metric judge_sandbox_failures)" = "$sf" ] && pass "and judge_sandbox_failures did not move" ||
	fail "and judge_sandbox_failures did not move" "$sf -> $(metric judge_sandbox_failures)"

# ---- deadlines and the per-address cap ----
# From 127.0.0.2: 60 connections, idle, half-sent headers or a stalled body;
# the cap keeps 40. From 127.0.0.3: one drips a header byte every 0.3 s and
# one a body byte (idle timeouts never end those). /health from 127.0.0.1
# answers meanwhile; the deadlines (2 s headers, 3 s body) close all of them.
cat >"$SVC_TMP/slow.py" <<'EOF'
import json, select, socket, sys, time, urllib.request
port, key = int(sys.argv[1]), sys.argv[2]
def conn(src):
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s
def closed(s):
    r, _, _ = select.select([s], [], [], 0)
    if not r:
        return False
    try:
        return s.recv(4096) == b""
    except OSError:
        return True
held = []
for i in range(60):
    s = conn("127.0.0.2")
    if i % 3 == 1:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-A: ")
    elif i % 3 == 2:
        s.sendall(("POST /v1/execute HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                   "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"a\":" % key).encode())
    held.append(s)
time.sleep(0.5)
open_now = sum(not closed(s) for s in held)
t = time.time()
health = urllib.request.urlopen("http://127.0.0.1:%d/health" % port, timeout=5).status
hdr = conn("127.0.0.3")
hdr.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
body = conn("127.0.0.3")
body.sendall(("POST /v1/execute HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
              "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n" % key).encode())
end = {}
start = time.time()
while time.time() - start < 20 and len(end) < 2:
    for name, s in (("headers", hdr), ("body", body)):
        if name in end:
            continue
        try:
            s.sendall(b"X" if name == "headers" else b" ")
        except OSError:
            end[name] = time.time() - start
            continue
        if closed(s):
            end[name] = time.time() - start
    time.sleep(0.3)
left = sum(not closed(s) for s in held)
print(json.dumps({"open_at_start": open_now, "health": health, "left": left,
                  "headers_closed": "headers" in end, "body_closed": "body" in end}))
EOF
out=$("$PY" "$SVC_TMP/slow.py" "$PORT" "$KEY" 2>&1)
expect_json "cap: 40 of 60 connections from one address stay open" "$out" '.open_at_start == 40'
expect_json "another address is still served beside them" "$out" '.health == 200'
expect_json "header deadline closes a connection that drips header bytes" "$out" '.headers_closed'
expect_json "body deadline closes a connection that drips body bytes" "$out" '.body_closed'
expect_json "the held connections are all closed by their deadlines" "$out" '.left == 0'
n=$(metric judge_http_deadline_closes_total)
[ "${n:-0}" -ge 42 ] && pass "deadline closes counted ($n)" || fail "deadline closes counted" "${n:-none}"
# a slow sync execute is not cut: its body came in time, the wait has no deadline
expect "a request that waits longer than the deadlines still answers" 200 '.status == "accepted"' \
	POST /v1/execute_with_expected '{"language":"python","source":"import time\ntime.sleep(4)\nprint(1)","expected_output":"1"}'

# ---- judge keys create --config FILE (the option after the command) ----
K3=$("$JUDGE" keys create --config "$ini" --name after-the-command 2>"$SVC_TMP/k3.err")
[ -n "$K3" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $K3" "$U/v1/languages")" = 200 ] &&
	pass "judge keys create --config FILE makes a working key" ||
	fail "judge keys create --config FILE makes a working key" "$(cat "$SVC_TMP/k3.err")"
"$JUDGE" keys list --config="$ini" 2>&1 | grep -q after-the-command &&
	pass "judge keys list --config=FILE reads that database" || fail "judge keys list --config=FILE reads that database"
"$JUDGE" --help | grep -q -- "--config FILE may also follow COMMAND" &&
	pass "the usage text says --config may follow the command" || fail "the usage text says --config may follow the command"

expect "healthy at the end" 200 '.status == "ok"' GET /health
kill -0 "$MAIN_PID" 2>/dev/null && pass "serve still running" || fail "serve still running"
svc_log_clean "$SVC_TMP/serve.log"
finish
