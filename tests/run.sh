#!/usr/bin/env bash
# tests/run.sh BUILD BIN: runs every Criterion binary and integration script,
# two at a time, and closes with one "N passed, M failed" line.
set -u
build=${1:-build}
export JUDGE=${2:-bin/judge}
cd "$(dirname "$0")/.."
out=$(mktemp -d /tmp/judge-tests.XXXXXX)
trap 'rm -rf "$out"' EXIT
jobs=()
for t in "$build"/tests/test_*; do [ -x "$t" ] && jobs+=("$t"); done
for t in tests/integration/*.sh; do [ -f "$t" ] && jobs+=("bash $t"); done

run_one() { # $1 = command; output to $out/<name>.log, status to .rc
	local name
	name=$(basename "${1##* }")
	$1 >"$out/$name.log" 2>&1
	echo $? >"$out/$name.rc"
}
export -f run_one
export out
printf '%s\n' "${jobs[@]}" | xargs -P "${TEST_JOBS:-2}" -I{} bash -c 'run_one "{}"'

pass=0 fail=0 suites_failed=()
for rc in "$out"/*.rc; do
	name=$(basename "$rc" .rc)
	log="$out/$name.log"
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
[ ${#suites_failed[@]} -gt 0 ] && echo "failed suites: ${suites_failed[*]}"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ ${#suites_failed[@]} -eq 0 ]
