/* cmd_verify: `judge verify DIR...` checks that every example submission of a
 * problem package gets the verdict the package expects of it (the rules and the passes
 * are judge/grading/verify.h's; this file reads options and prints).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "judge/cli/cmd.h"
#include "common/config.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "judge/grading/problem.h"
#include "judge/grading/verify.h"

static const char usage_text[] =
    "usage: judge verify [options] DIR...\n"
    "  Runs every submission under DIR/submissions/<verdict>/ in the languages the\n"
    "  judge supports and checks it gets the verdict its folder names (or the\n"
    "  results of a DOMjudge '@EXPECTED_RESULTS@: ' line in its files).\n"
    "  --sandbox B     gvisor, native or auto (default: judge.ini's sandbox)\n"
    "  --all-tests     run every test and check the 2025-09 rules per test\n"
    "                  (e.g. wrong_answer: only AC or WA, at least one WA)\n"
    "  --lang L        only submissions in language L (repeatable)\n"
    "  -j N            grade N submissions at once (default 1; limits are CPU time)\n"
    "  --verbose       print the result JSON of each failing submission\n"
    "Prints one line per submission and 'N passed, M failed, K skipped';\n"
    "exits 1 on any mismatch, 2 on usage errors.\n";

static void print_line(void *arg, const char *text)
{
	(void)arg;
	printf("%s\n", text);
	fflush(stdout);
}

static void verify_dir(const struct verify_opts *o, const char *dir, struct verify_counts *n)
{
	struct problem p;
	char err[1024];
	struct stat st;
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
		/* a shell glob over problems/ also names problems/README.md */
		n->skipped++;
		printf("skip %s: not a folder\n", dir);
		return;
	}
	if (problem_load(&p, dir, o->langs, err, sizeof err) < 0) {
		n->failed++;
		printf("FAIL %s: %s\n", dir, err);
		return;
	}
	cJSON_Delete(verify_problem(o, &p, n));
	problem_release(&p);
}

int cmd_verify(int argc, char **argv, struct judge_config *cfg)
{
	enum { OPT_SANDBOX = 1, OPT_ALL, OPT_LANG, OPT_VERBOSE, OPT_HELP, OPT_JOBS = 'j' };
	static const struct option opts[] = {
	    {"sandbox", required_argument, 0, OPT_SANDBOX},
	    {"all-tests", no_argument, 0, OPT_ALL},
	    {"lang", required_argument, 0, OPT_LANG},
	    {"verbose", no_argument, 0, OPT_VERBOSE},
	    {"help", no_argument, 0, OPT_HELP},
	    {0, 0, 0, 0},
	};
	struct verify_opts v = {.cfg = cfg, .reuse_key = "cli", .line = print_line};
	const char *sandbox_name = cfg->sandbox;
	const char *only[33] = {0};
	int nonly = 0;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+j:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_JOBS: {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (*end || end == optarg || n < 1 || n > 16) {
				fprintf(stderr, "judge verify: -j needs a number from 1 to 16\n");
				return 2;
			}
			v.jobs = (int)n;
			break;
		}
		case OPT_SANDBOX:
			sandbox_name = optarg;
			break;
		case OPT_ALL:
			v.all_tests = true;
			break;
		case OPT_LANG:
			if (nonly < 32)
				only[nonly++] = optarg;
			break;
		case OPT_VERBOSE:
			v.verbose = true;
			break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			return 0;
		default:
			fprintf(stderr, "judge verify: unknown or incomplete option '%s'\n%s",
				argv[optind - 1], usage_text);
			return 2;
		}
	}
	v.only_langs = only;
	if (optind >= argc) {
		fprintf(stderr, "judge verify: no problem folder given\n%s", usage_text);
		return 2;
	}
	if (sandbox_backend_parse(sandbox_name, &v.backend) < 0) {
		fprintf(stderr, "judge verify: unknown sandbox '%s' (gvisor, native or auto)\n",
			sandbox_name);
		return 2;
	}
	struct lang_registry langs = {0};
	char err[512];
	if (lang_load_dir(&langs, cfg->languages_dir, err, sizeof err) < 0) {
		fprintf(stderr, "judge verify: %s\n", err);
		return 2;
	}
	v.langs = &langs;
	struct sandbox_options sbopts;
	if (limits_sandbox_options(cfg, &sbopts, err, sizeof err) < 0 ||
	    sandbox_global_init(&sbopts, err, sizeof err) < 0) {
		fprintf(stderr, "judge verify: sandbox: %s\n", err);
		lang_registry_release(&langs);
		return 1;
	}
	printf("verify: sandbox %s, %d languages\n", sandbox_backend_name(v.backend), langs.count);
	struct verify_counts n = {0};
	for (int i = optind; i < argc; i++)
		verify_dir(&v, argv[i], &n);
	sandbox_global_shutdown();
	lang_registry_release(&langs);
	printf("%d passed, %d failed, %d skipped\n", n.passed, n.failed, n.skipped);
	return n.failed ? 1 : 0;
}
