/* evformat_evalplus: EvalPlus's HumanEval+ and MBPP+ as it publishes them
 * (HumanEvalPlus-v*.jsonl, MbppPlus-v*.jsonl: task_id "HumanEval/0" or
 * "Mbpp/2", prompt, entry_point, canonical_solution, contract, base_input,
 * plus_input, atol) and graded as its evaluator grades them (evalplus/evalplus
 * at 26d6d00: evaluate.py, eval/__init__.py; read, not copied).
 *
 * A sample is {"task_id", "solution"} (a whole program) or {"task_id",
 * "completion"} (appended to the prompt, no separator). Its program, the
 * reference (prompt + canonical_solution) and the inputs go to the harness
 * languages/harness/evalplus.py (evrun.h's rule evalplus), which computes the
 * expected outputs and their times with the reference, then runs the base
 * inputs and the plus inputs each in a fresh process as the evaluator does.
 * --timeout is its --min-time-limit (default 4 s); the factor is its 4.
 * Writes its results file (<samples>.eval_results.json) and prints its two
 * pass@k blocks, base and base + extra. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/jsonraw.h"
#include "common/md5.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "judge/grading/evalset.h"
#include "judge/grading/evformat.h"
#include "judge/grading/passk.h"

/* evalplus/config.py DEFAULT_GT_TIME_LIMIT_FACTOR */
#define TIME_LIMIT_FACTOR 4.0
/* the sandbox's backstop: the reference twice, two sets of at most 62 s */
#define SAMPLE_LIMIT_MS 200000L
/* EvalPlus lets the sample's process have 4 GiB, its ground truth is
 * computed outside any limit (MBPP+'s Mbpp/255 keeps 1.3 GB of outputs): the
 * sandbox holds both, so 4 GiB (the API caps it at max_memory_limit_mb) */
#define SAMPLE_MEMORY_MB 4096
/* evaluate.py's k list */
static const int ep_ks[] = {1, 10, 100};

static bool detect(const cJSON *p, const cJSON *smp)
{
	(void)smp;
	return p && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(p, "base_input")) &&
	       cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(p, "plus_input"));
}

static int check(const cJSON *p, char *err, size_t errlen)
{
	static const char *const strs[] = {"prompt", "entry_point", "canonical_solution"};
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
		if (!evformat_str(p, strs[i])) {
			snprintf(err, errlen, "an EvalPlus problem needs %s, a string", strs[i]);
			return -1;
		}
	const cJSON *atol = cJSON_GetObjectItemCaseSensitive(p, "atol");
	if (atol && !cJSON_IsNumber(atol)) {
		snprintf(err, errlen, "an EvalPlus problem's atol is a number");
		return -1;
	}
	static const char *const lists[] = {"base_input", "plus_input"};
	for (size_t i = 0; i < 2; i++) {
		const cJSON *in;
		cJSON_ArrayForEach(in, cJSON_GetObjectItemCaseSensitive(p, lists[i]))
		{
			if (!cJSON_IsArray(in)) {
				snprintf(err, errlen, "%s: each input is a list of arguments",
					 lists[i]);
				return -1;
			}
		}
	}
	return 0;
}

/* "mbpp" for MBPP+'s task ids, else "humaneval": the dataset EvalPlus is
 * told with --dataset, which picks its special oracles. */
static const char *dataset_of(const char *task_id)
{
	return !strncmp(task_id, "Mbpp/", 5) ? "mbpp" : "humaneval";
}

/* Problem p's input list key as published: its JSON text when the problem's
 * text was kept (big integers, NUL characters, NaN and Infinity reach Python's
 * json as written), else cJSON's reading of it. Owned. */
static cJSON *inputs_of(const struct evalset_problem *p, const char *key)
{
	struct jsonraw_span sp;
	if (p->raw && jsonraw_member(p->raw, strlen(p->raw), key, &sp)) {
		char *text = xstrndup(p->raw + sp.at, sp.len);
		cJSON *raw = cJSON_CreateRaw(text);
		free(text);
		return raw;
	}
	return cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(p->obj, key), 1);
}

/* The index-th input of problem p's list key, as inputs_of gives the list;
 * NULL when there is none. Owned. */
static cJSON *input_at(const struct evalset_problem *p, const char *key, int index)
{
	cJSON *list = inputs_of(p, key), *in = NULL;
	struct jsonraw_span *el = NULL;
	if (cJSON_IsRaw(list)) {
		int n = jsonraw_elements(list->valuestring, strlen(list->valuestring), &el);
		if (index >= 0 && index < n) {
			char *text = xstrndup(list->valuestring + el[index].at, el[index].len);
			in = cJSON_CreateRaw(text);
			free(text);
		}
	} else if (index >= 0) {
		in = cJSON_DetachItemFromArray(list, index);
	}
	free(el);
	cJSON_Delete(list);
	return in;
}

/* The program of sample smp as evaluate.py takes it: its solution when it
 * has one, else the problem's prompt + its completion, no separator. */
static char *program_of(const cJSON *problem, const cJSON *smp)
{
	const char *solution = evformat_str(smp, "solution");
	const char *completion = evformat_str(smp, "completion");
	return solution ? xstrdup(solution)
			: xasprintf("%s%s", evformat_str(problem, "prompt"),
				    completion ? completion : "");
}

static void expand(const struct evalset *s, const cJSON *smp, int index, struct evalset_items *out)
{
	const char *tid = evformat_str(smp, "task_id");
	const struct evalset_problem *p = tid ? evalset_find(s, tid) : NULL;
	struct evalset_item *it = evformat_item_add(out, index, 0, tid);
	if (!p || (!evformat_str(smp, "solution") && !evformat_str(smp, "completion"))) {
		evformat_item_fail(it, !p ? "task_id not in the problems file"
					  : "sample has neither solution nor completion");
		return;
	}
	const char *ds = dataset_of(p->task_id);
	const struct evformat_lang *l = evformat_lang_find(&s->facts, ds);
	if (!l) {
		evformat_item_fail(it, "languages/evalsets/evalplus.ini has no such dataset");
		return;
	}
	char *program = program_of(p->obj, smp);
	char *reference = xasprintf("%s%s", evformat_str(p->obj, "prompt"),
				    evformat_str(p->obj, "canonical_solution"));
	const cJSON *atol = cJSON_GetObjectItemCaseSensitive(p->obj, "atol");
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "dataset", ds);
	cJSON_AddStringToObject(doc, "task_id", p->task_id);
	cJSON_AddStringToObject(doc, "entry_point", evformat_str(p->obj, "entry_point"));
	cJSON_AddStringToObject(doc, "solution", program);
	cJSON_AddStringToObject(doc, "reference", reference);
	cJSON_AddItemToObject(doc, "base_input", inputs_of(p, "base_input"));
	cJSON_AddItemToObject(doc, "plus_input", inputs_of(p, "plus_input"));
	cJSON_AddNumberToObject(doc, "atol", cJSON_IsNumber(atol) ? atol->valuedouble : 0);
	cJSON_AddNumberToObject(doc, "min_time_limit",
				(double)(s->timeout_ms > 0 ? s->timeout_ms : 4000) / 1000.0);
	cJSON_AddNumberToObject(doc, "time_limit_factor", TIME_LIMIT_FACTOR);
	char *src = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	evformat_item_program(s, it, l, src);
	it->req.has_limits = true;
	it->req.limits.time_ms = SAMPLE_LIMIT_MS;
	it->req.limits.wall_ms = SAMPLE_LIMIT_MS;
	it->req.limits.memory_mb = SAMPLE_MEMORY_MB;
	free(src);
	free(program);
	free(reference);
}

/* The statuses and inputs tried of a graded item, from the harness's record;
 * without one, what the evaluator records of a process that never reported. */
struct ep_result {
	char base[16], plus[16];
	int base_tried, plus_tried;
};

static void status_of(const cJSON *rec, const char *key, char *out, size_t n, const char *dflt)
{
	const char *v = evformat_str(rec, key);
	snprintf(out, n, "%s", v ? v : dflt);
}

static void item_result(const struct evalset_item *it, struct ep_result *r)
{
	cJSON *rec = it->out ? cJSON_Parse(it->out) : NULL;
	const char *dflt = it->status == SUB_TIMEOUT ? "timeout" : "fail";
	status_of(rec, "base_status", r->base, sizeof r->base, dflt);
	status_of(rec, "plus_status", r->plus, sizeof r->plus, dflt);
	const cJSON *bt = cJSON_GetObjectItemCaseSensitive(rec, "base_tried");
	const cJSON *pt = cJSON_GetObjectItemCaseSensitive(rec, "plus_tried");
	r->base_tried = cJSON_IsNumber(bt) ? bt->valueint : 0;
	r->plus_tried = cJSON_IsNumber(pt) ? pt->valueint : 0;
	cJSON_Delete(rec);
}

/* evaluate.py's get_failed_tests without --test-details: the last input
 * tried, when the set did not pass. */
static cJSON *failed_tests(const char *status, int tried, const struct evalset_problem *p,
			   const char *key)
{
	cJSON *a = cJSON_CreateArray();
	cJSON *in = strcmp(status, "pass") && tried > 0 ? input_at(p, key, tried - 1) : NULL;
	if (in)
		cJSON_AddItemToArray(a, in);
	return a;
}

/* The k list of one score (pass@k for each k every task reaches) into obj and
 * printed as evaluate.py prints it. */
static void scores(FILE *f, cJSON *obj, const int *ns, const int *cs, int np)
{
	for (size_t j = 0; j < sizeof ep_ks / sizeof ep_ks[0] && np; j++) {
		if (!passk_defined(ns, np, ep_ks[j]))
			continue;
		double sum = 0;
		for (int k = 0; k < np; k++)
			sum += passk_estimate(ns[k], cs[k], ep_ks[j]);
		char name[16];
		snprintf(name, sizeof name, "pass@%d", ep_ks[j]);
		cJSON_AddNumberToObject(obj, name, sum / np);
		fprintf(f, "%s:\t%.3f\n", name, sum / np);
	}
}

/* evaluate.py's file: FILE.eval_results.json beside FILE.jsonl (the older
 * FILE_eval_results.json when that one is there), else --out. */
static char *results_path(const struct evformat_output *o)
{
	if (o->out_path)
		return xstrdup(o->out_path);
	size_t n = strlen(o->samples_path);
	if (n > 6 && !strcmp(o->samples_path + n - 6, ".jsonl")) {
		char *legacy = xasprintf("%.*s_eval_results.json", (int)(n - 6), o->samples_path);
		FILE *f = fopen(legacy, "r");
		if (f) {
			fclose(f);
			return legacy;
		}
		free(legacy);
		return xasprintf("%.*s.eval_results.json", (int)(n - 6), o->samples_path);
	}
	return xasprintf("%s.eval_results.json", o->samples_path);
}

static int write_results(const struct evformat_output *o, FILE *f, char *err, size_t errlen)
{
	const struct evalset *s = o->set;
	const struct evalset_items *items = o->items;
	struct evformat_tally *t = xcalloc((size_t)items->n + 1, sizeof *t);
	int np = evformat_tally(items, t);
	int *ns = xcalloc((size_t)np + 1, sizeof *ns),
	    *base = xcalloc((size_t)np + 1, sizeof *base),
	    *plus = xcalloc((size_t)np + 1, sizeof *plus);
	cJSON *doc = cJSON_CreateObject(), *eval = cJSON_CreateObject();
	char date[32] = "", hash[33] = "";
	time_t now = time(NULL);
	struct tm tm;
	strftime(date, sizeof date, "%Y-%m-%d %H:%M", localtime_r(&now, &tm));
	struct strbuf raw = STRBUF_INIT;
	if (o->problems_path && strbuf_read_file(&raw, o->problems_path, (size_t)1 << 31) >= 0)
		md5_hex(raw.buf, raw.len, hash);
	strbuf_release(&raw);
	cJSON_AddStringToObject(doc, "date", date);
	cJSON_AddStringToObject(doc, "hash", hash);
	const char *ds = "humaneval";
	for (int k = 0; k < np; k++) {
		const struct evalset_problem *p = evalset_find(s, t[k].task_id);
		cJSON *list = cJSON_AddArrayToObject(eval, t[k].task_id);
		ds = dataset_of(t[k].task_id);
		for (int j = 0; j < items->n; j++) {
			const struct evalset_item *it = &items->v[j];
			if (!it->task_id || strcmp(it->task_id, t[k].task_id) || !p)
				continue;
			char *solution = program_of(p->obj, o->samples[it->sample]);
			struct ep_result r;
			item_result(it, &r);
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "task_id", t[k].task_id);
			cJSON_AddStringToObject(e, "solution", solution);
			cJSON_AddStringToObject(e, "base_status", r.base);
			cJSON_AddStringToObject(e, "plus_status", r.plus);
			cJSON_AddItemToObject(e, "base_fail_tests",
					      failed_tests(r.base, r.base_tried, p, "base_input"));
			cJSON_AddItemToObject(e, "plus_fail_tests",
					      failed_tests(r.plus, r.plus_tried, p, "plus_input"));
			cJSON_AddItemToArray(list, e);
			free(solution);
			ns[k]++;
			base[k] += !strcmp(r.base, "pass");
			plus[k] += !strcmp(r.base, "pass") && !strcmp(r.plus, "pass");
		}
	}
	cJSON_AddItemToObject(doc, "eval", eval);
	cJSON *pak = cJSON_AddObjectToObject(doc, "pass_at_k");
	fprintf(f, "%s (base tests)\n", ds);
	scores(f, cJSON_AddObjectToObject(pak, "base"), ns, base, np);
	fprintf(f, "%s+ (base + extra tests)\n", ds);
	scores(f, cJSON_AddObjectToObject(pak, "plus"), ns, plus, np);
	char *path = results_path(o);
	char *text = cJSON_PrintUnformatted(doc);
	int ret = evformat_write_file(path, text, strlen(text), false, err, errlen);
	if (ret == 0)
		fprintf(stderr, "judge eval: results in %s\n", path);
	free(text);
	free(path);
	cJSON_Delete(doc);
	free(t);
	free(ns);
	free(base);
	free(plus);
	return ret;
}

const struct evformat evfmt_evalplus = {
    .name = "evalplus",
    .id_key = "task_id",
    .detect = detect,
    .check = check,
    .expand = expand,
    .write = write_results,
    .default_timeout_ms = 4000,
    .problem_text = true,
};
