/* evalset (evset_): an evaluation set in one of the published formats
 * (evformat.h: human-eval and the project's function problems, HumanEval-X,
 * MultiPL-E, MBPP), its samples expanded into graded items, and the pass@k
 * report. Shared by `judge eval` (offline) and /v1/evaluations, so both read
 * the same files the same way and grade the same programs.
 *
 * A set is loaded from its problems (the objects of the problems file; none
 * for MultiPL-E, whose completion files carry prompt and tests); each sample
 * object (a line of the samples file, or a MultiPL-E completions file) expands
 * into one item per completion, each a grade_request whose verdict accepted
 * means the set's own harness would pass it (evrun.h).
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "judge/grading/evformat.h"
#include "judge/grading/model.h"

struct evset_problem {
	char *task_id;
	cJSON *obj; /* owned copy */
};

struct evset {
	const struct evformat *fmt;
	struct evset_problem *problems;
	int count;
	/* the language of samples whose set does not name it (--lang, the body's
	 * "language"); NULL = default_language */
	char *language;
	/* the registry's default language (lang_default), set by the caller */
	const char *default_language;
	long timeout_ms;	  /* per sample; 0 = the language's */
	struct evfmt_facts facts; /* languages/evalsets/<format>.ini */
};

/* One graded sample: a completion of a sample object. */
struct evset_item {
	int sample;	/* index of the sample object it came from */
	int completion; /* its index among that object's completions (MultiPL-E), else 0 */
	char *task_id;
	char *error; /* why it cannot be graded (it fails unrun), or NULL */
	struct grade_request req;
	/* the verdict, once graded (evset_item_judge) */
	bool passed;
	char *result; /* "passed", "timed out", "failed: ..." */
	enum sub_status status;
	int exit_code;	 /* -1 when the program did not exit */
	char *out, *err; /* its stdout and stderr (at most 2 KiB each) */
};

struct evset_items {
	struct evset_item *v;
	int n;
};

void evset_init(struct evset *s);
void evset_release(struct evset *s);
void evset_items_release(struct evset_items *it);

/* Loads a set: its format (format's name, or detected from the first problem,
 * else from first_sample), its per-language facts from languages_dir, and its
 * problems (an array, may be NULL for MultiPL-E). language (may be NULL) and
 * timeout_ms as in struct evset. Returns 0, or -1 with err (an unknown or
 * undetectable format, a problem without an id or given twice, an unreadable
 * facts file). */
int evset_load(struct evset *s, const char *languages_dir, const char *format,
	       const cJSON *problems, const cJSON *first_sample, const char *language,
	       long timeout_ms, char *err, size_t errlen);
/* Checks and appends problem p (copied). Returns 0, or -1 with err. */
int evset_add(struct evset *s, const cJSON *p, char *err, size_t errlen);
/* The problem of task_id, or NULL. */
const struct evset_problem *evset_find(const struct evset *s, const char *task_id);
/* Expands sample object smp (the index-th) into items appended to out: one
 * per completion, each with its request, or its error. Never fails. */
void evset_expand(const struct evset *s, const cJSON *smp, int index, struct evset_items *out);

/* Sets it's passed and result from its grading's status and result JSON
 * (model_result_render's, or as stored). */
void evset_item_judge(struct evset_item *it, enum sub_status st, const cJSON *result);

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
