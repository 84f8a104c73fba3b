#!/usr/bin/env bash
# tests/clients/judge0.sh BASE_URL [KEY]: a Judge0 CE client as Judge0's documentation
# shows one, with curl and jq only: create a submission, poll it by token
# until it is done, read the batch endpoints. It knows nothing of this judge,
# so it runs unchanged against a real Judge0 (KEY: its X-Auth-Token, if any).
# Prints the final submission JSON lines and exits 0 when every call answered
# as Judge0 documents.
set -eu
BASE=$1
KEY=${2:-}
H=(-H "Content-Type: application/json")
[ -n "$KEY" ] && H+=(-H "X-Auth-Token: $KEY")

# "Create a Submission": 201 {"token": "..."}
token=$(curl -sf -X POST "${H[@]}" "$BASE/submissions?base64_encoded=false&wait=false" \
	--data '{"source_code": "print(f\"hello, {input()}\")", "language_id": 71, "stdin": "world", "expected_output": "hello, world"}' |
	jq -er .token)

# "Get a Submission": poll while the status is In Queue (1) or Processing (2)
for _ in $(seq 300); do
	sub=$(curl -sf "${H[@]}" "$BASE/submissions/$token?base64_encoded=false&fields=stdout,stderr,status_id,language_id,time,memory,status")
	[ "$(jq -r .status_id <<<"$sub")" -gt 2 ] && break
	sleep 0.1
done
echo "$sub"
jq -e '.status_id == 3 and .status.description == "Accepted" and .stdout == "hello, world\n"
	and .language_id == 71 and (.time | type == "string") and (.memory | type == "number")' \
	<<<"$sub" >/dev/null

# "Create a Submission Batch" (base64) and "Get a Submission Batch"
b64() { printf '%s' "$1" | base64 -w0; }
tokens=$(curl -sf -X POST "${H[@]}" "$BASE/submissions/batch?base64_encoded=true" \
	--data "{\"submissions\": [{\"language_id\": 63, \"source_code\": \"$(b64 'console.log("hello from JavaScript")')\"},
	{\"language_id\": 50, \"source_code\": \"$(b64 '#include <stdio.h>
int main(void) { puts("hello from C"); return 0; }')\"}]}" | jq -er '[.[].token] | join(",")')
for _ in $(seq 300); do
	batch=$(curl -sf "${H[@]}" "$BASE/submissions/batch?tokens=$tokens&base64_encoded=true&fields=token,stdout,status_id")
	jq -e 'all(.submissions[]; .status_id > 2)' <<<"$batch" >/dev/null && break
	sleep 0.1
done
echo "$batch"
[ "$(jq -r '.submissions[0].stdout' <<<"$batch" | base64 -d)" = "hello from JavaScript" ]
[ "$(jq -r '.submissions[1].stdout' <<<"$batch" | base64 -d)" = "hello from C" ]
