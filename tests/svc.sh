# tests/svc.sh: start a real service for a test or benchmark (source it after lib.sh):
# a private PostgreSQL (initdb in a temp dir, random port, unprivileged user),
# `judge migrate`, `judge serve` and `judge worker` processes on random ports
# (svc_up), or the whole service as `make run` starts it (svc_make_run). Each
# starts from judge.ini as shipped and changes only the keys its caller names
# (shipped_ini, lib.sh). Everything started is stopped and removed by
# svc_cleanup (set as the EXIT trap).
: "${JUDGE:=bin/judge}"
SVC_TMP=$(mktemp -d /tmp/judge-svc.XXXXXX)
chmod 755 "$SVC_TMP"
SVC_PIDS=()
SVC_UP_DIRS=()
SVC_PG_BIN=${JUDGE_PG_BINDIR:-/usr/lib/postgresql/15/bin}
SVC_PG_USER=
SVC_DB_URL=

svc_cleanup() {
	local p
	for p in "${SVC_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${SVC_PIDS[@]}"; do
		for _ in $(seq $([ "$p" = "${UP_PID:-}" ] && echo 300 || echo 50)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
	done
	if [ -f "$SVC_TMP/pg/data/postmaster.pid" ]; then
		svc_as_pg "$SVC_PG_BIN/pg_ctl -D '$SVC_TMP/pg/data' -m immediate -w stop" >/dev/null 2>&1
	fi
	# the embedded cluster of a `judge up` that did not stop in time (svc_make_run)
	for p in "${SVC_UP_DIRS[@]}"; do
		[ -f "$p/var/pg/data/postmaster.pid" ] &&
			runuser -u "$(stat -c %U "$p/var/pg/data")" -- "$SVC_PG_BIN/pg_ctl" -D "$p/var/pg/data" \
				-m immediate -w stop >/dev/null 2>&1
		[ -n "${SVC_KEEP:-}" ] || rm -rf "$p"
	done
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

# svc_config FILE [KEY = VALUE...]: writes a judge.ini for this service: the
# shipped judge.ini (shipped_ini, lib.sh) with its state and its database made
# this suite's own (suites run side by side), then the keys the caller changes
# (each caller says why). "[section]" arguments of older calls are skipped.
svc_config() {
	local f=$1
	shift
	# state_dir: a private folder, not the checkout's var/ (suites run side by side);
	# database_url: the private PostgreSQL of svc_pg_start
	shipped_ini "$f" "state_dir = $SVC_TMP/state" "database_url = $SVC_DB_URL" "$@"
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

# svc_index PACKAGE==VERSION: a local PEP 503 index serving a wheel it builds
# of PACKAGE (PyPI is not reachable here; tests/integration/lib/pep503.py); sets
# INDEX to its URL and reports whether it came up.
svc_index() {
	python3 tests/integration/lib/pep503.py --root "$SVC_TMP/index" --port 0 \
		--package "$1" >"$SVC_TMP/index.out" 2>"$SVC_TMP/index.log" &
	SVC_PIDS+=($!)
	for _ in $(seq 100); do grep -q '^ready ' "$SVC_TMP/index.out" 2>/dev/null && break; sleep 0.1; done
	INDEX=$(sed -n 's/^ready //p' "$SVC_TMP/index.out")
	[ -n "$INDEX" ] && pass "local package index up ($INDEX)" ||
		fail "local package index up" "$(tail -3 "$SVC_TMP/index.log")"
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

# svc_up KEY_NAME [KEY = VALUE...]: the whole service for an API suite: PostgreSQL,
# judge.ini (svc_config: listen on a free port, auth on, then the caller's keys),
# migrate, an API key, serve and a worker. Sets PORT, U, ini, KEY, AUTH,
# JSON and MAIN_PID (serve); on a failure it reports and ends the suite.
# svc_prepare [KEY = VALUE]...: a private PostgreSQL, a port ($PORT, $U), $ini
# (judge.ini as shipped, auth on, with the lines given) and its migrations
svc_prepare() {
	svc_pg_start || { fail "postgresql starts"; finish; exit 1; }
	PORT=$(svc_port)
	U=http://127.0.0.1:$PORT
	ini=$SVC_TMP/judge.ini
	# listen: a free port (suites run side by side, and a `make run` may hold 8080)
	svc_config "$ini" "listen = 127.0.0.1:$PORT" "auth = on" "$@" || { fail "judge.ini"; finish; exit 1; }
	check "migrate" "$JUDGE" --config "$ini" migrate
}

svc_up() {
	local name=$1
	shift
	svc_prepare "$@"
	KEY=$("$JUDGE" --config "$ini" keys create --name "$name" 2>/dev/null)
	svc_serve "$ini" || { fail "serve starts"; finish; exit 1; }
	MAIN_PID=$SVC_SERVE_PID
	svc_worker "$ini" || { fail "worker starts"; finish; exit 1; }
	AUTH=(-H "Authorization: Bearer $KEY")
	JSON=(-H "Content-Type: application/json")
}

# svc_make_run DIR [KEY = VALUE...]: the service as `make run` starts it:
# `bin/judge up --config judge.ini` in DIR, a folder that mirrors this checkout
# (a symbolic link per top-level entry; bin/judge is $JUDGE) with the shipped
# judge.ini, only the caller's keys changed (listen at least: suites run side by
# side, and a `make run` may hold 8080). Everything else is as shipped: the
# embedded PostgreSQL, state_dir = var (DIR/var, relative), auth on, sandbox =
# auto. Waits until /health answers and the worker has registered; sets U
# (base URL), PORT, KEY (the admin key judge up printed, var/api-key) and
# UP_PID. svc_cleanup stops it (SIGTERM: judge up drains and stops its cluster).
# svc_on_gvisor NAME CHECKS [KEY = VALUE]...: stops the worker and runs the
# function CHECKS again (PFX="gVisor: " naming its checks) on a gVisor worker of
# the same service, its judge.ini as svc_up's but the backend, no session pool
# and the lines given; a counted skip named NAME without runsc
svc_on_gvisor() {
	local name=$1 checks=$2
	shift 2
	svc_stop "$SVC_WORKER_PID"
	local gini=$SVC_TMP/judge-gvisor.ini
	svc_config "$gini" "listen = 127.0.0.1:$PORT" "auth = on" "[sandbox]" "sandbox = gvisor" \
		"session_pool = 0" "$@"
	if ! runsc --version >/dev/null 2>&1; then
		skip "gVisor: $name" "runsc is not installed"
	elif svc_worker "$gini"; then
		PFX="gVisor: " "$checks"
		svc_stop "$SVC_WORKER_PID"
	else
		fail "a gVisor worker starts"
	fi
}

svc_make_run() {
	local dir=$1 f root judge
	shift
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	judge=$(cd "$(dirname "$JUDGE")" && pwd)/$(basename "$JUDGE")
	mkdir -p "$dir" && chmod 755 "$dir" || return 1
	SVC_UP_DIRS+=("$dir")
	for f in "$root"/*; do
		case ${f##*/} in judge.ini | var | bin) ;; *) ln -sfn "$f" "$dir/${f##*/}" ;; esac
	done
	mkdir -p "$dir/bin"
	ln -sfn "$judge" "$dir/bin/judge"
	for f in box_init ns_init; do ln -sfn "$root/bin/$f" "$dir/bin/$f"; done
	shipped_ini "$dir/judge.ini" "$@" || return 1
	PORT=$(sed -n 's/^listen = .*://p' "$dir/judge.ini")
	U=http://127.0.0.1:$PORT
	(cd "$dir" && exec bin/judge up --config judge.ini) >"$dir/up.out" 2>"$dir/up.err" &
	UP_PID=$!
	SVC_PIDS+=("$UP_PID")
	for _ in $(seq 1200); do
		grep -q "^judge is up" "$dir/up.out" 2>/dev/null && break
		kill -0 "$UP_PID" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q "^judge is up" "$dir/up.out" 2>/dev/null; then
		echo "judge up did not come up:" >&2
		tail -20 "$dir/up.err" >&2
		return 1
	fi
	KEY=$(cat "$dir/var/api-key")
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

# svc_session BODY: creates a session from the JSON BODY; its id into SID
# (empty on failure, the answer on stderr)
svc_session() {
	local out
	out=$(req POST /v1/sessions "$1")
	SID=$(jq -r '.id // empty' <<<"${out%$'\n'*}" 2>/dev/null)
	[ "${out##*$'\n'}" = 201 ] && [ -n "$SID" ] || { SID=; echo "create $1: $out" >&2; }
}
# svc_run SID CODE [EXTRA JSON FIELDS]: a cell; the answer in LAST, the status in ST
svc_run() {
	local body out
	body=$(jq -nc --arg c "$2" '{code: $c}')
	[ -n "${3:-}" ] && body=$(jq -c ". + {$3}" <<<"$body")
	out=$(req POST "/v1/sessions/$1/execute" "$body")
	ST=${out##*$'\n'}
	LAST=${out%$'\n'*}
}
# svc_cell NAME SID CODE JQ [EXTRA]: a cell answered 200 whose answer passes JQ
svc_cell() {
	svc_run "$2" "$3" "${5:-}"
	if [ "$ST" != 200 ]; then
		fail "$1" "status $ST: $(head -c 400 <<<"$LAST")"
	else
		expect_json "$1" "$LAST" "$4"
	fi
}
