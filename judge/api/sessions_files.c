/* sessions_files: a session's files (read, written, listed, moved, removed) and
 * folder watchers, and how a file's bytes are served. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/config.h"
#include "common/log.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "judge/api/api.h"
#include "judge/api/http.h"
#include "judge/api/render.h"
#include "judge/api/sessions.h"
#include "judge/api/sessions_int.h"
#include "judge/api/sse.h"
#include "judge/service/outstream.h"
#include "judge/service/session/sessdb.h"
#include "judge/service/session/sessreq.h"
#include "judge/service/session/sesswatch.h"
#include "judge/store/db.h"

/* The policy of a served session file: an opaque origin, no script, no
 * loads of anything. */
#define SESSION_FILE_CSP "sandbox; default-src 'none'"

/* A file's bytes as MCP's session_read_file shows them: text, or base64. */
static void file_as_json(struct http_request *r, const struct sess_reply *rep)
{
	const struct strbuf *body = &rep->file.bytes;
	bool text = utf8_valid_text(body->buf ? body->buf : "", body->len);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "content_type", rep->file.type);
	cJSON_AddNumberToObject(o, "size", (double)body->len);
	cJSON_AddStringToObject(o, "encoding", text ? "utf-8" : "base64");
	struct strbuf enc = STRBUF_INIT;
	if (text)
		strbuf_add(&enc, body->buf ? body->buf : "", body->len);
	else
		base64_encode(&enc, body->buf, body->len);
	cJSON_AddStringToObject(o, "content", enc.buf ? enc.buf : "");
	strbuf_release(&enc);
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

void sessions_answer_file(struct http_request *r, const struct sess_call *call,
			  const struct sess_reply *rep, bool file_json)
{
	if (file_json)
		return file_as_json(r, rep);
	/* a file a cell wrote, served from the origin of the playground and the
	 * dashboard: never as a page of that origin (a sandbox policy gives it an
	 * origin of its own and no script), and downloaded unless its type is
	 * inert (docs/security.md) */
	struct strbuf disp = STRBUF_INIT;
	sessreq_disposition(call->path ? call->path : "", &disp);
	const char *hdr[] = {"X-Content-Type-Options",
			     "nosniff",
			     "Content-Security-Policy",
			     SESSION_FILE_CSP,
			     "Content-Disposition",
			     disp.buf,
			     NULL};
	http_respond(r, 200, rep->file.type, rep->file.bytes.buf ? rep->file.bytes.buf : "",
		     rep->file.bytes.len, hdr);
	strbuf_release(&disp);
}

/* A streamed watcher whose client left: the relay's on_left ends it on the
 * worker (else it would watch on to its lifetime, one of the session's
 * SESS_MAX_WATCHERS). */
struct watch_left {
	struct api *a;
	int64_t key;
	char sid[37];
	char watcher[SESS_ID_MAX];
};

static void watch_left(void *arg)
{
	struct watch_left *wl = arg;
	struct request_error e;
	struct sess_call c;
	if (sessreq_watch(SCALL_WATCH_STOP, wl->watcher, &c, &e) == 0)
		sessions_call_unanswered(wl->a, wl->sid, wl->key, &c);
	sess_call_release(&c);
}

void sessions_relay_watcher(struct http_request *r, struct api *a, const char *id,
			    const char *watcher, const struct sse_opts *framing)
{
	char stream[OUTSTREAM_ID_MAX];
	sesswatch_stream(id, watcher, stream, sizeof stream);
	struct watch_left *wl = xcalloc(1, sizeof *wl);
	wl->a = a;
	wl->key = sessions_key_of(a, r);
	snprintf(wl->sid, sizeof wl->sid, "%s", id);
	snprintf(wl->watcher, sizeof wl->watcher, "%s", watcher);
	struct sse_opts o = *framing;
	o.stream = stream;
	o.arg = wl;
	o.arg_free = free;
	o.on_left = watch_left;
	if (sse_relay(r, a->sse, &o) < 0 && !r->responded)
		http_error(r, 503, "unavailable", "cannot stream the watcher's events");
}

/* A files route: the path after "{id}/files/", checked. */
void sessions_file_call(struct http_request *r, struct api *a, const char *id, const char *path,
			enum scall_kind kind, const void *body, size_t len, bool file_json)
{
	struct request_error e;
	struct sess_call c;
	if (sessreq_file(kind, path, body, len, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	sessions_route_call(r, a, id, &c, file_json);
}

void sessions_file_route(struct http_request *r, struct api *a, const char *id, const char *arg)
{
	const char *path = arg + 36 + sizeof "/files/" - 1;
	if (!strcmp(r->method, "PUT"))
		sessions_file_call(r, a, id, path, SCALL_FILE_PUT, r->body.buf ? r->body.buf : "",
				   r->body.len, false);
	else if (!strcmp(r->method, "DELETE"))
		sessions_file_call(r, a, id, path, SCALL_FILE_DELETE, NULL, 0, false);
	else
		sessions_file_call(r, a, id, path, SCALL_FILE_GET, NULL, 0, false);
}

void sessions_file_move(struct http_request *r, struct api *a, const char *id, const char *from,
			const char *to)
{
	struct request_error e;
	struct sess_call c;
	if (sessreq_file_move(from, to, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	sessions_route_call(r, a, id, &c, false);
}

void sessions_file(struct http_request *r, struct api *a, const char *id, const char *path,
		   enum scall_kind kind, const void *body, size_t len)
{
	char sid[37];
	if (sessions_id_of(r, id, sid) == 0)
		sessions_file_call(r, a, sid, path, kind, body, len, false);
}

void sessions_file_parts(struct http_request *r, struct api *a, const char *id, size_t n,
			 const struct sessreq_part *parts)
{
	char sid[37];
	struct request_error e;
	struct sess_call c;
	if (sessions_id_of(r, id, sid) < 0)
		return;
	if (sessreq_file_parts(n, parts, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	sessions_route_call(r, a, sid, &c, false);
}

void sessions_watch_start(struct http_request *r, struct api *a, const char *id, const char *path,
			  bool recursive, long timeout_ms, const struct sse_opts *framing)
{
	char sid[37];
	struct request_error e;
	struct sess_call c;
	if (sessions_id_of(r, id, sid) < 0)
		return;
	if (sessreq_watch_start(path, recursive, timeout_ms, framing != NULL, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	sessions_route_call_ex(r, a, sid, &c, false, false, framing);
}

void sessions_watch(struct http_request *r, struct api *a, const char *id, enum scall_kind kind,
		    const char *watcher)
{
	char sid[37];
	struct request_error e;
	struct sess_call c;
	if (sessions_id_of(r, id, sid) < 0)
		return;
	if (sessreq_watch(kind, watcher, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	sessions_route_call(r, a, sid, &c, false);
}

void sessions_file_list(struct http_request *r, struct api *a, const char *id, const char *path,
			int depth)
{
	char sid[37];
	struct request_error e;
	struct sess_call c;
	if (sessions_id_of(r, id, sid) < 0)
		return;
	if (sessreq_file(SCALL_FILE_LIST, path, NULL, 0, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	c.depth = depth < 1 ? 1 : depth > SESS_MAX_DEPTH ? SESS_MAX_DEPTH : depth;
	sessions_route_call(r, a, sid, &c, false);
}
