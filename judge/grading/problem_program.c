/* problem_program: the programs of a problem package (output validator,
 * example submissions, include/ files) and their languages, by the package
 * format's languages table. Part of the problem module (problem_). */
#include <errno.h>
#include <fnmatch.h>
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

/* True when file matches one of the globs (case matters: *.C is C++). */
static bool matches(const char *file, char *const *globs)
{
	for (; *globs; globs++)
		if (!fnmatch(*globs, file, 0))
			return true;
	return false;
}

/* Whether file counts as evidence for pl (problemtools' rule): always, unless
 * it matches pl's shebang_files; then only when its first line matches pl's
 * shebang. path NULL: the file cannot be read, and such a file never counts. */
static bool evidence(const struct lang_problem *pl, const char *file, const char *path)
{
	if (!matches(file, pl->files))
		return false;
	if (!matches(file, pl->shebang_files))
		return true;
	if (!path)
		return false;
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char line[256] = "";
	bool got = fgets(line, sizeof line, f) != NULL;
	fclose(f);
	line[strcspn(line, "\r\n")] = 0;
	return got && lang_problem_shebang(pl, line);
}

const char *problem_file_lang_code(const struct lang_registry *langs, const char *file)
{
	const struct lang_problem *best = NULL;
	for (int i = 0; i < langs->nproblem_langs; i++) {
		const struct lang_problem *pl = &langs->problem_langs[i];
		if (evidence(pl, file, NULL) && (!best || pl->priority > best->priority))
			best = pl;
	}
	return best ? best->code : NULL;
}

/* Picks the program's language: the one with the most evidence files, ties to
 * the higher priority. */
static const struct lang_problem *detect_lang(const struct lang_registry *langs, const char *dir,
					      char *const *files)
{
	const struct lang_problem *best = NULL;
	int best_n = 0;
	for (int i = 0; i < langs->nproblem_langs; i++) {
		const struct lang_problem *pl = &langs->problem_langs[i];
		int n = 0;
		for (int f = 0; files[f]; f++) {
			char *path = problem_path_join(dir, files[f]);
			n += evidence(pl, files[f], path);
			free(path);
		}
		if (n > best_n || (n == best_n && n > 0 && pl->priority > best->priority)) {
			best = pl;
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
int problem_program_load(struct problem_program *prog, const char *path,
			 const struct lang_registry *langs, char *err, size_t errlen)
{
	memset(prog, 0, sizeof *prog);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	prog->name = xstrdup(base);
	struct problem_strv files = {0};
	if (problem_is_dir(path)) {
		prog->dir = xstrdup(path);
		char **names;
		int n = problem_list_dir(path, &names);
		if (n < 0) {
			problem_fail(err, errlen, "cannot list '%s': %s", path, strerror(errno));
			return -1;
		}
		for (int i = 0; i < n; i++) {
			char *p = problem_path_join(path, names[i]);
			if (problem_is_file(p))
				problem_strv_push(&files, names[i]);
			free(p);
		}
		problem_strv_free(names);
	} else if (problem_is_file(path)) {
		/* the folder without its trailing '/' */
		prog->dir = xstrndup(path, base > path ? (size_t)(base - path - 1) : 0);
		if (!*prog->dir) {
			free(prog->dir);
			prog->dir = xstrdup(".");
		}
		problem_strv_push(&files, base);
	} else {
		problem_fail(err, errlen, "'%s' is neither a file nor a folder", path);
		return -1;
	}
	problem_strv_finish(&files);
	prog->files = files.v;
	prog->nfiles = files.n;
	for (int i = 0; i < files.n; i++)
		if (!strcmp(files.v[i], "build") || !strcmp(files.v[i], "run"))
			prog->unsupported = xstrdup("build/run scripts are not supported");
	const struct lang_problem *pl = detect_lang(langs, prog->dir, prog->files);
	if (!pl) {
		if (!prog->unsupported)
			prog->unsupported = xstrdup("no source file of a known language");
		return 0;
	}
	prog->lang_code = xstrdup(pl->code);
	const struct lang *runs = lang_by_problem_language(langs, pl->code);
	prog->lang = runs ? xstrdup(runs->name) : NULL;
	const char *main_file = NULL, *single = NULL;
	for (int i = 0; i < files.n; i++) {
		const char *f = files.v[i];
		if (!matches(f, pl->files))
			continue;
		if (!single)
			single = f; /* smallest: files are sorted */
		if (!main_file && (is_main_name(f) || matches(f, pl->entry_files)))
			main_file = f;
	}
	prog->main_file = xstrdup(main_file ? main_file : single ? single : "");
	if (!prog->lang && !prog->unsupported) {
		char msg[96];
		snprintf(msg, sizeof msg, "language %s is not supported by the judge", pl->code);
		prog->unsupported = xstrdup(msg);
	}
	return 0;
}

void problem_program_release(struct problem_program *prog)
{
	free(prog->name);
	free(prog->dir);
	problem_strv_free(prog->files);
	free(prog->main_file);
	free(prog->lang_code);
	free(prog->lang);
	free(prog->unsupported);
	memset(prog, 0, sizeof *prog);
}

void problem_names_free(char **names)
{
	problem_strv_free(names);
}

/* Finds the output validator program: output_validator/ (2025-09) is the
 * program itself; output_validators/ (legacy, 2023-07) holds programs. */
int problem_load_validator(struct problem_loader *L, bool custom_asked)
{
	struct problem *p = L->p;
	char *one = problem_path_join(p->dir, "output_validator");
	char *many = problem_path_join(p->dir, "output_validators");
	char *prog_path = NULL;
	int ret = -1;
	char **names = NULL;
	bool want = custom_asked || p->interactive || p->multi_pass;
	if (p->format != PROB_LEGACY && (problem_is_dir(one) || problem_is_dir(many)))
		want = true; /* 2023-07+: a present validator is the validator */
	if (!want) {
		ret = 0;
		goto out;
	}
	if (problem_is_dir(one)) {
		prog_path = xstrdup(one);
		/* tolerate output_validator/<name>/ as some converted packages have it */
		int n = problem_list_dir(one, &names);
		bool any_file = false;
		int ndirs = 0;
		for (int i = 0; i < n; i++) {
			char *q = problem_path_join(one, names[i]);
			any_file |= problem_is_file(q);
			ndirs += problem_is_dir(q);
			if (ndirs == 1 && problem_is_dir(q) && !any_file) {
				free(prog_path);
				prog_path = xstrdup(q);
			}
			free(q);
		}
		if (any_file || ndirs != 1) {
			free(prog_path);
			prog_path = xstrdup(one);
		}
	} else if (problem_is_dir(many)) {
		int n = problem_list_dir(many, &names);
		if (n <= 0) {
			problem_fail(L->err, L->errlen, "%s: output_validators/ is empty", p->dir);
			goto out;
		}
		if (n > 1 && !p->unsupported)
			p->unsupported = xstrdup("several output validators are not supported");
		prog_path = problem_path_join(many, names[0]);
	} else {
		problem_fail(L->err, L->errlen,
			     "%s: validation is custom but there is no output_validator/ "
			     "or output_validators/",
			     p->dir);
		goto out;
	}
	if (problem_program_load(&p->validator, prog_path, L->langs, L->err, L->errlen) < 0)
		goto out;
	p->custom_validator = true;
	if (p->validator.unsupported && !p->unsupported) {
		char msg[256];
		snprintf(msg, sizeof msg, "output validator: %s", p->validator.unsupported);
		p->unsupported = xstrdup(msg);
	}
	ret = 0;
out:
	problem_strv_free(names);
	free(prog_path);
	free(one);
	free(many);
	return ret;
}

static int cmp_sub(const void *a, const void *b)
{
	return strcmp(((const struct problem_submission *)a)->path,
		      ((const struct problem_submission *)b)->path);
}

/* DOMjudge's submissions.json beside submissions/: per submission path
 * ("submissions/accepted/multi/" for a folder), its entry_point among its files
 * (DOMjudge webapp ImportProblemService). Returns 0, or -1 with L->err. */
static int read_entry_points(struct problem_loader *L)
{
	struct problem *p = L->p;
	char *path = problem_path_join(p->dir, "submissions.json");
	struct strbuf text = STRBUF_INIT;
	int ret = -1;
	cJSON *root = NULL;
	if (!problem_is_file(path)) {
		ret = 0;
		goto out;
	}
	int rc = strbuf_read_file(&text, path, (size_t)1 << 20);
	if (rc < 0) {
		problem_fail(L->err, L->errlen, "cannot read '%s': %s", path,
			     rc == -EFBIG ? "file too large" : strerror(-rc));
		goto out;
	}
	root = cJSON_ParseWithLength(text.buf, text.len);
	if (!cJSON_IsObject(root)) {
		problem_fail(L->err, L->errlen, "%s: not a JSON object", path);
		goto out;
	}
	for (int i = 0; i < p->nsubs; i++) {
		struct problem_submission *s = &p->subs[i];
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

int problem_load_submissions(struct problem_loader *L)
{
	struct problem *p = L->p;
	char *dir = problem_path_join(p->dir, "submissions");
	char **folders = NULL;
	int ret = -1, cap = 0;
	int nf = problem_is_dir(dir) ? problem_list_dir(dir, &folders) : 0;
	for (int i = 0; i < nf; i++) {
		char *fdir = problem_path_join(dir, folders[i]);
		char **names = NULL;
		int n = problem_is_dir(fdir) ? problem_list_dir(fdir, &names) : 0;
		for (int j = 0; j < n; j++) {
			char *path = problem_path_join(fdir, names[j]);
			if (p->nsubs == cap) {
				cap = cap ? cap * 2 : 16;
				p->subs = xreallocarray(p->subs, (size_t)cap, sizeof *p->subs);
			}
			struct problem_submission *s = &p->subs[p->nsubs];
			memset(s, 0, sizeof *s);
			int rc = problem_program_load(&s->prog, path, L->langs, L->err, L->errlen);
			free(path);
			if (rc < 0) {
				problem_program_release(&s->prog);
				problem_strv_free(names);
				free(fdir);
				goto out;
			}
			s->folder = xstrdup(folders[i]);
			s->path = problem_path_join(folders[i], names[j]);
			p->nsubs++;
		}
		problem_strv_free(names);
		free(fdir);
	}
	if (p->subs)
		qsort(p->subs, (size_t)p->nsubs, sizeof *p->subs, cmp_sub);
	if (read_entry_points(L) < 0)
		goto out;
	ret = 0;
out:
	problem_strv_free(folders);
	free(dir);
	return ret;
}

int problem_include_files(const struct problem *p, const char *code, char **dir, char ***names)
{
	*dir = NULL;
	*names = NULL;
	char *inc = problem_path_join(p->dir, "include");
	char *d = code ? problem_path_join(inc, code) : NULL;
	if (!d || !problem_is_dir(d)) {
		free(d);
		d = problem_path_join(inc, "default");
	}
	free(inc);
	if (!problem_is_dir(d)) {
		free(d);
		return 0;
	}
	char **all;
	int n = problem_list_dir(d, &all);
	if (n < 0) {
		free(d);
		return -1;
	}
	struct problem_strv files = {0};
	for (int i = 0; i < n; i++) {
		char *path = problem_path_join(d, all[i]);
		if (problem_is_file(path))
			problem_strv_push(&files, all[i]);
		free(path);
	}
	problem_strv_free(all);
	problem_strv_finish(&files);
	*dir = d;
	*names = files.v;
	return files.n;
}
