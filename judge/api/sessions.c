/* sessions: the session endpoints: check, store a call for the holding worker, park, answer. */
#include "judge/api/sessions.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "judge/api/api.h"
#include "judge/api/http.h"
#include "judge/api/metrics.h"
#include "judge/api/render.h"
#include "judge/api/sse.h"
#include "judge/service/sessdb.h"
#include "judge/service/sesshub.h"
#include "judge/service/sessreq.h"
#include "judge/service/waiter.h"
#include "judge/store/db.h"

/* How long a create waits for a worker to start the sandbox. */
#define CREATE_WAIT_MS 30000
/* Beyond a call's own limit: routing, a driver's restart, storing the answer. */
#define CALL_SLACK_MS 15000
#define FILE_CALL_MS  60000

/* A parked request's state (r->ctx). */
/* The policy of a served session file: an opaque origin, no script, no
 * loads of anything. */
#define SESSION_FILE_CSP "sandbox; default-src 'none'"

struct sctx {
	struct api *api;
	struct http_request *r;
	struct waiter w;
	bool create; /* waiting for the session to start, else for call_id */
	char id[37];
	int64_t call_id;
	char kind[16];
	bool file_json; /* MCP: a file's bytes as JSON */
	int64_t t0_us;
};

static void sctx_free(void *p)
{
	struct sctx *c = p;
	if (!c)
		return;
	waiter_unregister(sesshub_waiters(c->api->sessions), &c->w);
	free(c);
}

bool sessions_owns(const struct http_request *r)
{
	return r->ctx && r->ctx_free == sctx_free;
}

static void resume_request(struct waiter *w)
{
	http_resume(((struct sctx *)w->arg)->r);
}

static void suspend_request(struct waiter *w)
{
	http_suspend(((struct sctx *)w->arg)->r);
}

static int64_t key_of(struct api *a, struct http_request *r)
{
	return a->auth_on ? r->key_id : 0;
}

static struct sctx *sctx_new(struct http_request *r, struct api *a, const char *id,
			     int64_t deadline_ms)
{
	struct sctx *c = xcalloc(1, sizeof *c);
	c->api = a;
	c->r = r;
	c->t0_us = clock_mono_us();
	snprintf(c->id, sizeof c->id, "%s", id);
	c->w.deadline_ms = deadline_ms;
	c->w.resume = resume_request;
	c->w.arg = c;
	r->ctx = c;
	r->ctx_free = sctx_free;
	return c;
}

/* 410 (409 while starting) with why a session takes no calls. */
static void not_open(struct http_request *r, const struct sess_row *row)
{
	static const char *const codes[SESS_STATUS_COUNT] = {"session_starting", "session_ready",
							     "session_closed",	 "session_expired",
							     "session_lost",	 "session_failed"};
	if (row->status == SESS_STARTING) {
		http_error(r, 409, codes[SESS_STARTING], "the session is still starting");
		return;
	}
	http_error(r, 410, codes[row->status], "session %s is %s: %s", row->id,
		   sess_status_name(row->status), row->reason[0] ? row->reason : "it ended");
}

static void no_session(struct http_request *r, const char *id)
{
	http_error(r, 404, "not_found", "no session '%.40s'", id);
}

/* ---- create ---- */

static void continue_create(struct sctx *c)
{
	struct api *a = c->api;
	struct http_request *r = c->r;
	char err[256];
	for (;;) {
		waiter_register(sesshub_waiters(a->sessions), &c->w);
		struct sess_row row = {0};
		struct db *db = api_db(a, 5000, err, sizeof err);
		int rc = db ? sessdb_get(db, c->id, key_of(a, r), a->cfg->worker_timeout_s, &row,
					 err, sizeof err)
			    : -1;
		bool over = clock_mono_ms() >= c->w.deadline_ms || http_stopping(r);
		if (rc == 1 && row.status == SESS_STARTING && over)
			rc = sessdb_fail_unclaimed(db, c->id,
						   "no worker started the session in time", err,
						   sizeof err) < 0
				 ? -1
				 : 2;
		if (db)
			db_pool_put(a->pool, db);
		if (rc == 1 && row.status == SESS_STARTING) {
			sess_row_release(&row);
			if (waiter_park(sesshub_waiters(a->sessions), &c->w, suspend_request))
				return;
			continue;
		}
		waiter_unregister(sesshub_waiters(a->sessions), &c->w);
		if (rc < 0)
			render_db_error(r, "session create", err);
		else if (rc == 2 || rc == 0)
			http_error(r, 503, "no_worker",
				   "no worker could start the session in %d s; retry later",
				   CREATE_WAIT_MS / 1000);
		else if (row.status != SESS_READY)
			http_error(r, 503, "session_failed", "the session did not start: %s",
				   row.reason);
		else {
			cJSON *o = sess_row_json(&row);
			http_respond_json(r, 201, o);
			cJSON_Delete(o);
		}
		sess_row_release(&row);
		return;
	}
}

void sessions_create(struct http_request *r, struct api *a, const cJSON *body)
{
	struct req_error e;
	struct sreq_create cr;
	char err[256], id[37];
	if (sreq_create(a->cfg, &a->langs, body, &cr, &e) < 0)
		return render_req_error(r, &e);
	cJSON *lim = sreq_limits_json(&cr.limits);
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessdb_create(db, key_of(a, r), cr.lang->name, lim, cr.idle_ttl_s,
				    a->cfg->session_max_lifetime_s, a->cfg->sessions_per_key, id,
				    err, sizeof err)
		    : -1;
	if (db)
		db_pool_put(a->pool, db);
	cJSON_Delete(lim);
	if (rc < 0)
		return render_db_error(r, "session create", err);
	if (rc == 1) {
		const char *hdr[] = {"Retry-After", "10", NULL};
		http_error_h(r, 429, hdr, "too_many_sessions",
			     "this API key has %ld open sessions, the most it may hold; close one "
			     "(DELETE /v1/sessions/{id})",
			     a->cfg->sessions_per_key);
		return;
	}
	struct sctx *c = sctx_new(r, a, id, clock_mono_ms() + CREATE_WAIT_MS);
	c->create = true;
	char key[48];
	snprintf(key, sizeof key, "s%s", id);
	c->w.id = sesshub_key(key);
	continue_create(c);
}

/* ---- calls ---- */

/* Answers with a worker's stored answer. */
static void answer(struct sctx *c, const cJSON *resp, const struct strbuf *body)
{
	struct http_request *r = c->r;
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(resp, "http");
	int status = cJSON_IsNumber(st) ? (int)st->valuedouble : 500;
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(resp, "error");
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(resp, "body");
	const cJSON *ct = cJSON_GetObjectItemCaseSensitive(resp, "content_type");
	if (cJSON_IsObject(e)) {
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(e, "code"),
			    *msg = cJSON_GetObjectItemCaseSensitive(e, "message");
		http_error(r, status, cJSON_IsString(code) ? code->valuestring : "internal_error",
			   "%s", cJSON_IsString(msg) ? msg->valuestring : "");
	} else if (cJSON_GetObjectItemCaseSensitive(resp, "raw") && c->file_json) {
		bool text = utf8_valid_text(body->buf ? body->buf : "", body->len);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "content_type",
					cJSON_IsString(ct) ? ct->valuestring : "");
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
	} else if (cJSON_GetObjectItemCaseSensitive(resp, "raw")) {
		/* a file a cell wrote, served from the origin of the playground
		 * and the dashboard: never as a page of that origin (a sandbox
		 * policy gives it an origin of its own and no script), and
		 * downloaded unless its type is inert (docs/security.md) */
		struct strbuf disp = STRBUF_INIT;
		sreq_disposition(r->url, &disp);
		const char *hdr[] = {"X-Content-Type-Options",
				     "nosniff",
				     "Content-Security-Policy",
				     SESSION_FILE_CSP,
				     "Content-Disposition",
				     disp.buf,
				     NULL};
		http_respond(r, status, cJSON_IsString(ct) ? ct->valuestring : NULL,
			     body->buf ? body->buf : "", body->len, hdr);
		strbuf_release(&disp);
	} else {
		http_respond_json(r, status, b ? b : resp);
	}
	if (!strcmp(c->kind, "execute") && cJSON_IsObject(b)) {
		const cJSON *cs = cJSON_GetObjectItemCaseSensitive(b, "status");
		metrics_session_cell(c->api->metrics, cJSON_IsString(cs) ? cs->valuestring : NULL,
				     (double)(clock_mono_us() - c->t0_us) / 1e6);
	}
}

static void continue_call(struct sctx *c)
{
	struct api *a = c->api;
	struct http_request *r = c->r;
	char err[256];
	for (;;) {
		waiter_register(sesshub_waiters(a->sessions), &c->w);
		cJSON *resp = NULL;
		struct strbuf body = STRBUF_INIT;
		struct db *db = api_db(a, 5000, err, sizeof err);
		bool raw = !strcmp(c->kind, "file_get");
		int rc =
		    db ? sessdb_call_get(db, c->call_id, &resp, raw ? &body : NULL, err, sizeof err)
		       : -1;
		if (db)
			db_pool_put(a->pool, db);
		bool over = clock_mono_ms() >= c->w.deadline_ms || http_stopping(r);
		if (rc == 0 && !over) {
			if (waiter_park(sesshub_waiters(a->sessions), &c->w, suspend_request))
				return;
			continue;
		}
		waiter_unregister(sesshub_waiters(a->sessions), &c->w);
		if (rc < 0)
			render_db_error(r, "session call", err);
		else if (rc == 0)
			http_error(
			    r, 504, "timeout",
			    "the session's worker did not answer in time; the call may still "
			    "run, and the session takes calls again after it");
		else
			answer(c, resp, &body);
		cJSON_Delete(resp);
		strbuf_release(&body);
		return;
	}
}

/* How long serve waits for a call's answer, from the session's limits. */
static long call_wait_ms(struct api *a, const char *kind, const cJSON *req,
			 const struct sess_row *row)
{
	if (!strcmp(kind, "install"))
		return a->cfg->install_time_limit_s * 1000 + CALL_SLACK_MS;
	if (strcmp(kind, "execute"))
		return FILE_CALL_MS;
	struct sess_limits l = {0};
	sreq_limits_load(row->limits, &l);
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(req, "timeout_ms");
	long wall = cJSON_IsNumber(t) ? (long)t->valuedouble : l.wall_ms;
	return (wall > 0 ? wall : 60000) + CALL_SLACK_MS;
}

/* SSE's done hook: counts the streamed cell in the metrics (the stored data is sent). */
static char *cell_done(void *arg, const char *stored)
{
	struct sctx *c = arg;
	cJSON *d = stored ? cJSON_Parse(stored) : NULL;
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(d, "status");
	metrics_session_cell(c->api->metrics, cJSON_IsString(st) ? st->valuestring : NULL,
			     (double)(clock_mono_us() - c->t0_us) / 1e6);
	cJSON_Delete(d);
	return NULL;
}

/* Relays a streamed cell's output: stdout and stderr as printed, then result
 * or error, then done with the whole answer (migrations/0003_sessions.sql). */
static void relay_cell(struct http_request *r, struct api *a, int64_t call_id)
{
	int64_t after = sse_last_event_id(http_header(r, "Last-Event-ID"));
	char stream[48];
	snprintf(stream, sizeof stream, "cell:%" PRId64, call_id);
	struct sctx *c = xcalloc(1, sizeof *c);
	c->api = a;
	c->t0_us = clock_mono_us();
	struct sse_opts o = {.stream = stream,
			     .after = after > 0 ? after : 0,
			     .done_data = cell_done,
			     .arg = c,
			     .arg_free = free};
	if (sse_relay(r, a->sse, &o) < 0 && !r->responded)
		http_error(r, 503, "unavailable", "cannot stream the output of call %" PRId64,
			   call_id);
}

/* Stores call kind of session id and waits for its answer (or relays its
 * output as it comes, with stream). */
static void route_call_as(struct http_request *r, struct api *a, const char *id, const char *kind,
			  const cJSON *req, const void *body, size_t len, bool file_json,
			  bool stream)
{
	char err[256];
	struct sess_row row = {0};
	int64_t call_id = 0;
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessdb_call(db, id, key_of(a, r), a->cfg->worker_timeout_s, kind, req, body,
				  len, &call_id, &row, err, sizeof err)
		    : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		render_db_error(r, "session call", err);
	else if (rc == 0)
		no_session(r, id);
	else if (rc == 2)
		not_open(r, &row);
	else if (stream)
		relay_cell(r, a, call_id);
	else {
		struct sctx *c =
		    sctx_new(r, a, id, clock_mono_ms() + call_wait_ms(a, kind, req, &row));
		c->call_id = call_id;
		c->file_json = file_json;
		snprintf(c->kind, sizeof c->kind, "%s", kind);
		char key[48];
		snprintf(key, sizeof key, "c%" PRId64, call_id);
		c->w.id = sesshub_key(key);
		continue_call(c);
	}
	sess_row_release(&row);
}

static void route_call(struct http_request *r, struct api *a, const char *id, const char *kind,
		       const cJSON *req, const void *body, size_t len, bool file_json)
{
	route_call_as(r, a, id, kind, req, body, len, file_json, false);
}

void sessions_resume(struct http_request *r)
{
	struct sctx *c = r->ctx;
	if (c->create)
		continue_create(c);
	else
		continue_call(c);
}

/* ---- the routes ---- */

/* The session id at the start of arg ("{id}" or "{id}/..."): 0 with id, or
 * -1 after a 404 (not a session id). */
static int id_of(struct http_request *r, const char *arg, char id[37])
{
	size_t n = strcspn(arg, "/");
	snprintf(id, 37, "%.*s", (int)(n < 36 ? n : 36), arg);
	if (n != 36 || !sreq_id_valid(id)) {
		http_error(r, 404, "not_found", "no session '%.40s'", arg);
		return -1;
	}
	return 0;
}

static void get_one(struct http_request *r, struct api *a, const char *id)
{
	char err[256];
	struct sess_row row = {0};
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc =
	    db ? sessdb_get(db, id, key_of(a, r), a->cfg->worker_timeout_s, &row, err, sizeof err)
	       : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		render_db_error(r, "session read", err);
	else if (rc == 0)
		no_session(r, id);
	else {
		cJSON *o = sess_row_json(&row);
		http_respond_json(r, 200, o);
		cJSON_Delete(o);
	}
	sess_row_release(&row);
}

static void list(struct http_request *r, struct api *a)
{
	char err[256];
	cJSON *arr = NULL;
	const char *all = http_query(r, "all");
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc =
	    db ? sessdb_list(db, key_of(a, r), a->cfg->worker_timeout_s,
			     all && strcmp(all, "0") && strcmp(all, "false"), &arr, err, sizeof err)
	       : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		return render_db_error(r, "session list", err);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "sessions", arr);
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

/* The JSON body, or NULL after answering the error. */
static cJSON *json_body(struct http_request *r, struct api *a)
{
	cJSON *in = NULL;
	struct req_error e;
	if (req_parse_json(a->cfg, r->body.buf ? r->body.buf : "", r->body.len, &in, &e) < 0) {
		render_req_error(r, &e);
		return NULL;
	}
	return in;
}

/* A language any session may use to check compare options (only its being
 * known matters there). */
static const char *some_language(struct api *a)
{
	return a->langs.count ? a->langs.langs[0].name : "python";
}

/* execute and install: the checked body, routed. */
static void json_call(struct http_request *r, struct api *a, const char *id, const char *kind,
		      const cJSON *in)
{
	struct req_error e;
	cJSON *req = NULL;
	int rc = !strcmp(kind, "execute")
		     ? sreq_execute(a->cfg, &a->langs, some_language(a), in, &req, &e)
		     : sreq_install(in, &req, &e);
	if (rc < 0)
		return render_req_error(r, &e);
	/* Accept: text/event-stream (not through MCP, whose reply is one JSON) */
	bool stream = !strcmp(kind, "execute") && !r->transform && sse_wanted(r);
	if (stream)
		cJSON_AddBoolToObject(req, "stream", true);
	route_call_as(r, a, id, kind, req, NULL, 0, false, stream);
	cJSON_Delete(req);
}

/* A files route: the path after "{id}/files/", checked. */
static void file_call(struct http_request *r, struct api *a, const char *id, const char *path,
		      const char *kind, const void *body, size_t len, bool file_json)
{
	struct req_error e;
	if (!sreq_path(path, !strcmp(kind, "file_list"), &e))
		return render_req_error(r, &e);
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "path", path);
	route_call(r, a, id, kind, req, body, len, file_json);
	cJSON_Delete(req);
}

static void handle_file(struct http_request *r, struct api *a, const char *id, const char *arg)
{
	const char *path = arg + 36 + sizeof "/files/" - 1;
	if (!strcmp(r->method, "PUT"))
		file_call(r, a, id, path, "file_put", r->body.buf ? r->body.buf : "", r->body.len,
			  false);
	else if (!strcmp(r->method, "DELETE"))
		file_call(r, a, id, path, "file_delete", NULL, 0, false);
	else
		file_call(r, a, id, path, "file_get", NULL, 0, false);
}

void sessions_handle(struct http_request *r, struct api *a, enum route rt, const char *arg)
{
	char id[37];
	bool post = !strcmp(r->method, "POST");
	if (rt == R_SESSIONS && !post)
		return list(r, a);
	if (rt != R_SESSIONS && id_of(r, arg, id) < 0)
		return;
	cJSON *in = NULL;
	if (post && !(in = json_body(r, a)))
		return;
	switch (rt) {
	case R_SESSIONS:
		sessions_create(r, a, in);
		break;
	case R_SESSION:
		if (!strcmp(r->method, "DELETE")) {
			cJSON *req = cJSON_CreateObject();
			route_call(r, a, id, "close", req, NULL, 0, false);
			cJSON_Delete(req);
		} else {
			get_one(r, a, id);
		}
		break;
	case R_SESSION_EXECUTE:
		json_call(r, a, id, "execute", in);
		break;
	case R_SESSION_INSTALL:
		json_call(r, a, id, "install", in);
		break;
	case R_SESSION_FILES: {
		const char *dir = http_query(r, "dir");
		file_call(r, a, id, dir ? dir : "", "file_list", NULL, 0, false);
		break;
	}
	default:
		handle_file(r, a, id, arg);
	}
	cJSON_Delete(in);
}

/* ---- MCP ---- */

/* The bytes of session_write_file's content (text, or base64). Returns 0 or
 * -1 after answering. */
static int tool_content(struct http_request *r, const cJSON *body, struct strbuf *out)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(body, "content");
	const cJSON *enc = cJSON_GetObjectItemCaseSensitive(body, "encoding");
	if (!cJSON_IsString(c)) {
		http_error(r, 422, "missing_field", "content (a string) is required");
		return -1;
	}
	bool b64 = cJSON_IsString(enc) && !strcmp(enc->valuestring, "base64");
	if (enc && !b64 && !(cJSON_IsString(enc) && !strcmp(enc->valuestring, "utf-8"))) {
		http_error(r, 422, "invalid_field", "encoding must be \"utf-8\" or \"base64\"");
		return -1;
	}
	if (!b64) {
		strbuf_addstr(out, c->valuestring);
		return 0;
	}
	if (!base64_decode(out, c->valuestring, strlen(c->valuestring))) {
		http_error(r, 422, "invalid_field", "content is not valid base64");
		return -1;
	}
	return 0;
}

static const char *tool_str(const cJSON *body, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(body, name);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

void sessions_tool(struct http_request *r, struct api *a, const char *kind, const cJSON *body)
{
	const char *sid = tool_str(body, "session_id");
	char id[37];
	if (!sid) {
		http_error(r, 422, "missing_field", "session_id is required");
		return;
	}
	if (id_of(r, sid, id) < 0)
		return;
	cJSON *rest = cJSON_Duplicate(body, 1);
	cJSON_DeleteItemFromObjectCaseSensitive(rest, "session_id");
	const char *path = tool_str(body, "path");
	struct strbuf content = STRBUF_INIT;
	if (!strcmp(kind, "execute") || !strcmp(kind, "install")) {
		json_call(r, a, id, kind, rest);
	} else if (!strcmp(kind, "close")) {
		route_call(r, a, id, "close", rest, NULL, 0, false);
	} else if (!strcmp(kind, "file_list")) {
		file_call(r, a, id, path ? path : "", kind, NULL, 0, false);
	} else if (!strcmp(kind, "file_put")) {
		if (tool_content(r, body, &content) == 0)
			file_call(r, a, id, path ? path : "", kind, content.buf ? content.buf : "",
				  content.len, false);
	} else {
		file_call(r, a, id, path ? path : "", kind, NULL, 0, true);
	}
	strbuf_release(&content);
	cJSON_Delete(rest);
}
