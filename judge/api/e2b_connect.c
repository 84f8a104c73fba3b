/* e2b_connect: Connect-RPC's JSON framing for envd's services (see e2b_connect.h). */
#include "judge/api/e2b_connect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/api/e2b_control.h"
#include "judge/api/http.h"

void e2b_connect_envelope(struct strbuf *out, unsigned flags, const char *json)
{
	size_t n = strlen(json);
	unsigned char h[5] = {(unsigned char)flags, (unsigned char)(n >> 24),
			      (unsigned char)(n >> 16), (unsigned char)(n >> 8), (unsigned char)n};
	strbuf_add(out, h, sizeof h);
	strbuf_add(out, json, n);
}

void e2b_connect_envelope_json(struct strbuf *out, unsigned flags, cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);
	e2b_connect_envelope(out, flags, s);
	cJSON_free(s);
	cJSON_Delete(o);
}

cJSON *e2b_connect_error_json(const char *code, const char *message)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "code", code);
	cJSON_AddStringToObject(o, "message", message);
	return o;
}

void e2b_connect_stream_error(struct strbuf *out, const char *code, const char *message)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "error", e2b_connect_error_json(code, message));
	e2b_connect_envelope_json(out, E2B_CONNECT_FLAG_END, o);
}

void e2b_connect_respond_stream_error(struct http_request *r, const char *code, const char *message)
{
	struct strbuf b = STRBUF_INIT;
	e2b_connect_stream_error(&b, code, message);
	http_respond(r, 200, E2B_CONNECT_STREAM_TYPE, b.buf, b.len, NULL);
	strbuf_release(&b);
}

int e2b_connect_status(const char *code)
{
	static const struct {
		const char *code;
		int status;
	} map[] = {{"not_found", 404},		 {"invalid_argument", 400},
		   {"failed_precondition", 400}, {"already_exists", 409},
		   {"unimplemented", 501},	 {"unavailable", 502},
		   {"deadline_exceeded", 504},	 {"resource_exhausted", 429},
		   {"permission_denied", 403},	 {"unauthenticated", 401}};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(code, map[i].code))
			return map[i].status;
	return 500;
}

void e2b_connect_respond_error(struct http_request *r, const char *code, const char *message)
{
	cJSON *o = e2b_connect_error_json(code, message);
	char *s = cJSON_PrintUnformatted(o);
	http_respond(r, e2b_connect_status(code), "application/json", s, strlen(s), NULL);
	cJSON_free(s);
	cJSON_Delete(o);
}

const char *e2b_connect_code_of(int status, const char *body, struct strbuf *msg)
{
	e2b_control_message(body, msg);
	const char *m = msg->buf ? msg->buf : "";
	if (status == 410 || (status == 404 && !strncmp(m, "no session", 10)))
		return "unavailable";
	cJSON *j = cJSON_Parse(body);
	const char *v1 = cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "error"), "code"));
	/* a folder where a file is wanted, or the other way round: the caller's */
	bool path = v1 && (!strcmp(v1, "not_a_directory") || !strcmp(v1, "is_a_directory") ||
			   !strcmp(v1, "bad_path"));
	cJSON_Delete(j);
	if (path)
		return "invalid_argument";
	switch (status) {
	case 400:
	case 413:
	case 422:
		return "invalid_argument";
	case 401:
		return "unauthenticated";
	case 403:
		return "permission_denied";
	case 404:
		return "not_found";
	case 409:
		return "failed_precondition";
	case 429:
		return "resource_exhausted";
	case 502:
	case 503:
		return "unavailable";
	case 504:
		return "deadline_exceeded";
	default:
		return "internal";
	}
}

int e2b_connect_render_error(int status, const char *body, struct strbuf *out)
{
	struct strbuf m = STRBUF_INIT;
	const char *code = e2b_connect_code_of(status, body, &m);
	cJSON *o = e2b_connect_error_json(code, m.buf ? m.buf : "");
	char *s = cJSON_PrintUnformatted(o);
	strbuf_addstr(out, s);
	cJSON_free(s);
	cJSON_Delete(o);
	strbuf_release(&m);
	return e2b_connect_status(code);
}

cJSON *e2b_connect_message(struct http_request *r, bool stream)
{
	const char *b = r->body.buf ? r->body.buf : "";
	size_t n = r->body.len;
	cJSON *in = NULL;
	if (!stream) {
		in = cJSON_ParseWithLength(n ? b : "{}", n ? n : 2);
	} else if (n >= 5 && b[0] == 0) {
		const unsigned char *u = (const unsigned char *)b;
		size_t len = (size_t)u[1] << 24 | (size_t)u[2] << 16 | (size_t)u[3] << 8 | u[4];
		if (len == n - 5)
			in = cJSON_ParseWithLength(b + 5, len);
	}
	if (cJSON_IsObject(in))
		return in;
	cJSON_Delete(in);
	const char *why = stream ? "the request must be one Connect envelope holding a JSON object"
				 : "the request must be a JSON object";
	if (stream)
		e2b_connect_respond_stream_error(r, "invalid_argument", why);
	else
		e2b_connect_respond_error(r, "invalid_argument", why);
	return NULL;
}

cJSON *e2b_connect_field(const cJSON *o, const char *camel, const char *snake)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(o, camel);
	if ((!v || cJSON_IsNull(v)) && snake)
		v = cJSON_GetObjectItemCaseSensitive(o, snake);
	return cJSON_IsNull(v) ? NULL : v;
}

int e2b_connect_stream_render(struct http_request *r, int status, const char *body, size_t len,
			      struct strbuf *out, void *arg)
{
	(void)len;
	struct strbuf m = STRBUF_INIT;
	const char *code = status < 300 ? "internal" : e2b_connect_code_of(status, body, &m);
	const char *msg = m.buf ? m.buf : (const char *)arg;
	int st = 200;
	if (!strcmp(code, "unavailable")) {
		cJSON *o = e2b_connect_error_json(code, msg);
		char *s = cJSON_PrintUnformatted(o);
		strbuf_addstr(out, s);
		cJSON_free(s);
		cJSON_Delete(o);
		r->transform_type = "application/json";
		st = 502;
	} else {
		e2b_connect_stream_error(out, code, msg);
	}
	strbuf_release(&m);
	return st;
}
