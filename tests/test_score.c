/* test_score: scoring problems' aggregation (score.c) from test outcomes alone. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/grading/lang.h"
#include "judge/grading/problem.h"
#include "judge/grading/score.h"

#define FIX "tests/problems-fixtures/"

static struct problem P;
static struct lang_registry langs; /* none: scores need no program's language */
static char err[1024];
static char tmpdir[64];

static void load(const char *dir)
{
	cr_assert_eq(problem_load(&P, dir, &langs, err, sizeof err), 0, "loading %s: %s", dir, err);
}

static void teardown(void)
{
	problem_release(&P);
	if (tmpdir[0]) {
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
		cr_assert_eq(system(cmd), 0);
		tmpdir[0] = 0;
	}
}

TestSuite(score, .fini = teardown);

/* Outcomes: tests whose name starts with one of the accepted prefixes pass. */
static double score_with(const char *const *accepted, struct score_group *g, double *max)
{
	struct score_test t[64] = {{0}};
	cr_assert(P.ntests <= 64);
	for (int i = 0; i < P.ntests; i++) {
		t[i].ran = true;
		for (int k = 0; accepted[k]; k++)
			t[i].accepted |=
			    !strncmp(P.tests[i].name, accepted[k], strlen(accepted[k]));
	}
	return score_problem(&P, t, g, NULL, max);
}

static int group(const char *name)
{
	for (int i = 0; i < P.ngroups; i++)
		if (!strcmp(P.groups[i].name, name))
			return i;
	cr_assert_fail("no group %s", name);
	return -1;
}

Test(score, legacy_min_groups_and_sum)
{
	load(FIX "examples/oddecho");
	struct score_group g[8];
	double max;
	const char *all[] = {"s", NULL};
	cr_assert_float_eq(score_with(all, g, &max), 100, 1e-9);
	cr_assert_float_eq(max, 100, 1e-9);
	/* group 1 only: 20; one test of group 2 failing costs the whole group */
	const char *g1[] = {"secret/group1/", "secret/group2/1", "secret/group2/2", NULL};
	cr_assert_float_eq(score_with(g1, g, &max), 20, 1e-9);
	cr_assert_float_eq(g[group("secret/group2")].score, 0, 1e-9);
	cr_assert(!g[group("secret/group2")].accepted);
	cr_assert(g[group("secret/group1")].accepted);
	/* samples count nothing */
	const char *samples[] = {"sample/", NULL};
	cr_assert_float_eq(score_with(samples, g, &max), 0, 1e-9);
	const char *none[] = {NULL};
	cr_assert_float_eq(score_with(none, g, &max), 0, 1e-9);
}

static void pkg(const char *yaml, const char *files)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/test_score.XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "cd '%s' && printf '%%s' '%s' >problem.yaml && mkdir -p data/secret && %s", tmpdir,
		 yaml, files);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	load(tmpdir);
}

Test(score, modern_budgets_split_over_groups_and_tests)
{
	/* 2025-09: secret is 100; a states 30, b and c share the 70 left; a's
	 * three tests 10 each (sum); b is pass-fail by default; c is min */
	pkg("problem_format_version: 2025-09\ntype: scoring\n",
	    "mkdir -p data/secret/a data/secret/b data/secret/c && "
	    "printf 'score_aggregation: sum\nmax_score: 30\n' >data/secret/a/test_group.yaml && "
	    "printf 'score_aggregation: min\n' >data/secret/c/test_group.yaml && "
	    "for g in a b c; do for t in 1 2 3; do echo 1 >data/secret/$g/$t.in; "
	    "echo 1 >data/secret/$g/$t.ans; done; done");
	struct score_group g[8];
	double max;
	const char *all[] = {"secret/", NULL};
	cr_assert_float_eq(score_with(all, g, &max), 100, 1e-9);
	cr_assert_float_eq(max, 100, 1e-9);
	cr_assert_float_eq(g[group("secret/b")].max, 35, 1e-9);
	const char *some[] = {"secret/a/1", "secret/a/2", "secret/b/1",
			      "secret/b/2", "secret/c/",  NULL};
	/* a: 2 x 10; b: one failure, 0; c: all, 35 */
	cr_assert_float_eq(score_with(some, g, &max), 55, 1e-9);
}

Test(score, validator_scores)
{
	load(FIX "examples/oddecho");
	struct score_test t[64] = {{0}};
	struct score_group g[8];
	double ts[64], max;
	for (int i = 0; i < P.ntests; i++)
		t[i].ran = t[i].accepted = true;
	/* score.txt is taken as is; score_multiplier.txt scales the test's budget */
	int a = -1, b = -1;
	for (int i = 0; i < P.ntests; i++) {
		if (!strcmp(P.tests[i].name, "secret/group1/1"))
			a = i;
		if (!strcmp(P.tests[i].name, "secret/group2/1"))
			b = i;
	}
	t[a].has_value = true;
	t[a].value = 5;
	t[b].has_value = t[b].multiplier = true;
	t[b].value = 0.5;
	double s = score_problem(&P, t, g, ts, &max);
	cr_assert_float_eq(ts[a], 5, 1e-9);
	/* legacy accept_score is the test's full score, not a budget: 0.5 x 80 */
	cr_assert_float_eq(ts[b], 40, 1e-9);
	cr_assert_float_eq(s, 5 + 40, 1e-9, "min of each group: 5 and 40");
}
