/* problemrun: problem packages on a worker: the package a submission was
 * pinned to, and verification jobs (docs/problems.md).
 *
 * A stored request with "problem" names the version it was queued against
 * ("problem_version"; rows queued before versions existed get the current
 * one). The worker grades it on its copy of that version (problemstore.h),
 * loaded here, never on problems_dir. A request with "verify" is a
 * verification job: the worker runs the package's example submissions
 * (verify.h) and stores the report as the job's result, from which a trigger
 * settles the version (migrations/0011_problems.sql).
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "judge/grading/problem.h"
#include "judge/grading/status.h"
#include "judge/service/problemstore.h"
#include "runner/sandbox.h"

struct db;
struct judge_config;
struct lang_registry;

/* A package loaded from the worker's copy (in use until released). */
struct problemrun_pkg {
	struct problem p;
	bool loaded;
	struct problemstore_copy copy;
};

/* Where a worker keeps its copies: state_dir/problems (malloc'd). */
char *problemrun_cache_dir(const struct judge_config *cfg);

/* Loads the package of the stored request (if it names a problem) into *pk
 * for a submission of key_id. Returns 1 loaded, 0 when the request names no
 * problem, -1 with err (the submission's internal_error). Release pk with
 * problemrun_pkg_release either way. */
int problemrun_load(struct db *db, const struct judge_config *cfg,
		    const struct lang_registry *langs, const cJSON *request, int64_t key_id,
		    struct problemrun_pkg *pk, char *err, size_t errlen);
void problemrun_pkg_release(struct problemrun_pkg *pk);

/* True when the stored request is a verification job. */
bool problemrun_is_verify(const cJSON *request);

struct problemrun_env {
	const struct judge_config *cfg;
	const struct lang_registry *langs;
	enum sandbox_backend backend;
	int slot;
	const char *reuse_key;
	const atomic_bool *cancel;
	void (*line)(void *arg, const char *text); /* optional: verify.h's lines */
	void *arg;
};

/* Runs the verification job of request. Returns its result (the report,
 * with "status"; caller owns it) and its *status: completed when the package
 * was verified (whatever the report says), internal_error when it could not
 * be (the report then holds "message"). */
cJSON *problemrun_verify(struct db *db, const struct problemrun_env *env, const cJSON *request,
			 enum sub_status *status);
