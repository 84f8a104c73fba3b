# tests/svc.sh: start a real service for a test or benchmark (source it after lib.sh):
# a private PostgreSQL (initdb in a temp dir, random port, unprivileged user),
# `judge migrate`, `judge serve` and `judge worker` processes on random ports.
# Everything started is stopped and removed by svc_cleanup (set as the EXIT trap).
: "${JUDGE:=bin/judge}"
SVC_TMP=$(mktemp -d /tmp/judge-svc.XXXXXX)
chmod 755 "$SVC_TMP"
SVC_PIDS=()
SVC_PG_BIN=${JUDGE_PG_BINDIR:-/usr/lib/postgresql/15/bin}
SVC_PG_USER=
SVC_DB_URL=

svc_cleanup() {
	local p
	for p in "${SVC_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${SVC_PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	if [ -f "$SVC_TMP/pg/data/postmaster.pid" ]; then
		svc_as_pg "$SVC_PG_BIN/pg_ctl -D '$SVC_TMP/pg/data' -m immediate -w stop" >/dev/null 2>&1
	fi
	[ -n "${SVC_KEEP:-}" ] || rm -rf "$SVC_TMP"
}
trap svc_cleanup EXIT

# A free TCP port on 127.0.0.1 (lib.sh).
svc_port() { free_port; }

svc_as_pg() {
	if [ -n "$SVC_PG_USER" ]; then su -s /bin/sh "$SVC_PG_USER" -c "$1"; else sh -c "$1"; fi
}

# Starts PostgreSQL; sets SVC_DB_URL. PostgreSQL refuses root: as root the
# cluster belongs to `judge` (or nobody when there is no such user). It
# listens on SVC_PG_LISTEN (default 127.0.0.1; comma-separated addresses).
svc_pg_start() {
	if [ "$(id -u)" = 0 ]; then
		SVC_PG_USER=judge
		id judge >/dev/null 2>&1 || SVC_PG_USER=nobody
	fi
	local port try
	mkdir -p "$SVC_TMP/pg"
	[ -n "$SVC_PG_USER" ] && chown "$SVC_PG_USER" "$SVC_TMP/pg"
	svc_as_pg "$SVC_PG_BIN/initdb -D '$SVC_TMP/pg/data' -U judge -A trust --no-sync" \
		>"$SVC_TMP/pg/initdb.log" 2>&1 || { cat "$SVC_TMP/pg/initdb.log"; return 1; }
	# a free port can be taken by a suite running beside this one before
	# PostgreSQL binds it: then another port
	for try in 1 2 3 4 5; do
		port=$(svc_port)
		rm -f "$SVC_TMP/pg/log"
		if svc_as_pg "$SVC_PG_BIN/pg_ctl -D '$SVC_TMP/pg/data' -l '$SVC_TMP/pg/log' -w -o \
			\"-p $port -k '$SVC_TMP/pg' -c listen_addresses='${SVC_PG_LISTEN:-127.0.0.1}' -c fsync=off \
			-c max_connections=200\" start" >/dev/null 2>&1; then
			SVC_DB_URL="host=127.0.0.1 port=$port dbname=postgres user=judge"
			return 0
		fi
		grep -q "Address already in use" "$SVC_TMP/pg/log" || break
	done
	cat "$SVC_TMP/pg/log"
	return 1
}

# svc_config FILE [EXTRA INI LINES...]: writes a judge.ini for this service.
# The lines go under [server] unless they open their own section.
svc_config() {
	local f=$1
	shift
	{
		echo "[paths]"
		echo "state_dir = $SVC_TMP/state"
		echo "[database]"
		echo "database_url = $SVC_DB_URL"
		echo "[server]"
		printf '%s\n' "$@"
	} >"$f"
}

# svc_serve INI: starts judge serve, waits until /health answers; sets SVC_SERVE_PID.
svc_serve() {
	local ini=$1 listen
	listen=$(sed -n 's/^listen *= *//p' "$ini" | tail -1)
	"$JUDGE" --config "$ini" serve >>"$SVC_TMP/serve.log" 2>&1 &
	SVC_SERVE_PID=$!
	SVC_PIDS+=("$SVC_SERVE_PID")
	for _ in $(seq 100); do
		curl -s -o /dev/null "http://$listen/health" && return 0
		kill -0 "$SVC_SERVE_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "judge serve did not come up:" >&2
	tail -20 "$SVC_TMP/serve.log" >&2
	return 1
}

# svc_refused NAME INI PATTERN: judge serve with INI must exit non-zero at start,
# saying PATTERN in its log.
svc_refused() {
	if timeout 20 "$JUDGE" --config "$2" serve >"$SVC_TMP/refused.log" 2>&1; then
		fail "$1" "serve exited 0"
	else
		grep -q "$3" "$SVC_TMP/refused.log" && pass "$1" ||
			fail "$1" "$(tail -3 "$SVC_TMP/refused.log")"
	fi
}

# svc_worker INI: starts judge worker; sets SVC_WORKER_PID.
svc_worker() {
	"$JUDGE" --config "$1" worker >>"$SVC_TMP/worker.log" 2>&1 &
	SVC_WORKER_PID=$!
	SVC_PIDS+=("$SVC_WORKER_PID")
	sleep 0.5
	kill -0 "$SVC_WORKER_PID" 2>/dev/null || { tail -20 "$SVC_TMP/worker.log" >&2; return 1; }
}

# svc_stop PID: SIGTERM and wait (drains).
svc_stop() {
	kill -TERM "$1" 2>/dev/null
	for _ in $(seq 300); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null
}

# svc_up KEY_NAME [INI LINES...]: the whole service for an API suite: PostgreSQL,
# judge.ini (listen on a free port, auth on, then the lines, as svc_config takes
# them), migrate, an API key, serve and a worker. Sets PORT, U, ini, KEY, AUTH,
# JSON and MAIN_PID (serve); on a failure it reports and ends the suite.
svc_up() {
	local name=$1
	shift
	svc_pg_start || { fail "postgresql starts"; finish; exit 1; }
	PORT=$(svc_port)
	U=http://127.0.0.1:$PORT
	ini=$SVC_TMP/judge.ini
	svc_config "$ini" "listen = 127.0.0.1:$PORT" "auth = on" "$@"
	check "migrate" "$JUDGE" --config "$ini" migrate
	KEY=$("$JUDGE" --config "$ini" keys create --name "$name" 2>/dev/null)
	svc_serve "$ini" || { fail "serve starts"; finish; exit 1; }
	MAIN_PID=$SVC_SERVE_PID
	svc_worker "$ini" || { fail "worker starts"; finish; exit 1; }
	AUTH=(-H "Authorization: Bearer $KEY")
	JSON=(-H "Content-Type: application/json")
}

# HTTP helpers of the API suites, which set U (base URL), AUTH and JSON (curl
# header arrays).
# req METHOD PATH [BODY [CURL ARGS...]]: prints "BODY\nSTATUS"
# svc_log_clean FILE...: one check ("serve log clean") that no log shows a crash,
# a failed assertion or a sanitizer's report (AddressSanitizer, LeakSanitizer,
# UBSan's "runtime error:").
SVC_CRASH='segfault|assert|panic|Sanitizer|runtime error'
svc_log_clean() {
	if grep -qiE "$SVC_CRASH" "$@"; then
		fail "serve log clean" "$(grep -iE -A5 "$SVC_CRASH" "$@" | head -20)"
	else
		pass "serve log clean"
	fi
}

req() {
	local m=$1 p=$2
	shift 2
	if [ $# -gt 0 ]; then
		local b=$1
		shift
		curl -s --path-as-is -m 60 -X "$m" "${AUTH[@]}" "${JSON[@]}" "$@" -w '\n%{http_code}' \
			"$U$p" --data-binary "$b"
	else
		curl -s --path-as-is -m 60 -X "$m" "${AUTH[@]}" -w '\n%{http_code}' "$U$p"
	fi
}
# expect NAME STATUS JQ ARGS...: sends ARGS through $EXPECT_REQ (default req: METHOD
# PATH [BODY [CURL ARGS...]]), checks the status, then the jq filter on the body,
# which stays in LAST for more checks
expect() {
	local name=$1 want=$2 filter=$3 out status
	shift 3
	out=$("${EXPECT_REQ:-req}" "$@")
	status=${out##*$'\n'}
	LAST=${out%$'\n'*}
	if [ "$status" != "$want" ]; then
		fail "$name" "status $status, want $want: $(head -c 400 <<<"$LAST")"
		return
	fi
	expect_json "$name" "$LAST" "$filter"
}
# bad NAME STATUS CODE METHOD PATH [BODY [CURL ARGS...]]: a 4xx with the error JSON
bad() {
	local name=$1 want=$2 code=$3
	shift 3
	expect "bad: $name" "$want" ".error.code == \"$code\" and (.error.message | length > 0)" "$@"
}
