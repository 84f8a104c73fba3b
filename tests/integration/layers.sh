#!/usr/bin/env bash
# layers.sh: each folder includes only the headers of its own layer and those
# below it (docs/ARCHITECTURE.md, "Layers"). One check per source file.
source "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."

# folder -> the folders whose headers it may include (its own included)
declare -A may=(
	[common]="common"
	[runner]="runner runner/init common"
	[runner/init]="runner/init"
	[judge/store]="judge/store common"
	[judge/grading]="judge/grading runner common"
	[judge/service]="judge/service judge/grading judge/store runner common"
	[judge/api]="judge/api judge/service judge/grading judge/store runner common"
	[judge/cli]="judge/cli judge/api judge/service judge/grading judge/store runner common"
)
# the runner takes its options from its caller: it never reads judge.ini
forbidden_in_runner="common/config.h"

for f in common/*.[ch] runner/*.[ch] runner/init/*.[ch] judge/*/*.[ch]; do
	dir=$(dirname "$f")
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
			[ "$(dirname "$inc")" = "$a" ] && ok=true
		done
		[ "$dir" = runner ] && [ "$inc" = "$forbidden_in_runner" ] && ok=false
		$ok || bad="$bad $inc"
	done < <(sed -nE 's/^#include "([^"]+)".*/\1/p' "$f")
	if [ -z "$bad" ]; then pass "$f"; else fail "$f" "includes a higher layer:$bad"; fi
done
finish
