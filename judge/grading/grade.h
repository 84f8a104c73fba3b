/* grade: compile once, run each test, compare, aggregate into the result JSON.
 *
 * The input is a normalized request (the same JSON for `judge run`, the worker
 * and the API):
 *   {"language": "python", "source": "...",
 *    "tests": [{"name": "1", "stdin": "...", "expected_output": "..."}],  (expected optional)
 *    "problem": "sum",                      instead of tests: a package's tests
 *    "files": [{"name": "util.h", "content": "..."}],   more files of the program
 *                                           (sources of its language are compiled too)
 *    "compare": {"mode": "tokens", "case_sensitive": false, "space_change_sensitive": false,
 *                "float_absolute_tolerance": 1e-6, "float_relative_tolerance": 1e-6,
 *                "unordered_tokens": false},
 *    "limits": {"time_ms": 2000, "wall_ms": 7000, "memory_mb": 256, "output_kb": 16384,
 *               "processes": 64},
 *    "run_all_tests": false}
 * A request without "tests" and without "problem" runs once with "stdin" and, if
 * present, "expected_output".
 * The output is the result JSON of the README.
 */
#pragma once
#include <stdatomic.h>
#include <cjson/cJSON.h>

#include "runner/sandbox.h"

struct judge_config;
struct lang_registry;
struct problem;
struct checker;

struct grade_env {
	const struct judge_config *cfg;
	const struct lang_registry *langs;
	enum sandbox_backend backend;
	int slot; /* concurrent sandbox slot of the caller */
	/* Optional (judge verify): a package loaded by the caller, used when the
	 * request's "problem" is its id instead of loading problems_dir/<id>, and
	 * its output validator built once (checker.h) instead of once per request. */
	const struct problem *problem;
	struct checker *checker;
	/* Optional (the worker): set once the result is no longer wanted (the
	 * claim was lost to another worker); grading stops before its next run. */
	const atomic_bool *cancel;
};

/* Grades request. Never returns NULL: a failure of the judge itself becomes an
 * internal_error result with a message. The caller owns (cJSON_Delete) the result. */
cJSON *grade_request(const struct grade_env *env, const cJSON *request);
