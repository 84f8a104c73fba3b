#!/usr/bin/env bash
# verify.sh: `judge verify` on every problem package shipped in problems/ and on
# make bench's (tests/bench/problems/; each submission must get the verdict its
# folder names), once per sandbox backend,
# plus packages that verify must reject: mislabeled submissions, an output
# validator that fails or does not compile, unsupported kinds (submit-answer),
# scoring and multi-pass packages, and the format's output and wall limits
# (tests/integration/icpc.sh verifies the rebuilt example packages).
# VERIFY_BACKENDS picks the backends (default: native gvisor; one the machine
# cannot run is reported and left out); VERIFY_GVISOR_PROBLEMS the packages
# gVisor verifies (default: hello divisors; "all" for every one); VERIFY_JOBS
# the submissions graded at once (default 1: on a loaded machine the wall limit
# can end a run before its CPU limit).
source "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
FIX=tests/problems-fixtures

usable() { # backend: true when `judge languages` does not call it unavailable
	! "$JUDGE" languages 2>/dev/null | grep -qE "^$1 unavailable"
}

backends=()
for b in ${VERIFY_BACKENDS:-native gvisor}; do
	if usable "$b"; then backends+=("$b"); else echo "note $T_NAME: backend $b unavailable here, left out"; fi
done
[ ${#backends[@]} -gt 0 ] || fail "no usable sandbox backend" "$("$JUDGE" languages 2>&1 | tail -3)"

for b in "${backends[@]}"; do
	for dir in problems/*/ tests/bench/problems/*/; do
		p=$(basename "$dir")
		# gVisor runs cost several times native ones: by default it verifies the
		# packages that cover every verdict and a compiled output validator
		if [ "$b" = gvisor ] && [ "${VERIFY_GVISOR_PROBLEMS:-hello divisors}" != all ] &&
			! [[ " ${VERIFY_GVISOR_PROBLEMS:-hello divisors} " == *" $p "* ]]; then
			continue
		fi
		start=$(date +%s)
		out=$("$JUDGE" verify -j "${VERIFY_JOBS:-1}" --sandbox "$b" "$dir" 2>&1)
		rc=$?
		summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' <<<"$out" | tail -1)
		if [ $rc -eq 0 ] && [[ $summary =~ ^[1-9][0-9]*\ passed,\ 0\ failed,\ 0\ skipped ]]; then
			pass "$b $p: $summary ($(($(date +%s) - start)) s)"
		else
			fail "$b $p (exit $rc): $summary" "$(grep -E '^(FAIL|skip)' <<<"$out" | head -8)"
		fi
	done
done

b=${backends[0]:-native}
# submissions in the wrong folder are caught; unknown folders and languages are skipped
out=$("$JUDGE" verify --sandbox "$b" "$FIX/verify-mislabeled" 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -q '^1 passed, 2 failed, 2 skipped$' <<<"$out" &&
	grep -q '^FAIL verify-mislabeled accepted/wrong.py (python): got wrong_answer, expected accepted' <<<"$out" &&
	grep -q '^FAIL verify-mislabeled wrong_answer/right.c (c): got accepted, expected wrong_answer' <<<"$out" &&
	grep -q '^skip verify-mislabeled accepted/Main.java: language java is not supported' <<<"$out" &&
	grep -q "^skip verify-mislabeled partially_accepted/part.py: no expected verdict" <<<"$out"; then
	pass "mislabeled submissions fail verify (exit 1)"
else
	fail "mislabeled submissions" "exit $rc: $out"
fi
# a validator that exits 1 is the package's fault: internal_error, not a verdict
out=$("$JUDGE" verify --sandbox "$b" "$FIX/verify-bad-checker" 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -q 'internal_error: .*output validator exited with code 1 (expected 42 or 43): validator broke' <<<"$out"; then
	pass "a failing output validator is internal_error"
else
	fail "failing output validator" "exit $rc: $out"
fi
out=$("$JUDGE" verify --sandbox "$b" "$FIX/verify-broken-checker" 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -q "^FAIL verify-broken-checker: output validator of 'verify-broken-checker' does not compile" <<<"$out"; then
	pass "an output validator that does not compile fails the package"
else
	fail "broken output validator" "exit $rc: $out"
fi
# interactive problems are graded (the submission and its validator talk
# through the judge) on every backend
for ib in "${backends[@]}"; do
	out=$("$JUDGE" verify --sandbox "$ib" "$FIX/interactive" 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && grep -q '^ok   interactive accepted/guess.py (python): accepted' <<<"$out" &&
		grep -q '^---- interactive (Guess, format 2023-07-draft, interactive, ' <<<"$out"; then
		pass "$ib: interactive problems are graded"
	else
		fail "$ib: interactive problem" "exit $rc: $out"
	fi
done
# scoring and multi-pass packages are graded as what they are
out=$("$JUDGE" verify --sandbox "$b" "$FIX/scoring" "$FIX/legacy-multi-pass" 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q '^4 passed, 0 failed, 0 skipped$' <<<"$out" &&
	grep -q '^ok   scoring accepted/echo.py (python): accepted, score 1 of 1' <<<"$out" &&
	grep -q '^ok   legacy-multi-pass wrong_answer/stuck.py (python): wrong_answer' <<<"$out"; then
	pass "scoring and legacy multi-pass packages are graded"
else
	fail "scoring / multi-pass packages" "exit $rc: $out"
fi
# a kind the judge does not grade is skipped with the reason, never graded as another kind
tmp=$(mktemp -d /tmp/verify-kind.XXXXXX)
cp -r "$FIX/scoring" "$tmp/submit" && printf 'problem_format_version: 2025-09\ntype: submit-answer\n' >"$tmp/submit/problem.yaml"
out=$("$JUDGE" verify --sandbox "$b" "$tmp/submit" 2>&1)
rc=$?
rm -rf "$tmp"
if [ $rc -eq 0 ] && grep -q '^skip submit accepted/echo.py: submit-answer problems are not supported' <<<"$out" &&
	! grep -q '^ok ' <<<"$out"; then
	pass "unsupported kinds are skipped with the reason"
else
	fail "unsupported kind" "exit $rc: $out"
fi
# the format's limits: 8 MiB of output by default, and a wall limit a sleeper hits
out=$("$JUDGE" verify --sandbox "$b" "$FIX/verify-limits" 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q '^3 passed, 0 failed, 0 skipped$' <<<"$out" &&
	grep -q '^ok   verify-limits output_limit_exceeded/spaces.py (python): output_limit' <<<"$out" &&
	grep -q '^ok   verify-limits time_limit_exceeded/sleep.py (python): timeout' <<<"$out"; then
	pass "package limits: 8 MiB output default, sleeping past the limit is timeout"
else
	fail "package limits" "exit $rc: $out"
fi
# included files (include/<language>/, include/default/) go with every submission
out=$("$JUDGE" verify --sandbox "$b" "$FIX/verify-include" 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q '^5 passed, 0 failed, 0 skipped$' <<<"$out"; then
	pass "included files are compiled and placed with the submissions"
else
	fail "included files" "exit $rc: $out"
fi
# --all-tests checks the 2025-09 rules test by test; --lang picks languages
out=$("$JUDGE" verify --sandbox "$b" --all-tests --lang python problems/hello 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q '^7 passed, 0 failed, 22 skipped$' <<<"$out" &&
	grep -q '^skip hello accepted/hello.c: language c not selected' <<<"$out"; then
	pass "--all-tests and --lang"
else
	fail "--all-tests and --lang" "exit $rc: $out"
fi
# DOMjudge's way of saying what a submission gets: @EXPECTED_RESULTS@ lines,
# folders such as no_output, submissions.json's entry_point, shell scripts; a
# submission annotated TIMELIMIT is judged at the limit (its 3 s sleep is over
# the 2.5 s wall limit there)
out=$("$JUDGE" verify --sandbox "$b" "$FIX/domjudge-style" 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q '^8 passed, 0 failed, 1 skipped$' <<<"$out" &&
	grep -q '^ok   domjudge-style accepted/hello.sh (bash): accepted' <<<"$out" &&
	grep -q '^ok   domjudge-style accepted/two (node): accepted' <<<"$out" &&
	grep -q '^ok   domjudge-style no_output/silent.c (c): wrong_answer, .*\[expected NO-OUTPUT\]' <<<"$out" &&
	grep -q '^ok   domjudge-style run_time_error/exit3.py (python): runtime_error, .*\[expected RUN-ERROR\]' <<<"$out" &&
	grep -q '^ok   domjudge-style time_limit_exceeded/nap.c (c): timeout' <<<"$out" &&
	grep -q '^skip domjudge-style check_manually/look.py: expected result CHECK-MANUALLY' <<<"$out"; then
	pass "DOMjudge-style expected results, entry points and shell scripts"
else
	fail "DOMjudge-style package" "exit $rc: $out"
fi
# a broken package is a failure with the loader's message
out=$("$JUDGE" verify --sandbox "$b" "$FIX/bad-no-ans" 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -q "no answer file secret/1.ans" <<<"$out"; then
	pass "a broken package fails with the loader's message"
else
	fail "broken package" "exit $rc: $out"
fi
"$JUDGE" verify >/dev/null 2>&1
rc=$?
if [ $rc -eq 2 ]; then pass "no folder: usage error (exit 2)"; else fail "usage error" "exit $rc"; fi
finish
