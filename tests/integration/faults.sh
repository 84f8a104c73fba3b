#!/usr/bin/env bash
# faults: the service under faults, with a real PostgreSQL and the real binary:
#  1. SIGKILL a worker while it runs a submission: it ends once, right, on another worker;
#     (1b: a drain hands back what it cannot finish; 1c: a claim taken away stops its grading);
#  2. restart PostgreSQL while submissions are queued and running: nothing lost;
#  3. 500 submissions from 50 concurrent HTTP clients across 3 worker processes:
#     every one ends exactly once.
# PostgreSQL runs as the unprivileged user `judge` in a temp dir on a random port;
# the judge runs with the native sandbox. Every wait is bounded.
cd "$(dirname "$0")/../.."
source tests/lib.sh
JUDGE=$(realpath "$JUDGE")

PGBIN=${JUDGE_PG_BINDIR:-/usr/lib/postgresql/15/bin}
if [ "$(id -u)" != 0 ]; then
	echo "faults: needs root (the worker's sandboxes do)"
	fail "run as root"
	finish
	exit
fi
id judge >/dev/null 2>&1 ||
	useradd --system --user-group --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin judge

T=$(mktemp -d /tmp/judge-faults.XXXXXX)
chmod 755 "$T"
PGPORT=$(free_port)
HPORT=$(free_port)
PIDS=()
as_pg() { runuser -u judge -- "$@"; }
cleanup() {
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	as_pg "$PGBIN/pg_ctl" -D "$T/pg" -m immediate stop >/dev/null 2>&1
	if [ "$T_FAIL" -gt 0 ] && [ -n "${KEEP_LOGS:-}" ]; then
		mkdir -p "$KEEP_LOGS" && cp "$T"/*.log "$KEEP_LOGS"/ 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT

mkdir -p "$T/run" "$T/pg" && chown judge: "$T/run" "$T/pg" && chmod 700 "$T/pg"
as_pg "$PGBIN/initdb" -D "$T/pg" -U judge -A trust -E UTF8 --no-sync >"$T/initdb.log" 2>&1 ||
	{ fail "initdb" "$(tail -3 "$T/initdb.log")"; finish; exit; }
pg_opts="-c listen_addresses='' -k $T/run -p $PGPORT -c fsync=off -c max_connections=200"
pg_start() { as_pg "$PGBIN/pg_ctl" -D "$T/pg" -l "$T/run/pg.log" -o "$pg_opts" -w -t 60 "$@" >/dev/null; }
pg_start start || { fail "postgres start" "$(tail -3 "$T/run/pg.log")"; finish; exit; }
as_pg "$PGBIN/createdb" -h "$T/run" -p "$PGPORT" -U judge judge
URL="host=$T/run port=$PGPORT dbname=judge user=judge"
sql() { psql -XAtq "$URL" -c "$1"; }

# judge.ini as shipped (lib.sh), changed: this suite's own state, database and port;
# native, two slots, auth and admission off (loopback), and the lease, reaper,
# attempts and drain times short: the faults below are about them
shipped_ini "$T/judge.ini" "state_dir = $T/var" "sandbox = native" "listen = 127.0.0.1:$HPORT" \
	"auth = off" "rate_limit_per_min = 0" "max_in_flight = 0" "database_url = $URL" \
	"worker_slots = 2" "lease_s = 3" "reap_interval_s = 1" "max_attempts = 3" "drain_s = 20" \
	"log_level = info"
J() { "$JUDGE" --config "$T/judge.ini" "$@"; }
if out=$(J migrate 2>&1); then pass "migrate"; else
	fail "migrate" "$out"
	finish
	exit
fi
expect_json "migrate again is a no-op" "\"$(J migrate 2>/dev/null)\"" 'test("0 migrations applied")'

# start_worker NAME [SLOTS]: starts a worker, its pid in WPID[NAME], log in $T/NAME.log
declare -A WPID
start_worker() {
	# the binary itself, not a shell function: $! must be the worker's pid
	"$JUDGE" --config "$T/judge.ini" worker --slots "${2:-2}" >"$T/$1.log" 2>&1 &
	WPID[$1]=$!
	PIDS+=($!)
}
"$JUDGE" --config "$T/judge.ini" serve >"$T/serve.log" 2>&1 &
SERVE=$!
PIDS+=($SERVE)
API=http://127.0.0.1:$HPORT
for _ in $(seq 100); do curl -sf "$API/health" >/dev/null && break; sleep 0.1; done
check "serve is healthy" curl -sf "$API/health"

# submit JSON: POSTs a submission, prints its id
submit() {
	curl -s --max-time 20 -H 'Content-Type: application/json' -d "$1" "$API/v1/submissions" |
		jq -r '.id // empty'
}
# wait_final ID SECONDS: the submission's JSON once final
wait_final() {
	curl -s --max-time $(($2 + 10)) "$API/v1/submissions/$1?wait=$2"
}
# finished_lines ID: how many worker logs report submission ID finished
finished_lines() { cat "$T"/w*.log | grep -c "submission $1 finished:"; }

### 1. SIGKILL a worker in the middle of a submission
start_worker w1 1
slow='{"language": "python", "source": "import time\ntime.sleep(2.5)\nprint(6*7)", "expected_output": "42"}'
id=$(submit "$slow")
if [ -n "$id" ]; then pass "submitted $id"; else
	fail "submit" "no id: $(tail -3 "$T/serve.log")"
	finish
	exit
fi
owner=""
for _ in $(seq 100); do
	owner=$(sql "SELECT worker FROM submissions WHERE id = $id AND status = 'running'")
	[ -n "$owner" ] && break
	sleep 0.1
done
expect_json "w1 runs it" "\"$owner\"" "test(\":${WPID[w1]}/\")"
start_worker w2 1
sleep 0.5
kill -KILL "${WPID[w1]}"
wait "${WPID[w1]}" 2>/dev/null # reaped here, so bash prints no "Killed" line
t0=$(date +%s)
res=$(wait_final "$id" 40)
expect_json "killed run ends accepted" "$res" '.status == "accepted" and .result.stdout == "42\n"'
row=$(sql "SELECT json_build_object('attempts', attempts, 'worker', worker) FROM submissions WHERE id = $id")
expect_json "second attempt, on w2" "$row" ".attempts == 2 and (.worker | test(\":${WPID[w2]}/\"))"
[ "$(finished_lines "$id")" = 1 ] && pass "finished exactly once" ||
	fail "finished exactly once" "$(finished_lines "$id") finish lines"
echo "   (requeued and re-run within $(($(date +%s) - t0)) s of the kill)"

### 1b. SIGTERM with a short drain: the running submission is handed back, not lost
sed 's/^drain_s = .*/drain_s = 1/' "$T/judge.ini" >"$T/drain.ini"
"$JUDGE" --config "$T/drain.ini" worker --slots 1 >"$T/wd.log" 2>&1 &
WD=$!
PIDS+=($WD)
sleep 1 # wd is idle and w2 busy-free: make w2 leave the job to wd
kill -STOP "${WPID[w2]}"
id=$(submit '{"language": "python", "source": "import time\ntime.sleep(3)\nprint(7)", "expected_output": "7"}')
for _ in $(seq 100); do
	[ -n "$(sql "SELECT 1 FROM submissions WHERE id = $id AND worker LIKE '%:$WD/%'")" ] && break
	sleep 0.1
done
kill -TERM "$WD"
wait "$WD"
rc=$?
kill -CONT "${WPID[w2]}"
[ $rc = 0 ] && grep -q "submission $id handed back" "$T/wd.log" &&
	pass "drain timeout hands the running submission back, exit 0" ||
	fail "drain hand-back" "rc $rc: $(tail -3 "$T/wd.log")"
res=$(wait_final "$id" 40)
row=$(sql "SELECT json_build_object('attempts', attempts, 'worker', worker) FROM submissions WHERE id = $id")
expect_json "handed-back submission ends on w2, attempt not counted" "{\"r\": $res, \"row\": $row}" \
	".r.status == \"accepted\" and .row.attempts == 1 and (.row.worker | test(\":${WPID[w2]}/\"))"

### 1c. a claim taken away mid-grading: the worker stops at its next test, not at the end
tests=$(for i in $(seq 10); do echo "{\"name\": \"t$i\", \"stdin\": \"$i\", \"expected_output\": \"$i\"}"; done | jq -s .)
id=$(submit "$(jq -n --argjson t "$tests" '{language: "python", tests: $t,
	source: "import time\ntime.sleep(1)\nprint(input())"}')")
for _ in $(seq 100); do
	[ -n "$(sql "SELECT 1 FROM submissions WHERE id = $id AND worker LIKE '%:${WPID[w2]}/%'")" ] && break
	sleep 0.1
done
sleep 1
sql "UPDATE submissions SET worker = 'elsewhere', lease_until = now() + interval '1 hour' WHERE id = $id" >/dev/null
t0=$(date +%s.%N)
for _ in $(seq 150); do
	grep -q "submission $id was taken from us" "$T/w2.log" && break
	sleep 0.1
done
took=$(echo "$(date +%s.%N) - $t0" | bc)
# all ten tests would take 9 s more; the lease is checked every second
if grep -q "lost the lease of submission $id" "$T/w2.log" &&
	grep -q "submission $id was taken from us" "$T/w2.log" && [ "$(echo "$took < 6" | bc)" = 1 ]; then
	pass "a lost claim stops its grading early (${took%.*} s after it was taken)"
else
	fail "a lost claim stops its grading early" "after $took s: $(grep "submission $id" "$T/w2.log" | tail -3)"
fi
sql "UPDATE submissions SET status = 'queued', worker = NULL, lease_until = NULL WHERE id = $id" >/dev/null
res=$(wait_final "$id" 60)
expect_json "the taken submission, requeued, ends accepted" "$res" '.status == "accepted"'

### 2. restart PostgreSQL with submissions queued and running
start_worker w3 2
batch=$(for i in $(seq 20); do
	echo "{\"language\": \"python\", \"source\": \"import time\ntime.sleep(1)\nprint($i)\", \"expected_output\": \"$i\"}"
done | jq -s '{submissions: .}')
mapfile -t ids < <(curl -s --max-time 20 -H 'Content-Type: application/json' -d "$batch" \
	"$API/v1/submissions/batch" | jq -r '.ids[]')
for _ in $(seq 50); do
	[ "$(sql "SELECT count(*) FROM submissions WHERE status = 'running'")" -gt 0 ] && break
	sleep 0.1
done
before=$(sql "SELECT count(*) FROM submissions WHERE status IN ('queued', 'running')")
echo "   restarting PostgreSQL with $before submissions queued or running"
pg_start restart && pass "postgres restarted" || fail "postgres restart"
# the server reconnects: new submissions are accepted after the restart
for i in $(seq 21 30); do
	ids+=("$(submit "{\"language\": \"python\", \"source\": \"print($i)\", \"expected_output\": \"$i\"}")")
done
[ ${#ids[@]} = 30 ] && [ -z "$(printf '%s\n' "${ids[@]}" | grep -v '^[0-9]\+$')" ] &&
	pass "server accepts submissions across the restart" ||
	fail "server accepts submissions across the restart" "ids: ${ids[*]}"
ok=0
for i in "${!ids[@]}"; do
	r=$(wait_final "${ids[$i]}" 60)
	if printf '%s' "$r" | jq -e ".status == \"accepted\" and .result.stdout == \"$((i + 1))\n\"" >/dev/null; then
		ok=$((ok + 1))
	else
		echo "   submission ${ids[$i]}: $(printf '%s' "$r" | head -c 300)"
	fi
done
[ $ok = 30 ] && pass "all 30 end accepted after the restart" || fail "all 30 accepted" "$ok of 30"
once=0
for id in "${ids[@]}"; do [ "$(finished_lines "$id")" = 1 ] && once=$((once + 1)); done
[ $once = 30 ] && pass "each finished exactly once" || fail "each finished exactly once" "$once of 30"
grep -q "re-established\|reachable again" "$T"/w*.log && pass "workers reconnected" ||
	fail "workers reconnected" "no reconnect in the logs"

### 3. 500 submissions, 50 concurrent clients, 3 worker processes
kill -TERM "${WPID[w2]}"
wait "${WPID[w2]}"
[ $? = 0 ] && pass "SIGTERM drains w2, exit 0" || fail "SIGTERM drains w2, exit 0"
start_worker w4 2
start_worker w5 2
mkdir "$T/clients"
client() { # N: 10 submissions, each checked
	local n=$1 k id r v
	for k in $(seq 10); do
		v=$((n * 100 + k))
		id=$(curl -s --max-time 30 -H 'Content-Type: application/json' \
			-d "{\"language\": \"python\", \"source\": \"print(int(input()) * 2)\", \"stdin\": \"$v\", \"expected_output\": \"$((v * 2))\", \"limits\": {\"time_ms\": 5000}}" \
			"$API/v1/submissions" | jq -r '.id // empty')
		[ -z "$id" ] && { echo "noid $n $k" >>"$T/clients/$n"; continue; }
		# the server caps one wait at max_wait_s: ask again while it is not final
		for _ in 1 2 3 4; do
			r=$(curl -s --max-time 130 "$API/v1/submissions/$id?wait=120" | jq -r '.status')
			[ "$r" != queued ] && [ "$r" != running ] && break
		done
		echo "$id $r" >>"$T/clients/$n"
	done
}
export -f client
export API T
t0=$(date +%s.%N)
# bounded: a shared 2-core machine under load runs ~2-10 submissions a second
seq 50 | timeout 420 xargs -P 50 -I{} bash -c 'client {}'
t1=$(date +%s.%N)
lines=$(cat "$T"/clients/* | wc -l)
acc=$(cat "$T"/clients/* | grep -c ' accepted$')
[ "$acc" = 500 ] && pass "500 of 500 accepted" || fail "500 accepted" "$acc of $lines: $(cat "$T"/clients/* | grep -v ' accepted$' | head -5 | tr '\n' ';')"
echo "   500 submissions in $(echo "$t1 - $t0" | bc) s ($(echo "scale=1; 500 / ($t1 - $t0)" | bc)/s) over 3 workers x 2 slots"
cut -d' ' -f1 "$T"/clients/* | grep '^[0-9]' | sort >"$T/ids"
[ "$(sort -u "$T/ids" | wc -l)" = 500 ] && pass "500 distinct ids" || fail "500 distinct ids"
cat "$T"/w*.log | grep -o 'submission [0-9]* finished:' | awk '{print $2}' | sort -n | uniq -c |
	awk '$1 != 1' >"$T/dups"
[ ! -s "$T/dups" ] && pass "no submission finished twice" || fail "no submission finished twice" "$(head -3 "$T/dups")"
missing=$(comm -23 "$T/ids" <(cat "$T"/w*.log | grep -o 'submission [0-9]* finished:' | awk '{print $2}' | sort -u) | wc -l)
[ "$missing" = 0 ] && pass "every one finished by a worker" || fail "every one finished" "$missing missing"
used=$(for w in w3 w4 w5; do grep -c 'finished:' "$T/$w.log"; done | tr '\n' ' ')
echo "   finishes per worker (w3 w4 w5): $used"
idlist=$(paste -sd, "$T/ids")
row=$(sql "SELECT json_build_object('final', count(*) FILTER (WHERE finished IS NOT NULL AND status = 'accepted'), 'once', count(*) FILTER (WHERE attempts = 1)) FROM submissions WHERE id IN (${idlist:-0})")
expect_json "database: all 500 accepted, each claimed once" "$row" '.final == 500 and .once == 500'
open=$(sql "SELECT count(*) FROM submissions WHERE status IN ('queued', 'running')")
[ "$open" = 0 ] && pass "queue empty at the end" || fail "queue empty" "$open left"
kill -0 "$SERVE" && pass "server still up" || fail "server still up"
for w in w3 w4 w5; do kill -TERM "${WPID[$w]}"; done
kill -TERM "$SERVE"
rc=0
for w in w3 w4 w5; do wait "${WPID[$w]}" || rc=1; done
[ $rc = 0 ] && pass "workers drain and exit 0" || fail "workers drain and exit 0"
finish
