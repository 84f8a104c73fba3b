#!/usr/bin/env bash
# tests/run.sh BUILD BIN: runs every Criterion binary and integration script,
# two at a time, and closes with one "N passed, M failed" line.
set -u
build=${1:-build}
export JUDGE=${2:-bin/judge}
cd "$(dirname "$0")/.."
# sanitizer builds: a leak inside Criterion itself is not ours (tests/lsan.supp)
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}
logs=$(mktemp -d /tmp/judge-tests.XXXXXX)
trap 'rm -rf "$logs"' EXIT
jobs=()
# TEST_SKIP="a.sh b.sh": suites left out of this run, named in the totals
skipped=()
# the longest suites start first, so that two lanes end close together (in
# alphabetical order verify.sh started last and ran alone for minutes)
long="problems.sh verify.sh evalsets.sh faults.sh languages.sh live_output.sh warm_compile.sh"
for n in $long; do
	t=tests/integration/$n
	[ -f "$t" ] || continue
	if [[ " ${TEST_SKIP:-} " == *" $n "* ]]; then skipped+=("$n"); else jobs+=("bash $t"); fi
done
for t in "$build"/tests/test_*; do [ -x "$t" ] && jobs+=("$t"); done
for t in tests/integration/*.sh; do
	[ -f "$t" ] || continue
	[[ " $long " == *" $(basename "$t") "* ]] && continue
	if [[ " ${TEST_SKIP:-} " == *" $(basename "$t") "* ]]; then skipped+=("$(basename "$t")"); else jobs+=("bash $t"); fi
done

run_one() { # $1 = command; output to $JUDGE_TEST_LOGS/<name>.log, status to .rc
	local name
	name=$(basename "${1##* }")
	local t0=$SECONDS
	$1 >"$JUDGE_TEST_LOGS/$name.log" 2>&1
	local rc=$? exe left=""
	# a Criterion binary leaves nothing running (a leaked busy child would
	# slow every later suite): what is left is killed and fails the suite
	if [ -x "$1" ]; then
		exe=$(readlink -f "$1")
		for p in /proc/[0-9]*; do
			[ "$(readlink "$p/exe" 2>/dev/null)" = "$exe" ] && left+=" ${p#/proc/}"
		done
		if [ -n "$left" ]; then
			kill -9 $left 2>/dev/null
			echo "FAIL $name left processes running:$left" >>"$JUDGE_TEST_LOGS/$name.log"
			[ "$rc" = 0 ] && rc=1
		fi
	fi
	echo "$rc" >"$JUDGE_TEST_LOGS/$name.rc"
	echo $((SECONDS - t0)) >"$JUDGE_TEST_LOGS/$name.secs"
}
export -f run_one
# a distinctive name: suites use short variable names of their own
export JUDGE_TEST_LOGS=$logs
printf '%s\n' "${jobs[@]}" | xargs -P "${TEST_JOBS:-2}" -I{} bash -c 'run_one "{}"'

pass=0 fail=0 suites_failed=()
for rc in "$logs"/*.rc; do
	name=$(basename "$rc" .rc)
	log="$logs/$name.log"
	cat "$log"
	# Criterion: "Synthesis: Tested: N | Passing: P | Failing: F | Crashing: C"
	if line=$(grep -E '^\[====\] Synthesis:' "$log" | tail -1) && [ -n "$line" ]; then
		p=$(sed -E 's/.*Passing: ([0-9]+).*/\1/' <<<"$line")
		f=$(sed -E 's/.*Failing: ([0-9]+).*Crashing: ([0-9]+).*/\1+\2/' <<<"$line")
		pass=$((pass + p)); fail=$((fail + f))
	elif line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1) && [ -n "$line" ]; then
		p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
		pass=$((pass + p)); fail=$((fail + f))
	fi
	if [ "$(cat "$rc")" != 0 ]; then
		suites_failed+=("$name")
		# a suite that died without counting still counts as one failure
		grep -qE 'Synthesis|passed, [0-9]+ failed' "$log" || fail=$((fail + 1))
	fi
done
# the slowest suites, to keep CI's time in view
for f in "$logs"/*.secs; do echo "$(cat "$f") $(basename "$f" .secs)"; done | sort -rn | head -12 |
	awk '{printf "%s%s %ss", (NR > 1 ? ", " : "slowest suites: "), $2, $1} END {print ""}'
if [ ${#suites_failed[@]} -gt 0 ]; then
	# what failed, again at the end: a CI log is often read from its tail only
	for name in "${suites_failed[@]}"; do
		grep -E '^FAIL|^\[FAIL\]|^\[----\] .*: (Assertion|Test|Timed|Crash)|LeakSanitizer|runtime error:|ERROR: AddressSanitizer' \
			"$logs/$name.log" | head -4 | cut -c1-240 | sed "s/^/  $name: /"
	done
	echo "failed suites: ${suites_failed[*]}"
fi
[ ${#skipped[@]} -gt 0 ] && echo "suites skipped (TEST_SKIP): ${#skipped[@]}: ${skipped[*]}"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ ${#suites_failed[@]} -eq 0 ]
