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
	E2B_SPELLED_KEY="e2b_${KEY#jk_}" \
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
TOK=$(jq -r .envdAccessToken <<<"$body")
[[ "$TOK" =~ ^sbt_[0-9a-f]{48}$ ]] && [ "$(jq -r .trafficAccessToken <<<"$body")" = "$TOK" ] &&
	pass "POST /sandboxes: envdAccessToken (and trafficAccessToken) the sandbox's own secret" ||
	fail "POST /sandboxes: envdAccessToken" "$body"
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
[ "$out" = $'Context nope not found\n404' ] &&
	pass "POST /execute, unknown context: 404 'Context nope not found', no stream before it" ||
	fail "POST /execute, unknown context: 404" "$out"
# a figure's chart (the driver's e2b/chart, tests/integration/drivers.sh) is
# Result.chart: here a bundle displayed raw, matplotlib being absent here
curl -s -o "$SVC_TMP/chart.ndjson" -H "E2b-Sandbox-Id: $SB" -H "E2b-Sandbox-Port: 49999" \
	-H "X-Access-Token: $KEY" -H "Content-Type: application/json" "$U/execute" \
	-d '{"code": "display({\"text/plain\": \"c\", \"e2b/chart\": {\"type\": \"bar\", \"title\": \"t\", \"elements\": [{\"label\": \"a\", \"group\": \"\", \"value\": 1.5}]}}, raw=True)"}'
expect_json "POST /execute: an e2b/chart result is Result.chart, not extra" \
	"$(jq -sc '[.[] | select(.type == "result")]' "$SVC_TMP/chart.ndjson")" \
	'length == 1 and .[0].chart.type == "bar" and .[0].chart.elements[0].value == 1.5 and .[0].text == "c" and
	(.[0].extra | has("e2b/chart") | not)'
# a judge key written as E2B's Python SDK wants it (^e2b_[0-9a-f]+$)
[[ "e2b_${KEY#jk_}" =~ ^e2b_[0-9a-f]+$ ]] && pass "a judge key's e2b_ form passes the Python SDK's check" ||
	fail "the e2b_ form" "e2b_${KEY#jk_}"
out=$(curl -s -o /dev/null -w '%{http_code}' -H "X-API-KEY: e2b_${KEY#jk_}" "$U/v2/sandboxes")
[ "$out" = 200 ] && pass "X-API-KEY e2b_ + the key's hex: 200" || fail "X-API-KEY e2b_ form: 200" "$out"
bad_hex=$(sed 's/.$/x/' <<<"${KEY#jk_}")
out=$(curl -s -o /dev/null -w '%{http_code}' -H "X-API-KEY: e2b_$bad_hex" "$U/v2/sandboxes")
[ "$out" = 401 ] && pass "X-API-KEY e2b_ + other hex: 401" || fail "X-API-KEY e2b_ other: 401" "$out"
out=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer e2b_${KEY#jk_}" "$U/v1/sessions")
[ "$out" = 200 ] && pass "the e2b_ form on the judge's own API too" || fail "Bearer e2b_ form" "$out"

# envd's process.Process in Connect's framing: envelopes (1 flag byte, 4 length
# bytes, JSON), the end-of-stream envelope (flag 2) last, errors inside it
# rpc METHOD BODY_FILE [TOKEN]: posts to envd; the raw answer in $SVC_TMP/rpc.out, the
# status and content type in RPC
rpc() {
	RPC=$(curl -s -o "$SVC_TMP/rpc.out" -w '%{http_code} %{content_type}' -H "E2b-Sandbox-Id: $SB" \
		-H "E2b-Sandbox-Port: 49983" -H "X-Access-Token: ${3:-$KEY}" -H "Connect-Protocol-Version: 1" \
		-H "Content-Type: application/connect+json" --data-binary "@$2" "$U/process.Process/$1")
}
# envelopes FILE: each envelope of a Connect stream as "FLAG JSON", a line each
envelopes() {
	python3 -c 'import sys, struct
b = open(sys.argv[1], "rb").read()
while b:
    f, n = struct.unpack(">BI", b[:5]); print(f, b[5:5 + n].decode()); b = b[5 + n:]' "$1"
}
envelope() { python3 -c 'import sys, struct; m = sys.argv[1].encode(); sys.stdout.buffer.write(struct.pack(">BI", 0, len(m)) + m)' "$1"; }
envelope '{"process": {"cmd": "/bin/sh", "args": ["-c", "printf ab; exit 2"]}, "stdin": false}' >"$SVC_TMP/start.bin"
rpc Start "$SVC_TMP/start.bin"
env_lines=$(envelopes "$SVC_TMP/rpc.out")
[ "$RPC" = "200 application/connect+json" ] && pass "process.Process/Start: 200 application/connect+json exactly" ||
	fail "process.Process/Start: content type" "$RPC"
expect_json "Start: start, data (base64), end, then the end-of-stream envelope" \
	"$(jq -Rsc 'split("\n") | map(select(length > 0) | {f: (.[:1] | tonumber), m: (.[2:] | fromjson)})' <<<"$env_lines")" \
	'.[0].f == 0 and (.[0].m.event.start.pid > 0) and
	([.[] | .m.event.data.stdout // empty] | map(@base64d) | join("")) == "ab" and
	.[-2].m.event.end == {"exitCode": 2, "exited": true, "status": "exit status 2", "error": "exit status 2"} and
	.[-1] == {"f": 2, "m": {}}'
printf 'not an envelope' >"$SVC_TMP/bad.bin"
rpc Start "$SVC_TMP/bad.bin"
expect_json "Start with a malformed body: 200 and the error in the end-of-stream envelope" \
	"$(envelopes "$SVC_TMP/rpc.out" | jq -Rsc 'split("\n")[0]')" \
	'startswith("2 ") and (.[2:] | fromjson | .error.code == "invalid_argument")'
envelope '{"process": {"cmd": "/bin/bash"}, "pty": {"size": {"cols": 80, "rows": 24}}}' >"$SVC_TMP/pty.bin"
rpc Start "$SVC_TMP/pty.bin"
expect_json "Start with a pty: unimplemented, in the end-of-stream envelope" \
	"$(envelopes "$SVC_TMP/rpc.out" | jq -Rsc 'split("\n")[0]')" \
	'startswith("2 ") and (.[2:] | fromjson | .error.code == "unimplemented")'
envelope '{"process": {"cmd": "/bin/true", "cwd": "/etc"}}' >"$SVC_TMP/cwd.bin"
rpc Start "$SVC_TMP/cwd.bin"
expect_json "Start with a cwd outside the home: invalid_argument" \
	"$(envelopes "$SVC_TMP/rpc.out" | jq -Rsc 'split("\n")[0]')" \
	'startswith("2 ") and (.[2:] | fromjson | .error.code == "invalid_argument" and (.error.message | contains("/etc")))'
rpc Start "$SVC_TMP/start.bin" "$KEY2"
[ "${RPC%% *}" = 502 ] && pass "Start with another key's token: 502 (not running)" ||
	fail "Start with another key's token: 502" "$RPC $(head -c 200 "$SVC_TMP/rpc.out")"
out=$(curl -s -w '\n%{http_code}' -H "E2b-Sandbox-Id: $SB" -H "E2b-Sandbox-Port: 49983" \
	-H "X-Access-Token: $KEY" -H "Content-Type: application/json" "$U/process.Process/SendSignal" \
	-d '{"process": {"pid": 99999}, "signal": "SIGNAL_SIGKILL"}')
[ "${out##*$'\n'}" = 404 ] && expect_json "SendSignal to no such pid: 404 not_found (kill() is false)" \
	"${out%$'\n'*}" '.code == "not_found"' || fail "SendSignal to no such pid: 404" "$out"
out=$(curl -s -w '\n%{http_code}' -H "E2b-Sandbox-Id: $SB" -H "E2b-Sandbox-Port: 49983" \
	-H "X-Access-Token: $KEY" -H "Content-Type: application/json" "$U/process.Process/Update" -d '{}')
[ "${out##*$'\n'}" = 501 ] && expect_json "Update (pty resize): 501 unimplemented" "${out%$'\n'*}" \
	'.code == "unimplemented"' || fail "Update: 501" "$out"

# envd's POST /files: several parts, each part's filename its path (the
# Python SDK's write_files), chunked bodies, and bad input as a 400 JSON error
# files ARGS...: posts to envd's /files; the body in $out, status last
files() {
	out=$(curl -s -w '\n%{http_code}' -H "E2b-Sandbox-Id: $SB" -H "E2b-Sandbox-Port: 49983" \
		-H "X-Access-Token: $ENVD_TOKEN" "$@")
}
ENVD_TOKEN=$TOK
printf 'alpha' >"$SVC_TMP/p1"
printf 'beta' >"$SVC_TMP/p2"
files -H "Transfer-Encoding: chunked" -F "file=@$SVC_TMP/p1;filename=up/p1.txt" \
	-F "other=@$SVC_TMP/p2;filename=ignored.txt" -F "file=@$SVC_TMP/p2;filename=/home/user/up/p2.txt" "$U/files"
[ "${out##*$'\n'}" = 200 ] && expect_json "POST /files, chunked, 2 file parts (and one of another field): 2 entries in order" \
	"${out%$'\n'*}" '. == [{"name": "p1.txt", "type": "file", "path": "/home/user/up/p1.txt"},
	{"name": "p2.txt", "type": "file", "path": "/home/user/up/p2.txt"}]' ||
	fail "POST /files with 2 parts: 200" "$out"
files "$U/files?path=up/p2.txt"
[ "$out" = $'beta\n200' ] && pass "GET /files of the second part: its bytes" || fail "GET /files second part" "$out"
files -F "other=@$SVC_TMP/p1" "$U/files"
[ "${out##*$'\n'}" = 400 ] && expect_json "POST /files with no part named file: 400 JSON" "${out%$'\n'*}" \
	'.code == 400 and (.message | contains("no part named file"))' || fail "POST /files no part: 400" "$out"
printf -- '--XyZ\r\nContent-Disposition: form-data; name="file"\r\n\r\nzz\r\n--XyZ--\r\n' >"$SVC_TMP/noname.bin"
files -H "Content-Type: multipart/form-data; boundary=XyZ" --data-binary "@$SVC_TMP/noname.bin" "$U/files"
[ "${out##*$'\n'}" = 400 ] && expect_json "POST /files, a part without a filename and no path: 400 JSON" \
	"${out%$'\n'*}" '.code == 400 and (.message | contains("no filename"))' || fail "POST /files no filename: 400" "$out"
files -H "Content-Type: multipart/form-data; boundary=XyZ" --data-binary "@$SVC_TMP/noname.bin" "$U/files?path=named.txt"
[ "${out##*$'\n'}" = 200 ] && expect_json "POST /files, the same part with ?path: written there" \
	"${out%$'\n'*}" '.[0].path == "/home/user/named.txt"' || fail "POST /files ?path: 200" "$out"
files -F "file=@$SVC_TMP/p1;filename=../../etc/x" "$U/files"
[ "${out##*$'\n'}" = 400 ] && expect_json "POST /files, a path out of the home: 400 JSON" "${out%$'\n'*}" \
	'.code == 400' || fail "POST /files path out: 400" "$out"
files -H "Content-Type: text/plain" --data-binary "x" "$U/files?path=t.txt"
[ "${out##*$'\n'}" = 400 ] && expect_json "POST /files, not multipart: 400 JSON" "${out%$'\n'*}" '.code == 400' ||
	fail "POST /files not multipart: 400" "$out"
head -c $((11 * 1024 * 1024)) /dev/zero >"$SVC_TMP/huge.bin"
files -F "file=@$SVC_TMP/huge.bin;filename=huge.bin" "$U/files"
[ "${out##*$'\n'}" = 413 ] && expect_json "POST /files over the body cap: 413 JSON" "${out%$'\n'*}" '.code == 413' ||
	fail "POST /files too large: 413" "$(tail -c 300 <<<"$out")"
rm -f "$SVC_TMP/huge.bin"
for i in $(seq 101); do printf -- '-F\nfile=@%s;filename=f%d.txt\n' "$SVC_TMP/p1" "$i"; done >"$SVC_TMP/many.args"
mapfile -t many <"$SVC_TMP/many.args"
files "${many[@]}" "$U/files"
[ "${out##*$'\n'}" = 400 ] && expect_json "POST /files of 101 files: 400 JSON (at most 100)" "${out%$'\n'*}" \
	'.code == 400 and (.message | contains("at most 100"))' || fail "POST /files 101 parts: 400" "$(tail -c 300 <<<"$out")"

# the sandbox's token (the Python SDK sends X-Access-Token on every envd request)
stat() { # stat TOKEN: filesystem.Filesystem/Stat of the home with that X-Access-Token
	curl -s -o /dev/null -w '%{http_code}' -H "E2b-Sandbox-Id: $SB" -H "E2b-Sandbox-Port: 49983" \
		${1:+-H "X-Access-Token: $1"} -H "Content-Type: application/json" \
		"$U/filesystem.Filesystem/Stat" -d '{"path": "/home/user"}'
}
[ "$(stat "$TOK")" = 200 ] && pass "envd with the sandbox's token: 200" || fail "envd with its token: 200" "$(stat "$TOK")"
[ "$(stat "")" = 401 ] && pass "envd with no token: 401" || fail "envd with no token: 401" "$(stat "")"
OTHER_TOK=$(curl -s "${H[@]}" "$U/sandboxes" -d '{"templateID": "base", "secure": true}' | jq -r .envdAccessToken)
[ "$(stat "$OTHER_TOK")" = 401 ] && pass "envd with another sandbox's token: 401" ||
	fail "envd with another sandbox's token: 401" "$(stat "$OTHER_TOK")"
[ "$(stat "sbt_$(printf '0%.0s' {1..48})")" = 401 ] && pass "envd with a made-up token: 401" ||
	fail "envd with a made-up token: 401"
out=$(curl -s -w '\n%{http_code}' -H "E2b-Sandbox-Id: $SB" -H "E2b-Sandbox-Port: 49983" -X POST "$U/files?path=x.txt")
[ "${out##*$'\n'}" = 401 ] && expect_json "POST /files with no token nor signature: 401 in envd's shape" \
	"${out%$'\n'*}" '.code == 401' || fail "POST /files no token: 401" "$out"
out=$(curl -s -o /dev/null -w '%{http_code}' -H "E2b-Sandbox-Id: $SB" -H "E2b-Sandbox-Port: 49983" "$U/health")
[ "$out" = 204 ] && pass "envd /health needs no token: 204" || fail "envd /health no token: 204" "$out"
out=$(curl -s -o "$SVC_TMP/meta.json" -w '%{http_code}' "${H[@]}" "$U/sandboxes/$SB")
[ "$out" = 200 ] && ! grep -q "$TOK" "$SVC_TMP/meta.json" && ! grep -rqs "$TOK" "$SVC_TMP/serve.log" &&
	pass "the token is in neither GET /sandboxes/{id} nor serve's log" || fail "token kept secret" "$out"
# signed URLs, the signature made as E2B-PROTOCOL.md §3.5 says (curl, no routing header)
sign() { # sign PATH OP TOKEN [EXP]
	python3 -c 'import base64, hashlib, sys
print("v1_" + base64.b64encode(hashlib.sha256(":".join(sys.argv[1:]).encode()).digest()).decode().rstrip("="))' "$1" "$2" "" "$3" ${4:+"$4"}
}
[ "$(sign /home/user/a.txt read tok)" = "v1_Zkbb3914oLJLvMBzCAHQhm2ydBLxbSx2eQUR/kLdvIY" ] &&
	pass "sign(): the protocol document's example" || fail "sign(): the example" "$(sign /home/user/a.txt read tok)"
enc() { jq -rn --arg s "$1" '$s | @uri'; }
exp=$(($(date +%s) + 60))
out=$(curl -s -w '\n%{http_code}' "$U/files?path=up/p1.txt&signature=$(enc "$(sign up/p1.txt read "$TOK" "$exp")")&signature_expiration=$exp")
[ "$out" = $'alpha\n200' ] && pass "GET /files signed (relative path, expiration), no header: the bytes" ||
	fail "GET /files signed: 200" "$out"
exp=$(($(date +%s) - 1))
out=$(curl -s -w '\n%{http_code}' "$U/files?path=up/p1.txt&signature=$(enc "$(sign up/p1.txt read "$TOK" "$exp")")&signature_expiration=$exp")
[ "${out##*$'\n'}" = 401 ] && expect_json "GET /files signed, expired: 401" "${out%$'\n'*}" \
	'.code == 401 and (.message | contains("expired"))' || fail "GET /files expired: 401" "$out"
out=$(curl -s -o /dev/null -w '%{http_code}' "$U/files?path=up/p1.txt&signature=$(enc "$(sign up/p1.txt read "$OTHER_TOK")")" \
	-H "E2b-Sandbox-Id: $SB" -H "E2b-Sandbox-Port: 49983")
[ "$out" = 401 ] && pass "GET /files signed with another sandbox's token, sent to this one: 401" ||
	fail "GET /files other sandbox's signature: 401" "$out"
out=$(curl -s -w '\n%{http_code}' -F "file=@$SVC_TMP/p2" "$U/files?path=signed/w.txt&signature=$(enc "$(sign signed/w.txt write "$TOK")")")
[ "${out##*$'\n'}" = 200 ] && [ "$(curl -s -H "Authorization: Bearer $KEY" "$U/v1/sessions/$SB/files/signed/w.txt")" = beta ] &&
	pass "POST /files signed (write), no header: written in its sandbox" || fail "POST /files signed: 200" "$out"
out=$(curl -s -o /dev/null -w '%{http_code}' -F "file=@$SVC_TMP/p2" "$U/files?path=up/p1.txt&signature=$(enc "$(sign up/p1.txt read "$TOK")")")
[ "$out" = 401 ] && pass "POST /files with a read signature: 401" || fail "POST /files read signature: 401" "$out"
out=$(curl -s -o /dev/null -w '%{http_code}' "$U/files?path=up/p1.txt&signature=v1_nope")
[ "$out" = 401 ] && pass "GET /files with a bad signature: 401" || fail "GET /files bad signature: 401" "$out"
out=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Access-Token: $TOK" "$U/files?path=up/p1.txt&signature=v1_nope")
[ "$out" = 200 ] && pass "GET /files with the token and a bad signature: the token wins" ||
	fail "GET /files token wins: 200" "$out"
# create's metadata as the Python SDK sends it, list's ?metadata= and the caps
curl -s -o /dev/null "${H[@]}" "$U/sandboxes" -d '{"templateID": "base", "metadata": {"team": "a b", "run": "7"}}'
out=$(curl -s "${H[@]}" "$U/v2/sandboxes?metadata=$(enc "$(enc team)=$(enc 'a b')")")
expect_json "GET /v2/sandboxes?metadata=team%3Da%2520b: that sandbox only" "$out" \
	'length == 1 and .[0].metadata == {"team": "a b", "run": "7"}'
out=$(curl -s "${H[@]}" "$U/v2/sandboxes?metadata=team%3Dzz")
expect_json "GET /v2/sandboxes?metadata=team%3Dzz: none" "$out" 'length == 0'
out=$(curl -s -w '\n%{http_code}' "${H[@]}" "$U/v2/sandboxes?metadata=team%3D%25zz")
[ "${out##*$'\n'}" = 400 ] && pass "GET /v2/sandboxes with a bad metadata escape: 400" || fail "list bad metadata: 400" "$out"
many=$(jq -cn '[range(65) | {key: "k\(.)", value: "v"}] | from_entries')
out=$(curl -s -w '\n%{http_code}' "${H[@]}" "$U/sandboxes" -d "{\"templateID\": \"base\", \"metadata\": $many}")
[ "${out##*$'\n'}" = 400 ] && expect_json "POST /sandboxes with 65 metadata keys: 400" "${out%$'\n'*}" \
	'.code == 400 and (.message | contains("64"))' || fail "65 metadata keys: 400" "$out"
out=$(curl -s -w '\n%{http_code}' "${H[@]}" "$U/sandboxes" -d '{"templateID": "base", "metadata": {"n": 1}}')
[ "${out##*$'\n'}" = 400 ] && pass "POST /sandboxes with a metadata value not a string: 400" || fail "metadata number: 400" "$out"
out=$(curl -s -w '\n%{http_code}' "${H[@]}" "$U/sandboxes" -d '{"templateID": "base", "metadata": "x"}')
[ "${out##*$'\n'}" = 400 ] && pass "POST /sandboxes with metadata not an object: 400" || fail "metadata string: 400" "$out"
for sb in $(curl -s "${H[@]}" "$U/v2/sandboxes" | jq -r '.[].sandboxID | select(. != "'"$SB"'")'); do
	curl -s -o /dev/null "${H[@]}" -X DELETE "$U/sandboxes/$sb"
done

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

# watching a folder, with curl (the Python SDK's polling trio and WatchDir's
# framing), on the native worker and then on a gVisor one: writes through envd
# and by a process inside the sandbox must both be seen
# wrpc METHOD BODY: a unary filesystem call of sandbox WSB; "BODY\nSTATUS" in out
wrpc() {
	out=$(curl -s -w '\n%{http_code}' -H "E2b-Sandbox-Id: $WSB" -H "E2b-Sandbox-Port: 49983" \
		-H "X-Access-Token: $WTOK" -H "Content-Type: application/json" \
		"$U/filesystem.Filesystem/$1" -d "$2")
}
watch_checks() {
	local body i ids=()
	body=$(curl -s "${H[@]}" "$U/sandboxes" -d '{"templateID": "base", "secure": true}')
	WSB=$(jq -r .sandboxID <<<"$body")
	WTOK=$(jq -r .envdAccessToken <<<"$body")
	wrpc MakeDir '{"path": "/home/user/w"}'
	envelope '{"path": "/home/user/w", "recursive": true}' >"$SVC_TMP/watch.bin"
	curl -s -N -o "$SVC_TMP/watch.out" -H "E2b-Sandbox-Id: $WSB" -H "E2b-Sandbox-Port: 49983" \
		-H "X-Access-Token: $WTOK" -H "Connect-Protocol-Version: 1" -H "Connect-Timeout-Ms: 3000" \
		-H "Content-Type: application/connect+json" --data-binary "@$SVC_TMP/watch.bin" \
		"$U/filesystem.Filesystem/WatchDir" &
	local wpid=$!
	sleep 1
	printf 'up' >"$SVC_TMP/wup"
	curl -s -o /dev/null -H "E2b-Sandbox-Id: $WSB" -H "E2b-Sandbox-Port: 49983" -H "X-Access-Token: $WTOK" \
		-F "file=@$SVC_TMP/wup;filename=w/up.txt" "$U/files"
	envelope '{"process": {"cmd": "/bin/sh", "args": ["-c", "mkdir w/d && echo x > w/d/p.txt && rm w/up.txt"]}, "stdin": false}' \
		>"$SVC_TMP/wstart.bin"
	curl -s -o /dev/null -H "E2b-Sandbox-Id: $WSB" -H "E2b-Sandbox-Port: 49983" -H "X-Access-Token: $WTOK" \
		-H "Content-Type: application/connect+json" --data-binary "@$SVC_TMP/wstart.bin" "$U/process.Process/Start"
	wait "$wpid"
	expect_json "${PFX:-}WatchDir: start first, the events of envd's write and of a process, end-of-stream last" \
		"$(envelopes "$SVC_TMP/watch.out" | jq -Rsc 'split("\n") | map(select(length > 0) | {f: (.[:1] | tonumber), m: (.[2:] | fromjson)})')" \
		'.[0] == {"f": 0, "m": {"start": {}}} and .[-1] == {"f": 2, "m": {}} and
		([.[] | .m.filesystem // empty | "\(.type) \(.name)"] as $e |
		["EVENT_TYPE_CREATE up.txt", "EVENT_TYPE_WRITE up.txt", "EVENT_TYPE_CREATE d",
		 "EVENT_TYPE_CREATE d/p.txt", "EVENT_TYPE_REMOVE up.txt"] - $e == [])'
	wrpc CreateWatcher '{"path": "w"}'
	local wid
	wid=$(jq -r '.watcherId // empty' <<<"${out%$'\n'*}")
	[ -n "$wid" ] && pass "${PFX:-}CreateWatcher: a watcherId" || fail "${PFX:-}CreateWatcher" "$out"
	printf 'p' >"$SVC_TMP/wpoll"
	curl -s -o /dev/null -H "E2b-Sandbox-Id: $WSB" -H "E2b-Sandbox-Port: 49983" -H "X-Access-Token: $WTOK" \
		-F "file=@$SVC_TMP/wpoll;filename=w/poll.txt" "$U/files"
	envelope '{"process": {"cmd": "/bin/sh", "args": ["-c", "mkdir w/d2 && echo y > w/d2/q.txt"]}, "stdin": false}' \
		>"$SVC_TMP/wstart2.bin"
	curl -s -o /dev/null -H "E2b-Sandbox-Id: $WSB" -H "E2b-Sandbox-Port: 49983" -H "X-Access-Token: $WTOK" \
		-H "Content-Type: application/connect+json" --data-binary "@$SVC_TMP/wstart2.bin" "$U/process.Process/Start"
	sleep 0.6
	wrpc GetWatcherEvents "{\"watcherId\": \"$wid\"}"
	expect_json "${PFX:-}GetWatcherEvents: the events since it was made (not recursive)" "${out%$'\n'*}" \
		'[.events[] | "\(.type) \(.name)"] as $e | (["EVENT_TYPE_CREATE poll.txt",
		"EVENT_TYPE_WRITE poll.txt", "EVENT_TYPE_CREATE d2"] - $e == []) and
		($e | map(select(contains("/"))) == [])'
	wrpc GetWatcherEvents "{\"watcherId\": \"$wid\"}"
	expect_json "${PFX:-}GetWatcherEvents again: none (taken)" "${out%$'\n'*}" '.events == []'
	wrpc RemoveWatcher "{\"watcherId\": \"$wid\"}"
	[ "${out##*$'\n'}" = 200 ] && pass "${PFX:-}RemoveWatcher: 200" || fail "${PFX:-}RemoveWatcher" "$out"
	wrpc GetWatcherEvents "{\"watcherId\": \"$wid\"}"
	[ "${out##*$'\n'}" = 404 ] && expect_json "${PFX:-}GetWatcherEvents of a removed watcher: not_found" \
		"${out%$'\n'*}" '.code == "not_found"' || fail "${PFX:-}removed watcher: 404" "$out"
	wrpc CreateWatcher '{"path": "/home/user/none"}'
	[ "${out##*$'\n'}" = 404 ] && expect_json "${PFX:-}CreateWatcher of a missing folder: not_found" \
		"${out%$'\n'*}" '.code == "not_found"' || fail "${PFX:-}watch missing: 404" "$out"
	wrpc CreateWatcher '{"path": "/home/user/w/poll.txt"}'
	[ "${out##*$'\n'}" = 400 ] && expect_json "${PFX:-}CreateWatcher of a file: invalid_argument" \
		"${out%$'\n'*}" '.code == "invalid_argument"' || fail "${PFX:-}watch a file: 400" "$out"
	for i in $(seq 8); do
		wrpc CreateWatcher '{"path": "w"}'
		ids+=("$(jq -r '.watcherId // empty' <<<"${out%$'\n'*}")")
	done
	wrpc CreateWatcher '{"path": "w"}'
	[ "${out##*$'\n'}" = 429 ] && [ "${#ids[@]}" = 8 ] && [ -n "${ids[7]}" ] &&
		expect_json "${PFX:-}a 9th watcher: resource_exhausted" "${out%$'\n'*}" '.code == "resource_exhausted"' ||
		fail "${PFX:-}a 9th watcher: 429" "$out ${ids[*]}"
	for i in "${ids[@]}"; do wrpc RemoveWatcher "{\"watcherId\": \"$i\"}"; done
	wrpc CreateWatcher '{"path": "w"}'
	[ "${out##*$'\n'}" = 200 ] && pass "${PFX:-}after removing them, a watcher again" || fail "${PFX:-}watcher after removal" "$out"
	curl -s -o /dev/null "${H[@]}" -X DELETE "$U/sandboxes/$WSB"
}
watch_checks
svc_on_gvisor "folder watching" watch_checks

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
