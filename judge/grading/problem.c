/* problem: loads ICPC problem packages (legacy, 2023-07 and 2025-09 layouts).
 *
 * How it works: problem.yaml is read with libyaml's document API into a node
 * tree and the keys the judge needs are picked out (unknown keys are ignored:
 * real packages carry many, e.g. uuid, credits, keywords). data/ is walked
 * depth-first; in each folder the test cases (NAME.in) and groups (sub-folders)
 * are taken together in byte-wise lexicographic order, samples before secret.
 * Validator flags reach a test case from, in order: problem.yaml's
 * validator_flags (legacy), the group's testdata.yaml / test_group.yaml, and in
 * 2023-07+ packages the test case's own NAME.yaml. Legacy groups use the closest
 * ancestor's testdata.yaml as a whole; newer formats inherit key by key.
 *
 * The module's files: problem.c (problem.yaml, the statement, load / open /
 * list / release, time limits and the helpers of problem_int.h),
 * problem_program.c (validator, submissions, include/ files and their
 * languages), problem_data.c (the data/ walk); yaml.c reads the YAML.
 */
#include "judge/grading/problem.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "judge/grading/problem_int.h"
#include "judge/grading/yaml.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

/* ---- small helpers ---- */

void problem_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

char *problem_path_join(const char *a, const char *b)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, a);
	if (sb.len && sb.buf[sb.len - 1] != '/')
		strbuf_addch(&sb, '/');
	strbuf_addstr(&sb, b);
	return strbuf_detach(&sb, NULL);
}

bool problem_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool problem_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool problem_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/* Files and folders starting with '.' or '-' are not part of a package (2025-09
 * general requirements): editors' and tools' droppings. */
static bool ignored_name(const char *name)
{
	return name[0] == '.' || name[0] == '-';
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir (ignored names left out). Returns count or -1 (errno set). */
int problem_list_dir(const char *dir, char ***out)
{
	*out = NULL;
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	char **v = NULL;
	int n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (ignored_name(e->d_name))
			continue;
		if (n + 1 >= cap) {
			cap = cap ? cap * 2 : 16;
			v = xreallocarray(v, (size_t)cap, sizeof *v);
		}
		v[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (v) {
		qsort(v, (size_t)n, sizeof *v, cmp_str);
		v[n] = NULL;
	}
	*out = v;
	return n;
}

void problem_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

void problem_ids_free(char **ids)
{
	problem_strv_free(ids);
}

void problem_strv_push(struct problem_strv *s, const char *x)
{
	if (s->n + 1 >= s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->v = xreallocarray(s->v, (size_t)s->cap, sizeof *s->v);
	}
	s->v[s->n++] = xstrdup(x);
	s->v[s->n] = NULL;
}

void problem_strv_split(struct problem_strv *s, const char *text)
{
	const char *p = text;
	while (p && *p) {
		while (*p && isspace((unsigned char)*p))
			p++;
		const char *q = p;
		while (*q && !isspace((unsigned char)*q))
			q++;
		if (q > p) {
			char *w = xstrndup(p, (size_t)(q - p));
			problem_strv_push(s, w);
			free(w);
		}
		p = q;
	}
}

void problem_strv_copy(struct problem_strv *dst, char *const *src)
{
	for (int i = 0; src && src[i]; i++)
		problem_strv_push(dst, src[i]);
}

/* Makes s->v an allocated (possibly empty) NULL-terminated vector. */
void problem_strv_finish(struct problem_strv *s)
{
	if (!s->v) {
		s->v = xcalloc(1, sizeof *s->v);
		s->cap = 1;
	}
}

void problem_strv_release(struct problem_strv *s)
{
	problem_strv_free(s->v);
	memset(s, 0, sizeof *s);
}

/* Appends the words of a validator-flags value: a string of words, or (2023-07+)
 * a sequence of strings. */
int problem_yml_args(struct yaml_file *y, yaml_node_t *n, struct problem_strv *out,
		     const char *what, const char *file, char *err, size_t errlen)
{
	if (yaml_is_null(n))
		return 0;
	if (n->type == YAML_SCALAR_NODE) {
		problem_strv_split(out, yaml_scalar(n));
		return 0;
	}
	if (n->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *i = n->data.sequence.items.start;
		     i < n->data.sequence.items.top; i++) {
			const char *s = yaml_scalar(yaml_document_get_node(&y->doc, *i));
			if (!s) {
				problem_fail(err, errlen, "%s: %s must be a list of strings", file,
					     what);
				return -1;
			}
			problem_strv_push(out, s);
		}
		return 0;
	}
	if (n->type == YAML_MAPPING_NODE) {
		/* legacy testdata.yaml: {name: VALIDATOR, flags: "..."} */
		return problem_yml_args(y, yaml_get(y, n, "flags"), out, what, file, err, errlen);
	}
	problem_fail(err, errlen, "%s: %s must be a string or a list of strings", file, what);
	return -1;
}

/* ---- ids ---- */

bool problem_id_valid(const char *id)
{
	if (!id || !*id || strlen(id) > 64)
		return false;
	if (!(islower((unsigned char)id[0]) || isdigit((unsigned char)id[0])))
		return false;
	for (const char *p = id; *p; p++)
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_' ||
		      *p == '-'))
			return false;
	return true;
}

/* ---- problem.yaml ---- */

static int parse_type(struct problem *p, struct yaml_file *y, yaml_node_t *n, const char *file,
		      char *err, size_t errlen)
{
	struct problem_strv words = {0};
	if (problem_yml_args(y, n, &words, "type", file, err, errlen) < 0)
		return -1;
	for (int i = 0; i < words.n; i++) {
		const char *w = words.v[i];
		if (!strcmp(w, "scoring"))
			p->scoring = true;
		else if (!strcmp(w, "interactive"))
			p->interactive = true;
		else if (!strcmp(w, "multi-pass"))
			p->multi_pass = true;
		else if (!strcmp(w, "submit-answer"))
			p->submit_answer = true;
		else if (strcmp(w, "pass-fail") && !p->unsupported)
			/* a kind the judge does not know is never graded as another kind */
			p->unsupported = xasprintf("problem type '%s' is not supported", w);
	}
	problem_strv_release(&words);
	return 0;
}

static int parse_limits(struct problem *p, struct yaml_file *y, yaml_node_t *lim, const char *file,
			char *err, size_t errlen)
{
	struct problem_limits *l = &p->limits;
	if (!lim || yaml_is_null(lim))
		return 0;
	if (lim->type != YAML_MAPPING_NODE) {
		problem_fail(err, errlen, "%s: limits must be a mapping", file);
		return -1;
	}
	yaml_node_t *tm = yaml_get(y, lim, "time_multipliers");
	if (tm && !yaml_is_null(tm) && tm->type != YAML_MAPPING_NODE) {
		problem_fail(err, errlen, "%s: limits.time_multipliers must be a mapping", file);
		return -1;
	}
	if (yaml_double(yaml_get(y, lim, "time_limit"), "limits.time_limit", file, 1e-3,
			&l->time_limit_s, err, errlen) < 0 ||
	    yaml_double(yaml_get(y, tm, "ac_to_time_limit"), "ac_to_time_limit", file, 1,
			&l->ac_to_time_limit, err, errlen) < 0 ||
	    yaml_double(yaml_get(y, tm, "time_limit_to_tle"), "time_limit_to_tle", file, 1,
			&l->time_limit_to_tle, err, errlen) < 0 ||
	    yaml_double(yaml_get(y, lim, "time_resolution"), "limits.time_resolution", file, 1e-3,
			&l->time_resolution, err, errlen) < 0 ||
	    yaml_double(yaml_get(y, lim, "time_multiplier"), "limits.time_multiplier", file, 1e-3,
			&l->time_multiplier, err, errlen) < 0 ||
	    yaml_double(yaml_get(y, lim, "time_safety_margin"), "limits.time_safety_margin", file,
			1e-3, &l->time_safety_margin, err, errlen) < 0 ||
	    yaml_long(yaml_get(y, lim, "memory"), "limits.memory", file, &l->memory_mb, err,
		      errlen) < 0 ||
	    yaml_long(yaml_get(y, lim, "output"), "limits.output", file, &l->output_mb, err,
		      errlen) < 0 ||
	    yaml_long(yaml_get(y, lim, "compilation_time"), "limits.compilation_time", file,
		      &l->compilation_time_s, err, errlen) < 0 ||
	    yaml_long(yaml_get(y, lim, "compilation_memory"), "limits.compilation_memory", file,
		      &l->compilation_memory_mb, err, errlen) < 0 ||
	    yaml_long(yaml_get(y, lim, "validation_time"), "limits.validation_time", file,
		      &l->validation_time_s, err, errlen) < 0 ||
	    yaml_long(yaml_get(y, lim, "validation_memory"), "limits.validation_memory", file,
		      &l->validation_memory_mb, err, errlen) < 0 ||
	    yaml_long(yaml_get(y, lim, "validation_output"), "limits.validation_output", file,
		      &l->validation_output_mb, err, errlen) < 0 ||
	    yaml_long(yaml_get(y, lim, "validation_passes"), "limits.validation_passes", file,
		      &l->validation_passes, err, errlen) < 0)
		return -1;
	if (l->validation_passes > PROB_MAX_PASSES) {
		problem_fail(err, errlen, "%s: limits.validation_passes must be 1 to %d", file,
			     PROB_MAX_PASSES);
		return -1;
	}
	return 0;
}

static char *name_of(struct yaml_file *y, yaml_node_t *n)
{
	if (!n)
		return NULL;
	if (yaml_scalar(n))
		return *yaml_scalar(n) ? xstrdup(yaml_scalar(n)) : NULL;
	if (n->type != YAML_MAPPING_NODE ||
	    n->data.mapping.pairs.start == n->data.mapping.pairs.top)
		return NULL;
	const char *en = yaml_scalar(yaml_get(y, n, "en"));
	if (en)
		return xstrdup(en);
	yaml_node_pair_t *first = n->data.mapping.pairs.start;
	const char *v = yaml_scalar(yaml_document_get_node(&y->doc, first->value));
	return v ? xstrdup(v) : NULL;
}

/* Legacy problem.yaml `grading:` {accept_score, reject_score, objective, ...}:
 * the scores every test group starts from. */
static int legacy_grading(struct problem_loader *L, struct yaml_file *y, yaml_node_t *g,
			  const char *file)
{
	if (!g || g->type != YAML_MAPPING_NODE)
		return 0;
	const char *objective = yaml_scalar(yaml_get(y, g, "objective"));
	if (objective && strcmp(objective, "max") && !L->p->unsupported)
		L->p->unsupported = xasprintf("grading objective '%s' is not supported", objective);
	return problem_group_settings(L, y, g, file, &L->defaults);
}

/* Reads problem.yaml. *custom tells whether problem.yaml asks for a custom
 * validator (legacy `validation: custom`). */
static int load_yaml(struct problem_loader *L, bool *custom_asked)
{
	struct problem *p = L->p;
	char *file = problem_path_join(p->dir, "problem.yaml");
	struct yaml_file y;
	bool present;
	int ret = -1;
	struct problem_strv args = {0};
	if (yaml_load(&y, file, &present, L->err, L->errlen) < 0)
		goto out;
	if (!present) {
		problem_fail(L->err, L->errlen, "%s: no problem.yaml", p->dir);
		goto out;
	}
	yaml_node_t *root = yaml_root_map(&y);
	const char *ver = yaml_scalar(yaml_get(&y, root, "problem_format_version"));
	p->format_version = xstrdup(ver && *ver ? ver : "legacy");
	if (!ver || !*ver || !strncmp(ver, "legacy", 6))
		p->format = PROB_LEGACY;
	else if (!strncmp(ver, "2023-07", 7))
		p->format = PROB_2023_07;
	else if (!strncmp(ver, "2025-09", 7) || !strcmp(ver, "draft"))
		p->format = PROB_2025_09;
	else {
		problem_fail(L->err, L->errlen, "%s: unknown problem_format_version '%s'", file,
			     ver);
		goto out;
	}
	p->name = name_of(&y, yaml_get(&y, root, "name"));
	if (parse_type(p, &y, yaml_get(&y, root, "type"), file, L->err, L->errlen) < 0)
		goto out;
	const char *val = yaml_scalar(yaml_get(&y, root, "validation"));
	if (val && *val) {
		/* legacy: "default" or "custom", then maybe "interactive" and "score" */
		struct problem_strv w = {0};
		problem_strv_split(&w, val);
		if (w.n == 0 || (strcmp(w.v[0], "default") && strcmp(w.v[0], "custom"))) {
			problem_fail(L->err, L->errlen,
				     "%s: validation must start with default or custom, got '%s'",
				     file, val);
			problem_strv_release(&w);
			goto out;
		}
		*custom_asked = !strcmp(w.v[0], "custom");
		for (int i = 1; i < w.n; i++) {
			if (!strcmp(w.v[i], "interactive"))
				p->interactive = true;
			else if (!strcmp(w.v[i], "score"))
				p->scoring = true;
			else if (!strcmp(w.v[i], "multi-pass"))
				p->multi_pass =
				    true; /* DOMjudge's extension of the legacy format */
			else if (!p->unsupported)
				p->unsupported = xasprintf("validation '%s' is not supported", val);
		}
		problem_strv_release(&w);
	}
	if (problem_yml_args(&y, yaml_get(&y, root, "validator_flags"), &args, "validator_flags",
			     file, L->err, L->errlen) < 0 ||
	    problem_yml_args(&y, yaml_get(&y, root, "output_validator_args"), &args,
			     "output_validator_args", file, L->err, L->errlen) < 0)
		goto out;
	L->problem_args = args.v;
	args.v = NULL;
	if (legacy_grading(L, &y, yaml_get(&y, root, "grading"), file) < 0)
		goto out;
	if (parse_limits(p, &y, yaml_get(&y, root, "limits"), file, L->err, L->errlen) < 0)
		goto out;
	ret = 0;
out:
	problem_strv_release(&args);
	yaml_release(&y);
	free(file);
	return ret;
}

/* Statement: statement/ (2025-09) or problem_statement/ (legacy), English
 * Markdown first, then LaTeX, then any language. */
static void find_statement(struct problem *p)
{
	const char *dirs[] = {"statement", "problem_statement"};
	const char *files[] = {"problem.en.md", "problem.md", "problem.en.tex", "problem.tex"};
	for (int d = 0; d < 2; d++) {
		char *dir = problem_path_join(p->dir, dirs[d]);
		for (int f = 0; f < 4; f++) {
			char *path = problem_path_join(dir, files[f]);
			if (problem_is_file(path)) {
				p->statement_path = path;
				free(dir);
				return;
			}
			free(path);
		}
		char **names = NULL;
		int n = problem_is_dir(dir) ? problem_list_dir(dir, &names) : 0;
		for (int i = 0; i < n && !p->statement_path; i++)
			if (!strncmp(names[i], "problem.", 8) &&
			    (problem_ends_with(names[i], ".md") ||
			     problem_ends_with(names[i], ".tex")))
				p->statement_path = problem_path_join(dir, names[i]);
		problem_strv_free(names);
		free(dir);
		if (p->statement_path)
			return;
	}
}

/* Legacy packages name the problem in the statement: \problemname{...}. */
static char *name_from_statement(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	char *name = NULL;
	if (!path || !problem_ends_with(path, ".tex") || strbuf_read_file(&sb, path, YML_MAX) < 0)
		goto out;
	const char *s = strstr(sb.buf, "\\problemname{");
	if (!s)
		goto out;
	s += strlen("\\problemname{");
	const char *e = strchr(s, '}');
	if (e && e > s)
		name = xstrndup(s, (size_t)(e - s));
out:
	strbuf_release(&sb);
	return name;
}

/* BAPCtools and DOMjudge keep a computed time limit in .timelimit (seconds). */
static void read_timelimit_file(struct problem *p)
{
	char *path = problem_path_join(p->dir, ".timelimit");
	struct strbuf sb = STRBUF_INIT;
	if (strbuf_read_file(&sb, path, 64) == 0) {
		char *end;
		double v = strtod(sb.buf, &end);
		while (*end && isspace((unsigned char)*end))
			end++;
		if (end != sb.buf && !*end && isfinite(v) && v > 0 && v < 3600)
			p->limits.time_limit_s = v;
	}
	strbuf_release(&sb);
	free(path);
}

int problem_load(struct problem *p, const char *dir, const struct lang_registry *langs, char *err,
		 size_t errlen)
{
	memset(p, 0, sizeof *p);
	struct problem_loader L = {.p = p, .langs = langs, .err = err, .errlen = errlen};
	L.defaults.accept_score = 1;
	L.defaults.max_score = -1;
	bool custom = false;
	int ret = -1;
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	p->dir = xstrndup(dir, n);
	const char *base = strrchr(p->dir, '/');
	p->id = xstrdup(base ? base + 1 : p->dir);
	if (!problem_is_dir(p->dir)) {
		problem_fail(err, errlen, "no problem package at '%s'", p->dir);
		goto out;
	}
	struct problem_limits *l = &p->limits;
	l->ac_to_time_limit = 2.0;
	l->time_limit_to_tle = 1.5;
	l->time_resolution = 1.0;
	l->time_multiplier = 5;
	l->time_safety_margin = 2;
	l->validation_passes = 2;
	if (load_yaml(&L, &custom) < 0 || problem_load_validator(&L, custom) < 0 ||
	    problem_load_data(&L) < 0 || problem_load_submissions(&L) < 0)
		goto out;
	if (l->time_limit_s <= 0)
		read_timelimit_file(p);
	find_statement(p);
	if (!p->name)
		p->name = name_from_statement(p->statement_path);
	if (!p->name)
		p->name = xstrdup(p->id);
	if (!p->unsupported) {
		/* a kind the judge cannot grade is refused, never graded as another kind */
		const char *why = NULL;
		if (p->interactive && p->multi_pass)
			why = "interactive multi-pass problems are not supported";
		else if (p->submit_answer)
			why = "submit-answer problems are not supported";
		else if ((p->interactive || p->multi_pass) && !p->custom_validator)
			why = p->interactive
				  ? "interactive problems need an output validator (none found)"
				  : "multi-pass problems need an output validator (none found)";
		if (why)
			p->unsupported = xstrdup(why);
	}
	ret = 0;
out:
	problem_strv_free(L.problem_args);
	if (ret < 0)
		problem_release(p);
	return ret;
}

int problem_open(struct problem *p, const char *problems_dir, const char *id,
		 const struct lang_registry *langs, char *err, size_t errlen)
{
	memset(p, 0, sizeof *p);
	if (!problem_id_valid(id)) {
		problem_fail(err, errlen, "invalid problem id (use a-z, 0-9, '_' and '-')");
		return -2;
	}
	char *dir = problem_path_join(problems_dir, id);
	char *yaml = problem_path_join(dir, "problem.yaml");
	int ret;
	if (!problem_is_file(yaml)) {
		problem_fail(err, errlen, "no problem '%s'", id);
		ret = -2;
	} else {
		ret = problem_load(p, dir, langs, err, errlen);
	}
	free(yaml);
	free(dir);
	return ret;
}

void problem_release(struct problem *p)
{
	free(p->id);
	free(p->dir);
	free(p->name);
	free(p->format_version);
	free(p->unsupported);
	problem_program_release(&p->validator);
	for (int i = 0; i < p->ntests; i++) {
		free(p->tests[i].name);
		free(p->tests[i].in_path);
		free(p->tests[i].ans_path);
		problem_strv_free(p->tests[i].validator_args);
	}
	free(p->tests);
	for (int i = 0; i < p->ngroups; i++)
		free(p->groups[i].name);
	free(p->groups);
	for (int i = 0; i < p->nsubs; i++) {
		free(p->subs[i].folder);
		free(p->subs[i].path);
		problem_program_release(&p->subs[i].prog);
	}
	free(p->subs);
	free(p->statement_path);
	memset(p, 0, sizeof *p);
}

int problem_list(const char *problems_dir, char ***ids, char *err, size_t errlen)
{
	char **names = NULL;
	*ids = NULL;
	int n = problem_list_dir(problems_dir, &names);
	if (n < 0) {
		problem_fail(err, errlen, "cannot list problems folder '%s': %s", problems_dir,
			     strerror(errno));
		return -1;
	}
	struct problem_strv out = {0};
	for (int i = 0; i < n; i++) {
		if (!problem_id_valid(names[i]))
			continue;
		char *dir = problem_path_join(problems_dir, names[i]);
		char *yaml = problem_path_join(dir, "problem.yaml");
		if (problem_is_file(yaml))
			problem_strv_push(&out, names[i]);
		free(yaml);
		free(dir);
	}
	problem_strv_free(names);
	problem_strv_finish(&out);
	*ids = out.v;
	return out.n;
}

/* ---- time limits ---- */

int problem_infer_time_limit(const struct problem_limits *l, double t_ac, double t_tle, double *out)
{
	double res = l->time_resolution > 0 ? l->time_resolution : 1.0;
	double ac = l->ac_to_time_limit >= 1 ? l->ac_to_time_limit : 2.0;
	double tle = l->time_limit_to_tle >= 1 ? l->time_limit_to_tle : 1.5;
	double lo = t_ac * ac;
	/* the smallest positive multiple of res at or above lo; a tiny epsilon keeps
	 * 2 * 0.5 s from becoming 2 steps through rounding */
	double k = ceil(lo / res - 1e-9);
	if (k < 1)
		k = 1;
	double limit = k * res;
	if (t_tle >= 0 && limit * tle > t_tle + 1e-9)
		return -1;
	*out = limit;
	return 0;
}

void problem_legacy_time_limit(const struct problem_limits *l, double t_ac, double *limit,
			       double *tle_margin)
{
	double mult = l->time_multiplier > 0 ? l->time_multiplier : 5;
	double margin = l->time_safety_margin > 0 ? l->time_safety_margin : 2;
	double exact = t_ac * mult;
	double lim = floor(0.5 + exact);
	if (lim < 1)
		lim = 1;
	double m = floor(0.5 + exact * margin);
	*limit = lim;
	*tle_margin = m > lim + 1 ? m : lim + 1;
}
