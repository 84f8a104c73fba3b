#!/usr/bin/env bash
# hostile.sh: every program of tests/hostile/ through `judge run` on both backends.
# Each must end with the right status and must not escape; at the end nothing may
# be left behind (processes of sandbox uids, cgroups, box mounts of dead runs).
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
tmp=$(mktemp -d)
listener=
cleanup() {
	[ -n "$listener" ] && kill "$listener" 2>/dev/null
	rm -rf "$tmp" /tmp/judge-hostile-victim /tmp/judge-hostile-victim-dir
}
trap cleanup EXIT
H=tests/hostile
BACKENDS=${HOSTILE_BACKENDS:-native gvisor}
# a secret in the judge's own environment: no program may see it
export JUDGE_HOSTILE_SECRET=hostile-secret-$$

# hostile NAME BACKEND FILTER ARGS...: runs judge run ARGS and checks FILTER
hostile() {
	local name=$1 sb=$2 filter=$3
	shift 3
	local out start end pid watchdog
	start=$(date +%s%N)
	# in the background to learn its pid (leftovers are named after it), with a
	# watchdog instead of timeout(1), whose child would have another pid
	"$JUDGE" run --sandbox "$sb" "$@" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	echo "$pid" >>"$tmp/pids"
	(sleep 120 && kill -9 "$pid") 2>/dev/null &
	watchdog=$!
	# in gVisor, judge run's first child does the job and tears the sandbox down
	# after judge run exits: its leftovers are named after that child
	while kill -0 "$pid" 2>/dev/null; do
		kids=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null)
		if [ -n "$kids" ]; then
			printf '%s\n' $kids >>"$tmp/pids"
			break
		fi
		sleep 0.01
	done
	wait "$pid"
	kill "$watchdog" 2>/dev/null
	wait "$watchdog" 2>/dev/null
	out=$(cat "$tmp/out")
	end=$(date +%s%N)
	expect_json "$sb: $name ($(((end - start) / 1000000)) ms)" "${out:-{\}}" "$filter"
}

no_leak='(.stdout | test("LEAK") | not)'
for sb in $BACKENDS; do
	hostile "fork bomb ends as timeout" "$sb" '.status == "timeout"' \
		--lang c --time-limit 1000 $H/fork_bomb.c
	hostile "thread bomb is capped by the process limit" "$sb" \
		'.status == "completed" and (.stdout | capture("threads (?<n>[0-9]+)").n | tonumber) < 64' \
		--lang c --processes 64 $H/thread_bomb.c
	hostile "setsid double fork" "$sb" '.status == "completed" and .stdout == "left a daemon\n"' \
		--lang c $H/setsid_double_fork.c
	sleep 0.2
	if pgrep -x hostile-survivr >/dev/null; then
		fail "$sb: setsid double-fork daemon survived the run" "$(pgrep -ax hostile-survivr)"
		pkill -9 -x hostile-survivr
	else
		pass "$sb: setsid double-fork daemon is dead"
	fi
	hostile "SIGSTOP on itself ends as timeout" "$sb" '.status == "timeout"' \
		--lang c --time-limit 300 --wall-limit 1500 $H/sigstop_self.c
	hostile "kill(-1, SIGKILL) hits only its sandbox" "$sb" \
		'.status == "completed" and (.stdout | test("alive"))' --lang c $H/kill_all.c
	hostile "secrets stay unreadable" "$sb" \
		".status == \"completed\" and $no_leak and (.stdout | test(\"done\"))" \
		--lang c $H/read_secrets.c
	rm -f /tmp/judge-hostile-marker
	hostile "writes outside the box fail" "$sb" \
		".status == \"completed\" and $no_leak and .stdout == \"done\\n\"" \
		--lang c $H/write_outside.c
	if [ -e /tmp/judge-hostile-marker ] || [ -e /usr/hostile ]; then
		fail "$sb: a write reached the host"
	else
		pass "$sb: no write reached the host"
	fi
	hostile "filling /tmp stops at its cap" "$sb" \
		'.status == "completed" and (.stdout | capture("after (?<n>[0-9]+) MB").n | tonumber) <= 64' \
		--lang c $H/fill_tmp.c
	hostile "mount, unshare, ptrace, keyctl, io_uring, bpf ... are refused" "$sb" \
		".status == \"completed\" and $no_leak and (.stdout | test(\"done\"))" \
		--lang c $H/forbidden_syscalls.c
	hostile "x32 and int 0x80 system calls are stopped" "$sb" \
		".status == \"completed\" and $no_leak and (.stdout | test(\"x32 killed by signal 31\")) and (.stdout | test(\"done\"))" \
		--lang c $H/x32_and_int80_syscalls.c

	# a listener on the host's loopback; its port file is new for each
	# sandbox (the background shell truncates it only when it starts, so an
	# old file would be read as ready)
	rm -f "$tmp/port"
	python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(8); print(s.getsockname()[1], flush=True)
s.settimeout(60)
try:
    while True: s.accept()[0].close()
except Exception: pass' >"$tmp/port" &
	listener=$!
	for _ in $(seq 300); do [ -s "$tmp/port" ] && break; sleep 0.1; done
	hostile "loopback of the host is unreachable" "$sb" \
		".status == \"completed\" and $no_leak and .stdout == \"blocked\\n\"" \
		--lang c --stdin "$tmp/port" $H/connect_loopback.c
	kill "$listener" 2>/dev/null
	wait "$listener" 2>/dev/null
	listener=

	printf 'victim\n' >/tmp/judge-hostile-victim
	mkdir -p /tmp/judge-hostile-victim-dir
	printf 'keep\n' >/tmp/judge-hostile-victim-dir/keep
	hostile "links planted in the box" "$sb" ".status == \"completed\" and $no_leak" \
		--lang c $H/symlink_plant.c
	if [ "$(cat /tmp/judge-hostile-victim)" = victim ] &&
		[ "$(cat /tmp/judge-hostile-victim-dir/keep)" = keep ] &&
		[ "$(ls /tmp/judge-hostile-victim-dir)" = keep ]; then
		pass "$sb: the host did not follow planted links"
	else
		fail "$sb: a host file changed through a planted link"
	fi

	hostile "#include \"/dev/urandom\" is a compile error" "$sb" '.status == "compile_error"' \
		--lang c $H/include_urandom.c
	hostile "template explosion is a compile error" "$sb" '.status == "compile_error"' \
		--lang cpp $H/template_explosion.cpp
done

# the children tearing gVisor sandboxes down (see hostile) finish first
for p in $(sort -u "$tmp/pids"); do
	for _ in $(seq 600); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
done

# nothing left behind: processes of sandbox uids, cgroups and boxes of dead runs
base_uid=$(sed -n 's/^box_uid *= *//p' judge.ini)
# (runs of other tests may be going on: a process of a sandbox uid is left over
# when its sandbox's init is not the child of a live judge process)
orphans() {
	ps -eo uid=,pid=,ppid=,comm= | awk -v lo="$base_uid" '
	{ uid[$2] = $1; ppid[$2] = $3; comm[$2] = $4 }
	END {
		for (p in uid) {
			if (uid[p] < lo || uid[p] >= lo + 4096) continue
			q = p
			while ((ppid[q] in uid) && uid[ppid[q]] >= lo && uid[ppid[q]] < lo + 4096) q = ppid[q]
			par = ppid[q]
			if (!(par in uid) || par == 1 || comm[par] !~ /^judge/) print uid[p], p, comm[p]
		}
	}' | sort
}
# a sandbox of a suite running beside this one may be ending right now (its
# init gone, its last process not yet): what is left stays, so it is in both
# looks, 3 s apart
first=$(orphans)
left=
if [ -n "$first" ]; then
	sleep 3
	left=$(comm -12 <(echo "$first") <(orphans))
fi
if [ -z "$left" ]; then pass "no process of a sandbox uid left"; else fail "processes left" "$left"; fi
stale=
for d in /sys/fs/cgroup/*/judge/judge-* /sys/fs/cgroup/judge/judge-*; do
	[ -d "$d" ] || continue
	# judge-<owner>-...: the owner is o<pid>x<random> (runner/owner.c)
	pid=$(basename "$d" | cut -d- -f2 | sed -n 's/^o\([0-9]*\)x.*/\1/p')
	[ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null && stale="$stale $d"
done
if [ -z "$stale" ]; then pass "no cgroup of a finished run left"; else fail "cgroups left" "$stale"; fi
box_root=$(sed -n 's/^box_root *= *//p' judge.ini)
stale=
while read -r mp; do
	pid=$(basename "$mp" | sed -n 's/^box-\([0-9]*\)-.*/\1/p')
	[ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null && stale="$stale $mp"
done < <(awk '{print $5}' /proc/self/mountinfo | grep "^$box_root/")
if [ -z "$stale" ]; then pass "no box mount of a finished run left"; else fail "mounts left" "$stale"; fi
# gVisor: containers (runsc state), their cgroups and work folders are named
# jgv-<owner pid>-<n> and <box_root>/gvisor/<owner pid>; none of this suite's runs
# may leave one (other suites kill workers on purpose: theirs wait for a sweep)
stale=
for d in /sys/fs/cgroup/*/judge-gvisor/jgv-* /sys/fs/cgroup/judge-gvisor/jgv-* \
	"$box_root"/runsc/jgv-* "$box_root"/gvisor/*; do
	[ -e "$d" ] || continue
	pid=$(basename "$d" | sed -n 's/^jgv-\([0-9]*\)-.*/\1/p; s/^\([0-9][0-9]*\)$/\1/p')
	[ -n "$pid" ] && grep -qx "$pid" "$tmp/pids" && stale="$stale $d"
done
if [ -z "$stale" ]; then pass "no gVisor container, cgroup or folder of a finished run left"; else fail "gVisor leftovers" "$stale"; fi
finish
