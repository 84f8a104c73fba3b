#!/usr/bin/env bash
# bench/evalsets.sh BIN: each eval set's own harness against `judge eval` on
# the same samples in the same run (tests/agreement/agree.py; docs/evaluations.md
# says how to bring the data to EVALDATA): samples per second of both, and
# whether they agreed on every sample. The harness runs bare (no sandbox), as
# graders run it; the judge in its sandbox (SANDBOX, default native). Env:
# EVALDATA (/work/evaldata), SETS ("humaneval humaneval-x mbpp multipl-e livecodebench
# evalplus"), ONLY
# (canonical: the canonical solutions; all: and the wrong ones), JOBS (cores),
# TIMEOUT (10, both sides).
cd "$(dirname "$0")/../.." || exit 1
JUDGE=${1:-bin/judge}
EVALDATA=${EVALDATA:-/work/evaldata}
SETS=${SETS:-humaneval humaneval-x mbpp multipl-e livecodebench evalplus}
WORK=$(mktemp -d /tmp/judge-bench-evalsets.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
rc=0
echo "eval sets: each set's harness (bare) and judge eval (${SANDBOX:-native}) on the same samples, same run ($(nproc) cores)"
echo "| set | language | n | agree | disagree | reference passed | judge passed | reference samples/s | judge samples/s | judge/reference |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for s in $SETS; do
	if [ ! -d "$EVALDATA" ]; then
		echo "skip $s: no data in $EVALDATA (docs/evaluations.md, 'Rerunning the agreement')"
		continue
	fi
	python3 tests/agreement/agree.py "$s" --data "$EVALDATA" --work "$WORK/$s" --judge "$JUDGE" \
		--sandbox "${SANDBOX:-native}" --jobs "${JOBS:-$(nproc)}" --only "${ONLY:-canonical}" \
		--timeout "${TIMEOUT:-10}" | sed -n "3,\$p"
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
done
exit $rc
