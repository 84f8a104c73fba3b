#!/usr/bin/env bash
# up: `judge up` on a fresh state dir: the embedded PostgreSQL is created (as the
# unprivileged user judge), migrated, serve and a worker start, the printed curl
# example gives a verdict, and SIGTERM stops everything (exit 0, no postgres left).
# Then a second start reuses the cluster and the saved example key.
cd "$(dirname "$0")/../.."
source tests/lib.sh
JUDGE=$(realpath "$JUDGE")
if [ "$(id -u)" != 0 ]; then
	fail "run as root" "the worker's sandboxes need root"
	finish
	exit
fi

T=$(mktemp -d /tmp/judge-up.XXXXXX)
chmod 755 "$T"
HPORT=$(free_port)
UP=""
cleanup() {
	[ -n "$UP" ] && kill -KILL "$UP" 2>/dev/null
	# a cluster left by a failure: stop it as its owner
	[ -f "$T/var/pg/data/postmaster.pid" ] &&
		runuser -u judge -- /usr/lib/postgresql/15/bin/pg_ctl -D "$T/var/pg/data" -m immediate stop >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
# judge.ini as shipped (lib.sh; the embedded database, as make run), changed: this
# suite's own state folder and port, native, one slot
shipped_ini "$T/judge.ini" "state_dir = $T/var" "sandbox = native" "listen = 127.0.0.1:$HPORT" \
	"worker_slots = 1"

# start_up: runs judge up in the background until its banner shows (60 s at most)
start_up() {
	"$JUDGE" --config "$T/judge.ini" up >"$T/up.out" 2>>"$T/up.err" &
	UP=$!
	for _ in $(seq 600); do
		grep -q "^judge is up" "$T/up.out" 2>/dev/null && return 0
		kill -0 "$UP" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# the curl command exactly as printed, run through bash
run_example() {
	sed -n '/^curl /,/^$/p' "$T/up.out" >"$T/example.sh"
	bash "$T/example.sh"
}
stop_up() {
	kill -TERM "$UP"
	local rc
	wait "$UP"
	rc=$?
	UP=""
	return $rc
}

t0=$(date +%s.%N)
if start_up; then pass "judge up starts ($(echo "$(date +%s.%N) - $t0" | bc | cut -c1-4) s, fresh cluster)"; else
	fail "judge up starts" "$(tail -5 "$T/up.err")"
	finish
	exit
fi
[ "$(stat -c %U "$T/var/pg/data")" = judge ] && pass "cluster owned by judge" || fail "cluster owned by judge"
grep -q "^curl " "$T/up.out" && pass "prints a curl example" || fail "prints a curl example"
res=$(run_example)
expect_json "the example gives a verdict" "$res" '.status == "accepted" and .stdout == "hello world\n"'
# the playground's address carries the key (tests/integration/web.sh opens it in a browser)
url=$(sed -n 's|^open \(http://[^ ]*/#key=jk_[0-9a-f]*\) in a browser.*|\1|p' "$T/up.out")
[ -n "$url" ] && [ "${url##*#key=}" = "$(cat "$T/var/api-key")" ] &&
	[ "$(curl -s -o /dev/null -w '%{http_code}' "${url%%#*}")" = 200 ] &&
	pass "prints the playground's address with the key, and it answers" ||
	fail "prints the playground's address" "$(head -5 "$T/up.out")"
st=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$T/var/api-key")" \
	"${url%%/#*}/v1/admin/stats")
[ "$st" = 200 ] && pass "its key is an admin key (the dashboard)" || fail "its key is an admin key" "status $st"
check "stop with SIGTERM, exit 0" stop_up
sleep 0.5
pgrep -f "postgres -D $T/var/pg/data" >/dev/null && fail "embedded postgres stopped" || pass "embedded postgres stopped"
key1=$(cat "$T/var/api-key")

if start_up; then pass "second start reuses the cluster"; else fail "second start" "$(tail -5 "$T/up.err")"; fi
[ "$(cat "$T/var/api-key")" = "$key1" ] && pass "example key kept" || fail "example key kept"
res=$(run_example)
expect_json "the example still works" "$res" '.status == "accepted"'
grep -q "applied migration" "$T/up.err" && n=$(grep -c "applied migration" "$T/up.err")
# each migration file once, over both starts
want=$(ls migrations/[0-9]*.sql | wc -l)
[ "${n:-0}" = "$want" ] && pass "migrations applied once over two starts ($want)" ||
	fail "migrations applied once" "${n:-0} applied, $want files"
# a schema newer than the binary is refused, by migrate and by a new worker
PGURL="host=$T/var/pg/run port=5432 dbname=judge user=judge"
psql -XAtq "$PGURL" -c "INSERT INTO schema_migrations (version, name) VALUES (9999, 'future')"
out=$("$JUDGE" --config "$T/judge.ini" migrate 2>&1)
[ $? = 1 ] && grep -q "newer than this judge" <<<"$out" && pass "migrate refuses a newer schema" ||
	fail "migrate refuses a newer schema" "$out"
out=$(timeout 60 "$JUDGE" --config "$T/judge.ini" worker 2>&1)
[ $? = 1 ] && grep -q "newer than this judge" <<<"$out" && pass "worker refuses a newer schema" ||
	fail "worker refuses a newer schema" "$(tail -2 <<<"$out")"
psql -XAtq "$PGURL" -c "DELETE FROM schema_migrations WHERE version = 9999"
# what up logged of its children says why, should it not exit 0
if stop_up; then pass "second stop, exit 0"; else
	fail "second stop, exit 0" "$(grep -E 'exited|ended|status|error' "$T/up.err" | tail -6)"
fi
finish
