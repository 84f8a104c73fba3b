/* test_harness: the pure parts of function and test-code problems: the pass@k
 * estimator against hand-computed values, JSON comparison modes, record
 * parsing and folding into verdicts, harness generation, request validation
 * (judge/grading/passk.c, jsonval.c, funcgrade.c, harness*.c, request_func.c,
 * evalset.c), without a sandbox. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "judge/grading/evalset.h"
#include "judge/grading/funcgrade.h"
#include "judge/grading/harness.h"
#include "judge/grading/jsonval.h"
#include "judge/grading/lang.h"
#include "judge/grading/passk.h"
#include "judge/grading/request.h"
#include "judge/grading/request_func.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-12)

Test(passk, hand_computed)
{
	/* 1 - C(n-c, k) / C(n, k) */
	cr_assert(NEAR(passk_estimate(5, 1, 1), 0.2));
	cr_assert(NEAR(passk_estimate(5, 2, 2), 1.0 - 3.0 / 10.0));    /* C(3,2)/C(5,2) */
	cr_assert(NEAR(passk_estimate(10, 3, 5), 1.0 - 21.0 / 252.0)); /* C(7,5)/C(10,5) */
	cr_assert(NEAR(passk_estimate(5, 0, 3), 0.0));
	cr_assert(NEAR(passk_estimate(5, 5, 1), 1.0));
	cr_assert(NEAR(passk_estimate(5, 3, 3), 1.0)); /* n - c < k: every k-subset passes */
	/* large n: C(200, 100) overflows doubles' exact range, the product does not */
	double v = passk_estimate(200, 1, 100);
	cr_assert(NEAR(v, 0.5), "%.17g", v);
}

Test(passk, defined_and_report)
{
	int ns[] = {5, 5, 3};
	cr_assert(passk_defined(ns, 3, 3));
	cr_assert(!passk_defined(ns, 3, 4));
	cr_assert(!passk_defined(ns, 0, 1));
	struct evalset_sample s[] = {{"a", true}, {"a", false}, {"b", false}, {"b", false}};
	int ks[] = {1, 2, 10};
	cJSON *r = evalset_report(s, 4, ks, 3);
	const cJSON *pk = cJSON_GetObjectItem(r, "pass_at_k");
	cr_assert(NEAR(cJSON_GetObjectItem(pk, "1")->valuedouble, 0.25));
	cr_assert(NEAR(cJSON_GetObjectItem(pk, "2")->valuedouble, 0.5));
	cr_assert_null(cJSON_GetObjectItem(pk, "10"), "k > n is left out");
	const cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "problems"), 0);
	cr_assert_str_eq(cJSON_GetObjectItem(a, "task_id")->valuestring, "a");
	cr_assert_eq(cJSON_GetObjectItem(a, "n")->valueint, 2);
	cr_assert_eq(cJSON_GetObjectItem(a, "c")->valueint, 1);
	cJSON_Delete(r);
	int k[8];
	cr_assert_eq(evalset_parse_ks("1,10,100", k, 8), 3);
	cr_assert_eq(k[2], 100);
	cr_assert_eq(evalset_parse_ks("1,,2", k, 8), -1);
	cr_assert_eq(evalset_parse_ks("0", k, 8), -1);
	cr_assert_eq(evalset_parse_ks("", k, 8), -1);
}

static bool eq(const char *e, const char *g, double tol, bool unordered)
{
	struct jsonval_opts o;
	jsonval_opts_init(&o);
	o.abs_tol = o.rel_tol = tol;
	o.unordered = unordered;
	cJSON *a = cJSON_Parse(e), *b = cJSON_Parse(g);
	cr_assert(a && b, "%s / %s", e, g);
	bool r = jsonval_equal(a, b, &o);
	cJSON_Delete(a);
	cJSON_Delete(b);
	return r;
}

Test(jsonval, exact)
{
	cr_assert(eq("[0,1]", "[0,1]", -1, false));
	cr_assert(!eq("[0,1]", "[1,0]", -1, false));
	cr_assert(eq("1", "1.0", -1, false));
	cr_assert(!eq("1", "true", -1, false), "a bool is not a number");
	cr_assert(!eq("0", "false", -1, false));
	cr_assert(!eq("null", "0", -1, false));
	cr_assert(eq("null", "null", -1, false));
	cr_assert(!eq("\"1\"", "1", -1, false));
	cr_assert(eq("{\"a\":1,\"b\":[true]}", "{\"b\":[true],\"a\":1}", -1, false));
	cr_assert(!eq("{\"a\":1}", "{\"a\":1,\"b\":2}", -1, false));
	cr_assert(!eq("[[1,2],[3]]", "[[1,2],[3,4]]", -1, false));
	cr_assert(!eq("0.1", "0.10000001", -1, false));
}

Test(jsonval, tolerance_and_unordered)
{
	cr_assert(eq("3.14159265", "3.1415927", 1e-6, false));
	cr_assert(!eq("3.14159265", "3.1416", 1e-6, false));
	cr_assert(eq("1e9", "1000000001", 1e-6, false), "relative");
	cr_assert(eq("[0.5,[1.0]]", "[0.5000001,[0.9999999]]", 1e-6, false), "nested");
	cr_assert(eq("[0,1]", "[1,0]", -1, true));
	cr_assert(eq("[[1,2],[3]]", "[[3],[1,2]]", -1, true));
	cr_assert(!eq("[[1,2],[3]]", "[[3],[2,1]]", -1, true), "top level only");
	cr_assert(!eq("[1,1,2]", "[1,2,2]", -1, true), "a multiset");
	cr_assert(!eq("[1,2]", "[1,2,3]", -1, true));
	struct strbuf sb = STRBUF_INIT;
	cJSON *args = cJSON_Parse("[[2,7,11,15],9,\"x\"]");
	jsonval_show_args(&sb, args, 100);
	cr_assert_str_eq(sb.buf, "[2,7,11,15], 9, \"x\"");
	strbuf_reset(&sb);
	jsonval_show(&sb, cJSON_GetArrayItem(args, 0), 5);
	cr_assert_str_eq(sb.buf, "[2,7,...");
	strbuf_release(&sb);
	cJSON_Delete(args);
}

static struct grade_request fn_req(const char *tests)
{
	struct grade_request r;
	model_request_init(&r);
	model_set(&r.language, "python", 6);
	model_set(&r.source, "x", 1);
	r.source_len = 1;
	cJSON *t = cJSON_Parse(tests);
	model_request_set_function(&r, "twoSum", NULL, t);
	cJSON_Delete(t);
	return r;
}

#define N "0123456789abcdef01234567"

Test(funcgrade, records_and_verdicts)
{
	struct grade_request req = fn_req("[{\"args\":[[2,7,11,15],9],\"expected\":[0,1]},"
					  "{\"args\":[[3,2,4],6],\"expected\":[1,2]},"
					  "{\"args\":[[3,3],6],\"expected\":[0,1],\"hidden\":true},"
					  "{\"args\":[[1],1],\"expected\":[0,0]}]");
	const char out[] =
	    "noise\x1ejudge:" N " {\"i\":0,\"ok\":true,\"value\":[0,1],\"stdout\":\"hi\\n\"}\n"
	    /* a fake record without the nonce is not a record */
	    "\x1ejudge:ffff {\"i\":1,\"ok\":true,\"value\":[1,2]}\n"
	    "\x1ejudge:" N " {\"i\":1,\"ok\":true,\"value\":[2,1]}\n"
	    "\x1ejudge:" N " {\"i\":2,\"ok\":false,\"error\":{\"type\":\"KeyError\","
	    "\"message\":\"3\",\"line\":4}}\n";
	struct funcgrade_records r;
	funcgrade_records_parse(&r, out, sizeof out - 1, N, 4);
	cr_assert_not_null(r.calls[0]);
	cr_assert_not_null(r.calls[1]);
	cr_assert_not_null(r.calls[2]);
	cr_assert_null(r.calls[3]);
	cr_assert(strstr(r.stray.buf, "noise") && strstr(r.stray.buf, "ffff"));
	struct grade_result res;
	model_result_init(&res);
	funcgrade_fold_function(&req, &r, RUN_TIMEOUT, &res);
	cr_assert_eq(res.ntests, 4);
	cr_assert_eq(res.tests[0].status, SUB_ACCEPTED);
	cr_assert_str_eq(res.tests[0].output, "hi\n");
	cr_assert_eq(res.tests[1].status, SUB_WRONG_ANSWER);
	cr_assert_str_eq(res.tests[1].feedback.message,
			 "twoSum([3,2,4], 6) returned [2,1], expected [1,2]");
	cr_assert_eq(res.tests[2].status, SUB_RUNTIME_ERROR);
	cr_assert(strstr(res.tests[2].feedback.message, "KeyError: 3 (line 4)"));
	cr_assert(!strstr(res.tests[2].feedback.message, "[3,3]"), "hidden args stay hidden");
	cr_assert_eq(res.tests[3].status, SUB_TIMEOUT);
	cr_assert_eq(res.status, SUB_WRONG_ANSWER, "the first failure decides");
	model_result_release(&res);
	/* unordered compare accepts [2,1] */
	req.has_compare = true;
	compare_options_init(&req.cmp, CMP_UNORDERED);
	model_result_init(&res);
	funcgrade_fold_function(&req, &r, RUN_OK, &res);
	cr_assert_eq(res.tests[1].status, SUB_ACCEPTED);
	cr_assert_eq(res.tests[3].status, SUB_RUNTIME_ERROR, "exited early");
	cr_assert(strstr(res.tests[3].feedback.message, "exited before"));
	model_result_release(&res);
	funcgrade_records_release(&r);
	model_request_release(&req);
}

Test(funcgrade, test_code_needs_the_end_record)
{
	struct funcgrade_records r;
	struct grade_result res;
	char buf[600];
	const char ok[] = "x\x1ejudge:" N " {\"end\":true}\n";
	funcgrade_records_parse(&r, ok, sizeof ok - 1, N, 0);
	model_result_init(&res);
	funcgrade_fold_test_code(&r, RUN_OK, &res);
	cr_assert_eq(res.status, SUB_ACCEPTED);
	cr_assert_str_eq(funcgrade_eval_result(&res, buf, sizeof buf), "passed");
	model_result_release(&res);
	funcgrade_records_release(&r);
	/* printing a fake end record without the nonce: exited early */
	const char fake[] = "\x1ejudge:000 {\"end\":true}\n";
	funcgrade_records_parse(&r, fake, sizeof fake - 1, N, 0);
	model_result_init(&res);
	funcgrade_fold_test_code(&r, RUN_OK, &res);
	cr_assert_eq(res.status, SUB_WRONG_ANSWER);
	cr_assert_str_eq(funcgrade_eval_result(&res, buf, sizeof buf),
			 "failed: the program exited before its checks ended");
	model_result_release(&res);
	model_result_init(&res);
	funcgrade_fold_test_code(&r, RUN_TIMEOUT, &res);
	cr_assert_str_eq(funcgrade_eval_result(&res, buf, sizeof buf), "timed out");
	model_result_release(&res);
	funcgrade_records_release(&r);
	const char bad[] = "\x1ejudge:" N " {\"end\":false,\"error\":{\"type\":\"AssertionError\","
			   "\"message\":\"\",\"line\":9}}\n";
	funcgrade_records_parse(&r, bad, sizeof bad - 1, N, 0);
	model_result_init(&res);
	funcgrade_fold_test_code(&r, RUN_OK, &res);
	cr_assert_str_eq(funcgrade_eval_result(&res, buf, sizeof buf),
			 "failed: AssertionError (line 9)");
	model_result_release(&res);
	model_result_init(&res);
	funcgrade_fold_test_code(&r, RUN_RUNTIME_ERROR, &res);
	cr_assert_eq(res.status, SUB_RUNTIME_ERROR);
	cr_assert_str_eq(res.feedback.message, "AssertionError (line 9), then the program crashed");
	model_result_release(&res);
	funcgrade_records_release(&r);
}

/* A test-code run that ended badly is told whole: there is no call to name. */
Test(funcgrade, test_code_crash_and_limits_read_whole)
{
	struct funcgrade_records r;
	struct grade_result res;
	/* an atexit handler's os._exit(3) after the checks passed */
	const char ok[] = "\x1ejudge:" N " {\"end\":true}\n";
	funcgrade_records_parse(&r, ok, sizeof ok - 1, N, 0);
	model_result_init(&res);
	funcgrade_fold_test_code(&r, RUN_RUNTIME_ERROR, &res);
	cr_assert_eq(res.status, SUB_RUNTIME_ERROR);
	cr_assert_str_eq(res.feedback.message, "the program crashed after its checks passed");
	model_result_release(&res);
	funcgrade_records_release(&r);
	funcgrade_records_parse(&r, "", 0, N, 0);
	model_result_init(&res);
	funcgrade_fold_test_code(&r, RUN_RUNTIME_ERROR, &res);
	cr_assert_eq(res.status, SUB_RUNTIME_ERROR);
	cr_assert_str_eq(res.feedback.message, "the program crashed before its checks ended");
	model_result_release(&res);
	model_result_init(&res);
	funcgrade_fold_test_code(&r, RUN_TIMEOUT, &res);
	cr_assert_eq(res.status, SUB_TIMEOUT);
	cr_assert_str_eq(res.feedback.message, "the program did not end within the time limit");
	model_result_release(&res);
	model_result_init(&res);
	funcgrade_fold_test_code(&r, RUN_INTERNAL_ERROR, &res);
	cr_assert_eq(res.status, SUB_INTERNAL_ERROR);
	cr_assert(res.feedback.message[0] != ' ' && res.feedback.message[0] != ':');
	model_result_release(&res);
	funcgrade_records_release(&r);
}

/* The shipped languages: their harness keys are what is under test. */
static const struct lang_registry *shipped(void)
{
	static struct lang_registry reg;
	static bool loaded;
	if (!loaded) {
		char e[512];
		cr_assert_eq(lang_load_dir(&reg, "languages", e, sizeof e), 0, "%s", e);
		loaded = true;
	}
	return &reg;
}

static const struct lang *mk_lang(const char *name)
{
	const struct lang *l = lang_find(shipped(), name);
	cr_assert_not_null(l, "no language %s", name);
	return l;
}

Test(harness, generation)
{
	struct grade_request req =
	    fn_req("[{\"args\":[[2,7,11,15],9],\"expected\":[0,1]},{\"args\":[[],3000000000]}]");
	struct harness h;
	char err[256] = "";
	const struct lang *py = mk_lang("python"), *cpp = mk_lang("cpp"), *cs = mk_lang("csharp");
	const struct lang *c = mk_lang("c");
	cr_assert_eq(harness_make("languages/harness", py, &req, N, &h, err, sizeof err), 0, "%s",
		     err);
	cr_assert_str_eq(h.user_file, "solution.py");
	cr_assert(strstr(h.stdin_data.buf, "[[2,7,11,15],9]"));
	cr_assert(!strstr(h.stdin_data.buf, "expected") && !strstr(h.stdin_data.buf, "[0,1]"),
		  "expected values never reach the sandbox: %s", h.stdin_data.buf);
	harness_release(&h);
	/* C++: types inferred (3000000000 needs a long), literals in main */
	cr_assert_eq(harness_make("languages/harness", cpp, &req, N, &h, err, sizeof err), 0, "%s",
		     err);
	cr_assert(strstr(h.main_source.buf, "auto a0 = std::vector<int>{2,7,11,15};"), "%s",
		  h.main_source.buf + h.main_source.len - 400);
	cr_assert(strstr(h.main_source.buf, "auto a1 = 3000000000LL;"));
	cr_assert(strstr(h.main_source.buf, "#line 1 \"solution.cpp\"\nx\n"));
	cr_assert(strstr(h.main_source.buf, "return twoSum(a0, a1);"), "free function");
	cr_assert_null(h.user_file);
	harness_release(&h);
	cr_assert_eq(harness_make("languages/harness", cs, &req, N, &h, err, sizeof err), 0, "%s",
		     err);
	cr_assert(strstr(h.main_source.buf, "new object[] {new int[]{2,7,11,15}, 9L}") &&
		      strstr(h.main_source.buf, "new object[] {new int[]{}, 3000000000L}"),
		  "%s", h.main_source.buf + h.main_source.len - 300);
	harness_release(&h);
	cr_assert_eq(harness_make("languages/harness", c, &req, N, &h, err, sizeof err), -1);
	cr_assert(strstr(err, "not supported in c"), "%s", err);
	harness_release(&h);
	model_request_release(&req);
	/* a type the tests cannot give */
	req = fn_req("[{\"args\":[{\"a\":1}]}]");
	cr_assert_eq(harness_make("languages/harness", cpp, &req, N, &h, err, sizeof err), -1);
	cr_assert(strstr(err, "signature"), "%s", err);
	harness_release(&h);
	model_request_release(&req);
}

Test(harness, test_program)
{
	struct grade_request req;
	model_request_init(&req);
	model_set(&req.language, "python", 6);
	model_set(&req.source, "def f():\n    return 1\n", 22);
	req.source_len = 22;
	model_set(&req.test_code, "def check(c):\n    assert c() == 1\n", 34);
	model_set(&req.entry_point, "f", 1);
	struct harness h;
	char err[256];
	const struct lang *py = mk_lang("python");
	cr_assert_eq(harness_make("languages/harness", py, &req, N, &h, err, sizeof err), 0);
	cr_assert_str_eq(h.user_file, "program.py");
	cr_assert(strstr(h.user_source.buf, "return 1\n\n\ndef check(c):") &&
		      strstr(h.user_source.buf, "\ncheck(f)\n"),
		  "%s", h.user_source.buf);
	cr_assert_str_eq(h.stdin_data.buf, N "\n");
	harness_release(&h);
	model_request_release(&req);
}

/* The Python harnesses' end is written once (languages/drivers/python_ending.py,
 * which the warm runs' zygote imports too) and put in each by its include line:
 * every one of them, as read, holds all of it before the call of _end, and no
 * include line is left. */
Test(harness, shared_ending)
{
	struct strbuf ending = STRBUF_INIT, t = STRBUF_INIT;
	char err[256] = "";
	cr_assert_eq(strbuf_read_file(&ending, "languages/drivers/python_ending.py", 1 << 20), 0);
	cr_assert(strstr(ending.buf, "\n    _exit(code)\n"));
	const char *pys[] = {"function.py", "testcode.py", "exec.py"};
	for (size_t i = 0; i < sizeof pys / sizeof *pys; i++) {
		strbuf_reset(&t);
		cr_assert_eq(
		    harness_read_template("languages/harness", pys[i], &t, err, sizeof err), 0,
		    "%s", err);
		const char *at = strstr(t.buf, ending.buf);
		cr_expect(at && !strstr(at + 1, ending.buf), "%s: python_ending.py once", pys[i]);
		cr_expect(at && strstr(at + ending.len, "\n_main()\n_end()\n"), "%s: then the end",
			  pys[i]);
		cr_expect(!strstr(t.buf, "\n" HARNESS_INCLUDE), "%s: an include line stayed",
			  pys[i]);
	}
	/* the harnesses as the runs get them */
	struct grade_request req = fn_req("[{\"args\":[1]}]");
	struct harness h;
	cr_assert_eq(
	    harness_make("languages/harness", mk_lang("python"), &req, N, &h, err, sizeof err), 0,
	    "%s", err);
	cr_expect(strstr(h.main_source.buf, ending.buf), "function.py as run");
	harness_release(&h);
	model_set(&req.test_code, "pass\n", 5);
	cr_assert_eq(
	    harness_make("languages/harness", mk_lang("python"), &req, N, &h, err, sizeof err), 0,
	    "%s", err);
	cr_expect(strstr(h.main_source.buf, ending.buf), "testcode.py as run");
	harness_release(&h);
	model_request_release(&req);
	/* an include line anywhere, the last one without its newline; a missing file */
	char dir[] = "/tmp/judge-harness.XXXXXX", path[64];
	cr_assert_not_null(mkdtemp(dir));
	const char *files[][2] = {{"t", "#judge:include a\nx\n#judge:include a"},
				  {"a", "A\n"},
				  {"u", "y\n#judge:include gone\n"}};
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
		FILE *f = fopen(path, "w");
		cr_assert_not_null(f);
		fputs(files[i][1], f);
		fclose(f);
	}
	strbuf_reset(&t);
	cr_assert_eq(harness_read_template(dir, "t", &t, err, sizeof err), 0, "%s", err);
	cr_expect_str_eq(t.buf, "A\nx\nA\n");
	strbuf_reset(&t);
	cr_expect_eq(harness_read_template(dir, "u", &t, err, sizeof err), -1);
	cr_expect(strstr(err, "/gone'"), "%s", err);
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
		unlink(path);
	}
	rmdir(dir);
	strbuf_release(&t);
	strbuf_release(&ending);
}

static int validate(const char *body, struct request_error *e, struct request_parsed *p)
{
	static struct judge_config cfg;
	config_defaults(&cfg);
	memset(e, 0, sizeof *e);
	return request_parse(&cfg, shipped(), REQ_EXECUTE_EXPECTED, body, strlen(body), p, e);
}

Test(request, function_forms)
{
	struct request_parsed p;
	struct request_error e;
	cr_assert_eq(validate("{\"language\":\"python\",\"source\":\"x\",\"function\":\"twoSum\","
			      "\"tests\":[{\"args\":[[2,7],9],\"expected\":[0,1]}],"
			      "\"compare\":\"unordered\"}",
			      &e, &p),
		     0, "%s", e.message);
	cr_assert_str_eq(p.req.func->name, "twoSum");
	cr_assert_eq(p.req.cmp.mode, CMP_UNORDERED);
	const cJSON *f = cJSON_GetObjectItem(p.request, "function");
	cr_assert(cJSON_IsArray(cJSON_GetObjectItem(f, "tests")), "normalized for the queue");
	struct grade_request back;
	char err[256];
	cr_assert_eq(model_request_load(p.request, &back, err, sizeof err), 0);
	cr_assert_str_eq(back.func->name, "twoSum");
	model_request_release(&back);
	request_parsed_release(&p);
	struct {
		const char *body, *code, *says;
	} bad[] = {
	    {"{\"language\":\"c\",\"source\":\"x\",\"function\":\"f\",\"tests\":[{\"args\":[]}]}",
	     "invalid_field", "not c"},
	    {"{\"language\":\"python\",\"source\":\"x\",\"function\":\"a "
	     "b\",\"tests\":[{\"args\":[]}]}",
	     "invalid_field", "function must be a name"},
	    {"{\"language\":\"python\",\"source\":\"x\",\"function\":\"f\"}", "missing_field",
	     "tests is required"},
	    {"{\"language\":\"python\",\"source\":\"x\",\"function\":\"f\",\"tests\":[{\"args\":1}]"
	     "}",
	     "missing_field", "args"},
	    {"{\"language\":\"python\",\"source\":\"x\",\"function\":\"f\",\"tests\":[{\"args\":[],"
	     "\"stdin\":\"\"}]}",
	     "invalid_field", "unknown field"},
	    {"{\"language\":\"python\",\"source\":\"x\",\"function\":\"f\",\"tests\":[{\"args\":[]}"
	     "]}",
	     "missing_field", "expected"},
	    {"{\"language\":\"python\",\"source\":\"x\",\"function\":\"f\",\"stdin\":\"1\","
	     "\"tests\":[{\"args\":[],\"expected\":1}]}",
	     "invalid_field", "stdin cannot go with function"},
	    {"{\"language\":\"python\",\"source\":\"x\",\"function\":\"f\",\"signature\":{"
	     "\"params\":"
	     "[\"int\"]},\"tests\":[{\"args\":[1,2],\"expected\":1}]}",
	     "invalid_field", "signature 1"},
	    {"{\"language\":\"python\",\"source\":\"x\",\"function\":\"f\",\"signature\":{"
	     "\"params\":"
	     "[\"float\"]},\"tests\":[{\"args\":[1],\"expected\":1}]}",
	     "invalid_field", "signature.params"},
	    {"{\"language\":\"cpp\",\"source\":\"x\",\"test_code\":\"check\"}", "invalid_field",
	     "supported in node and python, not cpp"},
	    {"{\"language\":\"python\",\"source\":\"x\",\"entry_point\":\"f\"}", "invalid_field",
	     "needs test_code"},
	    {"{\"language\":\"python\",\"source\":\"x\",\"test_code\":\"c\",\"entry_point\":"
	     "\"1f\"}",
	     "invalid_field", "entry_point"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(validate(bad[i].body, &e, &p), -1, "%s", bad[i].body);
		cr_assert_str_eq(e.code, bad[i].code, "%s: %s", bad[i].body, e.message);
		cr_assert(strstr(e.message, bad[i].says), "%s: %s", bad[i].body, e.message);
		cr_assert_eq(e.http_status, 422);
	}
	cr_assert(request_func_type_valid("int[][]"));
	cr_assert(!request_func_type_valid("int[]x"));
	cr_assert(!request_func_type_valid("map"));
}

Test(request, function_package)
{
	struct grade_request r;
	char err[256];
	model_request_init(&r);
	cr_assert_eq(request_func_package("problems", "two-sum", &r, err, sizeof err), 0, "%s",
		     err);
	cr_assert_str_eq(r.func->name, "twoSum");
	const cJSON *t0 = cJSON_GetArrayItem(r.func->tests, 0);
	cr_assert_str_eq(cJSON_GetObjectItem(t0, "name")->valuestring, "sample-1");
	cr_assert_null(cJSON_GetObjectItem(t0, "hidden"));
	const cJSON *last =
	    cJSON_GetArrayItem(r.func->tests, cJSON_GetArraySize(r.func->tests) - 1);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(last, "hidden")));
	cr_assert_eq(r.cmp.mode, CMP_UNORDERED);
	model_request_release(&r);
	model_request_init(&r);
	cr_assert_eq(request_func_package("problems", "hello", &r, err, sizeof err), -2);
	model_request_release(&r);
}

/* A load error of one of the language's harness_syntax_errors types is a
 * compile_error naming the language's own user file; another type is not. */
Test(harness, syntax_error_by_language)
{
	const char out[] =
	    "\x1ejudge:" N " {\"i\":-1,\"ok\":false,\"error\":{\"type\":\"SyntaxError\","
	    "\"message\":\"Unexpected token\",\"line\":3}}\n";
	const char *langs[][2] = {{"python", "  File \"solution.py\", line 3\n"},
				  {"node", "  File \"solution.js\", line 3\n"}};
	for (int i = 0; i < 2; i++) {
		struct funcgrade_records r;
		struct grade_result res;
		funcgrade_records_parse(&r, out, sizeof out - 1, N, 1);
		cr_assert_not_null(r.load_error);
		model_result_init(&res);
		funcgrade_syntax_error(mk_lang(langs[i][0]), &r, &res);
		cr_expect_eq(res.status, SUB_COMPILE_ERROR, "%s", langs[i][0]);
		cr_expect(!strncmp(res.compile.output.buf, langs[i][1], strlen(langs[i][1])), "%s",
			  res.compile.output.buf);
		model_result_release(&res);
		funcgrade_records_release(&r);
	}
	/* a harness that reports no syntax errors leaves the result alone */
	struct funcgrade_records r;
	struct grade_result res;
	funcgrade_records_parse(&r, out, sizeof out - 1, N, 1);
	model_result_init(&res);
	res.status = SUB_RUNTIME_ERROR;
	funcgrade_syntax_error(mk_lang("cpp"), &r, &res);
	cr_expect_eq(res.status, SUB_RUNTIME_ERROR);
	model_result_release(&res);
	funcgrade_records_release(&r);
}
