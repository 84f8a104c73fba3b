/* render: submission JSON and error replies of the HTTP API. */
#include "judge/api/render.h"

#include <stdarg.h>
#include <stdio.h>

#include "common/log.h"
#include "judge/api/http.h"
#include "judge/grading/request.h"
#include "judge/service/queue.h"

/* Where the delivery of s's callback stands: the client may be waiting for it. */
static void add_callback(cJSON *o, const struct queue_sub *s)
{
	cJSON *cb = cJSON_AddObjectToObject(o, "callback");
	cJSON_AddStringToObject(cb, "url", s->callback_url);
	cJSON_AddNumberToObject(cb, "attempts", s->callback_attempts);
	cJSON_AddStringToObject(cb, "state",
				s->callback_done_ms   ? "delivered"
				: s->callback_pending ? "pending"
				: s->finished_ms      ? "failed"
						      : "waiting");
	if (s->callback_error && !s->callback_done_ms)
		cJSON_AddStringToObject(cb, "error", s->callback_error);
	else
		cJSON_AddNullToObject(cb, "error");
}

static void add_time(cJSON *o, const char *name, int64_t ms)
{
	if (ms)
		cJSON_AddNumberToObject(o, name, (double)ms);
	else
		cJSON_AddNullToObject(o, name);
}

cJSON *render_sub(const struct queue_sub *s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)s->id);
	cJSON_AddStringToObject(o, "status", status_name(s->status));
	const cJSON *lang = cJSON_GetObjectItemCaseSensitive(s->request, "language");
	if (cJSON_IsString(lang))
		cJSON_AddStringToObject(o, "language", lang->valuestring);
	const cJSON *prob = cJSON_GetObjectItemCaseSensitive(s->request, "problem");
	if (cJSON_IsString(prob))
		cJSON_AddStringToObject(o, "problem", prob->valuestring);
	/* the version it was queued against, graded against (problems.h) */
	const cJSON *pv = cJSON_GetObjectItemCaseSensitive(s->request, "problem_version");
	if (cJSON_IsNumber(pv))
		cJSON_AddNumberToObject(o, "problem_version", pv->valuedouble);
	cJSON_AddNumberToObject(o, "created_ms", (double)s->created_ms);
	add_time(o, "started_ms", s->started_ms);
	add_time(o, "finished_ms", s->finished_ms);
	cJSON_AddNumberToObject(o, "attempts", s->attempts);
	if (s->callback_url)
		add_callback(o, s);
	if (s->result)
		cJSON_AddItemToObject(o, "result", cJSON_Duplicate(s->result, 1));
	else
		cJSON_AddNullToObject(o, "result");
	return o;
}

cJSON *render_result(const struct queue_sub *s)
{
	cJSON *res = s->result ? cJSON_Duplicate(s->result, 1) : cJSON_CreateObject();
	cJSON_AddNumberToObject(res, "id", (double)s->id);
	if (!cJSON_GetObjectItemCaseSensitive(res, "status"))
		cJSON_AddStringToObject(res, "status", status_name(s->status));
	return res;
}

void render_db_error(struct http_request *r, const char *what, const char *err)
{
	log_warn("api: %s: %s", what, err);
	const char *hdr[] = {"Retry-After", "1", NULL};
	http_error_h(r, 503, hdr, "unavailable", "the database is not available, retry later");
}

void render_req_error(struct http_request *r, const struct request_error *e)
{
	http_error(r, e->http_status, e->code, "%s", e->message);
}

void render_keyed_error(struct http_request *r, int status, const char *key, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, key, msg);
	http_respond_json(r, status, o);
	cJSON_Delete(o);
}
