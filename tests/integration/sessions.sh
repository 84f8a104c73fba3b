#!/usr/bin/env bash
# sessions.sh: stateful sessions end to end against a real service (tests/svc.sh):
# the agent loop (a CSV uploaded, read by Python, ModuleNotFoundError, an
# install from a local PEP 503 index, the retry with its variables intact, a
# file written and downloaded), state in python and bash, streamed cells (SSE),
# isolation between keys and sessions, TTL expiry, close, per-cell limits
# (timeout, memory, a driver that exits), per-key caps, 20+ malformed requests,
# /metrics, a PostgreSQL restart, and a worker killed with sessions open (410
# session_lost, nothing hangs). SESSIONS_SANDBOX=gvisor runs it on gVisor.
cd "$(dirname "$0")/../.." || exit 1
[ -n "${1:-}" ] && JUDGE=$1
source tests/lib.sh
source tests/svc.sh
SANDBOX=${SESSIONS_SANDBOX:-native}

# ---- a local PEP 503 index with a wheel it builds (PyPI is not reachable here) ----
svc_index tinypkg==1.0

# changed from judge.ini (svc.sh): small size caps and sessions_per_key (under test),
# one slot, a short worker_timeout_s (a lost worker, under test), the local index
# (PyPI is not reachable here), and the backend under test
svc_up sessions-test "max_body_kb = 1024" "max_source_kb = 64" "max_stdin_kb = 64" \
	"[sandbox]" "sandbox = $SANDBOX" "[worker]" "worker_slots = 1" \
	"[sessions]" "pip_index_url = $INDEX" "sessions_per_key = 6" "worker_timeout_s = 6"
KEY2=$("$JUDGE" --config "$ini" keys create --name other 2>/dev/null)
AUTH2=(-H "Authorization: Bearer $KEY2")

# create LANG [EXTRA JSON FIELDS]: a session's id into SID (empty on failure);
# run and cell: svc.sh's svc_run and svc_cell
create() { svc_session "{\"language\": \"$1\"${2:+, $2}}"; }
run() { svc_run "$@"; }
cell() { svc_cell "$@"; }

# ---- create ----
t0=$(date +%s%N)
create python
t1=$(date +%s%N)
PY=$SID
[ -n "$PY" ] && pass "create python: 201 with an id ($(((t1 - t0) / 1000000)) ms)" ||
	{ fail "create python"; finish; exit 1; }
expect "get the session" 200 '.id == "'"$PY"'" and .language == "python" and
	.status == "ready" and (.created_at | test("Z$")) and (.expires_at | length > 0) and
	.idle_ttl == 600 and .idle_action == "close" and .execution_count == 0' GET "/v1/sessions/$PY"
expect "list: this key's open sessions" 200 '[.sessions[].id] | index("'"$PY"'") != null' \
	GET /v1/sessions

# ---- the agent loop ----
CSV=$'city,temp\nOslo,4\nLima,19\nCairo,27\n'
expect "upload a CSV (raw body, folders made)" 200 '.path == "data/weather.csv" and .size == 34' \
	PUT "/v1/sessions/$PY/files/data/weather.csv" "$CSV" -H "Content-Type: text/csv"
cell "python reads the CSV into a variable" "$PY" \
	$'import csv\nrows = list(csv.DictReader(open("data/weather.csv")))\nlen(rows)' \
	'.status == "ok" and .result == "3" and .error == null and .execution_count == 1'
cell "import of a missing package: ModuleNotFoundError" "$PY" $'import tinypkg' \
	'.status == "error" and .error.name == "ModuleNotFoundError" and
	(.error.value | contains("tinypkg")) and (.error.traceback | contains("python_driver") | not)'
expect "install tinypkg from the local index" 200 '.status == "ok" and .packages == ["tinypkg==1.0"] and
	(.time_ms | type == "number")' POST "/v1/sessions/$PY/install" \
	'{"manager": "pip", "packages": ["tinypkg==1.0"]}'
cell "the retry: the package imports, the variables are intact" "$PY" \
	$'import tinypkg\nprint(tinypkg.hello())\nmax(rows, key=lambda r: int(r["temp"]))["city"]' \
	'.status == "ok" and .stdout == "hello from tinypkg 1.0\n" and .result == "'"'Cairo'"'"'
cell "the code writes an output file" "$PY" \
	$'import os\nos.makedirs("out", exist_ok=True)\nopen("out/chart.png", "wb").write(bytes([137, 80, 78, 71, 13, 10, 26, 10]) + bytes(range(256)))' \
	'.status == "ok" and .result == "264"'
curl -s -m 30 "${AUTH[@]}" -D "$SVC_TMP/png.h" -o "$SVC_TMP/chart.png" "$U/v1/sessions/$PY/files/out/chart.png"
python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); sys.exit(0 if d == bytes([137,80,78,71,13,10,26,10]) + bytes(range(256)) else 1)' \
	"$SVC_TMP/chart.png" && pass "download the file: the same bytes" || fail "download the file" "$(head -3 "$SVC_TMP/png.h")"
grep -qi '^content-type: image/png' "$SVC_TMP/png.h" && pass "download: Content-Type image/png" ||
	fail "download: Content-Type image/png" "$(cat "$SVC_TMP/png.h")"
expect "list the folder" 200 '([.files[] | select(.name == "data" and .type == "dir")] | length == 1)
	and ([.files[] | select(.name == "out")] | length == 1)' GET "/v1/sessions/$PY/files"
expect "list a subfolder (?dir=)" 200 '.files == [{"name": "chart.png", "type": "file", "size": 264,
	"mtime": .files[0].mtime}]' GET "/v1/sessions/$PY/files?dir=out"
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)))' >"$SVC_TMP/bin.dat"
out=$(curl -s -m 30 -X PUT "${AUTH[@]}" --data-binary @"$SVC_TMP/bin.dat" -w '\n%{http_code}' \
	"$U/v1/sessions/$PY/files/bin.dat")
expect_json "binary upload (every byte value)" "${out%$'\n'*}" '.size == 256'
cell "python reads the binary upload" "$PY" 'open("bin.dat", "rb").read() == bytes(range(256))' \
	'.result == "True"'
expect "delete a file" 200 '.deleted == true' DELETE "/v1/sessions/$PY/files/bin.dat"
bad "a deleted file is gone" 404 not_found GET "/v1/sessions/$PY/files/bin.dat"
cell "a planted symlink" "$PY" 'import os; os.symlink("/etc/passwd", "link"); os.symlink("/etc", "dirlink")' \
	'.status == "ok"'
bad "a symlink the code planted is not followed (read)" 400 bad_path GET "/v1/sessions/$PY/files/link"
bad "nor through a folder link" 400 bad_path GET "/v1/sessions/$PY/files/dirlink/passwd"
bad "nor written through" 400 bad_path PUT "/v1/sessions/$PY/files/dirlink/x" "boom"
expect "the symlink is listed, as a symlink" 200 \
	'[.files[] | select(.name == "link")][0].type == "symlink"' GET "/v1/sessions/$PY/files"

# ---- files served from the API's origin never run as its pages ----
grep -qi "^content-disposition: inline" "$SVC_TMP/png.h" && grep -qi "^content-security-policy: sandbox" "$SVC_TMP/png.h" &&
	pass "an image: inline, under a sandbox policy" || fail "an image: inline, under a sandbox policy" "$(cat "$SVC_TMP/png.h")"
cell "the code writes HTML and SVG" "$PY" \
	$'open("out/page.html", "w").write("<script>alert(1)</script>")\nopen("out/pic.svg", "w").write("<svg xmlns=\'http://www.w3.org/2000/svg\'><script>alert(1)</script></svg>")' \
	'.status == "ok"'
for f in page.html pic.svg; do
	h=$(curl -s -m 30 "${AUTH[@]}" -D - -o /dev/null "$U/v1/sessions/$PY/files/out/$f" | tr -d '\r')
	grep -qi "^content-disposition: attachment; filename\*=UTF-8''$f\$" <<<"$h" &&
		grep -qi "^content-security-policy: sandbox" <<<"$h" && grep -qi '^x-content-type-options: nosniff' <<<"$h" &&
		pass "$f: an attachment under a sandbox policy" || fail "$f: an attachment under a sandbox policy" "$h"
done

# ---- file names and races: 4xx or success, never 500 ----
N256=$(printf 'n%.0s' $(seq 256))
bad "a 256-byte file name (read)" 400 bad_path GET "/v1/sessions/$PY/files/$N256"
bad "a 256-byte file name (write)" 400 bad_path PUT "/v1/sessions/$PY/files/d/$N256" "x"
bad "a 256-byte folder name (delete)" 400 bad_path DELETE "/v1/sessions/$PY/files/$N256/x"
expect "a 255-byte name is fine" 200 '.size == 1' PUT "/v1/sessions/$PY/files/${N256:1}" "x"
# a program of the session rewrites a tree while the API removes it
cell "a background writer starts" "$PY" \
	$'import subprocess\nwriter = subprocess.Popen(["bash", "-c", "while :; do mkdir -p t/a/b t/c; for i in 1 2 3 4 5 6; do echo x > t/a/b/f$i; echo y > t/c/g$i; done; sleep 0.002; done"])' \
	'.status == "ok"'
: >"$SVC_TMP/race.codes"
for i in $(seq 30); do
	racers=() # only these: a bare wait would wait for serve and worker too
	curl -s -m 60 -o /dev/null -w '%{http_code}\n' -X DELETE "${AUTH[@]}" "$U/v1/sessions/$PY/files/t" >>"$SVC_TMP/race.codes" &
	racers+=($!)
	curl -s -m 60 -o /dev/null -w '%{http_code}\n' "${AUTH[@]}" "$U/v1/sessions/$PY/files/t/a/b/f1" >>"$SVC_TMP/race.codes" &
	racers+=($!)
	curl -s -m 60 -o /dev/null -w '%{http_code}\n' "${AUTH[@]}" "$U/v1/sessions/$PY/files?dir=t/a/b" >>"$SVC_TMP/race.codes" &
	racers+=($!)
	wait "${racers[@]}"
done
codes=$(sort "$SVC_TMP/race.codes" | uniq -c | tr -s ' ' | tr '\n' ';')
[ "$(wc -l <"$SVC_TMP/race.codes")" = 90 ] && ! grep -qv '^[24]' "$SVC_TMP/race.codes" &&
	pass "90 deletes, reads and lists racing the writer: 2xx or 4xx only ($codes)" ||
	fail "deletes, reads and lists racing the writer: 2xx or 4xx only" "$codes"
cell "the writer stops" "$PY" 'writer.kill(); writer.wait()' '.status == "ok"'

# ---- on the host: the session's folder is its own (mode 0700, a uid of its own) ----
expect "a marker file" 200 '.size == 6' PUT "/v1/sessions/$PY/files/marker-$PY" "marker"
BOX_ROOT=$(sed -n 's/^box_root *= *//p' "$ini" | tail -1)
BOX_ROOT=${BOX_ROOT:-/run/judge}
# boxes live in their owner's folder: <box_root>/owners/<owner>/box-N (runner/owner.h)
box=$(dirname "$(find "$BOX_ROOT" -maxdepth 6 -name "marker-$PY" 2>/dev/null | head -1)")
if [ "$box" = . ]; then
	fail "the session's folder on the host" "no box under $BOX_ROOT holds marker-$PY"
else
	top=$box
	while [ "$top" != "$BOX_ROOT" ] && [[ "$(basename "$top")" != box-* ]]; do top=$(dirname "$top"); done
	read -r mode uid < <(stat -c '%a %u' "$top")
	[ "$mode" = 700 ] && pass "the session's folder is mode 0700" || fail "the session's folder is mode 0700" "$mode"
	# box_uid 61000: one-shot commands use 61000..62023, grading 62024..66119 (slots.h)
	[ "$uid" -ge $((61000 + 5120)) ] && pass "owned by a session uid ($uid), outside the runs' ranges" ||
		fail "owned by a session uid, outside the runs' ranges" "uid $uid"
fi

# ---- state and results ----
cell "state: a variable" "$PY" 'x = 41' '.status == "ok" and .result == null'
cell "state: it is there in the next cell" "$PY" 'x + 1' '.result == "42"'
cell "rich results: display() and the value's _repr_html_, in order, the value main" "$PY" \
	$'class H:\n    def _repr_html_(self):\n        return "<b>hi</b>"\n    def __repr__(self):\n        return "H()"\ndisplay(H())\nH()' \
	'.status == "ok" and .result == "H()" and (.results | length) == 2 and
	.results[0] == {"text/html": "<b>hi</b>", "text/plain": "H()", "is_main_result": false} and
	.results[1]["text/html"] == "<b>hi</b>" and .results[1].is_main_result == true'
cell "rich results: a _repr_png_'s bytes as base64" "$PY" \
	$'class P:\n    def _repr_png_(self):\n        return b"\\x89PNG\\r\\n\\x1a\\n" + bytes(range(16))\nP()' \
	'.results[0]["image/png"] == "iVBORw0KGgoAAQIDBAUGBwgJCgsMDQ4P"'
cell "no value, no display: an empty results list" "$PY" 'z = 1' '.results == []'
cell "a function defined earlier" "$PY" $'def sq(n):\n    return n * n' '.status == "ok"'
cell "called later" "$PY" 'sq(x)' '.result == "1681"'
cell "stdout and stderr apart" "$PY" $'import sys\nprint("out")\nprint("err", file=sys.stderr)' \
	'.stdout == "out\n" and .stderr == "err\n"'
cell "stdin" "$PY" 'input() + input()' '.result == "'"'ab'"'"' '"stdin": "a\nb\n"'
cell "an exception: name, value, the user's traceback" "$PY" $'def f():\n    return 1 / 0\nf()' \
	'.status == "error" and .error.name == "ZeroDivisionError" and
	(.error.traceback | contains("f()")) and (.error.traceback | contains("python_driver") | not)'
cell "a syntax error" "$PY" 'def (' '.status == "error" and .error.name == "SyntaxError"'
cell "expected_output: accepted" "$PY" 'print(x)' '.verdict == "accepted"' '"expected_output": "41\n"'
cell "expected_output: wrong_answer with feedback" "$PY" 'print(x)' \
	'.verdict == "wrong_answer" and (.feedback.message | length > 0)' '"expected_output": "40\n"'
cell "compare tokens" "$PY" 'print(" 41 ")' '.verdict == "accepted"' \
	'"expected_output": "41", "compare": "tokens"'

create bash
SH=$SID
out=$(req POST /v1/sessions '{"language": "javascript"}')
[ "${out##*$'\n'}" = 201 ] && [ "$(jq -r .language <<<"${out%$'\n'*}")" = node ] &&
	pass "alias: javascript is node" || fail "alias: javascript is node" "$out"
req DELETE "/v1/sessions/$(jq -r .id <<<"${out%$'\n'*}")" >/dev/null
[ -n "$SH" ] && pass "create bash" || fail "create bash"
cell "bash: a variable" "$SH" 'X=7; cd /tmp' '.status == "ok"'
cell "bash: kept, with the folder" "$SH" 'echo "$X $PWD"' '.stdout == "7 /tmp\n"'
cell "bash: a failing command is an error" "$SH" 'false' \
	'.status == "error" and .error.name == "ExitStatus"'
cell "bash: runs on after that" "$SH" 'echo ok' '.status == "ok" and .stdout == "ok\n"'
# a cell's own env: its code and children see it; the next cell does not
cell "bash: a cell's env" "$SH" 'echo "$GREETING/$(sh -c '"'"'echo $GREETING'"'"')/$X"' \
	'.stdout == "hi there/hi there/8\n"' '"env": {"GREETING": "hi there", "X": "8"}'
cell "bash: gone at the next cell, X as it was (not exported)" "$SH" \
	'echo "${GREETING:-unset}/$X/$(sh -c '"'"'echo ${X:-unset}'"'"')"' '.stdout == "unset/7/unset\n"'
cell "python: a cell's env" "$PY" 'import os; os.environ["GREETING"]' '.result == "'"'"'hi'"'"'"' \
	'"env": {"GREETING": "hi"}'
cell "python: gone at the next cell" "$PY" '"GREETING" in os.environ' '.result == "False"'
# an answered call keeps its env's names, not their values (migration 0018)
cell "python: a cell's secret" "$PY" 'os.environ["API_TOKEN"]' '.result == "'"'"'s3cr3t-v4lue'"'"'"' \
	'"env": {"API_TOKEN": "s3cr3t-v4lue"}'
n=$("$SVC_PG_BIN/psql" -XAtq "$SVC_DB_URL" -c "SELECT count(*) FILTER (WHERE request::text LIKE '%s3cr3t-v4lue%'), count(*) FILTER (WHERE request->'env' = '[\"API_TOKEN=\"]') FROM session_calls")
[ "$n" = "0|1" ] && pass "the answered call's env value is not kept, its name is" ||
	fail "the answered call's env in PostgreSQL" "value kept | name kept: $n"
# a session's own env: every context's driver and every process starts with it
create python '"env": {"SESSION_VAR": "s1", "LANG": "C.UTF-8"}'
SE=$SID
cell "session env: the cell sees it" "$SE" 'import os; (os.environ["SESSION_VAR"], os.environ["LANG"])' \
	'.result == "('"'"'s1'"'"', '"'"'C.UTF-8'"'"')"'
cell "session env: a cell's own env wins for that cell only" "$SE" 'os.environ["SESSION_VAR"]' \
	'.result == "'"'"'c1'"'"'"' '"env": {"SESSION_VAR": "c1"}'
cell "session env: then the session's again" "$SE" 'os.environ["SESSION_VAR"]' '.result == "'"'"'s1'"'"'"'
cell "session env: a bash context made later has it" "$SE" 'echo "$SESSION_VAR"' '.stdout == "s1\n"' \
	'"language": "bash"'
expect "session env: a process has it" 201 '.pid > 0' POST "/v1/sessions/$SE/processes" \
	'{"argv": ["sh", "-c", "echo \"$SESSION_VAR\" > proc-env.txt"]}'
expect "session env: the process ends" 200 '.exit_code == 0' \
	GET "/v1/sessions/$SE/processes/$(jq -r .pid <<<"$LAST")?wait_ms=20000"
out=$(curl -s "${AUTH[@]}" "$U/v1/sessions/$SE/files/proc-env.txt")
[ "$out" = s1 ] && pass "session env: what the process wrote" || fail "session env: what the process wrote" "$out"
# /home/user: the session folder again, the home and working directory of its code
q() { printf "'%s'" "$1"; }
cell "home: the cwd, ~ and HOME are /home/user" "$SE" \
	'import os; (os.getcwd(), os.path.expanduser("~"), os.environ["HOME"])' \
	".result == \"($(q /home/user), $(q /home/user), $(q /home/user))\""
cell "home: a file written at /home/user is the one at /box" "$SE" \
	'open("/home/user/home.txt", "w").write("at home"); open("/box/home.txt").read()' \
	".result == \"$(q 'at home')\""
out=$(curl -s "${AUTH[@]}" "$U/v1/sessions/$SE/files/home.txt")
[ "$out" = "at home" ] && pass "home: the files API reads what the code wrote there" ||
	fail "home: the files API reads it" "$out"
expect "home: a file put through the files API" 200 '.size == 2' PUT "/v1/sessions/$SE/files/d/up.txt" "up"
cell "home: the code finds it under /home/user" "$SE" 'open("/home/user/d/up.txt").read()' \
	".result == \"$(q up)\""
cell "home: bash's pwd and \$HOME, ~ expanded" "$SE" 'pwd; echo "$HOME"; cat ~/home.txt' \
	'.stdout == "/home/user\n/home/user\nat home"' '"language": "bash"'
cell "home: a javascript context's process.cwd() and os.homedir()" "$SE" \
	'[process.cwd(), require("os").homedir()].join(" ")' ".result == \"$(q '/home/user /home/user')\"" \
	'"language": "node"'
cell "node: display.html, then a value: /v1's results, the value's last and main" "$SE" \
	'display.html("<b>x</b>"); 1 + 1' '.result == "2" and (.results | length) == 2 and
	.results[0]["text/html"] == "<b>x</b>" and .results[0].is_main_result == false and
	.results[1]["text/plain"] == "2" and .results[1].is_main_result == true' '"language": "node"'
expect "home: a process starts" 201 '.pid > 0' \
	POST "/v1/sessions/$SE/processes" '{"argv": ["sh", "-c", "pwd > proc-home.txt; echo $HOME >> proc-home.txt"]}'
expect "home: the process ends" 200 '.exit_code == 0' \
	GET "/v1/sessions/$SE/processes/$(jq -r .pid <<<"$LAST")?wait_ms=20000"
out=$(curl -s "${AUTH[@]}" "$U/v1/sessions/$SE/files/proc-home.txt")
[ "$out" = $'/home/user\n/home/user' ] && pass "home: the process's pwd and HOME" ||
	fail "home: the process's pwd and HOME" "$out"
req DELETE "/v1/sessions/$SE" >/dev/null
# PATCH {idle_ttl}: a new idle TTL, the end moved to now + it
create bash
PT=$SID
expect "PATCH idle_ttl: the session, with it" 200 '.idle_ttl == 1234 and .status == "ready"' \
	PATCH "/v1/sessions/$PT" '{"idle_ttl": 1234}'
end=$(jq -r .expires_at <<<"$LAST")
left=$(($(date -d "$end" +%s) - $(date +%s)))
[ "$left" -gt 1100 ] && [ "$left" -le 1235 ] && pass "PATCH idle_ttl: the end is about 1234 s away ($left s)" ||
	fail "PATCH idle_ttl: the end" "$end: $left s away"
bad "PATCH idle_ttl: 0" 422 invalid_field PATCH "/v1/sessions/$PT" '{"idle_ttl": 0}'
bad "PATCH idle_ttl: past the cap" 422 invalid_field PATCH "/v1/sessions/$PT" '{"idle_ttl": 99999999}'
bad "PATCH: another field" 422 invalid_field PATCH "/v1/sessions/$PT" '{"language": "python"}'
other_key() { local AUTH=("${AUTH2[@]}"); req "$@"; }
EXPECT_REQ=other_key bad "PATCH: another key's session" 404 not_found PATCH "/v1/sessions/$PT" '{"idle_ttl": 60}'
req DELETE "/v1/sessions/$PT" >/dev/null
bad "PATCH: a closed session" 410 session_closed PATCH "/v1/sessions/$PT" '{"idle_ttl": 60}'
bad "session env: a bad name" 422 invalid_field POST /v1/sessions '{"language": "bash", "env": {"A-B": "x"}}'
bad "session env: the judge's own names" 422 invalid_field POST /v1/sessions \
	'{"language": "bash", "env": {"JUDGE_X": "x"}}'
bad "env: not an object" 422 invalid_field POST "/v1/sessions/$SH/execute" '{"code": "1", "env": ["A=1"]}'
bad "env: a bad name" 422 invalid_field POST "/v1/sessions/$SH/execute" '{"code": "1", "env": {"1A": "x"}}'
bad "env: a value not a string" 422 invalid_field POST "/v1/sessions/$SH/execute" '{"code": "1", "env": {"A": 1}}'
bad "env: the judge's own names" 422 invalid_field POST "/v1/sessions/$SH/execute" \
	'{"code": "1", "env": {"JUDGE_TOKEN": "x"}}'

create node
ND=$SID
[ -n "$ND" ] && pass "create node (alias javascript works too)" || fail "create node"
cell "node: let and a function" "$ND" 'let n = 20; function twice(v) { return 2 * v }' '.status == "ok"'
cell "node: kept; the last value is the result" "$ND" 'twice(n) + 2' '.result == "42"'
cell "node: top-level await" "$ND" 'await new Promise(r => setTimeout(() => r(n), 10))' '.result == "20"'
cell "node: a thrown error" "$ND" 'null.x' '.status == "error" and .error.name == "TypeError"'
cell "node: a missing module" "$ND" 'require("left-pad")' \
	'.status == "error" and (.error.value | test("Cannot find module"))'
req DELETE "/v1/sessions/$ND" >/dev/null
create csharp '"limits": {"memory_mb": 1024}'
CS=$SID
if [ -n "$CS" ]; then
	pass "create csharp"
	cell "csharp: a variable" "$CS" 'var total = 40;' '.status == "ok"'
	cell "csharp: kept; the script's value is the result" "$CS" 'total + 2' '.result == "42"'
	cell "csharp: a compile error" "$CS" 'int x = "s";' '.status == "error"'
	req DELETE "/v1/sessions/$CS" >/dev/null
else
	fail "create csharp"
fi

# ---- streamed output (SSE) ----
SSE=$SVC_TMP/sse.out
python3 tests/clients/sse_client.py "$U/v1/sessions/$PY/execute" --key "$KEY" --timeout 60 \
	--post "$(jq -nc '{code: "import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.4)\nx * 2"}')" \
	>"$SSE" 2>&1
expect_json "SSE: 200 text/event-stream" "$(head -1 "$SSE")" \
	'.status == 200 and (.content_type | startswith("text/event-stream"))'
expect_json "SSE: start first, stdout events as printed, then result, then done with the whole JSON" \
	"$(jq -s . "$SSE")" '[.[] | select(.event) | .event] as $e |
	$e[0] == "start" and ([.[] | select(.event == "start")][0].data | fromjson | .execution_count > 0) and
	($e | index("result")) > ($e | rindex("stdout")) and $e[-1] == "done" and
	([.[] | select(.event == "stdout") | .data | fromjson] | add) == "0\n1\n2\n" and
	([.[] | select(.event == "done")][0].data | fromjson | .result == "82" and .status == "ok")'
expect_json "SSE: the first line came before the cell ended" "$(jq -s . "$SSE")" \
	'([.[] | select(.event == "stdout")][0].t) + 0.5 < ([.[] | select(.event == "done")][0].t)'
python3 tests/clients/sse_client.py "$U/v1/sessions/$PY/execute" --key "$KEY" --timeout 60 \
	--post '{"code": "raise ValueError(\"no\")"}' >"$SSE" 2>&1
expect_json "SSE: an exception gives an error event" "$(jq -s . "$SSE")" \
	'[.[] | select(.event == "error")][0].data | fromjson | .name == "ValueError"'

# ---- interrupts ----
expect "interrupt with no cell running: false" 200 '.interrupted == false' \
	POST "/v1/sessions/$PY/interrupt" '{}'
# a long cell (its own limit 20 s), interrupted once it runs: the driver's
# KeyboardInterrupt is its answer, and the context keeps its state
req POST "/v1/sessions/$PY/execute" \
	"$(jq -nc '{code: "import time\nkept = 7\ntime.sleep(1000)", timeout_ms: 20000}')" \
	>"$SVC_TMP/long.out" &
long=$!
hit=false
for _ in $(seq 60); do
	sleep 0.25
	out=$(req POST "/v1/sessions/$PY/interrupt" '{}')
	[ "$(jq -r .interrupted <<<"${out%$'\n'*}" 2>/dev/null)" = true ] && hit=true && break
done
wait "$long"
[ "$hit" = true ] && pass "interrupt: the running cell is interrupted (interrupted: true)" ||
	fail "interrupt: the running cell is interrupted" "last answer: $out"
expect_json "interrupt: the cell ends as the driver's KeyboardInterrupt, not restarted" \
	"$(sed '$d' "$SVC_TMP/long.out")" \
	'.status == "error" and .error.name == "KeyboardInterrupt" and .restarted == false'
cell "interrupt: the context's state is kept" "$PY" 'kept' '.result == "7"'
# a streamed cell whose client leaves after its start is interrupted, as E2B's
# code interpreter does: else it would hold the session to its limit (20 s)
python3 tests/clients/sse_client.py "$U/v1/sessions/$PY/execute" --key "$KEY" --timeout 60 \
	--close-after 1 \
	--post "$(jq -nc '{code: "import time\nleft = 8\ntime.sleep(1000)", timeout_ms: 20000}')" \
	>"$SSE" 2>&1
cell "a streamed cell's client left: the next cell runs, the state kept" "$PY" 'left' \
	'.result == "8"'
expect "a streamed cell's client left: the cell was interrupted (its history)" 200 \
	'[.calls[] | select(.kind == "execute" and (.code // "" | contains("left = 8")))][0] |
	.status == "error"' GET "/v1/sessions/$PY/history"

# ---- isolation ----
EXPECT_REQ=req2
req2() { local AUTH=("${AUTH2[@]}"); req "$@"; }
bad "another key: GET the session is 404" 404 not_found GET "/v1/sessions/$PY"
bad "another key: execute is 404" 404 not_found POST "/v1/sessions/$PY/execute" '{"code": "x"}'
bad "another key: its files are 404" 404 not_found GET "/v1/sessions/$PY/files/out/chart.png"
bad "another key: close is 404" 404 not_found DELETE "/v1/sessions/$PY"
bad "another key: interrupt is 404" 404 not_found POST "/v1/sessions/$PY/interrupt" '{}'
expect "another key lists none of them" 200 '.sessions == []' GET "/v1/sessions?all=1"
EXPECT_REQ=req
cell "another session does not see the first's variables" "$SH" 'echo "${x:-unset}"' \
	'.stdout == "unset\n"'
bad "nor its files" 404 not_found GET "/v1/sessions/$SH/files/out/chart.png"

# ---- per-cell limits ----
cell "timeout: the cell ends as timeout" "$PY" 'while True: pass' \
	'.status == "timeout" and .wall_ms < 5000' '"timeout_ms": 1000'
restarted=$(jq -r .restarted <<<"$LAST")
cell "after a timeout the session goes on" "$PY" '"alive"' '.status == "ok" and .result == "'"'alive'"'"'
if [ "$restarted" = false ]; then
	cell "after a timeout: the state is kept (the driver survived)" "$PY" 'x' '.result == "41"'
else
	cell "after a timeout: restarted, and the message says state was lost" "$PY" 'x' \
		'.error.name == "NameError"'
fi
cell "memory: a cell over the session's memory" "$PY" 'b = b"x" * (3 * 1024 ** 3)' \
	'.status == "memory_limit" or (.status == "error" and .error.name == "MemoryError")'
cell "the session still answers after that" "$PY" '1 + 1' '.result == "2"'
cell "the driver killed by the code: restarted, with a message" "$PY" 'import os; os._exit(3)' \
	'.restarted == true and (.message | contains("lost"))'
cell "after the restart: a fresh state, files kept" "$PY" \
	$'print("x" in dir())\nopen("out/chart.png", "rb").read(4)' \
	'.stdout == "False\n" and .result == "b'"'"'\\x89PNG'"'"'"'
cell "output over the cap: output_limit" "$PY" 'print("y" * (40 * 1024 * 1024))' \
	'.status == "output_limit"'
expect "execution_count counts every cell" 200 '.execution_count >= 20 and .restarts >= 1' \
	GET "/v1/sessions/$PY"

# ---- malformed requests: each a 4xx with the error JSON ----
bad "bad JSON" 400 invalid_json POST /v1/sessions '{"language": '
bad "not JSON at all" 400 invalid_json POST "/v1/sessions/$PY/execute" 'print(1)'
bad "unknown language" 422 unknown_language POST /v1/sessions '{"language": "cobol"}'
bad "a language without sessions" 422 unknown_language POST /v1/sessions '{"language": "c"}'
bad "language missing" 422 missing_field POST /v1/sessions '{}'
bad "idle_ttl not a number" 422 invalid_field POST /v1/sessions '{"language": "python", "idle_ttl": "1h"}'
bad "idle_ttl over the cap" 422 invalid_field POST /v1/sessions '{"language": "python", "idle_ttl": 99999999}'
bad "limits: memory too small" 422 invalid_field POST /v1/sessions \
	'{"language": "python", "limits": {"memory_mb": 1}}'
bad "limits: an unknown field" 422 invalid_field POST /v1/sessions \
	'{"language": "python", "limits": {"gpus": 1}}'
bad "code missing" 422 missing_field POST "/v1/sessions/$PY/execute" '{}'
bad "code not a string" 422 invalid_field POST "/v1/sessions/$PY/execute" '{"code": 5}'
bad "an unknown field" 422 invalid_field POST "/v1/sessions/$PY/execute" '{"code": "1", "lang": "x"}'
bad "timeout_ms out of range" 422 invalid_field POST "/v1/sessions/$PY/execute" '{"code": "1", "timeout_ms": 0}'
bad "huge code" 413 too_large POST "/v1/sessions/$PY/execute" \
	"$(python3 -c 'import json; print(json.dumps({"code": "#" * 70000}))')"
bad "a body over max_body" 413 too_large PUT "/v1/sessions/$PY/files/big" "x" \
	--data-binary @<(head -c 1100000 /dev/zero)
req_plain() { local JSON=(-H "Content-Type: text/plain"); req "$@"; }
EXPECT_REQ=req_plain
bad "wrong content type on execute" 415 unsupported_media_type POST "/v1/sessions/$PY/execute" '{"code": "1"}'
EXPECT_REQ=req
bad "unknown session" 404 not_found POST /v1/sessions/00000000-0000-4000-8000-000000000000/execute '{"code": "1"}'
bad "a session id that is no UUID" 404 not_found GET /v1/sessions/12345
bad "path: .." 400 bad_path GET "/v1/sessions/$PY/files/../../../etc/passwd"
bad "path: encoded .." 400 bad_path GET "/v1/sessions/$PY/files/%2e%2e/%2e%2e/etc/passwd"
bad "path: an absolute one (//)" 400 bad_path GET "/v1/sessions/$PY/files//etc/passwd"
# '.' parts are dropped (issue 22: ?dir=. lists the folder), '..' never
expect "path: a dot part is dropped (a/./b is a/b)" 200 '.path == "a/b"' PUT "/v1/sessions/$PY/files/a/./b" "x"
bad "path: a control character" 400 bad_path GET "/v1/sessions/$PY/files/a%0ab"
bad "list: ?dir=.." 400 bad_path GET "/v1/sessions/$PY/files?dir=.."
bad "a folder read as a file" 409 is_a_directory GET "/v1/sessions/$PY/files/out"
bad "a missing file" 404 not_found GET "/v1/sessions/$PY/files/nope.txt"
bad "install: ../x" 422 invalid_package POST "/v1/sessions/$PY/install" \
	'{"manager": "pip", "packages": ["../x"]}'
bad "install: an option as a name" 422 invalid_package POST "/v1/sessions/$PY/install" \
	'{"manager": "pip", "packages": ["--index-url=http://evil.example/simple"]}'
bad "install: a URL" 422 invalid_package POST "/v1/sessions/$PY/install" \
	'{"manager": "npm", "packages": ["https://evil.example/x.tgz"]}'
bad "install: unknown manager" 422 invalid_field POST "/v1/sessions/$PY/install" \
	'{"manager": "apt", "packages": ["curl"]}'
bad "install: no packages" 422 invalid_field POST "/v1/sessions/$PY/install" \
	'{"manager": "pip", "packages": []}'
bad "a method the route does not take" 405 method_not_allowed PUT "/v1/sessions/$PY" "x"
req_nokey() { local AUTH=(); req "$@"; }
EXPECT_REQ=req_nokey
bad "no key" 401 unauthorized GET /v1/sessions
EXPECT_REQ=req

# ---- TTL, close, caps ----
create python '"idle_ttl": 2'
TTL=$SID
cell "a short-lived session answers at first" "$TTL" '1' '.result == "1"'
sleep 4
bad "idle past its TTL: 410 session_expired" 410 session_expired POST "/v1/sessions/$TTL/execute" '{"code": "1"}'
expect "GET shows it expired, with the reason" 200 '.status == "expired" and (.reason | contains("idle"))' \
	GET "/v1/sessions/$TTL"
expect "close the bash session" 200 '.status == "closed"' DELETE "/v1/sessions/$SH"
bad "a closed session: 410 session_closed" 410 session_closed POST "/v1/sessions/$SH/execute" '{"code": "1"}'
expect "GET shows it closed" 200 '.status == "closed" and .reason == "closed by the client"' \
	GET "/v1/sessions/$SH"
bad "closing twice: 410" 410 session_closed DELETE "/v1/sessions/$SH"
open_n=$(req GET /v1/sessions | head -1 | jq '.sessions | length')
ids=()
for _ in $(seq $((6 - open_n))); do create bash; ids+=("$SID"); done
bad "over the per-key cap: 429 too_many_sessions" 429 too_many_sessions POST /v1/sessions '{"language": "bash"}'
for s in "${ids[@]}"; do [ -n "$s" ] && req DELETE "/v1/sessions/$s" >/dev/null; done
create bash
[ -n "$SID" ] && pass "after closing some, a create works again" || fail "create after closing"
req DELETE "/v1/sessions/$SID" >/dev/null

# ---- metrics ----
M=$(curl -s -m 10 "$U/metrics")
grep -qE '^judge_sessions_open [1-9]' <<<"$M" && pass "metrics: open sessions" ||
	fail "metrics: open sessions" "$(grep judge_sessions <<<"$M")"
grep -qE '^judge_session_cells_total\{status="ok"\} [1-9]' <<<"$M" &&
	grep -qE '^judge_session_cells_total\{status="timeout"\} [1-9]' <<<"$M" &&
	pass "metrics: cells by status" || fail "metrics: cells by status" "$(grep cells <<<"$M")"

# ---- a PostgreSQL restart: the session goes on ----
cell "before the restart" "$PY" 'y = 5' '.status == "ok"'
svc_as_pg "$SVC_PG_BIN/pg_ctl -D '$SVC_TMP/pg/data' -m fast -w restart" >/dev/null 2>&1 &&
	pass "postgresql restarted" || fail "postgresql restarted"
for _ in $(seq 30); do run "$PY" 'y'; [ "$ST" = 200 ] && break; sleep 0.5; done
expect_json "after the restart: the session answers, its variables intact" "$LAST" '.result == "5"'

# ---- a worker killed with sessions open ----
cell "a session before the kill" "$PY" 'z = 1' '.status == "ok"'
( req POST "/v1/sessions/$PY/execute" '{"code": "import time; time.sleep(30)"}' >"$SVC_TMP/long.out" ) &
LONG=$!
sleep 1
kill -KILL "$SVC_WORKER_PID"
wait "$SVC_WORKER_PID" 2>/dev/null
t0=$(date +%s)
wait "$LONG"
t1=$(date +%s)
expect_json "a cell running when its worker died: 410 session_lost ($((t1 - t0)) s)" \
	"$(head -1 "$SVC_TMP/long.out")" '.error.code == "session_lost"'
[ "$(tail -1 "$SVC_TMP/long.out")" = 410 ] && [ $((t1 - t0)) -le 15 ] &&
	pass "and it did not hang" || fail "the cell did not hang" "$(cat "$SVC_TMP/long.out")"
bad "the next call: 410 session_lost" 410 session_lost POST "/v1/sessions/$PY/execute" '{"code": "z"}'
expect "GET shows it lost, with why" 200 '.status == "lost" and (.reason | contains("worker"))' \
	GET "/v1/sessions/$PY"
svc_worker "$ini" || fail "a new worker starts"
create python
[ -n "$SID" ] && pass "a new worker takes new sessions" || fail "a new worker takes new sessions"
cell "and runs them" "$SID" '6 * 7' '.result == "42"'

# judge.ini's session_pool = 1: a session of default limits is handed over
# started ahead (a box changed before the hand-over, as the package folders once
# were, made every create start its own sandbox, 0.1-0.4 s)
n=$(grep -c "sessions: .* ready in .* from the pool" "$SVC_TMP/worker.log")
[ "$n" -ge 3 ] && pass "sessions came from the pool ($n of $(grep -c "sessions: .* ready in" "$SVC_TMP/worker.log"))" ||
	fail "sessions came from the pool" "$n: $(grep "ready in" "$SVC_TMP/worker.log" | tail -3)"
kill -0 "$MAIN_PID" 2>/dev/null && pass "serve still running" || fail "serve still running"
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/worker.log"
finish
