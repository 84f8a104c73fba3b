#!/usr/bin/env bash
# bench/session_memory.sh BIN: pause and resume of an idle gVisor Python session
# holding MB (100) MB of random bytes in memory (issue 26), ROUNDS (5) rounds on
# a real service (tests/svc.sh), as the client sees them (HTTP round trips):
# pause p50 (target <= 1 s), the image's stored (compressed) bytes against the
# session's resident memory (target <= 1.2 x), resume p50 and the first cell
# after it, and a call on the paused session to its first result (resume
# included; target p50 <= 300 ms). Part of `make bench-sessions`; skipped
# without runsc.
cd "$(dirname "$0")/../.." || exit 1
export JUDGE=${1:-bin/judge}
source tests/lib.sh
source tests/svc.sh
ROUNDS=${ROUNDS:-5}
MB=${MB:-100}
if ! runsc --version >/dev/null 2>&1; then
	skip "session memory bench" "runsc is not installed"
	finish
	exit 0
fi
svc_up memory-bench "[sandbox]" "sandbox = gvisor" "session_pool = 1" "[worker]" "worker_slots = 1" \
	"[sessions]" "session_images_mb_per_key = 4096" "session_memory_mb = $((MB * 3 + 256))"

ms() { echo $(($(date +%s%N) / 1000000)); }
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for f in pause resume first implicit ratio; do : >"$SVC_TMP/$f"; done
for r in $(seq "$ROUNDS"); do
	S=$(req POST /v1/sessions '{"language": "python"}' | head -1 | jq -r .id)
	out=$(req POST "/v1/sessions/$S/execute" "{\"code\": \"import os\\nb = os.urandom($MB << 20)\\nlen(b)\"}" | head -1)
	rss_kb=$(jq -r .session_memory_kb <<<"$out")
	t0=$(ms)
	P=$(req POST "/v1/sessions/$S/pause" | head -1)
	t1=$(ms)
	R=$(req POST "/v1/sessions/$S/resume" | head -1)
	t2=$(ms)
	C=$(req POST "/v1/sessions/$S/execute" '{"code": "len(b)"}' | head -1)
	t3=$(ms)
	req POST "/v1/sessions/$S/pause" >/dev/null
	t4=$(ms)
	I=$(req POST "/v1/sessions/$S/execute" '{"code": "len(b)"}' | head -1)
	t5=$(ms)
	stored=$(jq -r .stored <<<"$P")
	ratio=$(awk -v s="$stored" -v k="$rss_kb" 'BEGIN {printf "%.2f", s / (k * 1024)}')
	echo $((t1 - t0)) >>"$SVC_TMP/pause"
	echo $((t2 - t1)) >>"$SVC_TMP/resume"
	echo $((t3 - t2)) >>"$SVC_TMP/first"
	echo $((t5 - t4)) >>"$SVC_TMP/implicit"
	echo "$ratio" >>"$SVC_TMP/ratio"
	echo "round $r: pause $((t1 - t0)) ms (memory $(jq -r .memory <<<"$P"), $((stored >> 20)) MiB stored," \
		"resident $((rss_kb >> 10)) MiB, x$ratio), resume $((t2 - t1)) ms (restarted $(jq -r .restarted <<<"$R")," \
		"first cell $((t3 - t2)) ms, $(jq -r .result <<<"$C")), a cell on the paused session $((t5 - t4)) ms" \
		"($(jq -r '"\(.result), restarted \(.restarted)"' <<<"$I"))"
	req DELETE "/v1/sessions/$S" >/dev/null
done
p=$(median <"$SVC_TMP/pause")
s=$(median <"$SVC_TMP/resume")
f=$(median <"$SVC_TMP/first")
i=$(median <"$SVC_TMP/implicit")
x=$(median <"$SVC_TMP/ratio")
echo "gvisor memory, median of $ROUNDS, $MB MB in memory: pause $p ms (target <= 1000)," \
	"image / resident x$x (target <= 1.2), resume $s ms + first cell $f ms," \
	"a cell on a paused session to its result $i ms (target <= 300)"
grep -hoE "(pause image|restored with its memory).*" "$SVC_TMP/worker.log" | tail -4 | sed 's/^/  worker: /'
[ "$p" -le 1000 ] && pass "pause p50 <= 1 s" || fail "pause p50 <= 1 s" "$p ms"
awk -v x="$x" 'BEGIN {exit !(x <= 1.2)}' && pass "image <= 1.2 x resident" || fail "image <= 1.2 x resident" "x$x"
[ "$i" -le 300 ] && pass "resume to first result p50 <= 300 ms" || fail "resume to first result p50 <= 300 ms" "$i ms"
finish
