#!/usr/bin/env bash
# bench/e2b.sh BIN: `make bench-e2b`, issue 23's numbers through E2B's own SDK
# (@e2b/code-interpreter from npm, unmodified) against a service of
# tests/svc.sh, on each backend of BACKENDS (default "native gvisor"):
# create -> first runCode result, runCode('x = 1'), commands.run('true') (on a
# settled sandbox, and again right after each create), with
# a held-open bare python3 running the same cell and a bare `bash -c true`
# measured in the same run as the baselines (bench/e2b.mjs). Numbers, not a
# test: it asserts nothing about time (docs/benchmarks.md). N rounds (20).
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
source tests/svc.sh
NODE=/opt/judge/runtimes/node22/bin/node
[ -x "$NODE" ] || NODE=$(command -v node)
PY=/opt/judge/runtimes/python3.12/bin/python3.12
[ -x "$PY" ] || PY=python3
NP=${E2B_SDK_DIR:-$SVC_TMP/npm}
mkdir -p "$NP"
[ -d "$NP/node_modules/@e2b/code-interpreter" ] ||
	(cd "$NP" && npm install --no-audit --no-fund --silent @e2b/code-interpreter@^2 >"$NP/install.log" 2>&1) ||
	{ fail "npm install @e2b/code-interpreter@^2" "$(tail -3 "$NP/install.log")"; finish; exit 1; }
cp tests/bench/e2b.mjs "$NP/"
svc_prepare
printf '%-8s %-26s %8s %8s   %s\n' backend what p50_ms p90_ms baseline
for b in ${BACKENDS:-native gvisor}; do
	if [ "$b" = gvisor ] && ! runsc --version >/dev/null 2>&1; then
		skip "gvisor" "runsc is not installed"
		continue
	fi
	# changed from judge.ini (svc.sh): the backend under test; the rest as shipped
	svc_config "$ini" "listen = 127.0.0.1:$PORT" "auth = on" "[sandbox]" "sandbox = $b"
	KEY=$("$JUDGE" --config "$ini" keys create --name "bench-e2b-$b" 2>/dev/null)
	svc_serve "$ini" || { fail "serve starts"; continue; }
	svc_worker "$ini" || { fail "worker starts"; svc_stop "$SVC_SERVE_PID"; continue; }
	sleep 3 # the session pool fills before the clock starts
	OUT=$(cd "$NP" && E2B_API_URL=$U E2B_SANDBOX_URL=$U E2B_API_KEY=$KEY PY=$PY N=${N:-20} \
		timeout 900 "$NODE" e2b.mjs 2>"$SVC_TMP/bench-$b.err")
	svc_stop "$SVC_WORKER_PID"
	svc_stop "$SVC_SERVE_PID"
	mv "$SVC_TMP/worker.log" "$SVC_TMP/worker-$b.log"
	if ! jq -e . >/dev/null 2>&1 <<<"$OUT"; then
		fail "$b: the bench ran" "$(tail -c 400 "$SVC_TMP/bench-$b.err")"
		continue
	fi
	pass "$b: the bench ran"
	row() { printf '%-8s %-26s %8s %8s   %s\n' "$b" "$1" "$(jq ".$2.p50" <<<"$OUT")" "$(jq ".$2.p90" <<<"$OUT")" "$3"; }
	row "create -> first result" create_to_first_result_ms \
		"$(grep -c "ready in .* from the pool" "$SVC_TMP/worker-$b.log") of $(grep -c "sessions: .* ready in" "$SVC_TMP/worker-$b.log") sessions from the pool"
	row "runCode('x = 1')" run_code_ms "bare cell p50 $(jq .bare_cell_ms.p50 <<<"$OUT") ms"
	row "commands.run('true')" commands_run_ms "bare bash -c true p50 $(jq .bare_command_ms.p50 <<<"$OUT") ms"
	row "runCode, after a create" run_code_after_create_ms "the pool refilling"
	row "commands.run, after a create" commands_run_after_create_ms "the pool refilling"
done
finish
