/* compare_unordered: lines or tokens compared as multisets (sorting both
 * sides). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/grading/compare_int.h"
#include "common/xalloc.h"

/* Below this many items a comparison sort beats two passes over 64 Ki counters.
 */
#define RADIX_MIN 50000

struct item {
	const char *p;
	uint32_t len;
	uint32_t hash;
};

struct uside {
	const char *s;
	size_t n;
	struct item *items;
	size_t nitems;
	double *floats;
	size_t nfloats;
};

static uint32_t item_hash(const char *p, size_t n, bool ci)
{
	uint32_t h = 2166136261u; /* FNV-1a: only orders the sort, equality is checked
				     in full */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (ci ? compare_fold((unsigned char)p[i]) : (unsigned char)p[i])) *
		    16777619u;
	return h;
}

static int item_cmp_cs(const void *a_, const void *b_)
{
	const struct item *a = a_, *b = b_;
	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return memcmp(a->p, b->p, a->len);
}

static int item_cmp_ci(const void *a_, const void *b_)
{
	const struct item *a = a_, *b = b_;
	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	for (uint32_t i = 0; i < a->len; i++) {
		unsigned char x = compare_fold((unsigned char)a->p[i]),
			      y = compare_fold((unsigned char)b->p[i]);
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/* Stable LSD radix sort of items by hash, two 16-bit passes; tmp holds n items
 * and count 65537 counters. Linear time, whatever the input. */
static void radix_items(struct item *items, struct item *tmp, size_t *count, size_t n)
{
	for (int sh = 0; sh <= 16; sh += 16) {
		memset(count, 0, 65537 * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[((items[i].hash >> sh) & 0xffff) + 1]++;
		for (size_t k = 1; k <= 65536; k++)
			count[k] += count[k - 1];
		for (size_t i = 0; i < n; i++)
			tmp[count[(items[i].hash >> sh) & 0xffff]++] = items[i];
		memcpy(items, tmp, n * sizeof(*items));
	}
}

static int item_sort_cs(const void *a, const void *b);
static int item_sort_ci(const void *a, const void *b);

/* Sorts items by hash, content, position. After the radix sort by hash (stable,
 * so positions stay in order) only runs of equal hashes need a comparison
 * sort, and only when their contents are out of order: rare unless someone
 * crafts FNV collisions, and then it is qsort's n log n. */
static void sort_items(struct item *items, size_t n, bool ci)
{
	int (*sortcmp)(const void *, const void *) = ci ? item_sort_ci : item_sort_cs;
	if (n < RADIX_MIN) {
		qsort(items, n, sizeof(*items), sortcmp);
		return;
	}
	struct item *tmp = xcalloc(n, sizeof(*tmp));
	size_t *count = xcalloc(65537, sizeof(*count));
	radix_items(items, tmp, count, n);
	free(tmp);
	free(count);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		bool sorted = true;
		for (; j < n && items[j].hash == items[i].hash; j++)
			sorted &= sortcmp(&items[j - 1], &items[j]) < 0;
		if (!sorted)
			qsort(items + i, j - i, sizeof(*items), sortcmp);
		i = j;
	}
}

/* Sort order: content, then position, so equal items keep file order and the
 * reported missing or extra item is the later occurrence. */
static int item_sort_cs(const void *a, const void *b)
{
	int c = item_cmp_cs(a, b);
	const char *pa = ((const struct item *)a)->p, *pb = ((const struct item *)b)->p;
	return c ? c : (pa > pb) - (pa < pb);
}

static int item_sort_ci(const void *a, const void *b)
{
	int c = item_cmp_ci(a, b);
	const char *pa = ((const struct item *)a)->p, *pb = ((const struct item *)b)->p;
	return c ? c : (pa > pb) - (pa < pb);
}

static int double_cmp(const void *a_, const void *b_)
{
	double a = *(const double *)a_, b = *(const double *)b_;
	return (a > b) - (a < b);
}

/* Sorts finite doubles ascending: qsort when few, else an LSD radix sort on
 * their bits mapped to unsigned order (four 16-bit passes). */
static void sort_doubles(double *v, size_t n)
{
	if (n < RADIX_MIN) {
		qsort(v, n, sizeof(*v), double_cmp);
		return;
	}
	uint64_t *key = xcalloc(n, sizeof(*key)), *tmp = xcalloc(n, sizeof(*tmp));
	size_t *count = xcalloc(65537, sizeof(*count));
	for (size_t i = 0; i < n; i++) {
		uint64_t b;
		memcpy(&b, &v[i], sizeof(b));
		key[i] = b >> 63 ? ~b : b | (1ULL << 63);
	}
	for (int sh = 0; sh < 64; sh += 16) {
		memset(count, 0, 65537 * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[((key[i] >> sh) & 0xffff) + 1]++;
		for (size_t k = 1; k <= 65536; k++)
			count[k] += count[k - 1];
		for (size_t i = 0; i < n; i++)
			tmp[count[(key[i] >> sh) & 0xffff]++] = key[i];
		memcpy(key, tmp, n * sizeof(*key));
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t b = key[i] >> 63 ? key[i] & ~(1ULL << 63) : ~key[i];
		memcpy(&v[i], &b, sizeof(b));
	}
	free(key);
	free(tmp);
	free(count);
}

/* Splits one side into items (lines or tokens), counting first so each array
 * is allocated once. Returns 0, or -1 when an item is 4 GiB or more. */
static int uside_collect(const struct compare_options *o, struct uside *u, bool fill)
{
	bool tokens = o->unordered_tokens, floats = tokens && compare_use_floats(o);
	bool ci = tokens && !o->case_sensitive;
	size_t ni = 0, nf = 0;
	if (tokens) {
		for (size_t i = 0; i < u->n;) {
			while (i < u->n && compare_is_ws((unsigned char)u->s[i]))
				i++;
			if (i >= u->n)
				break;
			size_t j = i;
			while (j < u->n && !compare_is_ws((unsigned char)u->s[j]))
				j++;
			double v;
			if (j - i > UINT32_MAX)
				return -1;
			if (floats && compare_parse_float(u->s + i, j - i, &v)) {
				if (fill)
					u->floats[nf] = v;
				nf++;
			} else {
				if (fill)
					u->items[ni] =
					    (struct item){u->s + i, (uint32_t)(j - i),
							  item_hash(u->s + i, j - i, ci)};
				ni++;
			}
			i = j;
		}
	} else {
		size_t end = compare_rstrip_all(u->s, u->n);
		for (size_t i = 0; i < end;) {
			const char *nl = memchr(u->s + i, '\n', end - i);
			size_t eol = nl ? (size_t)(nl - u->s) : end;
			size_t l = compare_rstrip_line(u->s + i, eol - i);
			if (l > UINT32_MAX)
				return -1;
			if (fill)
				u->items[ni] = (struct item){u->s + i, (uint32_t)l,
							     item_hash(u->s + i, l, false)};
			ni++;
			i = eol + 1;
		}
	}
	if (!fill) {
		u->items = xcalloc(ni, sizeof(*u->items));
		u->floats = xcalloc(nf, sizeof(*u->floats));
	}
	u->nitems = ni;
	u->nfloats = nf;
	return 0;
}

enum compare_outcome compare_unordered(const struct compare_options *o, const char *e, size_t en,
				       const char *g, size_t gn, struct compare_feedback *fb)
{
	enum compare_outcome ret = CMP_ERROR;
	struct uside a = {.s = e, .n = en}, b = {.s = g, .n = gn};
	const char *what = o->unordered_tokens ? "token" : "line";
	if (uside_collect(o, &a, false) || uside_collect(o, &a, true) ||
	    uside_collect(o, &b, false) || uside_collect(o, &b, true)) {
		compare_fb_msg(fb, "unordered comparison: a %s of 4 GiB or more", what);
		goto out;
	}
	bool ci = o->unordered_tokens && !o->case_sensitive;
	int (*cmp)(const void *, const void *) = ci ? item_cmp_ci : item_cmp_cs;
	sort_items(a.items, a.nitems, ci);
	sort_items(b.items, b.nitems, ci);
	const struct item *miss = NULL, *extra = NULL;
	size_t nmiss = 0, nextra = 0;
	for (size_t i = 0, j = 0; i < a.nitems || j < b.nitems;) {
		int c = i == a.nitems ? 1 : j == b.nitems ? -1 : cmp(&a.items[i], &b.items[j]);
		if (!c) {
			i++, j++;
		} else if (c < 0) {
			if (!miss || a.items[i].p < miss->p)
				miss = &a.items[i];
			nmiss++, i++;
		} else {
			if (!extra || b.items[j].p < extra->p)
				extra = &b.items[j];
			nextra++, j++;
		}
	}
	ret = CMP_DIFFER;
	char ms[48], xs[48];
	if (miss || extra) {
		long col;
		if (miss) {
			compare_line_col(e, (size_t)(miss->p - e), &fb->expected_line, &col);
			compare_piece(fb->expected, sizeof(fb->expected), miss->p, miss->len);
			compare_piece(ms, sizeof(ms), miss->p, miss->len);
		}
		if (extra) {
			compare_line_col(g, (size_t)(extra->p - g), &fb->line, &fb->column);
			compare_piece(fb->got, sizeof(fb->got), extra->p, extra->len);
			compare_piece(xs, sizeof(xs), extra->p, extra->len);
		}
		if (miss && extra)
			compare_fb_msg(
			    fb,
			    "%zu expected %s%s missing, %zu unexpected; e.g. '%s' (expected "
			    "line %ld) is missing, '%s' (line %ld) is unexpected",
			    nmiss, what, nmiss == 1 ? "" : "s", nextra, ms, fb->expected_line, xs,
			    fb->line);
		else if (miss)
			compare_fb_msg(
			    fb,
			    "output ended early: %zu expected %s%s missing, e.g. '%s' (expected "
			    "line %ld)",
			    nmiss, what, nmiss == 1 ? "" : "s", ms, fb->expected_line);
		else
			compare_fb_msg(fb,
				       "extra output: %zu unexpected %s%s, e.g. '%s' (line %ld)",
				       nextra, what, nextra == 1 ? "" : "s", xs, fb->line);
		goto out;
	}
	if (a.nfloats != b.nfloats) {
		compare_fb_msg(fb, "expected %zu numbers, got %zu", a.nfloats, b.nfloats);
		goto out;
	}
	sort_doubles(a.floats, a.nfloats);
	sort_doubles(b.floats, b.nfloats);
	for (size_t i = 0; i < a.nfloats; i++) {
		if (!compare_within_tol(o, a.floats[i], b.floats[i])) {
			snprintf(fb->expected, sizeof(fb->expected), "%.15g", a.floats[i]);
			snprintf(fb->got, sizeof(fb->got), "%.15g", b.floats[i]);
			compare_fb_msg(
			    fb,
			    "number %zu of %zu in sorted order: expected %.10g, got %.10g: "
			    "difference %.3g is above the tolerance (absolute %.3g, relative "
			    "%.3g)",
			    i + 1, a.nfloats, a.floats[i], b.floats[i],
			    fabs(a.floats[i] - b.floats[i]),
			    o->float_abs_tol < 0 ? 0 : o->float_abs_tol,
			    o->float_rel_tol < 0 ? 0 : o->float_rel_tol);
			goto out;
		}
	}
	ret = CMP_MATCH;
out:
	free(a.items);
	free(a.floats);
	free(b.items);
	free(b.floats);
	return ret;
}
