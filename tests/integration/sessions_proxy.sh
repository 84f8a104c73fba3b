#!/usr/bin/env bash
# sessions_proxy.sh: a session's egress proxy on real traffic, loopback only
# (docs/egress.md). A stand-in upstream (tests/integration/lib/upstream.py)
# listens on 127.0.0.2, a loopback address: the proxy refuses loopback after
# resolution, so judge.ini lists that one address (egress_addr_allow), and
# egress_hosts maps the test's names, since no resolver of ours serves
# them: api.test and other.test to the upstream, loop.test to 127.0.0.1,
# meta.test to 169.254.169.254. Python cells (urllib, http.client, socket) in
# native sessions, then in gVisor ones (runsc --network=host in the proxy's
# namespace) when runsc is installed: reach an allowed name over plain HTTP and through a
# CONNECT tunnel; are refused a name not listed, a port not listed, an IP
# literal, names that resolve to loopback or the metadata address; cannot
# reach anything by skipping the proxy (the upstream, the judge's own
# listener, another network); hit the byte and connection caps. The
# session's history lists every attempt, /metrics counts them.
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
source tests/svc.sh

python3 tests/integration/lib/upstream.py 127.0.0.2 >"$SVC_TMP/up.out" 2>"$SVC_TMP/up.log" &
SVC_PIDS+=($!)
for _ in $(seq 100); do grep -q '^ready ' "$SVC_TMP/up.out" 2>/dev/null && break; sleep 0.1; done
UP=$(sed -n 's/^ready //p' "$SVC_TMP/up.out")
[ -n "$UP" ] && pass "stand-in upstream on 127.0.0.2:$UP" ||
	{ fail "stand-in upstream" "$(tail -3 "$SVC_TMP/up.log")"; finish; exit 1; }

EGRESS_INI=("[worker]" "worker_slots = 2" "[sessions]" "egress = allowlist"
	"egress_hosts = api.test=127.0.0.2, other.test=127.0.0.2, loop.test=127.0.0.1, meta.test=169.254.169.254"
	"egress_addr_allow = 127.0.0.2" "egress_max_mb = 1" "egress_max_connections = 20")
svc_up egress-proxy "[sandbox]" "sandbox = native" "${EGRESS_INI[@]}"

# create NETWORK [EXTRA]: a python session with that network policy; SID its id
create() { svc_session "{\"language\": \"python\", \"network\": $1${2:+, $2}}"; }
# cell NAME SID CODE JQ: a cell (@UP@ in CODE is the upstream's port) whose
# answer passes JQ
cell() { svc_cell "${PFX:-}$1" "$2" "${3//@UP@/$UP}" "$4"; }

# the helpers every cell of the allowlisted session uses
read -r -d '' LIB <<'PY'
import http.client, os, socket, urllib.error, urllib.parse, urllib.request
def get(url, data=None):
    try:
        with urllib.request.urlopen(url, data=data, timeout=20) as r:
            return "%d %s" % (r.status, r.read().decode())
    except urllib.error.HTTPError as e:
        return "%d %s" % (e.code, e.reason)
    except Exception as e:
        return "error %s: %s" % (type(e).__name__, e)
def tunnel(host, port, path="/hello"):
    p = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
    c = http.client.HTTPConnection(p.hostname, p.port, timeout=20)
    try:
        c.set_tunnel(host, port)
        c.request("GET", path)
        r = c.getresponse()
        return "%d %s" % (r.status, r.read().decode())
    except OSError as e:
        return "error %s" % e
    finally:
        c.close()
def direct(host, port):
    try:
        socket.create_connection((host, port), timeout=5).close()
        return "connected"
    except OSError as e:
        return "error %s" % type(e).__name__
PY

# judge_egress_total's allowed and refused counts now (0 before any)
egress_totals() {
	local m
	m=$(curl -s "$U/metrics")
	echo "$(sed -n 's/^judge_egress_total{decision="allowed"} //p' <<<"$m" | grep . || echo 0)" \
		"$(sed -n 's/^judge_egress_total{decision="refused"} //p' <<<"$m" | grep . || echo 0)"
}

# proxy_checks: every check on the backend of the worker running now; PFX
# names it in the checks' names
proxy_checks() {
	create '{"allow": ["api.test", "other.test:9", "loop.test", "meta.test", "localhost"]}' \
		'"env": {"SESSION_TAG": "t1"}'
	A=$SID
	read -r allowed0 refused0 < <(egress_totals)
	[ -n "$A" ] && pass "${PFX}an allowlisted session starts" || { fail "${PFX}an allowlisted session starts"; return 1; }
	cell "the helpers load; the proxy variables point at the session's proxy" "$A" \
		"$LIB"$'\nprint(os.environ.get("HTTP_PROXY"), os.environ.get("https_proxy"))' \
		'.status == "ok" and (.stdout | test("^http://127\\.0\\.0\\.1:[0-9]+ http://127\\.0\\.0\\.1:[0-9]+\n$"))'

	# ---- allowed ----
	cell "an allowed name over plain HTTP (urllib through the proxy)" "$A" \
		'print(get("http://api.test:@UP@/hello"))' \
		'.status == "ok" and .stdout == "200 hello from upstream, host api.test:'"$UP"'\n"'
	cell "a POST body goes through and comes back" "$A" \
		'print(get("http://api.test:@UP@/echo", data=b"ping " * 1000)[:14])' \
		'.status == "ok" and .stdout == "200 ping ping \n"'
	cell "an allowed name through a CONNECT tunnel (as https goes)" "$A" \
		'print(tunnel("api.test", @UP@))' \
		'.status == "ok" and .stdout == "200 hello from upstream, host api.test:'"$UP"'\n"'
	# a context made later goes through the proxy too (it once started without
	# the proxy variables), beside the session's own env
	svc_run "$A" 'curl -s -m 20 "http://api.test:'"$UP"'/hello"; echo " $SESSION_TAG"' '"language": "bash"'
	expect_json "${PFX}a bash context made later: through the proxy, with the session's env" "$LAST" \
		'.status == "ok" and .stdout == "hello from upstream, host api.test:'"$UP"' t1\n"'

	# ---- refused by the policy ----
	cell "a name not on the list: 403 saying why" "$A" 'print(get("http://evil.test:@UP@/hello"))' \
		'.stdout == "403 egress refused: evil.test:'"$UP"' is not in this session'"'"'s network policy\n"'
	cell "the refusal's body says it too, whole (its length as announced)" "$A" \
		$'try:\n    urllib.request.urlopen("http://evil.test:@UP@/x", timeout=20)\nexcept urllib.error.HTTPError as e:\n    print(e.read() == ("egress refused: " + e.reason[16:] + "\\n").encode(), e.reason[:16])' \
		'.stdout == "True egress refused: \n"'
	cell "a name not on the list through CONNECT: the tunnel fails saying why" "$A" \
		'print(tunnel("evil.test", @UP@))' \
		'.stdout | test("^error Tunnel connection failed: 403 egress refused: evil.test:'"$UP"' is not in this session")'
	cell "a listed name on a port not listed: refused" "$A" 'print(get("http://other.test:@UP@/hello"))' \
		'.stdout | startswith("403 egress refused: other.test:'"$UP"' is not in")'
	cell "an IP literal (the upstream's own address): refused" "$A" \
		'print(get("http://127.0.0.2:@UP@/hello"))' '.stdout | startswith("403 egress refused: 127.0.0.2:")'

	# ---- refused after resolution ----
	cell "a listed name that resolves to 127.0.0.1: refused as loopback" "$A" \
		'print(get("http://loop.test:@UP@/hello"))' \
		'.stdout == "403 egress refused: loop.test resolves to a loopback address (127.0.0.1)\n"'
	cell "localhost (the system resolver's 127.0.0.1): refused as loopback" "$A" \
		'print(get("http://localhost:'"$PORT"'/health"))' \
		'.stdout | test("^403 egress refused: localhost resolves to a loopback address")'
	cell "a listed name that resolves to 169.254.169.254: refused as metadata" "$A" \
		'print(tunnel("meta.test", 80))' \
		'.stdout | test("^error Tunnel connection failed: 403 egress refused: meta.test resolves to a metadata address \\(169\\.254\\.169\\.254\\)")'

	# ---- around the proxy ----
	cell "a socket straight to the upstream (skipping the proxy) gets nowhere" "$A" \
		'print(direct("127.0.0.2", @UP@))' '.stdout == "error ConnectionRefusedError\n"'
	cell "a socket straight to the judge's own listener gets nowhere" "$A" \
		"print(direct(\"127.0.0.1\", $PORT))" '.stdout == "error ConnectionRefusedError\n"'
	cell "a socket to another network: no route" "$A" 'print(direct("10.1.2.3", 80))' \
		'.stdout | test("^error (OSError|TimeoutError)")'
	cell "no name resolves inside the sandbox" "$A" \
		$'import socket\ntry:\n    socket.getaddrinfo("api.test", 80)\n    print("resolved")\nexcept OSError as e:\n    print("error", type(e).__name__)' \
		'.stdout == "error gaierror\n"'

	# ---- the history and /metrics ----
	hist() { req GET "/v1/sessions/$A/history"; }
	for _ in $(seq 50); do # each attempt is written when its connection ends
		out=$(hist)
		[ "$(jq '[.egress[]? | select(.host == "meta.test")] | length' <<<"${out%$'\n'*}")" = 1 ] && break
		sleep 0.1
	done
	EXPECT_REQ=hist expect "${PFX}the history lists the allowed attempts, with their bytes" 200 '
		[.egress[] | select(.decision == "allowed")] | length == 4 and
		all(.host == "api.test" and .port == '"$UP"' and .address == "127.0.0.2" and .bytes_in > 0) and
		(map(.method) | sort) == ["CONNECT", "GET", "GET", "POST"] and
		(map(select(.method == "POST"))[0].bytes_out > 5000)'
	expect_json "${PFX}the history lists the refused attempts, saying why" "$LAST" '
		[.egress[] | select(.decision == "refused") | "\(.host) \(.reason)"] as $r |
		($r | length) == 8 and
		($r | any(startswith("evil.test evil.test:"))) and
		($r | any(. == "loop.test loop.test resolves to a loopback address (127.0.0.1)")) and
		($r | any(startswith("meta.test meta.test resolves to a metadata address"))) and
		($r | any(startswith("127.0.0.2 ")))'
	expect_json "${PFX}the egress list is in order, with times" "$LAST" \
		'(.egress | map(.id)) == (.egress | map(.id) | sort) and all(.egress[]; .at | test("Z$"))'
	read -r allowed refused < <(egress_totals)
	allowed=$((allowed - allowed0)) refused=$((refused - refused0))
	[ "$allowed" = 4 ] && [ "$refused" = 8 ] && pass "${PFX}/metrics: judge_egress_total by decision (4 allowed, 8 refused)" ||
		fail "${PFX}/metrics: judge_egress_total" "allowed '$allowed', refused '$refused'"
	req DELETE "/v1/sessions/$A" >/dev/null

	# ---- the caps (judge.ini: 1 MB and 20 connections per session) ----
	create '{"allow": ["api.test"]}'
	B=$SID
	cell "past the byte cap a transfer is cut" "$B" "$LIB"$'\nr = get("http://api.test:@UP@/big")\nprint(r[:40] if r.startswith("error") else len(r))' \
		'.stdout | startswith("error ")'
	cell "and the next attempt is refused" "$B" 'print(get("http://api.test:@UP@/hello"))' \
		'.stdout == "403 egress refused: the session'"'"'s egress byte cap (1048576) is reached\n"'
	sleep 0.5 # the cut attempt is written when its connection ends
	expect "${PFX}the history says the proxy cut the transfer" 200 '[.egress[] | select(.decision == "allowed")] |
		length == 1 and (.[0].reason | test("byte cap")) and .[0].bytes_in <= 1048576' \
		GET "/v1/sessions/$B/history"
	req DELETE "/v1/sessions/$B" >/dev/null
	create '{"allow": ["api.test"]}'
	C=$SID
	cell "past the connection cap attempts are refused (20 of 25 pass)" "$C" \
		"$LIB"$'\nr = [get("http://api.test:@UP@/hello")[:3] for _ in range(25)]\nprint(r.count("200"), r.count("429"))' \
		'.stdout == "20 5\n"'
	req DELETE "/v1/sessions/$C" >/dev/null

	# ---- a tunnel still open when the session ends ----
	create '{"allow": ["api.test"]}'
	D=$SID
	cell "a tunnel left open in a variable" "$D" \
		$'import os, socket, urllib.parse\np = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])\nkeep = socket.create_connection((p.hostname, p.port))\nkeep.sendall(b"CONNECT api.test:@UP@ HTTP/1.1\\r\\n\\r\\n")\nprint(keep.recv(100).split(b"\\r\\n")[0].decode())' \
		'.stdout == "HTTP/1.1 200 Connection established\n"'
	expect "${PFX}the session closes with the tunnel open" 200 '.status == "closed"' DELETE "/v1/sessions/$D"
	for _ in $(seq 50); do
		out=$(req GET "/v1/sessions/$D/history")
		[ "$(jq '.egress | length' <<<"${out%$'\n'*}")" = 1 ] && break
		sleep 0.1
	done
	expect_json "${PFX}the tunnel was ended with it, and recorded" "${out%$'\n'*}" \
		'.egress[0].decision == "allowed" and (.egress[0].reason == "closed" or .egress[0].reason == "the session ended")'

	# ---- a session's processes go through it too ----
	create '{"allow": ["api.test"]}'
	E=$SID
	prog="import urllib.request; open('out.txt', 'w').write(urllib.request.urlopen('http://api.test:$UP/hello', timeout=20).read().decode())"
	expect "${PFX}a process started with the proxy variables" 201 '.pid > 0' POST "/v1/sessions/$E/processes" \
		"$(jq -nc --arg p "$prog" '{argv: ["python3", "-c", $p]}')"
	expect "${PFX}it ends well" 200 '.running == false and .exit_code == 0' \
		GET "/v1/sessions/$E/processes/$(jq -r .pid <<<"$LAST")?wait_ms=30000"
	out=$(curl -s "${AUTH[@]}" "$U/v1/sessions/$E/files/out.txt")
	[ "$out" = "hello from upstream, host api.test:$UP" ] && pass "${PFX}what it fetched through the proxy" ||
		fail "${PFX}what it fetched through the proxy" "$out"
	req DELETE "/v1/sessions/$E" >/dev/null

	# ---- no policy: no proxy, no variables ----
	create '"none"'
	N=$SID
	cell "a session without network has no proxy variables and reaches nothing" "$N" \
		$'import os, socket\nprint("HTTP_PROXY" in os.environ)\ntry:\n    socket.create_connection(("127.0.0.2", @UP@), timeout=5)\nexcept OSError as e:\n    print(type(e).__name__)' \
		'.stdout | test("^False\n(ConnectionRefusedError|OSError)\n$")'
	req DELETE "/v1/sessions/$N" >/dev/null
}

PFX="" proxy_checks

# ---- gVisor: the same checks, runsc --network=host in the proxy's namespace ----
svc_on_gvisor "a session's egress proxy" proxy_checks "${EGRESS_INI[@]}"

# stopped, so that a sanitizer build reports what it found (leaks at exit)
svc_stop "$MAIN_PID"
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/worker.log"
finish
