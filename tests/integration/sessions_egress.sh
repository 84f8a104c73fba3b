#!/usr/bin/env bash
# sessions_egress.sh: a session's egress policy as the API takes it, against a real
# service (tests/svc.sh): POST /v1/sessions's network (none by default, an
# allowlist of host rules, open), checked against judge.ini's cap (egress and
# egress_allow): beyond it a 403 egress_forbidden naming the rule; malformed a
# 422; the policy shown by GET /v1/sessions/{id}; a bad cap refuses to start.
# What the policy lets the code reach is the egress proxy's part (docs/egress.md).
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
source tests/svc.sh

# as shipped (svc.sh) but the native sandbox and one slot: egress = off, the default
svc_up egress-test "[sandbox]" "sandbox = native" "[worker]" "worker_slots = 1"

# create NAME STATUS JQ BODY: a create answered STATUS whose body passes JQ; SID its id
create() {
	expect "$1" "$2" "$3" POST /v1/sessions "$4"
	SID=$(jq -r '.id // empty' <<<"$LAST" 2>/dev/null)
	[ -n "$SID" ] && req DELETE "/v1/sessions/$SID" >/dev/null
}

# ---- the default cap: off ----
create "no network asked: none" 201 '.network == {"mode": "none"}' '{"language": "bash"}'
expect "GET shows it" 200 '.network == {"mode": "none"}' GET "/v1/sessions/$SID"
create "network none" 201 '.network == {"mode": "none"}' '{"language": "bash", "network": "none"}'
bad "egress off: an allowlist is a 403" 403 egress_forbidden POST /v1/sessions \
	'{"language": "bash", "network": {"allow": ["api.github.com"]}}'
expect_json "the 403 names the rule" "$LAST" \
	'.error.message == "network '"'allowlist'"' is beyond this server'"'"'s cap: judge.ini [sessions] egress = off"'
bad "egress off: open is a 403" 403 egress_forbidden POST /v1/sessions \
	'{"language": "bash", "network": "open"}'
for b in '"allowlist"' '"all"' 'true' '{}' '{"allow": []}' '{"allow": ["10.0.0.1"]}' \
	'{"allow": ["*.com"]}' '{"allow": ["a.com:99999"]}' '{"mode": "open", "allow": ["a.com"]}' \
	'{"allow": ["a.com"], "deny": ["b.com"]}'; do
	bad "malformed network $b: 422" 422 invalid_field POST /v1/sessions \
		"{\"language\": \"bash\", \"network\": $b}"
done

# ---- a second serve on the same database, cap allowlist within the operator's rules ----
ini2=$SVC_TMP/judge2.ini
PORT2=$(svc_port)
svc_config "$ini2" "listen = 127.0.0.1:$PORT2" "auth = on" "[sessions]" "egress = allowlist" \
	"egress_allow = api.github.com, *.example.org:443"
svc_serve "$ini2" && pass "serve with egress = allowlist" || { fail "serve with egress = allowlist"; finish; exit 1; }
U1=$U
U=http://127.0.0.1:$PORT2
create "an allowlist within the operator's" 201 '.network == {"mode": "allowlist",
	"allow": ["api.github.com", "*.example.org:443", "a.b.example.org:443"]}' \
	'{"language": "bash", "network": {"allow": ["API.github.com", "*.example.org:443",
	"a.b.example.org:443"]}}'
S1=$SID
expect "GET shows the allowlist" 200 '.network.mode == "allowlist" and
	(.network.allow | length) == 3' GET "/v1/sessions/$S1"
bad "a host beyond the operator's: 403" 403 egress_forbidden POST /v1/sessions \
	'{"language": "bash", "network": {"allow": ["api.github.com", "evil.org"]}}'
expect_json "the 403 names the host and the key" "$LAST" \
	'.error.message == "'"'evil.org'"' is beyond the operator'"'"'s allowlist: judge.ini [sessions] egress_allow"'
bad "a port beyond the operator's: 403" 403 egress_forbidden POST /v1/sessions \
	'{"language": "bash", "network": {"allow": ["a.example.org:80"]}}'
bad "a wider wildcard: 403" 403 egress_forbidden POST /v1/sessions \
	'{"language": "bash", "network": {"allow": ["*.github.com"]}}'
bad "open beyond allowlist: 403" 403 egress_forbidden POST /v1/sessions \
	'{"language": "bash", "network": "open"}'
U=$U1
expect "the first serve shows the same stored policy" 200 '.network.allow[0] == "api.github.com"' \
	GET "/v1/sessions/$S1"

# ---- bad caps refuse to start ----
svc_config "$SVC_TMP/bad1.ini" "listen = 127.0.0.1:$(svc_port)" "auth = on" "[sessions]" "egress = on"
svc_refused "egress = on: serve refuses to start" "$SVC_TMP/bad1.ini" "egress must be off, allowlist or open"
svc_config "$SVC_TMP/bad2.ini" "listen = 127.0.0.1:$(svc_port)" "auth = on" "[sessions]" \
	"egress = allowlist" "egress_allow = ok.org, 169.254.169.254"
svc_refused "an address in egress_allow: serve refuses to start" "$SVC_TMP/bad2.ini" "egress_allow: '169.254.169.254' is an address"

finish
