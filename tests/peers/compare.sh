#!/usr/bin/env bash
# tests/peers/compare.sh: grades the example packages of Kattis problemtools
# (examples/) and DOMjudge (example_problems/) with `judge verify` and compares
# every submission's verdict with the one the package declares (its folder, or
# DOMjudge's @EXPECTED_RESULTS@ line). Optionally (PROBLEMTOOLS=1) runs
# problemtools' own verifyproblem on the Kattis packages beside it.
#
#   tests/peers/compare.sh KATTIS DOMJUDGE [OUT]
#
# KATTIS and DOMJUDGE are clones of github.com/Kattis/problemtools and
# github.com/DOMjudge/domjudge: a work tree, or a bare git folder (as the search
# tool's fetch leaves them: /work/.mirror/<owner>+<name>/repo). The packages are
# copied into OUT (default: a new /tmp/peers.XXXXXX) and never changed in place.
# Writes OUT/table.md (package, submission, language, expected, ours, agree?)
# and prints the counts. Exits 0 when every submission that ran agrees or is a
# listed host-specific case (tests/peers/host-specific.txt), 1 otherwise.
#
# Environment: JUDGE (default bin/judge), SANDBOX (default native), JOBS (-j,
# default 1: timings are CPU time, but a loaded host still stretches wall time),
# PROBLEMTOOLS=1 to run verifyproblem too (needs python3 with PyYAML and
# pydantic >= 2, and colorlog; see docs/problems.md).
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
[ $# -ge 2 ] || {
	sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 2
}
KATTIS=$1
DOMJUDGE=$2
OUT=${3:-$(mktemp -d /tmp/peers.XXXXXX)}
JUDGE=${JUDGE:-bin/judge}
SANDBOX=${SANDBOX:-native}
JOBS=${JOBS:-1}
HOST_SPECIFIC=$ROOT/tests/peers/host-specific.txt
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# export SRC SUBDIR DEST: copies SUBDIR of a clone into DEST, from its work tree
# or, for a bare folder, from HEAD's tree; files the clone lacks (large blobs a
# partial clone left out) are listed in DEST/missing.txt.
export_tree() {
	local src=$1 sub=$2 dst=$3
	mkdir -p "$dst"
	: >"$dst/missing.txt"
	if [ -d "$src/$sub" ]; then
		cp -a "$src/$sub/." "$dst/"
		return
	fi
	if ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
		echo "compare: $src is neither a work tree with $sub/ nor a git folder" >&2
		exit 2
	fi
	git -C "$src" ls-tree -r -z HEAD "$sub" | while IFS= read -r -d '' line; do
		local meta=${line%%$'\t'*} path=${line#*$'\t'} mode hash rel
		read -r mode _ hash <<<"$meta"
		rel=${path#"$sub"/}
		mkdir -p "$dst/$(dirname "$rel")"
		if [ "$mode" = 120000 ]; then
			ln -sfn "$(git -C "$src" cat-file blob "$hash")" "$dst/$rel"
		elif git -C "$src" cat-file blob "$hash" >"$dst/$rel" 2>/dev/null; then
			if [ "$mode" = 100755 ]; then chmod +x "$dst/$rel"; fi
		else
			rm -f "$dst/$rel"
			echo "$rel" >>"$dst/missing.txt"
		fi
	done
}

# A test whose input is missing cannot run: its answer goes too (noted).
drop_half_tests() {
	local dir=$1 f
	while IFS= read -r f; do
		case $f in */data/*.ans) [ -e "$dir/${f%.ans}.in" ] || { rm -f "$dir/$f"; echo "dropped test ${f%.ans} (its .in is missing)"; } ;; esac
	done < <(cd "$dir" && find . -path '*/data/*' -name '*.ans' | sed 's|^\./||')
}

echo "compare: packages into $OUT"
export_tree "$KATTIS" examples "$OUT/kattis"
export_tree "$DOMJUDGE" example_problems "$OUT/domjudge"
for side in kattis domjudge; do
	if [ -s "$OUT/$side/missing.txt" ]; then
		echo "compare: $side: files absent from the clone: $(tr '\n' ' ' <"$OUT/$side/missing.txt")"
	fi
	drop_half_tests "$OUT/$side" | sed "s/^/compare: $side: /"
done

KATTIS_PKGS=$(cd "$OUT/kattis" && for d in */; do [ -f "$d/problem.yaml" ] && echo "${d%/}"; done)
DOMJUDGE_PKGS=$(cd "$OUT/domjudge" && for d in */; do [ -f "$d/problem.yaml" ] && echo "${d%/}"; done)
: >"$OUT/verify.txt"
for p in $KATTIS_PKGS; do
	echo "compare: judge verify kattis/$p"
	"$JUDGE" verify -j "$JOBS" --sandbox "$SANDBOX" "$OUT/kattis/$p" 2>/dev/null | sed "s|^|kattis\t|" >>"$OUT/verify.txt"
done
for p in $DOMJUDGE_PKGS; do
	echo "compare: judge verify domjudge/$p"
	"$JUDGE" verify -j "$JOBS" --sandbox "$SANDBOX" "$OUT/domjudge/$p" 2>/dev/null | sed "s|^|domjudge\t|" >>"$OUT/verify.txt"
done

# problemtools' own verdicts on the Kattis packages (optional)
: >"$OUT/problemtools.txt"
if [ "${PROBLEMTOOLS:-0}" = 1 ]; then
	bash "$ROOT/tests/peers/problemtools.sh" "$KATTIS" "$OUT" $KATTIS_PKGS >"$OUT/problemtools.txt" 2>"$OUT/problemtools.err" ||
		echo "compare: problemtools did not run: $(tail -3 "$OUT/problemtools.err")"
fi

python3 "$ROOT/tests/peers/table.py" "$OUT/verify.txt" "$HOST_SPECIFIC" "$OUT/problemtools.txt" >"$OUT/table.md"
rc=$?
tail -n 1 "$OUT/table.md"
echo "compare: table in $OUT/table.md"
exit $rc
