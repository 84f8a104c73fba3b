/* sessions: the session routes: the table (sessions_handle), a session read, listed,
 * given a new idle TTL or closed, its history, cells and contexts, and the MCP
 * tools; the other rooms are the sessions_*.c files (sessions_int.h). */
#include "judge/api/sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "judge/api/api.h"
#include "judge/api/http.h"
#include "judge/api/render.h"
#include "judge/api/sessions_int.h"
#include "judge/api/sessrender.h"
#include "judge/api/sse.h"
#include "judge/service/session/sessdb.h"
#include "judge/service/session/sessreq.h"
#include "judge/store/db.h"

int64_t sessions_key_of(struct api *a, struct http_request *r)
{
	return a->auth_on ? r->key_id : 0;
}

void sessions_not_open(struct http_request *r, const struct sess_row *row)
{
	static const char *const codes[SESS_STATUS_COUNT] = {
	    "session_starting", "session_ready",  "session_closed", "session_expired",
	    "session_lost",	"session_failed", "session_paused"};
	if (row->status == SESS_STARTING) {
		http_error(r, 409, codes[SESS_STARTING], "the session is still starting");
		return;
	}
	http_error(r, 410, codes[row->status], "session %s is %s: %s", row->id,
		   sess_status_name(row->status), row->reason[0] ? row->reason : "it ended");
}

void sessions_no_session(struct http_request *r, const char *id)
{
	http_error(r, 404, "not_found", "no session '%.40s'", id);
}

int sessions_id_of(struct http_request *r, const char *arg, char id[37])
{
	size_t n = strcspn(arg, "/");
	snprintf(id, 37, "%.*s", (int)(n < 36 ? n : 36), arg);
	if (n != 36 || !sessreq_id_valid(id)) {
		http_error(r, 404, "not_found", "no session '%.40s'", arg);
		return -1;
	}
	return 0;
}

/* Session id of this key into *row: 1, or 0 after answering (404, a
 * database error); the caller releases row either way. */
static int row_of(struct http_request *r, struct api *a, const char *id, struct sess_row *row)
{
	char err[256];
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessdb_get(db, id, sessions_key_of(a, r), a->cfg->worker_timeout_s, row, err,
				 sizeof err)
		    : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		render_db_error(r, "session read", err);
	else if (rc == 0)
		sessions_no_session(r, id);
	return rc > 0;
}

static void get_one(struct http_request *r, struct api *a, const char *id)
{
	struct sess_row row = {0};
	if (row_of(r, a, id, &row)) {
		cJSON *o = sess_row_json(&row);
		http_respond_json(r, 200, o);
		cJSON_Delete(o);
	}
	sess_row_release(&row);
}

/* How many history entries one answer carries at most (page on with after). */
#define HISTORY_MAX 1000

/* A whole number of a query parameter in [lo, hi]: 0 with *v (def when
 * absent), or -1 after a 422. */
static int query_long(struct http_request *r, const char *name, long long def, long long lo,
		      long long hi, long long *v)
{
	if (http_query_long(r, name, def, lo, hi, v) < 0) {
		http_error(r, 422, "invalid_field", "%s must be a whole number from %lld to %lld",
			   name, lo, hi);
		return -1;
	}
	return 0;
}

/* Answers with the calls of session id above after, at most limit. */
static void history(struct http_request *r, struct api *a, const char *id, long long after,
		    long long limit, long long egress_after)
{
	char err[256];
	struct sess_hist *h = NULL;
	struct sess_egress *eg = NULL;
	size_t n = 0, neg = 0;
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessdb_history(db, id, sessions_key_of(a, r), after, (long)limit, &h, &n, err,
				     sizeof err)
		    : -1;
	if (rc == 1 &&
	    sessdb_egress_list(db, id, egress_after, (long)limit, &eg, &neg, err, sizeof err) < 0)
		rc = -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		render_db_error(r, "session history", err);
	else if (rc == 0)
		sessions_no_session(r, id);
	else {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "session_id", id);
		cJSON *arr = cJSON_AddArrayToObject(o, "calls");
		for (size_t i = 0; i < n; i++)
			cJSON_AddItemToArray(arr, sessrender_history_entry(&h[i]));
		/* a full page may have more: the client asks again with after */
		cJSON_AddItemToObject(o, "next_after",
				      n == (size_t)limit
					  ? cJSON_CreateNumber((double)h[n - 1].call.id)
					  : cJSON_CreateNull());
		/* every attempt to reach the network (sessegress.h), in order; paged
		 * on its own with egress_after */
		cJSON *earr = cJSON_AddArrayToObject(o, "egress");
		for (size_t i = 0; i < neg; i++)
			cJSON_AddItemToArray(earr, sessrender_egress_entry(&eg[i]));
		cJSON_AddItemToObject(o, "egress_next_after",
				      neg == (size_t)limit
					  ? cJSON_CreateNumber((double)eg[neg - 1].id)
					  : cJSON_CreateNull());
		http_respond_json(r, 200, o);
		cJSON_Delete(o);
	}
	for (size_t i = 0; i < n; i++)
		sess_hist_release(&h[i]);
	free(h);
	free(eg);
}

static void history_route(struct http_request *r, struct api *a, const char *id)
{
	long long after, limit, egress_after;
	if (query_long(r, "after", 0, 0, INT64_MAX, &after) == 0 &&
	    query_long(r, "limit", HISTORY_MAX, 1, HISTORY_MAX, &limit) == 0 &&
	    query_long(r, "egress_after", 0, 0, INT64_MAX, &egress_after) == 0)
		history(r, a, id, after, limit, egress_after);
}

static void list(struct http_request *r, struct api *a)
{
	char err[256];
	cJSON *arr = NULL;
	const char *all = http_query(r, "all");
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc =
	    db ? sessdb_list(db, sessions_key_of(a, r), a->cfg->worker_timeout_s,
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
	struct request_error e;
	if (request_parse_json(a->cfg, r->body.buf ? r->body.buf : "", r->body.len, &in, &e) < 0) {
		render_req_error(r, &e);
		return NULL;
	}
	return in;
}

int sessions_parse_call(struct http_request *r, struct api *a, enum scall_kind kind,
			const cJSON *in, struct sess_call *out)
{
	struct request_error e;
	int rc = -1;
	switch (kind) {
	case SCALL_EXECUTE:
		rc = sessreq_execute(a->cfg, &a->langs, in, out, &e);
		/* Accept: text/event-stream (not through MCP, whose reply is one JSON) */
		out->exec.stream = rc == 0 && !r->transform && sse_wanted(r);
		break;
	case SCALL_INSTALL:
		rc = sessreq_install(in, out, &e);
		break;
	case SCALL_CONTEXT_CREATE:
		rc = sessreq_context_create(&a->langs, in, out, &e);
		break;
	case SCALL_PROCESS_START:
		rc = sessreq_process_start(a->cfg, in, out, &e);
		break;
	default:
		sess_call_init(out, kind);
		rc = 0;
	}
	if (rc < 0)
		render_req_error(r, &e);
	return rc;
}

/* A body's call, routed. */
static void json_call(struct http_request *r, struct api *a, const char *id, enum scall_kind kind,
		      const cJSON *in)
{
	struct sess_call c;
	if (sessions_parse_call(r, a, kind, in, &c) == 0)
		sessions_route_call(r, a, id, &c, false);
	else
		sess_call_release(&c);
}

void sessions_segment(const char *arg, const char *name, char *out, size_t n)
{
	const char *x = arg + 36 + 1 + strlen(name) + 1;
	size_t len = strcspn(x, "/");
	snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), x);
}

static void context_call(struct http_request *r, struct api *a, const char *id, const char *arg,
			 enum scall_kind kind)
{
	char ctx[SESS_ID_MAX + 8];
	struct request_error e;
	struct sess_call c;
	sessions_segment(arg, "contexts", ctx, sizeof ctx);
	if (sessreq_context(kind, ctx, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	sessions_route_call(r, a, id, &c, false);
}

/* Session id is not open for this key: a 404 when it has none, else the
 * 409/410 of sessions_not_open. */
static void ended_or_unknown(struct http_request *r, struct api *a, const char *id)
{
	struct sess_row row = {0};
	if (row_of(r, a, id, &row))
		sessions_not_open(r, &row);
	sess_row_release(&row);
}

void sessions_set_idle_ttl(struct http_request *r, struct api *a, const char *id, const cJSON *in)
{
	static const char *const keys[] = {"idle_ttl", NULL};
	const cJSON *it, *ttl = cJSON_GetObjectItemCaseSensitive(in, "idle_ttl");
	char sid[37], err[256];
	if (sessions_id_of(r, id, sid) < 0)
		return;
	if (!cJSON_IsObject(in)) {
		http_error(r, 422, "invalid_field", "the body must be a JSON object");
		return;
	}
	cJSON_ArrayForEach(it, in)
	{
		bool known = false;
		for (int i = 0; keys[i]; i++)
			known |= it->string && !strcmp(it->string, keys[i]);
		if (!known) {
			http_error(r, 422, "invalid_field", "unknown field '%.40s'",
				   it->string ? it->string : "");
			return;
		}
	}
	long max = a->cfg->session_max_idle_ttl_s;
	if (!cJSON_IsNumber(ttl) || ttl->valuedouble < 1 || ttl->valuedouble > (double)max ||
	    ttl->valuedouble != (double)(long)ttl->valuedouble) {
		http_error(r, 422, "invalid_field",
			   "idle_ttl must be a whole number of seconds from 1 to %ld", max);
		return;
	}
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessdb_set_idle_ttl(db, sid, sessions_key_of(a, r), (long)ttl->valuedouble,
					  err, sizeof err)
		    : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		render_db_error(r, "session update", err);
	else if (rc == 1)
		get_one(r, a, sid);
	else
		/* not open: a 404, or a 410 saying how it ended */
		ended_or_unknown(r, a, sid);
}

void sessions_handle(struct http_request *r, struct api *a, enum route rt, const char *arg)
{
	char id[37];
	bool post = !strcmp(r->method, "POST"), del = !strcmp(r->method, "DELETE");
	bool patch = !strcmp(r->method, "PATCH");
	if (rt == R_SESSIONS && !post)
		return list(r, a);
	if (rt != R_SESSIONS && sessions_id_of(r, arg, id) < 0)
		return;
	cJSON *in = NULL;
	bool optional = sessions_body_optional(rt) && !r->body.len;
	if ((post || patch) && rt != R_SESSION_CONTEXT_RESTART && !optional &&
	    !(in = json_body(r, a)))
		return;
	switch (rt) {
	case R_SESSIONS:
		sessions_create(r, a, in);
		break;
	case R_SESSION:
		if (del)
			json_call(r, a, id, SCALL_CLOSE, NULL);
		else if (patch)
			sessions_set_idle_ttl(r, a, id, in);
		else
			get_one(r, a, id);
		break;
	case R_SESSION_EXECUTE:
		json_call(r, a, id, SCALL_EXECUTE, in);
		break;
	case R_SESSION_INSTALL:
		json_call(r, a, id, SCALL_INSTALL, in);
		break;
	case R_SESSION_HISTORY:
		history_route(r, a, id);
		break;
	case R_SESSION_FILES: {
		const char *dir = http_query(r, "dir");
		sessions_file_call(r, a, id, dir ? dir : "", SCALL_FILE_LIST, NULL, 0, false);
		break;
	}
	case R_SESSION_FILE:
		sessions_file_route(r, a, id, arg);
		break;
	case R_SESSION_CONTEXTS:
		json_call(r, a, id, post ? SCALL_CONTEXT_CREATE : SCALL_CONTEXT_LIST, in);
		break;
	case R_SESSION_CONTEXT:
		context_call(r, a, id, arg, SCALL_CONTEXT_REMOVE);
		break;
	case R_SESSION_CONTEXT_RESTART:
		context_call(r, a, id, arg, SCALL_CONTEXT_RESTART);
		break;
	case R_SESSION_PROCESSES:
		json_call(r, a, id, post ? SCALL_PROCESS_START : SCALL_PROCESS_LIST, in);
		break;
	case R_SESSION_PROCESS:
		sessions_process_call(r, a, id, arg, SCALL_PROCESS_WAIT, NULL);
		break;
	case R_SESSION_PROCESS_STDIN:
		sessions_process_call(r, a, id, arg,
				      del ? SCALL_PROCESS_CLOSE_STDIN : SCALL_PROCESS_INPUT, in);
		break;
	case R_SESSION_PROCESS_SIGNAL:
		sessions_process_call(r, a, id, arg, SCALL_PROCESS_SIGNAL, in);
		break;
	case R_SESSION_PROCESS_EVENTS:
		sessions_process_events_route(r, a, id, arg);
		break;
	case R_SESSION_PAUSE:
		json_call(r, a, id, SCALL_PAUSE, in);
		break;
	case R_SESSION_INTERRUPT:
		json_call(r, a, id, SCALL_INTERRUPT, in);
		break;
	case R_SESSION_SNAPSHOT:
	case R_SESSION_FORK:
		sessions_snapshot_call(r, a, id, in, rt == R_SESSION_FORK);
		break;
	case R_SESSION_RESUME:
		sessions_resume_route(r, a, id);
		break;
	default:
		http_error(r, 404, "not_found", "no such endpoint: %.100s", r->url);
	}
	cJSON_Delete(in);
}

void sessions_get(struct http_request *r, struct api *a, const char *id)
{
	char sid[37];
	if (sessions_id_of(r, id, sid) == 0)
		get_one(r, a, sid);
}

void sessions_list(struct http_request *r, struct api *a)
{
	list(r, a);
}

void sessions_call(struct http_request *r, struct api *a, const char *id, enum scall_kind kind,
		   const cJSON *in)
{
	char sid[37];
	if (sessions_id_of(r, id, sid) == 0)
		json_call(r, a, sid, kind, in);
}

void sessions_context(struct http_request *r, struct api *a, const char *id, const char *ctx,
		      enum scall_kind kind)
{
	char sid[37];
	struct request_error e;
	struct sess_call c;
	if (sessions_id_of(r, id, sid) < 0)
		return;
	if (sessreq_context(kind, ctx, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	sessions_route_call(r, a, sid, &c, false);
}

void sessions_execute_events(struct http_request *r, struct api *a, const char *id, const cJSON *in,
			     const struct sse_opts *framing)
{
	char sid[37];
	struct sess_call c;
	if (sessions_id_of(r, id, sid) < 0)
		return;
	if (sessions_parse_call(r, a, SCALL_EXECUTE, in, &c) < 0) {
		sess_call_release(&c);
		return;
	}
	c.exec.stream = true;
	sessions_route_call_ex(r, a, sid, &c, false, false, framing);
}

void sessions_tool(struct http_request *r, struct api *a, enum scall_kind kind, const cJSON *body)
{
	char id[37];
	struct request_error e;
	struct sess_call c;
	if (sessreq_tool(a->cfg, &a->langs, kind, body, id, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	sessions_route_call(r, a, id, &c, kind == SCALL_FILE_GET);
}

void sessions_history_tool(struct http_request *r, struct api *a, const cJSON *body)
{
	const cJSON *sid = cJSON_GetObjectItemCaseSensitive(body, "session_id");
	const cJSON *after = cJSON_GetObjectItemCaseSensitive(body, "after");
	const cJSON *eafter = cJSON_GetObjectItemCaseSensitive(body, "egress_after");
	if (!cJSON_IsString(sid)) {
		http_error(r, 422, "missing_field", "session_id is required");
		return;
	}
	const cJSON *pos[] = {after, eafter};
	for (int i = 0; i < 2; i++)
		if (pos[i] && !cJSON_IsNull(pos[i]) &&
		    (!cJSON_IsNumber(pos[i]) || pos[i]->valuedouble < 0 ||
		     pos[i]->valuedouble > 9e15 ||
		     pos[i]->valuedouble != (double)(long long)pos[i]->valuedouble)) {
			http_error(r, 422, "invalid_field", "%s must be a whole number >= 0",
				   i ? "egress_after" : "after");
			return;
		}
	if (!sessreq_id_valid(sid->valuestring))
		return sessions_no_session(r, sid->valuestring);
	history(r, a, sid->valuestring, cJSON_IsNumber(after) ? (long long)after->valuedouble : 0,
		HISTORY_MAX, cJSON_IsNumber(eafter) ? (long long)eafter->valuedouble : 0);
}
