/* problem_data: the test data of a problem package, data/sample and
 * data/secret walked depth-first with the validator flags of each group. Part
 * of the problem module (problem_). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "judge/grading/problem.h"
#include "judge/grading/problem_int.h"
#include "common/xalloc.h"

/* data/ nests sample|secret / group / ...; deeper trees are refused (and symlink loops end). */
#define DATA_MAX_DEPTH 12
#define ARGS_MAX       256

/* Validator arguments and scoring settings of a group, as inherited by its tests. */
struct group_cfg {
	char **args;		    /* NULL-terminated; owned */
	struct problem_group score; /* name and parent unset */
	int index;		    /* in problem.groups */
};

static void group_cfg_copy(struct group_cfg *dst, const struct group_cfg *src)
{
	struct problem_strv s = {0};
	problem_strv_copy(&s, src->args);
	dst->args = s.v;
}

/* What a group inherits of its parent's scoring: the aggregation and the legacy
 * test scores, not the group's own maximum or range. */
static void group_score_inherit(struct problem_group *dst, const struct group_cfg *parent)
{
	*dst = parent->score;
	dst->max_score = -1;
	dst->has_range = false;
	dst->range_lo = dst->range_hi = 0;
}

/* 2025-09 defaults (as problemtools reads the spec): data/secret sums to 100,
 * the groups below it are pass-fail unless they say otherwise. */
static void group_score_defaults(const struct problem *p, const char *name, struct problem_group *g)
{
	if (p->format != PROB_2025_09 || !name)
		return;
	if (!strcmp(name, "secret")) {
		g->agg = PROB_AGG_SUM;
		g->max_score = 100;
	} else if (strchr(name, '/')) {
		g->agg = PROB_AGG_PASS_FAIL;
	}
}

/* Reads a group's configuration file in dir over parent. */
static int group_cfg_load(struct problem_loader *L, const char *dir, const char *name,
			  const struct group_cfg *parent, struct group_cfg *out)
{
	const char *names[] = {"test_group.yaml", "testdata.yaml"};
	int ret = -1;
	struct yaml_file y;
	bool present = false;
	char *path = NULL;
	for (size_t i = 0; i < 2 && !present; i++) {
		free(path);
		path = problem_path_join(dir, names[i]);
		if (yaml_load(&y, path, &present, L->err, L->errlen) < 0)
			goto out;
	}
	group_score_inherit(&out->score, parent);
	group_score_defaults(L->p, name, &out->score);
	if (!present) {
		group_cfg_copy(out, parent);
		ret = 0;
		goto out;
	}
	yaml_node_t *root = yaml_root_map(&y);
	if (problem_group_settings(L, &y, root, path, &out->score) < 0)
		goto out;
	yaml_node_t *flags = yaml_get(&y, root, "output_validator_args");
	if (!flags)
		flags = yaml_get(&y, root, "output_validator_flags");
	struct problem_strv args = {0};
	if (flags || L->p->format == PROB_LEGACY) {
		/* legacy: the closest testdata.yaml counts as a whole, a missing key is empty */
		if (problem_yml_args(&y, flags, &args, "output_validator_flags", path, L->err,
				     L->errlen) < 0) {
			problem_strv_release(&args);
			goto out;
		}
		problem_strv_finish(&args);
		out->args = args.v;
	} else {
		group_cfg_copy(out, parent);
	}
	if (yaml_get(&y, root, "args") && !yaml_is_null(yaml_get(&y, root, "args")) &&
	    !L->p->unsupported)
		L->p->unsupported = xstrdup("test groups with command-line args are not supported");
	ret = 0;
out:
	yaml_release(&y);
	free(path);
	return ret;
}

static int add_test(struct problem_loader *L, const char *dir, const char *base, const char *name,
		    bool is_sample, const struct group_cfg *g)
{
	struct problem *p = L->p;
	int ret = -1;
	struct problem_strv args = {0};
	char *file = NULL;
	char *in = problem_path_join(dir, base);
	size_t bl = strlen(in);
	char *ans = xmalloc(bl + 2);
	memcpy(ans, in, bl - 3);
	strcpy(ans + bl - 3, ".ans");
	if (!problem_is_file(ans)) {
		free(ans);
		ans = NULL;
		if (!p->interactive && !p->multi_pass && !p->submit_answer) {
			problem_fail(L->err, L->errlen, "test '%s' has no answer file %s.ans", name,
				     name);
			goto out;
		}
	}
	problem_strv_copy(&args, L->problem_args);
	problem_strv_copy(&args, g->args);
	if (p->format != PROB_LEGACY) {
		/* 2023-07+: NAME.yaml configures one test case */
		file = xstrndup(in, bl - 3);
		char *yp = xasprintf("%s.yaml", file);
		struct yaml_file y;
		bool present;
		int rc = yaml_load(&y, yp, &present, L->err, L->errlen);
		if (rc == 0 && present) {
			yaml_node_t *root = yaml_root_map(&y);
			yaml_node_t *ov = yaml_get(&y, root, "output_validator_args");
			if (ov) {
				problem_strv_release(&args);
				problem_strv_copy(&args, L->problem_args);
				rc = problem_yml_args(&y, ov, &args, "output_validator_args", yp,
						      L->err, L->errlen);
			}
			if (!yaml_is_null(yaml_get(&y, root, "args")) && !p->unsupported)
				p->unsupported =
				    xstrdup("test cases with command-line args are not supported");
		}
		yaml_release(&y);
		char *files_dir = xasprintf("%s.files", file);
		if (problem_is_dir(files_dir) && !p->unsupported)
			p->unsupported =
			    xstrdup("test cases with .files folders are not supported");
		free(files_dir);
		free(yp);
		if (rc < 0)
			goto out;
	}
	if (args.n > ARGS_MAX) {
		problem_fail(L->err, L->errlen, "test '%s': more than %d validator arguments", name,
			     ARGS_MAX);
		goto out;
	}
	if (p->ntests == L->cap) {
		L->cap = L->cap ? L->cap * 2 : 32;
		p->tests = xreallocarray(p->tests, (size_t)L->cap, sizeof *p->tests);
	}
	struct problem_test *t = &p->tests[p->ntests];
	memset(t, 0, sizeof *t);
	if (p->custom_validator) {
		compare_options_init(&t->cmp, CMP_CHECKER);
	} else {
		char cerr[256] = "";
		compare_options_init(&t->cmp, CMP_TOKENS);
		if (compare_parse_flags(&t->cmp, args.n, (const char *const *)args.v, cerr,
					sizeof cerr) < 0) {
			problem_fail(L->err, L->errlen, "test '%s': bad output validator flags: %s",
				     name, cerr);
			goto out;
		}
	}
	p->ntests++;
	t->name = xstrdup(name);
	t->in_path = in;
	in = NULL;
	t->ans_path = ans;
	ans = NULL;
	t->is_sample = is_sample;
	t->group = g->index;
	problem_strv_finish(&args);
	t->validator_args = args.v;
	t->validator_argc = args.n;
	args.v = NULL;
	ret = 0;
out:
	problem_strv_release(&args);
	free(in);
	free(ans);
	free(file);
	return ret;
}

/* An entry of a data folder: a test case (NAME.in) or a group (folder). */
struct entry {
	char *key;  /* name used for ordering: NAME without .in, or the folder name */
	char *file; /* the file or folder name as on disk */
	bool group;
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->key, ((const struct entry *)b)->key);
}

static int walk_data(struct problem_loader *L, const char *dir, const char *name, bool is_sample,
		     const struct group_cfg *parent, int depth)
{
	if (depth > DATA_MAX_DEPTH) {
		problem_fail(L->err, L->errlen, "data/%s: test groups nested too deep", name);
		return -1;
	}
	struct group_cfg g = {0};
	if (group_cfg_load(L, dir, name, parent, &g) < 0) {
		problem_strv_free(g.args);
		return -1;
	}
	g.index = problem_group_add(L, name, depth > 1 ? parent->index : -1, &g.score);
	int ret = -1;
	char **names = NULL;
	struct entry *ents = NULL;
	int n = problem_list_dir(dir, &names), ne = 0;
	if (n < 0) {
		problem_fail(L->err, L->errlen, "cannot list 'data/%s': %s", name, strerror(errno));
		goto out;
	}
	ents = xcalloc((size_t)n + 1, sizeof *ents);
	for (int i = 0; i < n; i++) {
		char *path = problem_path_join(dir, names[i]);
		if (problem_is_dir(path) && !problem_ends_with(names[i], ".files")) {
			ents[ne].key = xstrdup(names[i]);
			ents[ne].group = true;
			ents[ne++].file = xstrdup(names[i]);
		} else if (problem_ends_with(names[i], ".in") && strlen(names[i]) > 3 &&
			   problem_is_file(path)) {
			ents[ne].key = xstrndup(names[i], strlen(names[i]) - 3);
			ents[ne++].file = xstrdup(names[i]);
		}
		free(path);
	}
	qsort(ents, (size_t)ne, sizeof *ents, cmp_entry);
	for (int i = 0; i < ne; i++) {
		char *path = problem_path_join(dir, ents[i].file);
		char *sub = problem_path_join(name, ents[i].key);
		int rc;
		if (i + 1 < ne && !strcmp(ents[i].key, ents[i + 1].key)) {
			problem_fail(L->err, L->errlen, "data/%s is both a test case and a group",
				     sub);
			rc = -1;
		} else if (ents[i].group) {
			rc = walk_data(L, path, sub, is_sample, &g, depth + 1);
		} else {
			rc = add_test(L, dir, ents[i].file, sub, is_sample, &g);
		}
		free(path);
		free(sub);
		if (rc < 0)
			goto out;
	}
	ret = 0;
out:
	for (int i = 0; ents && i < ne; i++) {
		free(ents[i].key);
		free(ents[i].file);
	}
	free(ents);
	problem_strv_free(names);
	problem_strv_free(g.args);
	return ret;
}

int problem_load_data(struct problem_loader *L)
{
	struct problem *p = L->p;
	char *data = problem_path_join(p->dir, "data");
	int ret = -1;
	struct group_cfg none = {.score = L->defaults}, root = {0};
	if (!problem_is_dir(data)) {
		problem_fail(L->err, L->errlen, "%s: no data folder", p->dir);
		goto out;
	}
	/* legacy: data/ itself is the root group and may hold a testdata.yaml */
	if (group_cfg_load(L, data, NULL, &none, &root) < 0)
		goto out;
	const char *parts[] = {"sample", "secret"};
	for (int i = 0; i < 2; i++) {
		char *d = problem_path_join(data, parts[i]);
		int rc = 0;
		if (problem_is_dir(d))
			rc = walk_data(L, d, parts[i], i == 0, &root, 1);
		free(d);
		if (rc < 0)
			goto out;
		if (i == 0)
			p->nsamples = p->ntests;
	}
	if (p->ntests == 0) {
		problem_fail(L->err, L->errlen,
			     "%s: no test cases (NAME.in) under data/sample or data/secret",
			     p->dir);
		goto out;
	}
	ret = 0;
out:
	problem_strv_free(root.args);
	free(data);
	return ret;
}
