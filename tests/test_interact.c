/* test_interact: interactive problems (interact.c): the verdict rule from facts
 * alone, and real pairs of runs in the native sandbox that must never hang. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/config.h"
#include "judge/grading/grade.h"
#include "judge/grading/interact.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "tests/fixture.h"

static struct interact_result R;
static char err[512];

static void facts(enum run_status sub, enum checker_outcome val, bool val_first)
{
	memset(&R, 0, sizeof R);
	R.sub.status = sub;
	R.val.outcome = val;
	R.validator_first = val_first;
	err[0] = 0;
}

Test(interact_verdict, first_match_wins)
{
	struct {
		enum run_status sub;
		enum checker_outcome val;
		bool val_first;
		enum sub_status want;
	} cases[] = {
	    {RUN_OK, CHECKER_ACCEPT, true, SUB_ACCEPTED},
	    {RUN_OK, CHECKER_ACCEPT, false, SUB_ACCEPTED},
	    {RUN_OK, CHECKER_REJECT, false, SUB_WRONG_ANSWER},
	    /* the validator rejected, then the program crashed on the closed pipe */
	    {RUN_RUNTIME_ERROR, CHECKER_REJECT, true, SUB_WRONG_ANSWER},
	    /* the program crashed, then the validator read the end of its output */
	    {RUN_RUNTIME_ERROR, CHECKER_REJECT, false, SUB_RUNTIME_ERROR},
	    /* the validator rejected, then the program waited for an answer until
	     * its limit (Kattis' guess_tle.cc): the rejection came first */
	    {RUN_TIMEOUT, CHECKER_REJECT, true, SUB_WRONG_ANSWER},
	    {RUN_MEMORY_LIMIT, CHECKER_REJECT, true, SUB_WRONG_ANSWER},
	    {RUN_OUTPUT_LIMIT, CHECKER_REJECT, true, SUB_WRONG_ANSWER},
	    /* a limit the judge enforced first wins over what the validator made
	     * of the silence that followed */
	    {RUN_TIMEOUT, CHECKER_REJECT, false, SUB_TIMEOUT},
	    {RUN_MEMORY_LIMIT, CHECKER_REJECT, false, SUB_MEMORY_LIMIT},
	    /* the validator accepted, then the program ran on past its limit */
	    {RUN_TIMEOUT, CHECKER_ACCEPT, true, SUB_TIMEOUT},
	    {RUN_RUNTIME_ERROR, CHECKER_ACCEPT, true, SUB_RUNTIME_ERROR},
	    {RUN_TIMEOUT, CHECKER_FAIL, false, SUB_TIMEOUT},
	    /* a validator that fails after a crash: the crash is the verdict */
	    {RUN_RUNTIME_ERROR, CHECKER_FAIL, false, SUB_RUNTIME_ERROR},
	    {RUN_OK, CHECKER_FAIL, false, SUB_INTERNAL_ERROR},
	    /* the validator hit its own limits on this output: not accepted */
	    {RUN_OK, CHECKER_LIMIT, false, SUB_WRONG_ANSWER},
	    {RUN_INTERNAL_ERROR, CHECKER_ACCEPT, false, SUB_INTERNAL_ERROR},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		facts(cases[i].sub, cases[i].val, cases[i].val_first);
		cr_expect_eq(interact_verdict(&R, err, sizeof err), cases[i].want, "case %zu", i);
	}
	facts(RUN_OK, CHECKER_FAIL, false);
	snprintf(R.val.message, sizeof R.val.message, "output validator exited with code 1");
	interact_verdict(&R, err, sizeof err);
	cr_expect_str_eq(err, "output validator exited with code 1");
}

static struct judge_config cfg;
static struct lang_registry langs;
static char dir[64];

static enum sandbox_backend backend = SANDBOX_NATIVE;

static void setup(void)
{
	config_defaults(&cfg);
	free(cfg.sandbox);
	cfg.sandbox = strdup(backend == SANDBOX_GVISOR ? "auto" : "native");
	cfg.gvisor_pool = 0;
	cr_assert_eq(lang_load_dir(&langs, "languages", err, sizeof err), 0, "%s", err);
	fixture_sandbox_start(&cfg);
	snprintf(dir, sizeof dir, "/tmp/test_interact.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	free(cfg.problems_dir);
	cfg.problems_dir = strdup(dir);
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	sandbox_global_shutdown();
	lang_registry_release(&langs);
	config_release(&cfg);
}

TestSuite(interact, .init = setup, .fini = teardown, .timeout = 120);

/* An interactive package "p" under dir whose validator is the Python program
 * validator, with a 3 s time limit (a gVisor sandbox and Python start within it
 * on a busy host; the tests check verdicts, not speed). */
static void package(const char *validator)
{
	char path[256];
	snprintf(path, sizeof path, "mkdir -p %s/p/data/secret %s/p/output_validator", dir, dir);
	cr_assert_eq(system(path), 0);
	const char *files[][2] = {
	    {"problem.yaml",
	     "problem_format_version: 2025-09\ntype: interactive\nlimits:\n  time_limit: 3\n"},
	    {"data/secret/1.in", "7\n"},
	    {"output_validator/validate.py", validator},
	};
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/p/%s", dir, files[i][0]);
		FILE *f = fopen(path, "w");
		cr_assert_not_null(f, "%s", path);
		fputs(files[i][1], f);
		fclose(f);
	}
}

static enum sub_status grade_py(const char *source, struct grade_result *gr)
{
	struct grade_request req;
	model_request_init(&req);
	model_set(&req.language, "python", 6);
	model_set(&req.source, source, strlen(source));
	req.source_len = strlen(source);
	model_set(&req.problem, "p", 1);
	struct grade_env env = {.cfg = &cfg, .langs = &langs, .backend = backend, .slot = 6};
	grade_request(&env, &req, gr);
	model_request_release(&req);
	return gr->status;
}

Test(interact, talks_both_ways)
{
	package("import sys\nn = open(sys.argv[1]).read().strip()\nprint(n, flush=True)\n"
		"got = sys.stdin.readline().strip()\n"
		"open(sys.argv[3] + 'judgemessage.txt', 'w').write('got ' + got)\n"
		"sys.exit(42 if got == str(int(n) * 2) else 43)\n");
	struct grade_result gr;
	cr_expect_eq(grade_py("print(int(input()) * 2)\n", &gr), SUB_ACCEPTED, "%s",
		     gr.message ? gr.message : "");
	model_result_release(&gr);
	cr_expect_eq(grade_py("print(int(input()) * 3)\n", &gr), SUB_WRONG_ANSWER);
	cr_expect_str_eq(gr.feedback.message, "got 21");
	model_result_release(&gr);
}

Test(interact, both_waiting_is_a_timeout_not_a_hang)
{
	/* each side waits for the other to speak first */
	package("import sys\nsys.stdin.readline()\nsys.exit(43)\n");
	struct grade_result gr;
	int64_t t0 = clock_mono_ms();
	cr_expect_eq(grade_py("input()\n", &gr), SUB_TIMEOUT);
	model_result_release(&gr);
	/* a validator that never answers nor ends: its own wall limit ends it */
	package("import time\ntime.sleep(600)\n");
	cr_expect_eq(grade_py("input()\n", &gr), SUB_TIMEOUT);
	model_result_release(&gr);
	/* never hangs: each ended by a wall limit (5.5 s for the program, more
	 * for the validator), far from the 60 s bound on any machine */
	cr_expect_lt(clock_mono_ms() - t0, 60000, "took %ld ms", (long)(clock_mono_ms() - t0));
}

Test(interact, a_rejection_first_is_wrong_answer_whatever_follows)
{
	/* the validator rejects the first line; the program then spins, sleeps or
	 * floods: the rejection came before any limit, so it is wrong_answer (and
	 * the program is stopped then, not at its limit) */
	package("import sys\nsys.stdin.readline()\nsys.exit(43)\n");
	struct grade_result gr;
	const char *after[] = {
	    "print(0, flush=True)\nwhile True: pass\n",
	    "import time\nprint(0, flush=True)\ntime.sleep(600)\n",
	    "import sys\nprint(0, flush=True)\nwhile True: sys.stdout.write('x' * 65536)\n",
	};
	for (size_t i = 0; i < sizeof after / sizeof after[0]; i++) {
		cr_expect_eq(grade_py(after[i], &gr), SUB_WRONG_ANSWER, "program %zu: %s", i,
			     status_name(gr.status));
		model_result_release(&gr);
	}
	/* a validator that accepts first leaves the program its own verdict */
	package("import sys\nsys.stdin.readline()\nsys.exit(42)\n");
	cr_expect_eq(grade_py("print(0, flush=True)\nwhile True: pass\n", &gr), SUB_TIMEOUT);
	model_result_release(&gr);
}

Test(interact, a_flood_is_output_limit)
{
	/* the validator reads everything; the program never stops writing */
	package("import sys\nfor line in sys.stdin: pass\nsys.exit(43)\n");
	struct grade_result gr;
	cr_expect_eq(grade_py("import sys\nwhile True: sys.stdout.write('x' * 65536)\n", &gr),
		     SUB_OUTPUT_LIMIT);
	model_result_release(&gr);
}

Test(interact, a_crash_is_runtime_error_and_a_validator_crash_internal)
{
	package("import sys\nprint(1, flush=True)\nline = sys.stdin.readline()\n"
		"sys.exit(42 if line.strip() == 'ok' else 43)\n");
	struct grade_result gr;
	cr_expect_eq(grade_py("input()\nraise SystemExit(3)\n", &gr), SUB_RUNTIME_ERROR);
	model_result_release(&gr);
	package("import sys\nsys.stdin.readline()\nsys.exit(1)\n");
	cr_expect_eq(grade_py("print('ok')\n", &gr), SUB_INTERNAL_ERROR);
	cr_expect(gr.message && strstr(gr.message, "exited with code 1"), "%s", gr.message);
	model_result_release(&gr);
}

/* The same pair with the submission under gVisor (the validator runs where
 * trusted tools run); skipped, and counted, where runsc does not work. */
static void setup_gvisor(void)
{
	backend = SANDBOX_GVISOR;
	setup();
	if (!sandbox_backend_works(SANDBOX_GVISOR, err, sizeof err))
		cr_skip_test("gvisor does not work here: %s", err);
}

static void teardown_gvisor(void)
{
	teardown();
	backend = SANDBOX_NATIVE;
}

Test(interact_gvisor, talks_both_ways_and_never_hangs, .init = setup_gvisor,
     .fini = teardown_gvisor, .timeout = 120)
{
	package("import sys\nn = open(sys.argv[1]).read().strip()\nprint(n, flush=True)\n"
		"got = sys.stdin.readline().strip()\n"
		"sys.exit(42 if got == str(int(n) * 2) else 43)\n");
	struct grade_result gr;
	cr_expect_eq(grade_py("print(int(input()) * 2)\n", &gr), SUB_ACCEPTED, "%s",
		     gr.message ? gr.message : "");
	model_result_release(&gr);
	cr_expect_eq(grade_py("print(int(input()) * 3)\n", &gr), SUB_WRONG_ANSWER);
	model_result_release(&gr);
	package("import sys\nsys.stdin.readline()\nsys.exit(43)\n");
	cr_expect_eq(grade_py("input()\n", &gr), SUB_TIMEOUT);
	model_result_release(&gr);
}
