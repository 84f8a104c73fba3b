/* e2b_envd: envd's /health over a session; the rest 501 for now. */
#include "judge/api/e2b_envd.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "common/strbuf.h"
#include "judge/api/api.h"
#include "judge/api/e2b_control.h"
#include "judge/api/http.h"
#include "judge/api/sessions.h"

/* The transform of /health: the session's /v1 JSON as 204 or 502. */
static int health(struct http_request *r, int status, const char *body, size_t len,
		  struct strbuf *out, void *arg)
{
	(void)r;
	(void)len;
	(void)arg;
	cJSON *j = status == 200 ? cJSON_Parse(body) : NULL;
	const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "status"));
	bool up = st && !strcmp(st, "ready");
	cJSON_Delete(j);
	if (up)
		return 204;
	e2b_control_error(out, 502, "the sandbox is not running");
	return 502;
}

void e2b_envd_handle(struct http_request *r, struct api *a, const char *sandbox)
{
	if (!strcmp(r->url, "/health") && strcmp(r->method, "POST")) {
		r->transform = health;
		sessions_get(r, a, sandbox);
		return;
	}
	struct strbuf b = STRBUF_INIT;
	if (!strcmp(r->url, "/files")) {
		e2b_control_error(&b, 501, "the files API of E2B is not served by this judge yet");
	} else {
		/* a Connect-RPC error: its code is a string */
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "code", "unimplemented");
		cJSON_AddStringToObject(o, "message",
					"this judge does not serve that E2B call yet");
		char *s = cJSON_PrintUnformatted(o);
		strbuf_addstr(&b, s);
		cJSON_free(s);
		cJSON_Delete(o);
	}
	http_respond(r, 501, "application/json", b.buf, b.len, NULL);
	strbuf_release(&b);
}
