/* test_evalset: the eval-set formats without a sandbox (judge/grading/evalset.c,
 * evformat*.c, evrun.c's verdict, request_func.c's eval form): how each set's
 * program is assembled from the repo's languages/evalsets facts, what each
 * rule decides on a run's facts, Python's float repr of the printouts, and the
 * eval form of a request through validation and the queue's JSON. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/config.h"
#include "common/jsonraw.h"
#include "common/md5.h"
#include "common/strbuf.h"
#include "judge/grading/evalset.h"
#include "judge/grading/evformat.h"
#include "judge/grading/evrun.h"
#include "judge/grading/lang.h"
#include "judge/grading/request.h"

static char *pyfloat(double d)
{
	static char out[64];
	struct strbuf sb = STRBUF_INIT;
	evformat_pyfloat(&sb, d);
	snprintf(out, sizeof out, "%s", sb.buf);
	strbuf_release(&sb);
	return out;
}

Test(evformat, python_float_repr)
{
	/* as Python's repr() prints them (checked with python3) */
	cr_assert_str_eq(pyfloat(0.5), "0.5");
	cr_assert_str_eq(pyfloat(1.0), "1.0");
	cr_assert_str_eq(pyfloat(0.0), "0.0");
	cr_assert_str_eq(pyfloat(161.0 / 164.0), "0.9817073170731707");
	cr_assert_str_eq(pyfloat(0.1 + 0.2), "0.30000000000000004");
	cr_assert_str_eq(pyfloat(1e-05), "1e-05");
	cr_assert_str_eq(pyfloat(0.0001), "0.0001");
	cr_assert_str_eq(pyfloat(1e16), "1e+16");
	cr_assert_str_eq(pyfloat(123456789012345.0), "123456789012345.0");
	cr_assert_str_eq(pyfloat(-2.5), "-2.5");
	cr_assert_str_eq(pyfloat(1.0 / 3.0), "0.3333333333333333");
}

/* A set loaded from the repo's languages/ (tests run from the repo root). */
static void load(struct evalset *s, const char *format, const char *problems_json)
{
	char err[300] = "";
	cJSON *p = problems_json ? cJSON_Parse(problems_json) : NULL;
	int rc = evalset_load(s, "languages", format, p, NULL, NULL, 0, err, sizeof err);
	cJSON_Delete(p);
	cr_assert_eq(rc, 0, "%s", err);
	s->default_language = "python"; /* languages/python.ini says default = yes */
}

static struct evalset_items expand(const struct evalset *s, const char *sample_json)
{
	struct evalset_items it = {0};
	cJSON *smp = cJSON_Parse(sample_json);
	cr_assert_not_null(smp);
	evalset_expand(s, smp, 0, &it);
	cJSON_Delete(smp);
	return it;
}

static bool has_option(const struct grade_request *r, const char *o)
{
	for (int i = 0; i < r->ncompiler_options; i++)
		if (!strcmp(r->compiler_options[i], o))
			return true;
	return false;
}

Test(evformat, humanevalx_cpp)
{
	struct evalset s;
	load(&s, NULL,
	     "[{\"task_id\":\"CPP/0\",\"prompt\":\"#include<stdio.h>\\n#include<vector>\\nint "
	     "f(){\\n\","
	     "\"test\":\"int main(){}\\n\",\"declaration\":\"int f(){\\n\",\"example_test\":\"\"},"
	     "{\"task_id\":\"CPP/162\",\"prompt\":\"int "
	     "g(){\\n\",\"test\":\"T\",\"declaration\":\"\"}]");
	cr_assert_str_eq(s.fmt->name, "humaneval-x", "told from the problems");
	struct evalset_items it = expand(
	    &s, "{\"task_id\":\"CPP/0\",\"prompt\":\"#include<stdio.h>\\n#include<vector>\\nint "
		"f(){\\n\",\"generation\":\"    return 1;\\n}\\n\"}");
	cr_assert_eq(it.n, 1);
	cr_assert_null(it.v[0].error);
	const struct grade_request *r = &it.v[0].req;
	cr_assert_str_eq(r->language, "cpp", "the task id names it");
	/* the standard includes the prompt lacks, an empty line, prompt, generation, test */
	cr_assert_str_eq(
	    r->source,
	    "#include<stdlib.h>\n#include<algorithm>\n#include<math.h>\n#include<string>\n"
	    "#include<climits>\n#include<cstring>\n#include<iostream>\n\n"
	    "#include<stdio.h>\n#include<vector>\nint f(){\n    return 1;\n}\n\nint "
	    "main(){}\n");
	cr_assert(has_option(r, "-std=c++11") && has_option(r, "-O0"));
	cr_assert(!has_option(r, "-lcrypto"), "only task 162 links OpenSSL");
	cr_assert_str_eq(r->eval->rule, "exit_zero");
	evalset_items_release(&it);
	it = expand(&s, "{\"task_id\":\"CPP/162\",\"generation\":\"}\"}");
	cr_assert(has_option(&it.v[0].req, "-lcrypto") && has_option(&it.v[0].req, "-lssl"));
	cr_assert(strstr(it.v[0].req.source, "int g(){\n}\nT"), "the problem's prompt when the "
								"sample has none");
	evalset_items_release(&it);
	/* what the harness cannot run fails alone, with a reason */
	it = expand(&s, "{\"task_id\":\"CPP/0\",\"completion\":\"x\"}");
	cr_assert_str_eq(it.v[0].error, "sample has no generation string");
	evalset_items_release(&it);
	it = expand(&s, "{\"task_id\":\"CPP/9\",\"generation\":\"x\"}");
	cr_assert_str_eq(it.v[0].error, "task_id not in the problems file");
	evalset_items_release(&it);
	evalset_release(&s);
}

Test(evformat, humanevalx_python_and_js)
{
	struct evalset s;
	load(&s, "humaneval-x",
	     "[{\"task_id\":\"Python/0\",\"prompt\":\"def f():\\n\",\"test\":\"check(f)\","
	     "\"declaration\":\"\"},{\"task_id\":\"JavaScript/0\",\"prompt\":\"const f = () => "
	     "{\\n\",\"test\":\"testF()\\n\",\"declaration\":\"\"},{\"task_id\":\"Go/0\","
	     "\"prompt\":\"\",\"test\":\"\",\"declaration\":\"\"}]");
	/* cut before the first non-empty line that starts neither with a space nor a tab */
	struct evalset_items it =
	    expand(&s, "{\"task_id\":\"Python/0\",\"prompt\":\"def f():\\n\",\"generation\":\"    "
		       "return 1\\n\\n\\tx = 2\\nprint(3)\\n    y\"}");
	const struct grade_request *r = &it.v[0].req;
	cr_assert_str_eq(r->language, "python");
	cr_assert_str_eq(r->eval->rule, "exec");
	const char *body = strstr(r->source, "def f():\n");
	cr_assert_not_null(body);
	cr_assert_str_eq(body, "def f():\n    return 1\n\n\tx = 2\ncheck(f)\n");
	cr_assert(!strncmp(r->source, "import math\nimport re\n", 22), "%s", r->source);
	cr_assert(strstr(r->source, "try:\n    import numpy\nexcept ImportError:\n"),
		  "numpy, which our Python lacks, is guarded");
	evalset_items_release(&it);
	it = expand(&s, "{\"task_id\":\"Python/0\",\"generation\":\"def g():\\n    pass\\n\"}");
	cr_assert(strstr(it.v[0].req.source, "def f():\n\ncheck(f)\n"), "an unindented start: "
									"nothing kept");
	evalset_items_release(&it);
	it = expand(&s, "{\"task_id\":\"JavaScript/0\",\"prompt\":\"const f = () => "
			"{\\n\",\"generation\":\"  return 1;\\n}\\n\"}");
	r = &it.v[0].req;
	cr_assert_str_eq(r->language, "node");
	cr_assert_str_eq(r->eval->rule, "silent");
	cr_assert_str_eq(r->source, "const f = () => {\n  return 1;\n}\n\ntestF()\n");
	evalset_items_release(&it);
	it = expand(&s, "{\"task_id\":\"Go/0\",\"generation\":\"\"}");
	cr_assert(it.v[0].error && strstr(it.v[0].error, "'Go' is not one the judge runs"));
	evalset_items_release(&it);
	evalset_release(&s);
}

Test(evformat, multiple)
{
	struct evalset s;
	char err[200];
	cJSON *first = cJSON_Parse("{\"name\":\"N\",\"language\":\"cpp\",\"tests\":\"\","
				   "\"completions\":[]}");
	cr_assert_eq(evalset_load(&s, "languages", NULL, NULL, first, NULL, 0, err, sizeof err), 0,
		     "%s", err);
	cJSON_Delete(first);
	cr_assert_str_eq(s.fmt->name, "multipl-e", "told from the first sample");
	struct evalset_items it = expand(
	    &s, "{\"name\":\"HumanEval_0_x\",\"language\":\"cpp\",\"prompt\":\"long f() "
		"{\\n\",\"tests\":\"}\\nint main() {}\\n\",\"stop_tokens\":[\"\\n}\"],"
		"\"completions\":[\"\\n    return 1;\",\"\\n    return 2;\\n}\\njunk\\n}\"]}");
	cr_assert_eq(it.n, 2, "one item per completion");
	cr_assert_str_eq(it.v[1].task_id, "HumanEval_0_x");
	cr_assert_eq(it.v[1].completion, 1);
	cr_assert_str_eq(it.v[0].req.source, "long f() {\n\n    return 1;\n}\nint main() {}\n");
	cr_assert_str_eq(it.v[1].req.source, "long f() {\n\n    return 2;\n}\nint main() {}\n",
			 "cut at the earliest stop token");
	cr_assert(has_option(&it.v[0].req, "-std=c++17") && has_option(&it.v[0].req, "-O0"));
	evalset_items_release(&it);
	it = expand(&s, "{\"name\":\"X\",\"language\":\"cs\",\"prompt\":\"\",\"tests\":\"\","
			"\"stop_tokens\":[],\"completions\":[\"x\"]}");
	const struct grade_request *r = &it.v[0].req;
	cr_assert_str_eq(r->language, "csharp");
	cr_assert(has_option(r, "-define:DEBUG"), "Debug.Assert compiled in");
	cr_assert_eq(r->eval->nstderr_fails, 2);
	cr_assert_str_eq(r->eval->stderr_fails[0], "System.Diagnostics.DefaultTraceListener.Fail");
	evalset_items_release(&it);
	it = expand(&s, "{\"name\":\"X\",\"language\":\"rkt\",\"prompt\":\"\",\"tests\":\"\","
			"\"completions\":[\"a\",\"b\"]}");
	cr_assert_eq(it.n, 2);
	cr_assert(it.v[0].error && it.v[1].error, "a language we do not run fails each");
	evalset_items_release(&it);
	evalset_release(&s);
}

Test(evformat, mbpp_full_and_sanitized)
{
	struct evalset s;
	load(&s, NULL,
	     "[{\"task_id\":12,\"text\":\"t\",\"code\":\"class Node: pass\","
	     "\"test_setup_code\":\"root = Node()\",\"test_list\":[\"assert a\",\"assert b\"],"
	     "\"challenge_test_list\":[\"assert c\"]},"
	     "{\"task_id\":21,\"prompt\":\"p\",\"code\":\"x\",\"test_imports\":[\"import math\"],"
	     "\"test_list\":[\"assert math.pi\"]}]");
	cr_assert_str_eq(s.fmt->name, "mbpp");
	cr_assert_not_null(evalset_find(&s, "12"), "MBPP's int task ids");
	struct evalset_items it =
	    expand(&s, "{\"task_id\":12,\"completion\":\"class Node: pass\"}");
	/* the setup uses the sample's class: after it */
	cr_assert_str_eq(it.v[0].req.source, "class Node: pass\nroot = Node()\nassert a\nassert b");
	cr_assert_str_eq(it.v[0].req.language, "python");
	cr_assert_str_eq(it.v[0].req.eval->rule, "exec");
	evalset_items_release(&it);
	it = expand(&s, "{\"task_id\":\"21\",\"completion\":\"def f(): pass\"}");
	cr_assert_str_eq(it.v[0].req.source, "import math\ndef f(): pass\nassert math.pi");
	evalset_items_release(&it);
	evalset_release(&s);
}

Test(evformat, humaneval_unchanged_and_unknown)
{
	struct evalset s;
	load(&s, NULL,
	     "[{\"task_id\":\"H/0\",\"prompt\":\"def f():\\n\",\"test\":\"def check(c): "
	     "pass\",\"entry_point\":\"f\"}]");
	cr_assert_str_eq(s.fmt->name, "human-eval");
	struct evalset_items it =
	    expand(&s, "{\"task_id\":\"H/0\",\"completion\":\"    return 1\"}");
	const struct grade_request *r = &it.v[0].req;
	cr_assert_str_eq(r->source, "def f():\n    return 1");
	cr_assert_str_eq(r->test_code, "def check(c): pass");
	cr_assert_str_eq(r->entry_point, "f");
	cr_assert_null(r->eval, "human-eval keeps the test-code harness");
	evalset_items_release(&it);
	evalset_release(&s);
	char err[300];
	cJSON *p = cJSON_Parse("[{\"task_id\":\"x\"}]");
	cr_assert_eq(evalset_load(&s, "languages", NULL, p, NULL, NULL, 0, err, sizeof err), -1);
	cr_assert(strstr(err, "no format the judge knows"), "%s", err);
	evalset_release(&s);
	cr_assert_eq(evalset_load(&s, "languages", "nope", p, NULL, NULL, 0, err, sizeof err), -1);
	cr_assert(strstr(err, "unknown format 'nope'"), "%s", err);
	evalset_release(&s);
	cJSON_Delete(p);
}

static struct run_result rr_of(enum run_status st, int code, const char *out, const char *err)
{
	struct run_result r;
	run_result_init(&r);
	r.status = st;
	r.exit_code = code;
	strbuf_addstr(&r.out, out);
	strbuf_addstr(&r.err, err);
	return r;
}

Test(evrun, verdicts)
{
	struct grade_feedback fb;
	char *fails[] = {"Unhandled Exception"};
	struct {
		enum evrun_rule rule;
		enum run_status st;
		int code;
		const char *out, *err;
		enum sub_status want;
	} c[] = {
	    /* HumanEval-X JavaScript: any output fails, the exit code does not count */
	    {EVRUN_SILENT, RUN_OK, 0, "", "Assertion failed\n", SUB_WRONG_ANSWER},
	    {EVRUN_SILENT, RUN_OK, 0, "debug\n", "", SUB_WRONG_ANSWER},
	    {EVRUN_SILENT, RUN_RUNTIME_ERROR, 1, "", "", SUB_ACCEPTED},
	    {EVRUN_SILENT, RUN_OK, 0, "", "", SUB_ACCEPTED},
	    {EVRUN_SILENT, RUN_TIMEOUT, 0, "", "", SUB_TIMEOUT},
	    /* C++, MultiPL-E: the exit code; a stderr text of the set fails too */
	    {EVRUN_EXIT_ZERO, RUN_OK, 0, "noise", "noise", SUB_ACCEPTED},
	    {EVRUN_EXIT_ZERO, RUN_RUNTIME_ERROR, 134, "", "Assertion failed", SUB_RUNTIME_ERROR},
	    {EVRUN_EXIT_ZERO, RUN_OK, 0, "", "x Unhandled Exception y", SUB_WRONG_ANSWER},
	    {EVRUN_EXIT_ZERO, RUN_MEMORY_LIMIT, 0, "", "", SUB_MEMORY_LIMIT},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct run_result rr = rr_of(c[i].st, c[i].code, c[i].out, c[i].err);
		enum sub_status st = evrun_verdict(c[i].rule, &rr, fails, 1, &fb);
		cr_assert_eq(st, c[i].want, "case %zu: %s", i, status_name(st));
		cr_assert(st == SUB_ACCEPTED || st == SUB_TIMEOUT || st == SUB_MEMORY_LIMIT ||
			      (fb.present && fb.message[0]),
			  "case %zu: a failure says why", i);
		run_result_release(&rr);
	}
	enum evrun_rule r;
	cr_assert_eq(evrun_rule_parse("silent", &r), 0);
	cr_assert_eq(r, EVRUN_SILENT);
	cr_assert_eq(evrun_rule_parse("nope", &r), -1);
}

/* Parses body as the API does, with the repo's languages/. */
static int validate(const char *body, struct request_error *e, struct request_parsed *p)
{
	static struct judge_config cfg;
	static struct lang_registry langs;
	static bool loaded;
	char err[300] = "";
	if (!loaded) {
		config_defaults(&cfg);
		cr_assert_eq(lang_load_dir(&langs, "languages", err, sizeof err), 0, "%s", err);
		loaded = true;
	}
	memset(e, 0, sizeof *e);
	return request_parse(&cfg, &langs, REQ_SUBMISSION, body, strlen(body), p, e);
}

Test(evrun, request_form)
{
	struct request_parsed p;
	struct request_error e;
	cr_assert_eq(
	    validate("{\"language\":\"cpp\",\"source\":\"int main(){}\","
		     "\"compiler_options\":[\"-std=c++11\"],\"eval\":{\"rule\":\"exit_zero\","
		     "\"stderr_fails\":[\"boom\"]}}",
		     &e, &p),
	    0, "%s", e.message);
	const cJSON *ev = cJSON_GetObjectItem(p.request, "eval");
	cr_assert_str_eq(cJSON_GetObjectItem(ev, "rule")->valuestring, "exit_zero");
	cr_assert_null(cJSON_GetObjectItem(p.request, "stdin"), "no stdin in the queue's JSON");
	struct grade_request back;
	char err[256];
	cr_assert_eq(model_request_load(p.request, &back, err, sizeof err), 0);
	cr_assert_str_eq(back.eval->rule, "exit_zero");
	cr_assert_eq(back.eval->nstderr_fails, 1);
	cr_assert_str_eq(back.eval->stderr_fails[0], "boom");
	cr_assert_eq(back.ncompiler_options, 1);
	model_request_release(&back);
	request_parsed_release(&p);
	struct {
		const char *body, *says;
	} bad[] = {
	    {"{\"language\":\"python\",\"source\":\"x\",\"eval\":{\"rule\":\"nope\"}}",
	     "eval.rule"},
	    {"{\"language\":\"node\",\"source\":\"x\",\"eval\":{\"rule\":\"exec\"}}", "not node"},
	    {"{\"language\":\"python\",\"source\":\"x\",\"eval\":{\"rule\":\"exec\"},\"stdin\":"
	     "\"1\"}",
	     "stdin cannot go with eval"},
	    {"{\"language\":\"python\",\"source\":\"x\",\"eval\":{\"rule\":\"exec\",\"x\":1}}",
	     "unknown field"},
	    {"{\"language\":\"python\",\"source\":\"x\",\"eval\":{\"rule\":\"exit_zero\","
	     "\"stderr_fails\":[1]}}",
	     "stderr_fails"},
	    {"{\"language\":\"python\",\"source\":\"x\",\"eval\":{\"rule\":\"exec\"},"
	     "\"test_code\":\"t\"}",
	     "test_code cannot go with eval"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(validate(bad[i].body, &e, &p), -1, "%s", bad[i].body);
		cr_assert_eq(e.http_status, 422);
		cr_assert(strstr(e.message, bad[i].says), "%s: %s", bad[i].body, e.message);
	}
}

/* ---- LiveCodeBench ---- */

Test(evformat, lcb_unpickle_str)
{
	/* pickle.dumps("héllo", protocol=p) for p 2 (3 the same but for its byte), 4, 5 */
	static const unsigned char p2[] =
	    "\x80\x02\x58\x06\x00\x00\x00\x68\xc3\xa9\x6c\x6c\x6f\x71\x00\x2e";
	static const unsigned char p4[] =
	    "\x80\x04\x95\x0a\x00\x00\x00\x00\x00\x00\x00\x8c\x06\x68\xc3\xa9\x6c\x6c\x6f\x94\x2e";
	static const unsigned char p5[] =
	    "\x80\x05\x95\x0a\x00\x00\x00\x00\x00\x00\x00\x8c\x06\x68\xc3\xa9\x6c\x6c\x6f\x94\x2e";
	const unsigned char *v[] = {p2, p4, p5};
	size_t n[] = {sizeof p2 - 1, sizeof p4 - 1, sizeof p5 - 1};
	for (int i = 0; i < 3; i++) {
		struct strbuf sb = STRBUF_INIT;
		cr_assert_eq(evfmt_lcb_unpickle_str(v[i], n[i], &sb), 0, "pickle %d", i);
		cr_assert_str_eq(sb.buf, "h\xc3\xa9llo");
		strbuf_release(&sb);
	}
	/* an int (5), a str cut short, trailing bytes: not ours */
	struct strbuf sb = STRBUF_INIT;
	cr_assert_eq(evfmt_lcb_unpickle_str((const unsigned char *)"\x80\x04\x4b\x05\x2e", 5, &sb),
		     -1);
	cr_assert_eq(evfmt_lcb_unpickle_str(p4, n[1] - 4, &sb), -1);
	cr_assert_eq(evfmt_lcb_unpickle_str(p2, n[0] - 1, &sb), -1);
	strbuf_release(&sb);
}

/* base64(zlib(pickle(json.dumps([{"input": "2\n", "output": "4\n", "testtype": "stdin"}])))) */
#define LCB_PACKED                                                                                 \
	"eJxrYJlqwwABPRbR1UqZeQWlJUpWCkpGMXlKOgpK+aUlUAETiEBJanFJSWVBKkiouCQlM0+pNnaKHgCVcRRJ"

Test(evformat, lcb_tests)
{
	cJSON *t = NULL;
	char err[200] = "";
	cr_assert_eq(evfmt_lcb_tests(LCB_PACKED, &t, err, sizeof err), 0, "%s", err);
	cr_assert_eq(cJSON_GetArraySize(t), 1);
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(t, 0), "output")->valuestring,
			 "4\n");
	cJSON_Delete(t);
	cr_assert_eq(
	    evfmt_lcb_tests("[{\"input\": \"1\", \"output\": \"2\"}]", &t, err, sizeof err), 0);
	cJSON_Delete(t);
	cr_assert_eq(evfmt_lcb_tests("not base64 at all!", &t, err, sizeof err), -1);
	cr_assert(strstr(err, "neither JSON nor"), "%s", err);
	cr_assert_null(t);
	cr_assert_eq(evfmt_lcb_timeout_s(0), 6, "the runner's default");
	cr_assert_eq(evfmt_lcb_timeout_s(2500), 3, "whole seconds, rounded up");
}

Test(evformat, livecodebench)
{
	struct evalset s;
	load(&s, NULL,
	     "[{\"question_id\":\"abc1_a\",\"platform\":\"atcoder\",\"metadata\":\"{}\","
	     "\"public_test_cases\":\"[{\\\"input\\\": \\\"1\\\\n\\\", \\\"output\\\": "
	     "\\\"2\\\\n\\\", "
	     "\\\"testtype\\\": \\\"stdin\\\"}]\",\"private_test_cases\":\"" LCB_PACKED "\"},"
	     "{\"question_id\":\"3000\",\"platform\":\"leetcode\","
	     "\"metadata\":\"{\\\"func_name\\\": \\\"twoSum\\\"}\","
	     "\"public_test_cases\":\"[]\",\"private_test_cases\":\"[]\"}]");
	cr_assert_str_eq(s.fmt->name, "livecodebench");
	struct evalset_items it =
	    expand(&s, "{\"question_id\":\"abc1_a\",\"code_list\":[\"print(2)\",\"print(4)\"]}");
	cr_assert_eq(it.n, 2, "one item per code");
	cr_assert_eq(it.v[1].completion, 1);
	cr_assert_str_eq(it.v[0].req.eval->rule, "lcb");
	cr_assert_str_eq(it.v[0].req.language, "python");
	cJSON *doc = cJSON_Parse(it.v[1].req.source);
	cr_assert_str_eq(cJSON_GetObjectItem(doc, "code")->valuestring, "print(4)");
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(doc, "fn_name")), "stdin tests");
	/* public first, then the private ones unpacked */
	cr_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "inputs"), 0)->valuestring,
			 "1\n");
	cr_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "outputs"), 1)->valuestring,
			 "4\n");
	cr_assert_eq(cJSON_GetObjectItem(doc, "timeout")->valueint, 6);
	/* the runner's global deadline: (6 + 1) x 2 tests + 5 s */
	cr_assert_eq(it.v[0].req.limits.wall_ms, 19000);
	cJSON_Delete(doc);
	evalset_items_release(&it);
	it = expand(&s, "{\"question_id\":\"3000\",\"code_list\":[\"class Solution: pass\"]}");
	doc = cJSON_Parse(it.v[0].req.source);
	cr_assert_str_eq(cJSON_GetObjectItem(doc, "fn_name")->valuestring, "twoSum");
	cJSON_Delete(doc);
	evalset_items_release(&it);
	it = expand(&s, "{\"question_id\":\"nope\",\"code_list\":[\"x\"]}");
	cr_assert_str_eq(it.v[0].error, "question_id not in the problems file");
	evalset_items_release(&it);
	evalset_release(&s);
	/* a problem whose tests cannot be read is refused with why */
	evalset_init(&s);
	char err[300] = "";
	cJSON *p = cJSON_Parse("[{\"question_id\":\"x\",\"public_test_cases\":\"[]\","
			       "\"private_test_cases\":\"@@@\",\"metadata\":\"{}\"}]");
	cr_assert_eq(evalset_load(&s, "languages", NULL, p, NULL, NULL, 0, err, sizeof err), -1);
	cr_assert(strstr(err, "private_test_cases"), "%s", err);
	cJSON_Delete(p);
	evalset_release(&s);
}

Test(evrun, lcb_verdicts)
{
	struct {
		const char *end;
		enum run_status run;
		enum sub_status want;
	} cases[] = {
	    {"{\"end\":true,\"lcb\":{\"results\":[true,true]}}", RUN_OK, SUB_ACCEPTED},
	    {"{\"end\":false,\"lcb\":{\"results\":[true,false]}}", RUN_OK, SUB_WRONG_ANSWER},
	    {"{\"end\":false,\"lcb\":{\"results\":[-2]}}", RUN_OK, SUB_WRONG_ANSWER},
	    {"{\"end\":false,\"lcb\":{\"results\":[true,-3]}}", RUN_OK, SUB_TIMEOUT},
	    {"{\"end\":false,\"lcb\":{\"results\":[-4]}}", RUN_OK, SUB_RUNTIME_ERROR},
	    /* no record: the worker died (sys.exit) or the global deadline passed */
	    {NULL, RUN_OK, SUB_WRONG_ANSWER},
	    {NULL, RUN_TIMEOUT, SUB_TIMEOUT},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cJSON *e = cases[i].end ? cJSON_Parse(cases[i].end) : NULL;
		cr_assert_eq(evrun_lcb_verdict(e, cases[i].run), cases[i].want, "case %zu", i);
		cJSON_Delete(e);
	}
	enum evrun_rule r;
	cr_assert_eq(evrun_rule_parse("lcb", &r), 0);
	cr_assert_eq(r, EVRUN_LCB);
}

Test(evformat, evalplus)
{
	struct evalset s;
	load(&s, NULL,
	     "[{\"task_id\":\"HumanEval/0\",\"prompt\":\"def f(x):\\n\",\"entry_point\":\"f\","
	     "\"canonical_solution\":\"    return x\\n\",\"contract\":\"\",\"atol\":0,"
	     "\"base_input\":[[1]],\"plus_input\":[[2],[3]]},"
	     "{\"task_id\":\"Mbpp/2\",\"prompt\":\"'''x'''\",\"entry_point\":\"g\","
	     "\"canonical_solution\":\"def g(a): return a\",\"atol\":0.0001,"
	     "\"base_input\":[[[1,2]]],\"plus_input\":[]}]");
	cr_assert_str_eq(s.fmt->name, "evalplus", "told from base_input and plus_input");
	struct evalset_items it =
	    expand(&s, "{\"task_id\":\"HumanEval/0\",\"completion\":\"    return -x\\n\"}");
	cr_assert_eq(it.n, 1);
	cr_assert_str_eq(it.v[0].req.eval->rule, "evalplus");
	cr_assert_str_eq(it.v[0].req.language, "python");
	cJSON *doc = cJSON_Parse(it.v[0].req.source);
	/* prompt + completion with no separator; the reference likewise */
	cr_assert_str_eq(cJSON_GetObjectItem(doc, "solution")->valuestring,
			 "def f(x):\n    return -x\n");
	cr_assert_str_eq(cJSON_GetObjectItem(doc, "reference")->valuestring,
			 "def f(x):\n    return x\n");
	cr_assert_str_eq(cJSON_GetObjectItem(doc, "dataset")->valuestring, "humaneval");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "plus_input")), 2);
	cr_assert_float_eq(cJSON_GetObjectItem(doc, "min_time_limit")->valuedouble, 4.0, 1e-9,
			   "EvalPlus's default minimum");
	cr_assert_float_eq(cJSON_GetObjectItem(doc, "time_limit_factor")->valuedouble, 4.0, 1e-9);
	cJSON_Delete(doc);
	evalset_items_release(&it);
	/* a solution is the whole program; Mbpp/ ids are the mbpp dataset */
	it = expand(&s, "{\"task_id\":\"Mbpp/2\",\"solution\":\"def g(a): return 1\"}");
	doc = cJSON_Parse(it.v[0].req.source);
	cr_assert_str_eq(cJSON_GetObjectItem(doc, "solution")->valuestring, "def g(a): return 1");
	cr_assert_str_eq(cJSON_GetObjectItem(doc, "dataset")->valuestring, "mbpp");
	cr_assert_float_eq(cJSON_GetObjectItem(doc, "atol")->valuedouble, 1e-4, 1e-12);
	cJSON_Delete(doc);
	evalset_items_release(&it);
	it = expand(&s, "{\"task_id\":\"HumanEval/0\"}");
	cr_assert_str_eq(it.v[0].error, "sample has neither solution nor completion");
	evalset_items_release(&it);
	evalset_release(&s);
	/* an input that is not a list of arguments is refused with why */
	evalset_init(&s);
	char err[300] = "";
	cJSON *p =
	    cJSON_Parse("[{\"task_id\":\"HumanEval/0\",\"prompt\":\"\",\"entry_point\":\"f\","
			"\"canonical_solution\":\"\",\"base_input\":[1],\"plus_input\":[]}]");
	cr_assert_eq(evalset_load(&s, "languages", NULL, p, NULL, NULL, 0, err, sizeof err), -1);
	cr_assert(strstr(err, "base_input: each input is a list of arguments"), "%s", err);
	cJSON_Delete(p);
	evalset_release(&s);
}

Test(evrun, evalplus_verdicts)
{
	struct {
		const char *end;
		enum run_status run;
		enum sub_status want;
	} cases[] = {
	    {"{\"end\":true,\"evalplus\":{\"base_status\":\"pass\",\"plus_status\":\"pass\"}}",
	     RUN_OK, SUB_ACCEPTED},
	    {"{\"end\":false,\"evalplus\":{\"base_status\":\"pass\",\"plus_status\":\"fail\"}}",
	     RUN_OK, SUB_WRONG_ANSWER},
	    /* the first set that did not pass decides */
	    {"{\"end\":false,\"evalplus\":{\"base_status\":\"fail\",\"plus_status\":\"timeout\"}}",
	     RUN_OK, SUB_WRONG_ANSWER},
	    {"{\"end\":false,\"evalplus\":{\"base_status\":\"timeout\",\"plus_status\":\"fail\"}}",
	     RUN_OK, SUB_TIMEOUT},
	    /* the reference failed: not the sample's doing */
	    {"{\"end\":false,\"error\":{\"type\":\"GroundTruthError\"}}", RUN_OK,
	     SUB_INTERNAL_ERROR},
	    {NULL, RUN_OK, SUB_WRONG_ANSWER},
	    {NULL, RUN_TIMEOUT, SUB_TIMEOUT},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cJSON *e = cases[i].end ? cJSON_Parse(cases[i].end) : NULL;
		cr_assert_eq(evrun_evalplus_verdict(e, cases[i].run), cases[i].want, "case %zu", i);
		cJSON_Delete(e);
	}
	enum evrun_rule r;
	cr_assert_eq(evrun_rule_parse("evalplus", &r), 0);
	cr_assert_eq(r, EVRUN_EVALPLUS);
}

Test(md5, known_digests)
{
	char hex[33];
	md5_hex("", 0, hex);
	cr_assert_str_eq(hex, "d41d8cd98f00b204e9800998ecf8427e");
	md5_hex("abc", 3, hex);
	cr_assert_str_eq(hex, "900150983cd24fb0d6963f7d28e17f72");
	/* 56 to 63 bytes: the length goes into a second padding block */
	char x[120];
	memset(x, 'x', sizeof x);
	md5_hex(x, 60, hex);
	cr_assert_str_eq(hex, "1198000c11968f9368e02d6da57ec147");
	md5_hex(x, 120, hex);
	cr_assert_str_eq(hex, "fb98667f98096de92620b64f46e1c5b5");
}

Test(jsonraw, spans_of_members_and_elements_as_written)
{
	const char *o =
	    "{ \"a\\\"\": [1, \"]\"], \"plus_input\" : [[123456789012345678901234567890],"
	    " [NaN], [-Infinity, \"x\\u0000y\"]], \"z\": {\"k\": null} }";
	struct jsonraw_span sp, *el = NULL;
	cr_assert(jsonraw_member(o, strlen(o), "plus_input", &sp));
	char *v = strndup(o + sp.at, sp.len);
	cr_assert_str_eq(v,
			 "[[123456789012345678901234567890], [NaN], [-Infinity, \"x\\u0000y\"]]");
	cr_assert_eq(jsonraw_elements(v, strlen(v), &el), 3);
	cr_assert_eq(strncmp(v + el[1].at, "[NaN]", el[1].len), 0);
	cr_assert_eq(strncmp(v + el[2].at, "[-Infinity, \"x\\u0000y\"]", el[2].len), 0);
	cr_assert_not(jsonraw_member(o, strlen(o), "k", &sp), "only the top level is searched");
	cr_assert(jsonraw_member(o, strlen(o), "z", &sp));
	cr_assert_eq(strncmp(o + sp.at, "{\"k\": null}", sp.len), 0);
	free(el);
	cr_assert_eq(jsonraw_elements("{}", 2, &el), -1);
	cr_assert_eq(jsonraw_elements(" [ ] ", 5, &el), 0);
	free(el);
	free(v);
}

Test(jsonraw, tame_keeps_every_offset_and_strings)
{
	const char *s =
	    "[NaN, -Infinity, \"NaN \\\" Infinity\", Infinity, \"a\\u0000b\", \"\\\\u0000\"]";
	bool nul = false;
	char *t = jsonraw_tame(s, strlen(s), NULL, &nul);
	cr_assert_not(nul, "no span: no NUL tamed");
	cr_assert_str_eq(
	    t, "[0  , 0        , \"NaN \\\" Infinity\", 0       , \"a\\u0000b\", \"\\\\u0000\"]");
	free(t);
	struct jsonraw_span all = {0, strlen(s)};
	t = jsonraw_tame(s, strlen(s), &all, &nul);
	cr_assert(nul);
	cr_assert_str_eq(
	    t, "[0  , 0        , \"NaN \\\" Infinity\", 0       , \"a\\u0001b\", \"\\\\u0000\"]",
	    "an escaped backslash before u0000 is no NUL");
	cJSON *j = cJSON_Parse(t);
	cr_assert(cJSON_IsArray(j));
	cJSON_Delete(j);
	free(t);
	cr_assert_null(jsonraw_tame("[1, \"NaN\"]", 10, &all, &nul));
	cr_assert_not(nul);
	/* NULs tamed within the span only (an API body's problems) */
	const char *o = "{\"a\": \"\\u0000\", \"p\": [\"\\u0000\"]}";
	struct jsonraw_span p;
	cr_assert(jsonraw_member(o, strlen(o), "p", &p));
	t = jsonraw_tame(o, strlen(o), &p, &nul);
	cr_assert(nul);
	cr_assert_str_eq(t, "{\"a\": \"\\u0000\", \"p\": [\"\\u0001\"]}");
	free(t);
}
