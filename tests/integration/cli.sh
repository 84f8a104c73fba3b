#!/usr/bin/env bash
# cli.sh: `judge run` usage errors, result JSON shape and verdicts through the CLI.
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf 'print(input()[::-1])\n' >"$tmp/rev.py"
printf 'from multiprocessing import Pool\nif __name__ == "__main__":\n    with Pool(2) as p:\n        print(sum(p.map(abs, range(-10, 10))))\n' >"$tmp/pool.py"
printf 'abc\n' >"$tmp/in.txt"
printf 'cba\n' >"$tmp/good.txt"
printf 'cbx\n' >"$tmp/bad.txt"

# usage errors: a message on stderr, exit 2, nothing on stdout
usage_case() {
	local name=$1
	shift
	local out rc
	out=$("$JUDGE" run "$@" 2>"$tmp/err")
	rc=$?
	if [ "$rc" -eq 2 ] && [ -z "$out" ] && [ -s "$tmp/err" ]; then
		pass "usage: $name"
	else
		fail "usage: $name" "rc=$rc stdout='$out' stderr='$(cat "$tmp/err")'"
	fi
}
printf 'x\n' >"$tmp/notes.txt"
usage_case "no --lang and a name no language has" "$tmp/notes.txt"
usage_case "no source" --lang python
usage_case "unknown language" --lang cobol "$tmp/rev.py"
usage_case "missing source file" --lang python "$tmp/nope.py"
usage_case "missing stdin file" --lang python --stdin "$tmp/nope" "$tmp/rev.py"
usage_case "negative time limit" --lang python --time-limit -5 "$tmp/rev.py"
usage_case "zero memory limit" --lang python --memory-limit 0 "$tmp/rev.py"
usage_case "huge memory limit" --lang python --memory-limit 99999999 "$tmp/rev.py"
usage_case "non-numeric limit" --lang python --time-limit 1s "$tmp/rev.py"
usage_case "unknown option" --lang python --frobnicate "$tmp/rev.py"
usage_case "unknown sandbox" --lang python --sandbox docker "$tmp/rev.py"
usage_case "unknown compare mode" --lang python --compare fuzzy "$tmp/rev.py"
usage_case "tests with stdin" --lang python --tests "$tmp" --stdin "$tmp/in.txt" "$tmp/rev.py"

for sb in native gvisor; do
	out=$("$JUDGE" run --sandbox $sb --lang python --stdin "$tmp/in.txt" "$tmp/rev.py")
	expect_json "$sb completed without expected" "$out" \
		'.status == "completed" and .stdout == "cba\n" and .exit_code == 0 and .signal == null and .compile.status == "ok" and (.time_ms|type) == "number" and (.wall_ms|type) == "number" and .memory_kb > 0 and .stdout_truncated == false'
	out=$("$JUDGE" run --sandbox $sb --lang python --stdin "$tmp/in.txt" --expected "$tmp/good.txt" "$tmp/rev.py")
	expect_json "$sb accepted" "$out" '.status == "accepted" and .feedback == null'
	out=$("$JUDGE" run --sandbox $sb --lang python --stdin "$tmp/in.txt" --expected "$tmp/bad.txt" "$tmp/rev.py")
	expect_json "$sb wrong_answer with feedback" "$out" \
		'.status == "wrong_answer" and .feedback.line == 1 and .feedback.column == 3 and (.feedback.message|length) > 0'
	# POSIX semaphores and shared memory (/dev/shm) work in both sandboxes (a
	# generous CPU limit: three interpreters under gVisor on a loaded machine
	# came near the default 2 s, and speed is not what this checks)
	out=$("$JUDGE" run --sandbox $sb --lang python --time-limit 10000 --stdin /dev/null "$tmp/pool.py")
	expect_json "$sb multiprocessing.Pool" "$out" '.status == "completed" and .stdout == "100\n"'
done

# without --lang, the language whose files end like the source's name
out=$("$JUDGE" run --sandbox native --stdin "$tmp/in.txt" --expected "$tmp/good.txt" "$tmp/rev.py")
expect_json "language from the file name" "$out" '.status == "accepted" and .language == "python"'

# a folder of tests: the first failing test decides, later ones are not run
mkdir -p "$tmp/t"
printf 'ab\n' >"$tmp/t/01.in"; printf 'ba\n' >"$tmp/t/01.ans"
printf 'xy\n' >"$tmp/t/02.in"; printf 'WRONG\n' >"$tmp/t/02.ans"
printf 'kl\n' >"$tmp/t/03.in"; printf 'lk\n' >"$tmp/t/03.ans"
out=$("$JUDGE" run --sandbox native --lang python --tests "$tmp/t" "$tmp/rev.py")
expect_json "tests: first failure decides" "$out" \
	'.status == "wrong_answer" and (.tests|length) == 2 and .tests[0].status == "accepted" and .tests[1].name == "02" and .tests_total == 3'
out=$("$JUDGE" run --sandbox native --lang python --all-tests --tests "$tmp/t" "$tmp/rev.py")
expect_json "tests: --all-tests runs all" "$out" \
	'.status == "wrong_answer" and (.tests|length) == 3 and .tests[2].status == "accepted"'

# non-UTF-8 output is repaired, not lost
printf 'import sys\nsys.stdout.buffer.write(b"ok\\xff\\n")\n' >"$tmp/bin.py"
out=$("$JUDGE" run --sandbox native --lang python "$tmp/bin.py")
expect_json "invalid UTF-8 output becomes U+FFFD" "$out" '.status == "completed" and .stdout == "ok\ufffd\n"'

# a problem package: its tests, limits and comparison; secret answers stay hidden
out=$("$JUDGE" run --sandbox native --lang python --problem problems/sum problems/sum/submissions/accepted/sum.py)
expect_json "problem: accepted over every test" "$out" \
	'.status == "accepted" and (.tests|length) >= 5 and ([.tests[].status]|unique) == ["accepted"]'
printf 'a, b = map(int, input().split())\nprint(a + b + (1 if a + b > 100 else 0))\n' >"$tmp/off.py"
out=$("$JUDGE" run --sandbox native --lang python --problem problems/sum "$tmp/off.py")
expect_json "problem: wrong answer on a secret test hides the answer" "$out" \
	'.status == "wrong_answer" and (.tests[-1].name|startswith("secret")) and .feedback.expected == null and (.feedback.got|length) > 0'
# the format's limits: 8 MiB of output unless problem.yaml says otherwise, and a
# wall limit of 1 s x time_limit_to_tle (1.5) + 1 s that a sleeping program hits
FIX=tests/problems-fixtures
out=$("$JUDGE" run --sandbox native --problem $FIX/verify-limits $FIX/verify-limits/submissions/output_limit_exceeded/spaces.py)
expect_json "problem: right answer then 10 MB of spaces is output_limit (8 MiB)" "$out" \
	'.status == "output_limit" and .stdout_truncated == true'
out=$("$JUDGE" run --sandbox native --problem $FIX/verify-limits $FIX/verify-limits/submissions/time_limit_exceeded/sleep.py)
expect_json "problem: sleeping 5 s under a 1 s limit is timeout at the 2.5 s wall limit" "$out" \
	'.status == "timeout" and .wall_ms < 4000'
# scoring and multi-pass packages are graded; a kind the judge does not grade
# is refused with the reason
out=$("$JUDGE" run --sandbox native --problem $FIX/scoring $FIX/scoring/submissions/accepted/echo.py)
expect_json "problem: a scoring package's result carries its score" "$out" \
	'.status == "accepted" and .score == 1 and .max_score == 1'
out=$("$JUDGE" run --sandbox native --problem $FIX/legacy-multi-pass $FIX/legacy-multi-pass/submissions/accepted/echo.py)
expect_json "problem: a multi-pass test runs twice" "$out" '.status == "accepted" and .tests[0].passes == 2'
cp -r "$FIX/scoring" "$tmp/submit" && printf 'problem_format_version: 2025-09\ntype: submit-answer\n' >"$tmp/submit/problem.yaml"
out=$("$JUDGE" run --sandbox native --problem "$tmp/submit" "$tmp/submit/submissions/accepted/echo.py" 2>"$tmp/err")
rc=$?
if [ $rc -eq 2 ] && [ -z "$out" ] && grep -q "submit-answer problems are not supported" "$tmp/err"; then
	pass "problem: submit-answer is refused with the reason"
else
	fail "problem: submit-answer refused" "rc=$rc stdout='$out' stderr='$(cat "$tmp/err")'"
fi
usage_case "problem with stdin" --lang python --problem problems/sum --stdin "$tmp/in.txt" "$tmp/rev.py"
usage_case "problem folder missing" --lang python --problem "$tmp/no-such-problem" "$tmp/rev.py"

# a source that is not text is a compile_error (a result, exit 0), not a usage error
printf 'print(1)\n\0\1\2' >"$tmp/nul.py"
out=$("$JUDGE" run --sandbox native --lang python "$tmp/nul.py")
expect_json "source with a NUL byte: compile_error" "$out" \
	'.status == "compile_error" and .compile.status == "error" and (.compile.output | contains("source is not text: a NUL byte at byte 9"))'
printf '\x7fELF\xff\xfe' >"$tmp/elf.c"
out=$("$JUDGE" run --sandbox native "$tmp/elf.c")
expect_json "binary source: compile_error" "$out" \
	'.status == "compile_error" and (.compile.output | contains("invalid UTF-8 at byte 4"))'
# Python byte-compiles its source: a syntax error is a compile_error with its message
printf 'print("unclosed"\n' >"$tmp/syntax.py"
out=$("$JUDGE" run --sandbox native "$tmp/syntax.py")
expect_json "python syntax error: compile_error with the message" "$out" \
	'.status == "compile_error" and .compile.status == "error" and (.compile.output | contains("SyntaxError")) and (.compile.output | contains("main.py"))'

# compile_in_run (languages/python.ini): one source skips the compile step and its
# run tells a syntax error; a SyntaxError raised at run time stays a runtime_error
printf 'if True:\nprint(1)\n' >"$tmp/indent.py"
out=$("$JUDGE" run --sandbox native "$tmp/indent.py")
expect_json "python IndentationError: compile_error, no run" "$out" \
	'.status == "compile_error" and (.compile.output | test("IndentationError: expected an indented block")) and (has("exit_code") | not) and (has("tests") | not)'
printf 'raise SyntaxError("x")\n' >"$tmp/raise.py"
out=$("$JUDGE" run --sandbox native "$tmp/raise.py")
expect_json "python raise SyntaxError: runtime_error" "$out" \
	'.status == "runtime_error" and .compile.status == "ok" and (.stderr | contains("Traceback")) and .exit_code == 1'
printf 'exec("(")\n' >"$tmp/exec.py"
out=$("$JUDGE" run --sandbox native "$tmp/exec.py")
expect_json "python exec(\"(\"): runtime_error" "$out" \
	'.status == "runtime_error" and (.stderr | test("SyntaxError: .[(]. was never closed"))'
printf 'print(input()[::-1])\n' >"$tmp/ok.py"
printf 'abc\n' >"$tmp/ok.in"
printf 'cba\n' >"$tmp/ok.ans"
out=$("$JUDGE" run --sandbox native --stdin "$tmp/ok.in" --expected "$tmp/ok.ans" "$tmp/ok.py")
expect_json "python correct program: accepted, no compile step" "$out" \
	'.status == "accepted" and .compile == {"status": "ok", "output": "", "time_ms": 0}'
mkdir -p "$tmp/syntests"
for i in 1 2 3; do echo $i >"$tmp/syntests/$i.in"; echo $i >"$tmp/syntests/$i.ans"; done
out=$("$JUDGE" run --sandbox native --tests "$tmp/syntests" "$tmp/syntax.py")
expect_json "python syntax error, three tests: compile_error, no tests reported" "$out" \
	'.status == "compile_error" and (.compile.output | contains("SyntaxError")) and (keys == ["compile", "language", "status"])'
out=$("$JUDGE" run --sandbox native --problem problems/sum "$tmp/syntax.py")
expect_json "python syntax error, problem package: compile_error, no tests" "$out" \
	'.status == "compile_error" and (.compile.output | contains("SyntaxError")) and (keys == ["compile", "language", "status"])'
printf 'import helper\nprint(helper.x)\n' >"$tmp/usehelper.py"
printf 'x = (\n' >"$tmp/helper.py"
out=$("$JUDGE" run --sandbox native "$tmp/usehelper.py" "$tmp/helper.py")
expect_json "python two sources, syntax error in the helper: compile_error from the compile step" "$out" \
	'.status == "compile_error" and (.compile.output | contains("File \"helper.py\", line 1")) and (.compile.output | contains("Traceback") | not)'
printf 'x = 7\n' >"$tmp/helper.py"
out=$("$JUDGE" run --sandbox native "$tmp/usehelper.py" "$tmp/helper.py")
expect_json "python two sources: compiled, then run" "$out" \
	'.status == "completed" and .stdout == "7\n" and .compile.wall_ms >= 0'

# more files: a header and a second module compiled with the main source
printf '#include "twice.h"\n#include <stdio.h>\nint main(void){printf("%%d\\n", twice(21));return 0;}\n' >"$tmp/main.c"
printf 'int twice(int x);\n' >"$tmp/twice.h"
printf '#include "twice.h"\nint twice(int x){return 2*x;}\n' >"$tmp/twice.c"
out=$("$JUDGE" run --sandbox native --lang c "$tmp/main.c" "$tmp/twice.c" "$tmp/twice.h")
expect_json "several source files compile together" "$out" '.status == "completed" and .stdout == "42\n"'

finish
