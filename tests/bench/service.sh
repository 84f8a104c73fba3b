#!/usr/bin/env bash
# bench/service.sh BIN: latency and throughput of the whole service (HTTP + PostgreSQL +
# worker + sandbox) against bare execution of the same programs, in the same run.
# The bare and judge measurements are interleaved, so that a change in the speed of
# this shared machine during the run hits both sides alike.
#   latency: p50/p99 of N POST /v1/execute_with_expected (one request at a time, each
#            right after one bare run, SETTLE s apart), Python and C hello world, vs the bare commands
#            the language files run (C: gcc with the same flags, then the program;
#            Python: python3.12 main.py).
#   throughput: M execute_with_expected requests from 2 x cores concurrent clients with
#            the default worker_slots, vs M bare runs with as many processes as cores,
#            in ROUNDS alternating chunks of each.
# Targets (issue 4): native p50 <= bare + 15 ms; gvisor p50 <= bare + 80 ms;
# throughput >= 70% of bare. Env: N (default 30), M (default 120), ROUNDS (default 3),
# BACKENDS ("native gvisor").
cd "$(dirname "$0")/../.." || exit 1
export JUDGE=${1:-bin/judge}
source tests/lib.sh
source tests/svc.sh
N=${N:-30}
M=${M:-120}
ROUNDS=${ROUNDS:-3}
SETTLE=${SETTLE:-0.3}
BACKENDS=${BACKENDS:-native gvisor}
CORES=$(nproc)
PY=/opt/judge/runtimes/python3.12/bin/python3.12
W=$SVC_TMP/bare
mkdir -p "$W"

printf 'print("hello")\n' >"$W/main.py"
printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' >"$W/main.c"
jq -n --rawfile s "$W/main.py" '{language: "python", source: $s, expected_output: "hello\n"}' >"$SVC_TMP/python.json"
jq -n --rawfile s "$W/main.c" '{language: "c", source: $s, expected_output: "hello\n"}' >"$SVC_TMP/c.json"

# percentile P FILE (values in ms, one per line)
pct() { sort -n "$2" | awk -v p="$1" '{v[NR]=$1} END {i=int((NR*p+99)/100); if (i<1) i=1; printf "%.1f", v[i]}'; }

# bare_one LANG DIR: one bare execution as the judge would do it (compile + run for C)
bare_one() {
	if [ "$1" = python ]; then
		(cd "$2" && PYTHONDONTWRITEBYTECODE=1 "$PY" main.py >/dev/null)
	else
		(cd "$2" && /usr/bin/gcc -std=c17 -O2 -pipe -Wall -o main main.c -lm && ./main >/dev/null)
	fi
}
export -f bare_one
export PY

# bare_chunk LANG K: seconds taken by K bare runs, CORES at a time
bare_chunk() {
	local i t0 t1
	for i in $(seq "$CORES"); do mkdir -p "$W/p$i"; cp "$W/main.py" "$W/main.c" "$W/p$i/"; done
	t0=$EPOCHREALTIME
	seq "$2" | xargs -P "$CORES" -I{} bash -c 'bare_one '"$1"' "'"$W"'/p$(( {} % '"$CORES"' + 1 ))"'
	t1=$EPOCHREALTIME
	echo "$t1 - $t0" | bc -l
}

# curl config of K requests with body FILE; answers go to $SVC_TMP/ans/N (when SAVE=1)
curl_cfg() {
	local k=$1 body=$2 i out=/dev/null
	mkdir -p "$SVC_TMP/ans"
	for i in $(seq "$k"); do
		[ "$i" -gt 1 ] && echo next
		[ "${SAVE:-0}" = 1 ] && out=$SVC_TMP/ans/$i
		printf 'url = "%s/v1/execute_with_expected"\nheader = "Authorization: Bearer %s"\n' "$U" "$KEY"
		printf 'header = "Content-Type: application/json"\ndata-binary = "@%s"\n' "$body"
		printf 'output = "%s"\nwrite-out = "%%{http_code} %%{time_total}\\n"\n' "$out"
	done
}

# judge_chunk BODY K: prints "OK SECONDS" for K requests, 2 x CORES at a time
judge_chunk() {
	local t0 t1 ok
	curl_cfg "$2" "$1" >"$SVC_TMP/tp.cfg"
	t0=$EPOCHREALTIME
	curl -s --parallel --parallel-max $((2 * CORES)) -K "$SVC_TMP/tp.cfg" >"$SVC_TMP/tp.out" 2>/dev/null
	t1=$EPOCHREALTIME
	ok=$(grep -c '^200 ' "$SVC_TMP/tp.out")
	[ "$ok" = "$2" ] || echo "warning: $ok of $2 requests answered 200" >&2
	echo "$ok $(echo "$t1 - $t0" | bc -l)"
}

# latency LANG BODY OUT_BARE OUT_JUDGE: N pairs of one bare run and one request
# (ms per line); OUT_JUDGE.svc gets each request's time minus the worker's grading
# time (the service's own share)
latency() {
	local i t0 t1 out id grade total
	: >"$3"
	: >"$4"
	: >"$4.svc"
	for i in $(seq $((N + 3))); do
		t0=$EPOCHREALTIME
		bare_one "$1" "$W"
		t1=$EPOCHREALTIME
		out=$(curl -s -o "$SVC_TMP/ans1" -w '%{http_code} %{time_total}' \
			-H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
			--data-binary "@$2" "$U/v1/execute_with_expected")
		# what the judge does after answering (gVisor starts the next sandbox
		# ahead) must not land on the next bare run: a request every SETTLE s
		sleep "$SETTLE"
		[ "$i" -le 3 ] && continue # warm-up: page cache, sandboxes started ahead
		[ "${out%% *}" = 200 ] || echo "warning: a request answered ${out%% *}" >&2
		echo "($t1 - $t0) * 1000" | bc -l >>"$3"
		total=$(echo "${out#* } * 1000" | bc -l)
		echo "$total" >>"$4"
		id=$(jq -r .id "$SVC_TMP/ans1" 2>/dev/null) || continue
		grade=$(curl -s -H "Authorization: Bearer $KEY" "$U/v1/submissions/$id" |
			jq -r '.finished_ms - .started_ms')
		echo "$total - $grade" | bc -l >>"$4.svc"
	done
}

# throughput LANG BODY: prints "BARE_PER_S JUDGE_PER_S" from ROUNDS alternating chunks
throughput() {
	local r k=$((M / ROUNDS)) bt=0 jt=0 jok=0 s ok
	for r in $(seq "$ROUNDS"); do
		s=$(bare_chunk "$1" "$k")
		bt=$(echo "$bt + $s" | bc -l)
		read -r ok s < <(judge_chunk "$2" "$k")
		jok=$((jok + ok))
		jt=$(echo "$jt + $s" | bc -l)
	done
	echo "$(echo "$k * $ROUNDS / $bt" | bc -l) $(echo "$jok / $jt" | bc -l)"
}

svc_pg_start || exit 1
PORT=$(svc_port)
U=http://127.0.0.1:$PORT
svc_config "$SVC_TMP/judge.ini" "listen = 127.0.0.1:$PORT" "rate_limit_per_min = 0" "max_in_flight = 0"
"$JUDGE" --config "$SVC_TMP/judge.ini" migrate >/dev/null 2>&1 || { echo "migrate failed"; exit 1; }
KEY=$("$JUDGE" --config "$SVC_TMP/judge.ini" keys create --name bench 2>/dev/null)
svc_serve "$SVC_TMP/judge.ini" || exit 1

for i in 1 2 3; do bare_one python "$W"; bare_one c "$W"; done

rows=()
tprows=()
status=0
for sb in $BACKENDS; do
	{ cat "$SVC_TMP/judge.ini"; printf '[sandbox]\nsandbox = %s\n' "$sb"; } >"$SVC_TMP/$sb.ini"
	svc_worker "$SVC_TMP/$sb.ini" || { echo "worker ($sb) did not start" >&2; status=1; continue; }
	[ "$sb" = gvisor ] && target=80 || target=15
	for lang in python c; do
		echo "measuring $sb $lang (N=$N, M=$M in $ROUNDS rounds, $CORES cores) ..." >&2
		latency "$lang" "$SVC_TMP/$lang.json" "$SVC_TMP/bare.$sb.$lang" "$SVC_TMP/svc.$sb.$lang"
		bp50=$(pct 50 "$SVC_TMP/bare.$sb.$lang")
		bp99=$(pct 99 "$SVC_TMP/bare.$sb.$lang")
		sp50=$(pct 50 "$SVC_TMP/svc.$sb.$lang")
		sp99=$(pct 99 "$SVC_TMP/svc.$sb.$lang")
		add=$(echo "$sp50 - $bp50" | bc -l)
		own=$(pct 50 "$SVC_TMP/svc.$sb.$lang.svc")
		ok=$(echo "$add <= $target" | bc -l)
		[ "$ok" = 1 ] && verdict=ok || { verdict=MISSED; status=1; }
		rows+=("$(printf '%-7s %-7s %9s %9s %10s %10s %+10.1f %9s %9s  %s' "$sb" "$lang" "$bp50" "$bp99" \
			"$sp50" "$sp99" "$add" "$own" "+$target" "$verdict")")
		read -r btp tp < <(throughput "$lang" "$SVC_TMP/$lang.json")
		ratio=$(echo "100 * $tp / $btp" | bc -l)
		[ "$(echo "$ratio >= 70" | bc -l)" = 1 ] && verdict=ok || { verdict=MISSED; status=1; }
		tprows+=("$(printf '%-7s %-7s %10.1f %10.1f %8.0f%% %9s  %s' "$sb" "$lang" "$btp" "$tp" "$ratio" ">=70%" "$verdict")")
	done
	svc_stop "$SVC_WORKER_PID"
done

echo
echo "latency of execute_with_expected, ms (N=$N requests, one every ${SETTLE}s, each after one bare run of the same commands;"
echo "http+pg = p50 of the request's time minus the worker's grading time: HTTP, validation, queue, NOTIFY)"
printf '%-7s %-7s %9s %9s %10s %10s %10s %9s %9s  %s\n' backend lang "bare p50" "bare p99" "judge p50" \
	"judge p99" "added p50" "http+pg" target verdict
printf '%s\n' "${rows[@]}"
echo
echo "throughput, submissions per second (M=$M in $ROUNDS alternating rounds; judge: $((2 * CORES)) clients, default worker_slots; bare: $CORES processes)"
printf '%-7s %-7s %10s %10s %9s %9s  %s\n' backend lang "bare/s" "judge/s" ratio target verdict
printf '%s\n' "${tprows[@]}"
exit $status
