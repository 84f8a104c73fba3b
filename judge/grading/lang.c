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
#include <stdint.h>
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
#include "runner/install/install.h"

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
	K_ALIASES,
	K_DEFAULT,
	K_EXT,
	K_PKG_MGR,
	K_PKG_CMD,
	K_PKG_DIR,
	K_FN_HARNESS,
	K_FN_TEMPLATE,
	K_FN_FILE,
	K_TC_TEMPLATE,
	K_TC_FILE,
	K_H_COMPILES,
	K_H_SYNTAX,
	K_J0_IDS,
	K_J0_NAME,
	K_P_LANG,
	K_P_RUNTIME,
	K_P_ALIASES,
	K_P_COMPILED,
	K_PROBLEM,
	K_E2B_NAMES,
	K_E2B_DEFAULT,
	K_CSERVER,
	K_ZYGOTE,
};

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
	xstrvfree(v);
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
			xstrvfree(v);
			return -1;
		}
	xstrvfree(*field);
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
			xstrvfree(v);
			return -1;
		}
	xstrvfree(*field);
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

static bool name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return false;
	return true;
}

static int set_bool(bool *field, const char *key, const char *value, char *err, size_t errlen)
{
	if (!strcmp(value, "yes") || !strcmp(value, "true")) {
		*field = true;
	} else if (!strcmp(value, "no") || !strcmp(value, "false")) {
		*field = false;
	} else {
		snprintf(err, errlen, "'%s' needs yes or no, got '%s'", key, value);
		return -1;
	}
	return 0;
}

/* A relative path inside the box: no leading '/', no '..' part. */
static bool relative_ok(const char *s)
{
	if (!*s || *s == '/')
		return false;
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, "/");
		if ((n == 2 && !strncmp(p, "..", 2)) || (n == 1 && *p == '.') || !n)
			return false;
		p += n;
		if (*p)
			p++;
	}
	return true;
}

static const char *const harness_names[] = {
    [LANG_HARNESS_NONE] = "none",
    [LANG_HARNESS_SCRIPT] = "script",
    [LANG_HARNESS_STL] = "stl",
    [LANG_HARNESS_CLR] = "clr",
};

static int set_harness(struct lang *l, const char *value, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof harness_names / sizeof harness_names[0]; i++)
		if (!strcmp(value, harness_names[i])) {
			l->function_harness = (enum lang_harness)i;
			return 0;
		}
	snprintf(err, errlen, "'function_harness' must be script, stl, clr or none, got '%s'",
		 value);
	return -1;
}

/* judge0_ids: whole numbers from 1, each once. */
static int set_ids(struct lang *l, const char *value, char *err, size_t errlen)
{
	char **words = split_sep(value, ' ');
	size_t n = 0;
	while (words[n])
		n++;
	free(l->judge0_ids);
	l->judge0_ids = xcalloc(n ? n : 1, sizeof *l->judge0_ids);
	l->njudge0_ids = 0;
	int ret = 0;
	for (size_t i = 0; i < n && ret == 0; i++) {
		long v = 0;
		if (set_long(&v, "judge0_ids", words[i], 1000000, err, errlen) < 0) {
			ret = -1;
		} else if (v < 1) {
			snprintf(err, errlen, "'judge0_ids' are numbers from 1, got '%s'",
				 words[i]);
			ret = -1;
		}
		for (int j = 0; ret == 0 && j < l->njudge0_ids; j++)
			if (l->judge0_ids[j] == v) {
				snprintf(err, errlen, "'judge0_ids' has %ld twice", v);
				ret = -1;
			}
		if (ret == 0)
			l->judge0_ids[l->njudge0_ids++] = (int)v;
	}
	xstrvfree(words);
	return ret;
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
    [K_ALIASES] = "aliases",
    [K_DEFAULT] = "default",
    [K_EXT] = "extensions",
    [K_PKG_MGR] = "package_manager",
    [K_PKG_CMD] = "package_command",
    [K_PKG_DIR] = "package_dir",
    [K_FN_HARNESS] = "function_harness",
    [K_FN_TEMPLATE] = "function_template",
    [K_FN_FILE] = "function_file",
    [K_TC_TEMPLATE] = "testcode_template",
    [K_TC_FILE] = "testcode_file",
    [K_H_COMPILES] = "harness_compiles",
    [K_H_SYNTAX] = "harness_syntax_errors",
    [K_J0_IDS] = "judge0_ids",
    [K_J0_NAME] = "judge0_name",
    [K_P_LANG] = "piston_language",
    [K_P_RUNTIME] = "piston_runtime",
    [K_P_ALIASES] = "piston_aliases",
    [K_P_COMPILED] = "piston_compiled",
    [K_PROBLEM] = "problem_language",
    [K_E2B_NAMES] = "e2b_names",
    [K_E2B_DEFAULT] = "e2b_default",
    [K_CSERVER] = "compile_server",
    [K_ZYGOTE] = "zygote",
    NULL,
};
#define KEY_COUNT (sizeof key_names / sizeof key_names[0] - 1)

const char *const *lang_keys(void)
{
	return key_names;
}

/* The command lines are kept raw until the whole file is read, because
 * {source} may be set after them; raw[] holds them meanwhile. */
struct raw_cmds {
	char *compile, *run, *version, *session, *package, *zygote;
};

struct parse_ctx {
	struct lang *l;
	struct raw_cmds raw;
	uint64_t seen;
	int piston_compiled; /* -1: not given */
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
	if (ctx->seen & ((uint64_t)1 << k)) {
		snprintf(err, errlen, "key '%s' given twice", key);
		return -1;
	}
	ctx->seen |= (uint64_t)1 << k;
	switch (k) {
	case K_NAME:
		if (!name_ok(value)) {
			snprintf(err, errlen, "'name' may hold only letters, digits, - and _");
			return -1;
		}
		return set_str(&l->name, value);
	case K_ALIASES:
		xstrvfree(l->aliases);
		l->aliases = split_sep(value, ' ');
		for (char **a = l->aliases; *a; a++)
			if (!name_ok(*a)) {
				snprintf(
				    err, errlen,
				    "'aliases' may hold only letters, digits, - and _, got '%s'",
				    *a);
				return -1;
			}
		return 0;
	case K_DEFAULT:
		return set_bool(&l->is_default, key, value, err, errlen);
	case K_EXT:
		xstrvfree(l->extensions);
		l->extensions = split_sep(value, ' ');
		for (char **e = l->extensions; *e; e++)
			if (**e != '.' || !(*e)[1] || strchr(*e, '/')) {
				snprintf(err, errlen, "'extensions' are endings like .py, got '%s'",
					 *e);
				return -1;
			}
		return 0;
	case K_PKG_MGR:
		if (!install_manager_known(value)) {
			snprintf(err, errlen, "'package_manager' must be pip or npm, got '%s'",
				 value);
			return -1;
		}
		return set_str(&l->package_manager, value);
	case K_PKG_CMD:
		return set_str(&ctx->raw.package, value);
	case K_PKG_DIR:
		if (!relative_ok(value)) {
			snprintf(err, errlen,
				 "'package_dir' must be a relative path without '..', got '%s'",
				 value);
			return -1;
		}
		return set_str(&l->package_dir, value);
	case K_FN_HARNESS:
		return set_harness(l, value, err, errlen);
	case K_FN_TEMPLATE:
	case K_FN_FILE:
	case K_TC_TEMPLATE:
	case K_TC_FILE: {
		if (!*value || strchr(value, '/') || *value == '.') {
			snprintf(err, errlen, "'%s' must be a plain file name, got '%s'", key,
				 value);
			return -1;
		}
		char **f = k == K_FN_TEMPLATE	? &l->function_template
			   : k == K_FN_FILE	? &l->function_file
			   : k == K_TC_TEMPLATE ? &l->testcode_template
						: &l->testcode_file;
		return set_str(f, value);
	}
	case K_H_COMPILES:
		return set_bool(&l->harness_compiles, key, value, err, errlen);
	case K_H_SYNTAX:
		xstrvfree(l->harness_syntax_errors);
		l->harness_syntax_errors = split_sep(value, ' ');
		return 0;
	case K_J0_IDS:
		return set_ids(l, value, err, errlen);
	case K_J0_NAME:
		return set_str(&l->judge0_name, value);
	case K_P_LANG:
		return set_str(&l->piston_language, value);
	case K_P_RUNTIME:
		return set_str(&l->piston_runtime, value);
	case K_P_ALIASES:
		xstrvfree(l->piston_aliases);
		xstrvfree(l->e2b_names);
		l->piston_aliases = split_sep(value, ' ');
		return 0;
	case K_P_COMPILED: {
		bool b;
		if (set_bool(&b, key, value, err, errlen) < 0)
			return -1;
		ctx->piston_compiled = b;
		return 0;
	}
	case K_PROBLEM:
		return set_str(&l->problem_language, value);
	case K_E2B_NAMES:
		xstrvfree(l->e2b_names);
		l->e2b_names = split_sep(value, ' ');
		return 0;
	case K_E2B_DEFAULT:
		return set_bool(&l->e2b_default, key, value, err, errlen);
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
	case K_ZYGOTE:
		return set_str(&ctx->raw.zygote, value);
	case K_SENV:
		return set_env(&l->session_env, key, value, err, errlen);
	case K_RO:
		return set_paths(&l->ro_paths, key, value, err, errlen);
	case K_PRELOAD:
		return set_paths(&l->preload, key, value, err, errlen);
	case K_CSERVER:
		if (split_words(value, NULL, &l->compile_server_argv, err, errlen) < 0)
			return -1;
		if (!l->compile_server_argv[0]) {
			xstrvfree(l->compile_server_argv);
			l->compile_server_argv = NULL;
		} else if (l->compile_server_argv[0][0] != '/') {
			snprintf(err, errlen,
				 "'compile_server' must start with an absolute path, got '%s'",
				 l->compile_server_argv[0]);
			return -1;
		}
		return 0;
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
			xstrvfree(l->warm_argv);
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
	xstrvfree(l->compile_argv);
	xstrvfree(l->run_argv);
	xstrvfree(l->version_argv);
	xstrvfree(l->ro_paths);
	xstrvfree(l->env);
	xstrvfree(l->compile_env);
	free(l->install);
	xstrvfree(l->warm_argv);
	xstrvfree(l->compile_server_argv);
	xstrvfree(l->zygote_argv);
	xstrvfree(l->preload);
	xstrvfree(l->session_argv);
	xstrvfree(l->session_env);
	xstrvfree(l->session_ro_paths);
	free(l->compile_in_run);
	pcre2_code_free(l->compile_in_run_re);
	xstrvfree(l->aliases);
	xstrvfree(l->extensions);
	free(l->package_manager);
	xstrvfree(l->package_argv);
	free(l->package_dir);
	free(l->function_template);
	free(l->function_file);
	free(l->testcode_template);
	free(l->testcode_file);
	xstrvfree(l->harness_syntax_errors);
	free(l->judge0_ids);
	free(l->judge0_name);
	free(l->piston_language);
	free(l->piston_runtime);
	xstrvfree(l->piston_aliases);
	xstrvfree(l->e2b_names);
	free(l->problem_language);
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
		xstrvfree(l->session_argv);
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
		l->session_env = xstrvdup((const char *const *)l->env);
	size_t n = 0;
	l->session_ro_paths = xstrvdup((const char *const *)l->ro_paths);
	while (l->session_ro_paths[n])
		n++;
	list_push(&l->session_ro_paths, &n, xstrdup(drivers));
	return 0;
}

/* The zygote's argv; its script is in the drivers folder, which the runs of the
 * language then bind read-only too (after ro_paths, so sessions' lists match). */
static int load_zygote(struct lang *l, const char *raw, const char *path, const char *drivers,
		       char *err, size_t errlen)
{
	char msg[256];
	if (split_words(raw, NULL, &l->zygote_argv, msg, sizeof msg) < 0) {
		snprintf(err, errlen, "%s: %s", path, msg);
		return -1;
	}
	if (!l->zygote_argv[0]) {
		xstrvfree(l->zygote_argv);
		l->zygote_argv = NULL;
		return 0;
	}
	subst_drivers(l->zygote_argv, drivers);
	if (l->zygote_argv[0][0] != '/') {
		snprintf(err, errlen, "%s: '%s' must start with an absolute path", path,
			 l->zygote_argv[0]);
		return -1;
	}
	size_t n = 0;
	while (l->ro_paths[n])
		n++;
	list_push(&l->ro_paths, &n, xstrdup(drivers));
	return 0;
}

/* The keys that have defaults or go together, once the whole file is read. */
static int finish_lang(struct lang *l, const struct parse_ctx *ctx, const char *path, char *err,
		       size_t errlen)
{
	char msg[256];
	if (!l->aliases)
		l->aliases = xcalloc(1, sizeof(char *));
	if (!l->extensions) {
		const char *dot = strrchr(l->source_file, '.');
		l->extensions =
		    dot && dot != l->source_file ? split_sep(dot, ' ') : xcalloc(1, sizeof(char *));
	}
	bool pm = l->package_manager != NULL, pc = ctx->raw.package != NULL,
	     pd = l->package_dir != NULL;
	if ((pm || pc || pd) && !(pm && pc && pd)) {
		snprintf(err, errlen,
			 "%s: 'package_manager', 'package_command' and 'package_dir' go together",
			 path);
		return -1;
	}
	if (pc) {
		if (split_words(ctx->raw.package, NULL, &l->package_argv, msg, sizeof msg) < 0) {
			snprintf(err, errlen, "%s: %s", path, msg);
			return -1;
		}
		if (!l->package_argv[0] || l->package_argv[0][0] != '/') {
			snprintf(err, errlen,
				 "%s: 'package_command' must start with an absolute path", path);
			return -1;
		}
	}
	if ((l->function_harness != LANG_HARNESS_NONE) !=
		(l->function_template && l->function_file) ||
	    (!l->function_template != !l->function_file)) {
		snprintf(err, errlen,
			 "%s: 'function_harness', 'function_template' and 'function_file' go "
			 "together",
			 path);
		return -1;
	}
	if (!l->testcode_template != !l->testcode_file) {
		snprintf(err, errlen, "%s: 'testcode_template' and 'testcode_file' go together",
			 path);
		return -1;
	}
	if (!l->harness_syntax_errors)
		l->harness_syntax_errors = xcalloc(1, sizeof(char *));
	if (l->judge0_name && !l->judge0_ids) {
		snprintf(err, errlen, "%s: 'judge0_name' needs 'judge0_ids'", path);
		return -1;
	}
	if (l->judge0_ids && !l->judge0_name)
		l->judge0_name = xstrdup(l->display_name);
	if (!l->piston_language)
		l->piston_language = xstrdup(l->name);
	if (!l->piston_aliases)
		l->piston_aliases = xcalloc(1, sizeof(char *));
	if (!l->e2b_names)
		l->e2b_names = xcalloc(1, sizeof(char *));
	l->piston_compiled =
	    ctx->piston_compiled >= 0 ? ctx->piston_compiled == 1 : l->compile_argv != NULL;
	return 0;
}

/* Parses one file into l; on failure l is released and err says why. */
static int load_one(struct lang *l, const char *path, const char *base, const char *drivers,
		    char *err, size_t errlen)
{
	int ret = -1;
	struct parse_ctx ctx = {.l = l, .piston_compiled = -1};
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
		l->compile_env = xstrvdup((const char *const *)l->env);
	if (ctx.raw.session && load_session(l, ctx.raw.session, path, drivers, err, errlen) < 0)
		goto out;
	if (ctx.raw.zygote && load_zygote(l, ctx.raw.zygote, path, drivers, err, errlen) < 0)
		goto out;
	if (!l->session_argv && l->session_env) {
		xstrvfree(l->session_env);
		l->session_env = NULL;
	}
	if (finish_lang(l, &ctx, path, err, errlen) < 0)
		goto out;
	ret = 0;
	goto out;
bad:
	snprintf(err, errlen, "%s: %s", path, msg);
out:
	free(ctx.raw.compile);
	free(ctx.raw.run);
	free(ctx.raw.version);
	free(ctx.raw.session);
	free(ctx.raw.zygote);
	free(ctx.raw.package);
	if (ret < 0)
		lang_release(l);
	return ret;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

const struct lang *lang_find(const struct lang_registry *reg, const char *name)
{
	for (int i = 0; name && i < reg->count; i++)
		if (!strcmp(reg->langs[i].name, name))
			return &reg->langs[i];
	return NULL;
}

static bool in_list(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (!strcmp(*v, s))
			return true;
	return false;
}

const struct lang *lang_by_e2b(const struct lang_registry *reg, const char *name)
{
	for (int i = 0; name && i < reg->count; i++)
		if (reg->langs[i].session_argv &&
		    (name[0] ? in_list(reg->langs[i].e2b_names, name) : reg->langs[i].e2b_default))
			return &reg->langs[i];
	return NULL;
}

const struct lang *lang_lookup(const struct lang_registry *reg, const char *name)
{
	const struct lang *l = lang_find(reg, name);
	for (int i = 0; !l && name && i < reg->count; i++)
		if (in_list(reg->langs[i].aliases, name))
			l = &reg->langs[i];
	return l;
}

const struct lang *lang_default(const struct lang_registry *reg)
{
	for (int i = 0; i < reg->count; i++)
		if (reg->langs[i].is_default)
			return &reg->langs[i];
	return reg->count ? &reg->langs[0] : NULL;
}

const struct lang *lang_by_judge0(const struct lang_registry *reg, long id)
{
	for (int i = 0; i < reg->njudge0; i++)
		if (reg->judge0[i].id == id)
			return reg->judge0[i].lang;
	return NULL;
}

const struct lang *lang_by_problem_language(const struct lang_registry *reg, const char *code)
{
	for (int i = 0; code && i < reg->count; i++)
		if (reg->langs[i].problem_language && !strcmp(reg->langs[i].problem_language, code))
			return &reg->langs[i];
	return NULL;
}

const struct lang *lang_by_package_manager(const struct lang_registry *reg, const char *manager)
{
	for (int i = 0; manager && i < reg->count; i++)
		if (reg->langs[i].package_manager &&
		    !strcmp(reg->langs[i].package_manager, manager))
			return &reg->langs[i];
	return NULL;
}

void lang_names(const struct lang_registry *reg, bool (*keep)(const struct lang *),
		const char *conj, struct strbuf *out)
{
	int n = 0, total = 0;
	for (int i = 0; i < reg->count; i++)
		total += !keep || keep(&reg->langs[i]);
	for (int i = 0; i < reg->count; i++) {
		if (keep && !keep(&reg->langs[i]))
			continue;
		n++;
		if (n > 1 && n == total)
			strbuf_addf(out, " %s ", conj);
		else if (n > 1)
			strbuf_addstr(out, ", ");
		strbuf_addstr(out, reg->langs[i].name);
	}
	if (!total)
		strbuf_addstr(out, "none");
}

const struct lang_problem *lang_problem_find(const struct lang_registry *reg, const char *code)
{
	for (int i = 0; code && i < reg->nproblem_langs; i++)
		if (!strcmp(reg->problem_langs[i].code, code))
			return &reg->problem_langs[i];
	return NULL;
}

bool lang_problem_shebang(const struct lang_problem *pl, const char *line)
{
	if (!pl->shebang_re)
		return true;
	pcre2_match_data *md = pcre2_match_data_create(1, NULL);
	if (!md)
		xalloc_die(0);
	int rc =
	    pcre2_match(pl->shebang_re, (PCRE2_SPTR)line, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL);
	pcre2_match_data_free(md);
	return rc >= 0;
}

static void problem_lang_release(struct lang_problem *pl)
{
	free(pl->code);
	free(pl->name);
	xstrvfree(pl->files);
	xstrvfree(pl->shebang_files);
	pcre2_code_free(pl->shebang_re);
	xstrvfree(pl->entry_files);
	memset(pl, 0, sizeof *pl);
}

void lang_registry_release(struct lang_registry *reg)
{
	for (int i = 0; i < reg->count; i++)
		lang_release(&reg->langs[i]);
	free(reg->langs);
	for (int i = 0; i < reg->nproblem_langs; i++)
		problem_lang_release(&reg->problem_langs[i]);
	free(reg->problem_langs);
	free(reg->judge0);
	memset(reg, 0, sizeof *reg);
}

/* ---- the package format's languages (problem/languages.ini) ---- */

struct table_ctx {
	struct lang_registry *reg;
	uint8_t seen[16]; /* keys of the current section */
};

static int on_problem_key(void *vctx, const char *section, const char *key, const char *value,
			  char *err, size_t errlen)
{
	struct table_ctx *ctx = vctx;
	struct lang_registry *reg = ctx->reg;
	static const char *const keys[] = {"name",	    "priority", "files",
					   "shebang_files", "shebang",	"entry_files"};
	if (!*section) {
		snprintf(err, errlen, "'%s' outside a [language] section", key);
		return -1;
	}
	struct lang_problem *pl =
	    reg->nproblem_langs ? &reg->problem_langs[reg->nproblem_langs - 1] : NULL;
	if (!pl || strcmp(pl->code, section)) {
		if (lang_problem_find(reg, section)) {
			snprintf(err, errlen, "section [%s] given twice", section);
			return -1;
		}
		reg->problem_langs =
		    xreallocarray(reg->problem_langs, (size_t)reg->nproblem_langs + 1, sizeof *pl);
		pl = &reg->problem_langs[reg->nproblem_langs++];
		memset(pl, 0, sizeof *pl);
		pl->code = xstrdup(section);
		memset(ctx->seen, 0, sizeof ctx->seen);
	}
	size_t k;
	for (k = 0; k < sizeof keys / sizeof keys[0]; k++)
		if (!strcmp(key, keys[k]))
			break;
	if (k == sizeof keys / sizeof keys[0]) {
		snprintf(err, errlen, "unknown key '%s'", key);
		return -1;
	}
	if (ctx->seen[k]++) {
		snprintf(err, errlen, "key '%s' given twice in [%s]", key, section);
		return -1;
	}
	switch (k) {
	case 0:
		return set_str(&pl->name, value);
	case 1:
		return set_long(&pl->priority, key, value, 1000000, err, errlen);
	case 2:
		pl->files = split_sep(value, ' ');
		return 0;
	case 3:
		pl->shebang_files = split_sep(value, ' ');
		return 0;
	case 4: {
		int code;
		PCRE2_SIZE off;
		pl->shebang_re =
		    pcre2_compile((PCRE2_SPTR)value, PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
		if (!pl->shebang_re) {
			PCRE2_UCHAR m[160];
			pcre2_get_error_message(code, m, sizeof m);
			snprintf(err, errlen, "'shebang': bad pattern at offset %zu: %s",
				 (size_t)off, (const char *)m);
			return -1;
		}
		return 0;
	}
	default:
		pl->entry_files = split_sep(value, ' ');
		return 0;
	}
}

/* Reads dir/problem/languages.ini into reg when it exists. */
static int load_problem_table(struct lang_registry *reg, const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/problem/languages.ini", dir);
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0;
	struct table_ctx ctx = {.reg = reg};
	if (ini_parse_file(path, on_problem_key, &ctx, err, errlen) < 0)
		return -1;
	for (int i = 0; i < reg->nproblem_langs; i++) {
		struct lang_problem *pl = &reg->problem_langs[i];
		if (!pl->files || !pl->files[0]) {
			snprintf(err, errlen, "%s: [%s] has no 'files'", path, pl->code);
			return -1;
		}
		if (!pl->shebang_files != !pl->shebang_re) {
			snprintf(err, errlen, "%s: [%s]: 'shebang' and 'shebang_files' go together",
				 path, pl->code);
			return -1;
		}
		if (!pl->shebang_files)
			pl->shebang_files = xcalloc(1, sizeof(char *));
		if (!pl->entry_files)
			pl->entry_files = xcalloc(1, sizeof(char *));
		if (!pl->name)
			pl->name = xstrdup(pl->code);
	}
	return 0;
}

static int cmp_judge0(const void *a, const void *b)
{
	const struct lang_judge0 *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/* What no single file can check: names, ids and roles two languages would
 * share, and problem_language against the format's table. */
static int check_registry(struct lang_registry *reg, const char *dir, char *err, size_t errlen)
{
	const struct lang *dflt = NULL;
	for (int i = 0; i < reg->count; i++) {
		const struct lang *l = &reg->langs[i];
		for (char **a = l->aliases; *a; a++) {
			const struct lang *o = lang_lookup(reg, *a);
			if (o != l || lang_find(reg, *a)) {
				snprintf(err, errlen, "%s: alias '%s' is also %s's name or alias",
					 dir, *a, (o && o != l ? o : lang_find(reg, *a))->name);
				return -1;
			}
		}
		if (l->is_default && dflt) {
			snprintf(err, errlen, "%s: both %s and %s say 'default = yes'", dir,
				 dflt->name, l->name);
			return -1;
		}
		if (l->is_default)
			dflt = l;
		if (l->package_manager && lang_by_package_manager(reg, l->package_manager) != l) {
			snprintf(err, errlen, "%s: %s and %s both have package_manager %s", dir,
				 lang_by_package_manager(reg, l->package_manager)->name, l->name,
				 l->package_manager);
			return -1;
		}
		/* a folder without the table (a trimmed copy) runs no package programs */
		if (l->problem_language && reg->nproblem_langs &&
		    !lang_problem_find(reg, l->problem_language)) {
			snprintf(err, errlen,
				 "%s: %s's problem_language '%s' is not a section of "
				 "problem/languages.ini",
				 dir, l->name, l->problem_language);
			return -1;
		}
		if (l->problem_language &&
		    lang_by_problem_language(reg, l->problem_language) != l) {
			snprintf(err, errlen, "%s: %s and %s both have problem_language %s", dir,
				 lang_by_problem_language(reg, l->problem_language)->name, l->name,
				 l->problem_language);
			return -1;
		}
		for (int j = 0; j < l->njudge0_ids; j++) {
			const struct lang *o = lang_by_judge0(reg, l->judge0_ids[j]);
			if (o) {
				snprintf(err, errlen, "%s: %s and %s both have judge0 id %d", dir,
					 o->name, l->name, l->judge0_ids[j]);
				return -1;
			}
			reg->judge0 = xreallocarray(reg->judge0, (size_t)reg->njudge0 + 1,
						    sizeof *reg->judge0);
			reg->judge0[reg->njudge0++] =
			    (struct lang_judge0){.id = l->judge0_ids[j], .lang = l};
		}
	}
	if (reg->njudge0)
		qsort(reg->judge0, (size_t)reg->njudge0, sizeof *reg->judge0, cmp_judge0);
	return 0;
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
	if (load_problem_table(reg, dir, err, errlen) < 0 ||
	    check_registry(reg, dir, err, errlen) < 0)
		goto out;
	ret = 0;
out:
	closedir(d);
	xstrvfree(names);
	if (ret < 0)
		lang_registry_release(reg);
	return ret;
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
