/* sessions_call: a session call's way: stored for the worker that holds the session,
 * the request parked in the session hub (or a streamed cell relayed), answered
 * with the worker's typed reply. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "judge/api/api.h"
#include "judge/api/http.h"
#include "judge/api/metrics.h"
#include "judge/api/render.h"
#include "judge/api/sessions.h"
#include "judge/api/sessions_int.h"
#include "judge/api/sessrender.h"
#include "judge/api/sse.h"
#include "judge/grading/limits.h"
#include "judge/service/outstream.h"
#include "judge/service/session/sessdb.h"
#include "judge/service/session/sesshub.h"
#include "judge/service/session/sessreq.h"
#include "judge/service/waiter.h"
#include "judge/store/db.h"

/* r->ctx_free of a parked request: its waiter unregistered, its call released. */
static void sctx_free(void *p)
{
	struct sessions_ctx *c = p;
	if (!c)
		return;
	waiter_unregister(
	    c->held ? sse_hub_waiters(c->api->sse) : sesshub_waiters(c->api->sessions), &c->w);
	sess_call_release(&c->call);
	free(c);
}

bool sessions_owns(const struct http_request *r)
{
	return r->ctx && r->ctx_free == sctx_free;
}

void sessions_ctx_end(struct sessions_ctx *c)
{
	struct http_request *r = c->r;
	r->ctx = NULL;
	r->ctx_free = NULL;
	sctx_free(c);
}

static void resume_request(struct waiter *w)
{
	http_resume(((struct sessions_ctx *)w->arg)->r);
}

void sessions_suspend(struct waiter *w)
{
	http_suspend(((struct sessions_ctx *)w->arg)->r);
}

struct sessions_ctx *sessions_ctx_new(struct http_request *r, struct api *a, const char *id,
				      int64_t deadline_ms)
{
	struct sessions_ctx *c = xcalloc(1, sizeof *c);
	c->api = a;
	c->r = r;
	c->t0_us = clock_mono_us();
	snprintf(c->id, sizeof c->id, "%s", id);
	c->w.deadline_ms = deadline_ms;
	c->w.resume = resume_request;
	c->w.arg = c;
	sess_call_init(&c->call, SCALL_CLOSE);
	r->ctx = c;
	r->ctx_free = sctx_free;
	return c;
}

/* Answers with a session's error. */
static void reply_error(struct http_request *r, const struct sess_reply *rep)
{
	int status;
	const char *code;
	sessrender_error(rep->err, &status, &code);
	http_error(r, status, code, "%s", rep->message);
}

/* Answers with the worker's typed answer to c->call. */
static void answer(struct sessions_ctx *c, const struct sess_reply *rep)
{
	struct http_request *r = c->r;
	const struct sess_call *call = &c->call;
	bool ok = c->events && rep->err == SERR_NONE;
	bool watching = ok && call->kind == SCALL_WATCH_START;
	if (watching || (ok && call->kind == SCALL_PROCESS_START && rep->nprocs)) {
		/* watching or started: the answer is the relay of the watcher's
		 * events or of the process's output, on this request */
		struct api *a = c->api;
		const struct sse_opts *framing = c->events;
		char id[37];
		snprintf(id, sizeof id, "%s", c->id);
		sessions_ctx_end(c);
		if (watching)
			sessions_relay_watcher(r, a, id, rep->watch.id, framing);
		else
			sessions_relay_process(r, a, id, rep->procs[0].pid, 0, framing);
		return;
	}
	if (rep->err != SERR_NONE) {
		reply_error(r, rep);
	} else if (call->kind == SCALL_FILE_GET) {
		sessions_answer_file(r, call, rep, c->file_json);
	} else if (c->fork) {
		sessions_fork_create(c, rep);
		return;
	} else {
		cJSON *o = sessrender_reply(call, rep);
		if (call->kind == SCALL_PAUSE)
			cJSON_AddStringToObject(o, "id", c->id);
		if (call->kind == SCALL_SNAPSHOT)
			cJSON_AddStringToObject(o, "session_id", c->id);
		http_respond_json(r, sessrender_status(call->kind), o);
		cJSON_Delete(o);
	}
	if (call->kind == SCALL_EXECUTE && rep->err == SERR_NONE)
		metrics_session_cell(c->api->metrics, cell_status_name(rep->cell.status),
				     (double)(clock_mono_us() - c->t0_us) / 1e6);
}

static void continue_call(struct sessions_ctx *c)
{
	struct api *a = c->api;
	struct http_request *r = c->r;
	char err[256];
	for (;;) {
		waiter_register(sesshub_waiters(a->sessions), &c->w);
		struct sess_reply rep;
		struct db *db = api_db(a, 5000, err, sizeof err);
		int rc = db ? sessdb_call_get(db, c->call_id, c->call.kind,
					      c->call.kind == SCALL_FILE_GET, &rep, err, sizeof err)
			    : -1;
		if (db)
			db_pool_put(a->pool, db);
		bool over = clock_mono_ms() >= c->w.deadline_ms || http_stopping(r);
		if (rc == 0 && !over) {
			if (waiter_park(sesshub_waiters(a->sessions), &c->w, sessions_suspend))
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
			answer(c, &rep);
		if (rc == 1)
			sess_reply_release(&rep);
		return;
	}
}

/* How long serve waits for call c's answer, from the session's limits. */
static long call_wait_ms(struct api *a, const struct sess_call *c, const struct sess_row *row)
{
	struct limits_policy p;
	limits_policy_from_config(a->cfg, &p);
	if (c->kind == SCALL_INSTALL)
		return limits_install_wait_ms(&p);
	if (c->kind == SCALL_PROCESS_WAIT)
		return c->proc.timeout_ms + LIMITS_SESSION_CALL_SLACK_MS;
	if (c->kind != SCALL_EXECUTE)
		return LIMITS_SESSION_CALL_MS;
	struct limits_session l = {0};
	sessreq_limits_load(row->limits, &l);
	return limits_cell_wait_ms(&l, c->exec.timeout_ms);
}

/* SSE's done hook: the cell's JSON from the stored answer, counted in the metrics. */
static char *cell_done(void *arg, const char *stored)
{
	struct sessions_ctx *c = arg;
	const char *status;
	char *data = sessrender_cell_done(stored, &status);
	metrics_session_cell(c->api->metrics, status, (double)(clock_mono_us() - c->t0_us) / 1e6);
	return data;
}

void sessions_call_unanswered(struct api *a, const char *sid, int64_t key, struct sess_call *c)
{
	char err[256];
	struct sess_row row = {0};
	int64_t call_id = 0;
	struct db *db = api_db(a, 1000, err, sizeof err);
	if (db && sessdb_call(db, sid, key, a->cfg->worker_timeout_s, c, &call_id, &row, err,
			      sizeof err) < 0)
		log_warn("sessions: cannot send %s to %s: %s", scall_kind_name(c->kind), sid, err);
	if (db)
		db_pool_put(a->pool, db);
	sess_row_release(&row);
}

/* A streamed cell whose client left before its end is interrupted, as E2B's
 * code interpreter does (e2b-dev/code-interpreter#213): else the session's
 * next cell would wait behind it up to its limit. */
static void cell_left(void *arg)
{
	struct sessions_ctx *c = arg;
	struct sess_call call;
	sess_call_init(&call, SCALL_INTERRUPT);
	call.target = c->call_id;
	sessions_call_unanswered(c->api, c->id, c->key, &call);
	sess_call_release(&call);
}

/* Relays a streamed cell's output: stdout and stderr as printed, then result
 * or error, then done with the whole answer (migrations/0010_session_model.sql). */
static void relay_cell(struct http_request *r, struct api *a, const char *sid, int64_t call_id,
		       const struct sse_opts *framing)
{
	int64_t after = sse_last_event_id(http_header(r, "Last-Event-ID"));
	char stream[48];
	snprintf(stream, sizeof stream, "cell:%" PRId64, call_id);
	struct sessions_ctx *c = xcalloc(1, sizeof *c);
	c->api = a;
	c->t0_us = clock_mono_us();
	snprintf(c->id, sizeof c->id, "%s", sid);
	c->call_id = call_id;
	c->key = sessions_key_of(a, r);
	struct sse_opts o = framing ? *framing : (struct sse_opts){0};
	o.stream = stream;
	o.after = after > 0 && !framing ? after : 0;
	o.done_data = cell_done;
	o.arg = c;
	o.arg_free = free;
	o.on_left = cell_left;
	if (sse_relay(r, a->sse, &o) < 0 && !r->responded)
		http_error(r, 503, "unavailable", "cannot stream the output of call %" PRId64,
			   call_id);
}

/* A held cell (sctx.held): once its stream has a first event, the relay of
 * it when that is start; else the cell was refused before it ran (no such
 * context, the session lost): its stored answer, as an unstreamed call's. */
static void continue_held(struct sessions_ctx *c)
{
	struct api *a = c->api;
	struct http_request *r = c->r;
	struct waiter_hub *h = sse_hub_waiters(a->sse);
	char err[256], stream[48];
	snprintf(stream, sizeof stream, "cell:%" PRId64, c->call_id);
	for (;;) {
		waiter_register(h, &c->w);
		struct outstream_chunk *ch = NULL;
		struct db *db = api_db(a, 5000, err, sizeof err);
		int n = db ? outstream_read(db, stream, 0, 1, 4096, &ch, err, sizeof err) : -1;
		if (db)
			db_pool_put(a->pool, db);
		bool start = n > 0 && !strcmp(ch[0].event, "start");
		outstream_chunks_free(ch, n > 0 ? n : 0); /* allocated even for none */
		bool over = clock_mono_ms() >= c->w.deadline_ms || http_stopping(r);
		if (n == 0 && !over) {
			if (waiter_park(h, &c->w, sessions_suspend))
				return;
			continue;
		}
		waiter_unregister(h, &c->w);
		if (n <= 0) {
			if (n < 0)
				render_db_error(r, "session call", err);
			else
				http_error(r, 504, "timeout",
					   "the cell did not start in time; it may still run");
			return;
		}
		if (start) {
			const struct sse_opts *framing = c->events;
			int64_t call_id = c->call_id;
			char sid[37];
			snprintf(sid, sizeof sid, "%s", c->id);
			sessions_ctx_end(c);
			return relay_cell(r, a, sid, call_id, framing);
		}
		/* its answer is stored with the stream's end: read it as a call's */
		c->held = false;
		char key[48];
		snprintf(key, sizeof key, "c%" PRId64, c->call_id);
		c->w.id = sesshub_key(key);
		return continue_call(c);
	}
}

/* An interrupt of a session where no cell runs. */
static void respond_interrupted(struct http_request *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddFalseToObject(o, "interrupted");
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

/* DELETE of a paused session: no worker holds it, so serve ends it. */
static void close_paused(struct http_request *r, struct api *a, const char *id)
{
	char err[256];
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessdb_end(db, id, SESS_CLOSED, SESS_REASON_CLIENT, err, sizeof err) : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		return render_db_error(r, "session close", err);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddStringToObject(o, "status", "closed");
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

void sessions_route_call_ex(struct http_request *r, struct api *a, const char *id,
			    struct sess_call *call, bool file_json, bool fork,
			    const struct sse_opts *events)
{
	char err[256];
	struct sess_row row = {0};
	int64_t call_id = 0;
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessdb_call(db, id, sessions_key_of(a, r), a->cfg->worker_timeout_s, call,
				  &call_id, &row, err, sizeof err)
		    : -1;
	if (db)
		db_pool_put(a->pool, db);
	bool image = call->kind == SCALL_PAUSE || call->kind == SCALL_SNAPSHOT;
	struct sessions_ctx *then = NULL;
	if (rc < 0)
		render_db_error(r, "session call", err);
	else if (rc == 0)
		sessions_no_session(r, id);
	else if (rc == 2 && row.status == SESS_PAUSED && call->kind == SCALL_CLOSE)
		close_paused(r, a, id);
	else if (rc == 2 && row.status == SESS_PAUSED && call->kind == SCALL_INTERRUPT)
		respond_interrupted(r); /* nothing runs in a paused session: not resumed */
	else if (rc == 2 && image && (row.status == SESS_PAUSED || row.status >= SESS_CLOSED))
		http_error(r, 409, row.status == SESS_PAUSED ? "session_paused" : "session_closed",
			   "session %s is %s%s%s", id, sess_status_name(row.status),
			   row.reason[0] ? ": " : "", row.reason);
	else if (rc == 2 && row.status == SESS_PAUSED) {
		/* the next call resumes it: on any worker, from its image */
		sess_row_release(&row);
		int rs = sessions_resume_paused(r, a, id, &row, &then);
		if (rs == 0)
			sessions_not_open(r, &row); /* resumed meanwhile by another call: retry */
		else if (rs == 1) {
			then->then_call = true;
			then->file_json = file_json;
			then->events = events;
			then->call = *call;
			sess_call_init(call, call->kind);
			sessions_continue_create(then);
		}
	} else if (rc == 2)
		sessions_not_open(r, &row);
	else if (call->kind == SCALL_EXECUTE && call->exec.stream && !events)
		relay_cell(r, a, id, call_id, NULL);
	else {
		struct sessions_ctx *c =
		    sessions_ctx_new(r, a, id, clock_mono_ms() + call_wait_ms(a, call, &row));
		c->held = call->kind == SCALL_EXECUTE && call->exec.stream;
		c->call_id = call_id;
		c->file_json = file_json;
		c->fork = fork;
		c->events = events;
		c->call = *call;
		sess_call_init(call, call->kind);
		char key[48];
		snprintf(key, sizeof key, c->held ? "cell:%" PRId64 : "c%" PRId64, call_id);
		c->w.id = c->held ? waiter_text_key(key) : sesshub_key(key);
		if (c->held)
			continue_held(c);
		else
			continue_call(c);
	}
	sess_call_release(call);
	sess_row_release(&row);
}

void sessions_route_call(struct http_request *r, struct api *a, const char *id,
			 struct sess_call *call, bool file_json)
{
	sessions_route_call_ex(r, a, id, call, file_json, false, NULL);
}

void sessions_resume(struct http_request *r)
{
	struct sessions_ctx *c = r->ctx;
	if (c->create)
		sessions_continue_create(c);
	else if (c->held)
		continue_held(c);
	else
		continue_call(c);
}
