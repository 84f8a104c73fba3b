#!/usr/bin/env bash
# piston.sh: the Piston v2 compatible API end to end (a real PostgreSQL, judge serve,
# a native worker): runtimes, execute in every language, stdin, args, more files,
# encodings, compile and runtime errors, timeouts, version ranges, errors, auth,
# and the npm package piston-client pointed at the server.
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
source tests/svc.sh

svc_pg_start || { fail "postgresql starts"; finish; exit 1; }
PORT=$(svc_port)
U=http://127.0.0.1:$PORT
ini=$SVC_TMP/judge.ini
# Piston's clients send no key: auth off, which the judge allows on loopback only
# changed from judge.ini (svc.sh): auth off (Piston clients send no key; loopback),
# a 30 s wait cap, two native slots
svc_config "$ini" "listen = 127.0.0.1:$PORT" "auth = off" "max_wait_s = 30" \
	"[worker]" "worker_slots = 2" "[sandbox]" "sandbox = native"
check "migrate" "$JUDGE" --config "$ini" migrate
svc_serve "$ini" || { fail "serve starts"; finish; exit 1; }
MAIN_PID=$SVC_SERVE_PID
svc_worker "$ini" || { fail "worker starts"; finish; exit 1; }
AUTH=()
JSON=(-H "Content-Type: application/json")

# px NAME STATUS JQ BODY: POST /api/v2/execute
px() { expect "$1" "$2" "$3" POST /api/v2/execute "${@:4}"; }
# src TEXT: TEXT as a JSON string
src() { jq -Rsc . <<<"$1" | sed 's/\\n"$/"/'; }

# ---- runtimes ----
expect "runtimes: one entry per language, Piston's shape" 200 \
	'type == "array" and length == 6 and all(.[]; (.language | type == "string") and
	 (.version | test("^[0-9]+\\.[0-9]+\\.[0-9]+$")) and (.aliases | type == "array"))' \
	GET /api/v2/runtimes
RT=$LAST
expect_json "runtimes: Piston's names and aliases" "$RT" \
	'(map(.language) | sort) == ["bash", "c", "c++", "csharp", "javascript", "python"] and
	 (.[] | select(.language == "javascript") | .runtime == "node" and (.aliases | index("js")))
	 and (.[] | select(.language == "c++") | .aliases | index("cpp"))
	 and (.[] | select(.language == "python") | has("runtime") | not)'
expect_json "runtimes: versions from the probes (gcc's last number, .NET's not Roslyn's)" "$RT" \
	'(.[] | select(.language == "csharp") | .version | startswith("9.")) and
	 (.[] | select(.language == "python") | .version | startswith("3."))'
expect "runtimes under the public API's path /api/v2/piston/" 200 "length == 6" \
	GET /api/v2/piston/runtimes
PYV=$(jq -r '.[] | select(.language == "python") | .version' <<<"$RT")

# ---- every language ----
hello() { # NAME LANGUAGE SOURCE [JQ]: the answer names LANGUAGE (or HELLO_AS)
	px "execute $1" 200 "(.language == \"${HELLO_AS:-$2}\") and (.version | length > 0) and
		.run.stdout == \"hello\\n\" and .run.output == \"hello\\n\" and .run.code == 0 and
		.run.signal == null and .run.stderr == \"\" ${4:-}" \
		"{\"language\":\"$2\",\"version\":\"*\",\"files\":[{\"name\":\"x\",\"content\":$(src "$3")}]}"
}
hello python python 'print("hello")' 'and (has("compile") | not)'
hello bash bash 'echo hello' 'and (has("compile") | not)'
hello javascript javascript 'console.log("hello")'
HELLO_AS=javascript hello "js (an alias)" js 'console.log("hello")'
HELLO_AS=javascript hello "node (our name)" node 'console.log("hello")'
HELLO_AS=c++ hello "cpp (an alias)" cpp '#include <cstdio>
int main() { std::puts("hello"); }'
hello c c '#include <stdio.h>
int main(void) { puts("hello"); return 0; }' 'and .compile.code == 0 and .compile.signal == null'
hello "c++" "c++" '#include <iostream>
int main() { std::cout << "hello\n"; }' 'and .compile.code == 0'
hello csharp csharp 'class P { static void Main() { System.Console.WriteLine("hello"); } }' \
	'and .compile.code == 0'

# ---- stdin, args, more files, encodings ----
px "stdin" 200 '.run.stdout == "cba\n"' \
	"{\"language\":\"python\",\"version\":\"$PYV\",\"stdin\":\"abc\",\"files\":[{\"content\":$(src 'print(input()[::-1])')}]}"
px "args (python)" 200 '.run.stdout == "[\u00271\u0027, \u0027two words\u0027, \u00273\u0027]\n"' \
	"{\"language\":\"py\",\"version\":\"3.x\",\"args\":[\"1\",\"two words\",\"3\"],\"files\":[{\"content\":$(src 'import sys; print(sys.argv[1:])')}]}"
px "args (c)" 200 '.run.stdout == "3 -x\n"' \
	"{\"language\":\"c\",\"version\":\"*\",\"args\":[\"-x\",\"y\"],\"files\":[{\"content\":$(src '#include <stdio.h>
int main(int c, char **v) { printf("%d %s\n", c, v[1]); }')}]}"
px "args: more than 64 refused" 400 '.message | test("args")' \
	"{\"language\":\"python\",\"version\":\"*\",\"args\":$(jq -nc '[range(65) | tostring]'),\"files\":[{\"content\":\"pass\"}]}"
px "a second file: python module" 200 '.run.stdout == "42\n"' \
	"{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"name\":\"main.py\",\"content\":$(src 'import util
print(util.answer())')},{\"name\":\"util.py\",\"content\":$(src 'def answer(): return 42')}]}"
px "a second file: C header" 200 '.run.stdout == "7\n" and .compile.code == 0' \
	"{\"language\":\"c\",\"version\":\"*\",\"files\":[{\"name\":\"prog.c\",\"content\":$(src '#include <stdio.h>
#include "util.h"
int main(void) { printf("%d\n", SEVEN); }')},{\"name\":\"util.h\",\"content\":\"#define SEVEN 7\\n\"}]}"
B64=$(printf 'print("from base64")' | base64 -w0)
px "base64 file" 200 '.run.stdout == "from base64\n"' \
	"{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"$B64\",\"encoding\":\"base64\"}]}"
HEX=$(printf 'print("from hex")' | od -An -tx1 | tr -d ' \n')
px "hex file" 200 '.run.stdout == "from hex\n"' \
	"{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"$HEX\",\"encoding\":\"hex\"}]}"
px "bad encoding name" 400 '.message | test("encoding")' \
	'{"language":"python","version":"*","files":[{"content":"x","encoding":"rot13"}]}'
px "bad base64" 400 '.message | test("base64")' \
	'{"language":"python","version":"*","files":[{"content":"!!!","encoding":"base64"}]}'

# ---- errors of the program ----
px "compile error: compile stage, no run" 200 \
	'.compile.code != 0 and .compile.code != null and (.compile.stderr | test("error")) and
	 (.compile.output == .compile.stderr) and (has("run") | not)' \
	'{"language":"c","version":"*","files":[{"content":"int main(void) { return x; }"}]}'
px "python syntax error: reported by the run with code 1, no compile stage (as Piston's python)" 200 \
	'(has("compile") | not) and .run.code == 1 and (.run.stderr | test("SyntaxError")) and .run.stdout == ""' \
	"{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":$(src 'print("a"')}]}"
px "runtime error: SIGSEGV, code null" 200 '.run.signal == "SIGSEGV" and .run.code == null' \
	"{\"language\":\"c\",\"version\":\"*\",\"files\":[{\"content\":$(src 'int main(void) { *(volatile int *)0 = 1; return 0; }')}]}"
px "exit code and stderr in output" 200 \
	'.run.code == 3 and .run.signal == null and .run.stdout == "out\n" and
	 (.run.stderr | test("err")) and .run.output == (.run.stdout + .run.stderr)' \
	"{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":$(src 'import sys
print("out", flush=True)
print("err", file=sys.stderr)
sys.exit(3)')}]}"
px "run_timeout (CPU): SIGKILL" 200 '.run.signal == "SIGKILL" and .run.code == null' \
	'{"language":"python","version":"*","run_timeout":1000,"files":[{"content":"while True: pass"}]}'
px "run_timeout (sleeping): SIGKILL" 200 '.run.signal == "SIGKILL" and .run.code == null' \
	'{"language":"python","version":"*","run_timeout":1000,"files":[{"content":"import time\ntime.sleep(20)"}]}'
expect "execute under /api/v2/piston/, no version: any" 200 '.run.stdout == "p\n"' \
	POST /api/v2/piston/execute '{"language":"python","files":[{"content":"print(\"p\")"}]}'
px "memory limits of -1 and compile limits accepted" 200 '.run.stdout == "ok\n"' \
	'{"language":"python","version":"*","run_memory_limit":-1,"compile_memory_limit":-1,"compile_timeout":10000,"run_timeout":3000,"files":[{"content":"print(\"ok\")"}]}'
px "run_memory_limit in bytes" 200 '.run.signal == "SIGKILL" and .run.code == null' \
	'{"language":"python","version":"*","run_memory_limit":67108864,"files":[{"content":"x = bytearray(512 * 1024 * 1024)\nprint(len(x))"}]}'

# ---- versions ----
for v in "*" "$PYV" "3" "3.x" "${PYV%.*}" "^3.0.0" "~${PYV%.*}.0" ">=3.0.0 <4" "2.x || 3.x" "1.0.0 - 9.9.9"; do
	px "version '$v' selects python $PYV" 200 ".version == \"$PYV\" and .run.stdout == \"v\\n\"" \
		"{\"language\":\"python\",\"version\":\"$v\",\"files\":[{\"content\":\"print('v')\"}]}"
done
for v in "2.7.0" "2.x" "<3" ">${PYV}" "^4" "nonsense"; do
	px "version '$v' unknown: 400" 400 ".message == \"python-$v runtime is unknown\"" \
		"{\"language\":\"python\",\"version\":\"$v\",\"files\":[{\"content\":\"print(1)\"}]}"
done
px "unknown language: 400" 400 '.message == "cobol-1.0.0 runtime is unknown"' \
	'{"language":"cobol","version":"1.0.0","files":[{"content":"x"}]}'

# ---- malformed requests: Piston's {"message"} ----
px "no files: 400" 400 '.message == "files is required as an array"' '{"language":"python","version":"*"}'
px "no language: 400" 400 '.message == "language is required as a string"' '{"files":[{"content":"x"}]}'
px "content not a string: 400" 400 '.message == "files[0].content is required as a string"' \
	'{"language":"python","version":"*","files":[{"content":1}]}'
px "run_timeout over the cap: 400" 400 '.message | test("run_timeout cannot exceed")' \
	'{"language":"python","version":"*","run_timeout":99999999,"files":[{"content":"x"}]}'
px "run_timeout not a number: 400" 400 '.message | test("run_timeout must be a number")' \
	'{"language":"python","version":"*","run_timeout":"1s","files":[{"content":"x"}]}'
px "a file named like a path: 400" 400 '.message | test("files\\[0\\].name")' \
	'{"language":"python","version":"*","files":[{"content":"x"},{"name":"../x.py","content":"y"}]}'
px "not JSON: 400" 400 '.message | length > 0' '{"language":'
JSON=(-H "Content-Type: text/plain;charset=UTF-8")
px "text/plain body (as piston-client sends it)" 200 '.run.stdout == "plain\n"' \
	'{"language":"python","version":"*","files":[{"content":"print(\"plain\")"}]}'
JSON=(-H "Content-Type: application/json")
px "auth off: a web page of another origin refused" 403 '.error.code == "forbidden_origin"' \
	'{"language":"python","version":"*","files":[{"content":"print(1)"}]}' -H "Origin: http://evil.example"
expect "GET execute: 405" 405 '.error.code == "method_not_allowed"' GET /api/v2/execute

# ---- auth = on: the same key as the rest ----
P2=$(svc_port)
# auth on: the key check of the Piston paths under test
svc_config "$SVC_TMP/auth.ini" "listen = 127.0.0.1:$P2" "auth = on" "max_wait_s = 30"
KEY=$("$JUDGE" --config "$SVC_TMP/auth.ini" keys create --name piston 2>/dev/null)
if svc_serve "$SVC_TMP/auth.ini"; then
	code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P2/api/v2/runtimes")
	[ "$code" = 401 ] && pass "auth on: runtimes without a key 401" || fail "auth on: no key" "$code"
	code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $KEY" \
		"http://127.0.0.1:$P2/api/v2/runtimes")
	[ "$code" = 200 ] && pass "auth on: runtimes with the key 200" || fail "auth on: key" "$code"
	out=$(curl -s -m 60 -H "Authorization: Bearer $KEY" "http://127.0.0.1:$P2/api/v2/execute" \
		-d '{"language":"python","version":"*","files":[{"content":"print(\"k\")"}]}')
	expect_json "auth on: execute with the key" "$out" '.run.stdout == "k\n"'
else
	fail "auth on: serve starts"
fi

# ---- the npm package piston-client ----
NODE=/opt/judge/runtimes/node22/bin/node
[ -x "$NODE" ] || NODE=$(command -v node)
NPM=$(command -v npm)
if [ -n "$NODE" ] && [ -n "$NPM" ]; then
	NP=$SVC_TMP/npm
	mkdir -p "$NP"
	if (cd "$NP" && "$NPM" install --no-audit --no-fund --silent piston-client \
		>"$NP/install.log" 2>&1); then
		pass "npm install piston-client"
		cat >"$NP/run.mjs" <<'EOF'
import piston from "piston-client";
const client = piston({ server: process.argv[2] });
const runtimes = await client.runtimes();
const hello = await client.execute("python", 'import sys\nprint("hello from", sys.argv[1:])');
const c = await client.execute({
	language: "c", files: [{ name: "a.c", content: '#include <stdio.h>\nint main(void){int n; scanf("%d",&n); printf("%d\\n", n*2);}' }],
	stdin: "21", args: [], runTimeout: 2000,
});
console.log(JSON.stringify({ runtimes, hello, c }));
EOF
		out=$(cd "$NP" && "$NODE" run.mjs "$U" 2>"$NP/run.err")
		expect_json "piston-client: runtimes()" "$out" \
			'.runtimes | map(.language) | index("python") and index("c++")'
		expect_json "piston-client: execute(language, code) with its default args" "$out" \
			'.hello.language == "python" and .hello.run.stdout == "hello from [\u00271\u0027, \u00272\u0027, \u00273\u0027]\n" and .hello.run.code == 0'
		expect_json "piston-client: execute(config) in C with stdin" "$out" \
			'.c.run.stdout == "42\n" and .c.compile.code == 0'
		[ -s "$NP/run.err" ] && fail "piston-client: no errors" "$(head -c 400 "$NP/run.err")"
	else
		fail "npm install piston-client" "$(tail -5 "$NP/install.log")"
	fi
else
	fail "node and npm present" "node '$NODE', npm '$NPM'"
fi

# ---- the same runs on gvisor: args, files, signals, timeouts ----
sed 's/^sandbox = native/sandbox = gvisor/' "$ini" >"$SVC_TMP/gvisor.ini"
svc_stop "$SVC_WORKER_PID"
if svc_worker "$SVC_TMP/gvisor.ini"; then
	px "gvisor: args and stdin" 200 '.run.stdout == "a b|in\n"' \
		"{\"language\":\"python\",\"version\":\"*\",\"stdin\":\"in\",\"args\":[\"a b\"],\"files\":[{\"content\":$(src 'import sys; print(sys.argv[1] + "|" + input())')}]}"
	px "gvisor: a second file" 200 '.run.stdout == "42\n"' \
		"{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"import util\"},{\"name\":\"util.py\",\"content\":\"print(42)\"}]}"
	px "gvisor: SIGSEGV" 200 '.run.signal == "SIGSEGV" and .run.code == null and .compile.code == 0' \
		"{\"language\":\"c\",\"version\":\"*\",\"args\":[\"x\"],\"files\":[{\"content\":$(src 'int main(void) { *(volatile int *)0 = 1; return 0; }')}]}"
	px "gvisor: run_timeout" 200 '.run.signal == "SIGKILL" and .run.code == null' \
		'{"language":"python","version":"*","run_timeout":1000,"files":[{"content":"while True: pass"}]}'
else
	fail "gvisor worker starts" "$(tail -5 "$SVC_TMP/worker.log")"
fi

expect "healthy at the end" 200 '.status == "ok"' GET /health
svc_log_clean "$SVC_TMP/serve.log"
kill -0 "$MAIN_PID" 2>/dev/null && pass "serve still running" || fail "serve still running"
finish
