/* test_grade: planning, judging, aggregation and the JSON forms of grading
 * (judge/grading/grade.c, model.c), without a sandbox or a database. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "judge/grading/grade.h"
#include "judge/grading/lang.h"
#include "judge/grading/model.h"

static struct judge_config cfg;
static struct lang langs_arr[1];
static struct lang_registry langs = {.langs = langs_arr, .count = 1};
static struct grade_env env;
static char probdir[] = "/tmp/test_grade.XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", probdir, rel);
	if (!text) {
		cr_assert(mkdir(path, 0755) == 0, "%s", path);
		return;
	}
	FILE *f = fopen(path, "w");
	cr_assert(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	char err[256];
	config_defaults(&cfg);
	cr_assert(mkdtemp(probdir));
	put("sum", NULL);
	put("sum/problem.yaml", "name: Sum\nlimits:\n  time_limit: 1.5\n");
	put("sum/data", NULL);
	put("sum/data/sample", NULL);
	put("sum/data/secret", NULL);
	put("sum/data/sample/1.in", "1 2\n");
	put("sum/data/sample/1.ans", "3\n");
	put("sum/data/secret/2.in", "2 2\n");
	put("sum/data/secret/2.ans", "4\n");
	cr_assert(config_set(&cfg, "problems_dir", probdir, err, sizeof err) == 0, "%s", err);
	langs_arr[0].name = "python";
	langs_arr[0].source_file = "main.py";
	/* the package format's language it runs, for problems' programs */
	static char *py_files[] = {"*.py", NULL}, *none[] = {NULL};
	static struct lang_problem table[1];
	table[0] = (struct lang_problem){.code = "python3",
					 .name = "Python 3",
					 .priority = 850,
					 .files = py_files,
					 .shebang_files = none,
					 .entry_files = none};
	langs.problem_langs = table;
	langs.nproblem_langs = 1;
	langs_arr[0].problem_language = "python3";
	env = (struct grade_env){.cfg = &cfg, .langs = &langs, .backend = SANDBOX_NATIVE};
}

static void teardown(void)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", probdir);
	(void)!system(cmd);
	config_release(&cfg);
}

TestSuite(grade, .init = setup, .fini = teardown);

static void base_request(struct grade_request *r)
{
	model_request_init(r);
	model_set(&r->language, "python", 6);
	model_set(&r->source, "print(3)", 8);
	r->source_len = 8;
}

/* A run that ended as status with output out. */
static void fake_run(struct run_result *rr, enum run_status status, const char *out, long cpu_ms)
{
	run_result_init(rr);
	rr->status = status;
	rr->cpu_ms = cpu_ms;
	rr->wall_ms = cpu_ms + 5;
	rr->memory_kb = 1000 + cpu_ms;
	if (status == RUN_RUNTIME_ERROR)
		rr->exit_code = 1;
	strbuf_addstr(&rr->out, out);
}

static char *render(const struct grade_result *r)
{
	cJSON *j = model_result_render(r);
	cr_assert(j);
	char *s = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	return s;
}

Test(grade, plan_one_run_with_the_request_limits)
{
	struct grade_request req;
	struct grade_plan p;
	char err[256] = "";
	base_request(&req);
	model_set(&req.stdin_data, "5\n", 2);
	req.stdin_len = 2;
	req.limits.time_ms = 300;
	req.limits.memory_mb = 64;
	cr_assert_eq(grade_plan_make(&p, &env, &req, err, sizeof err), 0, "%s", err);
	cr_expect_eq(p.ntests, 1);
	cr_expect(!p.explicit_tests, "one run reports no tests array");
	cr_expect_str_eq(p.tests[0].name, "1");
	cr_expect_eq(p.tests[0].stdin_data, req.stdin_data, "borrowed, not copied");
	cr_expect(!p.tests[0].has_expected);
	cr_expect_eq(p.run_limits.cpu_ms, 300);
	cr_expect_eq(p.run_limits.wall_ms, 300 * cfg.wall_limit_factor + 1000);
	cr_expect_eq(p.run_limits.memory_kb, 64 * 1024);
	cr_expect_eq(p.run_limits.processes, cfg.processes, "not given: the default");
	cr_expect_eq(p.cmp.mode, CMP_LINES);
	grade_plan_release(&p);
	model_request_release(&req);
}

Test(grade, plan_inline_tests_and_failures)
{
	struct grade_request req;
	struct grade_plan p;
	char err[256] = "";
	base_request(&req);
	model_request_add_test(&req, "a", "1", 1, "x", 1);
	model_request_add_test(&req, "b", NULL, 0, NULL, 0);
	req.run_all_tests = true;
	req.cmp.mode = CMP_EXACT;
	cr_assert_eq(grade_plan_make(&p, &env, &req, err, sizeof err), 0, "%s", err);
	cr_expect(p.explicit_tests);
	cr_assert_eq(p.ntests, 2);
	cr_expect_str_eq(p.tests[0].name, "a");
	cr_expect(p.tests[0].has_expected);
	cr_expect(!p.tests[1].has_expected);
	cr_expect(p.run_all);
	cr_expect_eq(p.cmp.mode, CMP_EXACT);
	cr_expect_eq(p.run_limits.cpu_ms, cfg.time_limit_ms);
	grade_plan_release(&p);

	free(req.language);
	req.language = strdup("cobol");
	cr_expect_eq(grade_plan_make(&p, &env, &req, err, sizeof err), -1);
	cr_expect_str_eq(err, "unknown language");
	grade_plan_release(&p);
	free(req.language);
	req.language = NULL;
	cr_expect_eq(grade_plan_make(&p, &env, &req, err, sizeof err), -1);
	cr_expect_str_eq(err, "request has no language");
	grade_plan_release(&p);
	model_request_release(&req);
}

Test(grade, plan_problem_package)
{
	struct grade_request req;
	struct grade_plan p;
	char err[256] = "";
	base_request(&req);
	model_set(&req.problem, "sum", 3);
	cr_assert_eq(grade_plan_make(&p, &env, &req, err, sizeof err), 0, "%s", err);
	cr_expect(p.explicit_tests);
	cr_assert_eq(p.ntests, 2);
	cr_expect_str_eq(p.tests[0].name, "sample/1");
	cr_expect(!p.tests[0].hide_data);
	cr_expect(p.tests[1].hide_data, "secret test");
	cr_expect_not_null(p.tests[1].expected_path);
	cr_expect_eq(p.run_limits.cpu_ms, 1500, "the package's time limit");
	cr_expect_eq(p.run_limits.wall_ms, 3250, "the package's wall rule: 1.5 x 1.5 s + 1 s");
	cr_expect_eq(p.run_limits.stdout_bytes, 8L << 20, "the format's default output limit");
	grade_plan_release(&p);
	/* the request's own limit wins over the package's */
	req.limits.time_ms = 700;
	cr_assert_eq(grade_plan_make(&p, &env, &req, err, sizeof err), 0, "%s", err);
	cr_expect_eq(p.run_limits.cpu_ms, 700);
	grade_plan_release(&p);
	free(req.problem);
	req.problem = strdup("nope");
	cr_expect_eq(grade_plan_make(&p, &env, &req, err, sizeof err), -1);
	grade_plan_release(&p);
	model_request_release(&req);
}

Test(grade, unsupported_package_is_refused_with_the_reason)
{
	put("score", NULL);
	put("score/problem.yaml", "problem_format_version: 2023-07\ntype: submit-answer\n");
	put("score/data", NULL);
	put("score/data/secret", NULL);
	put("score/data/secret/1.in", "1\n");
	put("score/data/secret/1.ans", "1\n");
	struct grade_request req;
	struct grade_plan p;
	char err[256] = "";
	base_request(&req);
	model_set(&req.problem, "score", 5);
	cr_assert_eq(grade_plan_make(&p, &env, &req, err, sizeof err), -1);
	cr_expect(strstr(err, "submit-answer problems are not supported"), "got '%s'", err);
	grade_plan_release(&p);
	model_request_release(&req);
}

Test(grade, interactive_is_planned_on_every_backend)
{
	put("talk", NULL);
	put("talk/problem.yaml", "problem_format_version: 2025-09\ntype: interactive\n");
	put("talk/data", NULL);
	put("talk/data/secret", NULL);
	put("talk/data/secret/1.in", "1\n");
	put("talk/output_validator", NULL);
	put("talk/output_validator/validate.py", "import sys\nsys.exit(42)\n");
	struct grade_request req;
	struct grade_plan p;
	char err[256] = "";
	base_request(&req);
	model_set(&req.problem, "talk", 4);
	enum sandbox_backend backends[] = {SANDBOX_NATIVE, SANDBOX_GVISOR};
	for (int i = 0; i < 2; i++) {
		struct grade_env genv = env;
		genv.backend = backends[i];
		cr_assert_eq(grade_plan_make(&p, &genv, &req, err, sizeof err), 0, "%s", err);
		cr_expect(p.interactive);
		cr_expect_eq(p.max_passes, 1);
		grade_plan_release(&p);
	}
	model_request_release(&req);
}

Test(grade, source_that_is_not_text_is_a_compile_error)
{
	static const struct {
		const char *src;
		size_t len;
		const char *msg;
	} cases[] = {
	    {"print(1)\n\0\1", 11, "a NUL byte at byte 9"},
	    {"\x7f"
	     "ELF\xff\xfe",
	     6, "invalid UTF-8 at byte 4"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct grade_request req;
		struct grade_result res;
		base_request(&req);
		free(req.source);
		req.source = malloc(cases[i].len + 1);
		memcpy(req.source, cases[i].src, cases[i].len + 1);
		req.source_len = cases[i].len;
		/* refused before any sandbox is opened */
		grade_request(&env, &req, &res);
		cr_expect_eq(res.status, SUB_COMPILE_ERROR, "case %zu", i);
		cr_expect(res.compile.ran && !res.compile.ok);
		cr_expect(strstr(res.compile.output.buf, cases[i].msg), "case %zu: got '%s'", i,
			  res.compile.output.buf);
		model_result_release(&res);
		model_request_release(&req);
	}
}

Test(grade, judge_one_test)
{
	struct grade_request req;
	struct grade_plan p;
	struct run_result rr;
	struct grade_feedback fb;
	char err[256] = "";
	base_request(&req);
	model_set(&req.problem, "sum", 3);
	cr_assert_eq(grade_plan_make(&p, &env, &req, err, sizeof err), 0, "%s", err);

	fake_run(&rr, RUN_OK, "3\n", 10);
	cr_expect_eq(grade_judge_test(&p, 0, &rr, &fb, err, sizeof err), SUB_ACCEPTED);
	cr_expect(!fb.present);
	run_result_release(&rr);

	fake_run(&rr, RUN_OK, "3\n", 10);
	cr_expect_eq(grade_judge_test(&p, 0, &rr, &fb, err, sizeof err), SUB_ACCEPTED,
		     "the sample expects 3");
	run_result_release(&rr);
	fake_run(&rr, RUN_OK, "5\n", 10);
	cr_expect_eq(grade_judge_test(&p, 0, &rr, &fb, err, sizeof err), SUB_WRONG_ANSWER);
	cr_expect(fb.present && fb.has_position && fb.has_expected);
	cr_expect_eq(fb.line, 1);
	cr_expect_str_eq(fb.expected, "3");
	cr_expect_str_eq(fb.got, "5");
	cr_expect_eq(grade_judge_test(&p, 1, &rr, &fb, err, sizeof err), SUB_WRONG_ANSWER);
	cr_expect(!fb.has_expected, "a secret test shows no expected snippet");
	run_result_release(&rr);

	fake_run(&rr, RUN_TIMEOUT, "", 2000);
	cr_expect_eq(grade_judge_test(&p, 0, &rr, &fb, err, sizeof err), SUB_TIMEOUT);
	run_result_release(&rr);
	fake_run(&rr, RUN_INTERNAL_ERROR, "", 0);
	snprintf(rr.message, sizeof rr.message, "cgroup gone");
	cr_expect_eq(grade_judge_test(&p, 1, &rr, &fb, err, sizeof err), SUB_INTERNAL_ERROR);
	cr_expect_str_eq(err, "sandbox failed on test 'secret/2': cgroup gone");
	run_result_release(&rr);
	grade_plan_release(&p);
	model_request_release(&req);
}

/* Plans three tests (all expecting "ok"), folds runs with outputs outs and
 * returns how many were folded before the tally said stop. */
static int fold(bool run_all, const char *const outs[3], struct grade_result *res)
{
	struct grade_request req;
	struct grade_plan p;
	struct grade_tally t;
	char err[256] = "";
	base_request(&req);
	for (int i = 0; i < 3; i++) {
		char name[8];
		snprintf(name, sizeof name, "t%d", i + 1);
		model_request_add_test(&req, name, "", 0, "ok", 2);
	}
	req.run_all_tests = run_all;
	cr_assert_eq(grade_plan_make(&p, &env, &req, err, sizeof err), 0, "%s", err);
	model_result_init(res);
	grade_tally_start(&t, &p, res);
	int n = 0;
	for (int i = 0; i < 3; i++) {
		struct run_result rr;
		struct grade_feedback fb;
		fake_run(&rr, RUN_OK, outs[i], 10 * (i + 1));
		enum sub_status st = grade_judge_test(&p, i, &rr, &fb, err, sizeof err);
		n++;
		bool stop = grade_tally_add(&t, &p, res, i, st, &rr, &fb);
		run_result_release(&rr);
		if (stop)
			break;
	}
	grade_tally_finish(&t, &p, res);
	grade_plan_release(&p);
	model_request_release(&req);
	return n;
}

Test(grade, first_failure_decides)
{
	static const char *const outs[3] = {"ok\n", "no\n", "nope\n"};
	struct grade_result res;
	cr_expect_eq(fold(false, outs, &res), 2, "stops at the first failure");
	cr_expect_eq(res.status, SUB_WRONG_ANSWER);
	cr_expect_eq(res.ntests, 2);
	cr_expect_eq(res.tests_total, 3);
	cr_expect_str_eq(res.out.buf, "no\n", "the deciding test's output");
	cr_expect_str_eq(res.feedback.got, "no");
	cr_expect_eq(res.run.time_ms, 20, "the worst of the tests run");
	model_result_release(&res);

	cr_expect_eq(fold(true, outs, &res), 3, "run_all_tests runs them all");
	cr_expect_eq(res.status, SUB_WRONG_ANSWER);
	cr_expect_str_eq(res.out.buf, "no\n", "still the first failure decides");
	cr_expect_eq(res.tests[2].status, SUB_WRONG_ANSWER);
	cr_expect_eq(res.run.time_ms, 30);
	model_result_release(&res);

	static const char *const good[3] = {"ok\n", "ok", "ok\n\n"};
	cr_expect_eq(fold(false, good, &res), 3);
	cr_expect_eq(res.status, SUB_ACCEPTED);
	cr_expect_str_eq(res.out.buf, "ok\n\n", "the last test speaks");
	cr_expect(!res.feedback.present);
	model_result_release(&res);
}

Test(grade, nothing_to_compare_is_completed)
{
	struct grade_request req;
	struct grade_plan p;
	struct grade_tally t;
	struct grade_result res;
	struct run_result rr;
	struct grade_feedback fb;
	char err[256] = "";
	base_request(&req);
	cr_assert_eq(grade_plan_make(&p, &env, &req, err, sizeof err), 0, "%s", err);
	model_result_init(&res);
	grade_tally_start(&t, &p, &res);
	fake_run(&rr, RUN_OK, "hi\n", 7);
	enum sub_status st = grade_judge_test(&p, 0, &rr, &fb, err, sizeof err);
	cr_expect_eq(st, SUB_COMPLETED);
	cr_expect(!grade_tally_add(&t, &p, &res, 0, st, &rr, &fb));
	run_result_release(&rr);
	grade_tally_finish(&t, &p, &res);
	cr_expect_eq(res.status, SUB_COMPLETED);
	res.language = strdup("python");
	char *s = render(&res);
	cr_expect_str_eq(s, "{\"status\":\"completed\",\"language\":\"python\",\"compile\":{"
			    "\"status\":\"ok\",\"output\":\"\",\"time_ms\":0},\"exit_code\":0,"
			    "\"signal\":null,\"time_ms\":7,\"wall_ms\":12,\"memory_kb\":1007,"
			    "\"stdout\":\"hi\\n\",\"stderr\":\"\",\"stdout_truncated\":false,"
			    "\"stderr_truncated\":false,\"feedback\":null}");
	free(s);
	model_result_release(&res);
	grade_plan_release(&p);
	model_request_release(&req);
}

Test(grade, render_shapes)
{
	static const char *const outs[3] = {"ok\n", "no\n", "nope\n"};
	struct grade_result res;
	fold(false, outs, &res);
	res.language = strdup("python");
	char *s = render(&res);
	cr_expect_str_eq(
	    s, "{\"status\":\"wrong_answer\",\"language\":\"python\",\"compile\":{\"status\":"
	       "\"ok\",\"output\":\"\",\"time_ms\":0},\"tests\":[{\"name\":\"t1\",\"status\":"
	       "\"accepted\",\"exit_code\":0,\"signal\":null,\"time_ms\":10,\"wall_ms\":15,"
	       "\"memory_kb\":1010},{\"name\":\"t2\",\"status\":\"wrong_answer\",\"exit_code\":0,"
	       "\"signal\":null,\"time_ms\":20,\"wall_ms\":25,\"memory_kb\":1020,\"feedback\":{"
	       "\"line\":1,\"column\":1,\"expected\":\"ok\",\"got\":\"no\",\"message\":"
	       "\"line 1, column 1: expected 'ok', got "
	       "'no'\"}}],\"exit_code\":0,\"signal\":null,\"time_ms\":20,\"wall_ms\":25,"
	       "\"memory_kb\":1020,\"stdout\":\"no\\n\",\"stderr\":\"\",\"stdout_truncated\":false,"
	       "\"stderr_truncated\":false,\"feedback\":{\"line\":1,\"column\":1,\"expected\":"
	       "\"ok\",\"got\":\"no\",\"message\":\"line 1, column 1: expected 'ok', got "
	       "'no'\"},\"tests_total\":3}");
	free(s);

	/* a compile error: status, language, compile */
	model_result_release(&res);
	res.status = SUB_COMPILE_ERROR;
	res.language = strdup("c");
	res.compile.ran = true;
	strbuf_addstr(&res.compile.output, "main.c:1: error\n\x01");
	res.compile.time_ms = 40;
	s = render(&res);
	cr_expect_str_eq(s, "{\"status\":\"compile_error\",\"language\":\"c\",\"compile\":{"
			    "\"status\":\"error\",\"output\":\"main.c:1: error\\n\\u0001\","
			    "\"time_ms\":40,\"wall_ms\":0,\"memory_kb\":0}}");
	free(s);

	/* the judge's own failure: status, language, message; nothing else */
	model_result_fail(&res, res.language, "cannot write '%s'", "x");
	s = render(&res);
	cr_expect_str_eq(s, "{\"status\":\"internal_error\",\"language\":\"c\",\"message\":"
			    "\"cannot write 'x'\"}");
	free(s);
	model_result_fail(&res, NULL, "stored request is not JSON");
	s = render(&res);
	cr_expect_str_eq(s, "{\"status\":\"internal_error\",\"message\":\"stored request is not "
			    "JSON\"}");
	free(s);
	model_result_release(&res);
}

/* Stored JSON (as an older binary wrote it) → typed → stored JSON again. */
Test(grade, plan_appends_args_to_the_run_argv)
{
	static char *run[] = {"/usr/bin/python3", "main.py", NULL};
	struct grade_request req;
	struct grade_plan p;
	char err[256] = "";
	langs_arr[0].run_argv = run;
	base_request(&req);
	model_request_add_arg(&req, "1");
	model_request_add_arg(&req, "two words");
	cr_assert_eq(grade_plan_make(&p, &env, &req, err, sizeof err), 0, "%s", err);
	cr_expect_str_eq(p.run_argv[0], "/usr/bin/python3");
	cr_expect_str_eq(p.run_argv[1], "main.py");
	cr_expect_str_eq(p.run_argv[2], "1");
	cr_expect_str_eq(p.run_argv[3], "two words");
	cr_expect_null(p.run_argv[4]);
	grade_plan_release(&p);
	model_request_release(&req);
	/* no args: the language's argv alone */
	base_request(&req);
	cr_assert_eq(grade_plan_make(&p, &env, &req, err, sizeof err), 0, "%s", err);
	cr_expect_str_eq(p.run_argv[1], "main.py");
	cr_expect_null(p.run_argv[2]);
	grade_plan_release(&p);
	model_request_release(&req);
	langs_arr[0].run_argv = NULL;
}

Test(grade, stored_request_round_trip)
{
	static const char *const rows[] = {
	    "{\"language\":\"python\",\"source\":\"print(1)\",\"stdin\":\"\",\"run_all_tests\":"
	    "false}",
	    "{\"language\":\"c\",\"source\":\"x\",\"tests\":[{\"name\":\"1\",\"stdin\":\"1\"},"
	    "{\"name\":\"b\",\"stdin\":\"\",\"expected_output\":\"2\"}],\"compare\":{\"mode\":"
	    "\"tokens\",\"case_sensitive\":true,\"space_change_sensitive\":false,"
	    "\"float_absolute_tolerance\":0.001,\"float_relative_tolerance\":0.5,"
	    "\"unordered_tokens\":false},\"limits\":{\"time_ms\":500,\"processes\":2},"
	    "\"run_all_tests\":true}",
	    "{\"language\":\"c\",\"source\":\"x\",\"files\":[{\"name\":\"u.h\",\"content\":\"int\"}"
	    "],"
	    "\"problem\":\"sum\",\"limits\":{},\"run_all_tests\":false}",
	    "{\"language\":\"python\",\"source\":\"x\",\"args\":[\"1\",\"a b\"],\"stdin\":\"\","
	    "\"run_all_tests\":false}",
	    "{\"language\":\"c\",\"source\":\"x\",\"tests\":[{\"name\":\"1\",\"stdin\":\"1\","
	    "\"expected_output\":\"2\",\"points\":2.5},{\"name\":\"2\",\"stdin\":\"\"}],"
	    "\"run_all_tests\":false}",
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		cJSON *in = cJSON_Parse(rows[i]);
		struct grade_request req;
		char err[256] = "";
		cr_assert_eq(model_request_load(in, &req, err, sizeof err), 0, "%s", err);
		cJSON *out = model_request_render(&req);
		char *s = cJSON_PrintUnformatted(out);
		cr_expect_str_eq(s, rows[i]);
		free(s);
		cJSON_Delete(out);
		cJSON_Delete(in);
		model_request_release(&req);
	}
}

Test(grade, stored_request_leniency_and_errors)
{
	struct grade_request req;
	char err[256] = "";
	/* float_tolerance sets both; a limit of the wrong type counts as absent */
	cJSON *in =
	    cJSON_Parse("{\"language\":\"c\",\"source\":\"x\",\"compare\":{\"mode\":"
			"\"tokens\",\"float_tolerance\":0.5},\"limits\":{\"time_ms\":\"9\","
			"\"memory_mb\":-3,\"wall_ms\":900},\"tests\":[],\"expected_output\":"
			"\"e\"}");
	cr_assert_eq(model_request_load(in, &req, err, sizeof err), 0, "%s", err);
	cr_expect_float_eq(req.cmp.float_abs_tol, 0.5, 1e-15);
	cr_expect_float_eq(req.cmp.float_rel_tol, 0.5, 1e-15);
	cr_expect_eq(req.limits.time_ms, 0);
	cr_expect_eq(req.limits.memory_mb, 0);
	cr_expect_eq(req.limits.wall_ms, 900);
	cr_expect_eq(req.ntests, 0, "an empty tests array is one run");
	cr_expect_str_eq(req.expected, "e");
	model_request_release(&req);
	cJSON_Delete(in);

	static const struct {
		const char *json, *err, *lang;
	} bad[] = {
	    {"{\"source\":\"x\"}", "request has no language", NULL},
	    {"{\"language\":\"c\"}", "request has no source", "c"},
	    {"{\"language\":\"c\",\"source\":\"x\",\"compare\":\"fuzzy\"}",
	     "unknown compare mode 'fuzzy'", "c"},
	    {"{\"language\":\"c\",\"source\":\"x\",\"files\":[{\"name\":\"a\"}]}",
	     "bad entry in files: 'a'", "c"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		in = cJSON_Parse(bad[i].json);
		cr_expect_eq(model_request_load(in, &req, err, sizeof err), -1);
		cr_expect_str_eq(err, bad[i].err);
		if (bad[i].lang)
			cr_expect_str_eq(req.language, bad[i].lang, "kept for the error result");
		model_request_release(&req);
		cJSON_Delete(in);
	}
}
