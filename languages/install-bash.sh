#!/usr/bin/env bash
# install-bash.sh: makes sure Debian's bash is there (languages/bash.ini runs /bin/bash).
set -euo pipefail
[ -x /bin/bash ] && exit 0
echo "install-bash.sh: installing bash"
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bash >/dev/null; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bash >/dev/null
fi
/bin/bash --version | head -1
