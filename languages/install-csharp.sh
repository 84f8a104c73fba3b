#!/usr/bin/env bash
# install-csharp.sh: checks the machine's .NET SDK and writes the small compile
# helper that languages/csharp.ini uses: csc.sh runs the SDK's Roslyn csc.dll on
# one file against the reference assemblies, then adds the main.runtimeconfig.json
# that `dotnet main.dll` needs (no `dotnet build`, no project, no NuGet).
# Idempotent; quick when present.
set -euo pipefail
runtimes=${JUDGE_RUNTIMES:-/opt/judge/runtimes}
dest=$runtimes/csharp
root=/usr/share/dotnet # csharp.ini runs $root/dotnet; /usr is bound into every sandbox

fail() { echo "install-csharp.sh: $*" >&2; exit 1; }
[ -x "$root/dotnet" ] || fail "no .NET SDK at $root (install the dotnet SDK 10 there)"
sdk=$(ls -d "$root"/sdk/[0-9]*/ 2>/dev/null | sort -V | tail -1)
sdk=${sdk%/}
[ -n "$sdk" ] || fail "no SDK under $root/sdk"
csc=$sdk/Roslyn/bincore/csc.dll
[ -f "$csc" ] || fail "the SDK at $sdk has no Roslyn/bincore/csc.dll"
runtime=$(ls -d "$root"/shared/Microsoft.NETCore.App/[0-9]*/ 2>/dev/null | sort -V | tail -1)
runtime=$(basename "${runtime%/}")
[ -n "$runtime" ] || fail "no Microsoft.NETCore.App runtime under $root/shared"
refdir=$(ls -d "$root"/packs/Microsoft.NETCore.App.Ref/"$runtime"/ref/net*/ 2>/dev/null | sort -V | tail -1)
if [ -z "$refdir" ]; then
	refdir=$(ls -d "$root"/packs/Microsoft.NETCore.App.Ref/*/ref/net*/ 2>/dev/null | sort -V | tail -1)
fi
refdir=${refdir%/}
[ -n "$refdir" ] || fail "no reference assemblies under $root/packs/Microsoft.NETCore.App.Ref"
tfm=$(basename "$refdir")

mkdir -p "$runtimes"
tmp=$(mktemp -d "$runtimes/.csharp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for f in "$refdir"/*.dll; do printf -- '-r:"%s"\n' "$f"; done >"$tmp/refs.rsp"
# the global usings of `dotnet new console` (ImplicitUsings), so snippets written
# for an SDK project compile here too
cat >"$tmp/GlobalUsings.cs" <<'CS'
global using System;
global using System.Collections.Generic;
global using System.IO;
global using System.Linq;
global using System.Net.Http;
global using System.Threading;
global using System.Threading.Tasks;
CS
# invariant globalization: no ICU to load; non-concurrent GC: one thread fewer
cat >"$tmp/main.runtimeconfig.json" <<JSON
{
  "runtimeOptions": {
    "tfm": "$tfm",
    "framework": { "name": "Microsoft.NETCore.App", "version": "$runtime" },
    "configProperties": {
      "System.Globalization.Invariant": true,
      "System.GC.Concurrent": false
    }
  }
}
JSON
cat >"$tmp/csc.sh" <<SH
#!/bin/sh
# csc.sh [FILE.cs...]: compiles main.cs (default) in the working folder into
# main.dll and writes main.runtimeconfig.json beside it. --version prints versions.
# Written by languages/install-csharp.sh; do not edit.
here=$dest
if [ "\${1:-}" = --version ]; then
	roslyn=\$($root/dotnet $csc -version) || exit 1
	echo "C# Roslyn \${roslyn%% *}, .NET $runtime"
	exit 0
fi
[ \$# -gt 0 ] || set -- main.cs
$root/dotnet $csc -nologo -optimize+ -deterministic -langversion:latest -out:main.dll \\
	@"\$here/refs.rsp" "\$here/GlobalUsings.cs" "\$@" || exit 1
cp "\$here/main.runtimeconfig.json" main.runtimeconfig.json
SH
chmod 755 "$tmp/csc.sh" "$tmp"
chmod 644 "$tmp/refs.rsp" "$tmp/GlobalUsings.cs" "$tmp/main.runtimeconfig.json"
if [ -d "$dest" ] && diff -r "$tmp" "$dest" >/dev/null 2>&1; then
	exit 0
fi
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
echo "install-csharp.sh: $("$dest/csc.sh" --version) via $dest/csc.sh"
