#!/usr/bin/env bash
# runtimes.sh: what `make deps` installed is there, relocatable and usable by an
# unprivileged uid (the sandbox's), and a second `make deps` is quick and quiet.
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
R=/opt/judge/runtimes
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env -i HOME=/tmp LANG=C.UTF-8 PATH=/usr/bin:/bin "$@"; }

if [ "$(id -u)" = 0 ]; then
	t0=$(date +%s%N)
	out=$(bash languages/deps.sh 2>&1)
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	# quick: nothing fetched or built again (a bound far above a loaded
	# machine's 20 s; a real reinstall takes minutes)
	if [ $rc -eq 0 ] && [ -z "$out" ] && [ $ms -lt 120000 ]; then
		pass "deps: a second run is quick and quiet ($ms ms)"
	else
		fail "deps: a second run is quick and quiet" "exit $rc after $ms ms: $out"
	fi
fi

# runsc: bookworm-backports' build (deps.sh falls back to bookworm's with a warning)
v=$(dpkg-query -W -f='${Version}' runsc 2>/dev/null)
dpkg --compare-versions "${v:-0}" ge 0.0~20240729 && pass "runsc: $v (bookworm-backports)" ||
	fail "runsc: 0.0~20240729 or newer (bookworm-backports)" "installed: ${v:-none}"
# the pin: an upgrade takes nothing from bookworm-backports
out=$(apt-get -s -o Debug::NoLocking=1 dist-upgrade 2>&1 | grep '^Inst .*bookworm-backports')
[ -z "$out" ] && pass "apt: an upgrade takes nothing from bookworm-backports" ||
	fail "apt: an upgrade takes nothing from bookworm-backports" "$(head -3 <<<"$out")"

py=$R/python3.12/bin/python3.12
# libpython by its path relative to the binary, no search (install-python.sh's
# link_direct); no runpath anywhere that names an absolute folder
abs_rpaths() {
	local f
	for f in "$py" "$R/python3.12/lib/libpython3.12.so.1.0" "$R"/python3.12/lib/python3.12/lib-dynload/*.so; do
		readelf -d "$f" | grep -E 'R(UN)?PATH' | grep -v '\[\$ORIGIN[^]:]*\]$' | sed "s|^|$f: |"
	done
}
if readelf -d "$py" | grep -q 'NEEDED.*\[\$ORIGIN/../lib/libpython3.12.so.1.0\]' &&
	! readelf -d "$py" | grep -qE 'R(UN)?PATH' && [ -z "$(abs_rpaths)" ]; then
	pass "python: libpython by a relative path, no absolute runpaths"
else
	fail "python: libpython by a relative path, no absolute runpaths" \
		"$(readelf -d "$py" | grep -E 'NEEDED|RPATH|RUNPATH'; abs_rpaths | head -3)"
fi
out=$(as_nobody "$py" -c 'import sys, ssl, sqlite3, ctypes, decimal; print(sys.prefix, sys.version_info[:2] == (3, 12))' 2>&1)
[ "$out" = "$R/python3.12 True" ] && pass "python: runs as nobody from $R" || fail "python: runs as nobody" "$out"
! find "$R" -perm -o+w -not -type l | grep -q . && pass "runtimes: nothing world-writable" ||
	fail "runtimes: nothing world-writable" "$(find "$R" -perm -o+w -not -type l | head -3)"

out=$(as_nobody "$R/node22/bin/node" -e 'console.log(process.version)' 2>&1)
[[ $out == v22.* ]] && pass "node: v22 runs as nobody" || fail "node: v22 runs as nobody" "$out"

# C#: the helper compiles one file into main.dll + runtimeconfig, no project, and
# the program runs on the .NET 9 root under $R/dotnet9 (not the SDK's .NET 10)
D=$R/dotnet9
dn_env=(DOTNET_NOLOGO=1 DOTNET_EnableDiagnostics=0 DOTNET_EnableWriteXorExecute=0 DOTNET_ROOT=$D)
mkdir "$tmp/cs" && chmod 777 "$tmp/cs"
printf 'var xs = new List<int> { 1, 2, 3 };\nConsole.WriteLine(xs.Sum() * 7);\nConsole.WriteLine(Environment.Version);\n' >"$tmp/cs/main.cs"
if out=$(cd "$tmp/cs" && as_nobody /bin/sh "$D/csc/csc.sh" main.cs 2>&1); then
	run=$(cd "$tmp/cs" && as_nobody "${dn_env[@]}" "$D/dotnet" main.dll 2>&1)
	[[ $run == $'42\n9.0.'* ]] && [ -f "$tmp/cs/main.runtimeconfig.json" ] && [ ! -e "$tmp/cs/obj" ] &&
		pass "csharp: csc.sh compiles one file, dotnet9/dotnet main.dll runs it on ${run#*$'\n'}" ||
		fail "csharp: dotnet9/dotnet main.dll" "$run"
else
	fail "csharp: csc.sh compiles one file" "$out"
fi
out=$(as_nobody /bin/sh "$D/csc/csc.sh" --version 2>&1)
[[ $out == "C# Roslyn "*", .NET 9.0."* ]] && pass "csharp: version ($out)" || fail "csharp: version" "$out"
ls "$D"/shared/Microsoft.NETCore.App/ | grep -qv '^9\.0\.' &&
	fail "csharp: only 9.0 under $D/shared" "$(ls "$D"/shared/Microsoft.NETCore.App/)" ||
	pass "csharp: only 9.0 under $D/shared"

# and through the judge, in both sandboxes
printf 'Console.WriteLine(System.Environment.Version);\n' >"$tmp/version.cs"
for b in native gvisor; do
	# stdout only: the judge's start-up may log (a sweep of what another suite left)
	out=$(timeout 120 "$JUDGE" run --sandbox "$b" "$tmp/version.cs" 2>"$tmp/version.err")
	jq -e '.status == "completed" and (.stdout | test("^9\\.0\\.[0-9]+\n$"))' <<<"$out" >/dev/null 2>&1 &&
		pass "csharp/$b: Environment.Version is $(jq -r .stdout <<<"$out" | head -1)" ||
		fail "csharp/$b: Environment.Version is 9.0.x" "$(head -c 600 <<<"$out") $(tail -c 300 "$tmp/version.err")"
done
finish
