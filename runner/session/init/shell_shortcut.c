/* shell_shortcut.c: see shell_shortcut.h. Every rule below errs towards bash:
 * whatever this file is not sure of, bash runs. */
#include "runner/session/init/shell_shortcut.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* bash 5's builtins and reserved words: bash runs these itself, not a
 * program of PATH; true and false are left out (the programs do the same),
 * echo too when no argument looks like an option (coreutils' echo reads
 * --help where bash's prints it) */
static const char *const shell_own[] = {
    ".",	 ":",	     "[",	"alias",   "bg",       "bind",	  "break",    "builtin",
    "caller",	 "cd",	     "command", "compgen", "complete", "compopt", "continue", "declare",
    "dirs",	 "disown",   "enable",	"eval",	   "exec",     "exit",	  "export",   "fc",
    "fg",	 "getopts",  "hash",	"help",	   "history",  "jobs",	  "kill",     "let",
    "local",	 "logout",   "mapfile", "popd",	   "printf",   "pushd",	  "pwd",      "read",
    "readarray", "readonly", "return",	"set",	   "shift",    "shopt",	  "source",   "suspend",
    "test",	 "times",    "trap",	"type",	   "typeset",  "ulimit",  "umask",    "unalias",
    "unset",	 "wait",     "if",	"then",	   "else",     "elif",	  "fi",	      "case",
    "esac",	 "for",	     "select",	"while",   "until",    "do",	  "done",     "in",
    "function",	 "time",     "coproc",	NULL};

/* variables that change how bash starts or what a name means */
static const char *const shell_reads[] = {
    "BASH_ENV", "ENV",	  "SHELLOPTS",	"BASHOPTS", "POSIXLY_CORRECT",
    "IFS",	"OLDPWD", "GLOBIGNORE", NULL};

static const char *env_get(char *const *env, const char *name)
{
	size_t n = strlen(name);
	for (char *const *e = env; *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* A character bash gives no meaning to inside a word (no quoting, expansion,
 * globbing, redirection, separator or comment). */
static bool plain(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("_./:@%+,=-", c) != NULL;
}

static bool is_shell_own(const char *w)
{
	for (const char *const *b = shell_own; *b; b++)
		if (!strcmp(w, *b))
			return true;
	return false;
}

static bool executable_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

static bool exists(const char *dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;
	return snprintf(p, sizeof p, "%s/%s", dir, name) >= (int)sizeof p || lstat(p, &st) == 0 ||
	       errno != ENOENT;
}

/* Nothing bash reads before the command changes it: no startup file (a login
 * shell's), no variable of shell_reads, no exported function. */
static bool shell_start_inert(char *const *env, bool login)
{
	for (const char *const *v = shell_reads; *v; v++)
		if (env_get(env, *v))
			return false;
	for (char *const *e = env; *e; e++)
		if (!strncmp(*e, "BASH_FUNC_", 10))
			return false;
	if (!login)
		return true;
	const char *home = env_get(env, "HOME");
	if (!home || home[0] != '/')
		return false;
	return !exists("/etc", "profile") && !exists(home, ".bash_profile") &&
	       !exists(home, ".bash_login") && !exists(home, ".profile");
}

/* The program bash would run for word: word itself when it has a '/' (from
 * cwd), else the first executable file of that name in PATH. Only absolute
 * PATH entries (an empty or relative one means the cwd to bash). */
static bool find_program(const char *word, char *const *env, const char *cwd, char *out,
			 size_t outlen)
{
	if (strchr(word, '/')) {
		char p[PATH_MAX];
		if (snprintf(p, sizeof p, "%s/%s", cwd, word) >= (int)sizeof p)
			return false;
		if (!executable_file(word[0] == '/' ? word : p))
			return false;
		return snprintf(out, outlen, "%s", word) < (int)outlen;
	}
	const char *path = env_get(env, "PATH");
	if (!path || !*path)
		return false;
	for (const char *p = path;;) {
		size_t n = strcspn(p, ":");
		if (n == 0 || p[0] != '/')
			return false;
		if (snprintf(out, outlen, "%.*s/%s", (int)n, p, word) < (int)outlen &&
		    executable_file(out))
			return true;
		if (!p[n])
			return false;
		p += n + 1;
	}
}

/* Splits cmd into plain words in place; the count, or -1 when it is not one
 * simple command of plain words. */
static int split_words(char *cmd, char **words, int max)
{
	int n = 0;
	for (char *p = cmd; *p;) {
		if (*p == ' ' || *p == '\t') {
			*p++ = 0;
			continue;
		}
		if (n == max)
			return -1;
		words[n++] = p;
		while (*p && *p != ' ' && *p != '\t')
			if (!plain(*p++))
				return -1;
	}
	return n;
}

/* SHLVL as the program sees it after bash -c execs it: bash adds one at
 * start and takes it back at the exec; unset or not a number counts as 0.
 * -1 when bash would warn (1000 and more). */
static long shell_level(char *const *env)
{
	const char *v = env_get(env, "SHLVL");
	if (!v || !*v)
		return 0;
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (*end || errno)
		return 0;
	if (n < 0)
		return 0;
	return n >= 999 ? -1 : n;
}

static int parse_args(char *const *argv, bool *login, const char **cmd)
{
	const char *b = strrchr(argv[0], '/');
	b = b ? b + 1 : argv[0];
	if (strcmp(b, "bash")) /* lang-ok: the shell program E2B's SDK names */
		return -1;
	int i = 1;
	*login = argv[i] && !strcmp(argv[i], "-l");
	if (*login)
		i++;
	if (!argv[i] || strcmp(argv[i], "-c") || !argv[i + 1] || argv[i + 2])
		return -1;
	*cmd = argv[i + 1];
	return 0;
}

int shell_shortcut(char *const *argv, char *const *env, const char *cwd, struct shell_shortcut *out)
{
	enum { MAX_WORDS = 256 };
	bool login;
	const char *cmd;
	if (!argv || !argv[0] || parse_args(argv, &login, &cmd) < 0 || !cwd || cwd[0] != '/')
		return 0;
	if (!shell_start_inert(env, login))
		return 0;
	long level = shell_level(env);
	const char *pwd = env_get(env, "PWD");
	char real[PATH_MAX];
	if (level < 0 || !realpath(cwd, real) || (pwd && strcmp(pwd, real)))
		return 0;
	memset(out, 0, sizeof *out);
	char *w[MAX_WORDS];
	out->words = strdup(cmd);
	if (!out->words)
		return -1;
	int n = split_words(out->words, w, MAX_WORDS);
	bool ok = n > 0 && !strchr(w[0], '=') && w[0][0] != '%' && w[0][0] != '-' &&
		  (!is_shell_own(w[0])) &&
		  find_program(w[0], env, cwd, out->path, sizeof out->path);
	for (int i = 1; ok && i < n && !strcmp(w[0], "echo"); i++)
		ok = w[i][0] != '-';
	if (!ok) {
		shell_shortcut_release(out);
		return 0;
	}
	size_t ne = 0;
	while (env[ne])
		ne++;
	out->argv = calloc((size_t)n + 1, sizeof *out->argv);
	out->env = calloc(ne + 4, sizeof *out->env);
	size_t extra = strlen(real) + strlen(out->path) + 64;
	out->extra = malloc(extra);
	if (!out->argv || !out->env || !out->extra) {
		shell_shortcut_release(out);
		return -1;
	}
	memcpy(out->argv, w, (size_t)n * sizeof *w);
	size_t k = 0;
	for (size_t i = 0; i < ne; i++)
		if (strncmp(env[i], "SHLVL=", 6) && strncmp(env[i], "_=", 2))
			out->env[k++] = env[i];
	/* PWD=, SHLVL= and _= one after another in extra */
	char *x = out->extra;
	if (!pwd) {
		out->env[k++] = x;
		x += sprintf(x, "PWD=%s", real) + 1;
	}
	out->env[k++] = x;
	x += sprintf(x, "SHLVL=%ld", level) + 1;
	out->env[k++] = x;
	sprintf(x, "_=%s", out->path);
	return 1;
}

void shell_shortcut_release(struct shell_shortcut *s)
{
	free(s->words);
	free(s->argv);
	free(s->env);
	free(s->extra);
	memset(s, 0, sizeof *s);
}
