#!/usr/bin/env bash
# sessions_egress.sh: a session's egress policy as the API takes it, against a real
# service (tests/svc.sh): POST /v1/sessions's network (none by default, an
# allowlist of host rules, open), checked against judge.ini's cap (egress and
# egress_allow) or the key's own cap (the admin API's PATCH /v1/admin/keys/{id},
# `judge keys egress`): beyond it a 403 egress_forbidden naming the rule;
# malformed a 422; the policy shown by GET /v1/sessions/{id}; a bad cap
# refuses to start.
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

# ---- a key's own cap, set through the admin API (back on the first serve: egress = off) ----
ADMIN=$("$JUDGE" --config "$ini" keys create --name egress-admin --admin 2>/dev/null)
K2=$("$JUDGE" --config "$ini" keys create --name egress-granted 2>/dev/null)
K2ID=$("$JUDGE" --config "$ini" keys list | awk '$2 == "egress-granted" {print $1}')
AUTH0=("${AUTH[@]}")
AUTH=(-H "Authorization: Bearer $ADMIN")
expect "a key without an override shows egress null" 200 '.egress == null and .id == '"$K2ID" \
	GET "/v1/admin/keys/$K2ID"
expect "PATCH grants the key an allowlist beyond judge.ini's off" 200 \
	'.egress == {"mode": "allowlist", "allow": ["api.github.com", "*.example.org:443"]}' \
	PATCH "/v1/admin/keys/$K2ID" \
	'{"egress": {"mode": "allowlist", "allow": ["API.github.com", "*.example.org:443"]}}'
expect "the list shows it" 200 '.keys[] | select(.id == '"$K2ID"') | .egress.mode == "allowlist"' \
	GET /v1/admin/keys
for b in '{"egress": "open"}' '{"egress": {"mode": "none"}}' '{"egress": {"mode": "on"}}' \
	'{"egress": {"mode": "open", "allow": ["a.org"]}}' \
	'{"egress": {"mode": "allowlist", "allow": ["*.com"]}}' \
	'{"egress": {"mode": "off"}, "name": "x"}' '{"weight": 0}'; do
	bad "PATCH $b: 422" 422 invalid_field PATCH "/v1/admin/keys/$K2ID" "$b"
done
bad "PATCH {}: 422" 422 missing_field PATCH "/v1/admin/keys/$K2ID" '{}'
bad "PATCH an address: 422" 422 invalid_field PATCH "/v1/admin/keys/$K2ID" \
	'{"egress": {"mode": "allowlist", "allow": ["10.0.0.1"]}}'
expect_json "a bad egress says what is wrong" "$LAST" \
	'.error.message | startswith("egress.allow: '"'10.0.0.1'"' is an address")'
expect "the refused PATCHes changed nothing" 200 \
	'.egress.allow == ["api.github.com", "*.example.org:443"]' GET "/v1/admin/keys/$K2ID"
bad "PATCH an unknown key: 404" 404 not_found PATCH /v1/admin/keys/999999 '{"egress": null}'
AUTH=(-H "Authorization: Bearer $K2")
expect "the key may not use the admin API" 403 '.error.code == "forbidden"' GET "/v1/admin/keys/$K2ID"
create "the granted key: an allowlist within its own cap" 201 \
	'.network == {"mode": "allowlist", "allow": ["a.example.org:443"]}' \
	'{"language": "bash", "network": {"allow": ["a.example.org:443"]}}'
bad "the granted key: a host beyond its allowlist: 403" 403 egress_forbidden POST /v1/sessions \
	'{"language": "bash", "network": {"allow": ["evil.org"]}}'
expect_json "the 403 names the key's rule, not judge.ini" "$LAST" \
	'.error.message == "'"'evil.org'"' is beyond this API key'"'"'s allowlist: key '"$K2ID"''"'"'s egress.allow (/v1/admin/keys/'"$K2ID"')"'
bad "the granted key: open beyond its allowlist: 403" 403 egress_forbidden POST /v1/sessions \
	'{"language": "bash", "network": "open"}'
expect_json "the 403 names the key's mode" "$LAST" \
	'.error.message == "network '"'open'"' is beyond this API key'"'"'s cap: key '"$K2ID"''"'"'s egress = allowlist (/v1/admin/keys/'"$K2ID"')"'
AUTH=("${AUTH0[@]}")
bad "another key is still held to judge.ini's off" 403 egress_forbidden POST /v1/sessions \
	'{"language": "bash", "network": {"allow": ["a.example.org:443"]}}'
expect_json "its 403 names judge.ini" "$LAST" '.error.message | endswith("judge.ini [sessions] egress = off")'
# an override below judge.ini's: the second serve allows allowlists, the key is off
AUTH=(-H "Authorization: Bearer $ADMIN")
expect "PATCH the key down to off" 200 '.egress == {"mode": "off"}' \
	PATCH "/v1/admin/keys/$K2ID" '{"egress": {"mode": "off"}}'
U=http://127.0.0.1:$PORT2
AUTH=(-H "Authorization: Bearer $K2")
bad "under a serve of egress = allowlist, the key's off refuses" 403 egress_forbidden POST /v1/sessions \
	'{"language": "bash", "network": {"allow": ["api.github.com"]}}'
expect_json "naming the key's off" "$LAST" '.error.message | test("key '"$K2ID"'.s egress = off")'
U=$U1
AUTH=(-H "Authorization: Bearer $ADMIN")
expect "PATCH null: back to judge.ini's" 200 '.egress == null' PATCH "/v1/admin/keys/$K2ID" '{"egress": null}'
expect "POST a key with its own cap" 201 '.egress == {"mode": "open"} and (.key | startswith("jk_"))' \
	POST /v1/admin/keys '{"name": "born-open", "egress": {"mode": "open"}}'
K3=$(jq -r .key <<<"$LAST") K3ID=$(jq -r .id <<<"$LAST")
bad "POST a key with a bad cap: 422" 422 invalid_field POST /v1/admin/keys '{"name": "x", "egress": {"mode": "wide"}}'
AUTH=(-H "Authorization: Bearer $K2")
bad "reverted: the key is held to judge.ini's off again" 403 egress_forbidden POST /v1/sessions \
	'{"language": "bash", "network": {"allow": ["api.github.com"]}}'
AUTH=(-H "Authorization: Bearer $K3")
create "a key made open: open beyond judge.ini's off" 201 '.network == {"mode": "open"}' \
	'{"language": "bash", "network": "open"}'
# a cap lowered later: a new session from what the key had (a fork, a
# snapshot) is held to the cap of today, not to the one its parent had
expect "an open session of the open key" 201 '.network.mode == "open"' POST /v1/sessions \
	'{"language": "bash", "network": "open"}'
OS=$(jq -r '.id // empty' <<<"$LAST")
expect "a snapshot of it" 201 '(.snapshot_id | length) == 36' POST "/v1/sessions/$OS/snapshot" '{}'
SNAP=$(jq -r '.snapshot_id // empty' <<<"$LAST")
AUTH=(-H "Authorization: Bearer $ADMIN")
expect "PATCH the open key down to off" 200 '.egress == {"mode": "off"}' \
	PATCH "/v1/admin/keys/$K3ID" '{"egress": {"mode": "off"}}'
AUTH=(-H "Authorization: Bearer $K3")
bad "a fork of its open session under the lowered cap: 403" 403 egress_forbidden POST "/v1/sessions/$OS/fork" '{}'
expect_json "the fork's 403 names the key's cap" "$LAST" \
	'.error.message | test("^network .open. is beyond this API key.s cap: key '"$K3ID"'.s egress = off")'
bad "a session from its snapshot under the lowered cap: 403" 403 egress_forbidden POST /v1/sessions \
	'{"from_snapshot": "'"$SNAP"'"}'
create "from its snapshot with network none: allowed" 201 '.network == {"mode": "none"}' \
	'{"from_snapshot": "'"$SNAP"'", "network": "none"}'
req DELETE "/v1/sessions/$OS" >/dev/null
AUTH=("${AUTH0[@]}")
# the CLI sets and shows it too
check "judge keys egress ID allowlist RULES" "$JUDGE" --config "$ini" keys egress "$K2ID" allowlist "pypi.org:443, *.x.org"
expect_json "judge keys list shows it" "$("$JUDGE" --config "$ini" keys list | awk '$2 == "egress-granted"' | jq -R .)" \
	'endswith("allowlist pypi.org:443,*.x.org")'
AUTH=(-H "Authorization: Bearer $ADMIN")
expect "the admin API reads what the CLI set" 200 '.egress == {"mode": "allowlist", "allow": ["pypi.org:443", "*.x.org"]}' \
	GET "/v1/admin/keys/$K2ID"
AUTH=("${AUTH0[@]}")
check "judge keys egress ID default" "$JUDGE" --config "$ini" keys egress "$K2ID" default
if "$JUDGE" --config "$ini" keys egress "$K2ID" allowlist "10.0.0.1" >/dev/null 2>"$SVC_TMP/cli.err"; then
	fail "judge keys egress: an address is refused" "exit 0"
else
	grep -q "is an address" "$SVC_TMP/cli.err" && pass "judge keys egress: an address is refused" ||
		fail "judge keys egress: an address is refused" "$(cat "$SVC_TMP/cli.err")"
fi

# ---- the sessions' network attempts in the dashboard's JSON ----
# (rows as the egress proxy writes them, sessegress.c; sessions_proxy.sh makes real ones)
if "$SVC_PG_BIN/psql" "$SVC_DB_URL" -qAt -c "INSERT INTO session_egress (session_id, method, host,
	port, allowed, reason, addr, bytes_out, bytes_in) VALUES ('$S1', 'CONNECT', 'api.github.com',
	443, true, 'closed', '140.82.112.5', 517, 4096), ('$S1', 'GET', 'evil.org', 80, false,
	'evil.org:80 is not in this session''s network policy', '', 0, 0)" >"$SVC_TMP/psql.log" 2>&1; then
	AUTH=(-H "Authorization: Bearer $ADMIN")
	expect "admin stats: the last attempts, newest first" 200 \
		'[.egress[:2][] | [.session_id, .host, .port, .decision, .bytes_out, .bytes_in]] ==
		[["'"$S1"'", "evil.org", 80, "refused", 0, 0], ["'"$S1"'", "api.github.com", 443, "allowed", 517, 4096]] and
		(.egress[0].reason | startswith("evil.org:80 is not")) and (.egress[0].at_ms | type) == "number"' \
		GET /v1/admin/stats
	expect "admin stats ?egress_session: that session's" 200 '(.egress | length) == 2' \
		GET "/v1/admin/stats?egress_session=$S1"
	expect "admin stats ?egress_session of another session: none" 200 '.egress == []' \
		GET "/v1/admin/stats?egress_session=00000000-0000-0000-0000-000000000000"
	bad "admin stats ?egress_session=nope: 422" 422 invalid_field GET "/v1/admin/stats?egress_session=nope"
	AUTH=("${AUTH0[@]}")
	expect "the session's own history lists them" 200 '[.egress[].host] == ["api.github.com", "evil.org"]' \
		GET "/v1/sessions/$S1/history"
else
	fail "inject egress attempts" "$(cat "$SVC_TMP/psql.log")"
fi

# ---- bad caps refuse to start ----
svc_config "$SVC_TMP/bad1.ini" "listen = 127.0.0.1:$(svc_port)" "auth = on" "[sessions]" "egress = on"
svc_refused "egress = on: serve refuses to start" "$SVC_TMP/bad1.ini" "egress must be off, allowlist or open"
svc_config "$SVC_TMP/bad2.ini" "listen = 127.0.0.1:$(svc_port)" "auth = on" "[sessions]" \
	"egress = allowlist" "egress_allow = ok.org, 169.254.169.254"
svc_refused "an address in egress_allow: serve refuses to start" "$SVC_TMP/bad2.ini" "egress_allow: '169.254.169.254' is an address"

finish
