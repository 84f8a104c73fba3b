/* verify: checks that every example submission of a problem package gets the
 * verdict the package expects of it (its folder, or a DOMjudge annotation):
 * `judge verify`, and a worker's verification of an uploaded package
 * (docs/problems.md).
 *
 * How it works: the caller loads the package (problem.h); its output
 * validator, if any, is built once (checker.h). When the package gives no time
 * limit, the accepted submissions run first under a generous probe limit and
 * the limit follows from the slowest of them by the package format's rules
 * (2025-09: 2 x slowest rounded up to time_resolution; legacy: problemtools'
 * 5 x slowest rounded to whole seconds). Every other submission then runs once
 * at the safety margin above that limit (2025-09: limit x time_limit_to_tle)
 * and passes when it gets its verdict there or at the limit itself, the
 * verdict at the limit being read off the same run (a test over the limit's
 * CPU or wall time is a timeout): problemtools verifyproblem's rule
 * (Submissions.check_submission, judge/cache.py _reclassify). A submission
 * whose expected results are a DOMjudge `@EXPECTED_RESULTS@:` line (problem.h,
 * problem_expect_read) runs at the limit alone and its verdict, in DOMjudge's
 * names (NO-OUTPUT: a wrong answer with no output at all), must be one of
 * them, as DOMjudge's judging verifier checks it. Each submission is
 * graded through grade_request exactly as the API would grade it.
 *
 * The outcome is both printed (one line per submission, through the caller's
 * line function, as `judge verify` shows it) and returned as the verification
 * report (JSON, docs/problems.md), which the API stores beside the package.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "runner/sandbox.h"

struct judge_config;
struct lang_registry;
struct problem;

struct verify_counts {
	int passed, failed, skipped;
};

struct verify_opts {
	const struct judge_config *cfg;
	const struct lang_registry *langs;
	enum sandbox_backend backend;
	int jobs;	       /* submissions graded at once (each in its own slot); <= 1: one */
	int first_slot;	       /* the sandbox slots used: first_slot .. first_slot + jobs - 1 */
	const char *reuse_key; /* grade_env.reuse_key of the submissions' workspaces */
	bool all_tests;	       /* run every test, check the 2025-09 rules per test */
	bool verbose;	       /* a failing submission's result JSON as lines too */
	/* A package without any example submission passes (with a note) instead
	 * of failing for want of an accepted one (an uploaded package whose
	 * author gives only test data). */
	bool allow_no_submissions;
	const char *const *only_langs; /* NULL-terminated, or NULL: every language */
	const atomic_bool *cancel;     /* optional: stop before the next run once set */
	/* Optional: each line of `judge verify`'s output (no newline), in order. */
	void (*line)(void *arg, const char *text);
	void *arg;
};

/* Verifies the loaded package p and adds its counts to *n. Returns the
 * verification report (the caller owns it; never NULL):
 *   {"problem", "name", "format_version", "kind", "tests", "ok", "gradable",
 *    "error" (why the package cannot be graded or failed as a whole, or null),
 *    "time_limit_ms", "time_limit_inferred", "slowest_accepted_ms",
 *    "tle_checked_ms", "passed", "failed", "skipped", "notes": [...],
 *    "submissions": [{"path", "language", "expected", "outcome": "ok" | "fail" |
 *                     "skip", "status", "time_ms", "score", "max_score",
 *                     "message"}]}
 * ok is true when nothing failed; gradable is false when the judge cannot grade
 * the problem at all (unsupported kind, output validator does not build). */
cJSON *verify_problem(const struct verify_opts *o, const struct problem *p,
		      struct verify_counts *n);
