/* test_checker: custom output validators (checker.c) and grading by problem id
 * (grade.c's "problem" path), in the native sandbox with the real runtimes. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "judge/grading/checker.h"
#include "common/config.h"
#include "judge/grading/grade.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "judge/grading/problem.h"

static struct judge_config cfg;
static struct lang_registry langs;
static char err[1024];

static void setup(void)
{
	config_defaults(&cfg);
	free(cfg.sandbox);
	cfg.sandbox = strdup("native");
	cr_assert_eq(lang_load_dir(&langs, "languages", err, sizeof err), 0, "%s", err);
	struct sandbox_options opts;
	cr_assert_eq(limits_sandbox_options(&cfg, &opts, err, sizeof err), 0, "%s", err);
	cr_assert_eq(sandbox_global_init(&opts, err, sizeof err), 0, "%s", err);
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

Test(checker, limits_come_from_the_package)
{
	/* two-sum states memory: 512 (judge.ini's default is 256): 400 MiB touched is
	 * fine; "0 1" is right for the first tests and wrong on secret/02-self */
	cJSON *res =
	    grade("problems", "two-sum", "python", "b = b'x' * (400 << 20)\nprint(0, 1)\n");
	cr_assert_str_eq(str(res, "status"), "wrong_answer", "%s", cJSON_Print(res));
	const cJSON *tests = cJSON_GetObjectItemCaseSensitive(res, "tests");
	cr_assert_str_eq(str(cJSON_GetArrayItem(tests, 0), "status"), "accepted");
	cr_assert_str_eq(str(cJSON_GetArrayItem(tests, 3), "name"), "secret/02-self");
	const cJSON *mem =
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(tests, 0), "memory_kb");
	cr_assert(cJSON_IsNumber(mem) && mem->valuedouble > 400 * 1024, "peak memory reported");
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
	cr_assert(strstr(str(res, "message"), "interactive problems are not supported"), "%s",
		  str(res, "message"));
	cJSON_Delete(res);
}

Test(checker, direct_run_reports_judgemessage)
{
	struct problem p;
	cr_assert_eq(prob_load(&p, "problems/divisors", err, sizeof err), 0, "%s", err);
	struct checker *c;
	cr_assert_eq(checker_build(&p, &langs, &cfg, SANDBOX_NATIVE, 5, &c, err, sizeof err), 0,
		     "%s", err);
	const struct prob_test *t = &p.tests[0]; /* sample/1: n = 12 */
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
	prob_release(&p);
}
