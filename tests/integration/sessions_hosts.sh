#!/usr/bin/env bash
# sessions_hosts.sh: sessions on two worker "hosts": each `judge worker` runs in
# a network namespace of its own (with its own host name), reaching one
# PostgreSQL over TCP through a veth pair, as a worker on another machine
# would; `judge serve` stays in the root namespace. Sessions land on both,
# keep their state there, and when one host's worker is killed its sessions
# answer 410 session_lost while the other's go on with their state. Then, on
# gVisor workers, a session paused on one host resumes on the other after the
# first host's worker is killed, with its variables (the image holds the
# sandbox's memory, docs/sessions.md). Needs root (ip netns); skipped (and
# counted as skipped) without it; the gVisor part without runsc.
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
T_SKIP=0

needs_netns

# two namespaces, each with a veth pair to the root namespace: 10.N.M.1 (root
# side) <-> 10.N.M.2 (host a), 10.N.M.5 <-> 10.N.M.6 (host b)
NET="10.$((RANDOM % 200 + 20)).$((RANDOM % 250))"
TAG=$$
NS=(jsess-a-$TAG jsess-b-$TAG)
ROOT_IP=("$NET.1" "$NET.5")
HOST_IP=("$NET.2" "$NET.6")
netns_cleanup() {
	for i in 0 1; do
		ip netns pids "${NS[$i]}" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		ip link del "jsr$i-$TAG" 2>/dev/null
		ip netns del "${NS[$i]}" 2>/dev/null
	done
}
for i in 0 1; do
	ip netns add "${NS[$i]}" &&
		ip link add "jsr$i-$TAG" type veth peer name "jsh$i-$TAG" &&
		ip link set "jsh$i-$TAG" netns "${NS[$i]}" &&
		ip addr add "${ROOT_IP[$i]}/30" dev "jsr$i-$TAG" && ip link set "jsr$i-$TAG" up &&
		ip -n "${NS[$i]}" addr add "${HOST_IP[$i]}/30" dev "jsh$i-$TAG" &&
		ip -n "${NS[$i]}" link set "jsh$i-$TAG" up && ip -n "${NS[$i]}" link set lo up ||
		{ fail "network namespace ${NS[$i]}"; netns_cleanup; finish; exit 1; }
done
pass "two hosts: network namespaces with a veth pair each"

SVC_PG_LISTEN="127.0.0.1,${ROOT_IP[0]},${ROOT_IP[1]}"
source tests/svc.sh
trap 'svc_cleanup; netns_cleanup' EXIT
svc_pg_start || { fail "postgresql starts"; finish; exit 1; }
# the hosts' addresses may connect (initdb's trust covers loopback only)
echo "host all all $NET.0/24 trust" >>"$SVC_TMP/pg/data/pg_hba.conf"
svc_as_pg "$SVC_PG_BIN/pg_ctl -D '$SVC_TMP/pg/data' reload" >/dev/null 2>&1
PGPORT=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' <<<"$SVC_DB_URL")
PORT=$(svc_port)
U=http://127.0.0.1:$PORT
ini=$SVC_TMP/judge.ini
# changed from judge.ini (svc.sh): one native slot and two sessions per worker host,
# and a short worker_timeout_s (the lost host is the subject)
svc_config "$ini" "listen = 127.0.0.1:$PORT" "auth = on" "[sandbox]" "sandbox = native" \
	"[worker]" "worker_slots = 1" "[sessions]" "sessions_per_worker = 2" "worker_timeout_s = 4"
check "migrate" "$JUDGE" --config "$ini" migrate
KEY=$("$JUDGE" --config "$ini" keys create --name hosts 2>/dev/null)
AUTH=(-H "Authorization: Bearer $KEY")
JSON=(-H "Content-Type: application/json")
svc_serve "$ini" || { fail "serve starts"; finish; exit 1; }

# host I: judge worker in namespace I, host name host-I, PostgreSQL over TCP
WPID=()
host_worker() {
	local i=$1 wini=$SVC_TMP/host$1.ini
	sed "s|^database_url = .*|database_url = host=${ROOT_IP[$i]} port=$PGPORT dbname=postgres user=judge connect_timeout=5|" \
		"${2:-$ini}" >"$wini"
	# nsenter, not ip netns exec: that one mounts a fresh /sys, without the cgroups
	nsenter --net="/run/netns/${NS[$i]}" unshare --uts sh -c "hostname host-$i && exec '$JUDGE' --config '$wini' worker" \
		>>"$SVC_TMP/host$i.log" 2>&1 &
	WPID[$i]=$!
	SVC_PIDS+=("${WPID[$i]}")
}
host_worker 0
host_worker 1
sql() { "$SVC_PG_BIN/psql" -h 127.0.0.1 -p "$PGPORT" -U judge -d postgres -Atc "$1"; }
for _ in $(seq 100); do [ "$(sql 'SELECT count(*) FROM workers')" = 2 ] && break; sleep 0.2; done
[ "$(sql "SELECT string_agg(split_part(name, ':', 1), ',' ORDER BY name) FROM workers")" = "host-0,host-1" ] &&
	pass "both hosts registered, each by its own host name" ||
	fail "both hosts registered" "$(sql 'SELECT name FROM workers')"
ip netns exec "${NS[0]}" timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PGPORT" 2>/dev/null &&
	fail "a host cannot reach the root namespace's loopback" ||
	pass "a host reaches PostgreSQL only over its veth (not the root's loopback)"

req() {
	local m=$1 p=$2
	shift 2
	curl -s -m 60 -X "$m" "${AUTH[@]}" "${JSON[@]}" -w '\n%{http_code}' "$U$p" ${1:+--data-binary "$1"}
}
SIDS=()
for i in 1 2 3 4; do
	out=$(req POST /v1/sessions '{"language": "python"}')
	sid=$(jq -r '.id // empty' <<<"${out%$'\n'*}")
	[ -n "$sid" ] && SIDS+=("$sid") || fail "create session $i" "$out"
done
[ ${#SIDS[@]} = 4 ] && pass "four sessions created"
holder() { sql "SELECT split_part(w.name, ':', 1) FROM sessions s JOIN workers w ON w.id = s.worker_id WHERE s.id = '$1'"; }
hosts=$(for s in "${SIDS[@]}"; do holder "$s"; done | sort | uniq -c | awk '{print $2 "=" $1}' | paste -sd,)
[ "$hosts" = "host-0=2,host-1=2" ] && pass "sessions on both hosts ($hosts)" || fail "sessions on both hosts" "$hosts"
for i in 0 1 2 3; do
	out=$(req POST "/v1/sessions/${SIDS[$i]}/execute" "{\"code\": \"x = $i * 10\"}")
	[ "${out##*$'\n'}" = 200 ] || fail "state set in session $i" "$out"
done

kill -KILL "${WPID[0]}"
wait "${WPID[0]}" 2>/dev/null # (no "Killed" line in the output)
t0=$(date +%s)
lost=0 kept=0
for i in 0 1 2 3; do
	out=$(req POST "/v1/sessions/${SIDS[$i]}/execute" '{"code": "x"}')
	st=${out##*$'\n'}
	body=${out%$'\n'*}
	if [ "$(holder "${SIDS[$i]}")" = host-0 ]; then
		# until the heartbeat is stale the call waits; then 410
		for _ in $(seq 20); do
			[ "$st" = 410 ] && break
			sleep 0.5
			out=$(req POST "/v1/sessions/${SIDS[$i]}/execute" '{"code": "x"}')
			st=${out##*$'\n'}
			body=${out%$'\n'*}
		done
		[ "$st" = 410 ] && [ "$(jq -r .error.code <<<"$body")" = session_lost ] && lost=$((lost + 1)) ||
			fail "session $i on the killed host: 410 session_lost" "$out"
	else
		[ "$st" = 200 ] && [ "$(jq -r .result <<<"$body")" = "$((i * 10))" ] && kept=$((kept + 1)) ||
			fail "session $i on the live host: state intact" "$out"
	fi
done
t1=$(date +%s)
[ "$lost" = 2 ] && pass "the killed host's sessions: 410 session_lost ($((t1 - t0)) s, nothing hung)"
[ "$kept" = 2 ] && pass "the other host's sessions go on with their state"
# host-1 is full (sessions_per_worker = 2): close one of its sessions first
for s in "${SIDS[@]}"; do
	if [ "$(holder "$s")" = host-1 ]; then req DELETE "/v1/sessions/$s" >/dev/null; break; fi
done
out=$(req POST /v1/sessions '{"language": "python"}')
sid=$(jq -r '.id // empty' <<<"${out%$'\n'*}")
[ -n "$sid" ] && [ "$(holder "$sid")" = host-1 ] && pass "a new session goes to the live host" ||
	fail "a new session goes to the live host" "$out"

# ---- gVisor: paused on one host, resumed on the other after a kill ----
gvisor_hosts() {
	local gini=$SVC_TMP/judge-gvisor.ini i out sid a b
	svc_config "$gini" "listen = 127.0.0.1:$PORT" "auth = on" "[sandbox]" "sandbox = gvisor" \
		"session_pool = 0" "[worker]" "worker_slots = 1" "[sessions]" "sessions_per_worker = 2" \
		"worker_timeout_s = 4"
	for i in 0 1; do
		kill -TERM "${WPID[$i]}" 2>/dev/null
		wait "${WPID[$i]}" 2>/dev/null
		host_worker "$i" "$gini"
	done
	for _ in $(seq 100); do
		[ "$(sql "SELECT count(*) FROM workers WHERE stopped IS NULL AND split_part(name, ':', 2) IN ('${WPID[0]}', '${WPID[1]}')")" = 2 ] && break
		sleep 0.2
	done
	out=$(req POST /v1/sessions '{"language": "python"}')
	sid=$(jq -r '.id // empty' <<<"${out%$'\n'*}")
	[ -n "$sid" ] || { fail "gVisor: a session" "$out"; return; }
	a=$(holder "$sid")
	out=$(req POST "/v1/sessions/$sid/execute" '{"code": "x = 41\nopen(\"f.txt\", \"w\").write(\"on a\")"}')
	[ "${out##*$'\n'}" = 200 ] || fail "gVisor: a variable on $a" "$out"
	out=$(req POST "/v1/sessions/$sid/pause")
	[ "$(jq -r '.status + " " + (.memory | tostring)' <<<"${out%$'\n'*}")" = "paused true" ] &&
		pass "gVisor: paused on $a with its memory" || fail "gVisor: pause on $a" "$out"
	i=${a#host-}
	kill -KILL "${WPID[$i]}"
	wait "${WPID[$i]}" 2>/dev/null
	out=$(req POST "/v1/sessions/$sid/execute" '{"code": "print(x + 1, open(\"f.txt\").read())"}')
	b=$(holder "$sid")
	[ "${out##*$'\n'}" = 200 ] && [ "$(jq -r '.stdout + " " + (.restarted | tostring)' <<<"${out%$'\n'*}")" = $'42 on a\n false' ] &&
		[ -n "$b" ] && [ "$b" != "$a" ] &&
		pass "gVisor: resumed on $b after $a's worker was killed, with its variables" ||
		fail "gVisor: resume on the other host" "holder $b (was $a): $out"
	req DELETE "/v1/sessions/$sid" >/dev/null
}
if runsc --version >/dev/null 2>&1; then
	gvisor_hosts
else
	skip "gVisor: resume on another host" "runsc is not installed"
fi

kill -0 "$SVC_SERVE_PID" 2>/dev/null && pass "serve still running" || fail "serve still running"
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/host0.log" "$SVC_TMP/host1.log"
finish
