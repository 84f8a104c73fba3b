#!/usr/bin/env bash
# icpc.sh: the ICPC package kinds beyond pass-fail, on rebuilt equivalents of
# the example packages of Kattis problemtools and DOMjudge
# (tests/problems-fixtures/examples/: scoring, multi-pass, interactive and
# pass-fail ones): `judge verify` must give every submission its folder's
# verdict (and, for scoring problems, its score), and the result JSON must carry
# the scores, also over real HTTP (a private PostgreSQL, judge serve and a
# worker): inline tests with points and an interactive problem.
# ICPC_BACKEND picks the backend (default native).
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
source tests/svc.sh
FIX=tests/problems-fixtures
b=${ICPC_BACKEND:-native}

# rebuilt equivalents of Kattis' and DOMjudge's example packages: every
# submission gets its folder's verdict (and score)
for dir in "$FIX"/examples/*/; do
	p=$(basename "$dir")
	start=$(date +%s)
	out=$("$JUDGE" verify -j "${VERIFY_JOBS:-1}" --sandbox "$b" "$dir" 2>&1)
	rc=$?
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' <<<"$out" | tail -1)
	if [ $rc -eq 0 ] && [[ $summary =~ ^[1-9][0-9]*\ passed,\ 0\ failed,\ 0\ skipped ]]; then
		pass "$b example $p: $summary ($(($(date +%s) - start)) s)"
	else
		fail "$b example $p (exit $rc): $summary" "$(grep -E '^(FAIL|skip)' <<<"$out" | head -8)"
	fi
done
# scores are reported: the partially accepted oddecho submission gets group 1's 20
out=$("$JUDGE" run --sandbox "$b" --problem "$FIX/examples/oddecho" "$FIX/examples/oddecho/submissions/partially_accepted/first_only.py" 2>&1)
if python3 -c '
import json, sys
r = json.loads(sys.argv[1])
g = {x["name"]: x for x in r["groups"]}
assert r["score"] == 20 and r["max_score"] == 100, r
assert g["secret/group1"]["accepted"] and g["secret/group2"]["score"] == 0, g
' "$out"; then
	pass "result carries score, max_score and per-group scores"
else
	fail "scores in the result" "$out"
fi

# ---- over the API ----
# changed from judge.ini (svc.sh): two slots and the backend under test
svc_up icpc-test "max_wait_s = 60" "[worker]" "worker_slots = 2" "[sandbox]" "sandbox = $b"
expect "api: inline tests with points give partial credit" 200 \
	'.status == "wrong_answer" and .score == 3 and .max_score == 6 and ([.tests[].score] == [1, 0, 2]) and (.tests | length) == 3' \
	POST /v1/execute_with_expected '{"language":"python","source":"print(int(input()) * 2)","tests":[{"stdin":"1","expected_output":"2","points":1},{"stdin":"2","expected_output":"5","points":3},{"stdin":"3","expected_output":"6","points":2}]}'
bad "api: points must be a number" 422 invalid_field POST /v1/execute_with_expected \
	'{"language":"python","source":"print(1)","tests":[{"expected_output":"1","points":"all"}]}'
out=$(req POST /v1/submissions "$(jq -n --rawfile s problems/guess/submissions/accepted/binary.py '{language:"python",source:$s,problem:"guess"}')")
id=$(head -1 <<<"$out" | jq -r .id)
expect "api: an interactive problem is graded" 200 '.status == "accepted" and (.result.tests | length) == 12' \
	GET "/v1/submissions/$id?wait=60"
out=$(req POST /v1/submissions "$(jq -n --rawfile s problems/guess/submissions/time_limit_exceeded/wait.py '{language:"python",source:$s,problem:"guess"}')")
id=$(head -1 <<<"$out" | jq -r .id)
expect "api: an interactive program that waits forever is a timeout" 200 '.status == "timeout"' \
	GET "/v1/submissions/$id?wait=60"
expect "api: problem info says what kind it is" 200 '.interactive == true and .supported == true and .multi_pass == false' \
	GET /v1/problems/guess
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/worker.log"
finish
