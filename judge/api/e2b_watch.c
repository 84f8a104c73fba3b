/* e2b_watch: envd's folder watching over a session's watchers (see e2b_watch.h). */
#include "judge/api/e2b_watch.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "judge/api/e2b_connect.h"
#include "judge/api/e2b_envd.h"
#include "judge/api/http.h"
#include "judge/api/sessions.h"
#include "judge/api/sse.h"

#define KEEPALIVE_JSON "{\"keepalive\":{}}"
static const char keepalive[] = "\0\0\0\0\x10" KEEPALIVE_JSON;
_Static_assert(sizeof KEEPALIVE_JSON - 1 == 0x10, "the keep-alive envelope's length byte");
static const struct sse_opts framing = {.content_type = E2B_CONNECT_STREAM_TYPE,
					.keepalive = keepalive,
					.keepalive_len = sizeof keepalive - 1};

/* event_transform of a watcher's stream: its events as WatchDirResponse
 * envelopes (no "event" wrapper, unlike a process's). */
static bool to_envelope(struct http_request *r, const char *event, const char *data,
			struct strbuf *out, void *arg)
{
	(void)r;
	(void)arg;
	if (!strcmp(event, "start")) {
		e2b_connect_envelope(out, 0, "{\"start\":{}}");
	} else if (!strcmp(event, "fs")) {
		cJSON *o = cJSON_CreateObject(), *d = cJSON_Parse(data);
		cJSON_AddItemToObject(o, "filesystem", d ? d : cJSON_CreateObject());
		e2b_connect_envelope_json(out, 0, o);
	} else if (!strcmp(event, "done")) {
		e2b_connect_envelope(out, E2B_CONNECT_FLAG_END, "{}");
		return true;
	}
	return false;
}

/* A unary watch call's /v1 answer as Connect's. */
static int unary_render(struct http_request *r, int status, const char *body, size_t len,
			struct strbuf *out, void *arg)
{
	(void)r;
	(void)len;
	(void)arg;
	if (status >= 300)
		return e2b_connect_render_error(status, body, out);
	cJSON *in = cJSON_Parse(body), *o = cJSON_CreateObject();
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(in, "watcher");
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(in, "events");
	if (cJSON_IsArray(ev))
		cJSON_AddItemToObject(o, "events", cJSON_Duplicate(ev, true));
	else if (cJSON_IsString(w) && (long)arg)
		cJSON_AddStringToObject(o, "watcherId", w->valuestring);
	char *s = cJSON_PrintUnformatted(o);
	strbuf_addstr(out, s);
	cJSON_free(s);
	cJSON_Delete(o);
	cJSON_Delete(in);
	return 200;
}

/* WatchDir and CreateWatcher: the folder (path), checked. */
static void start(struct http_request *r, struct api *a, const char *sandbox, bool stream)
{
	cJSON *in = e2b_connect_message(r, stream);
	if (!in)
		return;
	void (*refuse)(struct http_request *, const char *, const char *) =
	    stream ? e2b_connect_respond_stream_error : e2b_connect_respond_error;
	const char *p = cJSON_GetStringValue(e2b_connect_field(in, "path", NULL));
	bool recursive = cJSON_IsTrue(e2b_connect_field(in, "recursive", NULL));
	struct strbuf rel = STRBUF_INIT;
	char abs[1024];
	if (cJSON_IsTrue(e2b_connect_field(in, "includeEntry", "include_entry")) ||
	    cJSON_IsTrue(e2b_connect_field(in, "allowNetworkMounts", "allow_network_mounts")))
		refuse(r, "unimplemented", "includeEntry and allowNetworkMounts are not served");
	else if (!p || !*p)
		refuse(r, "invalid_argument", "path is required");
	else if (e2b_envd_path(p, &rel, abs) < 0)
		refuse(r, "invalid_argument",
		       "the path must be under /home/user (the sandbox's home)");
	else if (stream) {
		/* the watch lives as long as the client's deadline, as envd's */
		const char *to = http_header(r, "Connect-Timeout-Ms");
		double ms = to ? strtod(to, NULL) : 0;
		r->transform = e2b_connect_stream_render;
		r->transform_arg = (void *)"the folder is not watched";
		r->transform_type = E2B_CONNECT_STREAM_TYPE;
		r->event_transform = to_envelope;
		sessions_watch_start(r, a, sandbox, rel.buf ? rel.buf : "", recursive,
				     ms >= 1 ? (long)ms : 0, &framing);
	} else {
		r->transform = unary_render;
		r->transform_arg = (void *)1L;
		sessions_watch_start(r, a, sandbox, rel.buf ? rel.buf : "", recursive, 0, NULL);
	}
	strbuf_release(&rel);
	cJSON_Delete(in);
}

bool e2b_watch_handle(struct http_request *r, struct api *a, const char *sandbox,
		      const char *method)
{
	if (!strcmp(method, "WatchDir")) {
		start(r, a, sandbox, true);
		return true;
	}
	if (!strcmp(method, "CreateWatcher")) {
		start(r, a, sandbox, false);
		return true;
	}
	bool events = !strcmp(method, "GetWatcherEvents");
	if (!events && strcmp(method, "RemoveWatcher"))
		return false;
	cJSON *in = e2b_connect_message(r, false);
	if (!in)
		return true;
	const char *w = cJSON_GetStringValue(e2b_connect_field(in, "watcherId", "watcher_id"));
	r->transform = unary_render;
	sessions_watch(r, a, sandbox, events ? SCALL_WATCH_EVENTS : SCALL_WATCH_STOP, w ? w : "");
	cJSON_Delete(in);
	return true;
}
