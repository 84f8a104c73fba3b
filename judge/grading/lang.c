/* lang: loads the language files of languages/ and probes their versions. */
#define _GNU_SOURCE
#include "judge/grading/lang.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "common/clock.h"
#include "common/ini.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

enum {
	K_NAME,
	K_DISPLAY,
	K_SOURCE,
	K_COMPILE,
	K_RUN,
	K_VERSION,
	K_RO,
	K_ENV,
	K_CENV,
	K_TIME,
	K_MEM,
	K_PROC,
	K_CTIME,
	K_CMEM,
	K_CPROC,
	K_INSTALL,
	K_WARM,
	K_PRELOAD,
	K_SESSION,
	K_SENV,
	K_CIR,
};

static void free_list(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

static char **dup_list(char *const *v)
{
	size_t n = 0;
	while (v[n])
		n++;
	char **out = xcalloc(n + 1, sizeof *out);
	for (size_t i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return out;
}

static void list_push(char ***v, size_t *n, char *s)
{
	char **p = xreallocarray(*v, *n + 2, sizeof *p);
	p[(*n)++] = s;
	p[*n] = NULL;
	*v = p;
}

/* Splits a command line on blanks. Single or double quotes keep blanks inside
 * one word (no escapes: the files are written by the operator, not users).
 * {source} is replaced by source (which may be NULL when not known yet). */
static int split_words(const char *s, const char *source, char ***out, char *err, size_t errlen)
{
	char **v = xcalloc(1, sizeof *v);
	size_t n = 0;
	struct strbuf w = STRBUF_INIT;
	while (*s) {
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		strbuf_reset(&w);
		char quote = 0;
		while (*s && (quote || !isspace((unsigned char)*s))) {
			if (quote && *s == quote) {
				quote = 0;
				s++;
			} else if (!quote && (*s == '\'' || *s == '"')) {
				quote = *s++;
			} else if (source && !strncmp(s, "{source}", 8)) {
				strbuf_addstr(&w, source);
				s += 8;
			} else {
				strbuf_addch(&w, *s++);
			}
		}
		if (quote) {
			snprintf(err, errlen, "unterminated quote in '%s'", w.buf);
			goto fail;
		}
		list_push(&v, &n, xstrdup(w.buf));
	}
	strbuf_release(&w);
	*out = v;
	return 0;
fail:
	strbuf_release(&w);
	free_list(v);
	return -1;
}

/* Splits s on sep, dropping empty parts. */
static char **split_sep(const char *s, int sep)
{
	char **v = xcalloc(1, sizeof *v);
	size_t n = 0;
	while (*s) {
		const char *e = strchr(s, sep);
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (len)
			list_push(&v, &n, xstrndup(s, len));
		s += len;
		if (*s)
			s++;
	}
	return v;
}

/* Returns 0, for on_key's tail calls. */
static int set_str(char **field, const char *value)
{
	char *c = xstrdup(value);
	free(*field);
	*field = c;
	return 0;
}

static int set_long(long *field, const char *key, const char *value, long max, char *err,
		    size_t errlen)
{
	char *end;
	errno = 0;
	long v = strtol(value, &end, 10);
	if (errno || end == value || *end || v < 0 || v > max) {
		snprintf(err, errlen, "'%s' needs a whole number from 0 to %ld, got '%s'", key, max,
			 value);
		return -1;
	}
	*field = v;
	return 0;
}

static int set_env(char ***field, const char *key, const char *value, char *err, size_t errlen)
{
	char **v;
	if (split_words(value, NULL, &v, err, errlen) < 0)
		return -1;
	for (char **p = v; *p; p++)
		if (!strchr(*p, '=') || **p == '=') {
			snprintf(err, errlen, "'%s': '%s' is not NAME=VALUE", key, *p);
			free_list(v);
			return -1;
		}
	free_list(*field);
	*field = v;
	return 0;
}

/* Sets a colon-separated list of absolute host paths (key names it in err). */
static int set_paths(char ***field, const char *key, const char *value, char *err, size_t errlen)
{
	char **v = split_sep(value, ':');
	for (char **p = v; *p; p++)
		if (**p != '/') {
			snprintf(err, errlen, "'%s' needs absolute paths, got '%s'", key, *p);
			free_list(v);
			return -1;
		}
	free_list(*field);
	*field = v;
	return 0;
}

/* compile_in_run: compiled here, so a bad pattern is an error of the file.
 * Byte mode (no UTF): a program's stderr need not be UTF-8. */
static int set_regex(struct lang *l, const char *value, char *err, size_t errlen)
{
	int code;
	PCRE2_SIZE off;
	pcre2_code *re =
	    pcre2_compile((PCRE2_SPTR)value, PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
	if (!re) {
		PCRE2_UCHAR msg[160];
		pcre2_get_error_message(code, msg, sizeof msg);
		snprintf(err, errlen, "'compile_in_run': bad pattern at offset %zu: %s",
			 (size_t)off, (const char *)msg);
		return -1;
	}
	l->compile_in_run_re = re;
	return set_str(&l->compile_in_run, value);
}

bool lang_compile_error_in_run(const struct lang *l, const char *err, size_t len)
{
	if (!l->compile_in_run_re || len > LANG_COMPILE_IN_RUN_MAX)
		return false;
	pcre2_match_data *md = pcre2_match_data_create(1, NULL);
	pcre2_match_context *mctx = pcre2_match_context_create(NULL);
	if (!md || !mctx)
		xalloc_die(0); /* pcre2's only reason for NULL here */
	/* a pattern that backtracks badly gives up (no match), never hangs */
	pcre2_set_match_limit(mctx, 1000000);
	pcre2_set_depth_limit(mctx, 10000);
	int rc = pcre2_match(l->compile_in_run_re, (PCRE2_SPTR)(err ? err : ""), err ? len : 0, 0,
			     0, md, mctx);
	pcre2_match_context_free(mctx);
	pcre2_match_data_free(md);
	return rc >= 0;
}

static const char *const key_names[] = {
    [K_NAME] = "name",
    [K_DISPLAY] = "display_name",
    [K_SOURCE] = "source_file",
    [K_COMPILE] = "compile",
    [K_RUN] = "run",
    [K_VERSION] = "version",
    [K_RO] = "ro_paths",
    [K_ENV] = "env",
    [K_CENV] = "compile_env",
    [K_TIME] = "time_limit_ms",
    [K_MEM] = "memory_limit_mb",
    [K_PROC] = "processes",
    [K_CTIME] = "compile_time_limit_ms",
    [K_CMEM] = "compile_memory_limit_mb",
    [K_CPROC] = "compile_processes",
    [K_INSTALL] = "install",
    [K_WARM] = "warm_up",
    [K_PRELOAD] = "preload",
    [K_SESSION] = "session",
    [K_SENV] = "session_env",
    [K_CIR] = "compile_in_run",
};
#define KEY_COUNT (sizeof key_names / sizeof key_names[0])

/* The command lines are kept raw until the whole file is read, because
 * {source} may be set after them; raw[] holds them meanwhile. */
struct raw_cmds {
	char *compile, *run, *version, *session;
};

struct parse_ctx {
	struct lang *l;
	struct raw_cmds raw;
	unsigned seen;
};

static int on_key(void *vctx, const char *section, const char *key, const char *value, char *err,
		  size_t errlen)
{
	struct parse_ctx *ctx = vctx;
	struct lang *l = ctx->l;
	if (*section) {
		snprintf(err, errlen, "language files have no sections, got [%s]", section);
		return -1;
	}
	size_t k;
	for (k = 0; k < KEY_COUNT; k++)
		if (!strcmp(key, key_names[k]))
			break;
	if (k == KEY_COUNT) {
		snprintf(err, errlen, "unknown key '%s'", key);
		return -1;
	}
	if (ctx->seen & (1u << k)) {
		snprintf(err, errlen, "key '%s' given twice", key);
		return -1;
	}
	ctx->seen |= 1u << k;
	switch (k) {
	case K_NAME:
		for (const char *p = value; *p; p++)
			if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-') {
				snprintf(err, errlen,
					 "'name' may hold only letters, digits, - and _");
				return -1;
			}
		return set_str(&l->name, value);
	case K_DISPLAY:
		return set_str(&l->display_name, value);
	case K_SOURCE:
		if (!*value || strchr(value, '/') || !strcmp(value, ".") || !strcmp(value, "..")) {
			snprintf(err, errlen, "'source_file' must be a plain file name, got '%s'",
				 value);
			return -1;
		}
		return set_str(&l->source_file, value);
	case K_COMPILE:
		return set_str(&ctx->raw.compile, value);
	case K_RUN:
		return set_str(&ctx->raw.run, value);
	case K_VERSION:
		return set_str(&ctx->raw.version, value);
	case K_SESSION:
		return set_str(&ctx->raw.session, value);
	case K_SENV:
		return set_env(&l->session_env, key, value, err, errlen);
	case K_RO:
		return set_paths(&l->ro_paths, key, value, err, errlen);
	case K_PRELOAD:
		return set_paths(&l->preload, key, value, err, errlen);
	case K_WARM:
		if (split_words(value, NULL, &l->warm_argv, err, errlen) < 0)
			return -1;
		if (l->warm_argv[0] && l->warm_argv[0][0] != '/') {
			snprintf(err, errlen,
				 "'warm_up' must start with an absolute path, got '%s'",
				 l->warm_argv[0]);
			return -1;
		}
		if (!l->warm_argv[0]) {
			free_list(l->warm_argv);
			l->warm_argv = NULL;
		}
		return 0;
	case K_ENV:
		return set_env(&l->env, key, value, err, errlen);
	case K_CENV:
		return set_env(&l->compile_env, key, value, err, errlen);
	case K_TIME:
		return set_long(&l->time_limit_ms, key, value, 600000, err, errlen);
	case K_MEM:
		return set_long(&l->memory_limit_mb, key, value, 65536, err, errlen);
	case K_PROC:
		return set_long(&l->processes, key, value, 4096, err, errlen);
	case K_CTIME:
		return set_long(&l->compile_time_limit_ms, key, value, 600000, err, errlen);
	case K_CMEM:
		return set_long(&l->compile_memory_limit_mb, key, value, 65536, err, errlen);
	case K_CPROC:
		return set_long(&l->compile_processes, key, value, 4096, err, errlen);
	case K_INSTALL:
		return set_str(&l->install, value);
	case K_CIR:
		return set_regex(l, value, err, errlen);
	}
	return 0;
}

/* The compile command's {options} word marks where a request's compiler
 * options go: its place is kept, the word itself is not. */
static void take_options_word(struct lang *l)
{
	l->compile_options_at = -1;
	for (int i = 0; l->compile_argv && l->compile_argv[i]; i++)
		if (!strcmp(l->compile_argv[i], "{options}")) {
			free(l->compile_argv[i]);
			for (int j = i; l->compile_argv[j]; j++)
				l->compile_argv[j] = l->compile_argv[j + 1];
			l->compile_options_at = i;
			return;
		}
}

static void lang_release(struct lang *l)
{
	free(l->name);
	free(l->display_name);
	free(l->source_file);
	free_list(l->compile_argv);
	free_list(l->run_argv);
	free_list(l->version_argv);
	free_list(l->ro_paths);
	free_list(l->env);
	free_list(l->compile_env);
	free(l->install);
	free_list(l->warm_argv);
	free_list(l->preload);
	free_list(l->session_argv);
	free_list(l->session_env);
	free_list(l->session_ro_paths);
	free(l->compile_in_run);
	pcre2_code_free(l->compile_in_run_re);
	memset(l, 0, sizeof *l);
}

/* Replaces every {drivers} in the words of v by drivers (an absolute path). */
static void subst_drivers(char **v, const char *drivers)
{
	for (; *v; v++) {
		if (!strstr(*v, "{drivers}"))
			continue;
		struct strbuf w = STRBUF_INIT;
		for (const char *p = *v; *p;) {
			if (!strncmp(p, "{drivers}", 9)) {
				strbuf_addstr(&w, drivers);
				p += 9;
			} else {
				strbuf_addch(&w, *p++);
			}
		}
		free(*v);
		*v = strbuf_detach(&w, NULL);
	}
}

/* The session driver's argv, env and read-only folders (the language's, plus
 * the drivers folder, which sessions bind wherever languages/ lives). */
static int load_session(struct lang *l, const char *raw, const char *path, const char *drivers,
			char *err, size_t errlen)
{
	char msg[256];
	if (split_words(raw, NULL, &l->session_argv, msg, sizeof msg) < 0) {
		snprintf(err, errlen, "%s: %s", path, msg);
		return -1;
	}
	if (!l->session_argv[0]) {
		free_list(l->session_argv);
		l->session_argv = NULL;
		return 0;
	}
	subst_drivers(l->session_argv, drivers);
	if (l->session_argv[0][0] != '/') {
		snprintf(err, errlen, "%s: '%s' must start with an absolute path", path,
			 l->session_argv[0]);
		return -1;
	}
	if (!l->session_env)
		l->session_env = dup_list(l->env);
	size_t n = 0;
	l->session_ro_paths = dup_list(l->ro_paths);
	while (l->session_ro_paths[n])
		n++;
	list_push(&l->session_ro_paths, &n, xstrdup(drivers));
	return 0;
}

/* Parses one file into l; on failure l is released and err says why. */
static int load_one(struct lang *l, const char *path, const char *base, const char *drivers,
		    char *err, size_t errlen)
{
	int ret = -1;
	struct parse_ctx ctx = {.l = l};
	char msg[384];
	memset(l, 0, sizeof *l);
	if (ini_parse_file(path, on_key, &ctx, err, errlen) < 0)
		goto out;
	if (!l->name)
		l->name = xstrdup(base);
	if (strcmp(l->name, base)) {
		snprintf(err, errlen, "%s: name '%s' differs from the file name '%s'", path,
			 l->name, base);
		goto out;
	}
	if (!l->source_file || !ctx.raw.run) {
		snprintf(err, errlen, "%s: '%s' is required", path,
			 !l->source_file ? "source_file" : "run");
		goto out;
	}
	if (!l->display_name)
		l->display_name = xstrdup(l->name);
	if (ctx.raw.compile && *ctx.raw.compile &&
	    split_words(ctx.raw.compile, l->source_file, &l->compile_argv, msg, sizeof msg) < 0)
		goto bad;
	take_options_word(l);
	if (split_words(ctx.raw.run, l->source_file, &l->run_argv, msg, sizeof msg) < 0)
		goto bad;
	if (split_words(ctx.raw.version ? ctx.raw.version : "", l->source_file, &l->version_argv,
			msg, sizeof msg) < 0)
		goto bad;
	if (!l->run_argv[0]) {
		snprintf(err, errlen, "%s: 'run' is empty", path);
		goto out;
	}
	char **argvs[] = {l->compile_argv, l->run_argv, l->version_argv};
	for (size_t i = 0; i < 3; i++)
		if (argvs[i] && argvs[i][0] && argvs[i][0][0] != '/') {
			snprintf(err, errlen, "%s: '%s' must start with an absolute path", path,
				 argvs[i][0]);
			goto out;
		}
	if (l->compile_in_run && !l->compile_argv) {
		snprintf(err, errlen, "%s: 'compile_in_run' needs a 'compile' step", path);
		goto out;
	}
	if (!l->ro_paths)
		l->ro_paths = xcalloc(1, sizeof(char *));
	if (!l->env)
		l->env = xcalloc(1, sizeof(char *));
	if (!l->compile_env)
		l->compile_env = dup_list(l->env);
	if (ctx.raw.session && load_session(l, ctx.raw.session, path, drivers, err, errlen) < 0)
		goto out;
	if (!l->session_argv && l->session_env) {
		free_list(l->session_env);
		l->session_env = NULL;
	}
	ret = 0;
	goto out;
bad:
	snprintf(err, errlen, "%s: %s", path, msg);
out:
	free(ctx.raw.compile);
	free(ctx.raw.run);
	free(ctx.raw.version);
	free(ctx.raw.session);
	if (ret < 0)
		lang_release(l);
	return ret;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int lang_load_dir(struct lang_registry *reg, const char *dir, char *err, size_t errlen)
{
	int ret = -1;
	char **names = NULL;
	size_t n = 0;
	memset(reg, 0, sizeof *reg);
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "cannot open languages folder '%s': %s", dir,
			 strerror(errno));
		return -1;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (e->d_name[0] == '.' || len <= 4 || strcmp(e->d_name + len - 4, ".ini"))
			continue;
		list_push(&names, &n, xstrndup(e->d_name, len - 4));
	}
	if (!n) {
		snprintf(err, errlen, "no language files (*.ini) in '%s'", dir);
		goto out;
	}
	qsort(names, n, sizeof *names, cmp_names);
	/* absolute: the session argv names it inside the sandbox, bound at the same path */
	char real[PATH_MAX], drivers[PATH_MAX + 16];
	if (!realpath(dir, real)) {
		snprintf(err, errlen, "cannot resolve languages folder '%s': %s", dir,
			 strerror(errno));
		goto out;
	}
	snprintf(drivers, sizeof drivers, "%s/drivers", real);
	/* every sandbox mounts a private /tmp (and /dev/shm) over the host's, which
	 * hides a folder bound below them: a tree checked out there uses the copy
	 * that make deps keeps (languages/deps.sh) */
	if (!strncmp(real, "/tmp/", 5) || !strncmp(real, "/dev/shm/", 9))
		snprintf(drivers, sizeof drivers, "%s", LANG_DRIVERS_COPY);
	reg->langs = xcalloc(n, sizeof *reg->langs);
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s.ini", dir, names[i]);
		if (load_one(&reg->langs[i], path, names[i], drivers, err, errlen) < 0)
			goto out;
		reg->count++;
	}
	ret = 0;
out:
	closedir(d);
	free_list(names);
	if (ret < 0)
		lang_registry_release(reg);
	return ret;
}

const struct lang *lang_find(const struct lang_registry *reg, const char *name)
{
	for (int i = 0; i < reg->count; i++)
		if (!strcmp(reg->langs[i].name, name))
			return &reg->langs[i];
	return NULL;
}

void lang_registry_release(struct lang_registry *reg)
{
	for (int i = 0; i < reg->count; i++)
		lang_release(&reg->langs[i]);
	free(reg->langs);
	reg->langs = NULL;
	reg->count = 0;
}

/* The version probe runs on the host (same binaries the sandbox binds), with
 * the language's own environment, through posix_spawn so it is safe in a
 * multi-threaded worker. */
int lang_probe_version(const struct lang *l, char *out, size_t outlen, long timeout_ms)
{
	int ret = -1, fds[2] = {-1, -1}, status;
	pid_t pid = -1;
	struct strbuf buf = STRBUF_INIT;
	posix_spawn_file_actions_t fa;
	bool fa_init = false;
	snprintf(out, outlen, "unknown");
	if (!l->version_argv || !l->version_argv[0]) {
		snprintf(out, outlen, "no version probe");
		return -1;
	}
	if (pipe2(fds, O_CLOEXEC) < 0)
		goto fail;
	if (posix_spawn_file_actions_init(&fa))
		goto fail;
	fa_init = true;
	if (posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) ||
	    posix_spawn_file_actions_adddup2(&fa, fds[1], 1) ||
	    posix_spawn_file_actions_adddup2(&fa, fds[1], 2) ||
	    posix_spawn_file_actions_addchdir_np(&fa, "/tmp"))
		goto fail;
	int rc = posix_spawn(&pid, l->version_argv[0], &fa, NULL, l->version_argv, l->env);
	if (rc) {
		errno = rc;
		pid = -1;
		goto fail;
	}
	close(fds[1]);
	fds[1] = -1;
	int64_t deadline = clock_mono_ms() + timeout_ms;
	for (;;) {
		int64_t left = deadline - clock_mono_ms();
		if (left <= 0) {
			snprintf(out, outlen, "version probe timed out");
			kill(pid, SIGKILL);
			goto out;
		}
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		int pr = poll(&p, 1, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			goto fail;
		if (!pr)
			continue;
		char chunk[4096];
		ssize_t r = read(fds[0], chunk, sizeof chunk);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (buf.len < 65536)
			strbuf_add(&buf, chunk, (size_t)r);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	pid = -1;
	char *s = buf.buf;
	while (isspace((unsigned char)*s))
		s++;
	size_t len = strcspn(s, "\r\n");
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (!WIFEXITED(status) || WEXITSTATUS(status) || !len) {
		snprintf(out, outlen, "version probe failed: %.*s", (int)(len > 200 ? 200 : len),
			 s);
		goto out;
	}
	snprintf(out, outlen, "%.*s", (int)len, s);
	ret = 0;
	goto out;
fail:
	snprintf(out, outlen, "cannot run '%s': %s", l->version_argv[0], strerror(errno));
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	if (fa_init)
		posix_spawn_file_actions_destroy(&fa);
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	strbuf_release(&buf);
	return ret;
}
