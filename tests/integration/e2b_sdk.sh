#!/usr/bin/env bash
# e2b_sdk.sh: the unmodified E2B SDK (@e2b/code-interpreter 2.x and its e2b 2.x, from
# npm) against the judge's own listener: E2B_API_URL and E2B_SANDBOX_URL are the
# judge's origin, E2B_API_KEY a judge key. tests/integration/e2b_sdk.mjs creates a
# sandbox (a judge session), runs code in it (results, output, errors, state), lists,
# connects, kills, and checks another key sees none of it (docs/e2b.md).
# Usage: bash tests/integration/e2b_sdk.sh [BINARY]
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
source tests/svc.sh

# changed from judge.ini (svc.sh): one native slot
svc_up e2b-sdk-test "[worker]" "worker_slots = 1" "[sandbox]" "sandbox = native"
KEY2=$("$JUDGE" --config "$ini" keys create --name other 2>/dev/null)
# a key whose own egress cap is open (docs/egress.md), for the network checks
KEY3=$("$JUDGE" --config "$ini" keys create --name open-egress 2>/dev/null)
check "judge keys egress ID open" "$JUDGE" --config "$ini" keys egress \
	"$("$JUDGE" --config "$ini" keys list | awk '$2 == "open-egress" {print $1}')" open

NODE=/opt/judge/runtimes/node22/bin/node
[ -x "$NODE" ] || NODE=$(command -v node)
NPM=$(command -v npm)
if [ -z "$NODE" ] || [ -z "$NPM" ]; then
	fail "node and npm are here" "node=${NODE:-none} npm=${NPM:-none}"
	finish
	exit
fi
NP=$SVC_TMP/npm
mkdir -p "$NP"
if (cd "$NP" && "$NPM" install --no-audit --no-fund --silent @e2b/code-interpreter@^2 \
	>"$NP/install.log" 2>&1); then
	pass "npm install @e2b/code-interpreter@^2 ($(jq -r .version \
		"$NP/node_modules/@e2b/code-interpreter/package.json"), e2b $(jq -r .version \
		"$NP/node_modules/e2b/package.json"))"
else
	fail "npm install @e2b/code-interpreter@^2" "$(tail -5 "$NP/install.log")"
	finish
	exit
fi
cp tests/integration/e2b_sdk.mjs "$NP/"
n=0
while IFS= read -r line; do
	case $line in
	"ok "*) pass "sdk ${line#ok }"; n=$((n + 1)) ;;
	"FAIL "*) fail "sdk ${line#FAIL }"; n=$((n + 1)) ;;
	esac
done < <(cd "$NP" && E2B_API_URL=$U E2B_SANDBOX_URL=$U E2B_API_KEY=$KEY OTHER_KEY=$KEY2 OPEN_KEY=$KEY3 \
	timeout 300 "$NODE" e2b_sdk.mjs 2>>"$NP/run.err")
[ "$n" -ge 20 ] && pass "sdk: every check reported ($n)" ||
	fail "sdk: every check reported" "$n lines; $(tail -c 600 "$NP/run.err")"

# the protocol's own rules, with curl: what the Python SDK and others rely on
H=(-H "X-API-KEY: $KEY" -H "Content-Type: application/json")
# (the Python SDK always sends allow_internet_access, true by default: under
# judge.ini's egress = off that is a sandbox without network, not a refusal)
out=$(curl -s -w '\n%{http_code}' "${H[@]}" "$U/sandboxes" -d '{"templateID": "base", "timeout": 60,
	"allow_internet_access": true, "metadata": {}, "envVars": {}, "secure": true}')
status=${out##*$'\n'}
body=${out%$'\n'*}
[ "$status" = 201 ] && pass "POST /sandboxes: 201" || fail "POST /sandboxes: 201" "$out"
expect_json "POST /sandboxes: the fields the Python SDK requires" "$body" \
	'(.sandboxID | length) == 36 and .templateID != null and .clientID != null and
	.envdVersion == "0.5.6"'
SB=$(jq -r .sandboxID <<<"$body")
expect_json "POST /sandboxes with allow_internet_access true: network none under egress = off" \
	"$(curl -s -H "Authorization: Bearer $KEY" "$U/v1/sessions/$SB")" '.network == {"mode": "none"}'
out=$(curl -s -w '\n%{http_code}' "${H[@]}" "$U/sandboxes" -d '{"templateID": "base",
	"network": {"egressProxy": {"address": "proxy.test:1080"}}}')
[ "${out##*$'\n'}" = 400 ] && expect_json "POST /sandboxes with network.egressProxy: 400 in E2B's shape" \
	"${out%$'\n'*}" '.code == 400 and (.message | contains("egressProxy cannot be mapped"))' ||
	fail "POST /sandboxes with network.egressProxy: 400" "$out"
curl -s -o "$SVC_TMP/exec.ndjson" -H "E2b-Sandbox-Id: $SB" -H "E2b-Sandbox-Port: 49999" \
	-H "X-Access-Token: $KEY" -H "Content-Type: application/json" "$U/execute" \
	-d '{"code": "print(1)\n6 * 7", "context_id": null, "language": null, "env_vars": null}'
expect_json "POST /execute: NDJSON lines, nulls as absent" "$(jq -sc . "$SVC_TMP/exec.ndjson")" \
	'map(.type) == ["number_of_executions", "stdout", "result", "end_of_execution"] and
	.[1].text == "1\n" and (.[1].timestamp | test("Z$")) and .[2].text == "42"'
[ "$(grep -c '^$' "$SVC_TMP/exec.ndjson")" = 0 ] && [ "$(tail -c 1 "$SVC_TMP/exec.ndjson" | od -An -c | tr -d ' ')" = '\n' ] &&
	pass "POST /execute: no blank line, each line ends in a newline" ||
	fail "POST /execute: no blank line" "$(cat -A "$SVC_TMP/exec.ndjson")"
out=$(curl -s -o /dev/null -w '%{http_code}' -H "E2b-Sandbox-Id: $SB" -H "E2b-Sandbox-Port: 49999" \
	-H "X-Access-Token: $KEY2" -H "Content-Type: application/json" "$U/execute" -d '{"code": "1"}')
[ "$out" = 502 ] && pass "POST /execute with another key's token: 502 (not running)" ||
	fail "POST /execute with another key's token: 502" "$out"
out=$(curl -s -w '\n%{http_code}' -H "E2b-Sandbox-Id: $SB" -H "E2b-Sandbox-Port: 49999" \
	-H "X-Access-Token: $KEY" -H "Content-Type: application/json" "$U/execute" \
	-d '{"code": "1", "context_id": "nope"}')
[ "${out##*$'\n'}" = 404 ] && pass "POST /execute, unknown context: 404" ||
	fail "POST /execute, unknown context: 404" "$out"
out=$(curl -s -w '\n%{http_code}' "${H[@]}" -X DELETE "$U/sandboxes/$SB")
[ "${out##*$'\n'}" = 204 ] && pass "DELETE /sandboxes/{id}: 204" || fail "DELETE: 204" "$out"
out=$(curl -s -w '\n%{http_code}' "${H[@]}" -X DELETE "$U/sandboxes/$SB")
expect_json "DELETE again: 404 with an int code" "${out%$'\n'*}" '.code == 404 and (.message | length) > 0'
out=$(curl -s -w '\n%{http_code}' "${H[@]}" "$U/sandboxes/not-a-sandbox")
expect_json "GET /sandboxes/{unknown}: 404 with an int code" "${out%$'\n'*}" '.code == 404'
out=$(curl -s -o /dev/null -w '%{http_code}' -H "E2b-Sandbox-Id: $SB" -H "E2b-Sandbox-Port: 49983" \
	-H "X-Access-Token: $KEY" "$U/health")
[ "$out" = 502 ] && pass "envd /health of a killed sandbox: 502" || fail "envd /health: 502" "$out"
out=$(curl -s -o /dev/null -w '%{http_code}' "$U/health")
[ "$out" = 200 ] && pass "the judge's own /health still answers" || fail "judge /health" "$out"

kill -0 "$MAIN_PID" 2>/dev/null && pass "serve still running" || fail "serve still running"
for p in "${SVC_PIDS[@]}"; do svc_stop "$p"; done
logs=("$SVC_TMP/serve.log" "$NP/run.err")
if grep -qiE "segfault|assert|panic|runtime error|Sanitizer" "${logs[@]}"; then
	fail "logs clean" "$(grep -iE "segfault|assert|panic|runtime error|Sanitizer" \
		"${logs[@]}" | head -10)"
else
	pass "logs clean"
fi
finish
