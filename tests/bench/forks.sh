#!/usr/bin/env bash
# tests/bench/forks.sh: what a run forked from a started interpreter costs against a
# fresh start, where the judge does not fork yet or cannot gain more (docs/warm-start.md,
# "Node" and "gVisor's floor"). Not the judge: the interpreters alone, in one run.
#   node, natively: N hellos fresh (`node main.js`) against N forked from a started
#     node (forks/node_zygote.js with forks/node_fork.c, built here), CPU of the whole
#     process tree per run; a CPU loop fresh against forked with and without V8's
#     background compiles (the platform's threads do not survive a fork); Math.random
#     in 3 children without and with the re-seed.
#   under gVisor (`runsc do`, ptrace as the judge runs it), the machine's CPU per run
#     (/proc/stat: keep the machine otherwise idle), a sandbox's own start (`runsc do
#     true`) subtracted: node hellos fresh against forked (the started node's start
#     included); fork + _exit and fork + hello from a Python holding the zygote's
#     modules (forks/python_fork.py) against fresh `python3 main.py`.
# Env: N (default 200).
cd "$(dirname "$0")" || exit 1
N=${N:-200}
NODE=/opt/judge/runtimes/node22/bin/node
PY=/opt/judge/runtimes/python3.12/bin/python3.12
TMP=$(mktemp -d /tmp/judge-forks.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
gcc -O2 -Wall -shared -fPIC -o "$TMP/node_fork.node" forks/node_fork.c || exit 1
echo 'console.log("hello");' >"$TMP/main.js"
echo 'print("hello")' >"$TMP/main.py"
echo 'let s = 0; const f = (x) => (x * x) % 7; for (let k = 0; k < 1e8; k++) s += f(k); console.log(s);' >"$TMP/loop.js"
# CPU (user + system) of a command's process tree, ms: what a subshell's children
# used (bash's times, second line: "0m1.234s 0m0.056s")
tree_ms() {
	(
		"$@" >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err" >&2; exit 1; }
		times >"$TMP/times"
	) || return 1
	tail -n 1 "$TMP/times" | awk '{ for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); ms += (t[1] * 60 + t[2]) * 1000 } }
		END { printf "%.0f", ms }'
}
machine_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
machine_ms() { local a b; a=$(machine_ticks); "$@" >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err" >&2; return 1; }; b=$(machine_ticks); echo $(((b - a) * 1000 / $(getconf CLK_TCK))); }
per() { awk -v t="$1" -v n="$2" 'BEGIN {printf "%.1f", t / n}'; }

echo "node, natively (N=$N):"
fresh=$(tree_ms sh -c "for i in \$(seq $N); do $NODE $TMP/main.js; done") || exit 1
forked=$(tree_ms "$NODE" forks/node_zygote.js "$TMP/node_fork.node" hello "$N") || exit 1
[ "$(grep -c '^hello$' "$TMP/out")" = "$N" ] || { echo "forked hellos: $(grep -c '^hello$' "$TMP/out") of $N" >&2; exit 1; }
echo "  hello, CPU per run: fresh $(per "$fresh" "$N") ms, forked $(per "$forked" "$N") ms (the started node's own start included)"
FLAGS="--no-concurrent-recompilation --no-concurrent-osr --single-threaded-gc"
l_fresh=$(tree_ms "$NODE" "$TMP/loop.js") || exit 1
l_flags=$(tree_ms "$NODE" $FLAGS "$TMP/loop.js") || exit 1
"$NODE" $FLAGS forks/node_zygote.js "$TMP/node_fork.node" loop 1 >"$TMP/o1" 2>/dev/null || exit 1
"$NODE" forks/node_zygote.js "$TMP/node_fork.node" loop 1 >"$TMP/o2" 2>/dev/null || exit 1
echo "  CPU loop (1e8 calls), ms: fresh $l_fresh; fresh with $FLAGS $l_flags;" \
	"forked with them $(cut -d' ' -f1 "$TMP/o1"); forked without them $(cut -d' ' -f1 "$TMP/o2")"
same=$("$NODE" forks/node_zygote.js "$TMP/node_fork.node" same-random 3 2>/dev/null | sort -u | wc -l)
reseeded=$("$NODE" forks/node_zygote.js "$TMP/node_fork.node" random 3 2>/dev/null | sort -u | wc -l)
echo "  Math.random in 3 children: $same distinct without the re-seed, $reseeded with it"

echo "under gVisor (runsc do, ptrace; N=$N), machine CPU per run, a sandbox's start subtracted:"
RUNSC=(runsc --platform=ptrace --network=none --ignore-cgroups do)
cp forks/python_fork.py forks/node_zygote.js "$TMP/"
chmod -R a+rX "$TMP"
base=$(machine_ms "${RUNSC[@]}" true) || exit 1
fresh=$(machine_ms "${RUNSC[@]}" sh -c "for i in \$(seq $N); do $NODE $TMP/main.js; done") || exit 1
forked=$(machine_ms "${RUNSC[@]}" "$NODE" $FLAGS "$TMP/node_zygote.js" "$TMP/node_fork.node" hello "$N") || exit 1
[ "$(grep -c '^hello$' "$TMP/out")" = "$N" ] || { echo "forked hellos under gVisor: $(grep -c '^hello$' "$TMP/out") of $N" >&2; exit 1; }
echo "  node hello: fresh $(per $((fresh - base)) "$N") ms, forked $(per $((forked - base)) "$N") ms (a sandbox's start: $base ms)"
fresh=$(machine_ms "${RUNSC[@]}" sh -c "for i in \$(seq $N); do $PY $TMP/main.py; done") || exit 1
fexit=$(machine_ms "${RUNSC[@]}" "$PY" "$TMP/python_fork.py" "$N" exit) || exit 1
fhello=$(machine_ms "${RUNSC[@]}" "$PY" "$TMP/python_fork.py" "$N" hello) || exit 1
echo "  python: fresh python3 main.py $(per $((fresh - base)) "$N") ms; fork + _exit" \
	"$(per $((fexit - base)) "$N") ms; fork + hello $(per $((fhello - base)) "$N") ms"
