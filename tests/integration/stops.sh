#!/usr/bin/env bash
# stops: every way `judge up` and its worker stop leaves nothing on the host, and
# loses no submission (docs/operations.md, "Stopping"). With sessions and
# submissions running at the stop:
#  1. Ctrl-C in a terminal (SIGINT to the whole foreground group): one drain,
#     exit 0, nothing left (gVisor when runsc works here, else native);
#  2. Ctrl-C twice: handed back at once, exit 0 quickly, still nothing left;
#  3. SIGKILL of the worker: `judge up` restarts it, and the new one reclaims
#     the dead one's sandboxes, mounts and cgroups at its start;
#  4. SIGTERM to `judge up`'s whole process group, native sandbox: one drain.
# After each: no mount below this test's folder, no cgroup below this test's
# cgroup parent, no owner folder, no runsc process of this test, and every
# submission final or queued (none lost, none stuck running).
#
# Leftovers are looked for only where THIS test's processes put things (box_root
# under its temp folder, a cgroup parent of its own): other suites and agents
# run sandboxes on this machine at the same time, under their own.
cd "$(dirname "$0")/../.."
source tests/lib.sh
JUDGE=$(realpath "$JUDGE")
if [ "$(id -u)" != 0 ]; then
	fail "run as root" "the worker's sandboxes need root"
	finish
	exit
fi
source tests/svc.sh
PY=$(command -v python3 || echo /opt/judge/runtimes/python3.12/bin/python3)
T=$SVC_TMP
CGP=judge-stops-$$ # this test's cgroup parent (native: $CGP, gVisor: $CGP-gvisor)
HPORT=$(free_port)
U=http://127.0.0.1:$HPORT
UP=""
cleanup_stops() {
	[ -n "$UP" ] && kill -KILL -- "-$UP" 2>/dev/null
	# what a failed check left, of this test only
	grep " $T/" /proc/self/mountinfo | cut -d' ' -f5 | sort -r | xargs -r umount -l 2>/dev/null
	for d in /sys/fs/cgroup/$CGP /sys/fs/cgroup/$CGP-gvisor /sys/fs/cgroup/*/$CGP \
		/sys/fs/cgroup/*/$CGP-gvisor; do
		[ -d "$d" ] || continue
		find "$d" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
		rmdir "$d" 2>/dev/null
	done
	svc_cleanup
}
trap cleanup_stops EXIT

svc_pg_start || { fail "postgresql starts"; finish; exit 1; }
sb=native
command -v runsc >/dev/null && sb=gvisor
write_ini() { # $1 sandbox
	cat >"$T/judge.ini" <<EOF
[paths]
state_dir = $T/var
languages_dir = $PWD/languages
problems_dir = $PWD/problems
[sandbox]
sandbox = $1
box_root = $T/box
cgroup_parent = $CGP
gvisor_pool = 1
session_pool = 0
[server]
listen = 127.0.0.1:$HPORT
rate_limit_per_min = 0
max_in_flight = 0
[database]
database_url = $SVC_DB_URL
[worker]
worker_slots = 2
drain_s = 60
lease_s = 5
reap_interval_s = 1
EOF
}
write_ini "$sb"
mkdir -p "$T/var"
sql() { psql -XAtq "$SVC_DB_URL" -c "$1"; }

# What this test's processes left on the host; "mounts=0 cgroups=0 owners=0 runsc=0" is clean.
leftovers() {
	local m c o r
	m=$(grep -c " $T/" /proc/self/mountinfo)
	c=$(find /sys/fs/cgroup/$CGP /sys/fs/cgroup/$CGP-gvisor /sys/fs/cgroup/*/$CGP \
		/sys/fs/cgroup/*/$CGP-gvisor -mindepth 1 -type d 2>/dev/null | wc -l)
	o=$(find "$T/box/owners" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	r=$(pgrep -f -- "--root=$T/" | wc -l)
	echo "mounts=$m cgroups=$c owners=$o runsc=$r"
}
expect_clean() { # NAME
	local l
	l=$(leftovers)
	[ "$l" = "mounts=0 cgroups=0 owners=0 runsc=0" ] && pass "$1: nothing left" || fail "$1: nothing left" "$l"
}
# none lost: every submission is final or queued, none stuck running
expect_none_running() { # NAME
	local n
	n=$(sql "SELECT count(*) FROM submissions WHERE status = 'running'")
	[ "$n" = 0 ] && pass "$1: no submission left running" || fail "$1: no submission left running" "$n running"
}

KEY=""
req() { # METHOD PATH [BODY]
	curl -s -X "$1" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
		"$U$2" ${3:+-d "$3"}
}
# load: two sessions (one with a process of its own running in the background),
# two submissions running (a long one, and C: compiled natively under gVisor),
# two queued behind them
load() {
	KEY=$(cat "$T/var/api-key")
	local s id
	for _ in 1 2; do
		s=$(req POST /v1/sessions '{"language": "python"}' | jq -r .id)
		[ -n "$s" ] && [ "$s" != null ] || { echo "no session" >&2; continue; }
		req POST "/v1/sessions/$s/execute" \
			'{"code": "import subprocess\np = subprocess.Popen([\"sleep\", \"1000\"])\nprint(p.pid)"}' >/dev/null
	done
	for src in 'import time\ntime.sleep(4)\nprint(1)' 'import time\ntime.sleep(3)\nprint(2)' \
		'print(3)' 'print(4)'; do
		id=$(req POST /v1/submissions "{\"language\": \"python\", \"source\": \"$src\"}" | jq -r .id)
		echo "$id" >>"$T/ids"
	done
	req POST /v1/submissions '{"language": "c", "source": "#include <stdio.h>\nint main(void){puts(\"c\");return 0;}"}' >/dev/null
	# until the sleepers run: a stop must find work in progress (at load 12 they
	# had not started within 10 s, the drain found nothing, and the second
	# Ctrl-C came after the end)
	for _ in $(seq 1200); do
		[ "$(sql "SELECT count(*) FROM submissions WHERE status = 'running'")" -ge 1 ] && return
		sleep 0.1
	done
	echo "load: nothing running after 120 s" >&2
}

# ---- 1. Ctrl-C in a terminal ----
coproc PTY { "$PY" tests/integration/lib/pty_up.py "$T/up1.log" -- "$JUDGE" --config "$T/judge.ini" up; }
say() { echo "$1" >&"${PTY[1]}"; read -r -t 180 reply <&"${PTY[0]}"; echo "$reply"; }
r=$(say "wait judge is up")
if [ "$r" != seen ]; then
	fail "judge up starts in a terminal ($sb)" "$r: $(tail -5 "$T/up1.log")"
	finish
	exit
fi
pass "judge up starts in a terminal ($sb)"
load
before=$(leftovers)
[ "${before%% *}" != "mounts=0" ] && pass "1: the sandboxes are up before the stop ($before)" ||
	fail "1: the sandboxes are up before the stop" "$before"
say ctrl-c >/dev/null
r=$(say exit)
[ "${r%% *}" = exit ] && [ "$(cut -d' ' -f2 <<<"$r")" = 0 ] && pass "1: Ctrl-C: exit 0 (${r##* } s)" ||
	fail "1: Ctrl-C: exit 0" "$r"
n=$(grep -c "worker: signal" "$T/up1.log")
[ "$n" = 1 ] && ! grep -q "second signal" "$T/up1.log" && pass "1: Ctrl-C is one stop for the worker" ||
	fail "1: Ctrl-C is one stop for the worker" "$(grep "signal" "$T/up1.log")"
grep "worker: stopped in" "$T/up1.log" | grep -qv "handed back" && pass "1: the worker drained cleanly" ||
	fail "1: the worker drained cleanly" "$(grep "worker: stopped" "$T/up1.log")"
expect_clean 1
expect_none_running 1

# ---- 2. Ctrl-C twice ----
coproc PTY { "$PY" tests/integration/lib/pty_up.py "$T/up2.log" -- "$JUDGE" --config "$T/judge.ini" up; }
r=$(say "wait judge is up")
[ "$r" = seen ] || fail "2: judge up starts again" "$r"
# what the first stop left queued runs now
for _ in $(seq 300); do
	[ "$(sql "SELECT count(*) FROM submissions WHERE status IN ('queued', 'running')")" = 0 ] && break
	sleep 0.2
done
n=$(sql "SELECT count(*) FROM submissions WHERE status IN ('queued', 'running')")
[ "$n" = 0 ] && pass "2: what the drain left queued ran after the restart" || fail "2: queued work ran" "$n left"
load
say ctrl-c >/dev/null
say "sleep 0.5" >/dev/null
say ctrl-c >/dev/null
r=$(say exit)
secs=${r##* }
[ "${r%% *}" = exit ] && [ "$(cut -d' ' -f2 <<<"$r")" = 0 ] && pass "2: Ctrl-C twice: exit 0 ($secs s after the second)" ||
	fail "2: Ctrl-C twice: exit 0" "$r"
grep -q "second signal: handing back at once" "$T/up2.log" && grep -q "sandbox: stopped at once" "$T/up2.log" &&
	pass "2: the second Ctrl-C hands back and removes the sandboxes at once" ||
	fail "2: the second Ctrl-C hands back at once" "$(grep -E "signal|stopped" "$T/up2.log")"
expect_clean 2
expect_none_running 2

# ---- 3. SIGKILL of the worker ----
"$JUDGE" --config "$T/judge.ini" up >"$T/up3.log" 2>&1 &
UP=$!
for _ in $(seq 600); do grep -q "^judge is up" "$T/up3.log" && break; sleep 0.1; done
load
owner=$(ls "$T/box/owners")
wpid=$(pgrep -f -- "--config $T/judge.ini worker")
if [ -z "$owner" ] || [ -z "$wpid" ]; then
	fail "3: a worker with an owner folder" "owner '$owner', worker '$wpid'"
else
	m=$(grep -c "$owner" /proc/self/mountinfo)
	kill -KILL "$wpid"
	for _ in $(seq 300); do grep -q "reclaimed what dead owner $owner" "$T/up3.log" && break; sleep 0.1; done
	grep -q "judge worker exited (status 137); restarting it" "$T/up3.log" &&
		grep -q "reclaimed what dead owner $owner" "$T/up3.log" &&
		pass "3: the restarted worker reclaims the killed one's ($m mounts before)" ||
		fail "3: the restarted worker reclaims the killed one's" "$(tail -5 "$T/up3.log")"
	left=$(grep -c "$owner" /proc/self/mountinfo)
	cgs=$(find /sys/fs/cgroup -maxdepth 3 -path "*$CGP*" -name "*$owner*" 2>/dev/null | wc -l)
	[ "$left" = 0 ] && [ "$cgs" = 0 ] && [ ! -e "$T/box/owners/$owner" ] &&
		[ "$(pgrep -fc -- "--root=$T/box/owners/$owner")" = 0 ] &&
		pass "3: no mount, cgroup, folder or runsc process of the killed worker" ||
		fail "3: nothing of the killed worker" "mounts $left, cgroups $cgs, $(ls "$T/box/owners")"
	# its submissions run again (attempt 2), none lost
	for _ in $(seq 300); do
		[ "$(sql "SELECT count(*) FROM submissions WHERE status IN ('queued', 'running')")" = 0 ] && break
		sleep 0.2
	done
	n=$(sql "SELECT count(*) FROM submissions WHERE status IN ('queued', 'running')")
	[ "$n" = 0 ] && pass "3: every submission of the killed worker ended on the new one" ||
		fail "3: every submission ended" "$n queued or running"
fi
kill -TERM "$UP"
wait "$UP"
UP=""
expect_clean "3 (then SIGTERM)"

# ---- 4. SIGTERM to the whole process group, native ----
write_ini native
setsid "$JUDGE" --config "$T/judge.ini" up >"$T/up4.log" 2>&1 &
UP=$!
for _ in $(seq 600); do grep -q "^judge is up" "$T/up4.log" && break; sleep 0.1; done
load
before=$(leftovers)
kill -TERM -- "-$UP"
wait "$UP"
rc=$?
UP=""
[ $rc = 0 ] && pass "4: SIGTERM to the group: exit 0" || fail "4: SIGTERM to the group: exit 0" "status $rc"
n=$(grep -c "worker: signal" "$T/up4.log")
[ "$n" = 1 ] && ! grep -q "second signal" "$T/up4.log" && pass "4: one stop for the worker" ||
	fail "4: one stop for the worker" "$(grep signal "$T/up4.log")"
[ "${before%% *}" != "mounts=0" ] && pass "4: native sandboxes were up ($before)" || fail "4: native sandboxes were up" "$before"
expect_clean 4
expect_none_running 4
finish
