/* jsonval: comparing and showing JSON values (function problems' results). */
#include "judge/grading/jsonval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

void jsonval_opts_init(struct jsonval_opts *o)
{
	o->abs_tol = o->rel_tol = -1;
	o->unordered = false;
}

static bool num_equal(double e, double g, const struct jsonval_opts *o)
{
	if (e == g)
		return true;
	if (isnan(e) || isnan(g))
		return false;
	double d = fabs(e - g);
	if (o->abs_tol >= 0 && d <= o->abs_tol)
		return true;
	return o->rel_tol >= 0 && d <= o->rel_tol * fabs(e);
}

static bool deep_equal(const cJSON *e, const cJSON *g, const struct jsonval_opts *o);

static bool object_equal(const cJSON *e, const cJSON *g, const struct jsonval_opts *o)
{
	if (cJSON_GetArraySize(e) != cJSON_GetArraySize(g))
		return false;
	const cJSON *it;
	cJSON_ArrayForEach(it, e)
	{
		const cJSON *other = cJSON_GetObjectItemCaseSensitive(g, it->string);
		if (!other || !deep_equal(it, other, o))
			return false;
	}
	return true;
}

static bool deep_equal(const cJSON *e, const cJSON *g, const struct jsonval_opts *o)
{
	if (cJSON_IsBool(e) || cJSON_IsBool(g))
		return cJSON_IsBool(e) && cJSON_IsBool(g) && cJSON_IsTrue(e) == cJSON_IsTrue(g);
	if ((e->type & 0xff) != (g->type & 0xff))
		return false;
	if (cJSON_IsNumber(e))
		return num_equal(e->valuedouble, g->valuedouble, o);
	if (cJSON_IsString(e))
		return !strcmp(e->valuestring, g->valuestring);
	if (cJSON_IsObject(e))
		return object_equal(e, g, o);
	if (cJSON_IsArray(e)) {
		if (cJSON_GetArraySize(e) != cJSON_GetArraySize(g))
			return false;
		for (const cJSON *a = e->child, *b = g->child; a; a = a->next, b = b->next)
			if (!deep_equal(a, b, o))
				return false;
		return true;
	}
	return true; /* null */
}

/* Greedy matching of each expected element to an unused equal one: quadratic,
 * but lists of results are short, and tolerances rule out sorting. */
static bool unordered_equal(const cJSON *e, const cJSON *g, const struct jsonval_opts *o)
{
	int n = cJSON_GetArraySize(e);
	if (n != cJSON_GetArraySize(g))
		return false;
	const cJSON **left = xcalloc((size_t)n + 1, sizeof *left);
	int k = 0;
	for (const cJSON *b = g->child; b; b = b->next)
		left[k++] = b;
	bool ok = true;
	for (const cJSON *a = e->child; a && ok; a = a->next) {
		ok = false;
		for (int i = 0; i < k; i++)
			if (deep_equal(a, left[i], o)) {
				left[i] = left[--k];
				ok = true;
				break;
			}
	}
	free(left);
	return ok;
}

bool jsonval_equal(const cJSON *expected, const cJSON *got, const struct jsonval_opts *o)
{
	if (!expected || !got)
		return !expected && !got;
	if (o->unordered && cJSON_IsArray(expected) && cJSON_IsArray(got))
		return unordered_equal(expected, got, o);
	return deep_equal(expected, got, o);
}

/* Cuts sb back to start + max bytes at a character boundary, adding "...". */
static void cut(struct strbuf *sb, size_t start, size_t max)
{
	if (sb->len - start <= max)
		return;
	size_t at = start + max;
	while (at > start && ((unsigned char)sb->buf[at] & 0xc0) == 0x80)
		at--;
	sb->len = at;
	sb->buf[at] = 0;
	strbuf_addstr(sb, "...");
}

void jsonval_show(struct strbuf *sb, const cJSON *v, size_t max)
{
	size_t start = sb->len;
	if (!v) {
		strbuf_addstr(sb, "nothing");
		return;
	}
	char *text = cJSON_PrintUnformatted(v);
	strbuf_addstr(sb, text);
	free(text);
	cut(sb, start, max);
}

void jsonval_show_args(struct strbuf *sb, const cJSON *args, size_t max)
{
	size_t start = sb->len;
	const cJSON *a;
	cJSON_ArrayForEach(a, args)
	{
		if (a != args->child)
			strbuf_addstr(sb, ", ");
		jsonval_show(sb, a, max);
		if (sb->len - start > max)
			break;
	}
	cut(sb, start, max);
}
