/* test_sessreq: the session endpoints' bodies and paths parsed into typed calls
 * (judge/service/session/sessreq.c). */
#include <criterion/criterion.h>
#include <string.h>

#include "common/config.h"
#include "judge/grading/lang.h"
#include "judge/service/session/sessreq.h"

#include <signal.h>
#include <stdio.h>

static struct judge_config cfg;
static struct lang_registry langs;

static void setup(void)
{
	char err[256];
	config_defaults(&cfg);
	cr_assert_eq(lang_load_dir(&langs, "languages", err, sizeof err), 0, "%s", err);
}

static void teardown(void)
{
	lang_registry_release(&langs);
	config_release(&cfg);
}

TestSuite(sessreq, .init = setup, .fini = teardown);

/* Parses text and runs sessreq_create on it; returns its result, e the error. */
static int create(const char *text, struct sessreq_create *out, struct request_error *e)
{
	cJSON *in = cJSON_Parse(text);
	cr_assert_not_null(in, "bad test JSON: %s", text);
	int rc = sessreq_create(&cfg, &langs, in, NULL, out, e);
	cJSON_Delete(in);
	return rc;
}

Test(sessreq, create_defaults_and_aliases)
{
	struct sessreq_create c;
	struct request_error e;
	cr_assert_eq(create("{\"language\": \"python3\"}", &c, &e), 0, "%s", e.message);
	cr_assert_str_eq(c.lang->name, "python");
	cr_assert_eq(c.idle_ttl_s, cfg.session_idle_ttl_s);
	cr_assert_eq(c.limits.memory_mb, cfg.session_memory_mb);
	cr_assert_eq(c.limits.disk_mb, cfg.session_disk_mb);
	/* the cell's CPU default is capped by the largest a request may ask */
	cr_assert_eq(c.limits.cpu_ms, cfg.max_time_limit_ms);
	cr_assert_eq(c.limits.wall_ms, c.limits.cpu_ms * cfg.wall_limit_factor + 1000);
	cr_assert_eq(
	    create("{\"language\": \"bash\", \"idle_ttl\": 30, \"limits\": "
		   "{\"memory_mb\": 128, \"cpu_ms\": 500, \"wall_ms\": 900, \"disk_mb\": 8}}",
		   &c, &e),
	    0, "%s", e.message);
	cr_assert_eq(c.idle_ttl_s, 30);
	cr_assert(c.limits.memory_mb == 128 && c.limits.cpu_ms == 500 && c.limits.wall_ms == 900 &&
		  c.limits.disk_mb == 8);
}

/* idle_action: judge.ini's session_idle_action unless the request says */
Test(sessreq, create_idle_action)
{
	struct sessreq_create c;
	struct request_error e;
	cr_assert_eq(create("{\"language\": \"python\"}", &c, &e), 0, "%s", e.message);
	cr_assert(!c.idle_pause, "the shipped default closes");
	cr_assert_eq(create("{\"language\": \"python\", \"idle_action\": \"pause\"}", &c, &e), 0,
		     "%s", e.message);
	cr_assert(c.idle_pause);
	char err[256];
	cr_assert_eq(config_set(&cfg, "session_idle_action", "pause", err, sizeof err), 0, "%s",
		     err);
	cr_assert_eq(create("{\"language\": \"python\"}", &c, &e), 0, "%s", e.message);
	cr_assert(c.idle_pause, "judge.ini's pause is the default");
	cr_assert_eq(create("{\"language\": \"python\", \"idle_action\": \"close\"}", &c, &e), 0,
		     "%s", e.message);
	cr_assert(!c.idle_pause, "the request's close wins");
	cr_assert_eq(config_set(&cfg, "session_idle_action", "sleep", err, sizeof err), -1);
	cr_assert(strstr(err, "close or pause"), "%s", err);
}

/* A session's CPU quota and budget: judge.ini's defaults (session_cpus whole
 * CPUs, no budget), fractions of a CPU up to max_session_cpus, a budget a
 * request may lower but not lift. */
Test(sessreq, create_cpus_and_budget)
{
	struct sessreq_create c;
	struct request_error e;
	cr_assert_eq(create("{\"language\": \"python\"}", &c, &e), 0, "%s", e.message);
	cr_assert_eq(c.limits.cpu_millis, cfg.session_cpus * 1000);
	cr_assert_eq(c.limits.cpu_budget_s, 0);
	cr_assert_eq(create("{\"language\": \"python\", \"limits\": {\"cpus\": 0.5, "
			    "\"cpu_budget_s\": 60}}",
			    &c, &e),
		     0, "%s", e.message);
	cr_assert_eq(c.limits.cpu_millis, 500);
	cr_assert_eq(c.limits.cpu_budget_s, 60);
	cr_assert_eq(create("{\"language\": \"python\", \"limits\": {\"cpus\": 2}}", &c, &e), 0,
		     "%s", e.message);
	cr_assert_eq(c.limits.cpu_millis, 2000);
	static const char *const refused[] = {
	    "{\"language\": \"python\", \"limits\": {\"cpus\": 3}}", /* max_session_cpus 2 */
	    "{\"language\": \"python\", \"limits\": {\"cpus\": 0.01}}",
	    "{\"language\": \"python\", \"limits\": {\"cpus\": \"1\"}}",
	    "{\"language\": \"python\", \"limits\": {\"cpu_budget_s\": 0}}",
	    "{\"language\": \"python\", \"limits\": {\"cpu_budget_s\": 1.5}}",
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		cr_assert_eq(create(refused[i], &c, &e), -1, "accepted: %s", refused[i]);
		cr_assert_str_eq(e.code, "invalid_field", "%s: %s", refused[i], e.code);
	}
	cfg.session_cpu_budget_s = 100;
	cr_assert_eq(create("{\"language\": \"python\"}", &c, &e), 0, "%s", e.message);
	cr_assert_eq(c.limits.cpu_budget_s, 100);
	cr_assert_eq(
	    create("{\"language\": \"python\", \"limits\": {\"cpu_budget_s\": 101}}", &c, &e), -1);
	cr_assert(strstr(e.message, "cpu_budget_s"), "%s", e.message);
}

/* A session's CPU weight and processes: judge.ini's weight unless asked (up
 * to max_session_cpu_weight), processes only as asked (else the sandbox's
 * default), each refused 422 past its cap. */
Test(sessreq, create_weight_and_processes)
{
	struct sessreq_create c;
	struct request_error e;
	cr_assert_eq(create("{\"language\": \"python\"}", &c, &e), 0, "%s", e.message);
	cr_assert_eq(c.limits.cpu_weight, cfg.session_cpu_weight);
	cr_assert_eq(c.limits.processes, 0);
	cr_assert_eq(create("{\"language\": \"python\", \"limits\": {\"cpu_weight\": 25, "
			    "\"processes\": 64}}",
			    &c, &e),
		     0, "%s", e.message);
	cr_assert(c.limits.cpu_weight == 25 && c.limits.processes == 64);
	char over[128];
	snprintf(over, sizeof over, "{\"language\": \"python\", \"limits\": {\"processes\": %ld}}",
		 cfg.max_session_processes + 1);
	cr_assert_eq(create(over, &c, &e), -1);
	cr_assert(e.http_status == 422 && strstr(e.message, "limits.processes"), "%d %s",
		  e.http_status, e.message);
	snprintf(over, sizeof over, "{\"language\": \"python\", \"limits\": {\"cpu_weight\": %ld}}",
		 cfg.max_session_cpu_weight + 1);
	cr_assert_eq(create(over, &c, &e), -1);
	cr_assert(e.http_status == 422 && strstr(e.message, "limits.cpu_weight"), "%d %s",
		  e.http_status, e.message);
	cr_assert_eq(create("{\"language\": \"python\", \"limits\": {\"processes\": 8}}", &c, &e),
		     -1, "fewer than a driver needs");
}

Test(sessreq, create_refusals)
{
	static const struct {
		const char *body;
		int status;
		const char *code;
	} cases[] = {
	    {"{}", 422, "missing_field"},
	    {"[]", 422, "invalid_field"},
	    {"{\"language\": \"cobol\"}", 422, "unknown_language"},
	    {"{\"language\": \"c\"}", 422, "unknown_language"}, /* no session driver */
	    {"{\"language\": 3}", 422, "invalid_field"},
	    {"{\"language\": \"python\", \"idle_ttl\": 0}", 422, "invalid_field"},
	    {"{\"language\": \"python\", \"idle_ttl\": 99999999}", 422, "invalid_field"},
	    {"{\"language\": \"python\", \"idle_ttl\": 1.5}", 422, "invalid_field"},
	    {"{\"language\": \"python\", \"limits\": 5}", 422, "invalid_field"},
	    {"{\"language\": \"python\", \"limits\": {\"memory_mb\": 1}}", 422, "invalid_field"},
	    {"{\"language\": \"python\", \"limits\": {\"memory_mb\": 1e300}}", 422,
	     "invalid_field"},
	    {"{\"language\": \"python\", \"limits\": {\"gpu\": 1}}", 422, "invalid_field"},
	    {"{\"language\": \"python\", \"limits\": {\"disk_mb\": 999999}}", 422, "invalid_field"},
	    {"{\"language\": \"python\", \"color\": \"red\"}", 422, "invalid_field"},
	    {"{\"language\": \"python\", \"idle_action\": \"sleep\"}", 422, "invalid_field"},
	    {"{\"language\": \"python\", \"idle_action\": true}", 422, "invalid_field"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sessreq_create c;
		struct request_error e;
		cr_assert_eq(create(cases[i].body, &c, &e), -1, "accepted: %s", cases[i].body);
		cr_assert_eq(e.http_status, cases[i].status, "%s: %d", cases[i].body,
			     e.http_status);
		cr_assert_str_eq(e.code, cases[i].code, "%s: %s", cases[i].body, e.code);
		cr_assert(strlen(e.message) > 0);
	}
}

static int execute(const char *text, struct sess_call *out, struct request_error *e)
{
	cJSON *in = cJSON_Parse(text);
	cr_assert_not_null(in, "bad test JSON: %s", text);
	int rc = sessreq_execute(&cfg, &langs, in, out, e);
	cJSON_Delete(in);
	return rc;
}

Test(sessreq, execute_typed)
{
	struct sess_call c;
	struct request_error e;
	cr_assert_eq(execute("{\"code\": \"x = 1\", \"stdin\": \"a\", \"timeout_ms\": 500, "
			     "\"expected_output\": \"1\", \"compare\": \"tokens\", "
			     "\"context\": \"c-2\"}",
			     &c, &e),
		     0, "%s", e.message);
	cr_assert_eq(c.kind, SCALL_EXECUTE);
	cr_assert_str_eq(c.exec.code, "x = 1");
	cr_assert_str_eq(c.exec.stdin_data, "a");
	cr_assert_eq(c.exec.timeout_ms, 500);
	cr_assert_str_eq(c.exec.expected, "1");
	cr_assert(c.exec.has_compare, "compare is parsed");
	cr_assert_eq(c.exec.cmp.mode, CMP_TOKENS);
	cr_assert_str_eq(c.context, "c-2");
	sess_call_release(&c);
	cr_assert_eq(execute("{\"code\": \"\"}", &c, &e), 0, "%s", e.message);
	cr_assert_null(c.exec.stdin_data);
	cr_assert_null(c.exec.expected);
	cr_assert_not(c.exec.has_compare);
	cr_assert_str_eq(c.context, "", "no context: the default");
	sess_call_release(&c);
}

Test(sessreq, execute_refusals)
{
	static const struct {
		const char *body;
		int status;
		const char *code;
	} cases[] = {
	    {"{}", 422, "missing_field"},
	    {"{\"code\": 1}", 422, "invalid_field"},
	    {"{\"code\": \"1\", \"timeout_ms\": 0}", 422, "invalid_field"},
	    {"{\"code\": \"1\", \"timeout_ms\": -5}", 422, "invalid_field"},
	    {"{\"code\": \"1\", \"stdin\": []}", 422, "invalid_field"},
	    {"{\"code\": \"1\", \"compare\": \"tokens\"}", 422, "missing_field"},
	    {"{\"code\": \"1\", \"expected_output\": \"\", \"compare\": \"nope\"}", 422,
	     "invalid_field"},
	    {"{\"code\": \"1\", \"lang\": \"python\"}", 422, "invalid_field"},
	    {"{\"code\": \"1\", \"language\": \"python\", \"context\": \"default\"}", 422,
	     "invalid_field"},
	    {"{\"code\": \"1\", \"language\": 3}", 422, "invalid_field"},
	    {"{\"code\": \"1\", \"context\": \"a/b\"}", 422, "invalid_field"},
	    {"{\"code\": \"1\", \"context\": 3}", 422, "invalid_field"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sess_call out;
		struct request_error e;
		cr_assert_eq(execute(cases[i].body, &out, &e), -1, "accepted: %s", cases[i].body);
		sess_call_release(&out);
		cr_assert_eq(e.http_status, cases[i].status, "%s: %d %s", cases[i].body,
			     e.http_status, e.message);
		cr_assert_str_eq(e.code, cases[i].code, "%s: %s", cases[i].body, e.code);
	}
}

Test(sessreq, execute_huge_code_is_413)
{
	size_t n = (size_t)cfg.max_source_kb * 1024 + 1;
	char *code = malloc(n + 1);
	memset(code, 'x', n);
	code[n] = 0;
	cJSON *in = cJSON_CreateObject();
	cJSON_AddStringToObject(in, "code", code);
	struct sess_call out;
	struct request_error e;
	cr_assert_eq(sessreq_execute(&cfg, &langs, in, &out, &e), -1);
	sess_call_release(&out);
	cr_assert_eq(e.http_status, 413);
	cr_assert_str_eq(e.code, "too_large");
	cJSON_Delete(in);
	free(code);
}

Test(sessreq, install_shape)
{
	static const char *const bad[] = {
	    "{}",
	    "{\"manager\": \"apt\", \"packages\": [\"x\"]}",
	    "{\"manager\": \"pip\"}",
	    "{\"manager\": \"pip\", \"packages\": []}",
	    "{\"manager\": \"pip\", \"packages\": \"numpy\"}",
	    "{\"manager\": \"pip\", \"packages\": [3]}",
	    "{\"manager\": \"pip\", \"packages\": [\"x\"], \"index\": \"y\"}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cJSON *in = cJSON_Parse(bad[i]);
		struct sess_call out;
		struct request_error e;
		cr_assert_eq(sessreq_install(in, &out, &e), -1, "accepted: %s", bad[i]);
		cr_assert_eq(e.http_status, 422, "%s", bad[i]);
		sess_call_release(&out);
		cJSON_Delete(in);
	}
}

Test(sessreq, paths)
{
	static const char *const good[] = {"a",	  "a/b.csv", "data/2024/x y.png", ".hidden", "a..b",
					   "...", "é.txt"};
	static const char *const bad[] = {"",	  "/etc/passwd", "..",	  "../x", "a/../../x",
					  "a/..", "./a",	 "a/./b", "a//b", "a/",
					  "a\\b", "a\nb",	 "\x01"};
	struct request_error e;
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		cr_assert(sessreq_path(good[i], false, &e), "refused '%s': %s", good[i], e.message);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_not(sessreq_path(bad[i], false, &e), "accepted '%s'", bad[i]);
		cr_assert_eq(e.http_status, 400);
		cr_assert_str_eq(e.code, "bad_path");
	}
	cr_assert(sessreq_path("", true, &e), "the folder itself, where it may be");
	char longp[1100];
	memset(longp, 'a', sizeof longp - 1);
	longp[sizeof longp - 1] = 0;
	cr_assert_not(sessreq_path(longp, false, &e));
	cr_assert_not(sessreq_path("a\xff", false, &e), "invalid UTF-8");
}

Test(sessreq, content_types_and_ids)
{
	cr_assert_str_eq(sessreq_content_type("out/chart.PNG"), "image/png");
	cr_assert_str_eq(sessreq_content_type("data.csv"), "text/csv");
	cr_assert_str_eq(sessreq_content_type("noext"), "application/octet-stream");
	cr_assert_str_eq(sessreq_content_type(".bashrc"), "application/octet-stream");
	cr_assert_str_eq(sessreq_content_type("dir.png/x"), "application/octet-stream");
	cr_assert(sessreq_id_valid("0d9d6129-0b90-4c99-b0fd-dec24de0c3c1"));
	cr_assert_not(sessreq_id_valid("0d9d6129-0b90-4c99-b0fd-dec24de0c3c"));
	cr_assert_not(sessreq_id_valid("0d9d6129x0b90-4c99-b0fd-dec24de0c3c1"));
	cr_assert_not(sessreq_id_valid("1"));
}

/* a file that a browser could run as a page is downloaded, never shown inline */
Test(sessreq, dispositions)
{
	static const char *const shown[] = {"a.png", "b.JPG", "c.gif",	"d.webp",
					    "e.txt", "f.csv", "g.json", "dir/h.log"};
	static const char *const saved[] = {"a.html", "b.svg", "c.xml",	 "d.pdf", "e.js",
					    "f.md",   "noext", "g.HTML", "h.zip"};
	for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++) {
		struct strbuf sb = STRBUF_INIT;
		sessreq_disposition(shown[i], &sb);
		cr_expect_str_eq(sb.buf, "inline", "%s", shown[i]);
		strbuf_release(&sb);
	}
	for (size_t i = 0; i < sizeof saved / sizeof saved[0]; i++) {
		struct strbuf sb = STRBUF_INIT;
		sessreq_disposition(saved[i], &sb);
		cr_expect(!strncmp(sb.buf, "attachment; filename*=UTF-8''", 29), "%s: %s", saved[i],
			  sb.buf);
		strbuf_release(&sb);
	}
	struct strbuf sb = STRBUF_INIT;
	sessreq_disposition("/v1/sessions/x/files/out dir/r\"\xc3\xa9;.html", &sb);
	cr_expect_str_eq(sb.buf, "attachment; filename*=UTF-8''r%22%C3%A9%3B.html");
	strbuf_release(&sb);
}

Test(sessreq, limits_json_round_trip)
{
	struct limits_session l = {256, 1000, 4000, 64, 1500, 30, 50, 200}, back;
	cJSON *j = sessreq_limits_json(&l);
	sessreq_limits_load(j, &back);
	cr_assert(!memcmp(&l, &back, sizeof l));
	cJSON_Delete(j);
}

/* install_check_package (runner/install/install.c) decides the names; here: that a
 * refused one is the client's 422 invalid_package, and good ones pass. */
Test(sessreq, install_names)
{
	static const char *const refused[] = {
	    "{\"manager\": \"pip\", \"packages\": [\"../x\"]}",
	    "{\"manager\": \"pip\", \"packages\": [\"--index-url=http://evil/\"]}",
	    "{\"manager\": \"pip\", \"packages\": [\"numpy\", \"-r req.txt\"]}",
	    "{\"manager\": \"pip\", \"packages\": [\"git+https://x/y.git\"]}",
	    "{\"manager\": \"npm\", \"packages\": [\"file:../x\"]}",
	    "{\"manager\": \"npm\", \"packages\": [\"http://x/y.tgz\"]}",
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		cJSON *in = cJSON_Parse(refused[i]);
		struct sess_call out;
		struct request_error e;
		cr_assert_eq(sessreq_install(in, &out, &e), -1, "accepted: %s", refused[i]);
		cr_assert_eq(e.http_status, 422);
		cr_assert_str_eq(e.code, "invalid_package", "%s: %s", refused[i], e.code);
		sess_call_release(&out);
		cJSON_Delete(in);
	}
	static const char *const good[] = {
	    "{\"manager\": \"pip\", \"packages\": [\"numpy\", \"pandas==2.2.2\", \"a[b]>=1\"]}",
	    "{\"manager\": \"npm\", \"packages\": [\"lodash@^4\", \"@types/node\"]}",
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		cJSON *in = cJSON_Parse(good[i]);
		struct sess_call out;
		struct request_error e;
		cr_assert_eq(sessreq_install(in, &out, &e), 0, "%s: %s", good[i], e.message);
		int n = 0;
		while (out.install.packages[n])
			n++;
		cr_assert_eq(n, cJSON_GetArraySize(cJSON_GetObjectItem(in, "packages")));
		cr_assert_str_eq(out.install.manager, good[i][13] == 'p' ? "pip" : "npm");
		sess_call_release(&out);
		cJSON_Delete(in);
	}
}

Test(sessreq, files)
{
	struct sess_call c;
	struct request_error e;
	cr_assert_eq(sessreq_file(SCALL_FILE_PUT, "a/b.txt", "xyz", 3, &c, &e), 0, "%s", e.message);
	cr_assert_str_eq(c.path, "a/b.txt");
	cr_assert_eq(c.body.len, 3);
	sess_call_release(&c);
	cr_assert_eq(sessreq_file(SCALL_FILE_LIST, "", NULL, 0, &c, &e), 0, "the folder's listing");
	sess_call_release(&c);
	cr_assert_eq(sessreq_file(SCALL_FILE_GET, "", NULL, 0, &c, &e), -1, "a read needs a file");
	cr_assert_str_eq(e.code, "bad_path");
	sess_call_release(&c);
}

/* "." parts are the folder itself on every front (HTTP, MCP tools, E2B envd
 * all come through sessreq_file); ".." and absolute paths stay refused */
Test(sessreq, file_paths_without_dot_parts)
{
	struct sess_call c;
	struct request_error e;
	const char *cases[][2] = {
	    {".", ""}, {"./", ""}, {"./data/", "data"}, {"a/./b.txt", "a/b.txt"}};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		cr_assert_eq(sessreq_file(SCALL_FILE_LIST, cases[i][0], NULL, 0, &c, &e), 0,
			     "%s: %s", cases[i][0], e.message);
		cr_assert_str_eq(c.path, cases[i][1], "%s", cases[i][0]);
		sess_call_release(&c);
	}
	const char *bad[] = {"../x", "a/../../x", "/etc/passwd", "a//b"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		cr_assert_eq(sessreq_file(SCALL_FILE_GET, bad[i], NULL, 0, &c, &e), -1, "%s",
			     bad[i]);
		cr_assert_str_eq(e.code, "bad_path", "%s", bad[i]);
		sess_call_release(&c);
	}
	cr_assert_eq(sessreq_file(SCALL_FILE_GET, "./", NULL, 0, &c, &e), -1,
		     "a read needs a file");
	sess_call_release(&c);
}

static int parse_with(int (*fn)(const struct lang_registry *, const cJSON *, struct sess_call *,
				struct request_error *),
		      const char *text, struct sess_call *out, struct request_error *e)
{
	cJSON *in = cJSON_Parse(text);
	cr_assert_not_null(in, "bad test JSON: %s", text);
	int rc = fn(&langs, in, out, e);
	cJSON_Delete(in);
	return rc;
}

Test(sessreq, contexts)
{
	struct sess_call c;
	struct request_error e;
	cr_assert_eq(parse_with(sessreq_context_create,
				"{\"language\": \"javascript\", "
				"\"cwd\": \"work/a\"}",
				&c, &e),
		     0, "%s", e.message);
	cr_assert_str_eq(c.ctx.language, "node", "aliases name the language");
	cr_assert_str_eq(c.path, "work/a");
	sess_call_release(&c);
	cr_assert_eq(parse_with(sessreq_context_create, "{}", &c, &e), 0, "%s", e.message);
	cr_assert_str_eq(c.ctx.language, "", "the session's language");
	cr_assert_str_eq(c.path, "");
	sess_call_release(&c);
	static const struct {
		const char *body, *code;
	} bad[] = {{"{\"language\": \"c\"}", "unknown_language"},
		   {"{\"language\": \"cobol\"}", "unknown_language"},
		   {"{\"cwd\": \"../x\"}", "bad_path"},
		   {"{\"cwd\": \"/etc\"}", "bad_path"},
		   {"{\"shell\": true}", "invalid_field"},
		   {"[]", "invalid_field"}};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(parse_with(sessreq_context_create, bad[i].body, &c, &e), -1,
			     "accepted %s", bad[i].body);
		cr_assert_str_eq(e.code, bad[i].code, "%s: %s", bad[i].body, e.code);
		sess_call_release(&c);
	}
	cr_assert_eq(sessreq_context(SCALL_CONTEXT_RESTART, "abc-1_2", &c, &e), 0);
	cr_assert_str_eq(c.context, "abc-1_2");
	sess_call_release(&c);
	cr_assert_eq(sessreq_context(SCALL_CONTEXT_REMOVE, "a.b", &c, &e), -1);
	cr_assert_eq(e.http_status, 404);
	sess_call_release(&c);
	cr_assert_not(sessreq_context_id_valid(""));
	char longid[SESS_ID_MAX + 1];
	memset(longid, 'a', SESS_ID_MAX);
	longid[SESS_ID_MAX] = 0;
	cr_assert_not(sessreq_context_id_valid(longid));
}

static int start(const char *text, struct sess_call *out, struct request_error *e)
{
	cJSON *in = cJSON_Parse(text);
	cr_assert_not_null(in, "bad test JSON: %s", text);
	int rc = sessreq_process_start(&cfg, in, out, e);
	cJSON_Delete(in);
	return rc;
}

Test(sessreq, process_start)
{
	struct sess_call c;
	struct request_error e;
	cr_assert_eq(start("{\"argv\": [\"bash\", \"-c\", \"echo $X\"], \"env\": {\"X\": \"1\"}, "
			   "\"cwd\": \"sub\", \"stdin\": true, \"timeout_ms\": 5000, "
			   "\"tag\": \"server\"}",
			   &c, &e),
		     0, "%s", e.message);
	cr_assert_str_eq(c.proc.argv[0], "bash");
	cr_assert_str_eq(c.proc.argv[2], "echo $X");
	cr_assert_null(c.proc.argv[3]);
	cr_assert_str_eq(c.proc.env[0], "X=1");
	cr_assert_str_eq(c.path, "sub");
	cr_assert(c.proc.stdin_open);
	cr_assert_eq(c.proc.timeout_ms, 5000);
	cr_assert_str_eq(c.proc.tag, "server");
	sess_call_release(&c);
	static const struct {
		const char *body, *code;
	} bad[] = {{"{}", "missing_field"},
		   {"{\"argv\": []}", "invalid_field"},
		   {"{\"argv\": \"ls\"}", "invalid_field"},
		   {"{\"argv\": [1]}", "invalid_field"},
		   {"{\"argv\": [\"\"]}", "invalid_field"},
		   {"{\"argv\": [\"ls\"], \"env\": {\"1X\": \"a\"}}", "invalid_field"},
		   {"{\"argv\": [\"ls\"], \"env\": {\"A=B\": \"a\"}}", "invalid_field"},
		   {"{\"argv\": [\"ls\"], \"env\": {\"A\": 1}}", "invalid_field"},
		   {"{\"argv\": [\"ls\"], \"env\": [\"A=1\"]}", "invalid_field"},
		   {"{\"argv\": [\"ls\"], \"cwd\": \"..\"}", "bad_path"},
		   {"{\"argv\": [\"ls\"], \"stdin\": 1}", "invalid_field"},
		   {"{\"argv\": [\"ls\"], \"timeout_ms\": 0}", "invalid_field"},
		   {"{\"argv\": [\"ls\"], \"shell\": true}", "invalid_field"}};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(start(bad[i].body, &c, &e), -1, "accepted %s", bad[i].body);
		cr_assert_str_eq(e.code, bad[i].code, "%s: %s %s", bad[i].body, e.code, e.message);
		sess_call_release(&c);
	}
}

Test(sessreq, process_calls)
{
	struct sess_call c;
	struct request_error e;
	cJSON *in = cJSON_Parse("{\"data\": \"aGk=\", \"encoding\": \"base64\"}");
	cr_assert_eq(sessreq_process(&cfg, SCALL_PROCESS_INPUT, "7", in, 0, &c, &e), 0, "%s",
		     e.message);
	cr_assert_eq(c.proc.pid, 7);
	cr_assert_eq(c.body.len, 2);
	cr_assert(!memcmp(c.body.buf, "hi", 2));
	sess_call_release(&c);
	cJSON_Delete(in);
	in = cJSON_Parse("{\"signal\": \"SIGTERM\"}");
	cr_assert_eq(sessreq_process(&cfg, SCALL_PROCESS_SIGNAL, "3", in, 0, &c, &e), 0);
	cr_assert_eq(c.proc.signal, SIGTERM);
	sess_call_release(&c);
	cJSON_Delete(in);
	in = cJSON_Parse("{\"signal\": 9}");
	cr_assert_eq(sessreq_process(&cfg, SCALL_PROCESS_SIGNAL, "3", in, 0, &c, &e), 0);
	cr_assert_eq(c.proc.signal, SIGKILL);
	sess_call_release(&c);
	cJSON_Delete(in);
	in = cJSON_Parse("{\"signal\": \"SIGSEGV\"}");
	cr_assert_eq(sessreq_process(&cfg, SCALL_PROCESS_SIGNAL, "3", in, 0, &c, &e), -1);
	cr_assert_str_eq(e.code, "invalid_field");
	sess_call_release(&c);
	cJSON_Delete(in);
	cr_assert_eq(sessreq_process(&cfg, SCALL_PROCESS_WAIT, "3", NULL, 2500, &c, &e), 0);
	cr_assert_eq(c.proc.timeout_ms, 2500);
	sess_call_release(&c);
	cr_assert_eq(sessreq_process(&cfg, SCALL_PROCESS_WAIT, "3", NULL, -1, &c, &e), -1);
	sess_call_release(&c);
	static const char *const pids[] = {"0", "-1", "x", "", "1x", "99999999999"};
	for (size_t i = 0; i < sizeof pids / sizeof pids[0]; i++) {
		cr_assert_eq(
		    sessreq_process(&cfg, SCALL_PROCESS_CLOSE_STDIN, pids[i], NULL, 0, &c, &e), -1,
		    "pid '%s'", pids[i]);
		cr_assert_eq(e.http_status, 404);
		sess_call_release(&c);
	}
	cr_assert_eq(sessreq_signal("int"), SIGINT);
	cr_assert_eq(sessreq_signal("15"), SIGTERM);
	cr_assert_eq(sessreq_signal("SIGCHLD"), 0);
	cr_assert_eq(sessreq_signal("11"), 0);
}

/* The MCP session tools' arguments, as their endpoints take them. */
Test(sessreq, tools)
{
	static const char *const sid = "0d9d6129-0b90-4c99-b0fd-dec24de0c3c1";
	struct sess_call c;
	struct request_error e;
	char id[37];
	char text[256];
	snprintf(text, sizeof text,
		 "{\"session_id\": \"%s\", \"path\": \"a.bin\", \"content\": \"AAEC\", "
		 "\"encoding\": \"base64\"}",
		 sid);
	cJSON *in = cJSON_Parse(text);
	cr_assert_eq(sessreq_tool(&cfg, &langs, SCALL_FILE_PUT, in, id, &c, &e), 0, "%s",
		     e.message);
	cr_assert_str_eq(id, sid);
	cr_assert_str_eq(c.path, "a.bin");
	cr_assert(c.body.len == 3 && !memcmp(c.body.buf, "\0\1\2", 3));
	sess_call_release(&c);
	cJSON_Delete(in);
	snprintf(text, sizeof text, "{\"session_id\": \"%s\", \"code\": \"1\", \"timeout_ms\": 9}",
		 sid);
	in = cJSON_Parse(text);
	cr_assert_eq(sessreq_tool(&cfg, &langs, SCALL_EXECUTE, in, id, &c, &e), 0, "%s", e.message);
	cr_assert(c.kind == SCALL_EXECUTE && c.exec.timeout_ms == 9 && !strcmp(c.exec.code, "1"));
	sess_call_release(&c);
	cJSON_Delete(in);
	static const struct {
		enum scall_kind kind;
		const char *args;
		int status;
		const char *code;
	} bad[] = {
	    {SCALL_CLOSE, "{}", 422, "missing_field"},
	    {SCALL_CLOSE, "{\"session_id\": \"12345\"}", 404, "not_found"},
	    {SCALL_FILE_PUT, "{\"session_id\": \"%s\", \"path\": \"x\"}", 422, "missing_field"},
	    {SCALL_FILE_PUT,
	     "{\"session_id\": \"%s\", \"path\": \"x\", \"content\": \"a\", "
	     "\"encoding\": \"hex\"}",
	     422, "invalid_field"},
	    {SCALL_FILE_PUT,
	     "{\"session_id\": \"%s\", \"path\": \"x\", \"content\": \"!!\", "
	     "\"encoding\": \"base64\"}",
	     422, "invalid_field"},
	    {SCALL_FILE_GET, "{\"session_id\": \"%s\"}", 400, "bad_path"},
	    {SCALL_EXECUTE, "{\"session_id\": \"%s\"}", 422, "missing_field"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		snprintf(text, sizeof text, bad[i].args, sid);
#pragma GCC diagnostic pop
		in = cJSON_Parse(text);
		cr_assert_eq(sessreq_tool(&cfg, &langs, bad[i].kind, in, id, &c, &e), -1, "%s",
			     text);
		cr_assert_eq(e.http_status, bad[i].status, "%s: %d", text, e.http_status);
		cr_assert_str_eq(e.code, bad[i].code, "%s: %s", text, e.code);
		sess_call_release(&c);
		cJSON_Delete(in);
	}
}
