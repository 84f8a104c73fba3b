#!/usr/bin/env bash
# install-c.sh: makes sure Debian's gcc is installed (languages/c.ini runs /usr/bin/gcc).
set -euo pipefail
[ -x /usr/bin/gcc ] && exit 0
echo "install-c.sh: installing gcc"
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc >/dev/null; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc >/dev/null
fi
/usr/bin/gcc --version | head -1
