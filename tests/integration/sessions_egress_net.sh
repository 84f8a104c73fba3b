#!/usr/bin/env bash
# sessions_egress_net.sh: a session's egress proxy against an upstream in a
# network namespace this test creates (docs/egress.md): not a loopback
# address let through, but another network behind a veth pair, as a real
# upstream is. The upstream (tests/integration/lib/upstream.py) serves HTTP
# and HTTPS with a certificate made here for api.test and front.test.
# Python cells reach api.test over real TLS (urllib through HTTPS_PROXY, the
# certificate checked); a tunnel to api.test whose TLS asks for another name
# (front.test: domain fronting) or for none is cut; a plain request whose
# Host header names another host is refused; a private address not let
# through, PostgreSQL (through the proxy, straight, by its Unix socket) and
# the upstream without the proxy are out of reach. The history says why.
# Native, then the same on a gVisor worker (runsc --network=host in the
# proxy's namespace). Needs root (ip netns); skipped (and counted as skipped) without it.
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh

needs_netns

# the upstream's namespace: $NET.1 (root side) <-> $NET.2 and $NET.3 (upstream)
NET="10.$((RANDOM % 200 + 20)).$((RANDOM % 250))"
TAG=$$
NS=jegress-$TAG
netns_cleanup() {
	ip netns pids "$NS" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
	ip link del "jer-$TAG" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
}
ip netns add "$NS" && ip link add "jer-$TAG" type veth peer name "jeu-$TAG" &&
	ip link set "jeu-$TAG" netns "$NS" &&
	ip addr add "$NET.1/29" dev "jer-$TAG" && ip link set "jer-$TAG" up &&
	ip -n "$NS" addr add "$NET.2/29" dev "jeu-$TAG" && ip -n "$NS" addr add "$NET.3/29" dev "jeu-$TAG" &&
	ip -n "$NS" link set "jeu-$TAG" up && ip -n "$NS" link set lo up ||
	{ fail "the upstream's network namespace"; netns_cleanup; finish; exit 1; }

source tests/svc.sh
trap 'svc_cleanup; netns_cleanup' EXIT
pass "the upstream's network namespace $NS ($NET.2, $NET.3)"

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=api.test \
	-addext "subjectAltName=DNS:api.test,DNS:front.test" \
	-keyout "$SVC_TMP/up.key" -out "$SVC_TMP/up.crt" >/dev/null 2>&1 ||
	{ fail "a certificate for the upstream"; finish; exit 1; }
ip netns exec "$NS" python3 tests/integration/lib/upstream.py "$NET.2" "$SVC_TMP/up.crt" "$SVC_TMP/up.key" \
	>"$SVC_TMP/up.out" 2>"$SVC_TMP/up.log" &
SVC_PIDS+=($!)
for _ in $(seq 100); do grep -q '^ready ' "$SVC_TMP/up.out" 2>/dev/null && break; sleep 0.1; done
read -r UP UPS < <(sed -n 's/^ready //p' "$SVC_TMP/up.out")
[ -n "$UPS" ] && pass "the upstream serves HTTP on $NET.2:$UP and HTTPS on :$UPS" ||
	{ fail "the upstream" "$(tail -3 "$SVC_TMP/up.log")"; finish; exit 1; }

# a local PEP 503 index with a wheel it builds: installs of a session with a
# policy still go through the registry proxy
svc_index tinypkg==1.0

# changed from judge.ini (svc.sh): egress allowed to an allowlist; the test's
# names mapped (no resolver of ours serves them); the upstream's private
# address let through, its second one not; the local index
EGRESS_INI=("[worker]" "worker_slots = 2" "[sessions]" "pip_index_url = $INDEX" "egress = allowlist"
	"egress_hosts = api.test=$NET.2, front.test=$NET.2, priv.test=$NET.3, loop.test=127.0.0.1"
	"egress_addr_allow = $NET.2")
svc_up egress-net "[sandbox]" "sandbox = native" "${EGRESS_INI[@]}"
PGPORT=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' <<<"$SVC_DB_URL")
PGSOCK=$SVC_TMP/pg/.s.PGSQL.$PGPORT
[ -S "$PGSOCK" ] && pass "PostgreSQL's Unix socket is there on the host" || fail "PostgreSQL's socket" "$PGSOCK"

# the cells' helpers: https() through urllib, via() a CONNECT tunnel whose TLS
# asks for the server name given (None: no SNI; "plain": no TLS), plain() one
# plain request with the Host header given
read -r -d '' LIB <<PY
import os, socket, ssl, urllib.error, urllib.parse, urllib.request
CA = """$(cat "$SVC_TMP/up.crt")"""
ctx = ssl.create_default_context(cadata=CA)
def answer(f):
    try:
        with f() as r:
            return "%d %s" % (r.status, r.read().decode())
    except urllib.error.HTTPError as e:
        return "%d %s" % (e.code, e.reason)
    except Exception as e:
        return "error %s: %s" % (type(e).__name__, e)
def https(url):
    return answer(lambda: urllib.request.urlopen(url, context=ctx, timeout=20))
def plain(url, host):
    return answer(lambda: urllib.request.urlopen(urllib.request.Request(url, headers={"Host": host}), timeout=20))
def via(host, port, sni, verify=True):
    p = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
    s = socket.create_connection((p.hostname, p.port), timeout=20)
    s.sendall(b"CONNECT %s:%d HTTP/1.1\r\n\r\n" % (host.encode(), port))
    head = b""
    while b"\r\n\r\n" not in head:
        c = s.recv(1)
        if not c:
            return "error no answer"
        head += c
    if not head.startswith(b"HTTP/1.1 200"):
        return "refused " + head.split(b"\r\n")[0].decode()
    c = ctx if verify else ssl._create_unverified_context()
    try:
        t = s if sni == "plain" else c.wrap_socket(s, server_hostname=sni)
        t.sendall(b"GET /hello HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % host.encode())
        data = b""
        while True:
            d = t.recv(65536)
            if not d:
                break
            data += d
        return "ok " + data.split(b"\r\n")[0].decode()
    except OSError as e:
        return "error " + type(e).__name__
def direct(addr):
    try:
        s = socket.socket(socket.AF_UNIX if isinstance(addr, str) else socket.AF_INET)
        s.settimeout(5)
        s.connect(addr)
        return "connected"
    except OSError as e:
        return "error " + type(e).__name__
PY

# the checks, on the backend of the worker running (PFX names it)
net_checks() {
	svc_session '{"language": "python", "network": {"allow": ["api.test", "priv.test", "loop.test"]}}'
	A=$SID
	[ -n "$A" ] && pass "${PFX}an allowlisted session starts" || { fail "${PFX}an allowlisted session starts"; return; }
	cell() { svc_cell "${PFX}$1" "$A" "$2" "$3"; }
	cell "the helpers load" "$LIB" '.status == "ok"'

	# ---- real TLS ----
	cell "https to an allowed name: real TLS through the tunnel, the certificate checked" \
		"print(https('https://api.test:$UPS/hello'))" \
		'.stdout == "200 hello from upstream, host api.test:'"$UPS"'\n"'
	cell "a tunnel whose TLS names its CONNECT host goes through" \
		"print(via('api.test', $UPS, 'api.test'))" '.stdout == "ok HTTP/1.1 200 OK\n"'
	cell "plain HTTP inside a tunnel (not TLS) goes through" \
		"print(via('api.test', $UP, 'plain'))" '.stdout == "ok HTTP/1.1 200 OK\n"'
	cell "a tunnel to api.test whose TLS asks for front.test (domain fronting) is cut" \
		"print(via('api.test', $UPS, 'front.test'))" '.stdout | test("^error (SSLEOFError|SSLZeroReturnError|ConnectionResetError|SSLError)")'
	cell "a tunnel to api.test whose TLS names no server is cut" \
		"print(via('api.test', $UPS, None, verify=False))" '.stdout | test("^error ")'
	cell "front.test itself is not in the policy" "print(via('front.test', $UPS, 'front.test'))" \
		'.stdout | startswith("refused HTTP/1.1 403 egress refused: front.test:")'

	# ---- plain HTTP is routed by the URL, and its Host must agree ----
	cell "a plain request whose Host header names another host: refused" \
		"print(plain('http://api.test:$UP/hello', 'front.test'))" \
		'.stdout == "403 egress refused: the Host header names front.test, not the URL'"'"'s host api.test\n"'
	cell "the same Host with a port is the same host" \
		"print(plain('http://api.test:$UP/hello', 'API.test:$UP'))" \
		'.stdout == "200 hello from upstream, host API.test:'"$UP"'\n"'

	# ---- out of reach ----
	cell "a listed name on the upstream's other, private address: refused" \
		"print(https('http://priv.test:$UP/hello'))" \
		'.stdout == "403 egress refused: priv.test resolves to a private address ('"$NET"'.3)\n"'
	cell "PostgreSQL through the proxy (a listed name on loopback): refused" \
		"print(via('loop.test', $PGPORT, None))" \
		'.stdout | startswith("refused HTTP/1.1 403 egress refused: loop.test resolves to a loopback address")'
	cell "PostgreSQL's port straight: nothing there" "print(direct(('127.0.0.1', $PGPORT)))" \
		'.stdout == "error ConnectionRefusedError\n"'
	cell "PostgreSQL's Unix socket: not in the sandbox" "print(direct('$PGSOCK'))" \
		'.stdout | test("^error (FileNotFoundError|PermissionError|ConnectionRefusedError)")'
	cell "the upstream straight, skipping the proxy: no route" "print(direct(('$NET.2', $UPS)))" \
		'.stdout | test("^error (OSError|TimeoutError)")'

	# ---- installs keep their own way out ----
	expect "${PFX}a session with a policy installs from the package index" 200 '.status == "ok"' \
		POST "/v1/sessions/$A/install" '{"manager": "pip", "packages": ["tinypkg==1.0"]}'
	cell "and imports it" 'import tinypkg; print(tinypkg.__name__)' '.stdout == "tinypkg\n"'
	cell "the index is not reachable through the egress proxy: not in the policy" \
		"print(https('$INDEX/'))" '.stdout | startswith("403 egress refused: ")'

	# ---- the history says why ----
	for _ in $(seq 50); do # each attempt is written when its connection ends
		out=$(req GET "/v1/sessions/$A/history")
		[ "$(jq '[.egress[]? | select(.reason | test("TLS"))] | length' <<<"${out%$'\n'*}")" = 2 ] && break
		sleep 0.1
	done
	expect_json "${PFX}the history: the fronted tunnel refused, saying why" "${out%$'\n'*}" \
		'[.egress[] | select(.reason == "the TLS server name front.test is not the CONNECT host api.test")] |
		length == 1 and .[0].decision == "refused" and .[0].method == "CONNECT" and .[0].bytes_out == 0'
	expect_json "${PFX}the history: the tunnel without SNI refused, saying why" "${out%$'\n'*}" \
		'[.egress[] | select(.reason | startswith("the TLS ClientHello names no server (SNI)"))] | length == 1'
	expect_json "${PFX}the history: the allowed TLS went to the upstream's address" "${out%$'\n'*}" \
		'[.egress[] | select(.decision == "allowed" and .port == '"$UPS"')] |
		length == 2 and all(.address == "'"$NET"'.2" and .bytes_in > 1000)'
	expect_json "${PFX}the history: the Host header refusal" "${out%$'\n'*}" \
		'[.egress[] | select(.reason | startswith("the Host header names front.test"))] | length == 1'
	req DELETE "/v1/sessions/$A" >/dev/null
}

PFX="" net_checks

# ---- gVisor: the same, runsc --network=host in the proxy's namespace ----
svc_on_gvisor "an upstream in a namespace" net_checks "${EGRESS_INI[@]}"

svc_stop "$MAIN_PID"
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/worker.log"
finish
