/* problem_group: the scoring settings of a test group (testdata.yaml /
 * test_group.yaml). Part of the problem module (problem_).
 *
 * The three formats spell them differently, and real packages mix them (Kattis'
 * own 2023-07-draft examples still use the legacy keys), so every spelling is
 * read whatever the package's version:
 *   2025-09   score_aggregation: sum | min | pass-fail, max_score: N | unbounded
 *   2023-07   scoring: {aggregation: sum | min, score: N | unbounded}
 *   legacy    grader_flags: "... sum | min ...", accept_score, reject_score,
 *             range: "lo hi", grading: default | custom
 * A setting the judge cannot honour (a custom grader, max/avg aggregation) makes
 * the problem unsupported with the reason instead of being graded otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/grading/problem.h"
#include "judge/grading/problem_int.h"
#include "common/xalloc.h"

static void unsupported(struct problem_loader *L, const char *what, const char *word)
{
	if (!L->p->unsupported)
		L->p->unsupported = xasprintf("%s '%s' is not supported", what, word);
}

static int parse_agg(struct problem_loader *L, const char *w, const char *path,
		     enum problem_agg *out)
{
	if (!strcmp(w, "sum"))
		*out = PROB_AGG_SUM;
	else if (!strcmp(w, "min"))
		*out = PROB_AGG_MIN;
	else if (!strcmp(w, "pass-fail"))
		*out = PROB_AGG_PASS_FAIL;
	else {
		problem_fail(L->err, L->errlen,
			     "%s: score aggregation must be sum, min or pass-fail, got '%s'", path,
			     w);
		return -1;
	}
	return 0;
}

/* legacy grader_flags: the aggregation word; verdict words are the judge's own rule */
static void grader_flags(struct problem_loader *L, struct yaml_file *y, yaml_node_t *n,
			 struct problem_group *g)
{
	const char *s = yaml_scalar(n);
	struct problem_strv w = {0};
	problem_strv_split(&w, s ? s : "");
	for (int i = 0; i < w.n; i++) {
		if (!strcmp(w.v[i], "sum"))
			g->agg = PROB_AGG_SUM;
		else if (!strcmp(w.v[i], "min"))
			g->agg = PROB_AGG_MIN;
		else if (!strcmp(w.v[i], "max") || !strcmp(w.v[i], "avg"))
			unsupported(L, "grader flag", w.v[i]);
	}
	problem_strv_release(&w);
	(void)y;
}

/* range: "lo hi", each a number or ±inf */
static int parse_range(struct problem_loader *L, const char *s, const char *path,
		       struct problem_group *g)
{
	char *end1, *end2;
	double lo = strtod(s, &end1);
	double hi = end1 != s ? strtod(end1, &end2) : NAN;
	if (end1 == s || end2 == end1 || isnan(lo) || isnan(hi) || lo > hi) {
		problem_fail(L->err, L->errlen, "%s: range must be two numbers \"lo hi\", got '%s'",
			     path, s);
		return -1;
	}
	while (*end2 == ' ' || *end2 == '\t')
		end2++;
	if (*end2) {
		problem_fail(L->err, L->errlen, "%s: range must be two numbers \"lo hi\", got '%s'",
			     path, s);
		return -1;
	}
	g->has_range = true;
	g->range_lo = lo;
	g->range_hi = hi;
	return 0;
}

static int parse_max(struct problem_loader *L, struct yaml_file *y, yaml_node_t *n,
		     const char *path, struct problem_group *g)
{
	const char *s = yaml_scalar(n);
	if (yaml_is_null(n))
		return 0;
	if (s && !strcmp(s, "unbounded")) {
		g->max_score = -1;
		return 0;
	}
	(void)y;
	return yaml_double(n, "max_score", path, 0, &g->max_score, L->err, L->errlen);
}

int problem_group_settings(struct problem_loader *L, struct yaml_file *y, yaml_node_t *root,
			   const char *path, struct problem_group *g)
{
	yaml_node_t *sc = yaml_get(y, root, "scoring");
	yaml_node_t *agg = yaml_get(y, root, "score_aggregation");
	yaml_node_t *max = yaml_get(y, root, "max_score");
	if (sc && sc->type == YAML_MAPPING_NODE) {
		agg = agg ? agg : yaml_get(y, sc, "aggregation");
		max = max ? max : yaml_get(y, sc, "score");
	}
	const char *grading = yaml_scalar(yaml_get(y, root, "grading"));
	if (grading && strcmp(grading, "default"))
		unsupported(L, "grading", grading);
	grader_flags(L, y, yaml_get(y, root, "grader_flags"), g);
	const char *a = yaml_scalar(agg);
	if (a && *a && parse_agg(L, a, path, &g->agg) < 0)
		return -1;
	if (parse_max(L, y, max, path, g) < 0)
		return -1;
	yaml_node_t *acc = yaml_get(y, root, "accept_score");
	if (!yaml_is_null(acc)) {
		if (yaml_double(acc, "accept_score", path, -1e12, &g->accept_score, L->err,
				L->errlen) < 0)
			return -1;
		g->has_accept = true;
	}
	if (yaml_double(yaml_get(y, root, "reject_score"), "reject_score", path, -1e12,
			&g->reject_score, L->err, L->errlen) < 0)
		return -1;
	const char *range = yaml_scalar(yaml_get(y, root, "range"));
	if (range && *range && parse_range(L, range, path, g) < 0)
		return -1;
	return 0;
}

int problem_group_add(struct problem_loader *L, const char *name, int parent,
		      const struct problem_group *settings)
{
	struct problem *p = L->p;
	p->groups = xreallocarray(p->groups, (size_t)p->ngroups + 1, sizeof *p->groups);
	struct problem_group *g = &p->groups[p->ngroups];
	*g = *settings;
	g->name = xstrdup(name);
	g->parent = parent;
	return p->ngroups++;
}
