#!/usr/bin/env bash
# session_pause.sh: pause and resume of a Python session holding ~100 MB of
# files against creating a fresh session, on one service (tests/svc.sh), each
# as the client sees it (HTTP round trip). ROUNDS (default 3) rounds; MB (100)
# the session's files, KIND random (incompressible: the worst case) or text.
# Prints the median of each and the ratio resume / create. Numbers, not a test:
# it asserts nothing about time (docs/benchmarks.md).
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
source tests/svc.sh
ROUNDS=${ROUNDS:-3}
MB=${MB:-100}
KIND=${KIND:-random}
svc_up pause-bench "[sandbox]" "sandbox = ${SESSIONS_SANDBOX:-native}" "[worker]" "worker_slots = 1" \
	"[sessions]" "session_images_mb_per_key = 4096" "max_session_disk_mb = 2048"

ms() { echo $(($(date +%s%N) / 1000000)); }
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
if [ "$KIND" = random ]; then
	FILL="import os\nfor i in range($MB):\n    open(f'data/f{i}.bin', 'wb').write(os.urandom(1 << 20))"
else
	FILL="import os\nline = ','.join(str(i) for i in range(200)) + '\\\\n'\nfor i in range($MB):\n    open(f'data/f{i}.csv', 'w').write(line * ((1 << 20) // len(line)))"
fi
: >"$SVC_TMP/create" >"$SVC_TMP/pause" >"$SVC_TMP/resume" >"$SVC_TMP/first"
for r in $(seq "$ROUNDS"); do
	t0=$(ms)
	S=$(req POST /v1/sessions '{"language": "python", "limits": {"disk_mb": '$((MB * 2 + 64))'}}' | head -1 | jq -r .id)
	t1=$(ms)
	echo $((t1 - t0)) >>"$SVC_TMP/create"
	req POST "/v1/sessions/$S/execute" "{\"code\": \"import os\\nos.makedirs('data', exist_ok=True)\\n$FILL\"}" >/dev/null
	t0=$(ms)
	P=$(req POST "/v1/sessions/$S/pause" | head -1)
	t1=$(ms)
	echo $((t1 - t0)) >>"$SVC_TMP/pause"
	R=$(req POST "/v1/sessions/$S/resume" | head -1)
	t2=$(ms)
	echo $((t2 - t1)) >>"$SVC_TMP/resume"
	req POST "/v1/sessions/$S/execute" '{"code": "1"}' >/dev/null
	t3=$(ms)
	echo $((t3 - t2)) >>"$SVC_TMP/first"
	echo "round $r: create $(tail -1 "$SVC_TMP/create") ms, pause $((t1 - t0)) ms" \
		"($(jq -r '"\(.size / 1048576 | floor) MiB, \(.stored / 1048576 | floor) MiB stored, \(.files) files"' <<<"$P")), " \
		"resume $((t2 - t1)) ms ($(jq -r .status <<<"$R")), first cell after it $((t3 - t2)) ms"
	req DELETE "/v1/sessions/$S" >/dev/null
done
c=$(median <"$SVC_TMP/create")
p=$(median <"$SVC_TMP/pause")
s=$(median <"$SVC_TMP/resume")
f=$(median <"$SVC_TMP/first")
echo "median of $ROUNDS, $MB MB $KIND files: create $c ms, pause $p ms, resume $s ms, first cell after resume $f ms;" \
	"resume / create = $(awk -v a="$s" -v b="$c" 'BEGIN {printf "%.1f", a / b}')"
# where the time went, as the worker logged it (pack, store; read and check, restore)
grep -hoE "(pause image|restored from image).*" "$SVC_TMP/worker.log" | sed 's/^/  worker: /'
