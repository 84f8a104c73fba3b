#!/usr/bin/env bash
# languages.sh: every language x both backends through `judge run`: hello world,
# stdin echo, exit code 3, a crash by signal, an endless loop, a memory hog,
# 100 MB of output, a compile error (compiled languages), accepted and
# wrong_answer. Programs: tests/programs/<lang>/<case>.<ext>.
# LANGS="c python" and BACKENDS=native narrow it down while developing.
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

langs=${LANGS:-c cpp csharp node python}
backends=${BACKENDS:-native gvisor}

printf 'first line\nsecond line, ünïcödé\n\nlast\n' >"$tmp/echo.in"
printf 'hello world\n' >"$tmp/hello.ans"
printf 'hello there\n' >"$tmp/wrong.ans"

# judge L B CASE [ARGS...]: runs tests/programs/L/CASE.EXT; sets $out (the
# result JSON) and $ms (wall time of the whole judge command, compile included).
# A judge that fails to produce a result fails the case and leaves out empty.
judge() {
	local l=$1 b=$2 c=$3 src
	shift 3
	src=$(ls "tests/programs/$l/$c".* 2>/dev/null | head -1)
	local t0 t1 rc
	t0=$(date +%s%N)
	out=$(timeout 120 "$JUDGE" run --lang "$l" --sandbox "$b" "$@" "$src" 2>"$tmp/stderr")
	rc=$?
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	if [ $rc -ne 0 ] || [ -z "$out" ]; then
		fail "$l/$b/$c: judge run" "exit $rc: $(head -c 400 "$tmp/stderr")"
		out='{}'
		return 1
	fi
}

compiled() { grep -q '^compile *= *[^ ]' "languages/$1.ini"; }

# the signal each crash program dies by
crash_signal() {
	case $1 in
	node | csharp) echo 6 ;; # process.abort(), Environment.FailFast: SIGABRT
	*) echo 11 ;;            # null pointer write / ctypes read of address 0: SIGSEGV
	esac
}

for b in $backends; do
	for l in $langs; do
		if judge "$l" "$b" hello; then
			expect_json "$l/$b: hello world" "$out" \
				'.status == "completed" and .stdout == "hello world\n" and .exit_code == 0 and .signal == null and .compile.status == "ok" and .language == "'"$l"'"'
			echo "     $l/$b: hello world in ${ms} ms (compile wall $(jq -r '.compile.wall_ms // .compile.time_ms' <<<"$out") ms, run wall $(jq -r .wall_ms <<<"$out") ms, $(jq -r .memory_kb <<<"$out") KB)"
		fi
		if judge "$l" "$b" echo --stdin "$tmp/echo.in"; then
			expect_json "$l/$b: echo of stdin" "$out" \
				'.status == "completed" and .stdout == "first line\nsecond line, ünïcödé\n\nlast\n"'
		fi
		if judge "$l" "$b" exit3; then
			expect_json "$l/$b: exit code 3" "$out" \
				'.status == "runtime_error" and .exit_code == 3 and .signal == null and (.stdout | startswith("about to exit with 3"))'
		fi
		if judge "$l" "$b" signal; then
			expect_json "$l/$b: crash by signal" "$out" \
				".status == \"runtime_error\" and .signal == $(crash_signal "$l")"
		fi
		if judge "$l" "$b" loop --time-limit 1000; then
			expect_json "$l/$b: endless loop ends promptly" "$out" \
				'.status == "timeout" and .time_ms >= 900 and .wall_ms < 3000'
		fi
		if judge "$l" "$b" memhog --memory-limit 128 --time-limit 10000; then
			expect_json "$l/$b: memory hog" "$out" '.status == "memory_limit"'
		fi
		# 100 MB against a 1 MB cap: the run ends at the cap, not after it all
		if judge "$l" "$b" bigout --output-limit 1024 --time-limit 10000; then
			expect_json "$l/$b: 100 MB of output" "$out" \
				'.status == "output_limit" and .stdout_truncated == true and (.stdout | length) <= 1048576 and .wall_ms < 5000'
		fi
		if compiled "$l" && judge "$l" "$b" compile_error; then
			expect_json "$l/$b: compile error" "$out" \
				'.status == "compile_error" and .compile.status == "error" and (.compile.output | contains("undeclared_variable"))'
		fi
		if judge "$l" "$b" hello --expected "$tmp/hello.ans"; then
			expect_json "$l/$b: accepted" "$out" '.status == "accepted"'
		fi
		if judge "$l" "$b" hello --expected "$tmp/wrong.ans"; then
			expect_json "$l/$b: wrong answer" "$out" '.status == "wrong_answer" and .feedback.line == 1'
		fi
	done
done
finish
