/* test_request: validation of client request bodies (judge/grading/request.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "judge/grading/lang.h"
#include "judge/grading/request.h"

static struct judge_config cfg;
static struct lang langs_arr[2];
static struct lang_registry langs = {.langs = langs_arr, .count = 2};
static char probdir[] = "/tmp/test_request.XXXXXX";

static void setup(void)
{
	char err[256];
	config_defaults(&cfg);
	cr_assert(mkdtemp(probdir));
	char path[512];
	snprintf(path, sizeof path, "%s/sum", probdir);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/sum/problem.yaml", probdir);
	FILE *f = fopen(path, "w");
	fputs("name: Sum\nlimits:\n  time_limit: 1\n", f);
	fclose(f);
	static const char *const files[] = {"data",
					    "data/sample",
					    "data/secret",
					    "data/sample/1.in",
					    "data/sample/1.ans",
					    "data/secret/1.in",
					    "data/secret/1.ans"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/sum/%s", probdir, files[i]);
		if (strchr(files[i], '.')) {
			f = fopen(path, "w");
			fputs("1\n", f);
			fclose(f);
		} else {
			mkdir(path, 0755);
		}
	}
	cr_assert(config_set(&cfg, "problems_dir", probdir, err, sizeof err) == 0);
	cr_assert(config_set(&cfg, "callback_hosts", "hooks.example, 127.0.0.1:9000", err,
			     sizeof err) == 0);
	cr_assert(config_set(&cfg, "max_source_kb", "1", err, sizeof err) == 0);
	cr_assert(config_set(&cfg, "max_stdin_kb", "1", err, sizeof err) == 0);
	cr_assert(config_set(&cfg, "max_tests", "3", err, sizeof err) == 0);
	cr_assert(config_set(&cfg, "max_body_kb", "16", err, sizeof err) == 0);
	langs_arr[0].name = "c";
	langs_arr[0].compile_options_at = 2;
	langs_arr[1].name = "python";
	langs_arr[1].compile_options_at = -1;
	static char *py_aliases[] = {"python3", NULL};
	langs_arr[1].aliases = py_aliases;
}

static void teardown(void)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", probdir);
	(void)!system(cmd);
	config_release(&cfg);
}

TestSuite(request, .init = setup, .fini = teardown);

/* Parses body for kind; returns the HTTP status (200 when valid) and keeps the code. */
static int check(enum request_kind kind, const char *body, char *code, struct request_parsed *keep)
{
	struct request_parsed p;
	struct request_error e = {0};
	int rc = request_parse(&cfg, &langs, kind, body, strlen(body), &p, &e);
	if (code)
		strcpy(code, rc < 0 ? e.code : "ok");
	if (rc == 0) {
		if (keep)
			*keep = p;
		else
			request_parsed_release(&p);
		return 200;
	}
	return e.http_status;
}

#define EXPECT(kind, body, status, code_)                                                          \
	do {                                                                                       \
		char c_[64];                                                                       \
		int s_ = check(kind, body, c_, NULL);                                              \
		cr_expect_eq(s_, status, "%s: status %d, want %d (%s)", body, s_, status, c_);     \
		cr_expect_str_eq(c_, code_, "%s: code %s, want %s", body, c_, code_);              \
	} while (0)

Test(request, valid_minimal_normalizes)
{
	struct request_parsed p;
	cr_assert_eq(
	    check(REQ_EXECUTE, "{\"language\":\"python\",\"source\":\"print(1)\"}", NULL, &p), 200);
	cJSON *r = p.request;
	cr_expect_str_eq(cJSON_GetObjectItem(r, "language")->valuestring, "python");
	cr_expect_str_eq(cJSON_GetObjectItem(r, "stdin")->valuestring, "");
	cr_expect_null(cJSON_GetObjectItem(r, "expected_output"));
	cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(r, "run_all_tests")));
	cr_expect_null(p.callback_url);
	request_parsed_release(&p);
}

Test(request, valid_full)
{
	struct request_parsed p;
	const char *body =
	    "{\"language\":\"c\",\"source\":\"int main(){}\",\"tests\":[{\"name\":\"a\","
	    "\"stdin\":\"1 2\",\"expected_output\":\"3\"},{\"stdin\":\"x\"}],"
	    "\"compare\":{\"mode\":\"tokens\",\"flags\":\"float_tolerance 1e-6 case_sensitive\"},"
	    "\"limits\":{\"time_ms\":1000,\"memory_mb\":64,\"wall_ms\":3000,\"output_kb\":10,"
	    "\"processes\":4},\"run_all_tests\":true,"
	    "\"callback_url\":\"http://hooks.example/done?x=1\"}";
	cr_assert_eq(check(REQ_EXECUTE_EXPECTED, body, NULL, &p), 200);
	cJSON *r = p.request;
	cJSON *tests = cJSON_GetObjectItem(r, "tests");
	cr_expect_eq(cJSON_GetArraySize(tests), 2);
	cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(tests, 1), "name")->valuestring,
			 "2");
	cJSON *cmp = cJSON_GetObjectItem(r, "compare");
	cr_expect_str_eq(cJSON_GetObjectItem(cmp, "mode")->valuestring, "tokens");
	cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(cmp, "case_sensitive")));
	cr_expect_float_eq(cJSON_GetObjectItem(cmp, "float_absolute_tolerance")->valuedouble, 1e-6,
			   1e-12);
	cr_expect_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "limits"), "time_ms")->valueint,
		     1000);
	cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(r, "run_all_tests")));
	cr_expect_str_eq(p.callback_url, "http://hooks.example/done?x=1");
	request_parsed_release(&p);
}

Test(request, problem)
{
	EXPECT(REQ_SUBMISSION, "{\"language\":\"c\",\"source\":\"x\",\"problem\":\"sum\"}", 200,
	       "ok");
	/* an id of the right form passes: whether the key has such a problem is
	 * the API's question, answered from the database (tests/integration/problems.sh) */
	EXPECT(REQ_SUBMISSION, "{\"language\":\"c\",\"source\":\"x\",\"problem\":\"nope\"}", 200,
	       "ok");
	EXPECT(REQ_SUBMISSION, "{\"language\":\"c\",\"source\":\"x\",\"problem\":\"../sum\"}", 422,
	       "invalid_field");
	EXPECT(REQ_SUBMISSION, "{\"language\":\"c\",\"source\":\"x\",\"problem\":\"/etc\"}", 422,
	       "invalid_field");
	EXPECT(REQ_SUBMISSION, "{\"language\":\"c\",\"source\":\"x\",\"problem\":\"Sum\"}", 422,
	       "invalid_field");
	EXPECT(REQ_SUBMISSION, "{\"language\":\"c\",\"source\":\"x\",\"problem\":\"\"}", 422,
	       "invalid_field");
	EXPECT(REQ_SUBMISSION, "{\"language\":\"c\",\"source\":\"x\",\"problem\":\"sum\\u002f..\"}",
	       422, "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"problem\":\"sum\"}", 422,
	       "invalid_field");
	EXPECT(REQ_SUBMISSION,
	       "{\"language\":\"c\",\"source\":\"x\",\"problem\":\"sum\",\"stdin\":\"1\"}", 422,
	       "invalid_field");
	EXPECT(REQ_SUBMISSION,
	       "{\"language\":\"c\",\"source\":\"x\",\"problem\":\"sum\",\"compare\":\"checker\"}",
	       200, "ok");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"compare\":\"checker\"}", 422,
	       "invalid_field");
}

Test(request, bad_json_and_encoding)
{
	EXPECT(REQ_EXECUTE, "", 400, "invalid_json");
	EXPECT(REQ_EXECUTE, "{", 400, "invalid_json");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",}", 400, "invalid_json");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\"} trailing", 400, "invalid_json");
	EXPECT(REQ_EXECUTE, "[1,2]", 422, "invalid_field");
	EXPECT(REQ_EXECUTE, "\"string\"", 422, "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"\xff\xfe\"}", 400,
	       "invalid_encoding");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"\xc0\xaf\"}", 400,
	       "invalid_encoding"); /* overlong '/' */
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"\xed\xa0\x80\"}", 400,
	       "invalid_encoding"); /* surrogate */
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"a\\u0000b\"}", 422, "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"a\\\\u0000b\"}", 200, "ok");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"\\ud800\"}", 400, "invalid_json");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"h\xc3\xa9llo \xf0\x9f\x98\x80\"}",
	       200, "ok");
	/* a NUL byte in the raw body */
	struct request_parsed p;
	struct request_error e;
	const char nul[] = "{\"language\":\"c\",\"source\":\"a\0b\"}";
	cr_expect_eq(request_parse(&cfg, &langs, REQ_EXECUTE, nul, sizeof nul - 1, &p, &e), -1);
	cr_expect_eq(e.http_status, 400);
}

/* a key twice in one object: cJSON would keep the first, most parsers the last */
Test(request, duplicate_keys)
{
	struct request_error e = {0};
	cJSON *in = NULL;
	const char *top = "{\"language\":\"c\",\"source\":\"x\",\"source\":\"y\"}";
	cr_expect_eq(request_parse_json(&cfg, top, strlen(top), &in, &e), -1);
	cr_expect_eq(e.http_status, 400);
	cr_expect_str_eq(e.code, "invalid_json");
	cr_expect(strstr(e.message, "\"source\""), "%s", e.message);
	EXPECT(REQ_EXECUTE,
	       "{\"language\":\"c\",\"source\":\"x\",\"tests\":[{\"stdin\":\"1\"},"
	       "{\"stdin\":\"2\",\"stdin\":\"3\"}]}",
	       400, "invalid_json");
	EXPECT(REQ_EXECUTE,
	       "{\"language\":\"c\",\"source\":\"x\",\"limits\":{\"time_ms\":1,"
	       "\"time_ms\":2}}",
	       400, "invalid_json");
	/* the same name in two objects, or differing in case, is fine */
	EXPECT(REQ_EXECUTE,
	       "{\"language\":\"c\",\"source\":\"x\",\"tests\":[{\"stdin\":\"1\"},"
	       "{\"stdin\":\"2\"}]}",
	       200, "ok");
	const char *cased = "{\"a\":1,\"A\":2,\"b\":{\"a\":1}}";
	cr_expect_eq(request_parse_json(&cfg, cased, strlen(cased), &in, &e), 0, "%s", e.message);
	cJSON_Delete(in);
}

Test(request, fields)
{
	EXPECT(REQ_EXECUTE, "{\"source\":\"x\"}", 422, "missing_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\"}", 422, "missing_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"\"}", 422, "missing_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"cobol\",\"source\":\"x\"}", 422, "unknown_language");
	EXPECT(REQ_EXECUTE, "{\"language\":5,\"source\":\"x\"}", 422, "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":[\"x\"]}", 422, "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"stdin\":5}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"bogus\":1}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"run_all_tests\":\"yes\"}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE_EXPECTED, "{\"language\":\"c\",\"source\":\"x\"}", 422, "missing_field");
	EXPECT(REQ_EXECUTE_EXPECTED,
	       "{\"language\":\"c\",\"source\":\"x\",\"expected_output\":\"\"}", 200, "ok");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"language\":\"python\"}", 400,
	       "invalid_json");
	EXPECT(REQ_EXECUTE, "{\"language\":null,\"source\":\"x\"}", 422, "missing_field");
}

Test(request, files_and_args)
{
	struct request_parsed p;
	const char *body = "{\"language\":\"python\",\"source\":\"import u\",\"files\":[{\"name\":"
			   "\"u.py\",\"content\":\"x = 1\"}],\"args\":[\"1\",\"a b\"]}";
	cr_assert_eq(check(REQ_EXECUTE, body, NULL, &p), 200);
	cr_expect_eq(p.req.nfiles, 1);
	cr_expect_str_eq(p.req.files[0].name, "u.py");
	cr_expect_eq(p.req.nargs, 2);
	cr_expect_str_eq(p.req.args[1], "a b");
	char *s = cJSON_PrintUnformatted(p.request);
	cr_expect_str_eq(s, "{\"language\":\"python\",\"source\":\"import u\",\"files\":[{\"name\":"
			    "\"u.py\",\"content\":\"x = 1\"}],\"args\":[\"1\",\"a b\"],\"stdin\":"
			    "\"\",\"run_all_tests\":false}");
	free(s);
	request_parsed_release(&p);
#define PY "{\"language\":\"python\",\"source\":\"x\","
	EXPECT(REQ_EXECUTE, PY "\"files\":{}}", 422, "invalid_field");
	EXPECT(REQ_EXECUTE, PY "\"files\":[1]}", 422, "invalid_field");
	EXPECT(REQ_EXECUTE, PY "\"files\":[{\"name\":\"../u.py\",\"content\":\"\"}]}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, PY "\"files\":[{\"name\":\".env\",\"content\":\"\"}]}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, PY "\"files\":[{\"name\":\"a/b\",\"content\":\"\"}]}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, PY "\"files\":[{\"name\":\"u\"}]}", 422, "missing_field");
	EXPECT(REQ_EXECUTE, PY "\"files\":[{\"name\":\"u\",\"content\":\"\",\"mode\":1}]}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE,
	       PY
	       "\"files\":[{\"name\":\"u\",\"content\":\"\"},{\"name\":\"u\",\"content\":\"\"}]}",
	       422, "invalid_field");
	EXPECT(REQ_EXECUTE, PY "\"args\":\"1 2\"}", 422, "invalid_field");
	EXPECT(REQ_EXECUTE, PY "\"args\":[1]}", 422, "invalid_field");
	EXPECT(REQ_EXECUTE, PY "\"args\":[]}", 200, "ok");
	char big[8192];
	int n = snprintf(big, sizeof big, PY "\"args\":[");
	for (int i = 0; i < 65; i++)
		n += snprintf(big + n, sizeof big - (size_t)n, "%s\"a\"", i ? "," : "");
	snprintf(big + n, sizeof big - (size_t)n, "]}");
	EXPECT(REQ_EXECUTE, big, 422, "invalid_field");
	n = snprintf(big, sizeof big, PY "\"args\":[\"");
	memset(big + n, 'a', 4097);
	snprintf(big + n + 4097, sizeof big - (size_t)n - 4097, "\"]}");
	EXPECT(REQ_EXECUTE, big, 413, "too_large");
#undef PY
}

Test(request, compiler_options)
{
	struct request_parsed p;
	const char *body =
	    "{\"language\":\"c\",\"source\":\"x\",\"compiler_options\":[\"-DN=1\",\"-O0\"]}";
	cr_assert_eq(check(REQ_EXECUTE, body, NULL, &p), 200);
	cr_assert_eq(p.req.ncompiler_options, 2);
	cr_expect_str_eq(p.req.compiler_options[1], "-O0");
	cr_expect_null(p.req.compiler_options[2], "the list is NULL-terminated");
	/* stored and read back by the worker */
	struct grade_request back;
	model_request_init(&back);
	char err[128];
	cr_assert_eq(model_request_load(p.request, &back, err, sizeof err), 0, "%s", err);
	cr_assert_eq(back.ncompiler_options, 2);
	cr_expect_str_eq(back.compiler_options[0], "-DN=1");
	model_request_release(&back);
	request_parsed_release(&p);
	/* python's compile command has no {options} */
	EXPECT(REQ_EXECUTE,
	       "{\"language\":\"python\",\"source\":\"x\",\"compiler_options\":[\"-O\"]}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"compiler_options\":\"-O2\"}",
	       422, "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"compiler_options\":[2]}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"compiler_options\":[]}", 200,
	       "ok");
}

Test(request, sizes)
{
	char body[8192];
	char big[1100];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = 0;
	snprintf(body, sizeof body, "{\"language\":\"c\",\"source\":\"%s\"}", big);
	EXPECT(REQ_EXECUTE, body, 413, "too_large");
	snprintf(body, sizeof body, "{\"language\":\"c\",\"source\":\"x\",\"stdin\":\"%s\"}", big);
	EXPECT(REQ_EXECUTE, body, 413, "too_large");
	snprintf(body, sizeof body,
		 "{\"language\":\"c\",\"source\":\"x\",\"tests\":[{\"expected_output\":\"%s\"}]}",
		 big);
	EXPECT(REQ_EXECUTE, body, 413, "too_large");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"tests\":[{},{},{},{}]}", 413,
	       "too_large");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"tests\":[{},{},{}]}", 200,
	       "ok");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"tests\":[]}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"tests\":{}}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"tests\":[5]}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"tests\":[{\"stdin\":1}]}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"tests\":[{\"x\":\"1\"}]}", 422,
	       "invalid_field");
	/* the body cap itself */
	static char huge[20000];
	memset(huge, ' ', sizeof huge - 1);
	huge[0] = '{';
	huge[sizeof huge - 2] = '}';
	EXPECT(REQ_EXECUTE, huge, 413, "too_large");
}

Test(request, limits)
{
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"limits\":{\"time_ms\":-1}}",
	       422, "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"limits\":{\"time_ms\":0}}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"limits\":{\"time_ms\":1e300}}",
	       422, "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"limits\":{\"time_ms\":20001}}",
	       422, "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"limits\":{\"time_ms\":20000}}",
	       200, "ok");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"limits\":{\"time_ms\":1.5}}",
	       422, "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"limits\":{\"time_ms\":\"5\"}}",
	       422, "invalid_field");
	EXPECT(REQ_EXECUTE,
	       "{\"language\":\"c\",\"source\":\"x\",\"limits\":{\"memory_mb\":99999999}}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"limits\":{\"memory_mb\":4}}",
	       422, "invalid_field");
	EXPECT(REQ_EXECUTE,
	       "{\"language\":\"c\",\"source\":\"x\",\"limits\":{\"processes\":100000}}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"limits\":{\"output_kb\":-5}}",
	       422, "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"limits\":{\"disk\":5}}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"limits\":5}", 422,
	       "invalid_field");
}

Test(request, compare)
{
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"compare\":\"exact\"}", 200,
	       "ok");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"compare\":\"fuzzy\"}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"c\",\"source\":\"x\",\"compare\":5}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE,
	       "{\"language\":\"c\",\"source\":\"x\",\"compare\":{\"mode\":\"tokens\","
	       "\"flags\":[\"float_tolerance\",\"1e-6\"]}}",
	       200, "ok");
	EXPECT(REQ_EXECUTE,
	       "{\"language\":\"c\",\"source\":\"x\",\"compare\":{\"mode\":\"tokens\","
	       "\"flags\":\"no_such_flag\"}}",
	       422, "invalid_field");
	EXPECT(REQ_EXECUTE,
	       "{\"language\":\"c\",\"source\":\"x\",\"compare\":{\"mode\":\"tokens\","
	       "\"float_tolerance\":-1}}",
	       422, "invalid_field");
	EXPECT(REQ_EXECUTE,
	       "{\"language\":\"c\",\"source\":\"x\",\"compare\":{\"mode\":\"tokens\","
	       "\"case_sensitive\":true,\"float_absolute_tolerance\":0.5}}",
	       200, "ok");
}

Test(request, callback_url)
{
	struct request_error e;
	cr_expect_eq(request_callback_url_check("http://hooks.example/x", cfg.callback_hosts, &e),
		     0);
	cr_expect_eq(
	    request_callback_url_check("http://HOOKS.example:80/x", cfg.callback_hosts, &e), 0);
	cr_expect_eq(request_callback_url_check("http://127.0.0.1:9000/cb", cfg.callback_hosts, &e),
		     0);
	cr_expect_eq(request_callback_url_check("http://127.0.0.1:9001/cb", cfg.callback_hosts, &e),
		     -1);
	cr_expect_str_eq(e.code, "callback_not_allowed");
	cr_expect_eq(request_callback_url_check("http://evil.example/", cfg.callback_hosts, &e),
		     -1);
	cr_expect_eq(request_callback_url_check("http://hooks.example.evil.example/",
						cfg.callback_hosts, &e),
		     -1);
	cr_expect_eq(request_callback_url_check("http://hooks.example@evil.example/",
						cfg.callback_hosts, &e),
		     -1);
	/* https: the same allowlist; a host:port entry means 443 when no port is given */
	cr_expect_eq(request_callback_url_check("https://hooks.example/", cfg.callback_hosts, &e),
		     0);
	cr_expect_eq(
	    request_callback_url_check("https://127.0.0.1:9000/cb", cfg.callback_hosts, &e), 0);
	cr_expect_eq(request_callback_url_check("https://127.0.0.1/cb", cfg.callback_hosts, &e),
		     -1);
	cr_expect_eq(request_callback_url_check("https://h.example/x", "h.example:443", &e), 0);
	cr_expect_eq(request_callback_url_check("http://h.example/x", "h.example:443", &e), -1);
	cr_expect_eq(request_callback_url_check("https://evil.example/", cfg.callback_hosts, &e),
		     -1);
	cr_expect_str_eq(e.code, "callback_not_allowed");
	cr_expect_eq(request_callback_url_check("https://hooks.example@evil.example/",
						cfg.callback_hosts, &e),
		     -1);
	cr_expect_eq(request_callback_url_check("https://hooks.example:443@evil.example/",
						cfg.callback_hosts, &e),
		     -1);
	cr_expect_eq(request_callback_url_check("httpss://hooks.example/", cfg.callback_hosts, &e),
		     -1);
	cr_expect_eq(request_callback_url_check("file:///etc/passwd", cfg.callback_hosts, &e), -1);
	cr_expect_eq(request_callback_url_check("ftp://hooks.example/", cfg.callback_hosts, &e),
		     -1);
	cr_expect_eq(
	    request_callback_url_check("http://hooks.example:99999/", cfg.callback_hosts, &e), -1);
	cr_expect_eq(request_callback_url_check("http://hooks.example/a b", cfg.callback_hosts, &e),
		     -1);
	cr_expect_eq(request_callback_url_check("http://hooks.example/", "", &e), -1);
	cr_expect_str_eq(e.code, "callback_not_allowed");
	EXPECT(REQ_SUBMISSION,
	       "{\"language\":\"c\",\"source\":\"x\",\"callback_url\":\"http://evil.example/\"}",
	       422, "callback_not_allowed");
	char host[64], path[64];
	int port;
	cr_assert_eq(
	    request_url_split("http://a.b:81", host, sizeof host, &port, path, sizeof path), 0);
	cr_expect_str_eq(host, "a.b");
	cr_expect_eq(port, 81);
	cr_expect_str_eq(path, "/");
	cr_assert_eq(
	    request_url_split("HTTPS://A.b?q=1", host, sizeof host, &port, path, sizeof path), 0);
	cr_expect_str_eq(host, "a.b");
	cr_expect_eq(port, 443);
	cr_expect_str_eq(path, "/?q=1");
}

Test(request, problem_ids)
{
	cr_expect(request_problem_id_valid("two-sum"));
	cr_expect(request_problem_id_valid("a_1"));
	cr_expect(!request_problem_id_valid("-a"));
	cr_expect(!request_problem_id_valid("a/b"));
	cr_expect(!request_problem_id_valid(".."));
	cr_expect(!request_problem_id_valid("a.b"));
	cr_expect(!request_problem_id_valid("A"));
	cr_expect(!request_problem_id_valid(
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}

/* The normalized JSON (stored in submissions.request) for body, printed. */
static char *normalized(const char *body)
{
	struct request_parsed p;
	cr_assert_eq(check(REQ_SUBMISSION, body, NULL, &p), 200, "%s", body);
	char *s = cJSON_PrintUnformatted(p.request);
	request_parsed_release(&p);
	return s;
}

Test(request, normalized_json_keeps_its_shape)
{
	/* rows queued by older binaries look like this: the shape must not change */
	static const struct {
		const char *body, *want;
	} cases[] = {
	    {"{\"language\":\"python\",\"source\":\"print(1)\"}",
	     "{\"language\":\"python\",\"source\":\"print(1)\",\"stdin\":\"\",\"run_all_tests\":"
	     "false}"},
	    {"{\"language\":\"c\",\"source\":\"x\",\"expected_output\":\"3\",\"compare\":"
	     "\"tokens\","
	     "\"limits\":{},\"run_all_tests\":true}",
	     "{\"language\":\"c\",\"source\":\"x\",\"stdin\":\"\",\"expected_output\":\"3\","
	     "\"compare\":{\"mode\":\"tokens\",\"case_sensitive\":false,"
	     "\"space_change_sensitive\":false,\"unordered_tokens\":false},\"limits\":{},"
	     "\"run_all_tests\":true}"},
	    {"{\"run_all_tests\":null,\"limits\":{\"processes\":2,\"time_ms\":500},"
	     "\"tests\":[{\"stdin\":\"1\"},{\"name\":\"b\",\"expected_output\":\"2\"}],"
	     "\"source\":\"x\",\"language\":\"c\",\"compare\":{\"mode\":\"unordered\","
	     "\"flags\":\"unordered_tokens\",\"float_relative_tolerance\":0.5}}",
	     "{\"language\":\"c\",\"source\":\"x\",\"tests\":[{\"name\":\"1\",\"stdin\":\"1\"},"
	     "{\"name\":\"b\",\"stdin\":\"\",\"expected_output\":\"2\"}],"
	     "\"compare\":{\"mode\":\"unordered\",\"case_sensitive\":false,"
	     "\"space_change_sensitive\":false,\"float_relative_tolerance\":0.5,"
	     "\"unordered_tokens\":true},\"limits\":{\"time_ms\":500,\"processes\":2},"
	     "\"run_all_tests\":false}"},
	    {"{\"language\":\"c\",\"source\":\"x\",\"problem\":\"sum\"}",
	     "{\"language\":\"c\",\"source\":\"x\",\"problem\":\"sum\",\"run_all_tests\":false}"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = normalized(cases[i].body);
		cr_expect_str_eq(got, cases[i].want, "case %zu", i);
		free(got);
	}
}

Test(request, typed_request)
{
	struct request_parsed p;
	const char *body =
	    "{\"language\":\"c\",\"source\":\"int main(){}\",\"tests\":[{\"name\":\"a\","
	    "\"stdin\":\"1 2\",\"expected_output\":\"3\"},{\"stdin\":\"x\"}],"
	    "\"compare\":{\"mode\":\"tokens\",\"flags\":\"float_tolerance 1e-6 case_sensitive\"},"
	    "\"limits\":{\"time_ms\":1000,\"memory_mb\":64,\"output_kb\":10},"
	    "\"run_all_tests\":true}";
	cr_assert_eq(check(REQ_EXECUTE_EXPECTED, body, NULL, &p), 200);
	const struct grade_request *r = &p.req;
	cr_expect_str_eq(r->language, "c");
	cr_expect_str_eq(r->source, "int main(){}");
	cr_expect_eq(r->source_len, strlen("int main(){}"));
	cr_expect_null(r->problem);
	cr_expect_null(r->stdin_data, "inline tests: no single run");
	cr_assert_eq(r->ntests, 2);
	cr_expect_str_eq(r->tests[0].name, "a");
	cr_expect_str_eq(r->tests[0].stdin_data, "1 2");
	cr_expect_eq(r->tests[0].stdin_len, 3);
	cr_expect_str_eq(r->tests[0].expected, "3");
	cr_expect_str_eq(r->tests[1].name, "2");
	cr_expect_null(r->tests[1].expected);
	cr_expect(r->has_compare);
	cr_expect_eq(r->cmp.mode, CMP_TOKENS);
	cr_expect(r->cmp.case_sensitive);
	cr_expect(!r->cmp.space_change_sensitive);
	cr_expect_float_eq(r->cmp.float_abs_tol, 1e-6, 1e-15);
	cr_expect_float_eq(r->cmp.float_rel_tol, 1e-6, 1e-15);
	cr_expect(r->has_limits);
	cr_expect_eq(r->limits.time_ms, 1000);
	cr_expect_eq(r->limits.memory_mb, 64);
	cr_expect_eq(r->limits.output_kb, 10);
	cr_expect_eq(r->limits.wall_ms, 0, "not given");
	cr_expect_eq(r->limits.processes, 0, "not given");
	cr_expect(r->run_all_tests);
	request_parsed_release(&p);

	cr_assert_eq(check(REQ_EXECUTE,
			   "{\"language\":\"python\",\"source\":\"s\",\"stdin\":\"in\"}", NULL, &p),
		     200);
	cr_expect_str_eq(p.req.stdin_data, "in");
	cr_expect_null(p.req.expected);
	cr_expect(!p.req.has_compare);
	cr_expect_eq(p.req.cmp.mode, CMP_LINES, "the default");
	cr_expect(!p.req.has_limits);
	request_parsed_release(&p);
}

/* The error message for body, or "" when it is valid. */
static const char *message_of(const char *body, char *buf, size_t len)
{
	struct request_parsed p;
	struct request_error e = {0};
	buf[0] = 0;
	if (request_parse(&cfg, &langs, REQ_EXECUTE, body, strlen(body), &p, &e) == 0)
		request_parsed_release(&p);
	else
		snprintf(buf, len, "%s", e.message);
	return buf;
}

Test(request, compare_keys_and_flags)
{
	struct request_parsed p;
	/* explicit keys apply after the flags, so they win */
	cr_assert_eq(
	    check(REQ_EXECUTE,
		  "{\"language\":\"c\",\"source\":\"x\",\"compare\":{\"mode\":\"tokens\","
		  "\"flags\":[\"float_tolerance\",\"0.5\"],\"float_absolute_tolerance\":0.25,"
		  "\"space_change_sensitive\":true,\"unordered_tokens\":true}}",
		  NULL, &p),
	    200);
	cr_expect_float_eq(p.req.cmp.float_abs_tol, 0.25, 1e-15);
	cr_expect_float_eq(p.req.cmp.float_rel_tol, 0.5, 1e-15);
	cr_expect(p.req.cmp.space_change_sensitive);
	cr_expect(!p.req.cmp.case_sensitive);
	cr_expect(p.req.cmp.unordered_tokens);
	request_parsed_release(&p);
	/* a false key does not undo a flag */
	cr_assert_eq(check(REQ_EXECUTE,
			   "{\"language\":\"c\",\"source\":\"x\",\"compare\":{\"mode\":\"tokens\","
			   "\"flags\":\"case_sensitive\",\"case_sensitive\":false}}",
			   NULL, &p),
		     200);
	cr_expect(p.req.cmp.case_sensitive);
	request_parsed_release(&p);

	char m[256];
	cr_expect_str_eq(message_of("{\"language\":\"c\",\"source\":\"x\",\"compare\":{"
				    "\"float_tolerance\":1e999}}",
				    m, sizeof m),
			 "compare: bad value 'inf' for 'float_tolerance' (a finite number >= 0)");
	/* the keys' types are checked before the flags are parsed, as always */
	cr_expect_str_eq(message_of("{\"language\":\"c\",\"source\":\"x\",\"compare\":{"
				    "\"flags\":\"bogus\",\"case_sensitive\":1}}",
				    m, sizeof m),
			 "compare.case_sensitive must be true or false");
	cr_expect_str_eq(message_of("{\"language\":\"c\",\"source\":\"x\",\"compare\":{"
				    "\"flags\":\"bogus\"}}",
				    m, sizeof m),
			 "compare: unknown comparison flag 'bogus'");
	cr_expect_str_eq(
	    message_of("{\"language\":\"c\",\"source\":\"x\",\"compare\":\"regex\","
		       "\"tests\":[{\"expected_output\":\"a\"},{\"expected_output\":\"(\"}]}",
		       m, sizeof m),
	    "tests[1].expected_output: bad regex: missing closing parenthesis at offset 1: '('");
}

/* Inline tests may carry points (partial credit); bad ones are named. */
Test(request, test_points)
{
	struct request_parsed p;
	cr_assert_eq(
	    check(REQ_EXECUTE_EXPECTED,
		  "{\"language\":\"c\",\"source\":\"x\",\"tests\":[{\"stdin\":\"1\","
		  "\"expected_output\":\"1\",\"points\":2.5},{\"expected_output\":\"2\"}]}",
		  NULL, &p),
	    200);
	cr_expect_float_eq(p.req.tests[0].points, 2.5, 1e-12);
	cr_expect_lt(p.req.tests[1].points, 0, "not given");
	request_parsed_release(&p);
	char m[256];
	cr_expect_str_eq(message_of("{\"language\":\"c\",\"source\":\"x\",\"tests\":[{"
				    "\"expected_output\":\"a\",\"points\":-1}]}",
				    m, sizeof m),
			 "tests[0].points must be a number from 0 to 1000000");
	cr_expect_str_eq(message_of("{\"language\":\"c\",\"source\":\"x\",\"tests\":[{"
				    "\"expected_output\":\"a\",\"points\":\"3\"}]}",
				    m, sizeof m),
			 "tests[0].points must be a number from 0 to 1000000");
}

/* SDKs and agent tool schemas say "code"; python3 and javascript are aliases. */
Test(request, code_and_language_aliases)
{
	struct request_parsed p;
	cr_assert_eq(
	    check(REQ_EXECUTE, "{\"language\":\"python3\",\"code\":\"print(1)\"}", NULL, &p), 200);
	cr_expect_str_eq(cJSON_GetObjectItem(p.request, "language")->valuestring, "python");
	cr_expect_str_eq(cJSON_GetObjectItem(p.request, "source")->valuestring, "print(1)");
	cr_expect_null(cJSON_GetObjectItem(p.request, "code"));
	request_parsed_release(&p);
	EXPECT(REQ_EXECUTE, "{\"language\":\"python\",\"code\":\"1\",\"source\":\"2\"}", 422,
	       "invalid_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"python\",\"code\":\"\"}", 422, "missing_field");
	EXPECT(REQ_EXECUTE, "{\"language\":\"python\"}", 422, "missing_field");
	/* an alias of a language this judge does not have is still unknown */
	EXPECT(REQ_EXECUTE, "{\"language\":\"javascript\",\"code\":\"1\"}", 422,
	       "unknown_language");
	cr_expect_eq(lang_lookup(&langs, "python3"), &langs_arr[1]);
	cr_expect_null(lang_lookup(&langs, "ruby"));
}
