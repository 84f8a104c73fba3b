#!/usr/bin/env bash
# bench/eval.sh BIN: evaluation throughput (issue 13). N Python samples of our own
# function problems (half right, half wrong, every 100th an endless loop; timeout
# T s) graded by `judge eval` (native, gvisor) and through the API (POST
# /v1/evaluations, native worker), in samples per second, against running the
# same check programs (the harness's main.py + solution.py + stdin) as bare
# python3.12 processes, as many at once as cores, in the same run: bare first,
# each judge run, then bare again (the mean of the two bare runs is the reference,
# so that a change in the machine's load hits both sides).
# Targets: native >= 70 % of bare, gvisor >= 35 %. The API row also shows the
# CPU each part spent per sample. Env: N (1000), NG (gvisor
# samples, 200), T (1), BACKENDS ("native gvisor"), API (1: measure the API),
# SLOTS (the API worker's worker_slots, cores), API_COLD (1: the API row again
# with warm_start = off, its CPU split beside). gVisor is measured twice: as
# judge.ini says (warm_start = on: Python runs forked from a zygote,
# docs/warm-start.md) and with warm_start = off ("gvisor cold", reference); so is
# native ("native cold").
cd "$(dirname "$0")/../.." || exit 1
export JUDGE=${1:-bin/judge}
source tests/lib.sh
source tests/svc.sh
N=${N:-1000}
NG=${NG:-200}
T=${T:-1}
BACKENDS=${BACKENDS:-native gvisor}
CORES=$(nproc)
PY=/opt/judge/runtimes/python3.12/bin/python3.12
D=$SVC_TMP/eval
python3 tests/bench/eval_gen.py "$D" "$N" || exit 1

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# bare M: the first M samples' check programs, CORES at a time, with the same timeout
bare() {
	local t0
	t0=$(now_ms)
	seq 0 $(($1 - 1)) | xargs -P "$CORES" -I{} sh -c \
		"cd '$D/bare/{}' && timeout $T $PY main.py <stdin >/dev/null 2>&1; true"
	echo $(($(now_ms) - t0))
}
rate() { awk -v n="$1" -v ms="$2" 'BEGIN {printf "%.1f", n * 1000 / ms}'; }
row() { # LABEL M JUDGE_MS BARE_MS_BEFORE BARE_MS_AFTER TARGET
	local b=$((($4 + $5) / 2)) js bs ratio ok
	js=$(rate "$2" "$3")
	bs=$(rate "$2" "$b")
	ratio=$(awk -v j="$js" -v b="$bs" 'BEGIN {printf "%.0f", 100 * j / b}')
	ok=$([ "$6" = - ] && echo ref || { [ "$ratio" -ge "$6" ] && echo ok || echo MISSED; })
	printf '%-22s %6d %9s %9s %6s%%   >=%s%%  %s\n' "$1" "$2" "$bs" "$js" "$ratio" "$6" "$ok"
}
head -n "$N" "$D/samples.jsonl" >"$D/s.jsonl"
head -n "$NG" "$D/samples.jsonl" >"$D/sg.jsonl"
echo "samples per second, same machine, same run ($CORES cores; timeout ${T}s; every 100th sample endless)"
printf '%-22s %6s %9s %9s %7s  %6s  %s\n' "how" "n" "bare/s" "judge/s" "ratio" "target" "verdict"
sed 's/^warm_start = .*/warm_start = off/' judge.ini >"$D/cold.ini"
runs=$BACKENDS
[[ " $BACKENDS " == *" native "* ]] && runs="$runs native-cold"
[[ " $BACKENDS " == *" gvisor "* ]] && runs="$runs gvisor-cold"
for b in $runs; do
	cfg=()
	[ "$b" = gvisor-cold ] && b=gvisor cfg=(--config "$D/cold.ini")
	[ "$b" = native-cold ] && b=native cfg=(--config "$D/cold.ini")
	label=$b
	[ ${#cfg[@]} -gt 0 ] && label="$b cold"
	if "$JUDGE" languages 2>/dev/null | grep -qE "^$b unavailable"; then
		echo "$b: unavailable here, left out"
		continue
	fi
	m=$N tgt=70 f=$D/s.jsonl
	[ "$b" = gvisor ] && m=$NG tgt=35 f=$D/sg.jsonl
	b1=$(bare "$m")
	t0=$(now_ms)
	"$JUDGE" "${cfg[@]}" eval --sandbox "$b" --timeout "$T" -j "$CORES" --problems "$D/problems.jsonl" \
		--samples "$f" --k 1 >"$D/$b.out" 2>"$D/$b.err" || { cat "$D/$b.err"; exit 1; }
	j=$(($(now_ms) - t0))
	b2=$(bare "$m")
	[ "$label" != "$b" ] && tgt=-
	row "judge eval $label" "$m" "$j" "$b1" "$b2" "$tgt"
	echo "    pass@1 $(cat "$D/$b.out") (expected $(python3 -c "n=$m; print(sum(1 for i in range(n) if (i//5)%2==0 and i%100!=99)/n)"))"
done
if [ "${API:-1}" = 1 ]; then
	# changed from judge.ini (svc.sh): room for 1000 samples in one body and one wait,
	# and the slots measured
	svc_up bench-eval "max_wait_s = 600" "max_body_kb = 65536" "[worker]" "worker_slots = ${SLOTS:-$CORES}" \
		"[sandbox]" "sandbox = native" >/dev/null
	jq -nc --slurpfile p "$D/problems.jsonl" --slurpfile s "$D/s.jsonl" --argjson t "$T" \
		'{language: "python", problems: $p, samples: $s, k: [1], timeout: $t}' >"$D/body.json"
	# CPU ticks (/proc/PID/stat) of serve, the worker's own threads, what the
	# worker waited for (the sandboxes) and PostgreSQL: the judge's cost per
	# sample, which a machine shared with other work does not blur as it does
	# the rates
	PGPID=$(head -1 "$SVC_TMP/pg/data/postmaster.pid")
	ticks() { awk -v f="$2" '{print $f + $(f + 1)}' "/proc/$1/stat" 2>/dev/null || echo 0; }
	pgticks() { local t=0 p; for p in $PGPID $(pgrep -P "$PGPID"); do t=$((t + $(ticks "$p" 14))); done; echo $t; }
	cpu() { echo "$(ticks "$MAIN_PID" 14) $(ticks "$SVC_WORKER_PID" 14) $(ticks "$SVC_WORKER_PID" 16) $(pgticks)"; }
	# as judge.ini says (warm_start = on), then with warm_start = off ("API
	# native cold"): the split before and after the zygote (issue 25)
	for warm in on off; do
		if [ "$warm" = off ]; then
			[ "${API_COLD:-1}" = 1 ] || break
			svc_stop "$SVC_WORKER_PID"
			sed -i 's/^warm_start = .*/warm_start = off/' "$ini"
			svc_worker "$ini" || { fail "the cold worker starts"; break; }
		fi
		b1=$(bare "$N")
		c0=$(cpu)
		t0=$(now_ms)
		id=$(curl -s "${AUTH[@]}" "${JSON[@]}" "$U/v1/evaluations" --data-binary @"$D/body.json" | jq -r .id)
		[[ $id =~ ^[0-9]+$ ]] || { echo "POST /v1/evaluations failed"; exit 1; }
		out=$(curl -s -m 700 "${AUTH[@]}" "$U/v1/evaluations/$id?wait=600")
		j=$(($(now_ms) - t0))
		c1=$(cpu)
		b2=$(bare "$N")
		if [ "$warm" = on ]; then row "API native" "$N" "$j" "$b1" "$b2" 70; else row "API native cold" "$N" "$j" "$b1" "$b2" -; fi
		echo "    $(jq -c '{status, done, pass_at_k}' <<<"$out")"
		awk -v n="$N" -v hz="$(getconf CLK_TCK)" -v a="$c0" -v b="$c1" 'BEGIN {
			split(a, x); split(b, y)
			for (i = 1; i <= 4; i++) d[i] = (y[i] - x[i]) * 1000 / hz / n
			printf "    CPU ms per sample: serve %.1f, worker %.1f, sandboxes %.1f, postgres %.1f\n", d[1], d[2], d[3], d[4] }'
	done
fi
