#!/usr/bin/env bash
# first_use.sh: what a new user does first, on judge.ini as shipped (issue 22's
# defects, each checked here the way it showed):
#   1. the service as `make run` starts it (judge up, state_dir = var relative):
#      session installs (npm from the real registry, pip from a local index),
#      a session's own folder listed with dir=. or no dir, keys created while
#      it runs and used at once, a revoked key refused;
#   2. `judge run`, `judge eval` and `judge languages` of this checkout's binary
#      started in another folder, with no judge.ini there;
#   3. a session after a fork bomb, native and gVisor alike: the next cell
#      answers for itself (state kept if the driver survived, else restarted).
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
source tests/svc.sh
ABS_JUDGE=$(cd "$(dirname "$JUDGE")" && pwd)/$(basename "$JUDGE")

# ---- 1. the service as make run starts it ----
# PyPI cannot be reached from here: pip reads a local PEP 503 index (wheels
# built by pep503.py); npm reads the real registry, as shipped
svc_index tinypkg==1.0
# judge.ini as shipped but for listen (a free port: suites run side by side,
# and a `make run` may hold 8080) and pip_index_url (the local index)
W=$SVC_TMP/checkout
if ! svc_make_run "$W" "listen = 127.0.0.1:$(svc_port)" "pip_index_url = ${INDEX:-http://127.0.0.1:9/simple/}"; then
	fail "judge up --config judge.ini (as make run)"
	finish
	exit 1
fi
grep -qx 'state_dir = var' "$W/judge.ini" && pass "state_dir is judge.ini's relative 'var'" ||
	fail "state_dir as shipped" "$(grep state_dir "$W/judge.ini")"
AUTH=(-H "Authorization: Bearer $KEY")
JSON=(-H "Content-Type: application/json")
# in DIR: the CLI as a user of the checkout runs it
inw() { (cd "$W" && bin/judge "$@"); }

# keys: each made while serve runs is used at once (serve learns of it through
# PostgreSQL, not a timer). Meanwhile another client keeps sending a key that
# does not exist, as a busy service sees: under the old rule each such miss
# made serve read the keys, and then no unknown key read them again for a
# second, so a key used within that second of its creation was refused
MADEUP=jk_$(printf '%040d' 0)
(while :; do curl -s -o /dev/null -H "Authorization: Bearer $MADEUP" "$U/v1/languages"; sleep 0.05; done) &
FLOOD=$!
SVC_PIDS+=("$FLOOD")
ok=0 why=
for i in $(seq 10); do
	k=$(inw keys create --name "fresh-$i" 2>/dev/null)
	last_fresh=$k
	code=$(curl -s -o "$SVC_TMP/fresh.out" -w '%{http_code}' -H "Authorization: Bearer $k" "$U/v1/languages")
	[ "$code" = 200 ] && ok=$((ok + 1)) || why="key $i: $code $(cat "$SVC_TMP/fresh.out")"
done
[ $ok = 10 ] && pass "10 keys, each used the moment judge keys create returned it: all 200" ||
	fail "fresh keys work at once" "$ok of 10; $why"
# the same with the key added straight to the table (as another host's keys
# create would), by one psql kept open: the use follows the commit within ms
coproc PSQL { "$SVC_PG_BIN/psql" -h "$W/var/pg/run" -p 5432 -U judge -d judge -Atq 2>&1; }
SVC_PIDS+=("$PSQL_PID")
ok=0 why=
for i in $(seq 10); do
	k=jk_$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')
	h=$(printf %s "$k" | sha256sum | cut -d' ' -f1)
	echo "INSERT INTO api_keys (name, hash) VALUES ('sql-$i', '$h'); SELECT 'inserted';" >&"${PSQL[1]}"
	line=
	read -r -t 30 line <&"${PSQL[0]}"
	code=$(curl -s -o "$SVC_TMP/fresh.out" -w '%{http_code}' -H "Authorization: Bearer $k" "$U/v1/languages")
	[ "$line" = inserted ] && [ "$code" = 200 ] && ok=$((ok + 1)) || why="key $i: $line $code $(cat "$SVC_TMP/fresh.out")"
done
eval "exec ${PSQL[1]}>&-"
[ $ok = 10 ] && pass "10 keys added to api_keys, each used right after its commit: all 200" ||
	fail "keys added to api_keys work at once" "$ok of 10; $why"
kill "$FLOOD" 2>/dev/null
kid=$(inw keys list | awk '$2 == "fresh-10" {print $1}')
inw keys revoke "$kid" >/dev/null
code=
for _ in $(seq 100); do
	code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $last_fresh" "$U/v1/languages")
	[ "$code" = 401 ] && break
	sleep 0.1
done
[ "$code" = 401 ] && pass "a revoked key is refused (401)" || fail "revoked key refused" "still $code"

# sessions: the shipped state_dir is relative; installs keep their cache under it
S=$(curl -s "${AUTH[@]}" "${JSON[@]}" "$U/v1/sessions" -d '{"language": "python"}' | jq -r .id)
expect "pip install on the shipped config (local index)" 200 \
	'.status == "ok" and .packages == ["tinypkg"]' POST "/v1/sessions/$S/install" \
	'{"manager": "pip", "packages": ["tinypkg"]}'
expect "the installed package imports" 200 '.status == "ok" and .result == "'"'hello from tinypkg 1.0'"'"' \
	POST "/v1/sessions/$S/execute" '{"code": "import tinypkg\ntinypkg.hello()"}'
[ -d "$W/var/install-cache" ] && pass "the install cache is under the shipped state_dir (var/install-cache)" ||
	fail "install cache under var/" "$(ls "$W/var")"
req PUT "/v1/sessions/$S/files/data/a.txt" x >/dev/null
for q in "?dir=." "" "?dir=./" "?dir=data/" "?dir=./data"; do
	want='"data"'
	[[ $q == *data* ]] && want='"a.txt"'
	expect "files$q lists the folder" 200 "[.files[].name] | index($want) != null" GET "/v1/sessions/$S/files$q"
done
for q in "?dir=.." "?dir=/etc" "?dir=data/../.." "?dir=a//b"; do
	bad "files$q" 400 bad_path GET "/v1/sessions/$S/files$q"
done
N=$(curl -s "${AUTH[@]}" "${JSON[@]}" "$U/v1/sessions" -d '{"language": "node"}' | jq -r .id)
expect "npm install on the shipped config (the real registry)" 200 \
	'.status == "ok" and .packages == ["is-number"]' POST "/v1/sessions/$N/install" \
	'{"manager": "npm", "packages": ["is-number"]}'
expect "the installed npm package loads" 200 '.status == "ok" and .result == "true"' \
	POST "/v1/sessions/$N/execute" '{"code": "require(\"is-number\")(\"42\")"}'
svc_log_clean "$W/up.err"
svc_stop "$UP_PID"

# ---- 2. the checkout's judge from another folder ----
E=$SVC_TMP/elsewhere
mkdir -p "$E"
printf 'a, b = map(int, input().split())\nprint(a + b)\n' >"$E/sum.py"
printf '{"task_id": "D/0", "prompt": "def f(x):\\n", "entry_point": "f", "test": "def check(c):\\n    assert c(1) == 2\\n"}\n' >"$E/p.jsonl"
printf '%s\n' '{"task_id": "D/0", "completion": "    return x + 1\n"}' '{"task_id": "D/0", "completion": "    return x\n"}' >"$E/s.jsonl"
ine() { (cd "$E" && timeout 300 "$ABS_JUDGE" "$@"); }
# (jq -n 'input | ...': an empty output fails; plain jq -e passes on no input)
printf '2 3\n' >"$E/in"
out=$(ine run --sandbox native --stdin in sum.py 2>"$SVC_TMP/run.err")
jq -en 'input | .status == "completed" and .stdout == "5\n"' <<<"$out" >/dev/null 2>&1 &&
	pass "judge run from another folder (native): its languages and ns_init found" ||
	fail "judge run from another folder (native)" "$(head -c 400 <<<"$out") $(tail -3 "$SVC_TMP/run.err")"
out=$(ine run --problem sum sum.py 2>"$SVC_TMP/run.err")
jq -en 'input | .status == "accepted" and (.tests | length) > 2' <<<"$out" >/dev/null 2>&1 &&
	pass "judge run --problem ID from another folder: its problems found" ||
	fail "judge run --problem sum from another folder" "$(head -c 400 <<<"$out") $(tail -3 "$SVC_TMP/run.err")"
out=$(ine eval --problems p.jsonl --samples s.jsonl --k 1 --sandbox native 2>"$SVC_TMP/eval.err")
jq -en 'input | ."1" == 0.5' <<<"$out" >/dev/null 2>&1 && [ -f "$E/s.jsonl_results.jsonl" ] &&
	pass "judge eval from another folder: pass@1 0.5 and the results file beside the samples" ||
	fail "judge eval from another folder" "$out $(tail -3 "$SVC_TMP/eval.err")"
if command -v runsc >/dev/null; then
	out=$(ine run --sandbox gvisor --stdin in sum.py 2>"$SVC_TMP/run.err")
	jq -en 'input | .status == "completed" and .stdout == "5\n"' <<<"$out" >/dev/null 2>&1 &&
		pass "judge run from another folder (gvisor): box_init found" ||
		fail "judge run from another folder (gvisor)" "$(head -c 400 <<<"$out") $(tail -3 "$SVC_TMP/run.err")"
else
	skip "judge run from another folder (gvisor)" "gVisor does not run here"
fi
[ ! -e "$E/var" ] && pass "nothing written to the other folder's var/ (state is the checkout's)" ||
	fail "state in the other folder" "$(ls "$E")"

# ---- 3. a fork bomb in a session, native and gVisor ----
# sandbox: the backend under test (native first; the defect was native's);
# worker_slots = 1: one sandbox at a time is all these checks need
svc_up first-use "[sandbox]" "sandbox = native" "[worker]" "worker_slots = 1"
bomb() { # BACKEND
	local b=$1 S
	S=$(curl -s "${AUTH[@]}" "${JSON[@]}" "$U/v1/sessions" -d '{"language": "python"}' | jq -r .id)
	expect "$b: a cell sets x" 200 '.status == "ok"' POST "/v1/sessions/$S/execute" '{"code": "x = 41"}'
	# a forked copy of the driver gets the cell's SIGINT too: it must not answer
	expect "$b: a cell whose fork sleeps times out" 200 '.status == "timeout"' \
		POST "/v1/sessions/$S/execute" '{"code": "import os, time\nif os.fork() == 0:\n    time.sleep(100)\ntime.sleep(100)", "timeout_ms": 1000}'
	expect "$b: the next cell answers for itself, with its state" 200 \
		'.status == "ok" and .stdout == "alive 41\n" and .restarted == false' \
		POST "/v1/sessions/$S/execute" '{"code": "print(\"alive\", x)"}'
	# a cell that times out ends what it started in the driver's group, even
	# what ignores SIGINT; what a finished cell started runs on
	expect "$b: a background process of a finished cell (it ignores SIGINT)" 200 '.status == "ok"' \
		POST "/v1/sessions/$S/execute" "$(jq -n '{code: $c}' --arg c 'import signal, subprocess, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
bg = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
signal.signal(signal.SIGINT, signal.default_int_handler)')"
	expect "$b: a cell whose fork ignores SIGINT times out, the driver answers" 200 \
		'.status == "timeout" and .restarted == false' \
		POST "/v1/sessions/$S/execute" "$(jq -n '{code: $c, timeout_ms: 1000}' --arg c 'import os, signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
if os.fork() == 0:
    time.sleep(300)
    os._exit(0)
signal.signal(signal.SIGINT, signal.default_int_handler)
time.sleep(100)')"
	expect "$b: the timed-out cell's fork is ended, the finished cell's process runs on" 200 \
		'.status == "ok" and .stdout == "True [true]\n"' \
		POST "/v1/sessions/$S/execute" "$(jq -n '{code: $c}' --arg c 'import os
me, g, left = os.getpid(), os.getpgid(0), []
for p in os.listdir("/proc"):
    try:
        if p.isdigit() and int(p) != me and os.getpgid(int(p)) == g and open(f"/proc/{p}/stat").read().split()[2] != "Z":
            left.append(int(p) == bg.pid)
    except OSError:
        pass
print(bg.poll() is None, str(left).lower())
bg.kill()
_ = bg.wait()')"
	local bomb='{"code": "import os\nwhile True:\n    try: os.fork()\n    except OSError: pass", "timeout_ms": 3000}'
	if [ "$b" = gvisor ]; then
		# the session's CPU quota holds its whole sandbox, gVisor's kernel
		# included: on a busy host, the bomb's processes under ptrace can keep
		# sessd from ending them within serve's wait (the cell's 3 s + 15 s).
		# Then serve answers 504 "timeout" and the call ends later, as it says
		local out st
		out=$(req POST "/v1/sessions/$S/execute" "$bomb")
		st=${out##*$'\n'} LAST=${out%$'\n'*}
		if [ "$st" = 200 ] && jq -e '.status == "timeout"' <<<"$LAST" >/dev/null; then
			pass "$b: a fork bomb cell times out"
		elif [ "$st" = 200 ] && jq -e '.status == "memory_limit" and .restarted' <<<"$LAST" >/dev/null; then
			# under gVisor every forked copy of Python counts in the sandbox's
			# memory: at load the bomb can fill it before its 3 s are up; the
			# session then starts over (said), and the cells below check it
			pass "$b: a fork bomb cell ends at a limit (memory_limit first, restarted)"
		elif [ "$st" = 504 ] && jq -e '.error.code == "timeout"' <<<"$LAST" >/dev/null; then
			pass "$b: a fork bomb cell times out (504: serve's wait ended first)"
		else
			fail "$b: a fork bomb cell times out" "status $st: $(head -c 400 <<<"$LAST")"
		fi
	else
		expect "$b: a fork bomb cell times out" 200 '.status == "timeout"' POST "/v1/sessions/$S/execute" "$bomb"
	fi
	local restarted=$(jq -r .restarted <<<"$LAST")
	for i in 1 2; do
		expect "$b: after the fork bomb, cell $i answers for itself (bomb restarted: $restarted)" 200 \
			'.status == "ok" and .stdout == "alive\n" and .error == null' \
			POST "/v1/sessions/$S/execute" '{"code": "print(\"alive\")"}'
	done
	# the bomb's children born after its SIGINT never got it: they are ended
	# with the cell (sessd's sweep), or would fork on and fill the memory.
	# Zombies are not counted: a driver that answered keeps its own ended
	# children unreaped (Python reaps no os.fork child), and they fork no more
	expect "$b: no process of the bomb is left in the driver's group" 200 '.status == "ok" and .stdout == "0\n"' \
		POST "/v1/sessions/$S/execute" "$(jq -n '{code: $c}' --arg c 'import os
me, g, n = os.getpid(), os.getpgid(0), 0
for p in os.listdir("/proc"):
    try:
        n += p.isdigit() and int(p) != me and os.getpgid(int(p)) == g and open(f"/proc/{p}/stat").read().split()[2] != "Z"
    except OSError:
        pass
print(n)')"
	if [ "$restarted" = false ]; then
		expect "$b: the state survived the fork bomb" 200 '.status == "ok" and .result == "42"' \
			POST "/v1/sessions/$S/execute" '{"code": "x + 1"}'
	else
		expect "$b: restarted after the fork bomb: a fresh state" 200 '.status == "error" and .error.name == "NameError"' \
			POST "/v1/sessions/$S/execute" '{"code": "x + 1"}'
	fi
	# a driver killed by SIGKILL (the OOM killer, a limit) takes its group
	# along: what it started would outlive it otherwise, as a bomb's children
	expect "$b: a cell whose driver is killed by SIGKILL ends in error" 200 '.status == "error"' \
		POST "/v1/sessions/$S/execute" "$(jq -n '{code: $c}' --arg c 'import os, signal, subprocess
subprocess.Popen(["sleep", "301"])
os.kill(os.getpid(), signal.SIGKILL)')"
	expect "$b: nothing the killed driver started is left" 200 '.status == "ok" and .stdout == "0\n"' \
		POST "/v1/sessions/$S/execute" "$(jq -n '{code: $c}' --arg c 'import os
n = 0
for p in os.listdir("/proc"):
    try:
        n += p.isdigit() and b"301" in open(f"/proc/{p}/cmdline", "rb").read() and open(f"/proc/{p}/stat").read().split()[2] != "Z"
    except OSError:
        pass
print(n)')"
	req DELETE "/v1/sessions/$S" >/dev/null
}
bomb native
if command -v runsc >/dev/null; then
	svc_stop "$SVC_WORKER_PID"
	sed 's/^sandbox = native/sandbox = gvisor/' "$ini" >"$SVC_TMP/gvisor.ini"
	svc_worker "$SVC_TMP/gvisor.ini" || fail "gvisor worker starts"
	bomb gvisor
else
	skip "gvisor fork bomb" "runsc is missing"
fi
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/worker.log"
finish
