#!/usr/bin/env bash
# languages.sh: every language x both backends through `judge run`: hello world,
# stdin echo, exit code 3, a crash by signal, an endless loop, a memory hog,
# 100 MB of output, a compile error (compiled languages), accepted and
# wrong_answer. Programs: tests/programs/<lang>/<case>.<ext>.
# LANGS="c python" and BACKENDS=native narrow it down while developing.
# The two backends run side by side (they share no host uid: gVisor's programs
# run inside its own kernel); the cases of one backend run one after another.
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

langs=${LANGS:-bash c cpp csharp node python}
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
	out=$(timeout 120 "$JUDGE" run --lang "$l" --sandbox "$b" "$@" "$src" 2>"$tmp/stderr.$b")
	rc=$?
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	if [ $rc -ne 0 ] || [ -z "$out" ]; then
		fail "$l/$b/$c: judge run" "exit $rc: $(head -c 400 "$tmp/stderr.$b")"
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

# `judge languages`: versions detected by running the real tools
if out=$("$JUDGE" languages --quick --json 2>"$tmp/stderr.versions"); then
	expect_json "versions: six, in name order" "$out" '[.[].name] == ["bash", "c", "cpp", "csharp", "node", "python"]'
	expect_json "versions: bash is GNU bash" "$out" '.[] | select(.name == "bash") | .version | startswith("GNU bash, version ")'
	expect_json "versions: python is CPython 3.12" "$out" '.[] | select(.name == "python") | .version | test("^Python 3\\.12\\.[0-9]+$")'
	expect_json "versions: node is 22" "$out" '.[] | select(.name == "node") | .version | test("^v22\\.[0-9]+\\.[0-9]+$")'
	expect_json "versions: csharp is Roslyn on .NET 9" "$out" '.[] | select(.name == "csharp") | .version | test("^C# Roslyn [0-9.]+.*, \\.NET 9\\.0\\.")'
	expect_json "versions: gcc and g++" "$out" '(.[] | select(.name == "c") | .version | startswith("gcc ")) and (.[] | select(.name == "cpp") | .version | startswith("g++ "))'
	for l in python node; do
		real=$(sed -n 's/^version *= *//p' "languages/$l.ini")
		expect_json "versions: $l version is what '$real' prints" "$out" \
			".[] | select(.name == \"$l\") | .version == \"$($real 2>&1 | head -1)\""
	done
else
	fail "versions: judge languages --quick" "$(head -c 400 "$tmp/stderr.versions")"
fi

run_backend() {
	local b=$1 l t0
	for l in $langs; do
		t0=$(date +%s)
		if judge "$l" "$b" hello; then
			expect_json "$l/$b: hello world" "$out" \
				'.status == "completed" and .stdout == "hello world\n" and .exit_code == 0 and .signal == null and .compile.status == "ok" and .language == "'"$l"'"'
			# what the program allocated, not the runtime's mapped binary (gVisor
			# maps file pages in eagerly: Node's alone are 108 MB)
			expect_json "$l/$b: hello world's memory is its own" "$out" '.memory_kb > 0 and .memory_kb < 65536'
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
				'.status == "timeout" and .wall_ms < 5000'
			[ "$ms" -lt 60000 ] || fail "$l/$b: endless loop: judge run took $ms ms"
		fi
		if judge "$l" "$b" memhog --memory-limit 128 --time-limit 10000; then
			# this VM can stall a program that touches fresh memory for tens of
			# seconds at load (a bash hog: 1.7 s of CPU in 31 s of wall at load
			# 10; a C++ hog under gVisor's ptrace: 10 s of CPU, most of it the
			# sentry's page faults, to reach 118 of its 128 MB): a hog that
			# times out ran into the host, not its limit, and runs once more,
			# which the pass says
			local again=
			if jq -e '.status == "timeout"' <<<"$out" >/dev/null 2>&1; then
				again=" (ran twice: the first stalled, $(jq -c '{time_ms, wall_ms}' <<<"$out"))"
				judge "$l" "$b" memhog --memory-limit 128 --time-limit 10000 || true
			fi
			expect_json "$l/$b: memory hog$again" "$out" '.status == "memory_limit"'
		fi
		# 100 MB against a 1 MB cap: the run ends at the cap, not after it all
		# (the program spins after printing, so waiting for its end would time out)
		if judge "$l" "$b" bigout --output-limit 1024 --time-limit 4000; then
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
		echo "     $l/$b: all cases in $(($(date +%s) - t0)) s"
	done
	echo "backend $b: done"
}

pids=()
for b in $backends; do
	run_backend "$b" >"$tmp/$b.log" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for b in $backends; do
	cat "$tmp/$b.log"
	T_PASS=$((T_PASS + $(grep -c '^ok   ' "$tmp/$b.log")))
	T_FAIL=$((T_FAIL + $(grep -c '^FAIL ' "$tmp/$b.log")))
	# a backend whose run died before its summary line counts as a failure
	grep -q "^backend $b: done" "$tmp/$b.log" || fail "$b: the run did not finish"
done

# `judge selftest`: passes here, and fails (exit 1, named in the table) when a
# language is broken. The broken set: python plus a "broken" one whose run fails.
if [ "$langs" = "bash c cpp csharp node python" ]; then
	out=$("$JUDGE" selftest --sandbox all 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && grep -q '^selftest: ok' <<<"$out"; then pass "selftest: all ok"; else fail "selftest: all ok" "exit $rc: $out"; fi
	echo "$out" | sed 's/^/     /'
fi
mkdir -p "$tmp/langs/selftest"
cp languages/python.ini "$tmp/langs/"
cp languages/selftest/python.py "$tmp/langs/selftest/"
# (without what two languages cannot share: names, the default, Judge0 ids...)
sed -e 's/^name = python/name = broken/' -e 's|^run = .*|run = /bin/false|' \
	-e '/^\(aliases\|default\|package_\|judge0_\|piston_\|problem_language\)/d' \
	languages/python.ini >"$tmp/langs/broken.ini"
cp languages/selftest/python.py "$tmp/langs/selftest/broken.py"
printf '[paths]\nlanguages_dir = %s\n' "$tmp/langs" >"$tmp/judge.ini"
out=$("$JUDGE" --config "$tmp/judge.ini" selftest --sandbox "${backends%% *}" 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -qE '^broken .*FAIL' <<<"$out" && grep -qE '^python .* ok [0-9]+ ms' <<<"$out"; then
	pass "selftest: a broken language fails it"
else
	fail "selftest: a broken language fails it" "exit $rc: $out"
fi
finish
