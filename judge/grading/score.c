/* score: aggregates test outcomes into group scores and the submission's score (score.h).
 *
 * How it works: groups are stored parents first (problem_data.c walks depth
 * first), so budgets are set in one pass forward and scores summed up in one
 * pass backward, each group adding itself into its parent.
 */
#include "judge/grading/score.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "judge/grading/problem.h"
#include "common/xalloc.h"

/* The budget of each child of g that states none (-1: unbounded). */
static double share(const struct problem *p, int g, const double *budget)
{
	if (budget[g] < 0)
		return -1;
	if (p->groups[g].agg != PROB_AGG_SUM)
		return budget[g];
	double left = budget[g];
	int open = 0;
	for (int i = 0; i < p->ngroups; i++)
		if (p->groups[i].parent == g) {
			if (p->groups[i].max_score >= 0)
				left -= p->groups[i].max_score;
			else
				open++;
		}
	for (int i = 0; i < p->ntests; i++)
		open += p->tests[i].group == g;
	if (open == 0)
		return -1;
	return left > 0 ? left / open : 0;
}

static void test_score(const struct problem_group *g, double budget, const struct score_test *t,
		       double *score, double *max)
{
	double full = g->has_accept ? g->accept_score : budget >= 0 ? budget : 1;
	*max = full;
	if (!t->ran || !t->accepted)
		*score = g->reject_score;
	else if (t->has_value)
		*score = t->multiplier ? t->value * (budget >= 0 ? budget : full) : t->value;
	else
		*score = full;
}

/* Folds a child's score into its group's running sums. */
struct acc {
	double sum, sum_max, min, min_max;
	int n;
	bool all;
};

static void acc_add(struct acc *a, double s, double m, bool accepted)
{
	a->sum += s;
	a->sum_max += m;
	a->min = a->n == 0 || s < a->min ? s : a->min;
	a->min_max = a->n == 0 || m < a->min_max ? m : a->min_max;
	a->all = (a->n == 0 || a->all) && accepted;
	a->n++;
}

static void acc_finish(const struct problem_group *g, double budget, const struct acc *a,
		       struct score_group *out)
{
	out->accepted = a->n == 0 || a->all;
	switch (g->agg) {
	case PROB_AGG_MIN:
		out->score = a->n ? a->min : 0;
		out->max = a->n ? a->min_max : 0;
		break;
	case PROB_AGG_PASS_FAIL:
		out->max = budget >= 0 ? budget : a->sum_max;
		out->score = out->accepted ? out->max : 0;
		break;
	case PROB_AGG_SUM:
		out->score = a->sum;
		out->max = a->sum_max;
		break;
	}
	if (g->has_range) {
		out->score = fmin(fmax(out->score, g->range_lo), g->range_hi);
		out->max = fmin(fmax(out->max, g->range_lo), g->range_hi);
	}
}

double score_problem(const struct problem *p, const struct score_test *tests,
		     struct score_group *groups, double *test_scores, double *max)
{
	int ng = p->ngroups;
	double *budget = xcalloc((size_t)ng + 1, sizeof *budget);
	double *child = xcalloc((size_t)ng + 1, sizeof *child);
	struct acc *acc = xcalloc((size_t)ng + 1, sizeof *acc);
	for (int g = 0; g < ng; g++) {
		const struct problem_group *pg = &p->groups[g];
		budget[g] = pg->max_score >= 0 ? pg->max_score
			    : pg->parent >= 0  ? child[pg->parent]
					       : -1;
		child[g] = share(p, g, budget);
	}
	for (int i = 0; i < p->ntests; i++) {
		int g = p->tests[i].group;
		double s, m;
		test_score(&p->groups[g], child[g], &tests[i], &s, &m);
		if (test_scores)
			test_scores[i] = s;
		acc_add(&acc[g], s, m, tests[i].ran && tests[i].accepted);
	}
	double total = 0, total_max = 0;
	int scored = -1;
	for (int g = ng - 1; g >= 0; g--) {
		acc_finish(&p->groups[g], budget[g], &acc[g], &groups[g]);
		if (p->groups[g].parent >= 0)
			acc_add(&acc[p->groups[g].parent], groups[g].score, groups[g].max,
				groups[g].accepted);
		else if (!strcmp(p->groups[g].name, "secret") || scored < 0)
			scored = g;
	}
	if (scored >= 0) {
		total = groups[scored].score;
		total_max = groups[scored].max;
	}
	free(budget);
	free(child);
	free(acc);
	*max = total_max;
	return total;
}
