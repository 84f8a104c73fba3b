#!/usr/bin/env bash
# deps.sh: `make deps` — installs the Debian packages the judge builds, runs and
# tests with, then each language's toolchain (the `install =` script of every
# languages/*.ini). Idempotent: when everything is there it only checks (a second
# or less), and it runs apt-get update only when a package is missing.
# runsc comes from Debian's bookworm-backports suite (0.0~20240729: 19 months of
# gVisor fixes over bookworm's 2022-12 build), pinned so that nothing else comes
# from there; when that fails, bookworm's runsc, with a warning.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
	# build
	gcc g++ make pkg-config libpq-dev libmicrohttpd-dev libcjson-dev libseccomp-dev
	libpcre2-dev libyaml-dev libcriterion-dev libcurl4-openssl-dev libarchive-dev
	# run and test
	postgresql-15 jq curl unzip patchelf clang-format hyperfine
	# tests/integration/install.sh: systemd-analyze verify of the units
	systemd
	# tests/integration/web.sh: the playground and dashboard in a headless browser
	chromium
	# libFuzzer: clang only recommends its runtime, and recommends are not installed
	clang libclang-rt-14-dev
	# tests/integration/drivers.sh: the Python driver's figures (rich results)
	# under a Python that has matplotlib (the sandbox's 3.12 has none here)
	python3-matplotlib
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

# runsc: the backports build, or bookworm's with a warning (retried after a day)
runsc_min=0.0~20240729
runsc_have=$(dpkg-query -W -f='${db:Status-Status} ${Version}' runsc 2>/dev/null || true)
if [[ $runsc_have != "installed "* ]] || dpkg --compare-versions "${runsc_have#installed }" lt "$runsc_min"; then
	stamp=/var/lib/judge/runsc-backports-failed
	if [ "$(id -u)" != 0 ]; then
		[[ $runsc_have == "installed "* ]] ||
			{ echo "deps.sh: runsc is missing; run 'make deps' as root" >&2; exit 1; }
		echo "deps.sh: warning: runsc ${runsc_have#installed } is older than $runsc_min (bookworm-backports); run 'make deps' as root" >&2
	elif [[ $runsc_have == "installed "* ]] && [ -n "$(find "$stamp" -mmin -1440 2>/dev/null)" ]; then
		echo "deps.sh: warning: using bookworm's runsc ${runsc_have#installed } (bookworm-backports failed $(date -r "$stamp" '+%F %R'))" >&2
	else
		export DEBIAN_FRONTEND=noninteractive
		if ! grep -rqs '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
			# the mirror bookworm itself comes from
			mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
				awk '$2 == "bookworm" { print $1; exit }')
			cat >/etc/apt/sources.list.d/judge-bookworm-backports.sources <<-SRC
				# written by judge's languages/deps.sh: for runsc only (see preferences.d/judge-runsc)
				Types: deb
				URIs: ${mirror:-http://deb.debian.org/debian/}
				Suites: bookworm-backports
				Components: main
				Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
			SRC
		fi
		# priority 1: nothing else from backports, not even as an upgrade; runsc at the
		# priority of bookworm, so its newest version wins and upgrades follow it
		cat >/etc/apt/preferences.d/judge-runsc <<-'PREF'
			# written by judge's languages/deps.sh: only runsc comes from bookworm-backports
			Package: *
			Pin: release n=bookworm-backports
			Pin-Priority: 1

			Package: runsc
			Pin: release n=bookworm-backports
			Pin-Priority: 500
		PREF
		echo "deps.sh: installing runsc from bookworm-backports"
		if apt-get update -qq && apt-get install -y -qq --no-install-recommends runsc/bookworm-backports >/dev/null; then
			rm -f "$stamp"
		else
			mkdir -p "${stamp%/*}" && touch "$stamp"
			echo "deps.sh: warning: cannot install runsc from bookworm-backports; using bookworm's (a 2022-12 build)" >&2
			apt-get install -y -qq --no-install-recommends runsc >/dev/null
		fi
	fi
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

# the zygotes' serving loop (runner/zygote/zcore.c, docs/warm-start.md): built
# here, beside the drivers it is copied with, as Python's zcore.so (loaded by
# python_zygote.py) and inside Node's addon
build_beside() { # out, then its sources (the .c ones compiled)
	local out=$1 s c=()
	shift
	for s in "$@"; do
		if [[ $s == *.c ]]; then c+=("$s"); fi
	done
	for s in "$@"; do
		if [ ! -f "$out" ] || [ "$s" -nt "$out" ]; then
			${CC:-cc} -O2 -Wall -Wextra -shared -fPIC -I. -o "$out" "${c[@]}" || return 1
			return 0
		fi
	done
}
zsrc=(runner/zygote/zcore.c runner/zygote/zcore.h runner/gvisor/init/box_enter.h
	runner/native/nz_job.h)
build_beside languages/drivers/zcore.so "${zsrc[@]}" || exit 1
build_beside languages/drivers/node_zygote.node languages/drivers/node_zygote.c "${zsrc[@]}" ||
	exit 1

# the session drivers, copied where any sandbox can read them: a tree under /tmp
# (a CI clone) is hidden in sandboxes by their private /tmp, so it uses this copy
# (judge/grading/lang.c, LANG_DRIVERS_COPY)
drivers=/opt/judge/runtimes/drivers
mkdir -p "$drivers"
chmod 755 "$drivers"
for f in languages/drivers/*; do
	[ -f "$f" ] || continue
	cmp -s "$f" "$drivers/${f##*/}" || install -m 0644 "$f" "$drivers/${f##*/}"
done
