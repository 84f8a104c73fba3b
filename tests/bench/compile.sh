#!/usr/bin/env bash
# tests/bench/compile.sh [BIN]: the C# hello compile, warm against cold, in one run
# (issue 25: p50 <= 150 ms). A real service (PostgreSQL, serve, a worker with one
# native slot and warm_start = on) compiles through the warm server; `BIN run`
# (a one-shot command: always the cold path, a fresh csc in the sandbox) compiles
# the same source; the two alternate, N times each (default 15) after one warm-up
# of each. Prints the p50 and p90 of the compile step's CPU (the compiler's
# cgroup: csc's whole process tree, or what the server used meanwhile) and wall
# time as the result JSON reports them, and the ratios.
cd "$(dirname "$0")/../.." || exit 1
JUDGE=${1:-bin/judge}
N=${N:-15}
source tests/lib.sh
source tests/svc.sh
if [ ! -f /opt/judge/runtimes/dotnet9/compsrv/compile_server.sh ]; then
	echo "compile benchmark: SKIPPED: no C# compile server (make deps)" >&2
	exit 0
fi
svc_up bench-compile "max_wait_s = 120" "[sandbox]" "sandbox = native" "warm_start = on" \
	"[worker]" "worker_slots = 1" >/dev/null
src=$SVC_TMP/hello.cs
echo 'Console.WriteLine("hello");' >"$src"
body=$(jq -nc --rawfile s "$src" '{language: "csharp", source: $s}')
warm() { curl -s -m 200 "${AUTH[@]}" "${JSON[@]}" -d "$body" "$U/v1/execute"; }
cold() { "$JUDGE" --config "$ini" run --lang csharp --sandbox native "$src"; }
# one of each first: the server's start, and the file caches of the cold path
warm >/dev/null
cold >/dev/null
: >"$SVC_TMP/warm" >"$SVC_TMP/cold"
for _ in $(seq "$N"); do
	warm | jq -r 'select(.status == "completed") | "\(.compile.time_ms) \(.compile.wall_ms)"' >>"$SVC_TMP/warm"
	cold | jq -r 'select(.status == "completed") | "\(.compile.time_ms) \(.compile.wall_ms)"' >>"$SVC_TMP/cold"
done
python3 - "$SVC_TMP/warm" "$SVC_TMP/cold" "$N" <<'PY'
import sys
def load(p):
    rows = [tuple(map(int, l.split())) for l in open(p) if l.strip()]
    return [r[0] for r in rows], [r[1] for r in rows]
def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")
(wc, ww), (cc, cw) = load(sys.argv[1]), load(sys.argv[2])
n = int(sys.argv[3])
print(f"C# hello compile, {n} each, interleaved (ok: warm {len(wc)}, cold {len(cc)})")
print(f"{'path':6} {'cpu p50':>8} {'cpu p90':>8} {'wall p50':>9} {'wall p90':>9}  (ms)")
for name, c, w in (("warm", wc, ww), ("cold", cc, cw)):
    print(f"{name:6} {pct(c, .5):8} {pct(c, .9):8} {pct(w, .5):9} {pct(w, .9):9}")
if wc and cc:
    print(f"warm/cold: cpu p50 {pct(wc, .5) / max(1, pct(cc, .5)):.2f}, wall p50 {pct(ww, .5) / max(1, pct(cw, .5)):.2f}; "
          f"target: warm p50 <= 150 ms: {'met' if max(pct(wc, .5), pct(ww, .5)) <= 150 else 'NOT met'}")
if len(wc) < n or len(cc) < n:
    sys.exit(1)
PY
