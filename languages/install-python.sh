#!/usr/bin/env bash
# install-python.sh: places CPython 3.12 under the runtimes folder, relocatable and
# readable by the sandbox's unprivileged uid (pyenv's copy lives in root's 0700 home
# and its binaries carry an rpath into it), with pip (from the source's ensurepip
# wheel, offline) for sessions' package installs. Idempotent; quick when present.
set -euo pipefail
runtimes=${JUDGE_RUNTIMES:-/opt/judge/runtimes}
dest=$runtimes/python3.12

# works: the installed copy runs as nobody and imports the C extension modules
works() {
	[ -x "$dest/bin/python3.12" ] &&
		setpriv --reuid=65534 --regid=65534 --clear-groups env -i LANG=C.UTF-8 \
			"$dest/bin/python3.12" -c 'import sys, ssl, ctypes, decimal, json; assert sys.version_info[:2] == (3, 12); assert sys.prefix == sys.argv[1]' "$dest" \
			>/dev/null 2>&1
}
# pip_works: `python3.12 -m pip` runs as nobody
pip_works() {
	setpriv --reuid=65534 --regid=65534 --clear-groups env -i LANG=C.UTF-8 HOME=/tmp \
		"$dest/bin/python3.12" -m pip --version >/dev/null 2>&1
}

# install_pip: pip's bundled wheel of the source's ensurepip, installed by itself
# (a wheel is importable: `python pip.whl/pip install pip.whl`), no network
install_pip() {
	pip_works && return 0
	local from wheel
	from=$(cat "$dest/.judge-source" 2>/dev/null || true)
	wheel=$(ls "$from"/lib/python3.12/ensurepip/_bundled/pip-*.whl 2>/dev/null | sort -V | tail -1)
	if [ -z "$wheel" ]; then
		echo "install-python.sh: no pip wheel under '$from/lib/python3.12/ensurepip/_bundled'" >&2
		exit 1
	fi
	echo "install-python.sh: installing $(basename "$wheel") into $dest"
	env -i LANG=C.UTF-8 HOME=/tmp "$dest/bin/python3.12" "$wheel/pip" install --quiet \
		--no-index --no-cache-dir --disable-pip-version-check --no-warn-script-location \
		--root-user-action=ignore "$wheel"
	"$dest/bin/python3.12" -m compileall -q "$dest/lib/python3.12/site-packages" >/dev/null 2>&1 || true
	chmod -R u=rwX,go=rX "$dest/lib/python3.12/site-packages" "$dest/bin"
	if ! pip_works; then
		echo "install-python.sh: pip under $dest does not run as an unprivileged user" >&2
		exit 1
	fi
}

# link_direct TREE: the dynamic loader finds libpython by its path ($ORIGIN in
# DT_NEEDED), not by a search of the runpath: with a runpath, every start tried
# ~20 paths that do not exist (glibc-hwcaps/*, tls/*, x86_64/*: one openat and one
# stat each, plus libc and libm there) before the right one; under gVisor each is
# a trip through the sentry (~5 % of a Python hello's sandbox CPU, measured). The
# runpaths of libpython and of the extension modules go too when none of what they
# need is in TREE/lib (they need system libraries only): an import of ssl, zlib or
# sqlite3 searched there the same way. Files are patched as copies, then renamed
# over the originals (a program running meanwhile sees the old or the new file).
# Idempotent.
link_direct() {
	local tree=$1 f n keep
	command -v patchelf >/dev/null || return 0
	patch_copy() { # FILE PATCHELF-ARGS...
		local file=$1
		shift
		cp -p "$file" "$file.judge-new" && patchelf "$@" "$file.judge-new" &&
			mv -f "$file.judge-new" "$file"
	}
	f=$tree/bin/python3.12
	if patchelf --print-needed "$f" | grep -qx 'libpython3.12.so.1.0'; then
		patch_copy "$f" --replace-needed libpython3.12.so.1.0 '$ORIGIN/../lib/libpython3.12.so.1.0'
	fi
	for f in "$f" "$tree/lib/libpython3.12.so.1.0" "$tree"/lib/python3.12/lib-dynload/*.so; do
		[ -n "$(patchelf --print-rpath "$f")" ] || continue
		keep=
		for n in $(patchelf --print-needed "$f"); do
			case $n in
			/* | \$*) ;;
			*) [ -e "$tree/lib/$n" ] && keep=1 ;;
			esac
		done
		[ -n "$keep" ] || patch_copy "$f" --remove-rpath
	done
}

if works; then
	link_direct "$dest"
	if ! works; then
		echo "install-python.sh: $dest/bin/python3.12 does not run after its links were made direct" >&2
		exit 1
	fi
	install_pip
	exit 0
fi

src=
for root in ${PYENV_ROOT:+"$PYENV_ROOT"} /root/.pyenv; do
	# the newest 3.12.x that has an interpreter
	for d in $(ls -d "$root"/versions/3.12.* 2>/dev/null | sort -V); do
		[ -x "$d/bin/python3.12" ] && src=$d
	done
	[ -n "$src" ] && break
done
if [ -z "$src" ]; then
	echo "install-python.sh: no CPython 3.12 found (looked for \$PYENV_ROOT/versions/3.12.* and /root/.pyenv/versions/3.12.*); install one with 'pyenv install 3.12' and run 'make deps' again" >&2
	exit 1
fi
command -v patchelf >/dev/null || { echo "install-python.sh: patchelf is missing (apt-get install patchelf)" >&2; exit 1; }

echo "install-python.sh: copying $src to $dest"
mkdir -p "$runtimes"
tmp=$(mktemp -d "$runtimes/.python3.12.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
lib=lib/python3.12
# the test suite, IDLE, tkinter, pip and the static library are not needed to run programs
tar -C "$src" -cf - \
	--exclude="./$lib/test" --exclude="./$lib/idlelib" --exclude="./$lib/tkinter" \
	--exclude="./$lib/turtledemo" --exclude="./$lib/ensurepip" \
	--exclude="./$lib/config-3.12-x86_64-linux-gnu" --exclude="./$lib/site-packages/*" \
	--exclude="./include" --exclude="./share" --exclude="./lib/pkgconfig" \
	--exclude="./bin/pip*" --exclude="./bin/idle*" --exclude="./bin/2to3*" \
	--exclude="./bin/pydoc*" --exclude="./bin/*-config" --exclude="./bin/*.py" . |
	tar -C "$tmp" -xf -

# rpaths relative to each file, so the tree works wherever it is; then libpython
# by its path and no search where nothing is to be found (link_direct)
patchelf --set-rpath '$ORIGIN/../lib' "$tmp/bin/python3.12"
patchelf --set-rpath '$ORIGIN' "$tmp/lib/libpython3.12.so.1.0"
for so in "$tmp/$lib"/lib-dynload/*.so; do
	if [ -n "$(patchelf --print-rpath "$so")" ]; then
		patchelf --set-rpath '$ORIGIN/../..' "$so"
	fi
done
link_direct "$tmp"
# bytecode for the whole stdlib, so no run has to compile (runs cannot write it)
"$tmp/bin/python3.12" -m compileall -q -j 2 "$tmp/$lib" >/dev/null 2>&1 || true
echo "$src" >"$tmp/.judge-source"
chmod -R u=rwX,go=rX "$tmp"
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
if ! works; then
	echo "install-python.sh: $dest/bin/python3.12 does not run as an unprivileged user" >&2
	exit 1
fi
echo "install-python.sh: $("$dest/bin/python3.12" --version) at $dest"
install_pip
