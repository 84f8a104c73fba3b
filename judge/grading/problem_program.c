/* problem_program: the programs of a problem package (output validator,
 * example submissions, include/ files) and their languages, by the package
 * format's languages table. Part of the problem module (prob_). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "common/strbuf.h"
#include "judge/grading/lang.h"
#include "judge/grading/problem.h"
#include "judge/grading/problem_int.h"
#include "common/xalloc.h"

struct lang_def {
	const char *code;
	int priority;
	const char *exts;  /* space-separated, with the dot; case matters (.C is C++) */
	const char *judge; /* judge language name, or NULL */
};

/* The package format's languages table (file endings and tie-break priorities,
 * as the Kattis problemtools language list gives them), and the shell, which
 * DOMjudge's language list has (bash: .bash, POSIX sh: .sh; both run in bash). */
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
    {"bash", 25, ".sh .bash", "bash"},
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
		if (!strcmp(lang_defs[i].code, "python2") && !prob_ends_with(file, ".py2"))
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
			if (!strcmp(lang_defs[i].code, "python2") &&
			    prob_ends_with(files[f], ".py")) {
				char *p = prob_path_join(dir, files[f]);
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
int prob_program_load(struct prob_program *prog, const char *path, char *err, size_t errlen)
{
	memset(prog, 0, sizeof *prog);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	prog->name = xstrdup(base);
	struct prob_strv files = {0};
	if (prob_is_dir(path)) {
		prog->dir = xstrdup(path);
		char **names;
		int n = prob_list_dir(path, &names);
		if (n < 0) {
			prob_fail(err, errlen, "cannot list '%s': %s", path, strerror(errno));
			return -1;
		}
		for (int i = 0; i < n; i++) {
			char *p = prob_path_join(path, names[i]);
			if (prob_is_file(p))
				prob_strv_push(&files, names[i]);
			free(p);
		}
		prob_strv_free(names);
	} else if (prob_is_file(path)) {
		/* the folder without its trailing '/' */
		prog->dir = xstrndup(path, base > path ? (size_t)(base - path - 1) : 0);
		if (!*prog->dir) {
			free(prog->dir);
			prog->dir = xstrdup(".");
		}
		prob_strv_push(&files, base);
	} else {
		prob_fail(err, errlen, "'%s' is neither a file nor a folder", path);
		return -1;
	}
	prob_strv_finish(&files);
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

void prob_program_release(struct prob_program *prog)
{
	free(prog->name);
	free(prog->dir);
	prob_strv_free(prog->files);
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

char **prob_compile_argv(const struct lang *lang, const char *const *extra_sources,
			 const char *const *options)
{
	if (!lang->compile_argv)
		return NULL;
	struct prob_strv out = {0};
	size_t slen = strlen(lang->source_file);
	bool inserted = false;
	for (char **a = lang->compile_argv;; a++) {
		if (a - lang->compile_argv == lang->compile_options_at)
			for (int i = 0; options && options[i]; i++)
				prob_strv_push(&out, options[i]);
		if (!*a)
			break;
		prob_strv_push(&out, *a);
		size_t n = strlen(*a);
		bool names_source = !strcmp(*a, lang->source_file) || !strcmp(*a, "{source}") ||
				    (n > slen && (*a)[n - slen - 1] == '/' &&
				     !strcmp(*a + n - slen, lang->source_file));
		if (names_source && !inserted) {
			for (int i = 0; extra_sources && extra_sources[i]; i++)
				prob_strv_push(&out, extra_sources[i]);
			inserted = true;
		}
	}
	if (!inserted)
		for (int i = 0; extra_sources && extra_sources[i]; i++)
			prob_strv_push(&out, extra_sources[i]);
	return out.v;
}

void prob_argv_free(char **argv)
{
	prob_strv_free(argv);
}

/* Finds the output validator program: output_validator/ (2025-09) is the
 * program itself; output_validators/ (legacy, 2023-07) holds programs. */
int prob_load_validator(struct prob_loader *L, bool custom_asked)
{
	struct problem *p = L->p;
	char *one = prob_path_join(p->dir, "output_validator");
	char *many = prob_path_join(p->dir, "output_validators");
	char *prog_path = NULL;
	int ret = -1;
	char **names = NULL;
	bool want = custom_asked || p->interactive || p->multi_pass;
	if (p->format != PROB_LEGACY && (prob_is_dir(one) || prob_is_dir(many)))
		want = true; /* 2023-07+: a present validator is the validator */
	if (!want) {
		ret = 0;
		goto out;
	}
	if (prob_is_dir(one)) {
		prog_path = xstrdup(one);
		/* tolerate output_validator/<name>/ as some converted packages have it */
		int n = prob_list_dir(one, &names);
		bool any_file = false;
		int ndirs = 0;
		for (int i = 0; i < n; i++) {
			char *q = prob_path_join(one, names[i]);
			any_file |= prob_is_file(q);
			ndirs += prob_is_dir(q);
			if (ndirs == 1 && prob_is_dir(q) && !any_file) {
				free(prog_path);
				prog_path = xstrdup(q);
			}
			free(q);
		}
		if (any_file || ndirs != 1) {
			free(prog_path);
			prog_path = xstrdup(one);
		}
	} else if (prob_is_dir(many)) {
		int n = prob_list_dir(many, &names);
		if (n <= 0) {
			prob_fail(L->err, L->errlen, "%s: output_validators/ is empty", p->dir);
			goto out;
		}
		if (n > 1 && !p->unsupported)
			p->unsupported = xstrdup("several output validators are not supported");
		prog_path = prob_path_join(many, names[0]);
	} else {
		prob_fail(L->err, L->errlen,
			  "%s: validation is custom but there is no output_validator/ "
			  "or output_validators/",
			  p->dir);
		goto out;
	}
	if (prob_program_load(&p->validator, prog_path, L->err, L->errlen) < 0)
		goto out;
	p->custom_validator = true;
	if (p->validator.unsupported && !p->unsupported) {
		char msg[256];
		snprintf(msg, sizeof msg, "output validator: %s", p->validator.unsupported);
		p->unsupported = xstrdup(msg);
	}
	ret = 0;
out:
	prob_strv_free(names);
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

/* DOMjudge's submissions.json beside submissions/: per submission path
 * ("submissions/accepted/multi/" for a folder), its entry_point among its files
 * (DOMjudge webapp ImportProblemService). Returns 0, or -1 with L->err. */
static int read_entry_points(struct prob_loader *L)
{
	struct problem *p = L->p;
	char *path = prob_path_join(p->dir, "submissions.json");
	struct strbuf text = STRBUF_INIT;
	int ret = -1;
	cJSON *root = NULL;
	if (!prob_is_file(path)) {
		ret = 0;
		goto out;
	}
	int rc = strbuf_read_file(&text, path, (size_t)1 << 20);
	if (rc < 0) {
		prob_fail(L->err, L->errlen, "cannot read '%s': %s", path,
			  rc == -EFBIG ? "file too large" : strerror(-rc));
		goto out;
	}
	root = cJSON_ParseWithLength(text.buf, text.len);
	if (!cJSON_IsObject(root)) {
		prob_fail(L->err, L->errlen, "%s: not a JSON object", path);
		goto out;
	}
	for (int i = 0; i < p->nsubs; i++) {
		struct prob_submission *s = &p->subs[i];
		struct strbuf key = STRBUF_INIT;
		strbuf_addf(&key, "submissions/%s%s", s->path, s->prog.nfiles > 1 ? "/" : "");
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, key.buf);
		if (!d && s->prog.nfiles <= 1) {
			strbuf_addstr(&key, "/"); /* a folder of one file */
			d = cJSON_GetObjectItemCaseSensitive(root, key.buf);
		}
		strbuf_release(&key);
		const cJSON *ep = cJSON_GetObjectItemCaseSensitive(d, "entry_point");
		if (!cJSON_IsString(ep))
			continue;
		for (int f = 0; f < s->prog.nfiles; f++)
			if (!strcmp(s->prog.files[f], ep->valuestring)) {
				free(s->prog.main_file);
				s->prog.main_file = xstrdup(ep->valuestring);
			}
	}
	ret = 0;
out:
	cJSON_Delete(root);
	strbuf_release(&text);
	free(path);
	return ret;
}

int prob_load_submissions(struct prob_loader *L)
{
	struct problem *p = L->p;
	char *dir = prob_path_join(p->dir, "submissions");
	char **folders = NULL;
	int ret = -1, cap = 0;
	int nf = prob_is_dir(dir) ? prob_list_dir(dir, &folders) : 0;
	for (int i = 0; i < nf; i++) {
		char *fdir = prob_path_join(dir, folders[i]);
		char **names = NULL;
		int n = prob_is_dir(fdir) ? prob_list_dir(fdir, &names) : 0;
		for (int j = 0; j < n; j++) {
			char *path = prob_path_join(fdir, names[j]);
			if (p->nsubs == cap) {
				cap = cap ? cap * 2 : 16;
				p->subs = xreallocarray(p->subs, (size_t)cap, sizeof *p->subs);
			}
			struct prob_submission *s = &p->subs[p->nsubs];
			memset(s, 0, sizeof *s);
			int rc = prob_program_load(&s->prog, path, L->err, L->errlen);
			free(path);
			if (rc < 0) {
				prob_program_release(&s->prog);
				prob_strv_free(names);
				free(fdir);
				goto out;
			}
			s->folder = xstrdup(folders[i]);
			s->path = prob_path_join(folders[i], names[j]);
			p->nsubs++;
		}
		prob_strv_free(names);
		free(fdir);
	}
	if (p->subs)
		qsort(p->subs, (size_t)p->nsubs, sizeof *p->subs, cmp_sub);
	if (read_entry_points(L) < 0)
		goto out;
	ret = 0;
out:
	prob_strv_free(folders);
	free(dir);
	return ret;
}

int prob_include_files(const struct problem *p, const char *judge_lang, char **dir, char ***names)
{
	*dir = NULL;
	*names = NULL;
	const char *code = NULL;
	for (size_t i = 0; i < NLANG && !code; i++)
		if (lang_defs[i].judge && judge_lang && !strcmp(lang_defs[i].judge, judge_lang))
			code = lang_defs[i].code;
	char *inc = prob_path_join(p->dir, "include");
	char *d = code ? prob_path_join(inc, code) : NULL;
	if (!d || !prob_is_dir(d)) {
		free(d);
		d = prob_path_join(inc, "default");
	}
	free(inc);
	if (!prob_is_dir(d)) {
		free(d);
		return 0;
	}
	char **all;
	int n = prob_list_dir(d, &all);
	if (n < 0) {
		free(d);
		return -1;
	}
	struct prob_strv files = {0};
	for (int i = 0; i < n; i++) {
		char *path = prob_path_join(d, all[i]);
		if (prob_is_file(path))
			prob_strv_push(&files, all[i]);
		free(path);
	}
	prob_strv_free(all);
	prob_strv_finish(&files);
	*dir = d;
	*names = files.v;
	return files.n;
}
