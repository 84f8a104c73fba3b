#!/usr/bin/env bash
# bench/service.sh BIN: latency and throughput of the whole service (HTTP + PostgreSQL +
# worker + sandbox) against bare execution of the same programs, in the same run.
#   latency: p50/p99 of N sequential POST /v1/execute_with_expected (one keep-alive
#            client), Python and C hello world, vs the bare commands the language files
#            run (C: gcc with the same flags, then the program; Python: python3.12 main.py).
#   throughput: M execute_with_expected requests from 2 x cores concurrent clients with the
#            default worker_slots, vs M bare runs with as many processes as cores.
# Targets (issue 4): native p50 <= bare + 15 ms; gvisor p50 <= bare + 80 ms;
# throughput >= 70% of bare. Env: N (default 30), M (default 60), BACKENDS ("native gvisor").
cd "$(dirname "$0")/../.." || exit 1
export JUDGE=${1:-bin/judge}
source tests/lib.sh
source tests/svc.sh
N=${N:-30}
M=${M:-60}
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

# bare_latency LANG OUT: N timed bare runs, ms per line
bare_latency() {
	local t0 t1 i
	for i in 1 2 3; do bare_one "$1" "$W"; done
	: >"$2"
	for i in $(seq "$N"); do
		t0=$EPOCHREALTIME
		bare_one "$1" "$W"
		t1=$EPOCHREALTIME
		echo "($t1 - $t0) * 1000" | bc -l >>"$2"
	done
}

# bare_throughput LANG: runs per second of M bare runs, CORES at a time
bare_throughput() {
	local i t0 t1
	for i in $(seq "$CORES"); do mkdir -p "$W/p$i"; cp "$W/main.py" "$W/main.c" "$W/p$i/"; done
	t0=$EPOCHREALTIME
	seq "$M" | xargs -P "$CORES" -I{} bash -c 'bare_one '"$1"' "'"$W"'/p$(( {} % '"$CORES"' + 1 ))"'
	t1=$EPOCHREALTIME
	echo "$M / ($t1 - $t0)" | bc -l
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

# svc_latency BODY OUT: N sequential requests on one connection, ms per line
svc_latency() {
	curl_cfg 3 "$1" >"$SVC_TMP/warm.cfg"
	curl -s -K "$SVC_TMP/warm.cfg" >/dev/null
	rm -rf "$SVC_TMP/ans"
	SAVE=1 curl_cfg "$N" "$1" >"$SVC_TMP/lat.cfg"
	curl -s -K "$SVC_TMP/lat.cfg" >"$SVC_TMP/lat.out"
	if grep -qv '^200 ' "$SVC_TMP/lat.out"; then
		echo "warning: not every request answered 200:" >&2
		grep -v '^200 ' "$SVC_TMP/lat.out" | sort | uniq -c >&2
	fi
	awk '{printf "%.3f\n", $2 * 1000}' "$SVC_TMP/lat.out" >"$2"
	# the service's own share: total minus the worker's grading time (finished - started)
	local i id grade total
	: >"$2.svc"
	for i in $(seq "$N"); do
		id=$(jq -r .id "$SVC_TMP/ans/$i" 2>/dev/null) || continue
		grade=$(curl -s -H "Authorization: Bearer $KEY" "$U/v1/submissions/$id" |
			jq -r '.finished_ms - .started_ms')
		total=$(sed -n "${i}p" "$2")
		echo "$total - $grade" | bc -l >>"$2.svc"
	done
}

# svc_throughput BODY: requests per second of M requests, 2 x CORES at a time
svc_throughput() {
	local t0 t1
	curl_cfg "$M" "$1" >"$SVC_TMP/tp.cfg"
	t0=$EPOCHREALTIME
	curl -s --parallel --parallel-max $((2 * CORES)) -K "$SVC_TMP/tp.cfg" >"$SVC_TMP/tp.out" 2>/dev/null
	t1=$EPOCHREALTIME
	local ok
	ok=$(grep -c '^200 ' "$SVC_TMP/tp.out")
	[ "$ok" = "$M" ] || echo "warning: $ok of $M requests answered 200" >&2
	echo "$ok / ($t1 - $t0)" | bc -l
}


svc_pg_start || exit 1
PORT=$(svc_port)
U=http://127.0.0.1:$PORT
svc_config "$SVC_TMP/judge.ini" "listen = 127.0.0.1:$PORT" "rate_limit_per_min = 0" "max_in_flight = 0"
"$JUDGE" --config "$SVC_TMP/judge.ini" migrate >/dev/null 2>&1 || { echo "migrate failed"; exit 1; }
KEY=$("$JUDGE" --config "$SVC_TMP/judge.ini" keys create --name bench 2>/dev/null)
svc_serve "$SVC_TMP/judge.ini" || exit 1

echo "measuring bare execution (N=$N, M=$M, $CORES cores) ..." >&2
bare_latency python "$SVC_TMP/bare.python"
bare_latency c "$SVC_TMP/bare.c"
BTP_python=$(bare_throughput python)
BTP_c=$(bare_throughput c)

rows=()
tprows=()
status=0
for sb in $BACKENDS; do
	{ cat "$SVC_TMP/judge.ini"; printf '[sandbox]\nsandbox = %s\n' "$sb"; } >"$SVC_TMP/$sb.ini"
	svc_worker "$SVC_TMP/$sb.ini" || { echo "worker ($sb) did not start" >&2; status=1; continue; }
	[ "$sb" = gvisor ] && target=80 || target=15
	for lang in python c; do
		echo "measuring $sb $lang ..." >&2
		svc_latency "$SVC_TMP/$lang.json" "$SVC_TMP/svc.$sb.$lang"
		bp50=$(pct 50 "$SVC_TMP/bare.$lang")
		bp99=$(pct 99 "$SVC_TMP/bare.$lang")
		sp50=$(pct 50 "$SVC_TMP/svc.$sb.$lang")
		sp99=$(pct 99 "$SVC_TMP/svc.$sb.$lang")
		add=$(echo "$sp50 - $bp50" | bc -l)
		own=$(pct 50 "$SVC_TMP/svc.$sb.$lang.svc")
		ok=$(echo "$add <= $target" | bc -l)
		[ "$ok" = 1 ] && verdict=ok || { verdict=MISSED; status=1; }
		rows+=("$(printf '%-7s %-7s %9s %9s %10s %10s %+10.1f %9s %9s  %s' "$sb" "$lang" "$bp50" "$bp99" \
			"$sp50" "$sp99" "$add" "$own" "+$target" "$verdict")")
		tp=$(svc_throughput "$SVC_TMP/$lang.json")
		btp_var=BTP_$lang
		btp=${!btp_var}
		ratio=$(echo "100 * $tp / $btp" | bc -l)
		[ "$(echo "$ratio >= 70" | bc -l)" = 1 ] && verdict=ok || { verdict=MISSED; status=1; }
		tprows+=("$(printf '%-7s %-7s %10.1f %10.1f %8.0f%% %9s  %s' "$sb" "$lang" "$btp" "$tp" "$ratio" ">=70%" "$verdict")")
	done
	svc_stop "$SVC_WORKER_PID"
done

echo
echo "latency of execute_with_expected, ms (N=$N sequential requests; bare = same commands without judge;"
echo "http+pg = p50 of the request's time minus the worker's grading time: HTTP, validation, queue, NOTIFY)"
printf '%-7s %-7s %9s %9s %10s %10s %10s %9s %9s  %s\n' backend lang "bare p50" "bare p99" "judge p50" \
	"judge p99" "added p50" "http+pg" target verdict
printf '%s\n' "${rows[@]}"
echo
echo "throughput, submissions per second (M=$M; judge: $((2 * CORES)) clients, default worker_slots; bare: $CORES processes)"
printf '%-7s %-7s %10s %10s %9s %9s  %s\n' backend lang "bare/s" "judge/s" ratio target verdict
printf '%s\n' "${tprows[@]}"
exit $status
