#!/usr/bin/env bash
# install.sh: `make install DESTDIR=... PREFIX=/usr/local` lays out the binary,
# box_init, languages, problems, a judge.ini with absolute paths and the systemd
# units; then the installed judge, seen at its real prefix (the DESTDIR's
# /usr/local bound over /usr/local in a private mount namespace), runs from
# another folder with no --config: it finds /usr/local/etc/judge/judge.ini.
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
d=$tmp/dest
P=/usr/local

if out=$(make --no-print-directory install DESTDIR="$d" PREFIX=$P 2>&1); then
	pass "make install DESTDIR PREFIX=$P"
else
	fail "make install" "$(tail -5 <<<"$out")"
	finish
	exit
fi
missing=
for f in bin/judge bin/box_init bin/ns_init etc/judge/judge.ini share/judge/languages/csharp.ini \
	share/judge/languages/selftest/python.py share/judge/problems/hello/problem.yaml \
	lib/systemd/system/judge-serve.service lib/systemd/system/judge-worker.service; do
	[ -e "$d$P/$f" ] || missing+=" $f"
done
[ -z "$missing" ] && pass "installed files are there" || fail "installed files are there" "missing:$missing"
ini=$d$P/etc/judge/judge.ini
grep -qx "languages_dir = $P/share/judge/languages" "$ini" &&
	grep -qx "problems_dir = $P/share/judge/problems" "$ini" &&
	grep -qx "state_dir = /var/lib/judge" "$ini" &&
	pass "installed judge.ini has absolute paths" ||
	fail "installed judge.ini has absolute paths" "$(grep '_dir =' "$ini")"
! find "$d" -perm -o+w -not -type l | grep -q . && [ -z "$(find "$d$P/share" ! -perm -o+r)" ] &&
	pass "installed files: readable by all, writable by none but root" ||
	fail "installed files: permissions" "$(find "$d" -perm -o+w -not -type l | head -3)"

# a second install keeps an edited config and puts the new one beside it
echo "# edited" >>"$ini"
make --no-print-directory install DESTDIR="$d" PREFIX=$P >/dev/null 2>&1
tail -1 "$ini" | grep -qx "# edited" && [ -f "$ini.new" ] &&
	pass "a second install keeps an edited judge.ini (new one: judge.ini.new)" ||
	fail "a second install keeps an edited judge.ini" "$(ls "${ini%/*}")"

# inns CMD...: runs CMD with $d$P bound over $P, from a folder with no judge.ini
mkdir "$tmp/elsewhere"
cat >"$tmp/inns.sh" <<'SH'
mount --bind "$DEST/usr/local" /usr/local || exit 99
cd "$WORK" || exit 99
exec "$@"
SH
inns() { DEST=$d WORK=$tmp/elsewhere unshare --mount --propagation private sh "$tmp/inns.sh" "$@"; }
if ! inns true; then
	fail "a private mount namespace" "unshare --mount failed (not root?)"
	finish
	exit
fi

out=$(inns $P/bin/judge --help 2>&1)
grep -q "$P/etc/judge/judge.ini" <<<"$out" && pass "judge --help names the installed config" ||
	fail "judge --help names the installed config" "$out"
# every language's selftest (languages_dir/selftest) works in both backends
# stdout only: the log (e.g. a sweep of a dead process's sandboxes) goes to stderr;
# jq -n 'input | ...', since jq -e passes on an empty input
out=$(inns timeout 300 $P/bin/judge languages --json 2>"$tmp/err")
nlang=$(ls languages/*.ini | wc -l)
jq -en --argjson n "$nlang" 'input | length == $n and all(.[]; .backends.native.works and .backends.gvisor.works)' <<<"$out" >/dev/null 2>&1 &&
	pass "installed judge languages, from another folder: $(jq -r 'map(.name) | join(" ")' <<<"$out") work" ||
	fail "installed judge languages, from another folder" "$(head -c 800 <<<"$out") $(tail -3 "$tmp/err")"
printf 'print(sum(range(10)))\n' >"$tmp/elsewhere/x.py"
printf '#include <stdio.h>\nint main(void) { puts("from c"); return 0; }\n' >"$tmp/elsewhere/x.c"
for run in "x.py 45" "x.c from c"; do
	src=${run%% *} want=${run#* }
	for b in native gvisor; do
		out=$(inns timeout 120 $P/bin/judge run --sandbox $b "$src" 2>"$tmp/err")
		jq -en --arg w "$want" 'input | .status == "completed" and .stdout == $w + "\n"' <<<"$out" >/dev/null 2>&1 &&
			pass "installed judge run $src --sandbox $b, from another folder" ||
			fail "installed judge run $src --sandbox $b" "$(head -c 600 <<<"$out") $(tail -3 "$tmp/err")"
	done
done

if ! command -v systemd-analyze >/dev/null; then
	fail "systemd-analyze verify" "systemd-analyze is missing (make deps installs systemd)"
else
	out=$(inns systemd-analyze verify $P/lib/systemd/system/judge-serve.service \
		$P/lib/systemd/system/judge-worker.service 2>&1)
	[ $? -eq 0 ] && [ -z "$out" ] && pass "systemd-analyze verify: judge-serve, judge-worker" ||
		fail "systemd-analyze verify" "$out"
fi
finish
