#!/usr/bin/env bash
# examples.sh: examples/agent_loop.py against a real judge (private PostgreSQL,
# judge serve, a native worker) with its scripted model: compile_error, then
# wrong_answer, then accepted, and the feedback the model was given;
# examples/session_agent.py (a session: ModuleNotFoundError, an install from a
# local PEP 503 index, the retry with its state). The README's and docs/'s own
# examples are run by docs_examples.sh.
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
source tests/svc.sh

PY=${JUDGE_PYTHON:-/opt/judge/runtimes/python3.12/bin/python3}
[ -x "$PY" ] || PY=python3

# a local PEP 503 index for the session example's install (PyPI is not reachable here)
svc_index tinypkg==1.0
# changed from judge.ini (svc.sh): a 30 s wait cap, two native slots, and the local
# index (PyPI is not reachable here)
svc_up examples-test "max_wait_s = 30" "[worker]" "worker_slots = 2" "[sandbox]" "sandbox = native" \
	"[sessions]" "pip_index_url = ${INDEX:-http://127.0.0.1:9/simple/}"

# ---- the agent loop ----
S=examples/scripted
# check_loop NAME JSON: compile_error, wrong_answer, accepted, and what the model saw
check_loop() {
	local name=$1 out=$2
	expect_json "$name: three attempts: compile_error, wrong_answer, accepted" "$out" \
		'.accepted == true and ([.attempts[].status] == ["compile_error","wrong_answer","accepted"])'
	expect_json "$name: first call had no feedback" "$out" '.attempts[0].feedback_given == []'
	expect_json "$name: the scripted model recorded the same feedback" "$out" \
		'.model_calls == [.attempts[].feedback_given]'
	expect_json "$name: second call was told compile_error with the SyntaxError" "$out" \
		'.attempts[1].feedback_given | length == 1 and .[0].status == "compile_error"
		 and (.[0].compile_output | contains("SyntaxError"))
		 and (.[0].text | contains("compile_error") and contains("SyntaxError"))'
	expect_json "$name: third call was told wrong_answer with the judge's message" "$out" \
		'.attempts[2].feedback_given | length == 2 and (.[1] as $f | $f.status == "wrong_answer"
		 and ($f.message | test("expected"))
		 and ($f.text | contains("wrong_answer") and contains($f.message)))'
}

out=$(JUDGE_URL=$U JUDGE_API_KEY=$KEY "$PY" examples/agent_loop.py --json \
	--statement "Print the input line reversed." --stdin "abc" --expected "cba" \
	--answers $S/reverse-1.py $S/reverse-2.py $S/reverse-3.py 2>"$SVC_TMP/loop.err")
rc=$?
[ $rc = 0 ] && pass "agent loop (execute_with_expected) exits 0 when accepted" ||
	fail "agent loop exit" "rc $rc: $(tail -5 "$SVC_TMP/loop.err")"
check_loop "execute_with_expected" "$out"
grep -q "^attempt 1: compile_error" "$SVC_TMP/loop.err" && grep -q "^attempt 3: accepted" "$SVC_TMP/loop.err" &&
	pass "agent loop prints each attempt's verdict" || fail "verdict lines" "$(cat "$SVC_TMP/loop.err")"

out=$("$PY" examples/agent_loop.py --json --url "$U" --key "$KEY" --problem sum \
	--answers $S/sum-1.py $S/sum-2.py $S/sum-3.py $S/sum-3.py 2>"$SVC_TMP/loop2.err")
rc=$?
[ $rc = 0 ] && pass "agent loop (problem via /v1/submissions) exits 0" ||
	fail "agent loop problem exit" "rc $rc: $(tail -5 "$SVC_TMP/loop2.err")"
expect_json "problem: stops at accepted (3 of 4 answers used)" "$out" '.attempts | length == 3'
expect_json "problem: submissions have ids" "$out" '[.attempts[].id | type] == ["number","number","number"]'
check_loop "problem" "$out"

# never accepted: stops after --attempts, exit 1
"$PY" examples/agent_loop.py --url "$U" --key "$KEY" --stdin abc --expected cba --attempts 2 \
	--answers $S/reverse-2.py $S/reverse-2.py $S/reverse-3.py >"$SVC_TMP/loop3.out" 2>&1
rc=$?
[ $rc = 1 ] && [ "$(grep -c '^attempt' "$SVC_TMP/loop3.out")" = 2 ] &&
	pass "agent loop stops after --attempts (exit 1)" || fail "attempts cap" "rc $rc: $(cat "$SVC_TMP/loop3.out")"

# a refused request (bad key) is reported, exit 2
"$PY" examples/agent_loop.py --url "$U" --key jk_bad --stdin abc --expected cba \
	--answers $S/reverse-3.py >"$SVC_TMP/loop4.out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "401" "$SVC_TMP/loop4.out" && pass "agent loop reports a 401 (exit 2)" ||
	fail "bad key" "rc $rc: $(cat "$SVC_TMP/loop4.out")"

# ---- the session loop: ModuleNotFoundError, install, retry with the state ----
out=$(JUDGE_URL=$U JUDGE_API_KEY=$KEY "$PY" examples/session_agent.py --json --package tinypkg \
	--call "hello()" 2>"$SVC_TMP/session.err")
rc=$?
[ $rc = 0 ] && pass "session agent exits 0" || fail "session agent exit" "rc $rc: $(tail -5 "$SVC_TMP/session.err")"
expect_json "session agent: create, upload, load, ModuleNotFoundError, install, retry, download, close" \
	"$out" '[.steps[].step] == ["create","upload","load","analyse","install","retry","download","close"]
	and .steps[3].error == "ModuleNotFoundError" and .steps[4].status == "ok"'
expect_json "session agent: the retry used the variables of the earlier cell" "$out" \
	'.steps[5].status == "ok" and .steps[5].restarted == false and
	.steps[6].content == "3 cities, hello from tinypkg 1.0"'
"$PY" examples/session_agent.py --url "$U" --key jk_bad >"$SVC_TMP/session2.out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q 401 "$SVC_TMP/session2.out" && pass "session agent reports a 401 (exit 2)" ||
	fail "session agent bad key" "rc $rc: $(cat "$SVC_TMP/session2.out")"

finish
