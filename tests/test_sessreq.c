/* test_sessreq: the session endpoints' bodies and paths (judge/service/sessreq.c). */
#include <criterion/criterion.h>
#include <string.h>

#include "common/config.h"
#include "judge/grading/lang.h"
#include "judge/service/sessreq.h"

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

/* Parses text and runs sreq_create on it; returns its result, e the error. */
static int create(const char *text, struct sreq_create *out, struct req_error *e)
{
	cJSON *in = cJSON_Parse(text);
	cr_assert_not_null(in, "bad test JSON: %s", text);
	int rc = sreq_create(&cfg, &langs, in, out, e);
	cJSON_Delete(in);
	return rc;
}

Test(sessreq, create_defaults_and_aliases)
{
	struct sreq_create c;
	struct req_error e;
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
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sreq_create c;
		struct req_error e;
		cr_assert_eq(create(cases[i].body, &c, &e), -1, "accepted: %s", cases[i].body);
		cr_assert_eq(e.http_status, cases[i].status, "%s: %d", cases[i].body,
			     e.http_status);
		cr_assert_str_eq(e.code, cases[i].code, "%s: %s", cases[i].body, e.code);
		cr_assert(strlen(e.message) > 0);
	}
}

static int execute(const char *text, cJSON **out, struct req_error *e)
{
	cJSON *in = cJSON_Parse(text);
	cr_assert_not_null(in, "bad test JSON: %s", text);
	int rc = sreq_execute(&cfg, &langs, "python", in, out, e);
	cJSON_Delete(in);
	return rc;
}

Test(sessreq, execute_normalized)
{
	cJSON *out;
	struct req_error e;
	cr_assert_eq(execute("{\"code\": \"x = 1\", \"stdin\": \"a\", \"timeout_ms\": 500, "
			     "\"expected_output\": \"1\", \"compare\": \"tokens\"}",
			     &out, &e),
		     0, "%s", e.message);
	cr_assert_str_eq(cJSON_GetObjectItem(out, "code")->valuestring, "x = 1");
	cr_assert_eq(cJSON_GetObjectItem(out, "timeout_ms")->valuedouble, 500);
	const cJSON *c = cJSON_GetObjectItem(out, "compare");
	cr_assert(cJSON_IsObject(c), "compare is normalized to an object");
	cr_assert_str_eq(cJSON_GetObjectItem(c, "mode")->valuestring, "tokens");
	cJSON_Delete(out);
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
	    {"{\"code\": \"1\", \"language\": \"python\"}", 422, "invalid_field"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cJSON *out = NULL;
		struct req_error e;
		cr_assert_eq(execute(cases[i].body, &out, &e), -1, "accepted: %s", cases[i].body);
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
	cJSON *out = NULL;
	struct req_error e;
	cr_assert_eq(sreq_execute(&cfg, &langs, "python", in, &out, &e), -1);
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
		cJSON *in = cJSON_Parse(bad[i]), *out = NULL;
		struct req_error e;
		cr_assert_eq(sreq_install(in, &out, &e), -1, "accepted: %s", bad[i]);
		cr_assert_eq(e.http_status, 422, "%s", bad[i]);
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
	struct req_error e;
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		cr_assert(sreq_path(good[i], false, &e), "refused '%s': %s", good[i], e.message);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_not(sreq_path(bad[i], false, &e), "accepted '%s'", bad[i]);
		cr_assert_eq(e.http_status, 400);
		cr_assert_str_eq(e.code, "bad_path");
	}
	cr_assert(sreq_path("", true, &e), "the folder itself, where it may be");
	char longp[1100];
	memset(longp, 'a', sizeof longp - 1);
	longp[sizeof longp - 1] = 0;
	cr_assert_not(sreq_path(longp, false, &e));
	cr_assert_not(sreq_path("a\xff", false, &e), "invalid UTF-8");
}

Test(sessreq, content_types_and_ids)
{
	cr_assert_str_eq(sreq_content_type("out/chart.PNG"), "image/png");
	cr_assert_str_eq(sreq_content_type("data.csv"), "text/csv");
	cr_assert_str_eq(sreq_content_type("noext"), "application/octet-stream");
	cr_assert_str_eq(sreq_content_type(".bashrc"), "application/octet-stream");
	cr_assert_str_eq(sreq_content_type("dir.png/x"), "application/octet-stream");
	cr_assert(sreq_id_valid("0d9d6129-0b90-4c99-b0fd-dec24de0c3c1"));
	cr_assert_not(sreq_id_valid("0d9d6129-0b90-4c99-b0fd-dec24de0c3c"));
	cr_assert_not(sreq_id_valid("0d9d6129x0b90-4c99-b0fd-dec24de0c3c1"));
	cr_assert_not(sreq_id_valid("1"));
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
		sreq_disposition(shown[i], &sb);
		cr_expect_str_eq(sb.buf, "inline", "%s", shown[i]);
		strbuf_release(&sb);
	}
	for (size_t i = 0; i < sizeof saved / sizeof saved[0]; i++) {
		struct strbuf sb = STRBUF_INIT;
		sreq_disposition(saved[i], &sb);
		cr_expect(!strncmp(sb.buf, "attachment; filename*=UTF-8''", 29), "%s: %s", saved[i],
			  sb.buf);
		strbuf_release(&sb);
	}
	struct strbuf sb = STRBUF_INIT;
	sreq_disposition("/v1/sessions/x/files/out dir/r\"\xc3\xa9;.html", &sb);
	cr_expect_str_eq(sb.buf, "attachment; filename*=UTF-8''r%22%C3%A9%3B.html");
	strbuf_release(&sb);
}

Test(sessreq, limits_json_round_trip)
{
	struct sess_limits l = {256, 1000, 4000, 64}, back;
	cJSON *j = sreq_limits_json(&l);
	sreq_limits_load(j, &back);
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
		cJSON *in = cJSON_Parse(refused[i]), *out = NULL;
		struct req_error e;
		cr_assert_eq(sreq_install(in, &out, &e), -1, "accepted: %s", refused[i]);
		cr_assert_eq(e.http_status, 422);
		cr_assert_str_eq(e.code, "invalid_package", "%s: %s", refused[i], e.code);
		cJSON_Delete(in);
	}
	static const char *const good[] = {
	    "{\"manager\": \"pip\", \"packages\": [\"numpy\", \"pandas==2.2.2\", \"a[b]>=1\"]}",
	    "{\"manager\": \"npm\", \"packages\": [\"lodash@^4\", \"@types/node\"]}",
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		cJSON *in = cJSON_Parse(good[i]), *out = NULL;
		struct req_error e;
		cr_assert_eq(sreq_install(in, &out, &e), 0, "%s: %s", good[i], e.message);
		cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(out, "packages")),
			     cJSON_GetArraySize(cJSON_GetObjectItem(in, "packages")));
		cJSON_Delete(in);
		cJSON_Delete(out);
	}
}
