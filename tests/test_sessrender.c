/* test_sessrender: how the /v1 API shows sessions' typed replies (judge/api/sessrender.c):
 * every session error as an HTTP status and code (those the API gave before
 * the session model was typed), the JSON of cells and files, and the done
 * event of a streamed cell from its stored answer. */
#include <criterion/criterion.h>
#include <stdio.h>
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

Test(sessrender, history_entries)
{
	struct sess_hist h;
	memset(&h, 0, sizeof h);
	sess_call_init(&h.call, SCALL_EXECUTE);
	sess_reply_init(&h.reply);
	h.call.id = 12;
	h.call.exec.code = strdup("1 / 0");
	h.done = true;
	h.duration_ms = 7;
	snprintf(h.created_at, sizeof h.created_at, "2026-01-01T00:00:00.000Z");
	snprintf(h.finished_at, sizeof h.finished_at, "2026-01-01T00:00:00.007Z");
	h.reply.cell.status = CELL_ERROR;
	h.reply.cell.execution_count = 3;
	cJSON *o = sessrender_history_entry(&h);
	char *s = cJSON_PrintUnformatted(o);
	cr_assert_str_eq(
	    s, "{\"seq\":12,\"kind\":\"execute\",\"at\":\"2026-01-01T00:00:00.000Z\","
	       "\"finished_at\":\"2026-01-01T00:00:00.007Z\",\"duration_ms\":7,"
	       "\"state\":\"done\",\"ok\":true,\"context\":\"default\",\"code\":\"1 / "
	       "0\",\"status\":\"error\",\"time_ms\":0,\"wall_ms\":0,\"execution_count\":3}");
	free(s);
	cJSON_Delete(o);
	sess_hist_release(&h);

	/* a file write the worker refused: its error as the caller got it, the size sent */
	memset(&h, 0, sizeof h);
	sess_call_init(&h.call, SCALL_FILE_PUT);
	h.call.path = strdup("../x");
	h.body_len = 5;
	h.done = true;
	sess_reply_init(&h.reply);
	sess_reply_fail(&h.reply, SERR_BAD_PATH, "the path leaves the folder");
	o = sessrender_history_entry(&h);
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "ok")));
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "error"), "code")->valuestring,
			 "bad_path");
	cr_assert_eq(cJSON_GetObjectItem(o, "size")->valuedouble, 5);
	cr_assert_str_eq(cJSON_GetObjectItem(o, "path")->valuestring, "../x");
	cJSON_Delete(o);
	sess_hist_release(&h);

	/* a call still open: no end, no duration, not ok, no outcome fields */
	memset(&h, 0, sizeof h);
	sess_call_init(&h.call, SCALL_PROCESS_START);
	sess_reply_init(&h.reply);
	h.duration_ms = -1;
	o = sessrender_history_entry(&h);
	cr_assert_str_eq(cJSON_GetObjectItem(o, "state")->valuestring, "open");
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(o, "finished_at")));
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(o, "duration_ms")));
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "ok")));
	cr_assert_null(cJSON_GetObjectItem(o, "pid"));
	cJSON_Delete(o);
	sess_hist_release(&h);

	/* a row that could not be read is shown, with why */
	memset(&h, 0, sizeof h);
	sess_call_init(&h.call, SCALL_EXECUTE);
	sess_reply_init(&h.reply);
	h.done = true;
	snprintf(h.load_error, sizeof h.load_error, "the cell has no code");
	o = sessrender_history_entry(&h);
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "ok")));
	cr_assert_str_eq(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(o, "error"), "message")->valuestring,
	    "the cell has no code");
	cJSON_Delete(o);
	sess_hist_release(&h);
}
