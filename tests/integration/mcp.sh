#!/usr/bin/env bash
# mcp.sh: the MCP endpoint (POST /mcp) end to end on a real PostgreSQL, judge serve and
# a native-sandbox worker: initialize, notifications, tools/list, every tool, JSON-RPC
# errors, HTTP-level refusals, protocol revision 2026-07-28 beside the legacy era
# (server/discover, per-request _meta, header checks, resultType, an unsupported
# version), and the server still healthy afterwards.
# Usage: bash tests/integration/mcp.sh [BINARY]
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
source tests/svc.sh

# changed from judge.ini (svc.sh): a 4 KB source cap (the refusal under test), a 30 s
# wait cap, two native slots
svc_up mcp-test "max_wait_s = 30" "max_source_kb = 4" "[worker]" "worker_slots = 2" \
	"[sandbox]" "sandbox = native"

# rpc BODY [URL]: POSTs to /mcp as an MCP client does; prints "BODY\nSTATUS"
rpc() {
	curl -s -m 60 -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-06-18' \
		-w '\n%{http_code}' "${2:-$U}/mcp" --data-binary "$1"
}
# expect NAME STATUS JQ BODY [URL] (svc.sh) goes through rpc
EXPECT_REQ=rpc
# call ID TOOL ARGS_JSON: a tools/call request body
call() {
	jq -cn --argjson id "$1" --arg name "$2" --argjson args "$3" \
		'{jsonrpc: "2.0", id: $id, method: "tools/call", params: {name: $name, arguments: $args}}'
}
# tool_ok NAME TOOL ARGS JQ: a tools/call answered with a result that is not an error;
# JQ runs on .result.structuredContent, and the text content must hold the same JSON
tool_ok() {
	expect "$1" 200 ".jsonrpc == \"2.0\" and .id == 7 and .result.isError == false and
		.result.content[0].type == \"text\" and
		(.result.content[0].text | fromjson) == .result.structuredContent and
		(.result.structuredContent | $4)" "$(call 7 "$2" "$3")"
	conforms "$1: structuredContent conforms to outputSchema" "$2" "$LAST"
}
# CONFORMS: a jq def checking a value against the JSON Schema subset the outputSchemas
# use (type, possibly a list, with integer; properties; required; items; anyOf; enum)
CONFORMS='def conforms($s): . as $v |
	(if $s.type == null then true else ($v | type) as $vt | any([$s.type] | flatten | .[];
		. == $vt or (. == "integer" and $vt == "number" and ($v | floor) == $v)) end) and
	(if $s.required and ($v | type) == "object" then all($s.required[]; . as $k | $v | has($k))
		else true end) and
	(if $s.properties and ($v | type) == "object" then all($s.properties | to_entries[];
		.key as $k | .value as $ps | ($v | has($k) | not) or ($v[$k] | conforms($ps)))
		else true end) and
	(if $s.items and ($v | type) == "array" then all($v[]; conforms($s.items)) else true end) and
	(if $s.anyOf then any($s.anyOf[]; . as $sub | $v | conforms($sub)) else true end) and
	(if $s.enum then any($s.enum[]; . == $v) else true end);'
# conforms NAME TOOL REPLY: REPLY's structuredContent against TOOL's outputSchema in TOOLS
conforms() {
	if jq -e --arg t "$2" --argjson tools "$TOOLS" "$CONFORMS"'
		($tools.result.tools[] | select(.name == $t) | .outputSchema) as $s |
		$s != null and (.result.structuredContent | conforms($s))' <<<"$3" >/dev/null 2>&1; then
		pass "$1"
	else
		fail "$1" "$(head -c 400 <<<"$3")"
	fi
}
# tool_err NAME TOOL ARGS CODE: a tools/call whose endpoint refused: isError, the code and
# message in the text, no structuredContent (it would not match the outputSchema)
tool_err() {
	expect "$1" 200 ".id == 7 and .result.isError == true and
		(.result.content[0].text | startswith(\"error \") and contains(\"$4: \")) and
		.result.structuredContent == null" "$(call 7 "$2" "$3")"
}

# ---- lifecycle ----
expect "initialize 2025-06-18" 200 '.id == 1 and .result.protocolVersion == "2025-06-18" and
	.result.capabilities.tools.listChanged == false and .result.serverInfo.name == "judge" and
	(.result.serverInfo.version | length > 0) and (.result.instructions | length > 50)' \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
expect "initialize: an older supported version is kept" 200 \
	'.result.protocolVersion == "2024-11-05"' \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
expect "initialize 2025-11-25" 200 '.result.protocolVersion == "2025-11-25"' \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
expect "initialize: 2025-03-26 is kept" 200 '.result.protocolVersion == "2025-03-26"' \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
expect "initialize: 2026-07-28 (stateless, no initialize) gets 2025-11-25" 200 \
	'.result.protocolVersion == "2025-11-25"' \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
expect "initialize: an unknown version gets the latest" 200 \
	'.result.protocolVersion == "2025-11-25"' \
	'{"jsonrpc":"2.0","id":"s1","method":"initialize","params":{"protocolVersion":"1999-01-01"}}'
expect_json "initialize: a string id is echoed" "$LAST" '.id == "s1"'
out=$(rpc '{"jsonrpc":"2.0","method":"notifications/initialized"}')
[ "$out" = $'\n202' ] && pass "notification: 202, no body" || fail "notification: 202, no body" "$out"
out=$(rpc '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}')
[ "$out" = $'\n202' ] && pass "other notification: 202" || fail "other notification: 202" "$out"
out=$(rpc '{"jsonrpc":"2.0","id":9,"result":{}}')
[ "$out" = $'\n202' ] && pass "a client's response: 202" || fail "a client's response: 202" "$out"
expect "ping" 200 '.id == 2 and .result == {}' '{"jsonrpc":"2.0","id":2,"method":"ping"}'

# ---- tools/list ----
expect "tools/list: every tool, each with an object inputSchema and a description" 200 \
	'([.result.tools[].name] | sort) == (["execute","execute_with_expected","get_problem",
	"get_submission","list_languages","list_problems","session_close","session_create",
	"session_execute","session_fork","session_history","session_install_packages","session_list_files",
	"session_pause","session_read_file","session_resume","session_snapshot","session_write_file",
	"snapshot_delete","snapshot_list","solve_problem","upload_problem"]) and
	all(.result.tools[]; .inputSchema.type == "object" and (.description | length > 40)) and
	.result.resultType == null and .result.ttlMs == null' \
	'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}'
TOOLS=$LAST
expect_json "tools/list: every tool has an outputSchema of type object" "$LAST" \
	'all(.result.tools[]; .outputSchema.type == "object" and (.outputSchema.properties | type) == "object")'
expect_json "tools/list: execute's outputSchema requires id and status" "$LAST" \
	'.result.tools[] | select(.name == "execute") | .outputSchema.required == ["id","status"]'
expect_json "tools/list: execute_with_expected requires language and source" "$LAST" \
	'.result.tools[] | select(.name == "execute_with_expected") | .inputSchema.required == ["language","source"]'

# ---- the tools ----
tool_ok "execute_with_expected: accepted" execute_with_expected \
	'{"language":"python","source":"print(input()[::-1])","stdin":"abc","expected_output":"cba"}' \
	'.status == "accepted" and (.id | type == "number")'
SUB_ID=$(jq -r .result.structuredContent.id <<<"$LAST")
tool_ok "execute_with_expected: wrong_answer with feedback" execute_with_expected \
	'{"language":"python","source":"print(41)","expected_output":"42"}' \
	'.status == "wrong_answer" and .feedback.line == 1'
tool_ok "execute_with_expected: tests" execute_with_expected \
	'{"language":"python","source":"print(int(input())*2)","tests":[{"stdin":"2","expected_output":"4"},{"stdin":"5","expected_output":"10"}]}' \
	'.status == "accepted" and (.tests | length) == 2'
tool_ok "execute: compile error" execute \
	'{"language":"c","source":"int main(void){ return x; }"}' \
	'.status == "compile_error" and (.compile.output | length > 0)'
tool_ok "execute: completed with stdout" execute \
	'{"language":"python","source":"print(6*7)"}' '.status == "completed" and .stdout == "42\n"'
tool_err "execute_with_expected: unknown language" execute_with_expected \
	'{"language":"cobol","source":"x","expected_output":"1"}' unknown_language
tool_err "execute_with_expected: no expected output" execute_with_expected \
	'{"language":"python","source":"print(1)"}' missing_field
tool_err "execute: unknown field" execute '{"language":"python","source":"print(1)","sorce":"x"}' \
	invalid_field
big=$(head -c 6000 /dev/zero | tr '\0' 'x')
tool_err "execute: source over max_source_kb" execute \
	"{\"language\":\"python\",\"source\":\"# $big\"}" too_large
tool_err "execute: no arguments" execute 'null' missing_field

hello=$(jq -Rs . problems/hello/submissions/accepted/hello.py)
comma=$(jq -Rs . problems/hello/submissions/wrong_answer/comma.py)
tool_ok "solve_problem: accepted" solve_problem \
	"{\"problem\":\"hello\",\"language\":\"python\",\"source\":$hello}" \
	'.status == "accepted" and (.tests | length) >= 2'
tool_ok "solve_problem: wrong_answer" solve_problem \
	"{\"problem\":\"hello\",\"language\":\"python\",\"source\":$comma}" '.status == "wrong_answer"'
tool_err "solve_problem: unknown problem" solve_problem \
	"{\"problem\":\"no-such-problem\",\"language\":\"python\",\"source\":$hello}" unknown_problem
tool_err "solve_problem: problem missing" solve_problem \
	"{\"language\":\"python\",\"source\":$hello}" missing_field

tool_ok "get_submission" get_submission "{\"id\":$SUB_ID}" \
	".id == $SUB_ID and .status == \"accepted\" and .result.status == \"accepted\""
tool_ok "get_submission: id as a string, with wait_s" get_submission \
	"{\"id\":\"$SUB_ID\",\"wait_s\":5}" ".id == $SUB_ID"
tool_err "get_submission: unknown id" get_submission '{"id":99999999}' not_found
tool_err "get_submission: bad wait_s" get_submission "{\"id\":$SUB_ID,\"wait_s\":-1}" invalid_field
tool_ok "list_languages" list_languages '{}' \
	'[.languages[].name] | contains(["c","python"])'
tool_ok "list_problems" list_problems '{}' '[.problems[].id] | index("hello") != null'
tool_ok "get_problem: statement and samples" get_problem '{"id":"hello"}' \
	'.id == "hello" and (.samples | length) > 0 and (.statement | length > 0)'
if grep -q "must ignore" <<<"$LAST"; then fail "get_problem: no secret data" "$LAST"; else
	pass "get_problem: no secret data"; fi
tool_err "get_problem: unknown problem" get_problem '{"id":"nope"}' unknown_problem

# ---- JSON-RPC errors ----
expect "unknown method: -32601" 200 '.id == 4 and .error.code == -32601' \
	'{"jsonrpc":"2.0","id":4,"method":"resources/list"}'
expect "unknown tool: -32602" 200 '.id == 7 and .error.code == -32602 and (.error.message | contains("nope"))' \
	"$(call 7 nope '{}')"
expect "arguments not an object: -32602" 200 '.error.code == -32602' "$(call 7 execute '[1]')"
expect "malformed JSON: -32700, HTTP 400, id null" 400 \
	'.jsonrpc == "2.0" and .id == null and .error.code == -32700' '{"jsonrpc":"2.0","id":1,'
expect "batch: -32600" 400 '.id == null and .error.code == -32600' \
	'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]'
expect "no jsonrpc member: -32600" 400 '.id == 5 and .error.code == -32600' '{"id":5,"method":"ping"}'
expect "null id: -32600" 400 '.error.code == -32600' '{"jsonrpc":"2.0","id":null,"method":"ping"}'

# ---- protocol revision 2026-07-28: stateless, each request with its _meta ----
# (docs/specification/2026-07-28: basic/versioning.mdx, basic/transports/streamable-http.mdx)
META='{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}'
# mreq ID METHOD PARAMS [META]: a request body whose params carry the _meta
mreq() {
	jq -cn --argjson id "$1" --arg m "$2" --argjson p "$3" --argjson meta "${4:-$META}" \
		'{jsonrpc: "2.0", id: $id, method: $m, params: ($p + {_meta: $meta})}'
}
# mrpc BODY HEADER...: POSTs BODY with only these MCP headers; prints "BODY\nSTATUS"
mrpc() {
	local body=$1 h=() x
	shift
	for x in "$@"; do h+=(-H "$x"); done
	curl -s -m 60 -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' "${h[@]}" -w '\n%{http_code}' \
		"$U/mcp" --data-binary "$body"
}
# mexpect NAME STATUS JQ BODY HEADER...: expect through mrpc
mexpect() { EXPECT_REQ=mrpc expect "$@"; }
V='MCP-Protocol-Version: 2026-07-28'
mexpect "2026-07-28 server/discover: versions, capabilities, identity, cache hints" 200 \
	'.id == 1 and .result.resultType == "complete" and
	.result.supportedVersions == ["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"] and
	.result.capabilities.tools.listChanged == false and (.result.instructions | length > 50) and
	(.result.ttlMs | type == "number" and . >= 0 and floor == .) and .result.cacheScope == "public" and
	.result._meta["io.modelcontextprotocol/serverInfo"].name == "judge" and
	(.result._meta["io.modelcontextprotocol/serverInfo"].version | length > 0)' \
	"$(mreq 1 server/discover '{}')" "$V" 'Mcp-Method: server/discover'
h=$(curl -s -D - -o /dev/null -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
	-H "$V" -H 'Mcp-Method: server/discover' -H 'Mcp-Session-Id: abc' "$U/mcp" \
	--data-binary "$(mreq 1 server/discover '{}')")
if grep -q "^HTTP/1.1 200" <<<"$h" && ! grep -qi "^Mcp-Session-Id" <<<"$h"; then
	pass "2026-07-28: an Mcp-Session-Id is ignored, none is minted"
else
	fail "2026-07-28: an Mcp-Session-Id is ignored, none is minted" "$h"
fi
mexpect "2026-07-28 tools/list: the same tools, with resultType and cache hints" 200 \
	"(.result.tools == $(jq -c .result.tools <<<"$TOOLS")) and"'
	.result.resultType == "complete" and
	(.result.ttlMs | . > 0) and .result.cacheScope == "public" and
	.result._meta["io.modelcontextprotocol/serverInfo"].name == "judge"' \
	"$(mreq 2 tools/list '{}')" "$V" 'Mcp-Method: tools/list'
# mcall ID TOOL ARGS [META]: a 2026-07-28 tools/call body
mcall() { mreq "$1" tools/call "$(jq -cn --arg n "$2" --argjson a "$3" '{name: $n, arguments: $a}')" "${4:-$META}"; }
TC='Mcp-Method: tools/call'
mexpect "2026-07-28 tools/call: a complete result, the same structuredContent" 200 \
	'.id == 5 and .result.resultType == "complete" and .result.isError == false and
	.result.structuredContent.status == "accepted" and
	(.result.content[0].text | fromjson) == .result.structuredContent and
	.result._meta["io.modelcontextprotocol/serverInfo"].name == "judge"' \
	"$(mcall 5 execute_with_expected '{"language":"python","source":"print(2)","expected_output":"2"}')" \
	"$V" "$TC" 'Mcp-Name: execute_with_expected'
conforms "2026-07-28 tools/call: structuredContent conforms to outputSchema" execute_with_expected "$LAST"
mexpect "2026-07-28 tools/call: an endpoint's refusal is an error result" 200 \
	'.result.resultType == "complete" and .result.isError == true and
	(.result.content[0].text | contains("unknown_language"))' \
	"$(mcall 5 execute '{"language":"cobol","source":"x"}')" "$V" "$TC" 'Mcp-Name: execute'
mexpect "2026-07-28 tools/call: Mcp-Name as =?base64?...?= is decoded" 200 \
	'.result.structuredContent.stdout == "3\n"' \
	"$(mcall 5 execute '{"language":"python","source":"print(3)"}')" "$V" "$TC" \
	"Mcp-Name: =?base64?$(printf execute | base64)?="
mexpect "2026-07-28 tools/call: an unknown tool is -32602 (in band)" 200 \
	'.id == 5 and .error.code == -32602' "$(mcall 5 nope '{}')" "$V" "$TC" 'Mcp-Name: nope'
mexpect "2026-07-28 tools/call: headers are case-insensitive, OWS is cut" 200 \
	'.result.structuredContent.stdout == "4\n"' \
	"$(mcall 5 execute '{"language":"python","source":"print(4)"}')" \
	'mcp-protocol-version:  2026-07-28 ' 'MCP-METHOD: tools/call' 'mcp-name: execute'
# header checks: 400 with HeaderMismatch -32020 (streamable-http.mdx, "Server Validation")
hm() { mexpect "2026-07-28 header check: $1" 400 '.id == 6 and .error.code == -32020 and
	(.error.message | startswith("Header mismatch"))' "${@:2}"; }
B=$(mcall 6 execute '{"language":"python","source":"print(1)"}')
hm "no MCP-Protocol-Version" "$B" "$TC" 'Mcp-Name: execute'
hm "MCP-Protocol-Version not the body's" "$B" 'MCP-Protocol-Version: 2025-11-25' "$TC" \
	'Mcp-Name: execute'
hm "no Mcp-Method" "$B" "$V" 'Mcp-Name: execute'
hm "Mcp-Method not the body's" "$B" "$V" 'Mcp-Method: tools/list' 'Mcp-Name: execute'
hm "Mcp-Method differs in case (values are case-sensitive)" "$B" "$V" 'Mcp-Method: Tools/Call' \
	'Mcp-Name: execute'
hm "no Mcp-Name on tools/call" "$B" "$V" "$TC"
hm "Mcp-Name not the body's" "$B" "$V" "$TC" 'Mcp-Name: execute_with_expected'
hm "a broken Base64 Mcp-Name" "$B" "$V" "$TC" 'Mcp-Name: =?base64?!!!?='
hm "Mcp-Name with a byte that is not ASCII" "$B" "$V" "$TC" $'Mcp-Name: ex\xc3\xa9cute'
# the per-request _meta itself
mexpect "2026-07-28: no clientCapabilities is invalid params (400)" 400 \
	'.id == 6 and .error.code == -32602 and (.error.message | contains("clientCapabilities"))' \
	"$(mreq 6 tools/list '{}' '{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}')" "$V" \
	'Mcp-Method: tools/list'
mexpect "2026-07-28: a version that is not a string is invalid params (400)" 400 \
	'.error.code == -32602' \
	"$(mreq 6 tools/list '{}' '{"io.modelcontextprotocol/protocolVersion":20260728}')" "$V" \
	'Mcp-Method: tools/list'
mexpect "2026-07-28 header without the _meta: invalid params (400)" 400 \
	'.error.code == -32602 and (.error.message | contains("_meta"))' \
	'{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{}}' "$V" 'Mcp-Method: tools/list'
# versioning.mdx, "Protocol Version Negotiation": UnsupportedProtocolVersionError
for v in 1900-01-01 2099-01-01; do
	mexpect "unsupported version $v: 400, -32022 with supported and requested" 400 \
		".id == 8 and .error.code == -32022 and .error.data.requested == \"$v\" and
		(.error.data.supported | index(\"2026-07-28\") != null and index(\"2025-11-25\") != null)" \
		"$(mreq 8 server/discover '{}' "{\"io.modelcontextprotocol/protocolVersion\":\"$v\",\"io.modelcontextprotocol/clientCapabilities\":{}}")" \
		"MCP-Protocol-Version: $v" 'Mcp-Method: server/discover'
done
mexpect "unsupported version in the header alone: -32022" 400 \
	'.error.code == -32022 and .error.data.requested == "2099-01-01"' \
	'{"jsonrpc":"2.0","id":8,"method":"tools/list"}' 'MCP-Protocol-Version: 2099-01-01'
# gone in 2026-07-28 (changelog.mdx: no initialize, no ping): 404 with -32601
for m in ping initialize resources/list logging/setLevel; do
	mexpect "2026-07-28 $m: 404, -32601" 404 '.id == 9 and .error.code == -32601' \
		"$(mreq 9 "$m" '{}')" "$V" "Mcp-Method: $m"
done
# subscriptions/listen: no list ever changes here, so the stream acknowledges nothing
# and the server ends it at once, gracefully (an empty result with the subscription id)
sse=$(mrpc "$(mreq 11 subscriptions/listen '{"notifications":{"toolsListChanged":true}}')" "$V" \
	'Mcp-Method: subscriptions/listen')
msgs=$(sed -n 's/^data: //p' <<<"$sse" | jq -sc .)
expect_json "2026-07-28 subscriptions/listen: acknowledged (nothing honored), then ended" "$msgs" \
	'length == 2 and .[0].method == "notifications/subscriptions/acknowledged" and
	.[0].params.notifications == {} and .[0].params._meta["io.modelcontextprotocol/subscriptionId"] == 11 and
	.[1].id == 11 and .[1].result.resultType == "complete" and
	.[1].result._meta["io.modelcontextprotocol/subscriptionId"] == 11'
mexpect "2026-07-28 subscriptions/listen without a filter: -32602" 200 '.error.code == -32602' \
	"$(mreq 11 subscriptions/listen '{}')" "$V" 'Mcp-Method: subscriptions/listen'
# a _meta that names a legacy version is the legacy era: served as before
expect "a legacy version in _meta is the legacy era" 200 \
	'.id == 9 and .result == {}' \
	"$(mreq 9 ping '{}' '{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}')"
# progress in 2026-07-28: the same SSE stream, its last message a complete result
sse=$(curl -s -N -m 60 -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' -H "$V" -H "$TC" -H 'Mcp-Name: execute' \
	"$U/mcp" --data-binary "$(mcall 10 execute '{"language":"python","source":"print(7)"}' \
	"$(jq -c '. + {progressToken: "p1"}' <<<"$META")")")
msgs=$(sed -n 's/^data: //p' <<<"$sse" | jq -sc .)
expect_json "2026-07-28 tools/call with a progressToken: progress, then the result" "$msgs" \
	'length >= 2 and (.[:-1] | all(.[]; .method == "notifications/progress" and
	.params.progressToken == "p1")) and .[-1].id == 10 and
	.[-1].result.resultType == "complete" and .[-1].result.structuredContent.stdout == "7\n"'

for m in GET DELETE; do
	h=$(curl -s -D - -o /dev/null -X $m -H "Authorization: Bearer $KEY" "$U/mcp")
	if grep -q "^HTTP/1.1 405" <<<"$h" && grep -qi "^Allow: POST" <<<"$h"; then
		pass "$m /mcp: 405 Allow: POST"
	else
		fail "$m /mcp: 405 Allow: POST" "$h"
	fi
done
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' "$U/mcp" \
	-d '{"jsonrpc":"2.0","id":1,"method":"ping"}')
[ "$code" = 401 ] && pass "no key: 401" || fail "no key: 401" "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer jk_0' \
	-H 'Content-Type: application/json' "$U/mcp" -d '{"jsonrpc":"2.0","id":1,"method":"ping"}')
[ "$code" = 401 ] && pass "bad key: 401" || fail "bad key: 401" "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $KEY" \
	-H 'Content-Type: text/plain' "$U/mcp" -d '{"jsonrpc":"2.0","id":1,"method":"ping"}')
[ "$code" = 415 ] && pass "not JSON: 415" || fail "not JSON: 415" "$code"

# ---- a run longer than max_wait_s: not an error, the text says to call get_submission ----
P2=$(svc_port)
# a 1 s wait cap: a run still going when the wait ends (under test)
svc_config "$SVC_TMP/short.ini" "listen = 127.0.0.1:$P2" "auth = on" "max_wait_s = 1"
if svc_serve "$SVC_TMP/short.ini"; then
	expect "still running after max_wait_s: isError false, get_submission hint" 200 \
		'.result.isError == false and (.result.content[0].text | contains("get_submission")) and
		(.result.structuredContent.id | type == "number")' \
		"$(call 7 execute '{"language":"python","source":"import time\ntime.sleep(3)\nprint(1)"}')" \
		"http://127.0.0.1:$P2"
	sid=$(jq -r .result.structuredContent.id <<<"$LAST")
	tool_ok "get_submission waits for it" get_submission "{\"id\":$sid,\"wait_s\":30}" \
		'.status == "completed" and .result.stdout == "1\n"'
else
	fail "second serve starts"
fi

# ---- auth = off (loopback only): a web page of another origin is refused ----
P3=$(svc_port)
# auth = off (loopback): the Origin check under test
svc_config "$SVC_TMP/open.ini" "listen = 127.0.0.1:$P3" "auth = off"
if svc_serve "$SVC_TMP/open.ini"; then
	ping='{"jsonrpc":"2.0","id":1,"method":"ping"}'
	code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
		-H 'Origin: http://evil.example' "http://127.0.0.1:$P3/mcp" -d "$ping")
	[ "$code" = 403 ] && pass "auth off: foreign Origin 403" || fail "auth off: foreign Origin 403" "$code"
	code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
		-H 'Origin: http://localhost:6274' "http://127.0.0.1:$P3/mcp" -d "$ping")
	[ "$code" = 200 ] && pass "auth off: local Origin 200" || fail "auth off: local Origin 200" "$code"
	code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
		"http://127.0.0.1:$P3/mcp" -d "$ping")
	[ "$code" = 200 ] && pass "auth off: no Origin 200" || fail "auth off: no Origin 200" "$code"
else
	fail "keyless serve starts"
fi
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $KEY" \
	-H 'Content-Type: application/json' -H 'Origin: http://evil.example' "$U/mcp" \
	-d '{"jsonrpc":"2.0","id":1,"method":"ping"}')
[ "$code" = 200 ] && pass "auth on: a key is enough, whatever the Origin" ||
	fail "auth on: a key is enough" "$code"

# ---- session_history shows the session's network attempts ----
# (rows as the egress proxy writes them, sessegress.c: tests/integration/sessions_proxy.sh
# makes real ones; a session of this native service has no network)
tool_ok "session_create for the egress list" session_create '{"language": "bash"}' '.status == "ready"'
ESID=$(jq -r .result.structuredContent.id <<<"$LAST")
if "$SVC_PG_BIN/psql" "$SVC_DB_URL" -qAt -c "INSERT INTO session_egress (session_id, method, host,
	port, allowed, reason, addr, bytes_out, bytes_in) VALUES ('$ESID', 'CONNECT', 'api.test', 443,
	true, 'closed', '127.0.0.2', 517, 4096), ('$ESID', 'GET', 'evil.test', 80, false,
	'evil.test:80 is not in this session''s network policy', '', 0, 0)" >"$SVC_TMP/psql.log" 2>&1; then
	tool_ok "session_history: the egress attempts, host, port, decision, reason, bytes" \
		session_history '{"session_id": "'"$ESID"'"}' \
		'[.egress[] | [.host, .port, .decision, .bytes_out, .bytes_in]] ==
		[["api.test", 443, "allowed", 517, 4096], ["evil.test", 80, "refused", 0, 0]] and
		(.egress[1].reason | startswith("evil.test:80 is not")) and .egress_next_after == null'
	EID=$(jq -r '.result.structuredContent.egress[0].id' <<<"$LAST")
	tool_ok "session_history egress_after: the attempts after it" session_history \
		'{"session_id": "'"$ESID"'", "egress_after": '"$EID"'}' '[.egress[].host] == ["evil.test"]'
	expect_json "session_history: its text shows them too" "$LAST" \
		'.result.content[0].text | contains("evil.test")'
	tool_err "session_history: a bad egress_after" session_history \
		'{"session_id": "'"$ESID"'", "egress_after": -1}' invalid_field
else
	fail "inject egress attempts" "$(cat "$SVC_TMP/psql.log")"
fi
expect_json "tools/list: session_history's outputSchema has egress" "$TOOLS" \
	'.result.tools[] | select(.name == "session_history") | .outputSchema.properties.egress.items.properties |
	has("host") and has("port") and has("decision") and has("reason") and has("bytes_out") and has("bytes_in")'
tool_ok "session_close the egress session" session_close '{"session_id": "'"$ESID"'"}' '.status == "closed"'

# ---- the server afterwards ----
m=$(curl -s "$U/metrics")
n=$(grep -o 'judge_http_requests_total{route="mcp",code="2xx"} [0-9]*' <<<"$m" | awk '{print $2}')
[ "${n:-0}" -ge 20 ] && pass "metrics count /mcp" || fail "metrics count /mcp" "${n:-none}"
code=$(curl -s -o /dev/null -w '%{http_code}' "$U/health")
[ "$code" = 200 ] && pass "healthy at the end" || fail "healthy at the end" "$code"
kill -0 "$MAIN_PID" 2>/dev/null && pass "serve still running" || fail "serve still running"
# stopped first, so that a sanitizer's report at exit is in the log too
for p in "${SVC_PIDS[@]}"; do svc_stop "$p"; done
svc_log_clean "$SVC_TMP/serve.log"
finish
