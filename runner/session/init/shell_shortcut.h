/* shell_shortcut.h: a `bash -c CMD` (or `bash -l -c CMD`) whose CMD is one
 * simple command — plain words, no quoting, expansion, redirection or
 * builtin — started without bash, as GNU make starts such recipe lines.
 * Bash itself would exec that command in place of itself (same pid), so what
 * the program sees is the same: its argv, its environment with the variables
 * bash adds (PWD, SHLVL, _), its cwd. Only when nothing bash reads at start
 * (startup files, BASH_ENV, exported functions, ...) could change that; else
 * the caller runs bash. It saves bash's start, ~10 ms under gVisor ptrace
 * (E2B's commands.run sends every command as `/bin/bash -l -c CMD`). One
 * difference stays: the environment's order (bash's is its hash table's). */
#ifndef JUDGE_SHELL_SHORTCUT_H
#define JUDGE_SHELL_SHORTCUT_H

#include <stddef.h>

struct shell_shortcut {
	char *words;	 /* CMD copied, split in place */
	char **argv;	 /* into words, NULL-terminated */
	char **env;	 /* the caller's strings and extra, NULL-terminated */
	char *extra;	 /* PWD=, SHLVL=, _= */
	char path[4096]; /* the program, as bash would find it */
};

/* 1 when argv can start as out->path with out->argv and out->env (cwd: where
 * it starts, absolute), 0 when it needs bash, -1 when out of memory. out is
 * set only on 1; shell_shortcut_release frees it. */
int shell_shortcut(char *const *argv, char *const *env, const char *cwd,
		   struct shell_shortcut *out);
void shell_shortcut_release(struct shell_shortcut *s);

#endif
