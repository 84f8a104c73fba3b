#!/usr/bin/env bash
# icpc.sh: the ICPC package kinds beyond pass-fail, on rebuilt equivalents of
# the example packages of Kattis problemtools and DOMjudge
# (tests/problems-fixtures/examples/: scoring, multi-pass, interactive and
# pass-fail ones): `judge verify` must give every submission its folder's
# verdict (and, for scoring problems, its score), and the result JSON must carry
# the scores. ICPC_BACKEND picks the backend (default native).
source "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
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
finish
