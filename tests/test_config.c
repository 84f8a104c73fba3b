/* test_config: the key table, judge.ini (documents exactly the table's keys with
 * their defaults) and the errors of bad configuration. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/ini.h"

#define MAX_SEEN 256

struct seen {
	char section[64];
	char key[64];
	char value[256];
	int count;
};

struct ini_seen {
	struct seen keys[MAX_SEEN];
	size_t n;
};

static int collect(void *ctx, const char *section, const char *key, const char *value, char *err,
		   size_t errlen)
{
	struct ini_seen *s = ctx;
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->keys[i].key, key)) {
			s->keys[i].count++;
			return 0;
		}
	if (s->n == MAX_SEEN) {
		snprintf(err, errlen, "too many keys");
		return -1;
	}
	struct seen *k = &s->keys[s->n++];
	snprintf(k->section, sizeof k->section, "%s", section);
	snprintf(k->key, sizeof k->key, "%s", key);
	snprintf(k->value, sizeof k->value, "%s", value);
	k->count = 1;
	return 0;
}

static struct ini_seen ini;

static void load_ini(void)
{
	char err[512] = "";
	memset(&ini, 0, sizeof ini);
	cr_assert_eq(ini_parse_file("judge.ini", collect, &ini, err, sizeof err), 0, "%s", err);
}

Test(config, every_table_key_is_in_judge_ini_with_its_default, .init = load_ini)
{
	cr_assert_gt(config_key_count, 10);
	for (size_t i = 0; i < config_key_count; i++) {
		const struct config_key *k = &config_keys[i];
		const struct seen *s = NULL;
		for (size_t j = 0; j < ini.n; j++)
			if (!strcmp(ini.keys[j].key, k->name))
				s = &ini.keys[j];
		cr_assert_not_null(s, "judge.ini lacks key '%s'", k->name);
		cr_assert_str_eq(s->section, k->section,
				 "'%s' is in [%s] in judge.ini, table says [%s]", k->name,
				 s->section, k->section);
		cr_assert_str_eq(s->value, k->def, "judge.ini gives '%s' = '%s', default is '%s'",
				 k->name, s->value, k->def);
		cr_assert_eq(s->count, 1, "'%s' appears %d times in judge.ini", k->name, s->count);
		cr_assert(k->doc && *k->doc, "'%s' has no doc in the table", k->name);
	}
}

Test(config, judge_ini_has_no_key_the_table_lacks, .init = load_ini)
{
	for (size_t j = 0; j < ini.n; j++) {
		bool found = false;
		for (size_t i = 0; i < config_key_count; i++)
			if (!strcmp(config_keys[i].name, ini.keys[j].key))
				found = true;
		cr_assert(found, "judge.ini has '%s', which the table lacks", ini.keys[j].key);
	}
}

/* Each key in judge.ini sits right under a comment line: the documentation. */
Test(config, every_key_in_judge_ini_is_commented)
{
	FILE *f = fopen("judge.ini", "r");
	cr_assert_not_null(f);
	char line[1024], prev[1024] = "";
	int lineno = 0;
	while (fgets(line, sizeof line, f)) {
		lineno++;
		char *s = line + strspn(line, " \t");
		if (*s && *s != '#' && *s != ';' && *s != '[' && *s != '\n' && strchr(s, '='))
			cr_assert(prev[0] == '#', "judge.ini:%d: key without a comment above: %s",
				  lineno, s);
		snprintf(prev, sizeof prev, "%s", s);
	}
	fclose(f);
}

Test(config, defaults_match_the_table)
{
	struct judge_config cfg;
	config_defaults(&cfg);
	for (size_t i = 0; i < config_key_count; i++) {
		const struct config_key *k = &config_keys[i];
		const char *field = (const char *)&cfg + k->offset;
		if (k->type == CONF_STR || k->type == CONF_PATH || k->type == CONF_PROG) {
			/* path defaults too: relative ones are placed by config_resolve */
			cr_assert_str_eq(*(char *const *)field, k->def, "%s", k->name);
		} else if (k->type == CONF_INT) {
			long v = *(const long *)field;
			cr_assert_eq(v, strtol(k->def, NULL, 10), "%s", k->name);
			cr_assert(v >= k->min && v <= k->max, "default of %s out of its range",
				  k->name);
		}
	}
	config_release(&cfg);
}

Test(config, shipped_judge_ini_loads)
{
	struct judge_config cfg;
	char err[512] = "";
	config_defaults(&cfg);
	cr_assert_eq(config_load(&cfg, "judge.ini", true, err, sizeof err), 0, "%s", err);
	config_release(&cfg);
}

static char path[] = "/tmp/test_config.XXXXXX";

static void write_conf(const char *text)
{
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void expect_error(const char *text, const char *message)
{
	struct judge_config cfg;
	char err[512] = "";
	strcpy(path, "/tmp/test_config.XXXXXX");
	write_conf(text);
	config_defaults(&cfg);
	int rc = config_load(&cfg, path, true, err, sizeof err);
	unlink(path);
	config_release(&cfg);
	cr_assert_eq(rc, -1, "'%s' was accepted", text);
	cr_assert_not_null(strstr(err, message), "error '%s' lacks '%s'", err, message);
	cr_assert_not_null(strstr(err, ":"), "error '%s' names no place", err);
}

Test(config, bad_files_give_clear_errors)
{
	expect_error("[limits]\ntime_limit_ms = fast\n",
		     "'time_limit_ms' needs a whole number, got 'fast'");
	expect_error("[limits]\ntime_limit_ms = 12abc\n", "needs a whole number");
	expect_error("[limits]\ntime_limit_ms = 0\n", "'time_limit_ms' must be between 1 and");
	expect_error("[limits]\nmemory_limit_mb = 99999999\n", "must be between");
	expect_error("[limits]\nprocesses = 99999999999999999999999\n", "needs a whole number");
	expect_error("[limits]\nno_such_key = 1\n", "unknown key 'no_such_key'");
	expect_error("[server]\ntime_limit_ms = 100\n", "belongs in [limits]");
	expect_error("[limits\n", "bad section header");
	expect_error("just words\n", "expected 'key = value'");
	/* the error names the line */
	expect_error("# comment\n\n[limits]\nprocesses = -1\n", ":4:");
}

Test(config, good_overrides_apply)
{
	struct judge_config cfg;
	char err[512] = "";
	strcpy(path, "/tmp/test_config.XXXXXX");
	write_conf(
	    "[limits]\ntime_limit_ms = 1234\n[database]\ndatabase_url = host=/tmp dbname=x\n");
	config_defaults(&cfg);
	int rc = config_load(&cfg, path, true, err, sizeof err);
	unlink(path);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_eq(cfg.time_limit_ms, 1234);
	cr_assert_str_eq(cfg.database_url, "host=/tmp dbname=x");
	cr_assert_eq(config_set(&cfg, "memory_limit_mb", "512", err, sizeof err), 0, "%s", err);
	cr_assert_eq(cfg.memory_limit_mb, 512);
	cr_assert_eq(config_set(&cfg, "memory_limit_mb", "1", err, sizeof err), -1);
	cr_assert_not_null(strstr(err, "must be between"), "%s", err);
	cr_assert_eq(config_set(&cfg, "nope", "1", err, sizeof err), -1);
	cr_assert_not_null(strstr(err, "unknown key 'nope'"), "%s", err);
	config_release(&cfg);
}

Test(config, missing_file)
{
	struct judge_config cfg;
	char err[512] = "";
	config_defaults(&cfg);
	cr_assert_eq(config_load(&cfg, "/nonexistent/judge.ini", false, err, sizeof err), 0);
	cr_assert_eq(config_load(&cfg, "/nonexistent/judge.ini", true, err, sizeof err), -1);
	cr_assert_not_null(strstr(err, "cannot open"), "%s", err);
	config_release(&cfg);
}

/* issue 22: every relative path of a config file is relative to the folder
 * judge was started in (state_dir = var made installs fail: a relative
 * install cache folder), whatever the command later does with it. */
Test(config, relative_paths_in_a_file_are_made_absolute_against_the_working_folder)
{
	struct judge_config cfg;
	char err[512] = "", *cwd = getcwd(NULL, 0), want[4096];
	strcpy(path, "/tmp/test_config.XXXXXX");
	write_conf("[paths]\nstate_dir = var\nlanguages_dir = /abs/langs\nproblems_dir = ./p/\n"
		   "[sandbox]\nbox_root = run/boxes\nrunsc = runsc\n"
		   "[server]\ncallback_ca_file = \n");
	config_defaults(&cfg);
	int rc = config_load(&cfg, path, true, err, sizeof err);
	unlink(path);
	cr_assert_eq(rc, 0, "%s", err);
	snprintf(want, sizeof want, "%s/var", cwd);
	cr_assert_str_eq(cfg.state_dir, want);
	cr_assert_str_eq(cfg.languages_dir, "/abs/langs");
	snprintf(want, sizeof want, "%s/./p/", cwd);
	cr_assert_str_eq(cfg.problems_dir, want);
	snprintf(want, sizeof want, "%s/run/boxes", cwd);
	cr_assert_str_eq(cfg.box_root, want);
	cr_assert_str_eq(cfg.runsc, "runsc", "a program name is looked up in PATH, not placed");
	cr_assert_str_eq(cfg.callback_ca_file, "", "empty stays empty (off)");
	/* and from the command line */
	cr_assert_eq(config_set(&cfg, "runsc", "tools/runsc", err, sizeof err), 0, "%s", err);
	snprintf(want, sizeof want, "%s/tools/runsc", cwd);
	cr_assert_str_eq(cfg.runsc, want);
	/* a key no file set is left for config_resolve */
	cr_assert_str_eq(cfg.runtimes_dir, "/opt/judge/runtimes");
	config_release(&cfg);
	free(cwd);
}

Test(config, defaults_are_placed_in_the_tree_given)
{
	struct judge_config cfg;
	config_defaults(&cfg);
	cr_assert_str_eq(cfg.state_dir, "var");
	config_resolve(&cfg, "/srv/judge-checkout/");
	cr_assert_str_eq(cfg.state_dir, "/srv/judge-checkout/var");
	cr_assert_str_eq(cfg.languages_dir, "/srv/judge-checkout/languages");
	cr_assert_str_eq(cfg.problems_dir, "/srv/judge-checkout/problems");
	cr_assert_str_eq(cfg.runtimes_dir, "/opt/judge/runtimes");
	cr_assert_str_eq(cfg.box_root, "/run/judge");
	cr_assert_str_eq(cfg.runsc, "runsc");
	cr_assert_str_eq(cfg.callback_ca_file, "");
	config_release(&cfg);
}
