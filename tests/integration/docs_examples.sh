#!/usr/bin/env bash
# docs_examples.sh: every shell example of README.md and docs/*.md, run in order
# against the service as `make run` starts it (judge up --config judge.ini, in a
# folder laid out like the checkout), and the answers the text shows checked
# field by field (tests/integration/lib/doctest.py says how). A block marked
# `<!-- not run: why -->` is counted as a skip. A docs change that breaks an
# example fails this suite.
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
source tests/svc.sh

# PyPI cannot be reached from here: the packages the docs install with pip
# come from a local PEP 503 index (wheels built by pep503.py); npm installs
# read the real registry, as shipped
svc_index tabulate==0.9.0

# judge.ini as shipped, but for two keys:
#   listen: a free port (suites run side by side, and a `make run` may hold 8080;
#     doctest.py turns the docs' 127.0.0.1:8080 into it)
#   pip_index_url: the local index above (PyPI is not reachable here)
W=$SVC_TMP/checkout
if svc_make_run "$W" "listen = 127.0.0.1:$(svc_port)" "pip_index_url = ${INDEX:-http://127.0.0.1:9/simple/}"; then
	pass "judge up --config judge.ini (as make run), shipped but for listen and pip_index_url"
else
	fail "judge up --config judge.ini (as make run)"
	finish
	exit 1
fi

files=(README.md docs/*.md)
python3 tests/integration/lib/doctest.py --workdir "$W" --port "$PORT" --show "${files[@]}" |
	tee "$SVC_TMP/doctest.out" | sed 's/^\(ok  \|FAIL\|skip\) docs:/\1 docs_examples:/'
read -r _ p f s < <(grep '^= ' "$SVC_TMP/doctest.out" | tail -1)
if [ -z "${p:-}" ]; then
	fail "doctest.py ran to its end" "$(tail -5 "$SVC_TMP/doctest.out")"
else
	T_PASS=$((T_PASS + p)) T_FAIL=$((T_FAIL + f)) T_SKIP=$((T_SKIP + s))
	[ "$p" -ge 40 ] && pass "the docs have examples that ran ($p)" || fail "the docs' examples" "only $p ran"
fi
svc_log_clean "$W/up.err"
finish
