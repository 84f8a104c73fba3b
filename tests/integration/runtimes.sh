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
	if [ $rc -eq 0 ] && [ -z "$out" ] && [ $ms -lt 10000 ]; then
		pass "deps: a second run is quick and quiet ($ms ms)"
	else
		fail "deps: a second run is quick and quiet" "exit $rc after $ms ms: $out"
	fi
fi

py=$R/python3.12/bin/python3.12
if readelf -d "$py" | grep -q 'RUNPATH.*\[\$ORIGIN/../lib\]' &&
	! readelf -d "$R/python3.12/lib/libpython3.12.so.1.0" | grep -q '/root'; then
	pass "python: rpaths are relative"
else
	fail "python: rpaths are relative" "$(readelf -d "$py" | grep -E 'RPATH|RUNPATH')"
fi
out=$(as_nobody "$py" -c 'import sys, ssl, sqlite3, ctypes, decimal; print(sys.prefix, sys.version_info[:2] == (3, 12))' 2>&1)
[ "$out" = "$R/python3.12 True" ] && pass "python: runs as nobody from $R" || fail "python: runs as nobody" "$out"
! find "$R" -perm -o+w -not -type l | grep -q . && pass "runtimes: nothing world-writable" ||
	fail "runtimes: nothing world-writable" "$(find "$R" -perm -o+w -not -type l | head -3)"

out=$(as_nobody "$R/node22/bin/node" -e 'console.log(process.version)' 2>&1)
[[ $out == v22.* ]] && pass "node: v22 runs as nobody" || fail "node: v22 runs as nobody" "$out"

# C#: the helper compiles one file into main.dll + runtimeconfig, no project
mkdir "$tmp/cs" && chmod 777 "$tmp/cs"
printf 'var xs = new List<int> { 1, 2, 3 };\nConsole.WriteLine(xs.Sum() * 7);\n' >"$tmp/cs/main.cs"
if out=$(cd "$tmp/cs" && as_nobody /bin/sh "$R/csharp/csc.sh" main.cs 2>&1); then
	run=$(cd "$tmp/cs" && as_nobody DOTNET_NOLOGO=1 DOTNET_EnableDiagnostics=0 /usr/share/dotnet/dotnet main.dll 2>&1)
	[ "$run" = 42 ] && [ -f "$tmp/cs/main.runtimeconfig.json" ] && [ ! -e "$tmp/cs/obj" ] &&
		pass "csharp: csc.sh compiles one file, dotnet main.dll runs it" ||
		fail "csharp: dotnet main.dll" "$run"
else
	fail "csharp: csc.sh compiles one file" "$out"
fi
out=$(as_nobody /bin/sh "$R/csharp/csc.sh" --version 2>&1)
[[ $out == "C# Roslyn "*", .NET 10."* ]] && pass "csharp: version ($out)" || fail "csharp: version" "$out"
finish
