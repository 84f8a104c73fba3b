#!/usr/bin/env bash
# deps.sh: `make deps` — installs the Debian packages the judge builds, runs and
# tests with, then each language's toolchain (the `install =` script of every
# languages/*.ini). Idempotent: when everything is there it only checks (a second
# or less), and it runs apt-get update only when a package is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
	# build
	gcc g++ make pkg-config libpq-dev libmicrohttpd-dev libcjson-dev libseccomp-dev
	libpcre2-dev libyaml-dev libcriterion-dev libcurl4-openssl-dev
	# run and test
	runsc postgresql-15 jq curl unzip patchelf clang-format hyperfine
	# libFuzzer: clang only recommends its runtime, and recommends are not installed
	clang libclang-rt-14-dev
)

# `make test` may run in several trees at once: one installer at a time
exec 9>"/tmp/judge-deps.$(id -u).lock"
flock 9

missing=()
installed=$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${packages[@]}" 2>/dev/null || true)
for p in "${packages[@]}"; do
	grep -qx "$p installed" <<<"$installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "deps.sh: missing Debian packages: ${missing[*]}; run 'make deps' as root" >&2
		exit 1
	fi
	echo "deps.sh: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: language runtimes are installed by root; skipping them" >&2
	exit 0
fi
for ini in languages/*.ini; do
	script=$(sed -n 's/^[[:space:]]*install[[:space:]]*=[[:space:]]*//p' "$ini" | tail -1)
	[ -n "$script" ] || continue
	if ! bash "$script"; then
		echo "deps.sh: $script failed (for $ini)" >&2
		exit 1
	fi
done
