/* home: the binary's own checkout, or make install's folders (home.h). */
#include "judge/cli/home.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "common/xalloc.h"

/* Where `make install` put the config, the languages and problems, and the
 * state (make passes -DJUDGE_SYSCONFDIR=$(SYSCONFDIR) and the others). */
#ifndef JUDGE_SYSCONFDIR
#define JUDGE_SYSCONFDIR "/usr/local/etc"
#endif
#ifndef JUDGE_DATADIR
#define JUDGE_DATADIR "/usr/local/share"
#endif
#ifndef JUDGE_STATEDIR
#define JUDGE_STATEDIR "/var/lib/judge"
#endif

const char *home_installed_config(void)
{
	return JUDGE_SYSCONFDIR "/judge/judge.ini";
}

/* The checkout this binary belongs to when it is not installed: the folder
 * above its own (bin/judge), when that folder has languages/. A malloc'd
 * absolute path, or NULL (an installed binary). */
static char *own_tree(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(exe, '/');
		if (!slash)
			return NULL;
		*slash = 0;
	}
	const char *root = exe[0] ? exe : "/";
	char langs[PATH_MAX + 16];
	struct stat st;
	snprintf(langs, sizeof langs, "%s/languages", root);
	if (stat(langs, &st) < 0 || !S_ISDIR(st.st_mode))
		return NULL;
	return xstrdup(root);
}

const char *home_default_config(void)
{
	if (access("judge.ini", F_OK) == 0)
		return "judge.ini";
	char *tree = own_tree();
	bool installed = !tree && access(home_installed_config(), F_OK) == 0;
	free(tree);
	return installed ? home_installed_config() : "judge.ini";
}

void home_place_defaults(struct judge_config *cfg)
{
	char *tree = own_tree();
	if (tree) {
		config_resolve(cfg, tree);
		free(tree);
		return;
	}
	char err[256];
	const struct {
		const char *key, *def, *installed;
	} where[] = {{"languages_dir", "languages", JUDGE_DATADIR "/judge/languages"},
		     {"problems_dir", "problems", JUDGE_DATADIR "/judge/problems"},
		     {"state_dir", "var", JUDGE_STATEDIR}};
	const char *const now[] = {cfg->languages_dir, cfg->problems_dir, cfg->state_dir};
	for (size_t i = 0; i < sizeof where / sizeof where[0]; i++)
		if (!strcmp(now[i], where[i].def))
			config_set(cfg, where[i].key, where[i].installed, err, sizeof err);
	char *cwd = getcwd(NULL, 0);
	config_resolve(cfg, cwd ? cwd : "/");
	free(cwd);
}
