#!/usr/bin/env bash
# architecture.sh: docs/ARCHITECTURE.md stays short and true to the tree: at
# most 250 lines; every repository path it names (runner/..., judge/...,
# languages/..., tests/..., docs/..., migrations/..., web/..., common/...)
# exists, a placeholder such as <name> or NNNN matching at least one file; and
# every C function it names in backticks as `name()` is in the sources (or a
# SQL function of migrations/); every file it links to exists. The other
# docs/*.md get the same checks but the line count. Needs no build.
source "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."

arch=docs/ARCHITECTURE.md
max_lines=250
sources=(common runner judge migrations)

# Files of other projects that the docs name by their own paths (problemtools'
# judge/*.py in docs/problems.md): not ours to check.
foreign=" judge/cache.py judge/execute.py "

# paths: a root folder not preceded by a path or word character or a quote (an
# example string: 'tests/1.in'), then path characters; <placeholder> and *
# allowed (globs); trailing punctuation dropped; a one-letter rest is a unit
# (tests/s), not a path
paths_of() {
	grep -oP "(?<![\w./<>*\$~'-])(runner|judge|languages|tests|docs|migrations|web|common)/[\w./<>*-]*" "$1" |
		sed -E 's/[.,:;)]+$//' | grep -vE '^[a-z]+/[a-z]$' | sort -u
}

# path_exists PATH: the path, or (with placeholders) some file the glob matches;
# migrations/0007 names the migration of that number
path_exists() {
	local p=$1 g
	[[ $foreign == *" $p "* ]] && return 0
	if [[ $p =~ ^migrations/[0-9]{4}$ ]]; then
		compgen -G "${p}_*.sql" >/dev/null
		return
	fi
	if [[ $p != *[\<\*]* && $p != *NNNN* ]]; then
		[ -e "$p" ]
		return
	fi
	g=$(sed -E 's/<[^>]*>/*/g; s/NNNN/[0-9][0-9][0-9][0-9]/g' <<<"$p")
	compgen -G "${g%/}" >/dev/null
}

# functions: `name()` in backticks
functions_of() {
	grep -oP '`[A-Za-z_]\w*\(\)`' "$1" | tr -d '`()' | sort -u
}

# in the C sources, or a SQL function of migrations/ (`gen_random_uuid()`)
function_exists() {
	grep -rqE --include='*.c' --include='*.h' --include='*.sql' "\b$1[[:space:]]*\(" "${sources[@]}"
}

# relative Markdown links to other files: [text](file.md#anchor)
links_of() {
	grep -oP '\]\((?![a-z]+:|#)[^)\s]+\)' "$1" | sed -E 's/^\]\(//; s/\)$//; s/#.*//' | sort -u
}

check_doc() { # $1 = doc; every path, link and function it names
	local doc=$1 bad p
	bad=""
	while read -r p; do
		[ -n "$p" ] || continue
		path_exists "$p" || bad="$bad $p"
	done < <(paths_of "$doc")
	if [ -z "$bad" ]; then pass "$doc: every path it names exists"; else
		fail "$doc: every path it names exists" "missing:$bad"
	fi
	bad=""
	while read -r p; do
		[ -n "$p" ] || continue
		[ -e "$(dirname "$doc")/$p" ] || bad="$bad $p"
	done < <(links_of "$doc")
	if [ -z "$bad" ]; then pass "$doc: every file it links to exists"; else
		fail "$doc: every file it links to exists" "missing:$bad"
	fi
	bad=""
	while read -r p; do
		[ -n "$p" ] || continue
		function_exists "$p" || bad="$bad $p()"
	done < <(functions_of "$doc")
	if [ -z "$bad" ]; then pass "$doc: every function() it names is in the sources"; else
		fail "$doc: every function() it names is in the sources" "not found:$bad"
	fi
}

# the checks themselves first: on a probe that breaks each rule once, each
# must find exactly what it should (a check that finds nothing proves nothing)
probe=$(mktemp -d /tmp/judge-architecture.XXXXXX)
trap 'rm -rf "$probe"' EXIT
cat >"$probe/probe.md" <<'MD'
Real: runner/sandbox.h, `sandbox_run()`, judge/grading/ and languages/<name>.ini,
migrations/NNNN_<name>.sql, migrations/0001. Missing: runner/nowhere.c,
judge/<x>/nothing_<y>.c, migrations/9999. Not repo paths: /opt/judge/runtimes,
state_dir/pg, 'tests/1.in', 20 tests/s. `no_such_function_here()`.
[a link](ARCHITECTURE.md#layers-and-folders) and [a broken one](gone.md).
MD
got=$(paths_of "$probe/probe.md" | while read -r p; do path_exists "$p" || echo "$p"; done | tr '\n' ' ')
if [ "$got" = "judge/<x>/nothing_<y>.c migrations/9999 runner/nowhere.c " ]; then
	pass "the path check finds the missing paths, and only them"
else
	fail "the path check finds the missing paths, and only them" "got: $got"
fi
got=$(functions_of "$probe/probe.md" | while read -r f; do function_exists "$f" || echo "$f"; done | tr '\n' ' ')
if [ "$got" = "no_such_function_here " ]; then
	pass "the function check finds the missing function, and only it"
else
	fail "the function check finds the missing function, and only it" "got: $got"
fi
touch "$probe/ARCHITECTURE.md" # the probe's good link resolves beside it
got=$(links_of "$probe/probe.md" | while read -r l; do [ -e "$probe/$l" ] || echo "$l"; done | tr '\n' ' ')
if [ "$got" = "gone.md " ]; then pass "the link check finds the broken link, and only it"; else
	fail "the link check finds the broken link, and only it" "got: $got"
fi

n=$(wc -l <"$arch")
if [ "$n" -le "$max_lines" ]; then pass "$arch has $n lines (at most $max_lines)"; else
	fail "$arch has at most $max_lines lines" "it has $n: move detail to a topic doc under docs/"
fi
for doc in docs/*.md; do
	check_doc "$doc"
done
finish
