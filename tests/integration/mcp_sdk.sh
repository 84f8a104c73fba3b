#!/usr/bin/env bash
# mcp_sdk.sh: the official MCP TypeScript SDKs from npm against the judge, over both
# transports: stdio (`judge mcp`, the bridge of judge/cli/cmd_mcp.c) and Streamable
# HTTP (POST /mcp). Two SDKs: 1.x (@modelcontextprotocol/sdk, the 2025 era with
# initialize) and 2.x (@modelcontextprotocol/client, pinned to protocol revision
# 2026-07-28: server/discover, per-request _meta). Each connects, lists the tools and
# calls every one (tests/integration/mcp_sdk.mjs). Then the bridge's own rules with
# plain pipes: a malformed line, notifications, 2026-07-28 lines (the headers it
# mirrors), a judge that is down, EOF.
# Usage: bash tests/integration/mcp_sdk.sh [BINARY]
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
source tests/svc.sh

# changed from judge.ini (svc.sh): a 30 s wait cap, two native slots
svc_up mcp-sdk-test "max_wait_s = 30" "[worker]" "worker_slots = 2" "[sandbox]" "sandbox = native"
ROOT=$(pwd)
BIN=$(cd "$(dirname "$JUDGE")" && pwd)/$(basename "$JUDGE")

# ---- the bridge with plain pipes ----
# bridge LINES...: the lines on judge mcp's stdin; its stdout, then "rc=N"
bridge() {
	printf '%s\n' "$@" | timeout 120 "$JUDGE" --config "$ini" mcp --url "$U" --key "$KEY" \
		2>>"$SVC_TMP/bridge.err"
	echo "rc=$?"
}
out=$(bridge 'this is not json' '{"jsonrpc":"2.0","id":1,"method":"ping"}')
expect_json "bridge: a malformed line gets a parse error" "$(sed -n 1p <<<"$out")" \
	'.jsonrpc == "2.0" and .id == null and .error.code == -32700'
expect_json "bridge: and it keeps going (the next line answered)" "$(sed -n 2p <<<"$out")" \
	'.id == 1 and .result == {}'
[ "$(sed -n 3p <<<"$out")" = "rc=0" ] && pass "bridge: EOF ends it with 0" ||
	fail "bridge: EOF ends it with 0" "$out"
out=$(bridge '{"jsonrpc":"2.0","method":"notifications/initialized"}' '' \
	'{"jsonrpc":"2.0","id":"a","method":"tools/list"}')
expect_json "bridge: a notification and an empty line write nothing; one line per answer" \
	"$(sed -n 1p <<<"$out")" '.id == "a" and (.result.tools | length) == 22'
[ "$(wc -l <<<"$out")" = 2 ] && pass "bridge: nothing else on stdout" ||
	fail "bridge: nothing else on stdout" "$out"
out=$(printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"ping"}' |
	JUDGE_API_KEY=$KEY "$JUDGE" --config "$ini" mcp 2>>"$SVC_TMP/bridge.err")
expect_json "bridge: URL from judge.ini's listen, key from JUDGE_API_KEY" "$out" \
	'.id == 2 and .result == {}'
out=$(printf '%s\n' '{"jsonrpc":"2.0","id":3,"method":"ping"}' |
	"$JUDGE" --config "$ini" mcp --key jk_wrong 2>>"$SVC_TMP/bridge.err")
expect_json "bridge: a bad key is a JSON-RPC error naming the 401" "$out" \
	'.id == 3 and .error.code == -32000 and (.error.message | contains("401"))'
DOWN=http://127.0.0.1:$(free_port)
out=$(printf '%s\n' '{"jsonrpc":"2.0","id":4,"method":"ping"}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":5,"method":"ping"}' |
	"$JUDGE" --config "$ini" mcp --url "$DOWN" --key "$KEY" 2>"$SVC_TMP/down.err")
rc=$?
expect_json "bridge: a judge that is down: an error per request, no crash" "$(jq -s . <<<"$out")" \
	'length == 2 and .[0].id == 4 and .[1].id == 5 and all(.[]; .error.code == -32000 and
	(.error.message | contains("cannot reach")))'
[ "$rc" = 0 ] && pass "bridge: exits 0 at EOF after errors" || fail "bridge: exit code" "$rc"
grep -q "cannot reach" "$SVC_TMP/down.err" && pass "bridge: logs on stderr" ||
	fail "bridge: logs on stderr" "$(head -c 300 "$SVC_TMP/down.err")"
# 2026-07-28 lines: the bridge mirrors version, method and name into the headers the
# HTTP transport requires (a name that is not plain ASCII as =?base64?...?=)
M='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}'
out=$(bridge "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{$M}}" \
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"execute\",\"arguments\":{\"language\":\"python\",\"source\":\"print(5)\"},$M}}" \
	"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\" exécute\",$M}}" \
	"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":{$M}}" \
	"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"subscriptions/listen\",\"params\":{\"notifications\":{},$M}}")
expect_json "bridge 2026-07-28: server/discover" "$(sed -n 1p <<<"$out")" \
	'.id == 1 and .result.supportedVersions[0] == "2026-07-28" and .result.resultType == "complete"'
expect_json "bridge 2026-07-28: tools/call (Mcp-Name mirrored)" "$(sed -n 2p <<<"$out")" \
	'.id == 2 and .result.resultType == "complete" and .result.structuredContent.stdout == "5\n"'
expect_json "bridge 2026-07-28: a name not plain ASCII goes as Base64, the server decodes it" \
	"$(sed -n 3p <<<"$out")" '.id == 3 and .error.code == -32602 and (.error.message | contains(" exécute"))'
expect_json "bridge 2026-07-28: ping is gone (-32601)" "$(sed -n 4p <<<"$out")" \
	'.id == 4 and .error.code == -32601'
expect_json "bridge 2026-07-28: subscriptions/listen's stream, a line per message" \
	"$(sed -n 5,6p <<<"$out" | jq -sc .)" '.[0].method == "notifications/subscriptions/acknowledged" and
	.[1].id == 5 and .[1].result.resultType == "complete"'
out=$("$JUDGE" --config "$ini" mcp --bogus </dev/null 2>&1)
[ $? = 2 ] && pass "bridge: unknown option is a usage error" || fail "bridge: usage error" "$out"

# ---- the SDK over both transports ----
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
# 1.x (the 2025 era) and 2.x (2026-07-28), side by side: their package names differ
if (cd "$NP" && "$NPM" install --no-audit --no-fund --silent @modelcontextprotocol/sdk@^1 \
	@modelcontextprotocol/client@^2 >"$NP/install.log" 2>&1); then
	pass "npm install @modelcontextprotocol/sdk@^1 @modelcontextprotocol/client@^2"
else
	fail "npm install @modelcontextprotocol/sdk@^1 @modelcontextprotocol/client@^2" \
		"$(tail -5 "$NP/install.log")"
	finish
	exit
fi
cp tests/integration/mcp_sdk.mjs "$NP/"
# sdk ARGS...: runs the script; each "ok NAME" / "FAIL NAME -- DETAIL" line becomes a check
sdk() {
	local line n=0
	while IFS= read -r line; do
		case $line in
		"ok "*) pass "sdk ${line#ok }"; n=$((n + 1)) ;;
		"FAIL "*) fail "sdk ${line#FAIL }"; n=$((n + 1)) ;;
		esac
	done < <(cd "$NP" && timeout 300 "$NODE" mcp_sdk.mjs "$@" 2>>"$NP/run.err")
	[ "$n" -ge 22 ] && pass "sdk $1 $2: every check reported ($n)" ||
		fail "sdk $1 $2: every check reported" "$n lines; $(tail -c 400 "$NP/run.err")"
}
sdk v1 stdio "$BIN" "$ini" "$U" "$KEY" "$ROOT"
sdk v1 http "$U" "$KEY" "$ROOT"
sdk v2 stdio "$BIN" "$ini" "$U" "$KEY" "$ROOT"
sdk v2 http "$U" "$KEY" "$ROOT"

kill -0 "$MAIN_PID" 2>/dev/null && pass "serve still running" || fail "serve still running"
for p in "${SVC_PIDS[@]}"; do svc_stop "$p"; done
logs=("$SVC_TMP/serve.log" "$SVC_TMP/bridge.err" "$SVC_TMP/down.err" "$NP/run.err")
if grep -qiE "segfault|assert|panic|runtime error|Sanitizer" "${logs[@]}"; then
	fail "logs clean" "$(grep -iE "segfault|assert|panic|runtime error|Sanitizer" \
		"${logs[@]}" | head -10)"
else
	pass "logs clean"
fi
finish
