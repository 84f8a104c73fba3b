/* model (model_): the typed request and result of grading, and their JSON forms.
 *
 * A request is parsed once (request.c for a client's body, model_request_load
 * for the normalized JSON stored in submissions.request), graded as a struct
 * (grade.h), and its result rendered to the result JSON of the README in one
 * place (model_result_render). The normalized JSON is:
 *   {"language": "python", "source": "...",
 *    "files": [{"name": "util.h", "content": "..."}],   more files (judge run/verify, /v1, Piston)
 *    "args": ["1", "2"],                    command-line arguments of the program (when any)
 *    "compiler_options": ["-DX=1"],         compiler flags (languages whose compile has {options})
 *    "tests": [{"name": "1", "stdin": "...", "expected_output": "...", "points": 2}],
 *                                           (expected and points optional)
 *    "problem": "sum",                      instead of tests: a package's tests
 *    "problem_version": 3,                  the version it was queued against (the API
 *                                           adds it; the worker reads it, problemrun.h)
 *    "stdin": "...", "expected_output": "...",   instead of both: one run
 *    "compare": {"mode": "tokens", "case_sensitive": false, "space_change_sensitive": false,
 *                "float_absolute_tolerance": 1e-6, "float_relative_tolerance": 1e-6,
 *                "unordered_tokens": false},
 *    "limits": {"time_ms": 2000, "wall_ms": 7000, "memory_mb": 256, "output_kb": 16384,
 *               "processes": 64},
 *    "run_all_tests": false,
 *    "function": {"name": "twoSum", "signature": {...},      a function problem (funcgrade.h):
 *                 "tests": [{"name", "args": [...], "expected": v, "hidden": false}]},
 *    "test_code": "def check(candidate): ...", "entry_point": "f"}   a test-code problem
 * Rows queued by older binaries have this shape too, so it must not change.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"
#include "judge/grading/compare.h"
#include "judge/grading/limits.h"
#include "judge/grading/status.h"

/* A file of the program beside its source. */
struct grade_file {
	char *name;
	char *content;
	size_t len;
};

/* One inline test. expected is NULL when the test has no expected output. */
struct grade_test_in {
	char *name;
	char *stdin_data;
	size_t stdin_len;
	char *expected;
	size_t expected_len;
	double points; /* "points": the test's share of the score; < 0 = not given */
};

/* A function problem (LeetCode style): the judge's harness calls name with
 * each test's args (JSON) in the sandbox; the expected values stay on the host.
 * tests: [{"name", "args": [...], "expected": v (optional), "hidden": bool}];
 * signature: {"params": ["int[]", "int"], "returns": "int[]"} (types for the
 * languages that need them; inferred from the args when absent), or NULL. */
struct grade_func {
	char *name;
	cJSON *signature; /* owned, or NULL */
	cJSON *tests;	  /* owned, never NULL */
};

/* An eval set's assembled program (evrun.h): source is the whole program, run
 * once with no input and judged by the set's harness's rule (evrun_rule_parse:
 * "exit_zero", "silent", "exec"); stderr_fails: with exit_zero, a stderr holding
 * one of these texts fails too (MultiPL-E's C# rule). */
struct grade_eval {
	char *rule;
	char **stderr_fails;
	int nstderr_fails;
};

/* A request. Every pointer is owned (model_request_release frees it). Exactly
 * one form: problem != NULL, or ntests > 0, or one run of stdin_data/expected. */
struct grade_request {
	char *language;
	char *source;
	size_t source_len;
	struct grade_file *files;
	int nfiles;
	char **args; /* appended to the language's run argv */
	int nargs;
	char **compiler_options; /* where the compile command says {options} */
	int ncompiler_options;
	struct grade_test_in *tests;
	int ntests;
	char *problem;
	char *stdin_data; /* one run: NULL = empty input */
	size_t stdin_len;
	char *expected; /* one run: NULL = nothing to compare with */
	size_t expected_len;
	bool has_compare; /* false: lines, and no "compare" key in the JSON */
	struct compare_options cmp;
	bool has_limits;	      /* a "limits" object was given (it may be empty) */
	struct limits_request limits; /* the request's own; 0 = not given (limits.h) */
	bool run_all_tests;
	struct grade_func *func; /* function problem, or NULL */
	char *test_code;	 /* test-code problem (HumanEval style), or NULL */
	char *entry_point;	 /* its function under test (check(entry_point)), or NULL */
	struct grade_eval *eval; /* an eval set's program, or NULL */
};

/* Empty request: no fields, compare options of mode lines. */
void model_request_init(struct grade_request *r);
/* Frees what r holds and leaves it empty. */
void model_request_release(struct grade_request *r);
/* Copies s (len bytes, NUL-terminated in the copy) into *dst, freeing the old
 * value. */
void model_set(char **dst, const char *s, size_t len);
/* Appends a test (stdin NULL = empty, expected NULL = none) with no points;
 * copies every string. */
void model_request_add_test(struct grade_request *r, const char *name, const char *stdin_data,
			    size_t stdin_len, const char *expected, size_t expected_len);
/* Appends a file; copies both strings. */
void model_request_add_file(struct grade_request *r, const char *name, const char *content,
			    size_t len);
/* Appends a command-line argument of the program; copies it. */
void model_request_add_arg(struct grade_request *r, const char *arg);
/* Appends a compiler option (the list stays NULL-terminated). */
void model_request_add_compiler_option(struct grade_request *r, const char *opt);
/* Makes r a function problem of name with copies of signature (may be NULL)
 * and tests (grade_func). */
void model_request_set_function(struct grade_request *r, const char *name, const cJSON *signature,
				const cJSON *tests);
/* Makes r an eval set's program judged by rule (copied; evrun.h), with no
 * stderr texts yet. */
void model_request_set_eval(struct grade_request *r, const char *rule);
/* Appends a text whose presence in stderr fails an eval program (r->eval set). */
void model_request_add_stderr_fail(struct grade_request *r, const char *text);
/* The normalized JSON of r (the caller deletes it); never NULL. */
cJSON *model_request_render(const struct grade_request *r);
/* Reads normalized JSON (as stored, possibly by an older binary) into out, which
 * it initializes. Lenient as the grader always was: a value of the wrong type
 * counts as absent. Returns 0, or -1 with a message in err (no language, no
 * source, an unknown compare mode, a bad file entry); out holds
 * what was read so far (language first) and must be released either way. */
int model_request_load(const cJSON *in, struct grade_request *out, char *err, size_t errlen);

/* Adds compare options c to o as "compare": {...} (the normalized JSON above). */
void model_compare_render(cJSON *o, const struct compare_options *c);
/* Reads compare options as model_compare_render writes them (or a bare mode
 * name) into o, which keeps what c does not say. Returns 0, or -1 with err
 * for an unknown mode. */
int model_compare_load(const cJSON *c, struct compare_options *o, char *err, size_t errlen);

/* What the user reads about the first difference (compare.h's feedback, or an
 * output validator's message). */
struct grade_feedback {
	bool present;
	bool has_position; /* false: only message (output validators) */
	long line;
	long column;
	bool has_expected; /* false for secret tests: no expected snippet */
	char expected[128];
	char got[128];
	char message[512];
};

/* Facts of one run, as the result JSON shows them. */
struct grade_run_facts {
	bool exited; /* exit_code is meaningful (else null) */
	int exit_code;
	int signal; /* 0 = none (null) */
	long time_ms;
	long wall_ms;
	long memory_kb;
};

struct grade_compile {
	bool ran; /* false: the language compiles nothing ("ok", empty output) */
	bool ok;
	struct strbuf output; /* compiler output (raw bytes, sanitized when rendered) */
	long time_ms;
	long wall_ms;
	long memory_kb;
};

struct grade_test_out {
	char *name;
	char *output; /* function problems: what the call printed (owned), or NULL */
	enum sub_status status;
	struct grade_run_facts run;
	struct grade_feedback feedback;
	bool has_score; /* scored results: the test's score */
	double score;
	int passes; /* multi-pass problems: runs of this test (0: not multi-pass) */
};

/* A test group's score (scoring problems). */
struct grade_group_out {
	char *name;
	double score;
	double max_score;
	bool accepted;
};

/* A result. Three shapes, as docs/grading.md's "Result JSON":
 *  - message != NULL: the judge failed (internal_error): status, language, message;
 *  - compile error (ran false): status, language, compile;
 *  - else the whole result, with tests when has_tests. */
struct grade_result {
	enum sub_status status;
	char *language; /* NULL when unknown */
	char *message;	/* the judge's own failure, else NULL */
	struct grade_compile compile;
	bool ran; /* the program ran: the fields below are set */
	struct grade_run_facts run;
	struct strbuf out; /* the deciding run's output (raw bytes) */
	struct strbuf err;
	bool out_truncated;
	bool err_truncated;
	struct grade_feedback feedback; /* the deciding test's */
	bool has_tests;
	struct grade_test_out *tests;
	int ntests;
	int tests_total;
	/* scoring problems and tests with points: the score (else "score": null) */
	bool has_score;
	double score;
	double max_score;
	struct grade_group_out *groups; /* scoring problems: each test group's */
	int ngroups;
};

void model_result_init(struct grade_result *r);
void model_result_release(struct grade_result *r);
/* Makes r an internal_error result with message (printf-style) for language
 * (may be NULL), dropping what it held. */
void model_result_fail(struct grade_result *r, const char *language, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The result JSON of r (the caller deletes it); never NULL. Output that is
 * not UTF-8 is given as text with U+FFFD and, beside it, its raw bytes in
 * base64 (stdout_base64, stderr_base64, compile.output_base64). */
cJSON *model_result_render(const struct grade_result *r);
/* One test as an element of the result's "tests" (also the live output's
 * test event). Returns a new object. */
cJSON *model_test_render(const struct grade_test_out *t);
