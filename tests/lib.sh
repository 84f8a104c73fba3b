# tests/lib.sh: helpers for integration scripts (source it). Each script ends with
# `finish`, which prints "N passed, M failed" and exits non-zero on any failure.
# JUDGE is the binary under test (tests/run.sh sets it; default bin/judge).
set -u
: "${JUDGE:=bin/judge}"
T_PASS=0
T_FAIL=0
T_SKIP=0
T_NAME=$(basename "${BASH_SOURCE[1]:-$0}" .sh)

# free_port: a TCP port for a test server, below the kernel's range of ephemeral
# ports (clients' own ports come from there: a random pick inside it can be
# taken by any connection before the server binds) and unused in any state.
free_port() {
	local low p
	low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
	[ "$low" -gt 12000 ] 2>/dev/null || low=32768
	while :; do
		p=$((10000 + RANDOM % (low - 10000)))
		ss -tanH "( sport = :$p )" 2>/dev/null | grep -q . || { echo "$p"; return; }
	done
}

pass() { T_PASS=$((T_PASS + 1)); echo "ok   $T_NAME: $1"; }
fail() { T_FAIL=$((T_FAIL + 1)); echo "FAIL $T_NAME: $1${2:+ -- $2}"; }
# skip NAME WHY: a check that could not run here; counted, never as passed
skip() { T_SKIP=$((T_SKIP + 1)); echo "skip $T_NAME: $1${2:+ -- $2}"; }

# expect_json NAME JSON JQ_FILTER: passes when the jq filter is true on JSON.
expect_json() {
	local name=$1 json=$2 filter=$3
	if printf '%s' "$json" | jq -e "$filter" >/dev/null 2>&1; then
		pass "$name"
	else
		fail "$name" "filter '$filter' false on: $(printf '%s' "$json" | head -c 600)"
	fi
}

# shipped_ini DST [KEY = VALUE]...: writes DST, a copy of the judge.ini this
# checkout ships with each KEY's line changed to VALUE: a test runs the judge as
# shipped and changes only the keys it is about (the callers say why, beside
# the call). A KEY judge.ini does not have is an error (a typo would otherwise
# be a silent default). Arguments of the form "[section]" are skipped: every
# key already sits in its section. Relative paths stay relative: judge resolves
# them against the folder it is started in.
shipped_ini() {
	local dst=$1 a k v src
	shift
	src=$(dirname "${BASH_SOURCE[0]}")/../judge.ini
	cp "$src" "$dst" || return 1
	for a in "$@"; do
		[[ $a == \[*\] ]] && continue
		k=${a%%=*} v=${a#*=}
		k=${k//[[:space:]]/} v=${v#"${v%%[![:space:]]*}"}
		if ! grep -q "^$k *=" "$dst"; then
			echo "shipped_ini: '$k' is not a key of judge.ini" >&2
			return 1
		fi
		K=$k V=$v awk '$0 ~ "^" ENVIRON["K"] " *=" { print ENVIRON["K"] " = " ENVIRON["V"]; next } { print }' \
			"$dst" >"$dst.tmp" && mv "$dst.tmp" "$dst" || return 1
	done
}

# check NAME CMD...: passes when CMD exits 0.
check() {
	local name=$1
	shift
	if "$@" >/dev/null 2>&1; then pass "$name"; else fail "$name" "command failed: $*"; fi
}

# needs_netns: ends the suite as one skip, counted in the totals, unless it
# runs as root with `ip netns` (suites that build network namespaces)
needs_netns() {
	if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! ip netns list >/dev/null 2>&1; then
		echo "skip $T_NAME: needs root and ip netns"
		echo "0 passed, 0 failed, 1 skipped"
		exit 0
	fi
}

finish() {
	echo "$T_PASS passed, $T_FAIL failed$([ "$T_SKIP" -gt 0 ] && echo ", $T_SKIP skipped")"
	[ "$T_FAIL" -eq 0 ]
}
