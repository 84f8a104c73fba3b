#!/usr/bin/env bash
# sessions_govern.sh: a session is one bounded resource (issue 29, item 1),
# against a real service (tests/svc.sh), on each backend that works here
# (native, then gVisor; one that does not is reported skipped with why):
# - background processes a cell leaves running (Popen with start_new_session,
#   `&` in bash) are held to the session's CPU quota: their CPU use over a
#   window of the worker's own readings is at most the quota plus a margin
#   (a ratio, not a duration), and the kernel reports the throttling;
# - GET /v1/sessions/{id} shows what the session used (cpu_ms, memory_kb,
#   processes), background processes included;
# - a bash fork bomb is held by the pids limit and later cells still answer;
# - a session past its CPU budget is closed with the reason shown;
# - /metrics sums what sessions used: the CPU, throttled time and refused
#   forks counters grow by what the sessions above used, and the ended
#   sessions are counted by why (client, cpu_budget).
# SESSIONS_BACKENDS="native" (or "gvisor") runs one only.
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
source tests/svc.sh
BACKENDS=${SESSIONS_BACKENDS:-native gvisor}

# the smallest quota a request may ask: two loops want far more on any host,
# so the kernel holds them to it
QUOTA=0.1

svc_up sessions-govern "[sandbox]" "sandbox = native" "[worker]" "worker_slots = 1" \
	"[sessions]" "session_cpus = 1" "max_session_cpus = 2"

# create LANG LIMITS_JSON: a session's id into SID (empty on failure)
create() { svc_session "{\"language\": \"$1\", \"limits\": $2}"; }
run() { svc_run "$@"; }
cell() { svc_cell "$@"; }
# metric NAME: a sample of /metrics (0 when absent)
metric() {
	curl -s -m 10 "$U/metrics" | awk -v n="$1" '$1 == n { print $2; f = 1 } END { if (!f) print 0 }'
}
# usage SID: the session's usage object into USAGE ({} before the first reading)
usage() {
	USAGE=$(req GET "/v1/sessions/$1" | head -n -1 | jq -c '.usage // {}')
}
# usage_after SID MS: waits for a reading sampled after MS (epoch ms), into USAGE
usage_after() {
	for _ in $(seq 40); do
		usage "$1"
		[ "$(jq -r '.sampled_at_ms // 0' <<<"$USAGE")" -gt "$2" ] && return 0
		sleep 0.25
	done
	return 1
}

suite() {
	local B=$1 S u1 u2 ratio m0_cpu m0_thr m0_pids m0_client m0_budget bomb_refused
	m0_cpu=$(metric judge_session_cpu_seconds_total)
	m0_thr=$(metric judge_session_throttled_seconds_total)
	m0_pids=$(metric judge_session_pids_refused_total)
	m0_client=$(metric 'judge_sessions_ended_total{reason="client"}')
	m0_budget=$(metric 'judge_sessions_ended_total{reason="cpu_budget"}')
	# ---- the CPU quota holds background processes ----
	create python "{\"cpus\": $QUOTA}"
	S=$SID
	[ -n "$S" ] && pass "$B: create a session with cpus $QUOTA" || { fail "$B: create a session"; return; }
	expect "$B: its limits show the quota" 200 ".limits.cpus == $QUOTA" GET "/v1/sessions/$S"
	cell "$B: a cell leaves a busy loop running (Popen, new session)" "$S" \
		$'import subprocess, sys\np = subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)\np.poll() is None' \
		'.status == "ok" and .result == "True"'
	expect "$B: a bash context" 201 '.language == "bash"' POST "/v1/sessions/$S/contexts" '{"language": "bash"}'
	local SH
	SH=$(jq -r .id <<<"$LAST")
	cell "$B: a bash cell leaves another (busy &)" "$S" 'busy() { while :; do :; done; }; busy & echo started' \
		'.status == "ok" and .stdout == "started\n"' '"context": "'"$SH"'"'
	usage_after "$S" "$(($(date +%s%3N) - 200))"
	u1=$USAGE
	sleep 2.5
	usage_after "$S" "$(jq -r .sampled_at_ms <<<"$u1")"
	u2=$USAGE
	# CPU used per second of the worker's readings (both from the same clock)
	ratio=$(jq -n --argjson a "$u1" --argjson b "$u2" \
		'(($b.cpu_ms - $a.cpu_ms) / ($b.sampled_at_ms - $a.sampled_at_ms)) * 1000 | round / 1000')
	echo "  $B: two busy loops under a quota of $QUOTA CPU used $ratio CPU over" \
		"$(jq -n --argjson a "$u1" --argjson b "$u2" '$b.sampled_at_ms - $a.sampled_at_ms') ms"
	if jq -en --argjson a "$u1" --argjson b "$u2" --argjson q "$QUOTA" \
		'($b.cpu_ms - $a.cpu_ms) > 0 and ($b.sampled_at_ms - $a.sampled_at_ms) >= 1500 and
		 ($b.cpu_ms - $a.cpu_ms) / ($b.sampled_at_ms - $a.sampled_at_ms) <= $q + 0.1' >/dev/null; then
		pass "$B: the background loops' CPU counts, at most the quota + 0.1 ($ratio)"
	else
		fail "$B: the background loops' CPU counts, at most the quota + 0.1" "$u1 -> $u2"
	fi
	expect_json "$B: the kernel held them back (throttled_ms grows)" "$u2" \
		'.throttled_ms > '"$(jq -r '.throttled_ms' <<<"$u1")"
	expect_json "$B: GET shows the usage: cpu_ms, memory_kb, processes" "$u2" \
		'.cpu_ms > 0 and .memory_kb > 0 and .processes >= 3'
	# cpu_pct: the share of one CPU since the worker's previous reading
	expect_json "$B: usage: cpu_pct busy and within the quota (+20), disk_kb read" "$u2" \
		".cpu_pct > 0 and .cpu_pct <= ($QUOTA * 100 + 20) and .disk_kb >= 0"
	cell "$B: a cell still answers beside them" "$S" '6 * 7' '.status == "ok" and .result == "42"'
	expect "$B: close" 200 '.status == "closed"' DELETE "/v1/sessions/$S"

	# ---- the session's own limits: processes and CPU weight, capped ----
	bad "$B: processes past max_session_processes: 422" 422 invalid_field POST /v1/sessions \
		'{"language": "python", "limits": {"processes": 5000}}'
	bad "$B: cpu_weight past max_session_cpu_weight: 422" 422 invalid_field POST /v1/sessions \
		'{"language": "python", "limits": {"cpu_weight": 500}}'
	# ---- a fork bomb is held by the session's pids limit ----
	create python '{"processes": 64, "cpu_weight": 50}'
	S=$SID
	[ -n "$S" ] && pass "$B: create a session" || { fail "$B: create a session"; return; }
	expect "$B: its limits show processes 64 and cpu_weight 50" 200 \
		'.limits.processes == 64 and .limits.cpu_weight == 50' GET "/v1/sessions/$S"
	if [ "$B" = native ]; then
		# the worker's cgroups in the cpu hierarchy: this session's has shares 512
		local shares
		shares=$(cat /sys/fs/cgroup/cpu/judge/judge-o"$SVC_WORKER_PID"x*/cpu.shares 2>/dev/null | sort -u | tr '\n' ' ')
		grep -qw 512 <<<"$shares" && pass "$B: its cgroup's cpu.shares is 512 (weight 50)" ||
			fail "$B: its cgroup's cpu.shares is 512" "shares of the worker's cgroups: $shares"
	fi
	expect "$B: a bash context" 201 '.language == "bash"' POST "/v1/sessions/$S/contexts" '{"language": "bash"}'
	SH=$(jq -r .id <<<"$LAST")
	run "$S" 'bomb() { bomb | bomb & }; bomb; echo lit' '"context": "'"$SH"'", "timeout_ms": 5000'
	[ "$ST" = 200 ] && pass "$B: a fork bomb's cell answers ($(jq -r .status <<<"$LAST"))" ||
		fail "$B: a fork bomb's cell answers" "status $ST: $(head -c 300 <<<"$LAST")"
	# the bomb grows at the session's CPU quota: wait (at most ~10 s) for its limit
	for _ in $(seq 40); do
		sleep 0.25
		usage "$S"
		# gVisor: none is refused on the host (below): one reading a second on
		[ "$B" != native ] && [ "$(jq -r '.sampled_at_ms // 0' <<<"$USAGE")" -gt 0 ] && sleep 1 && break
		[ "$(jq -r '.pids_refused // 0' <<<"$USAGE")" -gt 0 ] && break
	done
	echo "  $B: usage with the bomb going: $USAGE"
	bomb_refused=$(jq -r '.pids_refused // 0' <<<"$USAGE")
	if [ "$B" = native ]; then
		expect_json "$B: the pids limit refused its forks" "$USAGE" '.pids_refused > 0'
		# pids.max is the processes asked + 1: the sandbox's own init
		expect_json "$B: at most the 64 processes it asked (+ the sandbox's init)" "$USAGE" '.processes <= 65'
	else
		skip "$B: the pids limit refused its forks" \
			"gVisor holds processes by RLIMIT_NPROC inside the sandbox; its host cgroup counts the sentry's threads"
	fi
	cell "$B: a later python cell answers" "$S" '6 * 7' '.status == "ok" and .result == "42"'
	cell "$B: a later bash cell answers" "$S" 'echo $((6 * 7))' '.stdout == "42\n"' '"context": "'"$SH"'"'
	expect "$B: close ends the bomb with the session" 200 '.status == "closed"' DELETE "/v1/sessions/$S"

	# ---- the CPU budget ----
	create python '{"cpus": 2, "cpu_budget_s": 2}'
	S=$SID
	[ -n "$S" ] && pass "$B: create a session with a budget of 2 CPU seconds" || { fail "$B: create"; return; }
	# the budget may end the session before the cell's answer is stored: then
	# that answer is the 410 with the budget's reason
	run "$S" $'import subprocess, sys\nps = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(4)]\nlen(ps)'
	if [ "$ST" = 200 ] || { [ "$ST" = 410 ] && grep -q "CPU budget" <<<"$LAST"; }; then
		pass "$B: background loops spend it ($ST)"
	else
		fail "$B: background loops spend it" "status $ST: $(head -c 300 <<<"$LAST")"
	fi
	local st=
	for _ in $(seq 120); do
		st=$(req GET "/v1/sessions/$S" | head -n -1)
		[ "$(jq -r .status <<<"$st")" = ready ] || break
		sleep 0.25
	done
	expect_json "$B: past its budget the session is closed, with the reason" "$st" \
		'.status == "closed" and (.reason | test("CPU budget")) and .usage.cpu_ms >= 2000'
	echo "  $B: $(jq -c '{status, reason, usage}' <<<"$st")"
	bad "$B: a cell after it: 410" 410 session_closed POST "/v1/sessions/$S/execute" '{"code": "1"}'

	# ---- /metrics: the sums of what the sessions above used ----
	local m1_cpu m1_thr m1_pids m1_client m1_budget
	m1_cpu=$(metric judge_session_cpu_seconds_total)
	m1_thr=$(metric judge_session_throttled_seconds_total)
	m1_pids=$(metric judge_session_pids_refused_total)
	m1_client=$(metric 'judge_sessions_ended_total{reason="client"}')
	m1_budget=$(metric 'judge_sessions_ended_total{reason="cpu_budget"}')
	echo "  $B: /metrics cpu $m0_cpu -> $m1_cpu s, throttled $m0_thr -> $m1_thr s," \
		"pids refused $m0_pids -> $m1_pids, ended client $m0_client -> $m1_client," \
		"cpu_budget $m0_budget -> $m1_budget"
	# the budget session alone used 2 CPU seconds
	jq -en "$m1_cpu - $m0_cpu >= 2" >/dev/null &&
		pass "$B: metrics: judge_session_cpu_seconds_total grew by the sessions' CPU" ||
		fail "$B: metrics: judge_session_cpu_seconds_total grew" "$m0_cpu -> $m1_cpu"
	jq -en "$m1_thr > $m0_thr" >/dev/null &&
		pass "$B: metrics: judge_session_throttled_seconds_total grew" ||
		fail "$B: metrics: judge_session_throttled_seconds_total grew" "$m0_thr -> $m1_thr"
	if [ "$B" = native ]; then
		jq -en "$m1_pids - $m0_pids >= $bomb_refused and $bomb_refused > 0" >/dev/null &&
			pass "$B: metrics: judge_session_pids_refused_total counts the bomb's refused forks" ||
			fail "$B: metrics: judge_session_pids_refused_total" "$m0_pids -> $m1_pids (bomb: $bomb_refused)"
	else
		skip "$B: metrics: judge_session_pids_refused_total" "no fork is refused on the host under gVisor (above)"
	fi
	[ "$((m1_client - m0_client))" -ge 2 ] &&
		pass "$B: metrics: two sessions ended by the client" ||
		fail "$B: metrics: sessions ended by the client" "$m0_client -> $m1_client"
	[ "$((m1_budget - m0_budget))" = 1 ] &&
		pass "$B: metrics: one session ended for its CPU budget" ||
		fail "$B: metrics: one session ended for its CPU budget" "$m0_budget -> $m1_budget"
}

for B in $BACKENDS; do
	why=
	if [ "$B" = gvisor ]; then
		if ! command -v runsc >/dev/null; then
			why="runsc is not installed"
		elif [ "$(id -u)" != 0 ]; then
			why="the gvisor backend needs root"
		fi
	fi
	if [ -n "$why" ]; then
		skip "$B: every check" "$why"
		continue
	fi
	if [ "$B" != native ]; then
		# the same database and serve; the worker of the other backend
		svc_stop "$SVC_WORKER_PID"
		svc_config "$SVC_TMP/$B.ini" "listen = 127.0.0.1:$PORT" "auth = on" "[sandbox]" "sandbox = $B" \
			"[worker]" "worker_slots = 1" "[sessions]" "session_cpus = 1" "max_session_cpus = 2" ||
			{ fail "$B: judge.ini"; continue; }
		svc_worker "$SVC_TMP/$B.ini" || { fail "$B: worker starts"; continue; }
	fi
	suite "$B"
done
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/worker.log"
finish
