/* grade: compile once, run each test, compare, aggregate into the typed result.
 *
 * The input is a typed request (model.h: the same for `judge run`, `judge
 * verify` and the worker); the output a typed result that model_result_render
 * turns into the result JSON of the README. The steps that need no sandbox
 * (planning, judging an output, folding test outcomes into the verdict) are
 * public so they can be tested alone.
 */
#pragma once
#include <stdatomic.h>
#include <stdbool.h>

#include "judge/grading/compare.h"
#include "judge/grading/model.h"
#include "judge/grading/status.h"
#include "runner/sandbox.h"

struct judge_config;
struct lang_registry;
struct lang;
struct problem;
struct checker;

/* The fd grade_env.on_output names the compiler's output by. */
#define GRADE_COMPILER_FD 3

struct grade_env {
	const struct judge_config *cfg;
	const struct lang_registry *langs;
	enum sandbox_backend backend;
	int slot; /* concurrent sandbox slot of the caller */
	/* Optional: the reuse key of the submission's workspaces (runner/sandbox.h,
	 * sandbox_set_reuse_key): a gVisor sandbox may serve workspaces of one key
	 * one after the other. The worker: "k<api key id>"; the CLI: "cli". NULL =
	 * never reused. Checker boxes (trusted tools) get none. */
	const char *reuse_key;
	/* Optional (judge verify): a package loaded by the caller, used when the
	 * request's "problem" is its id instead of loading problems_dir/<id>, and
	 * its output validator built once (checker.h) instead of once per request. */
	const struct problem *problem;
	struct checker *checker;
	/* Optional (the worker): set once the result is no longer wanted (the
	 * claim was lost to another worker); grading stops before its next run. */
	const atomic_bool *cancel;
	/* Optional (the worker's live output): on_output gets the program's bytes
	 * as they are read (run_spec.on_output; the compiler's, both streams, as
	 * fd GRADE_COMPILER_FD), on_test each test once judged, with live_arg.
	 * Both run in the grading thread and must not block. */
	void (*on_output)(void *arg, int fd, const char *data, size_t len);
	void (*on_test)(void *arg, const struct grade_test_out *t);
	void *live_arg;
};

/* Grades req into out (initialized here; release with model_result_release).
 * Never fails: a failure of the judge itself becomes an internal_error result
 * with a message. */
void grade_request(const struct grade_env *env, const struct grade_request *req,
		   struct grade_result *out);

/* One test of a plan. */
struct grade_test {
	char *name;
	const char *stdin_data; /* borrowed from the request */
	size_t stdin_len;
	char *stdin_path;     /* host file (problem packages) */
	const char *expected; /* borrowed from the request */
	size_t expected_len;
	bool has_expected;
	char *expected_path; /* host file read at compare time */
	bool hide_data;	     /* secret test: no expected snippet in feedback */
	const struct compare_options
	    *cmp; /* problem packages: the test group's options, else NULL */
	const char *const *validator_args; /* custom output validator arguments */
	double points;			   /* inline tests' "points", < 0 when not given */
};

/* A request planned into runs: language, limits, compare options, tests. It
 * borrows the request's strings, so the request must outlive it. */
struct grade_plan {
	const atomic_bool *cancel;    /* grade_env's */
	enum sandbox_backend backend; /* grade_env's */
	int slot;		      /* grade_env's */
	/* compile through the language's warm compile server (compsrv.h) when it
	 * has one: judge.ini's warm_start is on and the process enabled servers */
	bool warm_compile;
	const struct grade_env *live; /* grade_env, for its live hooks */
	const struct lang *lang;
	const char *source;
	size_t source_len;
	struct run_limits run_limits;
	struct run_limits compile_limits;
	struct compare_options cmp;
	bool run_all;
	struct grade_test *tests;
	int ntests;
	bool explicit_tests;	       /* report a tests array */
	const struct problem *problem; /* "problem" requests: env's or owned_problem */
	struct problem *owned_problem;
	struct checker *checker; /* custom output validator; owned when own_checker */
	bool own_checker;
	char **compile_argv; /* programs of several sources (compile_command), or NULL */
	/* the language's compile_in_run holds: no compile step, the first run
	 * tells a compile error (grade_in_box sets it once the box is written) */
	bool compile_in_run;
	/* the language's run argv and the request's args (strings borrowed) */
	const char **run_argv;
	bool scoring;	  /* a scoring problem: every test runs, groups are scored */
	bool interactive; /* the submission talks to the validator (interact.h) */
	bool points;	  /* inline tests with points: score = points of passed tests */
	int max_passes;	  /* runs of one test: validation_passes for multi-pass, else 1 */
};

/* Plans req with env's configuration, languages and package (a "problem"
 * request loads problems_dir/<id> unless env->problem is that package). No
 * sandbox. Returns 0, or -1 with a message in err; release p either way. */
int grade_plan_make(struct grade_plan *p, const struct grade_env *env,
		    const struct grade_request *req, char *err, size_t errlen);
void grade_plan_release(struct grade_plan *p);

/* The verdict of a run that ended with s: runtime error, timeout, memory or
 * output limit as such, completed for RUN_OK, internal error otherwise. */
enum sub_status grade_run_verdict(enum run_status s);
/* The verdict on test i of p whose run rr ended without a sandbox failure:
 * the runner's status, or the comparison of its output (output validators run
 * through p->checker). Fills fb on wrong_answer. internal_error (message in
 * err) is the judge's fault, never the program's. */
enum sub_status grade_judge_test(const struct grade_plan *p, int i, const struct run_result *rr,
				 struct grade_feedback *fb, char *err, size_t errlen);

/* Compiles the source in sb (with p->compile_argv when set) into res->compile.
 * Returns 0 when it compiled (or needs no compiling), 1 on a compile error,
 * -1 on an internal error (message in err). */
int grade_compile(const struct grade_plan *p, struct sandbox *sb, struct grade_result *res,
		  char *err, size_t errlen);

/* Folding test outcomes into a result, in test order. */
struct grade_tally {
	bool decided; /* a failing test decided the verdict */
	bool any_expected;
	long max_cpu, max_wall, max_mem;
};

/* Prepares res to receive p's tests (the tests array when p has explicit tests). */
void grade_tally_start(struct grade_tally *t, const struct grade_plan *p, struct grade_result *res);
/* Folds test i (verdict st, run rr, feedback fb) into res: the first failing
 * test decides, else the last one speaks; res takes rr's output when this test
 * decides (rr stays valid to release). Returns true when grading should stop
 * (a failure, and not run_all_tests). */
bool grade_tally_add(struct grade_tally *t, const struct grade_plan *p, struct grade_result *res,
		     int i, enum sub_status st, struct run_result *rr,
		     const struct grade_feedback *fb);
/* After the last test run: completed when nothing had an expected output, and
 * across several tests the worst time and memory. */
void grade_tally_finish(const struct grade_tally *t, const struct grade_plan *p,
			struct grade_result *res);
