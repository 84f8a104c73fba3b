/* test_judge0_render: Judge0's status ids, fields and base64 (judge/api/judge0_render.c),
 * and the base64 codec they use (common/base64.c). */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>

#include "common/base64.h"
#include "judge/api/judge0_render.h"
#include "judge/grading/lang.h"
#include "judge/service/queue.h"

/* A finished submission with result JSON res (parsed; the sub owns it). */
static struct queue_sub sub(enum sub_status st, const char *res)
{
	struct queue_sub s;
	queue_sub_init(&s);
	s.status = st;
	s.result = res ? cJSON_Parse(res) : NULL;
	s.request = cJSON_Parse("{\"language\":\"python\",\"source\":\"print(1)\",\"stdin\":\"\"}");
	s.front = cJSON_Parse("{\"api\":\"judge0\",\"language_id\":100}");
	strcpy(s.token, "0f8fad5b-d9cb-469f-a165-70867728950e");
	return s;
}

static int status_of(enum sub_status st, const char *res)
{
	struct queue_sub s = sub(st, res);
	int id = judge0_render_status_id(&s);
	queue_sub_release(&s);
	return id;
}

Test(judge0_render, status_ids)
{
	cr_expect_eq(status_of(SUB_QUEUED, NULL), 1);
	cr_expect_eq(status_of(SUB_RUNNING, NULL), 2);
	cr_expect_eq(status_of(SUB_COMPLETED, "{}"), 3);
	cr_expect_eq(status_of(SUB_ACCEPTED, "{}"), 3);
	cr_expect_eq(status_of(SUB_WRONG_ANSWER, "{}"), 4);
	cr_expect_eq(status_of(SUB_TIMEOUT, "{}"), 5);
	cr_expect_eq(status_of(SUB_COMPILE_ERROR, "{}"), 6);
	cr_expect_eq(status_of(SUB_RUNTIME_ERROR, "{\"signal\":11,\"exit_code\":null}"), 7);
	cr_expect_eq(status_of(SUB_RUNTIME_ERROR, "{\"signal\":25}"), 8);
	cr_expect_eq(status_of(SUB_RUNTIME_ERROR, "{\"signal\":8}"), 9);
	cr_expect_eq(status_of(SUB_RUNTIME_ERROR, "{\"signal\":6}"), 10);
	cr_expect_eq(status_of(SUB_RUNTIME_ERROR, "{\"signal\":null,\"exit_code\":1}"), 11);
	cr_expect_eq(status_of(SUB_RUNTIME_ERROR, "{\"signal\":9}"), 12);
	cr_expect_eq(status_of(SUB_MEMORY_LIMIT, "{}"), 12);
	cr_expect_eq(status_of(SUB_OUTPUT_LIMIT, "{}"), 8);
	cr_expect_eq(status_of(SUB_INTERNAL_ERROR, "{}"), 13);
	cr_expect_str_eq(judge0_render_status_name(11), "Runtime Error (NZEC)");
	cr_expect_str_eq(judge0_render_status_name(14), "Exec Format Error");
	cr_expect_null(judge0_render_status_name(15));
	cr_expect_null(judge0_render_status_name(0));
}

/* The shipped languages' Judge0 ids (judge0_ids in the language files): the open-source
 * CE's (46, 50, 51, 54, 63, 71) and the hosted CE's newer ones (100, 102, 103,
 * 105), sorted by id as GET /languages lists them. */
Test(judge0_render, languages)
{
	static const struct {
		int id;
		const char *lang, *name;
	} want[] = {{46, "bash", "Bash (5.2)"},
		    {50, "c", "C (GCC 12, gnu17)"},
		    {51, "csharp", "C# (.NET 9)"},
		    {54, "cpp", "C++ (GCC 12, gnu++20)"},
		    {63, "node", "JavaScript (Node.js 22)"},
		    {71, "python", "Python (3.12)"},
		    {100, "python", "Python (3.12)"},
		    {102, "node", "JavaScript (Node.js 22)"},
		    {103, "c", "C (GCC 12, gnu17)"},
		    {105, "cpp", "C++ (GCC 12, gnu++20)"}};
	struct lang_registry reg;
	char err[512];
	cr_assert_eq(lang_load_dir(&reg, "languages", err, sizeof err), 0, "%s", err);
	cr_assert_eq(reg.njudge0, (int)(sizeof want / sizeof want[0]));
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		cr_expect_eq(reg.judge0[i].id, want[i].id);
		const struct lang *l = lang_by_judge0(&reg, want[i].id);
		cr_assert(l, "id %d", want[i].id);
		cr_expect_str_eq(l->name, want[i].lang);
		cr_expect_str_eq(l->judge0_name, want[i].name);
	}
	cr_expect_null(lang_by_judge0(&reg, 62));
	lang_registry_release(&reg);
}

Test(judge0_render, fields_and_units)
{
	j0r_fields f;
	char bad[80];
	cr_assert_eq(judge0_render_fields_parse("stdout, status_id", &f, bad, sizeof bad), 0);
	struct queue_sub s = sub(
	    SUB_ACCEPTED, "{\"status\":\"accepted\",\"exit_code\":0,\"signal\":null,"
			  "\"time_ms\":13,\"wall_ms\":20,\"memory_kb\":9120,\"stdout\":\"1\\n\","
			  "\"stderr\":\"\",\"compile\":{\"status\":\"ok\",\"output\":\"\"}}");
	cJSON *o = judge0_render_submission(&s, NULL, f, false);
	cr_assert(o);
	cr_expect_eq(cJSON_GetArraySize(o), 2);
	cr_expect_str_eq(cJSON_GetObjectItem(o, "stdout")->valuestring, "1\n");
	cr_expect_eq(cJSON_GetObjectItem(o, "status_id")->valueint, 3);
	cJSON_Delete(o);
	cr_assert_eq(judge0_render_fields_parse(NULL, &f, bad, sizeof bad), 0);
	o = judge0_render_submission(&s, NULL, f, false);
	cr_expect_eq(cJSON_GetArraySize(o), 8);
	cr_expect_str_eq(cJSON_GetObjectItem(o, "time")->valuestring, "0.013");
	cr_expect_eq(cJSON_GetObjectItem(o, "memory")->valueint, 9120);
	cr_expect(cJSON_IsNull(cJSON_GetObjectItem(o, "stderr")));
	cr_expect(cJSON_IsNull(cJSON_GetObjectItem(o, "compile_output")));
	cr_expect_str_eq(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "description")->valuestring,
	    "Accepted");
	cJSON_Delete(o);
	o = judge0_render_submission(&s, NULL, f, true);
	cr_expect_str_eq(cJSON_GetObjectItem(o, "stdout")->valuestring, "MQo=");
	cJSON_Delete(o);
	cr_assert_eq(judge0_render_fields_parse("*", &f, bad, sizeof bad), 0);
	struct lang_registry reg;
	char err[512];
	cr_assert_eq(lang_load_dir(&reg, "languages", err, sizeof err), 0, "%s", err);
	o = judge0_render_submission(&s, &reg, f, false);
	lang_registry_release(&reg);
	cr_expect_eq(cJSON_GetObjectItem(o, "language_id")->valueint, 100);
	cr_expect_str_eq(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(o, "language"), "name")->valuestring,
	    "Python (3.12)");
	cr_expect_str_eq(cJSON_GetObjectItem(o, "source_code")->valuestring, "print(1)");
	cJSON_Delete(o);
	cr_expect_eq(judge0_render_fields_parse("stdout,nope", &f, bad, sizeof bad), -1);
	cr_expect_str_eq(bad, "nope");
	queue_sub_release(&s);
}

Test(judge0_render, not_utf8_needs_base64)
{
	struct queue_sub s =
	    sub(SUB_COMPLETED, "{\"status\":\"completed\",\"time_ms\":1,"
			       "\"stdout_base64\":\"//4=\",\"stdout\":\"\\ufffd\\ufffd\"}");
	j0r_fields f;
	char bad[8];
	judge0_render_fields_parse(NULL, &f, bad, sizeof bad);
	cr_expect_null(judge0_render_submission(&s, NULL, f, false));
	cJSON *o = judge0_render_submission(&s, NULL, f, true);
	cr_assert(o);
	cr_expect_str_eq(cJSON_GetObjectItem(o, "stdout")->valuestring, "//4=");
	cJSON_Delete(o);
	judge0_render_fields_parse("status", &f, bad, sizeof bad);
	o = judge0_render_submission(&s, NULL, f, false);
	cr_expect(o); /* stdout not asked for */
	cJSON_Delete(o);
	queue_sub_release(&s);
}

Test(judge0_render, base64)
{
	static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *const enc[] = {"",	      "Zg==",	  "Zm8=",    "Zm9v",
					  "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
	for (size_t i = 0; i < 7; i++) {
		struct strbuf e = STRBUF_INIT, d = STRBUF_INIT;
		base64_encode(&e, plain[i], strlen(plain[i]));
		cr_expect_str_eq(e.buf, enc[i]);
		cr_expect(base64_decode(&d, enc[i], strlen(enc[i])));
		cr_expect_str_eq(d.buf, plain[i]);
		strbuf_release(&e);
		strbuf_release(&d);
	}
	struct strbuf d = STRBUF_INIT;
	cr_expect(base64_decode(&d, "Zm9v\nYmE", 8)); /* line breaks, no padding */
	cr_expect_str_eq(d.buf, "fooba");
	strbuf_reset(&d);
	cr_expect_not(base64_decode(&d, "Zm9v!", 5));
	strbuf_reset(&d);
	cr_expect_not(base64_decode(&d, "Z", 1));
	strbuf_reset(&d);
	cr_expect_not(base64_decode(&d, "Zg==Zg", 6));
	strbuf_release(&d);
}
