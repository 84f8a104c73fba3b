#!/usr/bin/env bash
# callbacks.sh: https callbacks end to end: real TLS receivers on 127.0.0.1 with
# self-signed certificates, judge serve with and without callback_ca_file, a real
# worker. A trusted receiver gets the result once; an untrusted certificate or one
# for another host name gets nothing, the attempts are spent and recorded in the
# database, and serve stays healthy; hosts off the allowlist are refused at once.
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
source tests/svc.sh

PY=$(command -v python3 || echo /opt/judge/runtimes/python3.12/bin/python3)
ATTEMPTS=3

svc_pg_start || { fail "postgresql starts"; finish; exit 1; }
# every port before any connection: svc_port cannot see a client's port in TIME_WAIT
GOOD=$(svc_port)
OTHER=$(svc_port)
PORT_A=$(svc_port)
PORT_B=$(svc_port)
PORT_C=$(svc_port)
sql() { "$SVC_PG_BIN/psql" -XAtq "$SVC_DB_URL" -c "$1"; }

# cert NAME SAN: a self-signed certificate and key in $SVC_TMP/NAME.{pem,key}
cert() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=${2#*:}" \
		-addext "subjectAltName=$2" -keyout "$SVC_TMP/$1.key" -out "$SVC_TMP/$1.pem" \
		>/dev/null 2>&1
}
cert good IP:127.0.0.1         # trusted through callback_ca_file
cert other DNS:other.example   # trusted too, but names another host
cat "$SVC_TMP/good.pem" "$SVC_TMP/other.pem" >"$SVC_TMP/ca.pem"
chmod 644 "$SVC_TMP"/*.pem

# The receiver appends each POST body to OUT (and its Content-Type to OUT.ct) and
# each TLS handshake that failed to OUT.tlsfail.
cat >"$SVC_TMP/recv.py" <<'EOF'
import http.server, ssl, sys
port, cert, key, out = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        open(out + ".ct", "a").write(self.headers.get("Content-Type", "") + "\n")
        open(out, "ab").write(body + b"\n")
        self.send_response(204); self.end_headers()
    def do_GET(self):
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
class S(http.server.HTTPServer):
    def get_request(self):
        try:
            return super().get_request()
        except ssl.SSLError:
            open(out + ".tlsfail", "a").write("x\n")
            raise
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv = S(("127.0.0.1", port), H)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
EOF
# receiver NAME PORT: starts one with certificate NAME, waits until it answers
receiver() {
	: >"$SVC_TMP/$1.got"
	"$PY" "$SVC_TMP/recv.py" "$2" "$SVC_TMP/$1.pem" "$SVC_TMP/$1.key" "$SVC_TMP/$1.got" &
	SVC_PIDS+=($!)
	for _ in $(seq 100); do curl -sk -o /dev/null "https://127.0.0.1:$2/" && return 0; sleep 0.1; done
	return 1
}
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
receiver good "$GOOD" || fail "receiver good starts"
receiver other "$OTHER" || fail "receiver other starts"
check "the good receiver's certificate verifies with it as CA" \
	curl -sf --cacert "$SVC_TMP/good.pem" "https://127.0.0.1:$GOOD/"
# a probe with -k completed its handshake: count failures from here on
: >"$SVC_TMP/good.got.tlsfail"
: >"$SVC_TMP/other.got.tlsfail"

# conf FILE PORT [EXTRA]: a judge.ini with both receivers on the allowlist
conf() {
	local f=$1 port=$2
	shift 2
	# changed from judge.ini (svc.sh): the callback receivers of this suite and their
	# tries (the subject), auth off (loopback), a 30 s wait cap, two native slots
	svc_config "$f" "listen = 127.0.0.1:$port" "auth = off" "max_wait_s = 30" \
		"callback_hosts = 127.0.0.1:$GOOD, 127.0.0.1:$OTHER" "callback_attempts = $ATTEMPTS" \
		"$@" "[worker]" "worker_slots = 2" "[sandbox]" "sandbox = native"
}
JSON=(-H "Content-Type: application/json")
# submit URL CALLBACK: prints "STATUS BODY" on one line
submit() {
	curl -s -m 30 "${JSON[@]}" -w ' %{http_code}' "$1/v1/submissions" \
		-d "{\"language\":\"python\",\"source\":\"print(7)\",\"expected_output\":\"7\",\"callback_url\":\"$2\"}"
}
# given_up ID: waits until the callback of ID is given up (never due again, not done)
given_up() {
	for _ in $(seq 300); do
		[ "$(sql "SELECT callback_next IS NULL AND callback_done IS NULL AND finished IS NOT NULL
			FROM submissions WHERE id = $1")" = t ] && return 0
		sleep 0.1
	done
	return 1
}

A=http://127.0.0.1:$PORT_A
conf "$SVC_TMP/a.ini" "$PORT_A" "callback_ca_file = $SVC_TMP/ca.pem"
check "migrate" "$JUDGE" --config "$SVC_TMP/a.ini" migrate
# a proxy from the environment must not be taken (nothing listens on PORT_C yet)
# (only https ones: svc_serve's own health check is plain http)
https_proxy=http://127.0.0.1:$PORT_C HTTPS_PROXY=http://127.0.0.1:$PORT_C svc_serve "$SVC_TMP/a.ini" ||
	{ fail "serve starts"; finish; exit 1; }
SERVE_A=$SVC_SERVE_PID
tr '\0' '\n' <"/proc/$SERVE_A/environ" | grep -q "^https_proxy=" &&
	pass "serve runs with https_proxy set" || fail "serve runs with https_proxy set"
svc_worker "$SVC_TMP/a.ini" || { fail "worker starts"; finish; exit 1; }

# ---- a receiver whose certificate callback_ca_file trusts: delivered once ----
out=$(submit "$A" "https://127.0.0.1:$GOOD/hook?run=1")
id=$(jq -r .id <<<"${out% *}")
[ "${out##* }" = 201 ] && pass "https callback accepted" || fail "https callback accepted" "$out"
for _ in $(seq 300); do [ -s "$SVC_TMP/good.got" ] && break; sleep 0.1; done
sleep 2 # a second copy would come now
if [ "$(lines "$SVC_TMP/good.got")" = 1 ] &&
	jq -e ".id == $id and .status == \"accepted\" and .result.status == \"accepted\"" \
		"$SVC_TMP/good.got" >/dev/null 2>&1; then
	pass "https callback delivered once with the result"
else
	fail "https callback delivered once with the result" "$(head -c 600 "$SVC_TMP/good.got")"
fi
[ "$(cat "$SVC_TMP/good.got.ct" 2>/dev/null)" = application/json ] &&
	pass "callback Content-Type application/json" ||
	fail "callback Content-Type application/json" "$(cat "$SVC_TMP/good.got.ct" 2>/dev/null)"
st=$(sql "SELECT callback_attempts, callback_done IS NOT NULL, callback_next IS NULL
	FROM submissions WHERE id = $id")
[ "$st" = "1|t|t" ] && pass "delivery recorded: 1 attempt, done" || fail "delivery recorded" "$st"
expect_json "GET shows the callback delivered" "$(curl -s "$A/v1/submissions/$id")" \
	".callback.state == \"delivered\" and .callback.attempts == 1 and .callback.error == null and (.callback.url | endswith(\"/hook?run=1\"))"

# ---- a trusted certificate for another host name: never delivered ----
out=$(submit "$A" "https://127.0.0.1:$OTHER/hook")
id2=$(jq -r .id <<<"${out% *}")
[ "${out##* }" = 201 ] || fail "callback to the other receiver accepted" "$out"
if given_up "$id2"; then pass "host name mismatch: given up"; else fail "host name mismatch: given up"; fi
st=$(sql "SELECT callback_attempts FROM submissions WHERE id = $id2")
[ "$st" = "$ATTEMPTS" ] && pass "host name mismatch: $ATTEMPTS attempts recorded" ||
	fail "host name mismatch: $ATTEMPTS attempts recorded" "$st"
expect_json "GET shows the callback failed, and why" "$(curl -s "$A/v1/submissions/$id2")" \
	".callback.state == \"failed\" and .callback.attempts == $ATTEMPTS and (.callback.error | test(\"subject name\"))"
# curl with OpenSSL checks the name after the handshake: the log says why
n=$(grep -c "submission $id2 to .*no alternative certificate subject name matches" "$SVC_TMP/serve.log")
[ "$(lines "$SVC_TMP/other.got")" = 0 ] && [ "$n" = "$ATTEMPTS" ] &&
	pass "host name mismatch: $ATTEMPTS refusals logged, nothing posted" ||
	fail "host name mismatch: nothing posted" "posts $(lines "$SVC_TMP/other.got"), log lines $n"

# ---- refused at submission: https to hosts off the allowlist, user info ----
# expect_refused NAME STATUS CODE CALLBACK
expect_refused() {
	local out
	out=$(submit "$A" "$4")
	if [ "${out##* }" = "$2" ] && jq -e ".error.code == \"$3\" and (.error.message | length > 0)" \
		<<<"${out% *}" >/dev/null 2>&1; then
		pass "refused: $1"
	else
		fail "refused: $1" "$out"
	fi
}
expect_refused "https host not allowed" 422 callback_not_allowed "https://127.0.0.2:$GOOD/x"
expect_refused "https by another name" 422 callback_not_allowed "https://localhost:$GOOD/x"
expect_refused "https default port 443 not allowed" 422 callback_not_allowed "https://127.0.0.1/x"
expect_refused "user info" 422 invalid_field "https://127.0.0.1:$GOOD@127.0.0.2/x"
expect_refused "user info before the host" 422 invalid_field "https://127.0.0.1:$GOOD@127.0.0.1:$GOOD/x"
expect_refused "ftp" 422 invalid_field "ftp://127.0.0.1:$GOOD/x"

m=$(curl -s "$A/metrics")
grep -qx "judge_callbacks_delivered_total 1" <<<"$m" && grep -qx "judge_callbacks_failed_total $ATTEMPTS" <<<"$m" &&
	pass "metrics: 1 delivered, $ATTEMPTS failed" ||
	fail "metrics: 1 delivered, $ATTEMPTS failed" "$(grep judge_callbacks <<<"$m")"
svc_stop "$SERVE_A"

# ---- no callback_ca_file: the self-signed certificate is not trusted ----
B=http://127.0.0.1:$PORT_B
conf "$SVC_TMP/b.ini" "$PORT_B"
svc_serve "$SVC_TMP/b.ini" || { fail "serve without callback_ca_file starts"; finish; exit 1; }
SERVE_B=$SVC_SERVE_PID
out=$(submit "$B" "https://127.0.0.1:$GOOD/hook")
id3=$(jq -r .id <<<"${out% *}")
[ "${out##* }" = 201 ] || fail "callback without callback_ca_file accepted" "$out"
if given_up "$id3"; then pass "untrusted certificate: given up"; else fail "untrusted certificate: given up"; fi
st=$(sql "SELECT callback_attempts, callback_done IS NULL FROM submissions WHERE id = $id3")
[ "$st" = "$ATTEMPTS|t" ] && pass "untrusted certificate: $ATTEMPTS attempts recorded, not done" ||
	fail "untrusted certificate: attempts recorded" "$st"
[ "$(lines "$SVC_TMP/good.got")" = 1 ] && [ "$(lines "$SVC_TMP/good.got.tlsfail")" = "$ATTEMPTS" ] &&
	pass "untrusted certificate: $ATTEMPTS handshakes refused, nothing posted" ||
	fail "untrusted certificate: nothing posted" \
		"posts $(lines "$SVC_TMP/good.got"), failed handshakes $(lines "$SVC_TMP/good.got.tlsfail")"
grep -q "submission $id3 to .*certificate.*(giving up)" "$SVC_TMP/serve.log" &&
	pass "untrusted certificate: logged" ||
	fail "untrusted certificate: logged" "$(grep "submission $id3" "$SVC_TMP/serve.log" | tail -2)"
[ "$(curl -s "$B/health" | jq -r .status)" = ok ] && kill -0 "$SERVE_B" 2>/dev/null &&
	pass "serve healthy after failed callbacks" || fail "serve healthy after failed callbacks"
svc_stop "$SERVE_B"

# ---- a callback_ca_file that cannot be read stops serve at start ----
conf "$SVC_TMP/c.ini" "$PORT_C" "callback_ca_file = $SVC_TMP/missing.pem"
svc_refused "missing callback_ca_file refused" "$SVC_TMP/c.ini" "callback_ca_file"

svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/c.log"
finish
