#!/usr/bin/env bash
# web.sh: the playground (/), the problems page (/problems) and the operator
# dashboard (/dashboard) in a real browser: Debian's chromium driven headless by playwright-core from npm
# (tests/integration/web.mjs; never a downloaded browser). Also, with curl: the
# pages' headers (strict CSP, no inline scripts or styles), the admin endpoints
# (403 for a key without the admin flag, bad bodies are 4xx JSON), `judge keys
# create --admin`, and that the committed bundles are what web/src/ builds.
# Screenshots go to the folder printed at the start (build/test-artifacts/web).
# Usage: bash tests/integration/web.sh [BINARY]
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
source tests/svc.sh
ROOT=$(pwd)
SHOTS=${JUDGE_ARTIFACTS:-$ROOT/build/test-artifacts}/web
mkdir -p "$SHOTS" && rm -f "$SHOTS"/*.png
echo "web: screenshots in $SHOTS"

# a local PEP 503 index for the session's package install (PyPI is not reachable here)
svc_index tinypkg==1.0

# changed from judge.ini (svc.sh): a 30 s wait cap, two native slots, and the local
# index (PyPI is not reachable here)
svc_up web-test "max_wait_s = 30" "[worker]" "worker_slots = 2" "[sandbox]" "sandbox = native" \
	"[sessions]" "pip_index_url = ${INDEX:-http://127.0.0.1:9/simple/}"
ADMIN=$("$JUDGE" --config "$ini" keys create --name web-admin --admin 2>"$SVC_TMP/keys.err")
[[ $ADMIN == jk_* ]] && grep -q "created admin key" "$SVC_TMP/keys.err" &&
	pass "judge keys create --admin" || fail "judge keys create --admin" "$(cat "$SVC_TMP/keys.err")"
"$JUDGE" --config "$ini" keys list >"$SVC_TMP/keys.list" 2>&1
grep -E "web-admin .* admin +1 +-$" "$SVC_TMP/keys.list" >/dev/null && pass "judge keys list shows the admin flag and the weight" ||
	fail "judge keys list shows the admin flag and the weight" "$(cat "$SVC_TMP/keys.list")"
# a key's weight: its share of the workers (docs/operations.md, "Queue policy")
aid=$(awk '$2 == "web-admin" {print $1}' "$SVC_TMP/keys.list")
out=$("$JUDGE" --config "$ini" keys weight "$aid" 5 2>&1) && [ "$out" = "key $aid has weight 5" ] &&
	"$JUDGE" --config "$ini" keys list 2>&1 | grep -qE "web-admin .* admin +5 +-$" &&
	pass "judge keys weight sets it" || fail "judge keys weight sets it" "$out"
for w in 0 1001 x; do
	out=$("$JUDGE" --config "$ini" keys weight "$aid" "$w" 2>&1)
	[ $? = 2 ] && grep -q "weight from 1 to 1000" <<<"$out" && pass "judge keys weight $w is refused" ||
		fail "judge keys weight $w is refused" "$out"
done
out=$("$JUDGE" --config "$ini" keys weight 999999 2 2>&1)
[ $? = 1 ] && grep -q "no key 999999" <<<"$out" && pass "judge keys weight of no key" || fail "judge keys weight of no key" "$out"
"$JUDGE" --config "$ini" keys weight "$aid" 1 >/dev/null 2>&1

# ---- the pages' headers ----
for p in / /dashboard /problems /playground.js /dashboard.js /problems.js /app.css; do
	curl -s -m 20 -D "$SVC_TMP/h" -o "$SVC_TMP/b" "$U$p"
	csp=$(sed -n 's/^content-security-policy: //Ip' "$SVC_TMP/h" | tr -d '\r')
	if grep -q "^HTTP/1.1 200" "$SVC_TMP/h" && [[ $csp == *"default-src 'none'"* ]] &&
		[[ $csp == *"script-src 'self'"* ]] && [[ $csp == *"style-src 'self';"* ]] &&
		[[ $csp != *unsafe* ]] && grep -qi '^x-content-type-options: nosniff' "$SVC_TMP/h"; then
		pass "GET $p: 200 with no key, a strict CSP, nosniff"
	else
		fail "GET $p: a strict CSP" "$(head -c 600 "$SVC_TMP/h")"
	fi
done
for f in index.html dashboard.html problems.html; do
	# no inline script or style, nothing from another host
	if grep -Eqi '<script>|<script [^>]*>[^<]|<style|[[:space:]]style=|[[:space:]]on[a-z]+=|(src|href)="(https?:)?//' web/$f; then
		fail "web/$f: no inline script or style, nothing from another host"
	else
		pass "web/$f: no inline script or style, nothing from another host"
	fi
done

# ---- the admin endpoints ----
A=(-H "Authorization: Bearer $ADMIN")
EXPECT_REQ=req
bad "stats with a key that is not admin" 403 forbidden GET /v1/admin/stats
bad "keys with a key that is not admin" 403 forbidden GET /v1/admin/keys
bad "revoke with a key that is not admin" 403 forbidden DELETE /v1/admin/keys/1
# a paused session of the test's key: the dashboard counts it and its image
svc_session '{"language": "python"}'
PAUSED=$SID
expect "a session of the key, paused" 200 '.status == "paused" and .stored > 0' POST "/v1/sessions/$PAUSED/pause"
AUTH=("${A[@]}")
expect "stats: the dashboard's numbers" 200 \
	'(.queue_depth | type) == "number" and (.running | type) == "number" and (.series | type) == "array"
	 and (.workers | length) >= 1 and (.workers[0] | .alive and .slots == 2) and (.failures | type) == "array"
	 and (.sessions.open | type) == "number" and (.sessions.by_status | has("ready"))
	 and .sessions.paused >= 1 and .sessions.images_stored > 0
	 and (.keys | type) == "array"' \
	GET /v1/admin/stats
expect "keys: listed, never the secret; the paused session and its stored bytes on its key" 200 \
	'(.keys | length) >= 2 and all(.keys[]; has("hash") | not) and (.keys | map(select(.admin)) | length) == 1
	 and (.keys | map(select(.paused_sessions >= 1 and .images_stored > 0)) | length) == 1' \
	GET /v1/admin/keys
expect "create a key" 201 '.key | test("^jk_[0-9a-f]{40}$")' POST /v1/admin/keys '{"name": "made by curl"}'
NEW=$(jq -r .key <<<"$LAST")
NEW_ID=$(jq -r .id <<<"$LAST")
st=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $NEW" "$U/v1/languages")
[ "$st" = 200 ] && pass "the new key works at once" || fail "the new key works at once" "status $st"
bad "create: no name" 422 missing_field POST /v1/admin/keys '{}'
bad "create: empty name" 422 invalid_field POST /v1/admin/keys '{"name": ""}'
bad "create: admin not a boolean" 422 invalid_field POST /v1/admin/keys '{"name": "a", "admin": 1}'
bad "create: unknown field" 422 invalid_field POST /v1/admin/keys '{"name": "a", "root": true}'
bad "create: not JSON" 400 invalid_json POST /v1/admin/keys '{"name"'
bad "create: not an object" 422 missing_field POST /v1/admin/keys '[1]'
out=$(curl -s -m 20 "${A[@]}" -H 'Content-Type: text/plain' -w '\n%{http_code}' "$U/v1/admin/keys" -d '{"name": "a"}')
expect_json "bad: create: no JSON content type is 415" "${out%$'\n'*}" '.error.code == "unsupported_media_type"'
bad "revoke: not a number" 404 not_found DELETE /v1/admin/keys/abc
bad "revoke: no such key" 404 not_found DELETE /v1/admin/keys/999999
bad "a key: POST is not allowed" 405 method_not_allowed POST /v1/admin/keys/1 '{}'
expect "revoke a key: its work ends with it" 200 \
	'.revoked == true and .cancelled == 0 and .sessions_closed == 0' DELETE "/v1/admin/keys/$NEW_ID"
bad "revoke it again" 404 not_found DELETE "/v1/admin/keys/$NEW_ID"
AUTH=(-H "Authorization: Bearer $KEY")

# ---- a second serve with auth = off on loopback, same database ----
OFF_PORT=$(svc_port)
off_ini=$SVC_TMP/off.ini
# auth = off (loopback): the pages without a key, under test
svc_config "$off_ini" "listen = 127.0.0.1:$OFF_PORT" "auth = off" "max_wait_s = 30"
svc_serve "$off_ini" || { fail "serve with auth = off starts"; finish; exit 1; }
OFF=http://127.0.0.1:$OFF_PORT
st=$(curl -s -o /dev/null -w '%{http_code}' -H 'Origin: http://evil.example' "$OFF/v1/admin/stats")
[ "$st" = 403 ] && pass "auth = off: a page of another origin cannot read /v1/admin/" ||
	fail "auth = off: another origin is refused" "status $st"

# ---- the committed bundles are what web/src/ builds ----
NODE=$(command -v node)
NPM=$(command -v npm)
if [ -z "$NODE" ] || [ -z "$NPM" ]; then
	fail "node and npm are here" "node=${NODE:-none} npm=${NPM:-none}"
	finish
	exit
fi
B=$SVC_TMP/bundle
mkdir -p "$B/web/src"
cp web/src/*.js web/src/*.mjs web/src/package*.json "$B/web/src/"
if (cd "$B/web/src" && timeout 300 "$NPM" ci --no-audit --no-fund --silent >"$B/npm.log" 2>&1 &&
	"$NODE" build.mjs >>"$B/npm.log" 2>&1); then
	if cmp -s "$B/web/playground.js" web/playground.js && cmp -s "$B/web/dashboard.js" web/dashboard.js &&
		cmp -s "$B/web/problems.js" web/problems.js; then
		pass "web/playground.js, dashboard.js and problems.js are what web/src/ builds (make web)"
	else
		fail "the committed bundles are stale: run 'make web' and commit them"
	fi
else
	fail "npm ci and esbuild in web/src" "$(tail -5 "$B/npm.log")"
fi

# ---- a fault, injected: a submission the judge failed (the dashboard lists it) ----
PSQL=$SVC_PG_BIN/psql
if "$PSQL" "$SVC_DB_URL" -qAt -c "INSERT INTO submissions (status, request, result, attempts,
	worker, started, finished, lease_until) VALUES ('internal_error', '{\"language\": \"python\"}',
	'{\"status\": \"internal_error\", \"message\": \"injected: the sandbox could not start\"}',
	3, 'web-test:1/0', now(), now(), NULL)" >"$SVC_TMP/psql.log" 2>&1; then
	AUTH=("${A[@]}")
	expect "stats: a failure is listed with its message" 200 \
		'.failures[0].message == "injected: the sandbox could not start" and .failures[0].attempts == 3' \
		GET /v1/admin/stats
	AUTH=(-H "Authorization: Bearer $KEY")
else
	fail "inject a failed submission" "$(cat "$SVC_TMP/psql.log")"
fi

# ---- network attempts, injected as the egress proxy writes them (sessegress.c): the
# dashboard lists them (sessions_proxy.sh makes real ones) ----
if "$PSQL" "$SVC_DB_URL" -qAt -c "INSERT INTO session_egress (session_id, method, host, port,
	allowed, reason, addr, bytes_out, bytes_in) VALUES ('$PAUSED', 'CONNECT', 'api.test', 443, true,
	'closed', '127.0.0.2', 517, 4096), ('$PAUSED', 'GET', 'evil.test', 80, false,
	'evil.test:80 is not in this session''s network policy', '', 0, 0)" >"$SVC_TMP/psql.log" 2>&1; then
	AUTH=("${A[@]}")
	expect "stats: the sessions' network attempts, newest first" 200 \
		'[.egress[:2][] | .host] == ["evil.test", "api.test"] and .egress[0].session_id == "'"$PAUSED"'"' \
		GET /v1/admin/stats
	AUTH=(-H "Authorization: Bearer $KEY")
else
	fail "inject network attempts" "$(cat "$SVC_TMP/psql.log")"
fi

# ---- the browser ----
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
	fail "chromium is installed (make deps)" "$CHROMIUM is missing"
	finish
	exit
fi
PW=$SVC_TMP/pw
mkdir -p "$PW"
# the version is pinned: a newer one may need a newer browser than Debian's
if (cd "$PW" && timeout 300 "$NPM" install --no-audit --no-fund --silent playwright-core@1.65.1 \
	>"$PW/install.log" 2>&1); then
	pass "npm install playwright-core"
else
	fail "npm install playwright-core" "$(tail -5 "$PW/install.log")"
	finish
	exit
fi
cp tests/integration/web.mjs "$PW/"
# a package for the problems page to upload: one test, an accepted Python submission
PK=$SVC_TMP/webprob
mkdir -p "$PK/data/sample" "$PK/data/secret" "$PK/submissions/accepted"
printf 'problem_format_version: 2025-09\nname: Web upload\nlimits:\n  time_limit: 5\n' >"$PK/problem.yaml"
echo 3 >"$PK/data/sample/1.in" && echo 6 >"$PK/data/sample/1.ans"
echo 5 >"$PK/data/secret/2.in" && echo 10 >"$PK/data/secret/2.ans"
printf 'print(2 * int(input()))\n' >"$PK/submissions/accepted/double.py"
(cd "$PK" && zip -qr "$SVC_TMP/webprob.zip" .)
n=0
while IFS= read -r line; do
	case $line in
	"ok "*) pass "browser: ${line#ok }"; n=$((n + 1)) ;;
	"FAIL "*) fail "browser: ${line#FAIL }"; n=$((n + 1)) ;;
	"skip "*) skip "browser: ${line#skip }"; n=$((n + 1)) ;;
	esac
done < <(cd "$PW" && CHROMIUM=$CHROMIUM timeout 600 "$NODE" web.mjs "$U" "$KEY" "$ADMIN" "$OFF" "$SHOTS" "$SVC_TMP/webprob.zip" "$PAUSED" \
	2>>"$PW/run.err")
[ "$n" -ge 15 ] && pass "browser: every check reported ($n)" ||
	fail "browser: every check reported" "$n lines; $(tail -c 600 "$PW/run.err")"
shots=$(ls "$SHOTS"/*.png 2>/dev/null | wc -l)
[ "$shots" -ge 6 ] && pass "screenshots written ($shots in $SHOTS)" || fail "screenshots written" "$shots"

kill -0 "$MAIN_PID" 2>/dev/null && pass "serve still running" || fail "serve still running"
for p in "${SVC_PIDS[@]}"; do svc_stop "$p"; done
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/worker.log"
finish
