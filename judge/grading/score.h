/* score (score_): the score of a scoring problem's submission, from its tests'
 * outcomes and the package's test groups (problem.h, struct problem_group).
 *
 * Rules (the ICPC package format's, read for all three versions):
 *  - Each group has a budget: its max_score when given, else a share of its
 *    parent's: a sum group's budget left after the children that state theirs,
 *    split evenly over the others (tests and groups); a min or pass-fail
 *    group's whole budget. No budget anywhere (legacy): unbounded.
 *  - An accepted test scores the output validator's score.txt when written, its
 *    score_multiplier.txt times the test's budget, else the legacy accept_score,
 *    else its budget, else 1. A rejected test scores reject_score (default 0).
 *  - A group's score is the sum or the minimum of its children's, or for a
 *    pass-fail group its maximum when every child was accepted and else 0; the
 *    legacy range clamps it. The submission's score is data/secret's (samples
 *    count nothing), its maximum the score of a submission accepted everywhere.
 * Pure: no sandbox, no files.
 */
#pragma once
#include <stdbool.h>

struct problem;

/* What grading learnt of one test. */
struct score_test {
	bool ran;	 /* false: not run (counts as rejected) */
	bool accepted;	 /* the verdict was accepted */
	bool has_value;	 /* the output validator wrote a score */
	bool multiplier; /* value is score_multiplier.txt's, else score.txt's */
	double value;
};

struct score_group {
	double score;
	double max;
	bool accepted; /* every test below it was accepted */
};

/* Scores p's groups: tests has p->ntests entries, groups (p->ngroups entries)
 * receives each group's score; *test_scores (p->ntests entries, may be NULL)
 * each test's. Returns the submission's score with its maximum in *max. */
double score_problem(const struct problem *p, const struct score_test *tests,
		     struct score_group *groups, double *test_scores, double *max);
