#!/usr/bin/env bash
# judge0.sh: the Judge0 CE compatible API end to end (a real PostgreSQL, judge
# serve and a native worker): every Judge0 route, base64 in and out, the
# non-UTF-8 400, fields, wait, batches, statuses from real programs, both
# language id sets, X-Auth-Token, tokens scoped by key, the PUT callback, a
# client written from Judge0's documentation, and the /v1 aliases (code,
# python3, javascript).
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
source tests/svc.sh

CB_PORT=$(svc_port)
# changed from judge.ini (svc.sh): the callback receiver of this suite and its tries,
# a small batch cap (under test), a 30 s wait cap, two native slots
svc_up judge0-test "max_wait_s = 30" "callback_hosts = 127.0.0.1:$CB_PORT" \
	"callback_attempts = 3" "max_batch = 10" "[worker]" "worker_slots = 2" \
	"[sandbox]" "sandbox = native"
KEY2=$("$JUDGE" --config "$ini" keys create --name other 2>/dev/null)
AUTH=(-H "X-Auth-Token: $KEY")
UUID='^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
b64() { printf '%s' "$1" | base64 -w0; }

# jsub NAME JQ BODY [QUERY]: POST /submissions?wait=true, 201, then the filter
jsub() {
	expect "$1" 201 "$2" POST "/submissions?wait=true${4:+&$4}" "$3"
}

# ---- read-only routes ----
expect "statuses: 14, Judge0's ids and names" 200 \
	'length == 14 and .[0] == {"id":1,"description":"In Queue"} and .[10].description == "Runtime Error (NZEC)" and .[13].description == "Exec Format Error"' \
	GET /statuses
expect "languages: both id sets" 200 \
	'[.[].id] | contains([46, 50, 51, 54, 63, 71, 100, 102, 103, 105])' GET /languages
expect "languages/all: is_archived" 200 'length >= 9 and all(.[]; .is_archived == false)' \
	GET /languages/all
expect "languages/71" 200 '.id == 71 and .source_file != null and (.run_cmd | type == "string")' \
	GET /languages/71
expect "languages/54 compiles" 200 '.id == 54 and (.compile_cmd | type == "string")' \
	GET /languages/54
expect "languages/999: 404" 404 '.error | type == "string"' GET /languages/999
expect "about" 200 '.version | type == "string"' GET /about
expect "config_info" 200 \
	'.enable_wait_result == true and .enable_batched_submissions == true and .max_submission_batch_size == 10 and .enable_callbacks == true and (.cpu_time_limit | type == "number")' \
	GET /config_info

# ---- statuses from real programs, both id sets ----
jsub "71 python accepted, Judge0's units" \
	".status == {\"id\":3,\"description\":\"Accepted\"} and .stdout == \"hello\n\" and (.time | test(\"^[0-9]+\\\\.[0-9]{3}$\")) and (.memory | type == \"number\") and (.token | test(\"$UUID\")) and .stderr == null and .compile_output == null and .message == null" \
	'{"language_id":71,"source_code":"print(\"hello\")","expected_output":"hello"}'
jsub "100 python: without expected_output, exit 0 is accepted" '.status.id == 3 and .stdout == "6\n"' \
	'{"language_id":100,"source_code":"print(2*3)"}'
jsub "language_id and limits as strings, as Rails reads them" '.status.id == 3' \
	'{"language_id":"71","source_code":"print(1)","cpu_time_limit":"2"}'
jsub "63 javascript" '.status.id == 3 and .stdout == "hi\n"' \
	'{"language_id":63,"source_code":"console.log(\"hi\")"}'
jsub "102 javascript" '.status.id == 3 and .stdout == "hi\n"' \
	'{"language_id":102,"source_code":"console.log(\"hi\")","expected_output":"hi"}'
C_HELLO='#include <stdio.h>\nint main(void){puts(\"hello\");return 0;}'
jsub "50 c" '.status.id == 3' "{\"language_id\":50,\"source_code\":\"$C_HELLO\",\"expected_output\":\"hello\"}"
jsub "103 c" '.status.id == 3' "{\"language_id\":103,\"source_code\":\"$C_HELLO\",\"expected_output\":\"hello\"}"
CPP_HELLO='#include <iostream>\nint main(){std::cout<<\"hello\"<<std::endl;}'
jsub "54 c++" '.status.id == 3' "{\"language_id\":54,\"source_code\":\"$CPP_HELLO\",\"expected_output\":\"hello\"}"
jsub "105 c++" '.status.id == 3' "{\"language_id\":105,\"source_code\":\"$CPP_HELLO\",\"expected_output\":\"hello\"}"
jsub "51 c#" '.status.id == 3 and .stdout == "hello\n"' \
	'{"language_id":51,"source_code":"class P { static void Main() { System.Console.WriteLine(\"hello\"); } }","expected_output":"hello"}'
jsub "4 wrong answer" '.status == {"id":4,"description":"Wrong Answer"} and .stdout == "41\n"' \
	'{"language_id":71,"source_code":"print(41)","expected_output":"42"}'
jsub "trailing white space ignored, as Judge0" '.status.id == 3' \
	'{"language_id":71,"source_code":"print(\"a  \\nb\\n\\n\")","expected_output":"a\nb"}'
jsub "5 time limit (cpu_time_limit in seconds)" '.status == {"id":5,"description":"Time Limit Exceeded"}' \
	'{"language_id":71,"source_code":"while True: pass","cpu_time_limit":0.3}'
jsub "6 compilation error + compile_output" \
	'.status == {"id":6,"description":"Compilation Error"} and (.compile_output | test("x")) and .time == null' \
	'{"language_id":50,"source_code":"int main(void){ return x; }"}'
jsub "11 NZEC from a non-zero exit" \
	'.status == {"id":11,"description":"Runtime Error (NZEC)"} and .message == "Exited with error status 3"' \
	'{"language_id":71,"source_code":"import sys; sys.exit(3)"}' "fields=status,message"
jsub "7 SIGSEGV from the signal" '.status == {"id":7,"description":"Runtime Error (SIGSEGV)"} and .exit_signal == 11' \
	'{"language_id":103,"source_code":"int main(void){ *(volatile int *)0 = 1; return 0; }"}' \
	"fields=status,exit_signal"
jsub "10 SIGABRT from the signal" '.status.id == 10 and .exit_signal == 6' \
	'{"language_id":105,"source_code":"#include <cstdlib>\nint main(){ std::abort(); }"}' \
	"fields=status,exit_signal"
jsub "memory limit (KB) is Runtime Error (Other)" '.status.id == 12' \
	'{"language_id":50,"source_code":"#include <stdlib.h>\n#include <string.h>\nint main(void){ for (;;) { char *p = malloc(1<<24); if (!p) return 1; memset(p, 1, 1<<24); } }","memory_limit":65536}'

# ---- base64 and UTF-8 ----
jsub "base64 in and out" ".stdout == \"$(b64 $'xyz\n')\" and .status.id == 3" \
	"{\"language_id\":71,\"source_code\":\"$(b64 'print(input())')\",\"stdin\":\"$(b64 xyz)\",\"expected_output\":\"$(b64 xyz)\"}" \
	"base64_encoded=true"
expect "bad base64 is a 422 naming the field" 422 '.source_code | length == 1' \
	POST "/submissions?base64_encoded=true" '{"language_id":71,"source_code":"!!!"}'
out=$(req POST /submissions '{"language_id":71,"source_code":"import sys; sys.stdout.buffer.write(b\"\\xff\\xfe\")"}')
TOK=$(head -1 <<<"$out" | jq -r .token)
[[ $TOK =~ $UUID ]] && [ "${out##*$'\n'}" = 201 ] && pass "POST /submissions: 201 + a UUID token" ||
	fail "POST /submissions: 201 + token" "$out"
for _ in $(seq 300); do
	st=$(curl -s "${AUTH[@]}" "$U/submissions/$TOK?fields=status_id" | jq -r .status_id)
	[ "$st" -gt 2 ] 2>/dev/null && break
	sleep 0.1
done
expect "output not UTF-8: 400 asking for base64" 400 '.error | test("base64_encoded=true")' \
	GET "/submissions/$TOK"
expect "output not UTF-8 in base64: the raw bytes" 200 '.stdout == "//4=" and .status.id == 3' \
	GET "/submissions/$TOK?base64_encoded=true"
expect "the non-UTF-8 field not asked for: no 400" 200 '.status.id == 3' \
	GET "/submissions/$TOK?fields=status,time"

# ---- fields ----
expect "fields=stdout,status_id: exactly those keys" 200 'keys == ["status_id", "stdout"]' \
	GET "/submissions/$TOK?fields=stdout,status_id&base64_encoded=true"
expect "fields=*: every attribute" 200 \
	'.language_id == 71 and .language.id == 71 and (.source_code | length > 0) and (.created_at | test("Z$")) and (.finished_at | test("Z$")) and .number_of_runs == 1 and .exit_code == 0 and (.wall_time | type == "string") and .token != null' \
	GET "/submissions/$TOK?fields=*&base64_encoded=true"
expect "unknown field: 400" 400 '.error | test("nope")' GET "/submissions/$TOK?fields=stdout,nope"
expect "default fields" 200 \
	'keys == (["compile_output","memory","message","status","stderr","stdout","time","token"])' \
	GET "/submissions/$TOK?base64_encoded=true"

# ---- tokens: scoped by key, unknown ones 404 ----
expect "unknown token: 404" 404 '.error | type == "string"' \
	GET /submissions/00000000-0000-4000-8000-000000000000
expect "malformed token: 404" 404 '.error | type == "string"' GET /submissions/12
EXPECT_REQ=req2
req2() {
	local AUTH=(-H "X-Auth-Token: $KEY2")
	req "$@"
}
expect "another key's token: 404" 404 '.error | type == "string"' GET "/submissions/$TOK"
unset EXPECT_REQ

# ---- auth ----
code=$(curl -s -o /dev/null -w '%{http_code}' "$U/submissions/$TOK")
[ "$code" = 401 ] && pass "no key: 401" || fail "no key: 401" "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Auth-Token: jk_0000000000000000000000000000000000000000" "$U/statuses")
[ "$code" = 401 ] && pass "wrong X-Auth-Token: 401" || fail "wrong X-Auth-Token: 401" "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $KEY" "$U/submissions/$TOK?base64_encoded=true")
[ "$code" = 200 ] && pass "Bearer works on Judge0 paths" || fail "Bearer on Judge0 paths" "$code"

# ---- batches ----
out=$(req POST /submissions/batch '{"submissions":[{"language_id":71,"source_code":"print(1)"},{"language_id":123456789,"source_code":"x"},{"language_id":63,"source_code":""}, {"language_id":63,"source_code":"console.log(2)","expected_output":"2"}]}')
body=${out%$'\n'*}
if [ "${out##*$'\n'}" = 201 ] && jq -e --arg re "$UUID" 'length == 4 and (.[0].token | test($re)) and (.[1].language_id[0] | test("123456789")) and (.[2].source_code | length == 1) and (.[3].token | test($re))' <<<"$body" >/dev/null; then
	pass "batch create: tokens and per-item errors"
else
	fail "batch create" "$out"
fi
T1=$(jq -r '.[0].token' <<<"$body")
T2=$(jq -r '.[3].token' <<<"$body")
for _ in $(seq 300); do
	b=$(curl -s "${AUTH[@]}" "$U/submissions/batch?tokens=$T1,$T2&fields=status_id")
	jq -e 'all(.submissions[]; .status_id > 2)' <<<"$b" >/dev/null 2>&1 && break
	sleep 0.1
done
expect "batch get" 200 \
	".submissions | length == 2 and .[0].token == \"$T1\" and .[0].stdout == \"1\n\" and .[1].stdout == \"2\n\" and all(.[]; .status.id == 3)" \
	GET "/submissions/batch?tokens=$T1,$T2"
expect "batch get: unknown token is null" 200 '.submissions[1] == null' \
	GET "/submissions/batch?tokens=$T1,00000000-0000-4000-8000-000000000000"
expect "batch get: non-UTF-8 400" 400 '.error | test("base64_encoded=true")' \
	GET "/submissions/batch?tokens=$T1,$TOK"
expect "batch get without tokens: 400" 400 '.error | type == "string"' GET /submissions/batch
expect "GET /submissions: 405" 405 '.error.code == "method_not_allowed"' GET /submissions

# ---- the PUT callback ----
PY=$(command -v python3 || echo /opt/judge/runtimes/python3.12/bin/python3)
cat >"$SVC_TMP/recv.py" <<'EOF'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_PUT(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        open(sys.argv[2], "ab").write(b"PUT " + body + b"\n")
        self.send_response(200); self.end_headers()
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        open(sys.argv[2], "ab").write(b"POST\n")
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
"$PY" "$SVC_TMP/recv.py" "$CB_PORT" "$SVC_TMP/callbacks" &
SVC_PIDS+=($!)
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$CB_PORT/" && break; sleep 0.1; done
out=$(req POST /submissions "{\"language_id\":71,\"source_code\":\"print(7)\",\"callback_url\":\"http://127.0.0.1:$CB_PORT/hook\"}")
CBT=$(head -1 <<<"$out" | jq -r .token)
for _ in $(seq 100); do [ -s "$SVC_TMP/callbacks" ] && break; sleep 0.1; done
line=$(head -1 "$SVC_TMP/callbacks" 2>/dev/null)
if [ "${line%% *}" = PUT ] && jq -e ".token == \"$CBT\" and .status.id == 3 and .stdout == \"7\n\"" <<<"${line#PUT }" >/dev/null 2>&1; then
	pass "callback: a PUT of the submission, as Judge0"
else
	fail "callback PUT" "$line"
fi
expect "callback host not allowed: 422" 422 '.error | test("callback")' \
	POST /submissions '{"language_id":71,"source_code":"print(1)","callback_url":"http://127.0.0.2:1/x"}'

# ---- command_line_arguments: split as a shell splits them, nothing expanded ----
# the words: a, b c, d"e, $HOME (single quotes: not expanded), and an empty one
cla=$(jq -nc --arg a "a 'b c' \"d\\\"e\" '\$HOME' \"\"" \
	'{language_id: 71, source_code: "import sys, json; print(json.dumps(sys.argv[1:]))", command_line_arguments: $a}')
jsub "command_line_arguments: shell words" '.stdout | fromjson == ["a", "b c", "d\"e", "$HOME", ""]' "$cla"
expect "command_line_arguments: an unmatched quote is 422" 422 '.command_line_arguments | length == 1' \
	POST /submissions '{"language_id":71,"source_code":"print(1)","command_line_arguments":"a '"'"'b"}'
expect "config_info: command-line arguments enabled" 200 '.enable_command_line_arguments == true' GET /config_info

# ---- compiler_options: shell words where the compile command says {options} ----
copt='{"language_id":50,"source_code":"#include <stdio.h>\nint main(void){printf(\"%d %s\\n\", N, WHO);}","compiler_options":"-DN=6 '"'"'-DWHO=\"a b\"'"'"' -O0"}'
jsub "compiler_options: C gets the flags" '.status.id == 3 and .stdout == "6 a b\n"' "$copt"
jsub "compiler_options: C++ too" '.status.id == 3 and .stdout == "7\n"' \
	'{"language_id":54,"source_code":"#include <cstdio>\nint main(){std::printf(\"%d\\n\", N);}","compiler_options":"-DN=7"}'
jsub "compiler_options: C# (csc's -define)" '.status.id == 3 and .stdout == "defined\n"' \
	'{"language_id":51,"source_code":"class P { static void Main() {\n#if GREET\nSystem.Console.WriteLine(\"defined\");\n#endif\n} }","compiler_options":"-define:GREET"}'
jsub "compiler_options: a bad flag is the compiler's error" \
	'.status.id == 6 and (.compile_output | test("no-such-flag"))' \
	'{"language_id":50,"source_code":"int main(void){return 0;}","compiler_options":"--no-such-flag"}'
expect "compiler_options: Python takes none (422)" 422 '.compiler_options | length == 1' \
	POST /submissions '{"language_id":71,"source_code":"print(1)","compiler_options":"-O"}'
expect "compiler_options: over 512 characters (422)" 422 '.compiler_options | length == 1' \
	POST /submissions "$(jq -nc --arg o "$(printf -- '-DX %.0s' $(seq 200))" '{language_id: 50, source_code: "int main(){}", compiler_options: $o}')"
expect "config_info: compiler options for C, C++, C#" 200 \
	'.enable_compiler_options and (.allowed_languages_for_compile_options | any(test("^C ")) and any(test("C\\+\\+")) and all(test("Python") | not))' \
	GET /config_info
expect "/v1: compiler_options" 200 '.status == "accepted"' \
	POST /v1/execute_with_expected '{"language":"c","source":"#include <stdio.h>\nint main(void){printf(\"%d\\n\", N);}","compiler_options":["-DN=3"],"expected_output":"3"}'
expect "/v1: compiler_options must be strings (422)" 422 '.error.code == "invalid_field"' \
	POST /v1/execute '{"language":"c","source":"int main(){}","compiler_options":"-O3"}'

# ---- additional_files: a base64 zip whose files go beside the source ----
# zipb64 NAME=CONTENT...: a zip of those files, base64 (CONTENT "@zeros:N" = N NUL bytes)
zipb64() {
	python3 - "$@" <<'PY'
import base64, io, sys, zipfile
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
    for arg in sys.argv[1:]:
        name, _, content = arg.partition("=")
        if name.endswith("/"):
            z.writestr(zipfile.ZipInfo(name), b"")
        elif content.startswith("@zeros:"):
            z.writestr(name, b"\0" * int(content[7:]))
        else:
            z.writestr(name, content)
print(base64.b64encode(buf.getvalue()).decode())
PY
}
af=$(zipb64 'util.h=#define N 9' 'data.txt=hello')
jsub "additional_files: C includes a header from the zip" '.status.id == 3 and .stdout == "9\n"' \
	"$(jq -nc --arg z "$af" '{language_id: 50, source_code: "#include <stdio.h>\n#include \"util.h\"\nint main(void){printf(\"%d\\n\", N);}", additional_files: $z}')"
af=$(zipb64 'lib/' 'helper.py=def twice(x): return 2 * x' 'words.txt=a b c')
jsub "additional_files: Python imports a module and reads a file of the zip" \
	'.status.id == 3 and .stdout == "42 3\n"' \
	"$(jq -nc --arg z "$af" '{language_id: 71, source_code: "import helper\nprint(helper.twice(21), len(open(\"words.txt\").read().split()))", additional_files: $z}')"
for bad in "not base64!:invalid base64" "aGVsbG8=:not a zip"; do
	expect "additional_files: ${bad#*:} (422)" 422 '.additional_files | length == 1' \
		POST /submissions "$(jq -nc --arg z "${bad%%:*}" '{language_id: 71, source_code: "print(1)", additional_files: $z}')"
done
expect "additional_files: a binary file (422)" 422 '.additional_files[0] | test("not a text file")' \
	POST /submissions "$(jq -nc --arg z "$(zipb64 'b.bin=@zeros:10')" '{language_id: 71, source_code: "print(1)", additional_files: $z}')"
expect "additional_files: a file in a folder (422)" 422 '.additional_files[0] | test("top level")' \
	POST /submissions "$(jq -nc --arg z "$(zipb64 'd/x.py=x = 1')" '{language_id: 71, source_code: "print(1)", additional_files: $z}')"
expect "additional_files: a zip bomb stops at the size cap (422)" 422 '.additional_files[0] | test("larger than")' \
	POST /submissions "$(jq -nc --arg z "$(zipb64 'big.txt=@zeros:50000000')" '{language_id: 71, source_code: "print(1)", additional_files: $z}')"
expect "config_info: additional files enabled" 200 '.enable_additional_files == true' GET /config_info

# ---- unsupported Judge0 attributes are refused, not ignored ----
expect "redirect_stderr_to_stdout refused" 422 '.redirect_stderr_to_stdout | length == 1' \
	POST /submissions '{"language_id":71,"source_code":"print(1)","redirect_stderr_to_stdout":true}'

# ---- a client written from Judge0's documentation ----
if bash tests/clients/judge0.sh "$U" "$KEY" >"$SVC_TMP/client.log" 2>&1; then
	pass "Judge0 documentation client"
else
	fail "Judge0 documentation client" "$(tail -3 "$SVC_TMP/client.log")"
fi

# ---- /v1: code and the language aliases ----
AUTH=(-H "Authorization: Bearer $KEY")
expect "/v1: code + python3" 200 '.status == "completed" and .stdout == "1\n" and .language == "python"' \
	POST /v1/execute '{"language":"python3","code":"print(1)"}'
expect "/v1: javascript alias" 200 '.status == "accepted"' \
	POST /v1/execute_with_expected '{"language":"javascript","code":"console.log(2)","expected_output":"2"}'
expect "/v1: source and code together: 422" 422 '.error.code == "invalid_field"' \
	POST /v1/execute '{"language":"python","code":"print(1)","source":"print(2)"}'
expect "/v1: submissions take code" 201 '.status == "queued"' \
	POST /v1/submissions '{"language":"python3","code":"print(1)","stdin":""}'

expect "healthy at the end" 200 '.status == "ok"' GET /health
svc_log_clean "$SVC_TMP/serve.log"
kill -0 "$MAIN_PID" 2>/dev/null && pass "serve still running" || fail "serve still running"
finish
