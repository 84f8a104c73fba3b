/* evformat_livecodebench: LiveCodeBench's code-generation scenario as it is
 * published (livecodebench/code_generation_lite, one JSON object per line:
 * question_title, question_content, platform, question_id, contest_id,
 * contest_date, starter_code, difficulty, public_test_cases, private_test_cases,
 * metadata) and graded by its runner (LiveCodeBench/LiveCodeBench at 28fef95:
 * lcb_runner/benchmarks/code_generation.py, evaluation/testing_util.py,
 * evaluation/compute_code_generation_metrics.py, evaluation/pass_k_utils.py,
 * runner/custom_evaluator.py; read, not copied).
 *
 * Tests: public_test_cases then private_test_cases, each a JSON string of
 * [{input, output, testtype}]; the private ones are plain JSON or, in the
 * published files, base64 of zlib of a pickled str holding that JSON (the
 * loader tries JSON first). metadata's func_name set: call-based tests, else
 * stdin. Samples are custom_evaluator's {"question_id", "code_list": [...]}
 * (a JSON array or one per line); each code is graded by evrun.h's rule lcb
 * (languages/harness/lcb.py) with the per-test alarm --timeout (whole seconds,
 * default 6) and the runner's global deadline (timeout + 1) x tests + 5 s.
 * Writes custom_evaluator's three files and prints metrics["pass@1"]. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/base64.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "judge/grading/evalset.h"
#include "judge/grading/evformat.h"
#include "judge/grading/passk.h"

/* A test set of a problem larger than this is not one we read. */
#define TESTS_MAX ((size_t)1 << 30)
/* LiveCodeBench's k list (compute_code_generation_metrics.py codegen_metrics) */
static const int lcb_ks[] = {1, 5, 10, 20, 40, 50, 75, 100, 125, 150, 200, 500, 1000};

static bool detect(const cJSON *p, const cJSON *smp)
{
	if (p)
		return evformat_str(p, "question_id") && evformat_str(p, "public_test_cases");
	return smp && evformat_str(smp, "question_id") &&
	       cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(smp, "code_list"));
}

/* Little-endian n-byte length at p. */
static size_t le(const unsigned char *p, int n)
{
	size_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

int evfmt_lcb_unpickle_str(const unsigned char *p, size_t n, struct strbuf *out)
{
	/* pickle protocols 2 to 5 of one str: PROTO v, FRAME len (4+), then
	 * SHORT_BINUNICODE, BINUNICODE or BINUNICODE8, a memo op, STOP */
	size_t at = 0;
	if (at + 2 <= n && p[at] == 0x80)
		at += 2;
	if (at + 9 <= n && p[at] == 0x95)
		at += 9;
	if (at >= n)
		return -1;
	int width = p[at] == 0x8c ? 1 : p[at] == 'X' ? 4 : p[at] == 0x8d ? 8 : 0;
	if (!width || at + 1 + (size_t)width > n)
		return -1;
	size_t len = le(p + at + 1, width);
	at += 1 + (size_t)width;
	if (len > n - at)
		return -1;
	strbuf_add(out, (const char *)p + at, len);
	at += len;
	if (at < n && p[at] == 0x94)
		at++;
	else if (at + 2 <= n && p[at] == 'q')
		at += 2;
	else if (at + 5 <= n && p[at] == 'r')
		at += 5;
	return at + 1 == n && p[at] == '.' ? 0 : -1;
}

/* zlib-inflates n bytes at p into out (at most TESTS_MAX). 0, or -1. */
static int inflate_all(const unsigned char *p, size_t n, struct strbuf *out)
{
	z_stream z = {0};
	if (inflateInit(&z) != Z_OK)
		return -1;
	z.next_in = (unsigned char *)p;
	z.avail_in = (uInt)n;
	unsigned char buf[65536];
	int rc;
	do {
		z.next_out = buf;
		z.avail_out = sizeof buf;
		rc = inflate(&z, Z_NO_FLUSH);
		if (rc != Z_OK && rc != Z_STREAM_END)
			break;
		strbuf_add(out, (const char *)buf, sizeof buf - z.avail_out);
		if (out->len > TESTS_MAX)
			rc = Z_MEM_ERROR;
	} while (rc == Z_OK && (z.avail_in || !z.avail_out));
	inflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -1;
}

int evfmt_lcb_tests(const char *text, cJSON **out, char *err, size_t errlen)
{
	*out = cJSON_Parse(text);
	if (cJSON_IsArray(*out))
		return 0;
	cJSON_Delete(*out);
	*out = NULL;
	struct strbuf raw = STRBUF_INIT, z = STRBUF_INIT, json = STRBUF_INIT;
	int ret = -1;
	if (!base64_decode(&raw, text, strlen(text)) ||
	    inflate_all((const unsigned char *)raw.buf, raw.len, &z) < 0 ||
	    evfmt_lcb_unpickle_str((const unsigned char *)z.buf, z.len, &json) < 0) {
		snprintf(err, errlen,
			 "test cases are neither JSON nor base64 of zlib of a "
			 "pickled JSON string");
		goto out;
	}
	*out = cJSON_ParseWithLength(json.buf, json.len);
	if (!cJSON_IsArray(*out)) {
		cJSON_Delete(*out);
		*out = NULL;
		snprintf(err, errlen, "the decoded test cases are not a JSON list");
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&raw);
	strbuf_release(&z);
	strbuf_release(&json);
	return ret;
}

/* Appends the inputs and outputs of tests (the field key of p) to ins and
 * outs. 0, or -1 with err. */
static int add_tests(const cJSON *p, const char *key, cJSON *ins, cJSON *outs, char *err,
		     size_t errlen)
{
	const char *text = evformat_str(p, key);
	cJSON *tests = NULL;
	char why[160];
	if (!text) {
		snprintf(err, errlen, "a LiveCodeBench problem needs %s, a string", key);
		return -1;
	}
	if (evfmt_lcb_tests(text, &tests, why, sizeof why) < 0) {
		snprintf(err, errlen, "%s: %s", key, why);
		return -1;
	}
	const cJSON *t;
	int ret = 0;
	cJSON_ArrayForEach(t, tests)
	{
		const char *in = evformat_str(t, "input"), *o = evformat_str(t, "output");
		if (!in || !o) {
			snprintf(err, errlen, "%s: a test needs input and output strings", key);
			ret = -1;
			break;
		}
		cJSON_AddItemToArray(ins, cJSON_CreateString(in));
		cJSON_AddItemToArray(outs, cJSON_CreateString(o));
	}
	cJSON_Delete(tests);
	return ret;
}

/* metadata's func_name (a JSON string holding an object), or NULL. */
static char *func_name(const cJSON *p)
{
	const char *m = evformat_str(p, "metadata");
	cJSON *md = m ? cJSON_Parse(m) : NULL;
	const char *fn = evformat_str(md, "func_name");
	char *r = fn ? xstrdup(fn) : NULL;
	cJSON_Delete(md);
	return r;
}

static int check(const cJSON *p, char *err, size_t errlen)
{
	cJSON *ins = cJSON_CreateArray(), *outs = cJSON_CreateArray();
	int rc = add_tests(p, "public_test_cases", ins, outs, err, errlen);
	if (rc == 0)
		rc = add_tests(p, "private_test_cases", ins, outs, err, errlen);
	cJSON_Delete(ins);
	cJSON_Delete(outs);
	return rc;
}

int evfmt_lcb_timeout_s(long timeout_ms)
{
	if (timeout_ms <= 0)
		return 6;
	return (int)((timeout_ms + 999) / 1000);
}

static void expand(const struct evalset *s, const cJSON *smp, int index, struct evalset_items *out)
{
	const char *qid = evformat_str(smp, "question_id");
	const struct evalset_problem *p = qid ? evalset_find(s, qid) : NULL;
	const cJSON *codes = cJSON_GetObjectItemCaseSensitive(smp, "code_list");
	if (!p || !cJSON_IsArray(codes)) {
		struct evalset_item *it = evformat_item_add(out, index, 0, qid);
		evformat_item_fail(it, !p ? "question_id not in the problems file"
					  : "sample has no code_list");
		return;
	}
	/* one language: the ini's first (only) section */
	const struct evformat_lang *l = s->facts.n > 0 ? &s->facts.langs[0] : NULL;
	cJSON *ins = cJSON_CreateArray(), *outs = cJSON_CreateArray();
	char err[200] = "";
	int rc = add_tests(p->obj, "public_test_cases", ins, outs, err, sizeof err);
	if (rc == 0)
		rc = add_tests(p->obj, "private_test_cases", ins, outs, err, sizeof err);
	if (rc == 0 && !l)
		snprintf(err, sizeof err, "languages/evalsets/livecodebench.ini has no section");
	int ntests = cJSON_GetArraySize(ins), t = evfmt_lcb_timeout_s(s->timeout_ms);
	char *fn = func_name(p->obj);
	const cJSON *c;
	int k = 0;
	cJSON_ArrayForEach(c, codes)
	{
		struct evalset_item *it = evformat_item_add(out, index, k++, qid);
		if (rc < 0 || !l || !cJSON_IsString(c)) {
			evformat_item_fail(it, *err ? err : "code_list holds a non-string");
			continue;
		}
		cJSON *doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "code", c->valuestring);
		cJSON_AddItemToObject(doc, "fn_name",
				      fn ? cJSON_CreateString(fn) : cJSON_CreateNull());
		cJSON_AddItemReferenceToObject(doc, "inputs", ins);
		cJSON_AddItemReferenceToObject(doc, "outputs", outs);
		cJSON_AddNumberToObject(doc, "timeout", t);
		char *src = cJSON_PrintUnformatted(doc);
		cJSON_Delete(doc);
		evformat_item_program(s, it, l, src);
		free(src);
		/* the runner's global deadline: (timeout + 1) per test, and 5 s */
		it->req.has_limits = true;
		it->req.limits.time_ms = ((long)(t + 1) * ntests + 5) * 1000;
		it->req.limits.wall_ms = it->req.limits.time_ms;
	}
	free(fn);
	cJSON_Delete(ins);
	cJSON_Delete(outs);
}

static int by_qid(const void *a, const void *b)
{
	const struct evalset_problem *x = *(const struct evalset_problem *const *)a;
	const struct evalset_problem *y = *(const struct evalset_problem *const *)b;
	return strcmp(x->task_id, y->task_id);
}

/* The per-test results and metadata of a graded item, as the harness wrote
 * them into its stdout; else what the runner records when its worker died:
 * [-2] with a TestRunnerError (compute_code_generation_metrics.py: the empty
 * metadata list raises an IndexError). */
static void item_record(const struct evalset_item *it, int ntests, cJSON **results, char **meta)
{
	cJSON *rec = it->out ? cJSON_Parse(it->out) : NULL;
	cJSON *r = cJSON_DetachItemFromObjectCaseSensitive(rec, "results");
	const char *m = evformat_str(rec, "metadata");
	if (cJSON_IsArray(r) && m) {
		*results = r;
		*meta = xstrdup(m);
	} else if (it->passed) { /* the record was cut: all passed */
		cJSON_Delete(r);
		*results = cJSON_CreateArray();
		for (int i = 0; i < ntests; i++)
			cJSON_AddItemToArray(*results, cJSON_CreateTrue());
		*meta = xstrdup("{}");
	} else {
		cJSON_Delete(r);
		*results = cJSON_CreateArray();
		cJSON_AddItemToArray(*results, cJSON_CreateNumber(-2));
		*meta = xstrdup(
		    it->error ? "{\"error_code\": -4, \"error_message\": \"Runtime Error\"}"
			      : "{\"error\": \"IndexError('list index out of range')\", "
				"\"error_code\": -5, \"error_message\": \"TestRunnerError\"}");
	}
	cJSON_Delete(rec);
}

/* custom_evaluator's file names: FILE minus its last five characters (".json")
 * + "_codegeneration_output.json", then "_eval.json" and "_eval_all.json". */
static char *out_name(const struct evformat_output *o, const char *suffix)
{
	if (o->out_path)
		return xasprintf("%s%s", o->out_path, suffix);
	size_t n = strlen(o->samples_path);
	return xasprintf("%.*s_codegeneration_output%s", (int)(n > 5 ? n - 5 : n), o->samples_path,
			 suffix);
}

static int write_json(const char *path, cJSON *v, char *err, size_t errlen)
{
	char *text = cJSON_Print(v);
	int rc = evformat_write_file(path, text, strlen(text), false, err, errlen);
	free(text);
	return rc;
}

static const char *const fields[] = {"question_title", "question_content", "platform",
				     "question_id",    "contest_id",	   "contest_date",
				     "starter_code",   "difficulty",	   NULL};

static int write_results(const struct evformat_output *o, FILE *f, char *err, size_t errlen)
{
	const struct evalset *s = o->set;
	const struct evalset_items *items = o->items;
	/* the problems with samples, by question_id (the benchmark's order) */
	const struct evalset_problem **ps = xcalloc((size_t)s->count + 1, sizeof *ps);
	int np = 0, ret = -1;
	for (int i = 0; i < s->count; i++)
		for (int j = 0; j < items->n; j++)
			if (items->v[j].task_id &&
			    !strcmp(items->v[j].task_id, s->problems[i].task_id)) {
				ps[np++] = &s->problems[i];
				break;
			}
	qsort(ps, (size_t)np, sizeof *ps, by_qid);
	cJSON *save = cJSON_CreateArray(), *all = cJSON_CreateArray();
	cJSON *results = cJSON_CreateObject(), *metas = cJSON_CreateArray();
	int *ns = xcalloc((size_t)np + 1, sizeof *ns), *cs = xcalloc((size_t)np + 1, sizeof *cs);
	char *p1 = NULL, *p2 = NULL, *p3 = NULL;
	for (int k = 0; k < np; k++) {
		cJSON *ins = cJSON_CreateArray(), *outs = cJSON_CreateArray();
		char why[200];
		add_tests(ps[k]->obj, "public_test_cases", ins, outs, why, sizeof why);
		add_tests(ps[k]->obj, "private_test_cases", ins, outs, why, sizeof why);
		int ntests = cJSON_GetArraySize(ins);
		cJSON_Delete(ins);
		cJSON_Delete(outs);
		cJSON *entry = cJSON_CreateObject();
		for (int i = 0; fields[i]; i++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(ps[k]->obj, fields[i]);
			cJSON_AddItemToObject(entry, fields[i],
					      v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull());
		}
		cJSON *codes = cJSON_CreateArray(), *graded = cJSON_CreateArray();
		cJSON *per = cJSON_CreateArray(), *meta = cJSON_CreateArray();
		for (int j = 0; j < items->n; j++) {
			const struct evalset_item *it = &items->v[j];
			if (!it->task_id || strcmp(it->task_id, ps[k]->task_id))
				continue;
			const cJSON *cl =
			    cJSON_GetObjectItemCaseSensitive(o->samples[it->sample], "code_list");
			const cJSON *code = cJSON_GetArrayItem(cl, it->completion);
			cJSON_AddItemToArray(
			    codes,
			    cJSON_CreateString(cJSON_IsString(code) ? code->valuestring : ""));
			cJSON *r;
			char *m;
			item_record(it, ntests, &r, &m);
			/* np.all(result > 0) */
			bool ok = cJSON_GetArraySize(r) > 0;
			const cJSON *e;
			cJSON_ArrayForEach(e, r) ok =
			    ok && (cJSON_IsTrue(e) || (cJSON_IsNumber(e) && e->valuedouble > 0));
			cJSON_AddItemToArray(per, r);
			cJSON_AddItemToArray(meta, cJSON_CreateString(m));
			free(m);
			cJSON_AddItemToArray(graded, cJSON_CreateBool(ok));
			ns[k]++;
			cs[k] += ok;
		}
		cJSON_AddItemToObject(entry, "output_list", cJSON_Duplicate(codes, 1));
		cJSON_AddItemToObject(entry, "code_list", codes);
		cJSON_AddItemToArray(save, cJSON_Duplicate(entry, 1));
		cJSON_AddItemToObject(entry, "graded_list", graded);
		cJSON_AddNumberToObject(entry, "pass@1", ns[k] ? (double)cs[k] / ns[k] : 0);
		cJSON_AddItemToObject(entry, "metadata", cJSON_Duplicate(meta, 1));
		cJSON_AddItemToArray(all, entry);
		char key[16];
		snprintf(key, sizeof key, "%d", k);
		cJSON_AddItemToObject(results, key, per);
		cJSON_AddItemToArray(metas, meta);
	}
	/* compute_metrics_from_results: the mean for each k every problem reaches */
	cJSON *metrics = cJSON_CreateObject(), *detail = cJSON_CreateObject();
	double pass1 = -1;
	for (size_t j = 0; j < sizeof lcb_ks / sizeof lcb_ks[0] && np; j++) {
		if (!passk_defined(ns, np, lcb_ks[j]))
			continue;
		char name[32], key[16];
		snprintf(name, sizeof name, "pass@%d", lcb_ks[j]);
		cJSON *d = cJSON_CreateObject();
		double sum = 0;
		for (int k = 0; k < np; k++) {
			double v = passk_estimate(ns[k], cs[k], lcb_ks[j]);
			snprintf(key, sizeof key, "%d", k);
			cJSON_AddNumberToObject(d, key, v);
			sum += v;
		}
		cJSON_AddNumberToObject(metrics, name, sum / np);
		cJSON_AddItemToObject(detail, name, d);
		if (lcb_ks[j] == 1)
			pass1 = sum / np;
	}
	cJSON_AddItemToObject(metrics, "detail", detail);
	cJSON *evalj = cJSON_CreateArray();
	cJSON_AddItemToArray(evalj, metrics);
	cJSON_AddItemToArray(evalj, results);
	cJSON_AddItemToArray(evalj, metas);
	p1 = out_name(o, ".json");
	p2 = out_name(o, "_eval.json");
	p3 = out_name(o, "_eval_all.json");
	if (write_json(p1, save, err, errlen) < 0 || write_json(p2, evalj, err, errlen) < 0 ||
	    write_json(p3, all, err, errlen) < 0)
		goto out;
	struct strbuf line = STRBUF_INIT;
	if (pass1 >= 0)
		evformat_pyfloat(&line, pass1);
	fprintf(f, "%s\n", pass1 >= 0 ? line.buf : "nan");
	strbuf_release(&line);
	fprintf(stderr, "judge eval: results in %s, %s and %s\n", p1, p2, p3);
	ret = 0;
out:
	free(p1);
	free(p2);
	free(p3);
	cJSON_Delete(save);
	cJSON_Delete(all);
	cJSON_Delete(evalj);
	free(ns);
	free(cs);
	free(ps);
	return ret;
}

const struct evformat evfmt_livecodebench = {
    .name = "livecodebench",
    .id_key = "question_id",
    .detect = detect,
    .check = check,
    .expand = expand,
    .write = write_results,
    .default_timeout_ms = 6000,
};
