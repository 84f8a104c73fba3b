/* test_sessrender: how the /v1 API shows sessions' typed replies (judge/api/sessrender.c):
 * every session error as an HTTP status and code (those the API gave before
 * the session model was typed), the JSON of cells and files, and the done
 * event of a streamed cell from its stored answer. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "judge/api/sessrender.h"

Test(sessrender, errors_as_http)
{
	static const struct {
		enum sess_err e;
		int status;
		const char *code;
	} cases[] = {
	    {SERR_NOT_FOUND, 404, "not_found"},
	    {SERR_BAD_PATH, 400, "bad_path"},
	    {SERR_IS_A_DIRECTORY, 409, "is_a_directory"},
	    {SERR_NOT_A_DIRECTORY, 409, "not_a_directory"},
	    {SERR_TOO_LARGE, 413, "too_large"},
	    {SERR_DISK_FULL, 413, "disk_full"},
	    {SERR_INSTALL_FAILED, 422, "install_failed"},
	    {SERR_SESSION_CLOSED, 410, "session_closed"},
	    {SERR_SESSION_LOST, 410, "session_lost"},
	    {SERR_INTERNAL, 500, "internal_error"},
	    {SERR_NO_CONTEXT, 404, "not_found"},
	    {SERR_NO_PROCESS, 404, "not_found"},
	    {SERR_BAD_REQUEST, 422, "invalid_field"},
	    {SERR_CONFLICT, 409, "conflict"},
	    {SERR_FORBIDDEN, 403, "forbidden"},
	    {SERR_LIMIT, 429, "too_many"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int status;
		const char *code;
		sessrender_error(cases[i].e, &status, &code);
		cr_assert_eq(status, cases[i].status, "%s", sess_err_name(cases[i].e));
		cr_assert_str_eq(code, cases[i].code);
	}
	/* every error has a status of its own kind */
	for (int e = 1; e < SERR_COUNT; e++) {
		int status;
		const char *code;
		sessrender_error((enum sess_err)e, &status, &code);
		cr_assert(status >= 400 && code && *code, "%s", sess_err_name((enum sess_err)e));
	}
	cr_assert_eq(sessrender_status(SCALL_CONTEXT_CREATE), 201);
	cr_assert_eq(sessrender_status(SCALL_EXECUTE), 200);
}

Test(sessrender, cell_json)
{
	struct sess_reply r;
	struct sess_call c;
	sess_reply_init(&r);
	sess_call_init(&c, SCALL_EXECUTE);
	r.cell.status = CELL_OK;
	strbuf_addstr(&r.cell.out, "41\n");
	r.cell.execution_count = 2;
	r.cell.has_verdict = true;
	r.cell.verdict = SUB_ACCEPTED;
	cJSON *o = sessrender_reply(&c, &r);
	char *text = cJSON_PrintUnformatted(o);
	cr_assert(strstr(text, "\"status\":\"ok\""), "%s", text);
	cr_assert(strstr(text, "\"stdout\":\"41\\n\""), "%s", text);
	cr_assert(strstr(text, "\"result\":null,\"error\":null"), "%s", text);
	cr_assert(strstr(text, "\"verdict\":\"accepted\""), "%s", text);
	cr_assert_null(strstr(text, "feedback"), "no feedback when accepted: %s", text);
	cr_assert_null(strstr(text, "message"), "no message when none: %s", text);
	cr_assert(strstr(text, "\"results\":[]"), "an empty results list when none: %s", text);
	cr_assert_null(strstr(text, "results_dropped"), "%s", text);
	free(text);
	cJSON_Delete(o);
	r.cell.results = strdup("[{\"image/png\":\"iVBOR\",\"is_main_result\":true}]");
	r.cell.results_dropped = 1;
	o = sessrender_reply(&c, &r);
	text = cJSON_PrintUnformatted(o);
	cr_assert(strstr(text, "\"results\":[{\"image/png\":\"iVBOR\",\"is_main_result\":true}]"),
		  "%s", text);
	cr_assert(strstr(text, "\"results_dropped\":1"), "%s", text);
	free(text);
	cJSON_Delete(o);
	sess_reply_release(&r);
	sess_call_release(&c);
}

Test(sessrender, done_of_a_streamed_cell)
{
	const char *st;
	char *d = sessrender_cell_done("{\"reply\": {\"status\": \"timeout\", \"stdout\": \"a\", "
				       "\"result\": null, \"error\": null, \"restarted\": false}}",
				       &st);
	cr_assert_str_eq(st, "timeout");
	cJSON *j = cJSON_Parse(d);
	cr_assert_str_eq(cJSON_GetObjectItem(j, "status")->valuestring, "timeout");
	cr_assert_str_eq(cJSON_GetObjectItem(j, "stdout")->valuestring, "a");
	cJSON_Delete(j);
	free(d);
	d = sessrender_cell_done("{\"error\": {\"code\": \"session_lost\", \"message\": \"gone\"}}",
				 &st);
	cr_assert_null(st);
	j = cJSON_Parse(d);
	cr_assert_eq(cJSON_GetObjectItem(j, "http")->valuedouble, 410);
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "code")->valuestring,
			 "session_lost");
	cJSON_Delete(j);
	free(d);
	d = sessrender_cell_done(NULL, &st);
	cr_assert_str_eq(d, "{}");
	free(d);
}
