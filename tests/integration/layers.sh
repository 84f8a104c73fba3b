#!/usr/bin/env bash
# layers.sh: each folder includes only the headers of its own layer and those
# below it (docs/ARCHITECTURE.md, "Layers"), and inside runner/ each room only
# what its README allows. One check per source file. And no C file names a
# language: facts about languages live in languages/ (lib/langnames.py says
# what counts).
source "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."

# folder -> the folders whose headers it may include (its own included)
declare -A may=(
	[common]="common"
	[runner]="runner common"
	[runner/native]="runner runner/native runner/native/init common"
	[runner/native/init]="runner/native/init"
	[runner/gvisor]="runner runner/gvisor runner/gvisor/init common"
	[runner/gvisor/init]="runner/gvisor/init"
	[runner/session]="runner runner/session runner/session/init common"
	[runner/session/init]="runner/session/init"
	[runner/install]="runner runner/install common"
	[runner/zygote]="runner/zygote runner/native runner/native/init runner/gvisor/init"
	[judge/store]="judge/store common"
	[judge/grading]="judge/grading runner runner/session runner/install common"
	[judge/service]="judge/service judge/service/session judge/grading judge/store runner runner/session runner/install common"
	[judge/service/session]="judge/service judge/service/session judge/grading judge/store runner runner/session runner/install common"
	[judge/api]="judge/api judge/service judge/service/session judge/grading judge/store runner runner/session runner/install common"
	[judge/cli]="judge/cli judge/api judge/service judge/service/session judge/grading judge/store runner runner/session runner/install common"
)
# the runner takes its options from its caller: it never reads judge.ini
forbidden_in_runner="common/config.h"
# the backends' contract: only the runner's core (runner/*.c) and the backends'
# own rooms include it; everything else uses the sandbox through sandbox.h
backend_rooms="runner runner/native runner/gvisor"

for f in common/*.[ch] runner/*.[ch] runner/*/*.[ch] runner/*/init/*.[ch] judge/*/*.[ch] judge/*/*/*.[ch]; do
	dir=${f%/*}
	allowed=${may[$dir]-}
	if [ -z "$allowed" ]; then
		fail "$f" "folder $dir has no layer in layers.sh"
		continue
	fi
	bad=""
	while read -r inc; do
		[ -n "$inc" ] || continue
		ok=false
		for a in $allowed; do
			[ "${inc%/*}" = "$a" ] && ok=true
		done
		case $dir in runner*) [ "$inc" = "$forbidden_in_runner" ] && ok=false ;; esac
		if [ "$inc" = runner/backend.h ] && [[ " $backend_rooms " != *" $dir "* ]]; then
			ok=false
		fi
		$ok || bad="$bad $inc"
	done < <(sed -nE 's/^#include "([^"]+)".*/\1/p' "$f")
	if [ -z "$bad" ]; then pass "$f"; else fail "$f" "includes a higher layer or another room's internals:$bad"; fi
done

# every room of runner/ says what lives there and its invariants
for room in runner runner/native runner/gvisor runner/session runner/install; do
	if [ -s "$room/README.md" ]; then pass "$room has a README"; else fail "$room has a README"; fi
done
# the core names no backend but in its table: start-up iterates backend_ops[]
if grep -nE '"(native|gvisor)"' runner/sandbox.c runner/boxfiles.c runner/verdict.c; then
	fail "the runner's core names no backend"
else
	pass "the runner's core names no backend"
fi

# no language name in C outside tests/: the rule (lib/langnames.py) first
# proves it still finds one, on a file that breaks it in each way it knows
sources=(common/*.[ch] runner/*.[ch] runner/*/*.[ch] runner/*/init/*.[ch] judge/*/*.[ch] judge/*/*/*.[ch])
probe=$(mktemp /tmp/judge-layers.XXXXXX.c)
trap 'rm -f "$probe"' EXIT
cat >"$probe" <<'C'
/* a comment may name python and node */
static int is_py(const char *l) { return !strcmp(l, "Python"); }
static const char *const msg = "function problems are supported in python and cpp";
static int harness_csharp(void);
static const char *const piston = "c#";
static const char *const media = "text/x-python"; /* a media type is no language */
static const char *const key = "c"; /* lang-ok: a JSON key */
C
found=$(python3 tests/integration/lib/langnames.py languages "$probe" | sed "s|$probe|probe|")
want=$(printf '%s\n' 'probe:2: string literal: "Python"' 'probe:3: name in a string literal: python' \
	'probe:3: name in a string literal: cpp' 'probe:4: identifier: harness_csharp' \
	'probe:5: string literal: "c#"')
if [ "$found" = "$want" ]; then pass "the language-name rule finds what it should"; else
	fail "the language-name rule finds what it should" "got: $found"
fi
if out=$(python3 tests/integration/lib/langnames.py languages "${sources[@]}"); then
	pass "no language name in C outside tests (${#sources[@]} files)"
else
	fail "no language name in C outside tests" "$(printf '\n%s' "$out")"
fi
finish
