#!/usr/bin/env bash
# install-cpp.sh: makes sure Debian's g++ is installed (languages/cpp.ini runs /usr/bin/g++).
set -euo pipefail
[ -x /usr/bin/g++ ] && exit 0
echo "install-cpp.sh: installing g++"
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends g++ >/dev/null; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends g++ >/dev/null
fi
/usr/bin/g++ --version | head -1
