#!/usr/bin/env bash
# sessions_history.sh: a session's audit trail (GET /v1/sessions/{id}/history and
# MCP's session_history) against a real service (tests/svc.sh): every call in the
# order it was made — cells with their code and status, a failed cell, a file
# written and deleted, an install from a local PEP 503 index, a command, the
# close — kept after the session ended; paging with after and limit; another
# key's session and an unknown id are 404; bad paging is 422.
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
source tests/svc.sh

# ---- a local PEP 503 index with a wheel it builds (PyPI is not reachable here) ----
svc_index tinypkg==1.0

# changed from judge.ini (svc.sh): the native sandbox, one slot, the local index
svc_up history-test "[sandbox]" "sandbox = native" "[worker]" "worker_slots = 1" \
	"[sessions]" "pip_index_url = $INDEX"
KEY2=$("$JUDGE" --config "$ini" keys create --name other 2>/dev/null)

out=$(req POST /v1/sessions '{"language": "python"}')
S=$(jq -r '.id // empty' <<<"${out%$'\n'*}" 2>/dev/null)
[ -n "$S" ] && pass "create a python session" || { fail "create a python session" "$out"; finish; exit 1; }

# ---- the calls ----
expect "a cell" 200 '.status == "ok"' POST "/v1/sessions/$S/execute" '{"code": "x = 41\nx + 1"}'
expect "a cell that raises" 200 '.status == "error"' POST "/v1/sessions/$S/execute" \
	'{"code": "1 / 0"}'
expect "write a file" 200 '.size == 5' PUT "/v1/sessions/$S/files/data/a.txt" "hello" \
	-H "Content-Type: text/plain"
expect "delete it" 200 '.deleted == true' DELETE "/v1/sessions/$S/files/data/a.txt"
bad "read it after: 404" 404 not_found GET "/v1/sessions/$S/files/data/a.txt"
expect "install tinypkg" 200 '.status == "ok"' POST "/v1/sessions/$S/install" \
	'{"manager": "pip", "packages": ["tinypkg==1.0"]}'
expect "start a command" 201 '.pid == 1' POST "/v1/sessions/$S/processes" \
	'{"argv": ["echo", "hi"], "tag": "greet"}'

# ---- the history ----
expect "history: every call in order" 200 '.session_id == "'"$S"'" and
	[.calls[].kind] == ["execute", "execute", "file_put", "file_delete", "file_get",
	"install", "process_start"] and ([.calls[].seq] | . == sort and (unique | length) == 7) and
	all(.calls[]; .state == "done" and (.at | test("Z$")) and (.finished_at | test("Z$")) and
	(.duration_ms | type == "number")) and .next_after == null' GET "/v1/sessions/$S/history"
H=$LAST
expect_json "history: the cells' code, status and count" "$H" \
	'.calls[0].code == "x = 41\nx + 1" and .calls[0].status == "ok" and .calls[0].ok and
	.calls[0].context == "default" and .calls[0].execution_count == 1 and
	(.calls[0].time_ms | type == "number") and
	.calls[1].code == "1 / 0" and .calls[1].status == "error" and .calls[1].ok'
expect_json "history: the file written (path, size) and deleted" "$H" \
	'.calls[2].path == "data/a.txt" and .calls[2].size == 5 and .calls[2].ok and
	.calls[3].path == "data/a.txt" and .calls[3].ok'
expect_json "history: a refused call shows its error" "$H" \
	'.calls[4].ok == false and .calls[4].error.code == "not_found" and
	(.calls[4].error.message | length > 0)'
expect_json "history: the install and the command" "$H" \
	'.calls[5].manager == "pip" and .calls[5].packages == ["tinypkg==1.0"] and
	.calls[5].installed == true and .calls[6].argv == ["echo", "hi"] and
	.calls[6].tag == "greet" and .calls[6].pid == 1'

# ---- paging ----
expect "limit=3: a full page, next_after its last seq" 200 \
	'(.calls | length) == 3 and .next_after == .calls[2].seq' GET "/v1/sessions/$S/history?limit=3"
NEXT=$(jq -r .next_after <<<"$LAST")
expect "after=next_after: the next page" 200 '[.calls[].kind] == ["file_delete", "file_get",
	"install"] and .next_after == .calls[2].seq' GET "/v1/sessions/$S/history?after=$NEXT&limit=3"
NEXT2=$(jq -r .next_after <<<"$LAST")
expect "and the last one: the rest, next_after null" 200 '[.calls[].kind] == ["process_start"] and
	.next_after == null' GET "/v1/sessions/$S/history?after=$NEXT2&limit=3"
bad "limit=0" 422 invalid_field GET "/v1/sessions/$S/history?limit=0"
bad "limit=1001" 422 invalid_field GET "/v1/sessions/$S/history?limit=1001"
bad "after=-1" 422 invalid_field GET "/v1/sessions/$S/history?after=-1"
bad "after=x" 422 invalid_field GET "/v1/sessions/$S/history?after=x"

# ---- who may read it ----
AUTH=(-H "Authorization: Bearer $KEY2")
bad "another key: 404" 404 not_found GET "/v1/sessions/$S/history"
AUTH=(-H "Authorization: Bearer $KEY")
bad "an unknown session: 404" 404 not_found \
	GET /v1/sessions/00000000-0000-4000-8000-000000000000/history
bad "not a session id: 404" 404 not_found GET /v1/sessions/nope/history
bad "POST: 405" 405 method_not_allowed POST "/v1/sessions/$S/history" '{}'

# ---- MCP ----
# mcp ARGS_JSON: tools/call session_history with the key in KEY
mcp() {
	jq -cn --argjson a "$1" '{jsonrpc: "2.0", id: 9, method: "tools/call",
		params: {name: "session_history", arguments: $a}}' |
		curl -s -m 60 "${AUTH[@]}" -H 'Content-Type: application/json' \
			-H 'Accept: application/json, text/event-stream' \
			-H 'MCP-Protocol-Version: 2025-06-18' "$U/mcp" --data-binary @-
}
expect_json "MCP session_history: the same calls" "$(mcp '{"session_id": "'"$S"'"}')" \
	'.result.isError == false and [.result.structuredContent.calls[].kind] ==
	["execute", "execute", "file_put", "file_delete", "file_get", "install", "process_start"]'
expect_json "MCP session_history after a seq" \
	"$(mcp '{"session_id": "'"$S"'", "after": '"$NEXT"'}')" \
	'[.result.structuredContent.calls[].kind] == ["file_delete", "file_get", "install",
	"process_start"]'
AUTH=(-H "Authorization: Bearer $KEY2")
expect_json "MCP session_history: another key's session is an error" \
	"$(mcp '{"session_id": "'"$S"'"}')" \
	'.result.isError == true and (.result.content[0].text | contains("not_found"))'
AUTH=(-H "Authorization: Bearer $KEY")
expect_json "MCP session_history: no session_id" "$(mcp '{}')" \
	'.result.isError == true and (.result.content[0].text | contains("missing_field"))'

# ---- kept after the session ended ----
expect "close" 200 '.status == "closed"' DELETE "/v1/sessions/$S"
bad "a cell after the close: 410" 410 session_closed POST "/v1/sessions/$S/execute" '{"code": "1"}'
expect "history after the close: every call and the close (a call refused at the door is none)" 200 \
	'[.calls[].kind] == ["execute", "execute", "file_put", "file_delete", "file_get",
	"install", "process_start", "close"] and .calls[7].ok' GET "/v1/sessions/$S/history"

finish
