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
#include <yaml.h>

#include "judge/grading/lang.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

/* YAML files of a package are small; anything larger is a broken package. */
#define YAML_MAX ((size_t)1 << 20)
/* data/ nests sample|secret / group / ...; deeper trees are refused (and symlink loops end). */
#define DATA_MAX_DEPTH 12
#define ARGS_MAX       256

/* ---- small helpers ---- */

static void fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static char *path_join(const char *a, const char *b)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, a);
	if (sb.len && sb.buf[sb.len - 1] != '/')
		strbuf_addch(&sb, '/');
	strbuf_addstr(&sb, b);
	return strbuf_detach(&sb, NULL);
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool ends_with(const char *s, const char *suffix)
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
static int list_dir(const char *dir, char ***out)
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

static void free_strv(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

void prob_argv_free(char **argv)
{
	free_strv(argv);
}

void prob_ids_free(char **ids)
{
	free_strv(ids);
}

/* A growable NULL-terminated string vector. */
struct strv {
	char **v;
	int n, cap;
};

static void strv_push(struct strv *s, const char *x)
{
	if (s->n + 1 >= s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->v = xreallocarray(s->v, (size_t)s->cap, sizeof *s->v);
	}
	s->v[s->n++] = xstrdup(x);
	s->v[s->n] = NULL;
}

static void strv_split(struct strv *s, const char *text)
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
			strv_push(s, w);
			free(w);
		}
		p = q;
	}
}

static void strv_copy(struct strv *dst, char *const *src)
{
	for (int i = 0; src && src[i]; i++)
		strv_push(dst, src[i]);
}

/* Makes s->v an allocated (possibly empty) NULL-terminated vector. */
static void strv_finish(struct strv *s)
{
	if (!s->v) {
		s->v = xcalloc(1, sizeof *s->v);
		s->cap = 1;
	}
}

static void strv_release(struct strv *s)
{
	free_strv(s->v);
	memset(s, 0, sizeof *s);
}

/* ---- YAML ---- */

struct yml {
	yaml_document_t doc;
	bool loaded;
};

/* Parses path. A missing file leaves y unloaded and returns 0 (*present false). */
static int yml_load(struct yml *y, const char *path, bool *present, char *err, size_t errlen)
{
	memset(y, 0, sizeof *y);
	if (present)
		*present = false;
	struct strbuf text = STRBUF_INIT;
	int rc = strbuf_read_file(&text, path, YAML_MAX);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0) {
		fail(err, errlen, "cannot read '%s': %s", path,
		     rc == -EFBIG ? "file too large" : strerror(-rc));
		return -1;
	}
	if (present)
		*present = true;
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		xalloc_die(0); /* libyaml's only failure here is its allocation */
	yaml_parser_set_input_string(&parser, (const unsigned char *)text.buf, text.len);
	int ret = -1;
	if (!yaml_parser_load(&parser, &y->doc)) {
		fail(err, errlen, "%s:%zu: invalid YAML: %s", path, parser.problem_mark.line + 1,
		     parser.problem ? parser.problem : "parse error");
		goto out;
	}
	y->loaded = true;
	yaml_node_t *root = yaml_document_get_root_node(&y->doc);
	if (root && root->type != YAML_MAPPING_NODE &&
	    !(root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0)) {
		fail(err, errlen, "%s: expected a mapping of keys at the top", path);
		goto out;
	}
	ret = 0;
out:
	yaml_parser_delete(&parser);
	strbuf_release(&text);
	return ret;
}

static void yml_release(struct yml *y)
{
	if (y->loaded)
		yaml_document_delete(&y->doc);
	y->loaded = false;
}

static yaml_node_t *yml_root_map(struct yml *y)
{
	if (!y->loaded)
		return NULL;
	yaml_node_t *root = yaml_document_get_root_node(&y->doc);
	return root && root->type == YAML_MAPPING_NODE ? root : NULL;
}

static const char *yml_scalar(yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *yml_get(struct yml *y, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		const char *k = yml_scalar(yaml_document_get_node(&y->doc, p->key));
		if (k && !strcmp(k, key))
			return yaml_document_get_node(&y->doc, p->value);
	}
	return NULL;
}

/* YAML null: a missing value, "~" or "null". */
static bool yml_is_null(yaml_node_t *n)
{
	const char *s = yml_scalar(n);
	return !n || (s && (!*s || !strcmp(s, "~") || !strcmp(s, "null")) &&
		      n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE);
}

static int yml_double(yaml_node_t *n, const char *what, const char *file, double lo, double *out,
		      char *err, size_t errlen)
{
	if (yml_is_null(n))
		return 0;
	const char *s = yml_scalar(n);
	char *end = NULL;
	double v = s ? strtod(s, &end) : NAN;
	if (!s || end == s || *end || !isfinite(v) || v < lo) {
		fail(err, errlen, "%s: %s must be a number of at least %g, got '%s'", file, what,
		     lo, s ? s : "(not a number)");
		return -1;
	}
	*out = v;
	return 0;
}

static int yml_long(yaml_node_t *n, const char *what, const char *file, long *out, char *err,
		    size_t errlen)
{
	double v = 0;
	if (yml_is_null(n))
		return 0;
	if (yml_double(n, what, file, 0, &v, err, errlen) < 0)
		return -1;
	if (v <= 0 || v > 1e9) {
		fail(err, errlen, "%s: %s must be a positive whole number, got '%s'", file, what,
		     yml_scalar(n));
		return -1;
	}
	*out = (long)ceil(v);
	return 0;
}

/* Appends the words of a validator-flags value: a string of words, or (2023-07+)
 * a sequence of strings. */
static int yml_args(struct yml *y, yaml_node_t *n, struct strv *out, const char *what,
		    const char *file, char *err, size_t errlen)
{
	if (yml_is_null(n))
		return 0;
	if (n->type == YAML_SCALAR_NODE) {
		strv_split(out, yml_scalar(n));
		return 0;
	}
	if (n->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *i = n->data.sequence.items.start;
		     i < n->data.sequence.items.top; i++) {
			const char *s = yml_scalar(yaml_document_get_node(&y->doc, *i));
			if (!s) {
				fail(err, errlen, "%s: %s must be a list of strings", file, what);
				return -1;
			}
			strv_push(out, s);
		}
		return 0;
	}
	if (n->type == YAML_MAPPING_NODE) {
		/* legacy testdata.yaml: {name: VALIDATOR, flags: "..."} */
		return yml_args(y, yml_get(y, n, "flags"), out, what, file, err, errlen);
	}
	fail(err, errlen, "%s: %s must be a string or a list of strings", file, what);
	return -1;
}

/* ---- languages ---- */

struct lang_def {
	const char *code;
	int priority;
	const char *exts;  /* space-separated, with the dot; case matters (.C is C++) */
	const char *judge; /* judge language name, or NULL */
};

/* The package format's languages table (file endings and tie-break priorities,
 * as the Kattis problemtools language list gives them). */
static const struct lang_def lang_defs[] = {
    {"cpp", 1000, ".cc .C .cpp .cxx .c++", "cpp"},
    {"c", 950, ".c", "c"},
    {"python2", 860, ".py .py2", NULL},
    {"python3", 850, ".py .py3", "python"},
    {"java", 800, ".java", NULL},
    {"csharp", 700, ".cs", "csharp"},
    {"fsharp", 675, ".fs", NULL},
    {"ruby", 650, ".rb", NULL},
    {"haskell", 600, ".hs .c", NULL},
    {"rust", 575, ".rs", NULL},
    {"scala", 550, ".sc .scala", NULL},
    {"javascript", 500, ".js .mjs .cjs", "node"},
    {"php", 450, ".php", NULL},
    {"go", 400, ".go", NULL},
    {"ocaml", 375, ".ml", NULL},
    {"pascal", 350, ".pas", NULL},
    {"objectivec", 300, ".m .c", NULL},
    {"kotlin", 250, ".kt", NULL},
    {"typescript", 225, ".ts", NULL},
    {"lisp", 200, ".lisp .cl", NULL},
    {"prolog", 100, ".pl", NULL},
    {"cobol", 50, ".cob", NULL},
};
#define NLANG (sizeof lang_defs / sizeof lang_defs[0])

static bool has_ext(const char *file, const char *exts)
{
	const char *dot = strrchr(file, '.');
	if (!dot || dot == file)
		return false;
	size_t n = strlen(dot);
	for (const char *p = exts; *p;) {
		const char *q = strchr(p, ' ');
		size_t m = q ? (size_t)(q - p) : strlen(p);
		if (m == n && !memcmp(p, dot, n))
			return true;
		p = q ? q + 1 : p + m;
	}
	return false;
}

const char *prob_file_lang_code(const char *file)
{
	const struct lang_def *best = NULL;
	for (size_t i = 0; i < NLANG; i++) {
		if (!has_ext(file, lang_defs[i].exts))
			continue;
		/* .py alone is Python 3 unless a shebang says otherwise (see detect_lang) */
		if (!strcmp(lang_defs[i].code, "python2") && !ends_with(file, ".py2"))
			continue;
		if (!best || lang_defs[i].priority > best->priority)
			best = &lang_defs[i];
	}
	return best ? best->code : NULL;
}

const char *prob_judge_lang(const char *lang_code)
{
	for (size_t i = 0; lang_code && i < NLANG; i++)
		if (!strcmp(lang_defs[i].code, lang_code))
			return lang_defs[i].judge;
	return NULL;
}

static bool python2_shebang(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char line[256] = "";
	bool yes =
	    fgets(line, sizeof line, f) && !strncmp(line, "#!", 2) && strstr(line, "python2");
	fclose(f);
	return yes;
}

/* Picks the program's language: the one with the most evidence files, ties to
 * the higher priority. A .py file is evidence for Python 2 only with a python2
 * shebang, and always for Python 3. */
static const struct lang_def *detect_lang(const char *dir, char *const *files)
{
	const struct lang_def *best = NULL;
	int best_n = 0;
	for (size_t i = 0; i < NLANG; i++) {
		int n = 0;
		for (int f = 0; files[f]; f++) {
			if (!has_ext(files[f], lang_defs[i].exts))
				continue;
			if (!strcmp(lang_defs[i].code, "python2") && ends_with(files[f], ".py")) {
				char *p = path_join(dir, files[f]);
				bool yes = python2_shebang(p);
				free(p);
				if (!yes)
					continue;
			}
			n++;
		}
		if (n > best_n ||
		    (n == best_n && n > 0 && lang_defs[i].priority > best->priority)) {
			best = &lang_defs[i];
			best_n = n;
		}
	}
	return best;
}

static bool is_main_name(const char *f)
{
	return strlen(f) > 5 && !strncasecmp(f, "main.", 5);
}

/* Fills prog from a file or a folder at path. */
static int load_program(struct prob_program *prog, const char *path, char *err, size_t errlen)
{
	memset(prog, 0, sizeof *prog);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	prog->name = xstrdup(base);
	struct strv files = {0};
	if (is_dir(path)) {
		prog->dir = xstrdup(path);
		char **names;
		int n = list_dir(path, &names);
		if (n < 0) {
			fail(err, errlen, "cannot list '%s': %s", path, strerror(errno));
			return -1;
		}
		for (int i = 0; i < n; i++) {
			char *p = path_join(path, names[i]);
			if (is_file(p))
				strv_push(&files, names[i]);
			free(p);
		}
		free_strv(names);
	} else if (is_file(path)) {
		/* the folder without its trailing '/' */
		prog->dir = xstrndup(path, base > path ? (size_t)(base - path - 1) : 0);
		if (!*prog->dir) {
			free(prog->dir);
			prog->dir = xstrdup(".");
		}
		strv_push(&files, base);
	} else {
		fail(err, errlen, "'%s' is neither a file nor a folder", path);
		return -1;
	}
	strv_finish(&files);
	prog->files = files.v;
	prog->nfiles = files.n;
	for (int i = 0; i < files.n; i++)
		if (!strcmp(files.v[i], "build") || !strcmp(files.v[i], "run"))
			prog->unsupported = xstrdup("build/run scripts are not supported");
	const struct lang_def *ld = detect_lang(prog->dir, prog->files);
	if (!ld) {
		if (!prog->unsupported)
			prog->unsupported = xstrdup("no source file of a known language");
		return 0;
	}
	prog->lang_code = xstrdup(ld->code);
	prog->lang = ld->judge;
	const char *main_file = NULL, *single = NULL;
	for (int i = 0; i < files.n; i++) {
		const char *f = files.v[i];
		if (!has_ext(f, ld->exts))
			continue;
		if (!single)
			single = f; /* smallest: files are sorted */
		if (!main_file && (is_main_name(f) || !strcmp(f, "__main__.py")))
			main_file = f;
	}
	prog->main_file = xstrdup(main_file ? main_file : single ? single : "");
	if (!prog->lang && !prog->unsupported) {
		char msg[96];
		snprintf(msg, sizeof msg, "language %s is not supported by the judge", ld->code);
		prog->unsupported = xstrdup(msg);
	}
	return 0;
}

static void program_release(struct prob_program *prog)
{
	free(prog->name);
	free(prog->dir);
	free_strv(prog->files);
	free(prog->main_file);
	free(prog->lang_code);
	free(prog->unsupported);
	memset(prog, 0, sizeof *prog);
}

bool prob_is_source_for(const struct lang *lang, const char *file)
{
	const char *a = prob_file_lang_code(lang->source_file);
	const char *b = prob_file_lang_code(file);
	return a && b && !strcmp(a, b);
}

char **prob_compile_argv(const struct lang *lang, const char *const *extra_sources)
{
	if (!lang->compile_argv)
		return NULL;
	struct strv out = {0};
	size_t slen = strlen(lang->source_file);
	bool inserted = false;
	for (char **a = lang->compile_argv; *a; a++) {
		strv_push(&out, *a);
		size_t n = strlen(*a);
		bool names_source = !strcmp(*a, lang->source_file) || !strcmp(*a, "{source}") ||
				    (n > slen && (*a)[n - slen - 1] == '/' &&
				     !strcmp(*a + n - slen, lang->source_file));
		if (names_source && !inserted) {
			for (int i = 0; extra_sources && extra_sources[i]; i++)
				strv_push(&out, extra_sources[i]);
			inserted = true;
		}
	}
	if (!inserted)
		for (int i = 0; extra_sources && extra_sources[i]; i++)
			strv_push(&out, extra_sources[i]);
	return out.v;
}

/* ---- ids ---- */

bool prob_id_valid(const char *id)
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

/* ---- test data ---- */

/* Validator arguments of a group, as inherited by its tests. */
struct group_cfg {
	char **args; /* NULL-terminated; owned */
};

struct loader {
	struct problem *p;
	char **problem_args;	/* problem.yaml validator_flags / output_validator_args */
	struct strv test_names; /* to catch a test and a group of one name */
	int cap;
	char *err;
	size_t errlen;
};

static void group_cfg_copy(struct group_cfg *dst, const struct group_cfg *src)
{
	struct strv s = {0};
	strv_copy(&s, src->args);
	dst->args = s.v;
}

/* Reads a group's configuration file in dir over parent. */
static int group_cfg_load(struct loader *L, const char *dir, const struct group_cfg *parent,
			  struct group_cfg *out)
{
	const char *names[] = {"test_group.yaml", "testdata.yaml"};
	int ret = -1;
	struct yml y;
	bool present = false;
	char *path = NULL;
	for (size_t i = 0; i < 2 && !present; i++) {
		free(path);
		path = path_join(dir, names[i]);
		if (yml_load(&y, path, &present, L->err, L->errlen) < 0)
			goto out;
	}
	if (!present) {
		group_cfg_copy(out, parent);
		ret = 0;
		goto out;
	}
	yaml_node_t *root = yml_root_map(&y);
	yaml_node_t *flags = yml_get(&y, root, "output_validator_args");
	if (!flags)
		flags = yml_get(&y, root, "output_validator_flags");
	struct strv args = {0};
	if (flags || L->p->format == PROB_LEGACY) {
		/* legacy: the closest testdata.yaml counts as a whole, a missing key is empty */
		if (yml_args(&y, flags, &args, "output_validator_flags", path, L->err, L->errlen) <
		    0) {
			strv_release(&args);
			goto out;
		}
		strv_finish(&args);
		out->args = args.v;
	} else {
		group_cfg_copy(out, parent);
	}
	if (yml_get(&y, root, "args") && !yml_is_null(yml_get(&y, root, "args")) &&
	    !L->p->unsupported)
		L->p->unsupported = xstrdup("test groups with command-line args are not supported");
	ret = 0;
out:
	yml_release(&y);
	free(path);
	return ret;
}

static int add_test(struct loader *L, const char *dir, const char *base, const char *name,
		    bool is_sample, const struct group_cfg *g)
{
	struct problem *p = L->p;
	int ret = -1;
	struct strv args = {0};
	char *file = NULL;
	char *in = path_join(dir, base);
	size_t bl = strlen(in);
	char *ans = xmalloc(bl + 2);
	memcpy(ans, in, bl - 3);
	strcpy(ans + bl - 3, ".ans");
	if (!is_file(ans)) {
		free(ans);
		ans = NULL;
		if (!p->interactive && !p->multi_pass && !p->submit_answer) {
			fail(L->err, L->errlen, "test '%s' has no answer file %s.ans", name, name);
			goto out;
		}
	}
	strv_copy(&args, L->problem_args);
	strv_copy(&args, g->args);
	if (p->format != PROB_LEGACY) {
		/* 2023-07+: NAME.yaml configures one test case */
		file = xstrndup(in, bl - 3);
		char *yp = xasprintf("%s.yaml", file);
		struct yml y;
		bool present;
		int rc = yml_load(&y, yp, &present, L->err, L->errlen);
		if (rc == 0 && present) {
			yaml_node_t *root = yml_root_map(&y);
			yaml_node_t *ov = yml_get(&y, root, "output_validator_args");
			if (ov) {
				strv_release(&args);
				strv_copy(&args, L->problem_args);
				rc = yml_args(&y, ov, &args, "output_validator_args", yp, L->err,
					      L->errlen);
			}
			if (!yml_is_null(yml_get(&y, root, "args")) && !p->unsupported)
				p->unsupported =
				    xstrdup("test cases with command-line args are not supported");
		}
		yml_release(&y);
		char *files_dir = xasprintf("%s.files", file);
		if (is_dir(files_dir) && !p->unsupported)
			p->unsupported =
			    xstrdup("test cases with .files folders are not supported");
		free(files_dir);
		free(yp);
		if (rc < 0)
			goto out;
	}
	if (args.n > ARGS_MAX) {
		fail(L->err, L->errlen, "test '%s': more than %d validator arguments", name,
		     ARGS_MAX);
		goto out;
	}
	if (p->ntests == L->cap) {
		L->cap = L->cap ? L->cap * 2 : 32;
		p->tests = xreallocarray(p->tests, (size_t)L->cap, sizeof *p->tests);
	}
	struct prob_test *t = &p->tests[p->ntests];
	memset(t, 0, sizeof *t);
	if (p->custom_validator) {
		cmp_opts_init(&t->cmp, CMP_CHECKER);
	} else {
		char cerr[256] = "";
		cmp_opts_init(&t->cmp, CMP_TOKENS);
		if (cmp_parse_flags(&t->cmp, args.n, (const char *const *)args.v, cerr,
				    sizeof cerr) < 0) {
			fail(L->err, L->errlen, "test '%s': bad output validator flags: %s", name,
			     cerr);
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
	strv_finish(&args);
	t->validator_args = args.v;
	t->validator_argc = args.n;
	args.v = NULL;
	ret = 0;
out:
	strv_release(&args);
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

static int walk_data(struct loader *L, const char *dir, const char *name, bool is_sample,
		     const struct group_cfg *parent, int depth)
{
	if (depth > DATA_MAX_DEPTH) {
		fail(L->err, L->errlen, "data/%s: test groups nested too deep", name);
		return -1;
	}
	struct group_cfg g = {0};
	if (group_cfg_load(L, dir, parent, &g) < 0)
		return -1;
	int ret = -1;
	char **names = NULL;
	struct entry *ents = NULL;
	int n = list_dir(dir, &names), ne = 0;
	if (n < 0) {
		fail(L->err, L->errlen, "cannot list 'data/%s': %s", name, strerror(errno));
		goto out;
	}
	ents = xcalloc((size_t)n + 1, sizeof *ents);
	for (int i = 0; i < n; i++) {
		char *path = path_join(dir, names[i]);
		if (is_dir(path) && !ends_with(names[i], ".files")) {
			ents[ne].key = xstrdup(names[i]);
			ents[ne].group = true;
			ents[ne++].file = xstrdup(names[i]);
		} else if (ends_with(names[i], ".in") && strlen(names[i]) > 3 && is_file(path)) {
			ents[ne].key = xstrndup(names[i], strlen(names[i]) - 3);
			ents[ne++].file = xstrdup(names[i]);
		}
		free(path);
	}
	qsort(ents, (size_t)ne, sizeof *ents, cmp_entry);
	for (int i = 0; i < ne; i++) {
		char *path = path_join(dir, ents[i].file);
		char *sub = path_join(name, ents[i].key);
		int rc;
		if (i + 1 < ne && !strcmp(ents[i].key, ents[i + 1].key)) {
			fail(L->err, L->errlen, "data/%s is both a test case and a group", sub);
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
	free_strv(names);
	free_strv(g.args);
	return ret;
}

static int load_data(struct loader *L)
{
	struct problem *p = L->p;
	char *data = path_join(p->dir, "data");
	int ret = -1;
	struct group_cfg none = {0}, root = {0};
	if (!is_dir(data)) {
		fail(L->err, L->errlen, "%s: no data folder", p->dir);
		goto out;
	}
	/* legacy: data/ itself is the root group and may hold a testdata.yaml */
	if (group_cfg_load(L, data, &none, &root) < 0)
		goto out;
	const char *parts[] = {"sample", "secret"};
	for (int i = 0; i < 2; i++) {
		char *d = path_join(data, parts[i]);
		int rc = 0;
		if (is_dir(d))
			rc = walk_data(L, d, parts[i], i == 0, &root, 1);
		free(d);
		if (rc < 0)
			goto out;
		if (i == 0)
			p->nsamples = p->ntests;
	}
	if (p->ntests == 0) {
		fail(L->err, L->errlen,
		     "%s: no test cases (NAME.in) under data/sample or data/secret", p->dir);
		goto out;
	}
	ret = 0;
out:
	free_strv(root.args);
	free(data);
	return ret;
}

/* ---- problem.yaml ---- */

static int parse_type(struct problem *p, struct yml *y, yaml_node_t *n, const char *file, char *err,
		      size_t errlen)
{
	struct strv words = {0};
	if (yml_args(y, n, &words, "type", file, err, errlen) < 0)
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
	}
	strv_release(&words);
	return 0;
}

static int parse_limits(struct problem *p, struct yml *y, yaml_node_t *lim, const char *file,
			char *err, size_t errlen)
{
	struct prob_limits *l = &p->limits;
	if (!lim || yml_is_null(lim))
		return 0;
	if (lim->type != YAML_MAPPING_NODE) {
		fail(err, errlen, "%s: limits must be a mapping", file);
		return -1;
	}
	yaml_node_t *tm = yml_get(y, lim, "time_multipliers");
	if (tm && !yml_is_null(tm) && tm->type != YAML_MAPPING_NODE) {
		fail(err, errlen, "%s: limits.time_multipliers must be a mapping", file);
		return -1;
	}
	if (yml_double(yml_get(y, lim, "time_limit"), "limits.time_limit", file, 1e-3,
		       &l->time_limit_s, err, errlen) < 0 ||
	    yml_double(yml_get(y, tm, "ac_to_time_limit"), "ac_to_time_limit", file, 1,
		       &l->ac_to_time_limit, err, errlen) < 0 ||
	    yml_double(yml_get(y, tm, "time_limit_to_tle"), "time_limit_to_tle", file, 1,
		       &l->time_limit_to_tle, err, errlen) < 0 ||
	    yml_double(yml_get(y, lim, "time_resolution"), "limits.time_resolution", file, 1e-3,
		       &l->time_resolution, err, errlen) < 0 ||
	    yml_double(yml_get(y, lim, "time_multiplier"), "limits.time_multiplier", file, 1e-3,
		       &l->time_multiplier, err, errlen) < 0 ||
	    yml_double(yml_get(y, lim, "time_safety_margin"), "limits.time_safety_margin", file,
		       1e-3, &l->time_safety_margin, err, errlen) < 0 ||
	    yml_long(yml_get(y, lim, "memory"), "limits.memory", file, &l->memory_mb, err, errlen) <
		0 ||
	    yml_long(yml_get(y, lim, "output"), "limits.output", file, &l->output_mb, err, errlen) <
		0 ||
	    yml_long(yml_get(y, lim, "compilation_time"), "limits.compilation_time", file,
		     &l->compilation_time_s, err, errlen) < 0 ||
	    yml_long(yml_get(y, lim, "compilation_memory"), "limits.compilation_memory", file,
		     &l->compilation_memory_mb, err, errlen) < 0 ||
	    yml_long(yml_get(y, lim, "validation_time"), "limits.validation_time", file,
		     &l->validation_time_s, err, errlen) < 0 ||
	    yml_long(yml_get(y, lim, "validation_memory"), "limits.validation_memory", file,
		     &l->validation_memory_mb, err, errlen) < 0 ||
	    yml_long(yml_get(y, lim, "validation_output"), "limits.validation_output", file,
		     &l->validation_output_mb, err, errlen) < 0)
		return -1;
	return 0;
}

static char *name_of(struct yml *y, yaml_node_t *n)
{
	if (!n)
		return NULL;
	if (yml_scalar(n))
		return *yml_scalar(n) ? xstrdup(yml_scalar(n)) : NULL;
	if (n->type != YAML_MAPPING_NODE ||
	    n->data.mapping.pairs.start == n->data.mapping.pairs.top)
		return NULL;
	const char *en = yml_scalar(yml_get(y, n, "en"));
	if (en)
		return xstrdup(en);
	yaml_node_pair_t *first = n->data.mapping.pairs.start;
	const char *v = yml_scalar(yaml_document_get_node(&y->doc, first->value));
	return v ? xstrdup(v) : NULL;
}

/* Reads problem.yaml. *custom tells whether problem.yaml asks for a custom
 * validator (legacy `validation: custom`). */
static int load_yaml(struct loader *L, bool *custom_asked)
{
	struct problem *p = L->p;
	char *file = path_join(p->dir, "problem.yaml");
	struct yml y;
	bool present;
	int ret = -1;
	struct strv args = {0};
	if (yml_load(&y, file, &present, L->err, L->errlen) < 0)
		goto out;
	if (!present) {
		fail(L->err, L->errlen, "%s: no problem.yaml", p->dir);
		goto out;
	}
	yaml_node_t *root = yml_root_map(&y);
	const char *ver = yml_scalar(yml_get(&y, root, "problem_format_version"));
	p->format_version = xstrdup(ver && *ver ? ver : "legacy");
	if (!ver || !*ver || !strncmp(ver, "legacy", 6))
		p->format = PROB_LEGACY;
	else if (!strncmp(ver, "2023-07", 7))
		p->format = PROB_2023_07;
	else if (!strncmp(ver, "2025-09", 7) || !strcmp(ver, "draft"))
		p->format = PROB_2025_09;
	else {
		fail(L->err, L->errlen, "%s: unknown problem_format_version '%s'", file, ver);
		goto out;
	}
	p->name = name_of(&y, yml_get(&y, root, "name"));
	if (parse_type(p, &y, yml_get(&y, root, "type"), file, L->err, L->errlen) < 0)
		goto out;
	const char *val = yml_scalar(yml_get(&y, root, "validation"));
	if (val && *val) {
		/* legacy: "default" or "custom", then maybe "interactive" and "score" */
		struct strv w = {0};
		strv_split(&w, val);
		if (w.n == 0 || (strcmp(w.v[0], "default") && strcmp(w.v[0], "custom"))) {
			fail(L->err, L->errlen,
			     "%s: validation must start with default or custom, got '%s'", file,
			     val);
			strv_release(&w);
			goto out;
		}
		*custom_asked = !strcmp(w.v[0], "custom");
		for (int i = 1; i < w.n; i++) {
			if (!strcmp(w.v[i], "interactive"))
				p->interactive = true;
			else if (!strcmp(w.v[i], "score"))
				p->scoring = true;
		}
		strv_release(&w);
	}
	if (yml_args(&y, yml_get(&y, root, "validator_flags"), &args, "validator_flags", file,
		     L->err, L->errlen) < 0 ||
	    yml_args(&y, yml_get(&y, root, "output_validator_args"), &args, "output_validator_args",
		     file, L->err, L->errlen) < 0)
		goto out;
	L->problem_args = args.v;
	args.v = NULL;
	if (parse_limits(p, &y, yml_get(&y, root, "limits"), file, L->err, L->errlen) < 0)
		goto out;
	ret = 0;
out:
	strv_release(&args);
	yml_release(&y);
	free(file);
	return ret;
}

/* Finds the output validator program: output_validator/ (2025-09) is the
 * program itself; output_validators/ (legacy, 2023-07) holds programs. */
static int load_validator(struct loader *L, bool custom_asked)
{
	struct problem *p = L->p;
	char *one = path_join(p->dir, "output_validator");
	char *many = path_join(p->dir, "output_validators");
	char *prog_path = NULL;
	int ret = -1;
	char **names = NULL;
	bool want = custom_asked || p->interactive || p->multi_pass;
	if (p->format != PROB_LEGACY && (is_dir(one) || is_dir(many)))
		want = true; /* 2023-07+: a present validator is the validator */
	if (!want) {
		ret = 0;
		goto out;
	}
	if (is_dir(one)) {
		prog_path = xstrdup(one);
		/* tolerate output_validator/<name>/ as some converted packages have it */
		int n = list_dir(one, &names);
		bool any_file = false;
		int ndirs = 0;
		for (int i = 0; i < n; i++) {
			char *q = path_join(one, names[i]);
			any_file |= is_file(q);
			ndirs += is_dir(q);
			if (ndirs == 1 && is_dir(q) && !any_file) {
				free(prog_path);
				prog_path = xstrdup(q);
			}
			free(q);
		}
		if (any_file || ndirs != 1) {
			free(prog_path);
			prog_path = xstrdup(one);
		}
	} else if (is_dir(many)) {
		int n = list_dir(many, &names);
		if (n <= 0) {
			fail(L->err, L->errlen, "%s: output_validators/ is empty", p->dir);
			goto out;
		}
		if (n > 1 && !p->unsupported)
			p->unsupported = xstrdup("several output validators are not supported");
		prog_path = path_join(many, names[0]);
	} else {
		fail(L->err, L->errlen,
		     "%s: validation is custom but there is no output_validator/ "
		     "or output_validators/",
		     p->dir);
		goto out;
	}
	if (load_program(&p->validator, prog_path, L->err, L->errlen) < 0)
		goto out;
	p->custom_validator = true;
	if (p->validator.unsupported && !p->unsupported) {
		char msg[256];
		snprintf(msg, sizeof msg, "output validator: %s", p->validator.unsupported);
		p->unsupported = xstrdup(msg);
	}
	ret = 0;
out:
	free_strv(names);
	free(prog_path);
	free(one);
	free(many);
	return ret;
}

static int cmp_sub(const void *a, const void *b)
{
	return strcmp(((const struct prob_submission *)a)->path,
		      ((const struct prob_submission *)b)->path);
}

static int load_submissions(struct loader *L)
{
	struct problem *p = L->p;
	char *dir = path_join(p->dir, "submissions");
	char **folders = NULL;
	int ret = -1, cap = 0;
	int nf = is_dir(dir) ? list_dir(dir, &folders) : 0;
	for (int i = 0; i < nf; i++) {
		char *fdir = path_join(dir, folders[i]);
		char **names = NULL;
		int n = is_dir(fdir) ? list_dir(fdir, &names) : 0;
		for (int j = 0; j < n; j++) {
			char *path = path_join(fdir, names[j]);
			if (p->nsubs == cap) {
				cap = cap ? cap * 2 : 16;
				p->subs = xreallocarray(p->subs, (size_t)cap, sizeof *p->subs);
			}
			struct prob_submission *s = &p->subs[p->nsubs];
			memset(s, 0, sizeof *s);
			int rc = load_program(&s->prog, path, L->err, L->errlen);
			free(path);
			if (rc < 0) {
				program_release(&s->prog);
				free_strv(names);
				free(fdir);
				goto out;
			}
			s->folder = xstrdup(folders[i]);
			s->path = path_join(folders[i], names[j]);
			p->nsubs++;
		}
		free_strv(names);
		free(fdir);
	}
	if (p->subs)
		qsort(p->subs, (size_t)p->nsubs, sizeof *p->subs, cmp_sub);
	ret = 0;
out:
	free_strv(folders);
	free(dir);
	return ret;
}

/* Statement: statement/ (2025-09) or problem_statement/ (legacy), English
 * Markdown first, then LaTeX, then any language. */
static void find_statement(struct problem *p)
{
	const char *dirs[] = {"statement", "problem_statement"};
	const char *files[] = {"problem.en.md", "problem.md", "problem.en.tex", "problem.tex"};
	for (int d = 0; d < 2; d++) {
		char *dir = path_join(p->dir, dirs[d]);
		for (int f = 0; f < 4; f++) {
			char *path = path_join(dir, files[f]);
			if (is_file(path)) {
				p->statement_path = path;
				free(dir);
				return;
			}
			free(path);
		}
		char **names = NULL;
		int n = is_dir(dir) ? list_dir(dir, &names) : 0;
		for (int i = 0; i < n && !p->statement_path; i++)
			if (!strncmp(names[i], "problem.", 8) &&
			    (ends_with(names[i], ".md") || ends_with(names[i], ".tex")))
				p->statement_path = path_join(dir, names[i]);
		free_strv(names);
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
	if (!path || !ends_with(path, ".tex") || strbuf_read_file(&sb, path, YAML_MAX) < 0)
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
	char *path = path_join(p->dir, ".timelimit");
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

int prob_load(struct problem *p, const char *dir, char *err, size_t errlen)
{
	memset(p, 0, sizeof *p);
	struct loader L = {.p = p, .err = err, .errlen = errlen};
	bool custom = false;
	int ret = -1;
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	p->dir = xstrndup(dir, n);
	const char *base = strrchr(p->dir, '/');
	p->id = xstrdup(base ? base + 1 : p->dir);
	if (!is_dir(p->dir)) {
		fail(err, errlen, "no problem package at '%s'", p->dir);
		goto out;
	}
	struct prob_limits *l = &p->limits;
	l->ac_to_time_limit = 2.0;
	l->time_limit_to_tle = 1.5;
	l->time_resolution = 1.0;
	l->time_multiplier = 5;
	l->time_safety_margin = 2;
	if (load_yaml(&L, &custom) < 0 || load_validator(&L, custom) < 0 || load_data(&L) < 0 ||
	    load_submissions(&L) < 0)
		goto out;
	if (l->time_limit_s <= 0)
		read_timelimit_file(p);
	find_statement(p);
	if (!p->name)
		p->name = name_from_statement(p->statement_path);
	if (!p->name)
		p->name = xstrdup(p->id);
	if (!p->unsupported) {
		const char *why = p->interactive     ? "interactive problems are not supported"
				  : p->multi_pass    ? "multi-pass problems are not supported"
				  : p->submit_answer ? "submit-answer problems are not supported"
						     : NULL;
		if (why)
			p->unsupported = xstrdup(why);
	}
	ret = 0;
out:
	free_strv(L.problem_args);
	if (ret < 0)
		prob_release(p);
	return ret;
}

int prob_open(struct problem *p, const char *problems_dir, const char *id, char *err, size_t errlen)
{
	memset(p, 0, sizeof *p);
	if (!prob_id_valid(id)) {
		fail(err, errlen, "invalid problem id (use a-z, 0-9, '_' and '-')");
		return -2;
	}
	char *dir = path_join(problems_dir, id);
	char *yaml = path_join(dir, "problem.yaml");
	int ret;
	if (!is_file(yaml)) {
		fail(err, errlen, "no problem '%s'", id);
		ret = -2;
	} else {
		ret = prob_load(p, dir, err, errlen);
	}
	free(yaml);
	free(dir);
	return ret;
}

void prob_release(struct problem *p)
{
	free(p->id);
	free(p->dir);
	free(p->name);
	free(p->format_version);
	free(p->unsupported);
	program_release(&p->validator);
	for (int i = 0; i < p->ntests; i++) {
		free(p->tests[i].name);
		free(p->tests[i].in_path);
		free(p->tests[i].ans_path);
		free_strv(p->tests[i].validator_args);
	}
	free(p->tests);
	for (int i = 0; i < p->nsubs; i++) {
		free(p->subs[i].folder);
		free(p->subs[i].path);
		program_release(&p->subs[i].prog);
	}
	free(p->subs);
	free(p->statement_path);
	memset(p, 0, sizeof *p);
}

int prob_list(const char *problems_dir, char ***ids, char *err, size_t errlen)
{
	char **names = NULL;
	*ids = NULL;
	int n = list_dir(problems_dir, &names);
	if (n < 0) {
		fail(err, errlen, "cannot list problems folder '%s': %s", problems_dir,
		     strerror(errno));
		return -1;
	}
	struct strv out = {0};
	for (int i = 0; i < n; i++) {
		if (!prob_id_valid(names[i]))
			continue;
		char *dir = path_join(problems_dir, names[i]);
		char *yaml = path_join(dir, "problem.yaml");
		if (is_file(yaml))
			strv_push(&out, names[i]);
		free(yaml);
		free(dir);
	}
	free_strv(names);
	strv_finish(&out);
	*ids = out.v;
	return out.n;
}

int prob_include_files(const struct problem *p, const char *judge_lang, char **dir, char ***names)
{
	*dir = NULL;
	*names = NULL;
	const char *code = NULL;
	for (size_t i = 0; i < NLANG && !code; i++)
		if (lang_defs[i].judge && judge_lang && !strcmp(lang_defs[i].judge, judge_lang))
			code = lang_defs[i].code;
	char *inc = path_join(p->dir, "include");
	char *d = code ? path_join(inc, code) : NULL;
	if (!d || !is_dir(d)) {
		free(d);
		d = path_join(inc, "default");
	}
	free(inc);
	if (!is_dir(d)) {
		free(d);
		return 0;
	}
	char **all;
	int n = list_dir(d, &all);
	if (n < 0) {
		free(d);
		return -1;
	}
	struct strv files = {0};
	for (int i = 0; i < n; i++) {
		char *path = path_join(d, all[i]);
		if (is_file(path))
			strv_push(&files, all[i]);
		free(path);
	}
	free_strv(all);
	strv_finish(&files);
	*dir = d;
	*names = files.v;
	return files.n;
}

/* ---- time limits ---- */

int prob_infer_time_limit(const struct prob_limits *l, double t_ac, double t_tle, double *out)
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

void prob_legacy_time_limit(const struct prob_limits *l, double t_ac, double *limit,
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
