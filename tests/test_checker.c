/* test_checker: custom output validators (checker.c) and grading by problem id
 * (grade.c's "problem" path), in the native sandbox with the real runtimes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/grading/checker.h"
#include "common/config.h"
#include "judge/grading/grade.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "judge/grading/problem.h"
#include "tests/fixture.h"

static struct judge_config cfg;
static struct lang_registry langs;
static char err[1024];

static void setup(void)
{
	cr_assert_eq(lang_load_dir(&langs, "languages", err, sizeof err), 0, "%s", err);
	fixture_native_start(&cfg);
}

static void teardown(void)
{
	sandbox_global_shutdown();
	lang_registry_release(&langs);
	config_release(&cfg);
}

TestSuite(checker, .init = setup, .fini = teardown, .timeout = 120);

/* Grades source (python) against problem id under problems_dir. */
static cJSON *grade(const char *problems_dir, const char *id, const char *lang, const char *source)
{
	free(cfg.problems_dir);
	cfg.problems_dir = strdup(problems_dir);
	struct grade_request req;
	struct grade_result gr;
	model_request_init(&req);
	model_set(&req.language, lang, strlen(lang));
	model_set(&req.source, source, strlen(source));
	model_set(&req.problem, id, strlen(id));
	req.source_len = strlen(source);
	struct grade_env env = {.cfg = &cfg, .langs = &langs, .backend = SANDBOX_NATIVE, .slot = 5};
	grade_request(&env, &req, &gr);
	cJSON *res = model_result_render(&gr);
	model_result_release(&gr);
	model_request_release(&req);
	return res;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : "(none)";
}

Test(checker, validator_accepts_any_order)
{
	cJSON *res = grade("problems", "divisors", "python",
			   "n = int(input())\nds = [d for d in range(1, 200) if n % d == 0]\n"
			   "print(*reversed(ds)) if n < 200 else print(1)\n");
	/* right, in reverse order, for n < 200 (the samples 12 and 1, secret/01-square 36);
	 * the first failure is the 10-digit prime of secret/02-prime */
	cr_assert_str_eq(str(res, "status"), "wrong_answer", "%s", cJSON_Print(res));
	const cJSON *tests = cJSON_GetObjectItemCaseSensitive(res, "tests");
	cr_assert_str_eq(str(cJSON_GetArrayItem(tests, 0), "status"), "accepted");
	cr_assert_str_eq(str(cJSON_GetArrayItem(tests, 2), "name"), "secret/01-square");
	cr_assert_str_eq(str(cJSON_GetArrayItem(tests, 2), "status"), "accepted");
	const cJSON *last = cJSON_GetArrayItem(tests, cJSON_GetArraySize(tests) - 1);
	cr_assert_str_eq(str(last, "name"), "secret/02-prime");
	const cJSON *fb = cJSON_GetObjectItemCaseSensitive(res, "feedback");
	cr_assert(strstr(str(fb, "message"), "divisor 9999999967 is missing"),
		  "judgemessage.txt is the feedback: %s", str(fb, "message"));
	cJSON_Delete(res);
}

Test(checker, failing_validator_is_internal_error)
{
	cJSON *res =
	    grade("tests/problems-fixtures", "verify-bad-checker", "python", "print(42)\n");
	cr_assert_str_eq(str(res, "status"), "internal_error");
	cr_assert(strstr(str(res, "message"), "exited with code 1 (expected 42 or 43)"), "%s",
		  str(res, "message"));
	cJSON_Delete(res);
}

Test(checker, broken_validator_is_internal_error)
{
	cJSON *res =
	    grade("tests/problems-fixtures", "verify-broken-checker", "python", "print(42)\n");
	cr_assert_str_eq(str(res, "status"), "internal_error");
	cr_assert(strstr(str(res, "message"), "does not compile"), "%s", str(res, "message"));
	cJSON_Delete(res);
}

Test(checker, unknown_and_unsupported_problems)
{
	cJSON *res = grade("tests/problems-fixtures", "../problems-fixtures/modern", "python", "1");
	cr_assert_str_eq(str(res, "status"), "internal_error");
	cr_assert(strstr(str(res, "message"), "invalid problem id"), "%s", str(res, "message"));
	cJSON_Delete(res);
	res = grade("tests/problems-fixtures", "interactive", "python", "print(5)\n");
	cr_assert_str_eq(str(res, "status"), "accepted", "%s", cJSON_Print(res));
	cJSON_Delete(res);
	res = grade("tests/problems-fixtures", "interactive", "python", "print(4)\n");
	cr_assert_str_eq(str(res, "status"), "wrong_answer", "%s", cJSON_Print(res));
	cJSON_Delete(res);
}

Test(checker, direct_run_reports_judgemessage)
{
	struct problem p;
	cr_assert_eq(problem_load(&p, "problems/divisors", &langs, err, sizeof err), 0, "%s", err);
	struct checker *c;
	cr_assert_eq(checker_build(&p, &langs, &cfg, SANDBOX_NATIVE, 5, &c, err, sizeof err), 0,
		     "%s", err);
	const struct problem_test *t = &p.tests[0]; /* sample/1: n = 12 */
	struct checker_verdict v;
	const char good[] = "6 4 3 12 2 1\n", dup[] = "1 2 3 4 6 12 12", junk[] = "1 2 x";
	checker_run(c, t->in_path, t->ans_path, good, strlen(good), NULL, &v);
	cr_assert_eq(v.outcome, CHECKER_ACCEPT, "%s", v.message);
	checker_run(c, t->in_path, t->ans_path, dup, strlen(dup), NULL, &v);
	cr_assert_eq(v.outcome, CHECKER_REJECT);
	cr_assert_str_eq(v.message, "divisor 12 printed more than once");
	checker_run(c, t->in_path, t->ans_path, junk, strlen(junk), NULL, &v);
	cr_assert_eq(v.outcome, CHECKER_REJECT);
	cr_assert(strstr(v.message, "'x', is not a number"), "%s", v.message);
	/* the feedback folder starts empty for every test: no stale message */
	checker_run(c, t->in_path, t->ans_path, good, strlen(good), NULL, &v);
	cr_assert_eq(v.outcome, CHECKER_ACCEPT);
	cr_assert_str_eq(v.message, "");
	checker_close(c);
	problem_release(&p);
}

/* A package in a fresh folder under /tmp: problem.yaml, one test, a Python
 * output validator. Returns the folder (static). */
static const char *tmp_package(const char *yaml, const char *validator)
{
	static char dir[64];
	snprintf(dir, sizeof dir, "/tmp/test_checker.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	char path[256];
	const char *files[][2] = {
	    {"problem.yaml", yaml},
	    {"data/secret/1.in", "3\n"},
	    {"data/secret/1.ans", "3\n"},
	    {"output_validators/v/validate.py", validator},
	};
	snprintf(path, sizeof path, "mkdir -p %s/p/data/secret %s/p/output_validators/v", dir, dir);
	cr_assert_eq(system(path), 0);
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/p/%s", dir, files[i][0]);
		FILE *f = fopen(path, "w");
		cr_assert_not_null(f, "%s", path);
		fputs(files[i][1], f);
		fclose(f);
	}
	return dir;
}

static void rm_tmp(const char *dir)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	cr_assert(cJSON_IsNumber(v), "no number %s in %s", key, cJSON_Print(o));
	return v->valuedouble;
}

/* The package's memory limit (512 MiB) replaces judge.ini's default (256): a
 * program that touches 272 MiB is accepted and its peak is reported. The time
 * limit is the package's too, and wide: touching 400 MiB took 2.4 s CPU and
 * 5.6 s wall at load 12, past two-sum's 5.5 s wall, and a CI run under the
 * sanitizers failed this test on that package */
Test(checker, limits_come_from_the_package)
{
	const char *dir =
	    tmp_package("name: Big\nvalidation: custom\nlimits:\n  memory: 512\n  time_limit: 10\n",
			"import sys\nsys.exit(42 if sys.stdin.read().strip() == '3' else 43)\n");
	cJSON *res = grade(dir, "p", "python", "b = b'x' * (272 << 20)\nprint(3)\n");
	cr_assert_str_eq(str(res, "status"), "accepted", "%s", cJSON_Print(res));
	const cJSON *tests = cJSON_GetObjectItemCaseSensitive(res, "tests");
	cr_assert_eq(cJSON_GetArraySize(tests), 1);
	cr_assert_gt(num(cJSON_GetArrayItem(tests, 0), "memory_kb"), 272 * 1024,
		     "peak memory reported");
	cJSON_Delete(res);
	rm_tmp(dir);
	/* the same program under judge.ini's default memory limit is refused */
	dir = tmp_package("name: Small\nvalidation: custom\nlimits:\n  time_limit: 10\n",
			  "import sys\nsys.exit(42)\n");
	res = grade(dir, "p", "python", "b = b'x' * (272 << 20)\nprint(3)\n");
	cr_assert_str_eq(str(res, "status"), "memory_limit", "%s", cJSON_Print(res));
	cJSON_Delete(res);
	rm_tmp(dir);
}

Test(checker, multi_pass_runs_again_with_nextpass)
{
	cJSON *res =
	    grade("tests/problems-fixtures", "legacy-multi-pass", "python", "print(input())\n");
	cr_assert_str_eq(str(res, "status"), "accepted", "%s", cJSON_Print(res));
	const cJSON *t0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(res, "tests"), 0);
	cr_assert_eq(num(t0, "passes"), 2, "the validator asked for one more pass");
	cJSON_Delete(res);
	/* the validator's state survives between passes: pass 2 wants 6 */
	res = grade("tests/problems-fixtures", "legacy-multi-pass", "python", "print(3)\n");
	cr_assert_str_eq(str(res, "status"), "wrong_answer");
	const cJSON *fb = cJSON_GetObjectItemCaseSensitive(res, "feedback");
	cr_assert_str_eq(str(fb, "message"), "pass 2: expected 6, got 3");
	cJSON_Delete(res);
}

Test(checker, multi_pass_beyond_the_limit_is_the_package_fault)
{
	const char *dir = tmp_package(
	    "name: Forever\nvalidation: custom multi-pass\nlimits:\n  validation_passes: 3\n",
	    "import sys\nopen(sys.argv[3] + 'nextpass.in', 'w').write('1\\n')\nsys.exit(42)\n");
	cJSON *res = grade(dir, "p", "python", "print(input())\n");
	cr_assert_str_eq(str(res, "status"), "internal_error", "%s", cJSON_Print(res));
	cr_assert(strstr(str(res, "message"), "asked for pass 4 of at most 3"), "%s",
		  str(res, "message"));
	cJSON_Delete(res);
	rm_tmp(dir);
}

/* A validator that runs out of its own time on an output: the output was not
 * accepted (a verdict with the reason), not the judge's fault. */
Test(checker, validator_over_its_limits_is_a_verdict)
{
	const char *dir = tmp_package(
	    "name: Slow\nvalidation: custom\nlimits:\n  validation_time: 1\n",
	    "import sys\nif sys.stdin.read().strip() != '3':\n    while True:\n        pass\n"
	    "sys.exit(42)\n");
	cJSON *res = grade(dir, "p", "python", "print(input())\n");
	cr_assert_str_eq(str(res, "status"), "accepted", "%s", cJSON_Print(res));
	cJSON_Delete(res);
	res = grade(dir, "p", "python", "print('x' * 1000)\n");
	cr_assert_str_eq(str(res, "status"), "wrong_answer", "%s", cJSON_Print(res));
	const cJSON *fb = cJSON_GetObjectItemCaseSensitive(res, "feedback");
	cr_assert(strstr(str(fb, "message"), "output validator timed out"), "%s", cJSON_Print(res));
	cJSON_Delete(res);
	rm_tmp(dir);
}

Test(checker, scoring_takes_the_validator_score)
{
	/* score.txt holds the submission's number: its score on the test */
	const char *dir = tmp_package(
	    "problem_format_version: 2023-07\ntype: scoring\n",
	    "import sys\nv = sys.stdin.read().strip()\n"
	    "open(sys.argv[3] + 'score.txt', 'w').write(v)\nsys.exit(42 if v != '0' else 43)\n");
	cJSON *res = grade(dir, "p", "python", "print(7.5)\n");
	cr_assert_str_eq(str(res, "status"), "accepted", "%s", cJSON_Print(res));
	cr_assert_float_eq(num(res, "score"), 7.5, 1e-9);
	cJSON_Delete(res);
	res = grade(dir, "p", "python", "print(0)\n");
	cr_assert_str_eq(str(res, "status"), "wrong_answer");
	cr_assert_float_eq(num(res, "score"), 0, 1e-9, "a rejected test scores nothing");
	cJSON_Delete(res);
	rm_tmp(dir);
}

Test(checker, inline_points_are_partial_credit)
{
	struct grade_request req;
	struct grade_result gr;
	const char src[] = "print(int(input()) * 2)\n";
	model_request_init(&req);
	model_set(&req.language, "python", 6);
	model_set(&req.source, src, strlen(src));
	req.source_len = strlen(src);
	/* the second test expects the wrong answer: its 2 points are lost, and the
	 * third still runs */
	const char *cases[][3] = {{"1", "2", "1"}, {"2", "5", "2"}, {"3", "6", "3"}};
	for (int i = 0; i < 3; i++) {
		model_request_add_test(&req, cases[i][0], cases[i][0], 1, cases[i][1], 1);
		req.tests[i].points = atof(cases[i][2]);
	}
	struct grade_env env = {.cfg = &cfg, .langs = &langs, .backend = SANDBOX_NATIVE, .slot = 5};
	grade_request(&env, &req, &gr);
	cJSON *res = model_result_render(&gr);
	cr_assert_str_eq(str(res, "status"), "wrong_answer", "%s", cJSON_Print(res));
	cr_assert_float_eq(num(res, "score"), 4, 1e-9);
	cr_assert_float_eq(num(res, "max_score"), 6, 1e-9);
	const cJSON *tests = cJSON_GetObjectItemCaseSensitive(res, "tests");
	cr_assert_eq(cJSON_GetArraySize(tests), 3, "every test runs");
	cr_assert_float_eq(num(cJSON_GetArrayItem(tests, 1), "score"), 0, 1e-9);
	cr_assert_float_eq(num(cJSON_GetArrayItem(tests, 2), "score"), 3, 1e-9);
	cJSON_Delete(res);
	model_result_release(&gr);
	model_request_release(&req);
}
