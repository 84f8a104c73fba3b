#!/usr/bin/env bash
# problems.sh: problem packages through the API (docs/problems.md): uploaded as
# zips (curl) or folders (`judge problems add`), checked, verified by a worker,
# stored in PostgreSQL, and graded by worker "hosts" that have none of them on
# disk: each `judge worker` runs in a network namespace of its own (reaching
# PostgreSQL over a veth pair, as sessions_hosts.sh does) and a mount namespace
# where the repository's problem folders are hidden under an empty tmpfs, with
# an empty state_dir and no problems_dir. Without root (no namespaces) the
# workers run here, and the hidden-disk checks are counted as skipped.
#
# Covered: every example package of the repository (problems/,
# tests/problems-fixtures/examples/) and of the peers (Kattis problemtools'
# examples/, DOMjudge's example_problems/, read from their git mirrors under
# /work/.mirror when present: used for checking, never committed; skipped and
# counted when absent), each verified and one of its accepted submissions
# graded; a version change while submissions are queued (they keep the version
# they were queued with); refusal and keep; hostile packages (zip bomb, path
# traversal, links, a 10 GB sparse file, an output validator that tries to
# escape or loops); another key's private problem; problems_dir reloaded.
# PROBLEMS_PEERS=0 leaves the peers' packages out; PROBLEMS_REPO=0 the repo's.
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
ROOT=$(pwd)
T_SKIP=0

NETNS=1
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! ip netns list >/dev/null 2>&1; then
	NETNS=0
	echo "note $T_NAME: no root or ip netns: the workers run on this host"
fi
NET="10.$((RANDOM % 200 + 20)).$((RANDOM % 250))"
TAG=$$
NS=(jprob-a-$TAG jprob-b-$TAG)
ROOT_IP=("$NET.1" "$NET.5")
HOST_IP=("$NET.2" "$NET.6")
netns_cleanup() {
	[ "$NETNS" = 1 ] || return 0
	for i in 0 1; do
		ip netns pids "${NS[$i]}" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		ip link del "jpr$i-$TAG" 2>/dev/null
		ip netns del "${NS[$i]}" 2>/dev/null
	done
}
if [ "$NETNS" = 1 ]; then
	for i in 0 1; do
		ip netns add "${NS[$i]}" &&
			ip link add "jpr$i-$TAG" type veth peer name "jph$i-$TAG" &&
			ip link set "jph$i-$TAG" netns "${NS[$i]}" &&
			ip addr add "${ROOT_IP[$i]}/30" dev "jpr$i-$TAG" && ip link set "jpr$i-$TAG" up &&
			ip -n "${NS[$i]}" addr add "${HOST_IP[$i]}/30" dev "jph$i-$TAG" &&
			ip -n "${NS[$i]}" link set "jph$i-$TAG" up && ip -n "${NS[$i]}" link set lo up ||
			{ fail "network namespace ${NS[$i]}"; netns_cleanup; finish; exit 1; }
	done
	SVC_PG_LISTEN="127.0.0.1,${ROOT_IP[0]},${ROOT_IP[1]}"
fi
source tests/svc.sh
trap 'svc_cleanup; netns_cleanup' EXIT
svc_pg_start || { fail "postgresql starts"; finish; exit 1; }
if [ "$NETNS" = 1 ]; then
	echo "host all all $NET.0/24 trust" >>"$SVC_TMP/pg/data/pg_hba.conf"
	svc_as_pg "$SVC_PG_BIN/pg_ctl -D '$SVC_TMP/pg/data' reload" >/dev/null 2>&1
fi
PGPORT=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' <<<"$SVC_DB_URL")
sql() { "$SVC_PG_BIN/psql" -h 127.0.0.1 -p "$PGPORT" -U judge -d postgres -Atc "$1"; }

# serve reads problems_dir: copies of two of the repository's packages
PDIR=$SVC_TMP/pdir
mkdir -p "$PDIR" && cp -r problems/hello problems/sum "$PDIR/"
PORT=$(svc_port)
U=http://127.0.0.1:$PORT
ini=$SVC_TMP/judge.ini
svc_config "$ini" "listen = 127.0.0.1:$PORT" "auth = on" "max_wait_s = 900" \
	"[paths]" "problems_dir = $PDIR" "[problems]" "problem_max_mb = 64" "problem_max_files = 2000"
check "migrate" "$JUDGE" --config "$ini" migrate
K1=$("$JUDGE" --config "$ini" keys create --name teacher 2>/dev/null)
K2=$("$JUDGE" --config "$ini" keys create --name other 2>/dev/null)
KA=$("$JUDGE" --config "$ini" keys create --name admin --admin 2>/dev/null)
svc_serve "$ini" || { fail "serve starts"; finish; exit 1; }
MAIN_PID=$SVC_SERVE_PID
[ "$(sql "SELECT string_agg(id || ':' || current_version, ',' ORDER BY id) FROM problems")" = "hello:1,sum:1" ] &&
	pass "problems_dir's packages are in the database, version 1" ||
	fail "problems_dir loaded" "$(sql 'SELECT id, current_version FROM problems')"

# ---- worker hosts: no problems_dir, an empty state_dir, the repo's packages hidden ----
WPID=()
host_ini() {
	local i=$1 db=$SVC_DB_URL
	[ "$NETNS" = 1 ] && db="host=${ROOT_IP[$i]} port=$PGPORT dbname=postgres user=judge connect_timeout=5"
	mkdir -p "$SVC_TMP/host$i/state"
	cat >"$SVC_TMP/host$i.ini" <<EOF
[paths]
state_dir = $SVC_TMP/host$i/state
problems_dir = $SVC_TMP/host$i/no-problems
[database]
database_url = $db
[sandbox]
sandbox = ${PROBLEMS_SANDBOX:-native}
[worker]
worker_slots = 1
lease_s = 20
EOF
}
host_worker() {
	local i=$1
	if [ "$NETNS" = 1 ]; then
		# nsenter, not ip netns exec: that one mounts a fresh /sys, without the cgroups
		nsenter --net="/run/netns/${NS[$i]}" unshare --uts --mount sh -c "hostname host-$i &&
			mount -t tmpfs none '$ROOT/problems' && mount -t tmpfs none '$ROOT/tests/problems-fixtures' &&
			mount -t tmpfs none '$PDIR' && exec '$JUDGE' --config '$SVC_TMP/host$i.ini' worker" \
			>>"$SVC_TMP/host$i.log" 2>&1 &
	else
		"$JUDGE" --config "$SVC_TMP/host$i.ini" worker >>"$SVC_TMP/host$i.log" 2>&1 &
	fi
	WPID[$i]=$!
	SVC_PIDS+=("${WPID[$i]}")
}
stop_workers() {
	for i in 0 1; do svc_stop "${WPID[$i]}"; done
}
for i in 0 1; do host_ini $i; done

A1=(-H "Authorization: Bearer $K1")
A2=(-H "Authorization: Bearer $K2")
AA=(-H "Authorization: Bearer $KA")
AUTH=("${A1[@]}")
JSON=(-H "Content-Type: application/json")
ZIPH=(-H "Content-Type: application/zip")
# upload KEY-ARRAY-NAME METHOD PATH ZIP: "BODY\nSTATUS"
upload() {
	local -n a=$1
	curl -s -m 1200 -X "$2" "${a[@]}" "${ZIPH[@]}" --data-binary "@$4" -w '\n%{http_code}' "$U$3"
}
# zipdir DIR ZIP: a zip of DIR's contents (links followed, as packaging does)
zipdir() { rm -f "$2" && (cd "$1" && zip -qr "$2" . -x '.*' -x '*/.*'); }
# mkpkg DIR ANSWER [VALIDATOR.py]: a small 2025-09 package whose accepted
# submission prints ANSWER (a generous time limit: the machine may be loaded),
# with an output validator when given
mkpkg() {
	local d=$1
	mkdir -p "$d/data/sample" "$d/data/secret" "$d/submissions/accepted" "$d/submissions/wrong_answer"
	echo "x" >"$d/data/sample/1.in"
	echo "$2" >"$d/data/sample/1.ans"
	echo "y" >"$d/data/secret/2.in"
	echo "$2" >"$d/data/secret/2.ans"
	printf 'print("%s")\n' "$2" >"$d/submissions/accepted/ok.py"
	printf 'print("no")\n' >"$d/submissions/wrong_answer/no.py"
	printf 'problem_format_version: 2025-09\nname: %s\nlimits:\n  time_limit: 5\n' "$(basename "$d")" >"$d/problem.yaml"
	if [ -n "${3:-}" ]; then
		mkdir -p "$d/output_validator" && cp "$3" "$d/output_validator/validate.py"
	fi
}
# submit KEY-ARRAY-NAME PROBLEM SOURCE: the submission's id (empty on an error)
submit() {
	local -n a=$1
	curl -s -m 60 "${a[@]}" "${JSON[@]}" "$U/v1/submissions" \
		-d "$(jq -n --arg p "$2" --arg s "$3" '{language: "python", source: $s, problem: $p}')" | jq -r '.id // empty'
}
result() { curl -s -m 900 "${AUTH[@]}" "$U/v1/submissions/$1?wait=${2:-600}"; }

# ---- a version change while submissions are queued ----
# no worker runs yet: the submissions and the new version's verification wait
P=$SVC_TMP/pkg
mkpkg "$P/flip1" 1
mkpkg "$P/flip2" 2
zipdir "$P/flip1" "$P/flip1.zip"
zipdir "$P/flip2" "$P/flip2.zip"
out=$(upload A1 POST "/v1/problems?id=flip&wait=0" "$P/flip1.zip")
expect_json "upload with wait=0: 202 while it is verified (no worker yet)" "${out%$'\n'*}" \
	'.status == "verifying" and .version == 1 and (.verification.id | type) == "number"'
[ "${out##*$'\n'}" = 202 ] || fail "upload with wait=0 is 202" "${out##*$'\n'}"
host_worker 0
host_worker 1
for _ in $(seq 150); do [ "$(sql 'SELECT count(*) FROM workers')" = 2 ] && break; sleep 0.2; done
if [ "$NETNS" = 1 ]; then
	[ "$(sql "SELECT string_agg(split_part(name, ':', 1), ',' ORDER BY name) FROM workers")" = "host-0,host-1" ] &&
		pass "two worker hosts registered" || fail "two worker hosts" "$(sql 'SELECT name FROM workers')"
fi
for _ in $(seq 600); do [ "$(sql "SELECT status FROM problem_versions WHERE problem_id = 'flip'")" != verifying ] && break; sleep 0.5; done
expect "flip version 1 verified on a worker" 200 '.status == "ready" and .current_version == 1 and .verification.report.ok' \
	GET /v1/problems/flip
stop_workers
ids=()
for _ in 1 2 3; do ids+=("$(submit A1 flip 'print(1)')"); done
out=$(upload A1 PUT "/v1/problems/flip?wait=0" "$P/flip2.zip")
expect_json "PUT a new version while 3 submissions are queued: 202" "${out%$'\n'*}" '.status == "verifying" and .version == 2'
# one worker: the verification (interactive priority) goes before the queued ones
host_worker 0
for _ in $(seq 600); do [ "$(sql "SELECT status FROM problem_versions WHERE problem_id = 'flip' AND version = 2")" != verifying ] && break; sleep 0.5; done
[ "$(sql "SELECT current_version FROM problems WHERE id = 'flip'")" = 2 ] && pass "version 2 verified: now current" ||
	fail "version 2 current" "$(sql "SELECT version, status FROM problem_versions WHERE problem_id = 'flip'")"
ok=0
for id in "${ids[@]}"; do
	r=$(result "$id")
	jq -e '.status == "accepted" and .problem_version == 1' <<<"$r" >/dev/null && ok=$((ok + 1)) ||
		fail "a submission queued before version 2" "$(head -c 300 <<<"$r")"
done
[ $ok = 3 ] && pass "the 3 submissions queued before version 2 were graded against version 1 (accepted)"
[ "$(sql "SELECT count(*) FROM submissions WHERE request ? 'verify' AND request ->> 'problem' = 'flip' AND finished < (SELECT min(finished) FROM submissions WHERE id IN (${ids[0]}, ${ids[1]}, ${ids[2]}))")" = 2 ] &&
	pass "version 2 became current before they were graded (its verification went first)" ||
	fail "version 2 was verified first" "$(sql "SELECT id, finished FROM submissions ORDER BY id")"
host_worker 1
id=$(submit A1 flip 'print(1)')
expect "a submission after version 2: graded against it" 200 '.status == "wrong_answer" and .problem_version == 2' \
	GET "/v1/submissions/$id?wait=600"
id=$(submit A1 flip 'print(2)')
expect "version 2's answer is accepted" 200 '.status == "accepted" and .problem_version == 2' \
	GET "/v1/submissions/$id?wait=600"
expect "an old result does not change" 200 '.status == "accepted" and .problem_version == 1' GET "/v1/submissions/${ids[0]}"
out=$(upload A1 PUT "/v1/problems/flip" "$P/flip2.zip")
expect_json "the same files again: 200, no new version" "${out%$'\n'*}" '.version == 2 and (.versions | length) == 2'
[ "${out##*$'\n'}" = 200 ] || fail "same files: 200" "${out##*$'\n'}"
b0=$(sql "SELECT count(*) FROM problem_blobs")
zipdir "$P/flip2" "$P/flip2b.zip"
printf '# another comment\n' >>"$P/flip2/submissions/accepted/ok.py"
zipdir "$P/flip2" "$P/flip3.zip"
out=$(upload A1 PUT "/v1/problems/flip" "$P/flip3.zip")
[ "$(sql "SELECT count(*) FROM problem_blobs")" = $((b0 + 1)) ] && [ "${out##*$'\n'}" = 201 ] &&
	pass "a version with one changed file stores one new blob (content-addressed)" ||
	fail "one new blob" "$b0 -> $(sql "SELECT count(*) FROM problem_blobs"): $(tail -c 300 <<<"$out")"

# ---- a problem of problems_dir, graded where no problems_dir is ----
id=$(submit A1 hello 'print("Hello World!")')
expect "problems_dir's hello graded on a worker without problems_dir" 200 \
	'.status == "accepted" and .problem_version == 1' GET "/v1/submissions/$id?wait=600"
if [ "$NETNS" = 1 ]; then
	w=$(sql "SELECT split_part(worker, ':', 1) FROM submissions WHERE id = $id")
	[[ $w == host-* ]] && pass "graded on $w (its disk has no packages but the copies it fetched)" ||
		fail "graded on a host" "$w"
	# what the host holds: copies by content hash, nothing else
	h=$(ls "$SVC_TMP/host0/state/problems" "$SVC_TMP/host1/state/problems" 2>/dev/null | grep -cE '^[0-9a-f]{64}$')
	[ "$h" -ge 1 ] && pass "the hosts' copies are named by content hash ($h)" || fail "hosts' copies" "$h"
else
	skip "graded on another host" "no network namespaces"
	skip "the hosts' copies" "no network namespaces"
fi

# ---- refusal, keep, a package the judge cannot grade ----
FIX=tests/problems-fixtures
zipdir "$FIX/verify-mislabeled" "$P/mislabeled.zip"
out=$(upload A1 POST "/v1/problems?id=mislabeled" "$P/mislabeled.zip")
expect_json "mislabeled submissions: 422 package_refused with the report" "${out%$'\n'*}" \
	'.error.code == "package_refused" and (.error.message | test("accepted/wrong.py: got wrong_answer, expected accepted"))
	 and .problem.status == "refused" and .problem.verification.report.failed == 2'
bad "a refused problem cannot be submitted to" 422 unknown_problem POST /v1/submissions \
	'{"language":"python","source":"print(1)","problem":"mislabeled"}'
out=$(upload A1 PUT "/v1/problems/mislabeled?keep=true" "$P/mislabeled.zip")
expect_json "kept anyway: 201, ready, the report still says what failed" "${out%$'\n'*}" \
	'.status == "ready" and .keep and .verification.report.failed == 2 and .current_version == 2'
zipdir "$FIX/verify-broken-checker" "$P/broken.zip"
out=$(upload A1 POST "/v1/problems?id=broken-checker&keep=true" "$P/broken.zip")
expect_json "an output validator that does not compile: 422 package_failed, even with keep" "${out%$'\n'*}" \
	'.error.code == "package_failed" and .problem.status == "failed" and (.error.message | test("does not compile"))'

# ---- hostile packages ----
H=$SVC_TMP/hostile
mkdir -p "$H"
pyzip() { # OUT ENTRIES...: "name=text", "name@link=target", "name%bytes" (zeros, deflated)
	python3 - "$@" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)
for e in sys.argv[2:]:
    if '@link=' in e:
        n, t = e.split('@link=')
        i = zipfile.ZipInfo(n); i.external_attr = 0o120777 << 16
        z.writestr(i, t)
    elif '%' in e:
        n, s = e.split('%')
        i = zipfile.ZipInfo(n); i.compress_type = zipfile.ZIP_DEFLATED
        with z.open(i, 'w', force_zip64=True) as f:
            for _ in range(int(s) >> 20): f.write(bytes(1 << 20))
    else:
        n, t = e.split('=', 1)
        z.writestr(n, t)
z.close()
PY
}
Y="problem.yaml=name: evil"
pyzip "$H/bomb.zip" "$Y" "data/sample/1.in=1" "data/sample/1.ans=1" "data/secret/bomb.in%268435456"
out=$(upload A1 POST "/v1/problems?id=bomb" "$H/bomb.zip")
expect_json "zip bomb ($(stat -c %s "$H/bomb.zip") bytes, 256 MiB inflated): 422 naming the file, stopped at the cap" "${out%$'\n'*}" \
	'.error.code == "invalid_package" and (.error.message | test("problem .bomb.: .data/secret/bomb.in.: the zip.s files are larger than 67108864"))'
pyzip "$H/dotdot.zip" "$Y" "data/sample/1.in=1" "data/sample/1.ans=1" "../../../tmp/judge-evil-$TAG=x"
out=$(upload A1 POST "/v1/problems?id=dotdot" "$H/dotdot.zip")
expect_json "path traversal: 422 naming the entry" "${out%$'\n'*}" \
	'.error.code == "invalid_package" and (.error.message | test("judge-evil.* are not allowed in a path"))'
[ ! -e "/tmp/judge-evil-$TAG" ] && pass "nothing written outside" || fail "a file was written outside"
pyzip "$H/abs.zip" "$Y" "/etc/judge-evil-$TAG=x"
out=$(upload A1 POST "/v1/problems?id=abs" "$H/abs.zip")
expect_json "absolute path: 422" "${out%$'\n'*}" '.error.code == "invalid_package" and (.error.message | test("absolute"))'
pyzip "$H/link.zip" "$Y" "data/sample/1.in=1" "data/sample/1.ans@link=/etc/shadow"
out=$(upload A1 POST "/v1/problems?id=link" "$H/link.zip")
expect_json "a symbolic link: 422 naming it" "${out%$'\n'*}" \
	'.error.code == "invalid_package" and (.error.message | test("data/sample/1.ans. in the zip is not a regular file"))'
mkpkg "$H/sparse" 1
truncate -s 10G "$H/sparse/data/secret/huge.in"
out=$("$JUDGE" --config "$ini" problems add --url "$U" --key "$K1" "$H/sparse" 2>&1)
rc=$?
[ $rc = 1 ] && [[ $out == *"'data/secret/huge.in' (10737418240 bytes) passes the cap"* ]] &&
	pass "a 10 GB sparse test file: judge problems add refuses it unread" || fail "sparse file" "exit $rc: $out"
printf 'x' | curl -s -o /dev/null -w '%{http_code}' "${A1[@]}" -H 'Content-Length: 10737418240' \
	"${ZIPH[@]}" -X POST "$U/v1/problems?id=huge" --data-binary @- -m 20 >"$H/st" 2>/dev/null
[ "$(cat "$H/st")" = 413 ] && pass "a 10 GB body declared: 413 before it is read" || fail "10 GB body" "$(cat "$H/st")"
printf 'not a zip' >"$H/junk.zip"
# uploads held in memory at once are capped (PROBLEMS_UPLOADS_MAX = 4): four
# slow ones hold the places while their bodies trickle in, a fifth is 429
head -c 200000 /dev/urandom >"$H/slow.zip"
slow=()
for n in 1 2 3 4; do
	curl -s -o /dev/null -m 120 --limit-rate 20k "${A1[@]}" "${ZIPH[@]}" --data-binary "@$H/slow.zip" \
		"$U/v1/problems?id=slow$n" &
	slow+=($!)
done
sleep 2
out=$(upload A1 POST "/v1/problems?id=fifth" "$H/junk.zip" 2>/dev/null)
expect_json "a fifth upload while four are read: 429 with Retry-After" "${out%$'\n'*}" '.error.code == "rate_limited"'
wait "${slow[@]}"
out=$(upload A1 POST "/v1/problems?id=sixth" "$H/slow.zip")
expect_json "once they are read, uploads are taken again" "${out%$'\n'*}" '.error.code == "invalid_package"'
out=$(curl -s -m 20 "${A1[@]}" "${JSON[@]}" -X POST "$U/v1/problems?id=x" -d '{}' -w '\n%{http_code}')
expect_json "a JSON body is not a package: 415" "${out%$'\n'*}" '.error.code == "unsupported_media_type"'
out=$(upload A1 POST "/v1/problems?id=junk" "$H/junk.zip")
expect_json "not a zip: 422" "${out%$'\n'*}" '.error.code == "invalid_package" and (.error.message | test("not a zip"))'
pyzip "$H/noyaml.zip" "data/sample/1.in=1"
out=$(upload A1 POST "/v1/problems" "$H/noyaml.zip")
expect_json "no problem.yaml: 422" "${out%$'\n'*}" '.error.code == "invalid_package" and (.error.message | test("no problem.yaml"))'
pyzip "$H/noid.zip" "$Y" "data/sample/1.in=1" "data/sample/1.ans=1"
out=$(upload A1 POST "/v1/problems" "$H/noid.zip")
expect_json "no id and no top folder: 422 missing_field" "${out%$'\n'*}" '.error.code == "missing_field"'
pyzip "$H/noans.zip" "named/problem.yaml=name: x" "named/data/secret/1.in=1"
out=$(upload A1 POST "/v1/problems" "$H/noans.zip")
expect_json "a test without its answer: 422 naming the problem (from the zip's folder) and the file" "${out%$'\n'*}" \
	'.error.code == "invalid_package" and (.error.message | test("^problem .named.: .*1"))'
ls -d "${TMPDIR:-/tmp}"/judge-package-* >/dev/null 2>&1 && fail "refused uploads left folders behind" \
	"$(ls -d "${TMPDIR:-/tmp}"/judge-package-* | head -3)" || pass "refused uploads leave no folder behind"
# an output validator that tries to escape: it rejects when anything leaked
cat >"$H/escape.py" <<EOF
import os, socket, sys
leaks = []
for path in ["/etc/shadow", "$SVC_TMP/host0/state", "$SVC_TMP/host1/state", "$ROOT/problems", "$SVC_TMP/pg"]:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            open(path, "rb").read(1)
        leaks.append(path)
    except Exception:
        pass
for host, port in [("${ROOT_IP[0]}", $PGPORT), ("127.0.0.1", $PGPORT), ("127.0.0.1", $PORT)]:
    try:
        socket.create_connection((host, port), timeout=2).close()
        leaks.append("%s:%d" % (host, port))
    except Exception:
        pass
try:
    open("/judge-escape-$TAG", "w").write("x")
    leaks.append("/ is writable")
except Exception:
    pass
team = sys.stdin.read().split()
want = open(sys.argv[2]).read().split()
with open(os.path.join(sys.argv[3], "judgemessage.txt"), "w") as f:
    f.write("leaks: " + ", ".join(leaks))
sys.exit(43 if leaks or team != want else 42)
EOF
mkpkg "$H/escape" 7 "$H/escape.py"
zipdir "$H/escape" "$H/escape.zip"
out=$(upload A1 POST "/v1/problems?id=escape" "$H/escape.zip")
expect_json "an output validator that tries to read the hosts' files and reach PostgreSQL and the API finds nothing: ready" \
	"${out%$'\n'*}" '.status == "ready" and .verification.report.ok and .verification.report.passed == 2'
[ ! -e "/judge-escape-$TAG" ] && pass "the validator wrote nothing on the host" || fail "the validator wrote /judge-escape-$TAG"
printf 'import sys\nwhile True:\n    pass\n' >"$H/loop.py"
mkpkg "$H/loop" 7 "$H/loop.py"
zipdir "$H/loop" "$H/loop.zip"
out=$(upload A1 POST "/v1/problems?id=loop" "$H/loop.zip")
expect_json "an output validator that loops: refused, in bounded time" "${out%$'\n'*}" \
	'(.error.code == "package_refused" or .error.code == "package_failed") and (.problem.verification.report.submissions | map(select(.path == "accepted/ok.py"))[0].outcome == "fail")'

# ---- another key's private problem ----
AUTH=("${A2[@]}")
bad "another key: GET a private problem is 404" 404 unknown_problem GET /v1/problems/flip
expect "another key: not in its list" 200 '[.problems[].id] | index("flip") == null and index("hello") != null' GET /v1/problems
bad "another key: submitting to it is unknown_problem" 422 unknown_problem POST /v1/submissions \
	'{"language":"python","source":"print(2)","problem":"flip"}'
out=$(upload A2 PUT "/v1/problems/flip" "$P/flip1.zip")
expect_json "another key: PUT is 404" "${out%$'\n'*}" '.error.code == "unknown_problem"'
out=$(upload A2 POST "/v1/problems?id=flip" "$P/flip1.zip")
expect_json "another key: POST of the taken id is 409" "${out%$'\n'*}" '.error.code == "problem_exists"'
bad "another key: PATCH is 404" 404 unknown_problem PATCH /v1/problems/flip '{"visibility":"public"}'
bad "another key: DELETE is 404" 404 unknown_problem DELETE /v1/problems/flip
AUTH=("${AA[@]}")
expect "an admin key sees it" 200 '.id == "flip" and .mine == false and .visibility == "private"' GET /v1/problems/flip
expect "an admin key lists it" 200 '[.problems[].id] | index("flip") != null' GET /v1/problems
AUTH=("${A1[@]}")
bad "PATCH: only visibility" 422 invalid_field PATCH /v1/problems/flip '{"visibility":"everyone"}'
expect "its owner publishes it" 200 '.visibility == "public" and .mine' PATCH /v1/problems/flip '{"visibility":"public"}'
AUTH=("${A2[@]}")
expect "published: another key reads it" 200 '.visibility == "public" and .mine == false' GET /v1/problems/flip
id=$(submit A2 flip 'print(2)')
expect "published: another key solves it" 200 '.status == "accepted" and .problem_version == 3' GET "/v1/submissions/$id?wait=600"
out=$(upload A2 PUT "/v1/problems/flip" "$P/flip1.zip")
expect_json "published: another key may not replace it (403)" "${out%$'\n'*}" '.error.code == "forbidden"'
bad "published: another key may not retire it" 403 forbidden DELETE /v1/problems/flip
AUTH=("${A1[@]}")
expect "its owner retires it" 200 '.retired == true' DELETE /v1/problems/flip
AUTH=("${A2[@]}")
bad "retired: gone for others" 404 unknown_problem GET /v1/problems/flip
bad "retired: no new submissions" 422 unknown_problem POST /v1/submissions \
	'{"language":"python","source":"print(2)","problem":"flip"}'
expect "retired: an old submission keeps its result" 200 '.status == "accepted" and .problem_version == 3' GET "/v1/submissions/$id"
AUTH=("${A1[@]}")

# ---- who may upload ----
P3=$(svc_port)
svc_config "$SVC_TMP/admin-only.ini" "listen = 127.0.0.1:$P3" "[paths]" "problems_dir = $PDIR" \
	"[problems]" "problem_upload = admin"
if svc_serve "$SVC_TMP/admin-only.ini"; then
	st=$(curl -s -o "$H/b" -w '%{http_code}' "${A1[@]}" "${ZIPH[@]}" --data-binary "@$P/flip1.zip" "http://127.0.0.1:$P3/v1/problems?id=nope")
	[ "$st" = 403 ] && jq -e '.error.code == "forbidden"' "$H/b" >/dev/null &&
		pass "problem_upload = admin: another key's upload is 403 before the body is read" || fail "problem_upload = admin" "$st $(cat "$H/b")"
	st=$(curl -s -o "$H/b" -w '%{http_code}' "${AA[@]}" "http://127.0.0.1:$P3/v1/problems")
	[ "$st" = 200 ] && pass "problem_upload = admin: reading still works" || fail "problem_upload = admin: GET" "$st"
fi

# ---- MCP: upload_problem, list_problems, get_problem ----
mkpkg "$P/viamcp" 5
zipdir "$P/viamcp" "$P/viamcp.zip"
body=$(jq -n --rawfile z <(base64 -w0 "$P/viamcp.zip") \
	'{jsonrpc: "2.0", id: 1, method: "tools/call", params: {name: "upload_problem", arguments: {id: "viamcp", package_base64: $z, visibility: "public"}}}')
out=$(curl -s -m 900 "${A1[@]}" "${JSON[@]}" -H 'Accept: application/json, text/event-stream' "$U/mcp" -d "$body")
expect_json "MCP upload_problem: verified and stored" "$out" \
	'.result.isError == false and .result.structuredContent.status == "ready" and .result.structuredContent.visibility == "public"'
out=$(curl -s -m 60 "${A2[@]}" "${JSON[@]}" -H 'Accept: application/json, text/event-stream' "$U/mcp" \
	-d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_problem","arguments":{"id":"viamcp"}}}')
expect_json "MCP get_problem: another key reads the public one" "$out" '.result.structuredContent.samples[0].output == "5\n"'
out=$(curl -s -m 60 "${A2[@]}" "${JSON[@]}" -H 'Accept: application/json, text/event-stream' "$U/mcp" \
	-d '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"upload_problem","arguments":{"id":"viamcp","package_base64":"AAAA","replace":true}}}')
expect_json "MCP upload_problem: another key may not replace it" "$out" '.result.isError == true and (.result.content[0].text | test("403"))'

# ---- problems_dir read at serve's start: a changed package is a new version ----
id=$(submit A1 sum 'a, b = map(int, input().split()); print(a + b)')
result "$id" >/dev/null
echo "# edited" >>"$PDIR/sum/problem.yaml"
svc_stop "$MAIN_PID"
svc_serve "$ini" || { fail "serve restarts"; finish; exit 1; }
MAIN_PID=$SVC_SERVE_PID
[ "$(sql "SELECT current_version FROM problems WHERE id = 'sum'")" = 2 ] && [ "$(sql "SELECT current_version FROM problems WHERE id = 'hello'")" = 1 ] &&
	pass "serve's restart: the edited package is version 2, the other unchanged" ||
	fail "problems_dir reload" "$(sql "SELECT problem_id, version, status FROM problem_versions WHERE problem_id IN ('sum', 'hello')")"
expect "a submission graded before keeps version 1" 200 '.problem_version == 1 and .status == "accepted"' GET "/v1/submissions/$id"

# ---- every example package: uploaded, verified on a worker host, one accepted submission graded ----
PKGS=()
if [ "${PROBLEMS_REPO:-1}" = 1 ]; then
	for d in problems/*/ "$FIX"/examples/*/; do PKGS+=("r-$(basename "$d")=$d"); done
fi
PEERS=$SVC_TMP/peers
if [ "${PROBLEMS_PEERS:-1}" = 1 ]; then
	KT=${PEER_KATTIS:-/work/.mirror/Kattis+problemtools/repo}
	DJ=${PEER_DOMJUDGE:-/work/.mirror/DOMjudge+domjudge/repo}
	mkdir -p "$PEERS/k" "$PEERS/d"
	if git -C "$KT" archive HEAD examples 2>/dev/null | tar -x -C "$PEERS/k" 2>/dev/null; then
		for d in "$PEERS"/k/examples/*/; do PKGS+=("k-$(basename "$d")=$d"); done
	else
		skip "Kattis problemtools' examples" "no mirror at $KT (PEER_KATTIS)"
	fi
	if [ -d "$DJ" ]; then
		for p in $(git -C "$DJ" ls-tree --name-only HEAD example_problems/ 2>/dev/null); do
			[ "$(git -C "$DJ" cat-file -t "HEAD:$p" 2>/dev/null)" = tree ] || continue
			if git -C "$DJ" archive HEAD "$p" 2>/dev/null | tar -x -C "$PEERS/d" 2>/dev/null; then
				PKGS+=("d-$(basename "$p")=$PEERS/d/$p/")
			else
				skip "DOMjudge's $(basename "$p")" "some of its files are missing from the mirror"
			fi
		done
	else
		skip "DOMjudge's example_problems" "no mirror at $DJ (PEER_DOMJUDGE)"
	fi
else
	skip "the peers' example packages" "PROBLEMS_PEERS=0"
fi
# all uploaded first (wait=0): the two hosts verify them side by side
declare -A VER
for e in "${PKGS[@]}"; do
	id=${e%%=*} dir=${e#*=}
	case $id in r-*) # folders through `judge problems add`, the others as zips through curl
		out=$("$JUDGE" --config "$ini" problems add --url "$U" --key "$K1" --id "$id" --keep --wait 0 "$dir" 2>&1)
		rc=$?
		[ $rc = 3 ] && [[ $out == *"still being verified"* ]] || fail "judge problems add $dir" "exit $rc: $out"
		;;
	*)
		zipdir "$dir" "$SVC_TMP/$id.zip"
		out=$(upload A1 POST "/v1/problems?id=$id&keep=true&wait=0" "$SVC_TMP/$id.zip")
		[ "${out##*$'\n'}" = 202 ] || fail "upload $id" "$(tail -c 400 <<<"$out")"
		;;
	esac
done
deadline=$(($(date +%s) + ${PROBLEMS_TIMEOUT:-5400}))
for e in "${PKGS[@]}"; do
	id=${e%%=*} dir=${e#*=}
	while [ "$(sql "SELECT status FROM problem_versions WHERE problem_id = '$id' ORDER BY version DESC LIMIT 1")" = verifying ] &&
		[ "$(date +%s)" -lt "$deadline" ]; do sleep 2; done
	p=$(curl -s -m 60 "${A1[@]}" "$U/v1/problems/$id")
	nsubs=$(find "$dir/submissions" -mindepth 2 -maxdepth 2 -not -name '.*' 2>/dev/null | wc -l)
	where=$(sql "SELECT split_part(s.worker, ':', 1) FROM problem_versions v JOIN submissions s ON s.id = v.verification WHERE v.problem_id = '$id'")
	# the verdicts themselves are judge verify's (verify.sh, icpc.sh): here, that
	# the host verified the whole package, the judge failed nowhere, and an
	# accepted submission was accepted (a loaded machine may time out others)
	summary=$(jq -r '.verification.report | "\(.passed) as expected, \(.failed) not, \(.skipped) skipped" +
		([.submissions[] | select(.outcome == "fail") | "; " + .path + ": " + .message] | join("") | .[0:300])' <<<"$p")
	if jq -e --argjson n "$nsubs" '.status == "ready" and .verification.report.gradable
		and (.verification.report.submissions | length) == $n
		and all(.verification.report.submissions[]; (.message // "") | test("internal_error") | not)
		and any(.verification.report.submissions[]; (.expected == "accepted" or .expected == "CORRECT") and .outcome == "ok")' <<<"$p" >/dev/null; then
		pass "$id: verified on ${where:-?} ($summary)"
	else
		fail "$id: verified" "$(jq -c '{status, error: .verification.report.error, n: (.verification.report.submissions | length), fails: [.verification.report.submissions[]? | select(.outcome == "fail") | {path, message}]}' <<<"$p" | head -c 700)"
		continue
	fi
	# one accepted single-file submission of a language of the judge, graded again as a submission
	path=$(jq -r '[.verification.report.submissions[] | select(.outcome == "ok" and .expected == "accepted")] | first | .path // empty' <<<"$p")
	lang=$(jq -r --arg p "$path" '.verification.report.submissions[] | select(.path == $p) | .language' <<<"$p")
	if [ -z "$path" ] || [ ! -f "$dir/submissions/$path" ]; then
		skip "$id: an accepted submission graded" "no accepted single-file submission in a language of the judge"
		continue
	fi
	sid=$(curl -s -m 60 "${A1[@]}" "${JSON[@]}" "$U/v1/submissions" \
		-d "$(jq -n --arg p "$id" --arg l "$lang" --rawfile s "$dir/submissions/$path" '{language: $l, source: $s, problem: $p}')" | jq -r '.id // empty')
	r=$(result "$sid")
	w=$(sql "SELECT split_part(worker, ':', 1) FROM submissions WHERE id = ${sid:-0}")
	jq -e '.status == "accepted" and .problem_version == 1' <<<"$r" >/dev/null &&
		pass "$id: $path ($lang) accepted as a submission on ${w:-?}" ||
		fail "$id: $path graded" "$(head -c 400 <<<"$r")"
done

if [ "$NETNS" = 1 ]; then
	n=$(sql "SELECT count(DISTINCT split_part(worker, ':', 1)) FROM submissions WHERE worker LIKE 'host-%'")
	[ "$n" = 2 ] && pass "both hosts graded and verified" || fail "both hosts worked" "$n"
	[ "$(sql "SELECT count(*) FROM submissions WHERE worker NOT LIKE 'host-%'")" = 0 ] &&
		pass "no submission was graded anywhere but on the hosts" || fail "graded elsewhere"
else
	skip "both hosts graded" "no network namespaces"
	skip "graded only on the hosts" "no network namespaces"
fi
kill -0 "$MAIN_PID" 2>/dev/null && pass "serve still running" || fail "serve still running"
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/host0.log" "$SVC_TMP/host1.log"
finish
