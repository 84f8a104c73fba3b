#!/usr/bin/env bash
# install-csharp.sh: lays out a .NET 9 shared runtime that sandboxes can read, and
# writes the compile helper that languages/csharp.ini uses.
#
# $runtimes/dotnet9 is a small .NET root, built from two NuGet packages fetched
# from NuGet's flat container (version and SHA-512 pinned below):
#   dotnet                                    the muxer, copied from the machine's SDK
#   host/fxr/9.0.N/libhostfxr.so              \ Microsoft.NETCore.App.Runtime.linux-x64
#   shared/Microsoft.NETCore.App/9.0.N/       /
#   packs/Microsoft.NETCore.App.Ref/9.0.N/ref/net9.0/*.dll   Microsoft.NETCore.App.Ref
#   csc/                                      csc.sh and what it reads
#   session/csharp_driver.dll                 the session driver (languages/drivers/csharp),
#   session/Microsoft.CodeAnalysis*.dll       compiled with csc against Roslyn scripting
#                                             from NuGet (version and SHA-512 pinned below)
#   compsrv/csharp_compiler.dll               the warm compile server (drivers/csharp),
#   compsrv/Microsoft.CodeAnalysis*.dll       on the SDK's own Roslyn and runtime
# csc.sh runs the SDK's Roslyn csc.dll (on the SDK's own runtime) on one file
# against the 9.0 reference assemblies, then adds the main.runtimeconfig.json that
# `dotnet9/dotnet main.dll` needs to run it on 9.0 (no `dotnet build`, no project).
# Idempotent; quick (no network) when present.
set -euo pipefail
runtimes=${JUDGE_RUNTIMES:-/opt/judge/runtimes}
version=9.0.22
runtime_sha512=7faccf273e3989691e2a630d47014e17c14da625c8a67a658347b3cbb0c7dcdc1a9128c42e46c7a5b22ae533065cc6a700fe9eb118dc1893cababb348cf88bc2
ref_sha512=0527d0f3b59a85abeea70ed1bfa47f77560bea0ccd1bbaabbbd7cfc3816ac3a3716b9ee2cd1a6bde18690c40321e11df8bdd101ae867be696cf8959372d46b6f
# Microsoft.CodeAnalysis.CSharp.Scripting and what its net9.0 build depends on
scripting_version=5.0.0
scripting_pkgs=(
	Microsoft.CodeAnalysis.Common:b8ae72b254c94365339f3625b6d16e0c26bfe8aaee3756905bf64d1451ef2becb203aabbbd9e68d0148fbcb8fe0a89b5fd1ef0189d3b7363b494f71b0eb99077
	Microsoft.CodeAnalysis.CSharp:c304ff089390c90ef62dda2ecbb8234bfdd58bdda16c00285376347bfea66f7f7e569eda5ebdcfc6e043ef753642b2b5cf3813cafdd086f24fad05f4122592f1
	Microsoft.CodeAnalysis.Scripting.Common:470b9b30fd66d9eccbe68acd330d0901eb62748c79edb83c83a5c9f243eb4523acb8b5525e4bc4885b5845093c5cb9b1607b4de8fe3eabdf3a82ce023cef8ed0
	Microsoft.CodeAnalysis.CSharp.Scripting:a3e325a17889022f178efed2e6c6c63b725fb40eed137b79c15d6df2375ac8476933201c481801f561aa67f9b755db264716de01e6a8665d088143e0b77d0073
)
# crossgen2 of the runtime's version: the session driver's assemblies compiled ahead
# (ReadyToRun) start in half the CPU time of JIT-only ones
crossgen_sha512=e689cf1a7886e1fac927d49b5a3e317650b9a89c10e1ffcc67ec3762eae46514b9246556778db9c01603a20e353bf491eb9c4f14db9f8679bd17aa4db267606c
nuget=https://api.nuget.org/v3-flatcontainer
dest=$runtimes/dotnet9
sdkroot=/usr/share/dotnet # runs Roslyn; /usr is bound into every sandbox

fail() { echo "install-csharp.sh: $*" >&2; exit 1; }
[ -x "$sdkroot/dotnet" ] || fail "no .NET SDK at $sdkroot (install the dotnet SDK 10 there)"
sdk=$(ls -d "$sdkroot"/sdk/[0-9]*/ 2>/dev/null | sort -V | tail -1)
sdk=${sdk%/}
[ -n "$sdk" ] || fail "no SDK under $sdkroot/sdk"
csc=$sdk/Roslyn/bincore/csc.dll
[ -f "$csc" ] || fail "the SDK at $sdk has no Roslyn/bincore/csc.dll"
refdir=$dest/packs/Microsoft.NETCore.App.Ref/$version/ref/net9.0

mkdir -p "$runtimes"
tmp=$(mktemp -d "$runtimes/.dotnet9.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# fetch NAME SHA512 [VERSION]: downloads NuGet package NAME at VERSION (default
# $version) into $tmp/NAME.nupkg
fetch() {
	local id=${1,,} v=${3:-$version}
	curl -fsSL --retry 3 -o "$tmp/$1.nupkg" "$nuget/$id/$v/$id.$v.nupkg" ||
		fail "cannot download $1 $v from $nuget"
	echo "$2  $tmp/$1.nupkg" | sha512sum --quiet -c - || fail "$1 $v: SHA-512 mismatch"
}

# 1. the runtime root, rebuilt only when its version is missing
if [ ! -f "$dest/shared/Microsoft.NETCore.App/$version/.judge-complete" ] || [ ! -d "$refdir" ]; then
	command -v unzip >/dev/null || fail "unzip is missing (make deps installs it)"
	echo "install-csharp.sh: fetching the .NET $version runtime and reference packs from NuGet"
	fetch Microsoft.NETCore.App.Runtime.linux-x64 "$runtime_sha512"
	fetch Microsoft.NETCore.App.Ref "$ref_sha512"
	r=$tmp/root
	fw=$r/shared/Microsoft.NETCore.App/$version
	mkdir -p "$r/host/fxr/$version" "$fw" "$r/packs/Microsoft.NETCore.App.Ref/$version/ref/net9.0"
	unzip -q "$tmp/Microsoft.NETCore.App.Runtime.linux-x64.nupkg" 'runtimes/linux-x64/*' -d "$tmp/rt"
	mv "$tmp/rt/runtimes/linux-x64/native/libhostfxr.so" "$r/host/fxr/$version/"
	mv "$tmp/rt/runtimes/linux-x64/lib/net9.0/"* "$tmp/rt/runtimes/linux-x64/native/"* "$fw/"
	unzip -q -j "$tmp/Microsoft.NETCore.App.Ref.nupkg" 'ref/net9.0/*.dll' \
		-d "$r/packs/Microsoft.NETCore.App.Ref/$version/ref/net9.0"
	cp "$sdkroot/dotnet" "$r/dotnet"
	# zip entries carry no modes: everything readable, the programs executable
	chmod -R u=rwX,go=rX "$r"
	chmod 755 "$r/dotnet" "$fw/createdump"
	touch "$fw/.judge-complete"
	rm -rf "$dest"
	mv "$r" "$dest"
	rt=$(setpriv --reuid=65534 --regid=65534 --clear-groups env -i "$dest/dotnet" --list-runtimes 2>&1) &&
		[[ $rt == "Microsoft.NETCore.App $version "* ]] ||
		fail "$dest/dotnet does not find .NET $version as an unprivileged user: $rt"
elif ! cmp -s "$sdkroot/dotnet" "$dest/dotnet"; then
	cp "$sdkroot/dotnet" "$tmp/dotnet" && chmod 755 "$tmp/dotnet" && mv "$tmp/dotnet" "$dest/dotnet"
fi

# 2. the compile helper, replaced when what it would be differs
h=$tmp/csc
here=$dest/csc
mkdir "$h"
for f in "$refdir"/*.dll; do printf -- '-r:"%s"\n' "$f"; done >"$h/refs.rsp"
# the global usings of `dotnet new console` (ImplicitUsings), so snippets written
# for an SDK project compile here too
cat >"$h/GlobalUsings.cs" <<'CS'
global using System;
global using System.Collections.Generic;
global using System.IO;
global using System.Linq;
global using System.Net.Http;
global using System.Threading;
global using System.Threading.Tasks;
CS
# 9.0.0 rolls forward to the newest 9.0 patch under $dest (never to 10: the default
# rollForward is Minor, and $dest holds only 9.0). Invariant globalization: no ICU
# to load; non-concurrent GC: one thread fewer.
cat >"$h/main.runtimeconfig.json" <<JSON
{
  "runtimeOptions": {
    "tfm": "net9.0",
    "framework": { "name": "Microsoft.NETCore.App", "version": "9.0.0" },
    "configProperties": {
      "System.Globalization.Invariant": true,
      "System.GC.Concurrent": false
    }
  }
}
JSON
# -noconfig -nostdlib+: only the 9.0 reference assemblies, nothing from the
# runtime Roslyn itself runs on (.NET 10)
cat >"$h/csc.sh" <<SH
#!/bin/sh
# csc.sh [FILE.cs...]: compiles main.cs (default) in the working folder into
# main.dll against the .NET $version reference assemblies and writes
# main.runtimeconfig.json beside it. --version prints versions.
# Written by languages/install-csharp.sh; do not edit.
here=$here
if [ "\${1:-}" = --version ]; then
	roslyn=\$($sdkroot/dotnet $csc -version) || exit 1
	echo "C# Roslyn \${roslyn%% *}, .NET $version"
	exit 0
fi
[ \$# -gt 0 ] || set -- main.cs
$sdkroot/dotnet $csc -nologo -noconfig -nostdlib+ -optimize+ -deterministic -langversion:latest \\
	-out:main.dll @"\$here/refs.rsp" "\$here/GlobalUsings.cs" "\$@" || exit 1
cp "\$here/main.runtimeconfig.json" main.runtimeconfig.json
SH
chmod 755 "$h/csc.sh" "$h"
chmod 644 "$h/refs.rsp" "$h/GlobalUsings.cs" "$h/main.runtimeconfig.json"
if ! { [ -d "$here" ] && diff -r "$h" "$here" >/dev/null 2>&1; }; then
	rm -rf "$here"
	mv "$h" "$here"
	echo "install-csharp.sh: $("$here/csc.sh" --version) via $here/csc.sh, runs with $dest/dotnet"
fi

# 3. the warm compile server (languages/drivers/csharp/csharp_compiler.cs, used by
# csharp.ini's compile_server): built against the SDK's own Roslyn, the assemblies
# csc.dll runs, so that its diagnostics and assemblies are csc's; it runs on the
# SDK's runtime as csc does. Rebuilt when its source or the SDK changed.
csrc=$(cd "$(dirname "$0")" && pwd)/drivers/csharp/csharp_compiler.cs
[ -f "$csrc" ] || fail "no $csrc"
bincore=$sdk/Roslyn/bincore
netref=$(ls -d "$sdkroot"/packs/Microsoft.NETCore.App.Ref/*/ref/net*/ 2>/dev/null | sort -V | tail -1)
netref=${netref%/}
[ -n "$netref" ] || fail "the SDK at $sdkroot has no packs/Microsoft.NETCore.App.Ref"
cs=$dest/compsrv
cstamp=$({ cat "$csrc" "$bincore/csc.dll" "$bincore/Microsoft.CodeAnalysis.CSharp.dll"; echo "$netref $here"; } | sha256sum)
cstamp=${cstamp%% *}
if [ "$(cat "$cs/.judge-stamp" 2>/dev/null)" != "$cstamp" ]; then
	echo "install-csharp.sh: building the C# compile server (Roslyn of $sdk)"
	c=$tmp/compsrv
	mkdir "$c"
	crefs=()
	for f in "$netref"/*.dll; do crefs+=("-r:$f"); done
	"$sdkroot/dotnet" "$csc" -nologo -noconfig -nostdlib+ -optimize+ -nullable+ -deterministic \
		-langversion:latest -out:"$c/csharp_compiler.dll" "${crefs[@]}" \
		-r:"$bincore/Microsoft.CodeAnalysis.dll" -r:"$bincore/Microsoft.CodeAnalysis.CSharp.dll" "$csrc" ||
		fail "cannot compile $csrc"
	cp "$bincore/Microsoft.CodeAnalysis.dll" "$bincore/Microsoft.CodeAnalysis.CSharp.dll" "$c/"
	# csc's own runtime settings, workstation GC (one compile at a time, less memory)
	sed 's/"System.GC.Server": true/"System.GC.Server": false/' "$bincore/csc.runtimeconfig.json" \
		>"$c/csharp_compiler.runtimeconfig.json"
	cat >"$c/compile_server.sh" <<SH
#!/bin/sh
# compile_server.sh: the warm C# compile server (judge/grading/compsrv.h) on the
# SDK's runtime, compiling as $here/csc.sh does. Written by
# languages/install-csharp.sh; do not edit.
exec $sdkroot/dotnet $cs/csharp_compiler.dll $here
SH
	chmod -R u=rwX,go=rX "$c"
	chmod 755 "$c/compile_server.sh" "$tmp"
	# as nobody: it must say READY and compile a program into main.dll
	probe='Console.WriteLine("ok");'
	out=$(cd /tmp && printf 'COMPILE main.cs %d\n%s' "${#probe}" "$probe" |
		setpriv --reuid=65534 --regid=65534 --clear-groups env -i HOME=/tmp DOTNET_NOLOGO=1 \
			DOTNET_EnableDiagnostics=0 "$sdkroot/dotnet" "$c/csharp_compiler.dll" "$here" 2>&1 | head -c 200 | tr -d '\0') || true
	[[ $out == READY*'DONE 0 0 2'*'FILE main.dll'* ]] || fail "the compile server does not compile as an unprivileged user: $out"
	echo "$cstamp" >"$c/.judge-stamp"
	rm -rf "$cs"
	mv "$c" "$cs"
	echo "install-csharp.sh: C# compile server at $cs"
fi

# 4. the session driver, rebuilt when its source, Roslyn scripting or the runtime changed
src=$(cd "$(dirname "$0")" && pwd)/drivers/csharp/csharp_driver.cs
[ -f "$src" ] || fail "no $src"
sess=$dest/session
stamp=$({ cat "$src" "$sdk/Roslyn/bincore/csc.dll"; echo "$scripting_version $version ${scripting_pkgs[*]} $crossgen_sha512"; } | sha256sum)
stamp=${stamp%% *}
[ "$(cat "$sess/.judge-stamp" 2>/dev/null)" = "$stamp" ] && exit 0
echo "install-csharp.sh: building the C# session driver (Roslyn scripting $scripting_version from NuGet)"
s=$tmp/session
mkdir "$s"
for p in "${scripting_pkgs[@]}"; do
	fetch "${p%%:*}" "${p#*:}" "$scripting_version"
	# the net9.0 assemblies only: no satellite resources (English messages are built in)
	unzip -q -o -j "$tmp/${p%%:*}.nupkg" 'lib/net9.0/*.dll' -x 'lib/net9.0/*/*' -d "$s"
done
refs=()
for f in "$s"/Microsoft.CodeAnalysis*.dll; do refs+=("-r:$f"); done
"$sdkroot/dotnet" "$csc" -nologo -noconfig -nostdlib+ -optimize+ -nullable+ -langversion:latest \
	-out:"$s/csharp_driver.dll" @"$here/refs.rsp" "${refs[@]}" "$src" ||
	fail "cannot compile $src"
# ReadyToRun: each assembly in its own version bubble, against the runtime's own
# assemblies; the IL ones stay when crossgen2 fails (slower start, same behaviour)
fetch Microsoft.NETCore.App.Crossgen2.linux-x64 "$crossgen_sha512"
unzip -q "$tmp/Microsoft.NETCore.App.Crossgen2.linux-x64.nupkg" 'tools/*' -d "$tmp/cg"
chmod 755 "$tmp/cg/tools/crossgen2"
mkdir "$tmp/r2r"
for f in "$s"/*.dll; do
	if "$tmp/cg/tools/crossgen2" "$f" -o "$tmp/r2r/${f##*/}" -r "$dest/shared/Microsoft.NETCore.App/$version/*.dll" \
		-r "$s/*.dll" --targetos:linux --targetarch:x64 -O >"$tmp/cg.log" 2>&1; then
		:
	else
		echo "install-csharp.sh: warning: crossgen2 failed on ${f##*/}; it stays IL only: $(tail -3 "$tmp/cg.log")" >&2
		rm -f "$tmp/r2r/${f##*/}"
	fi
done
mv -f "$tmp/r2r"/*.dll "$s/" 2>/dev/null || true
cp "$here/main.runtimeconfig.json" "$s/csharp_driver.runtimeconfig.json"
chmod -R u=rwX,go=rX "$s"
chmod 755 "$tmp" # for the check as nobody
echo "$stamp" >"$s/.judge-stamp"
# a cell as nobody: 6 * 7 must come back as the result
out=$(cd /tmp && printf 'CELL 5 0 0\n6 * 7' | setpriv --reuid=65534 --regid=65534 --clear-groups env -i \
	HOME=/tmp JUDGE_TOKEN=t DOTNET_ROOT="$dest" DOTNET_EnableWriteXorExecute=0 DOTNET_EnableDiagnostics=0 \
	DOTNET_NOLOGO=1 "$dest/dotnet" "$s/csharp_driver.dll" 2>&1) || true
[[ $out == *'"result": "42"'* ]] || fail "the session driver does not run a cell as an unprivileged user: $out"
rm -rf "$sess"
mv "$s" "$sess"
echo "install-csharp.sh: C# session driver at $sess/csharp_driver.dll"
