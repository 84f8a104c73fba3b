/* sessions: the session endpoints: check, store a call for the holding worker, park, answer. */
#include "judge/api/sessions.h"

#include <errno.h>
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
#include "judge/api/sessrender.h"
#include "judge/api/sse.h"
#include "judge/grading/limits.h"
#include "judge/service/auth.h"
#include "judge/service/outstream.h"
#include "judge/service/session/sessdb.h"
#include "judge/service/session/sesshub.h"
#include "judge/service/session/sessimage.h"
#include "judge/service/session/sessproc.h"
#include "judge/service/session/sessreq.h"
#include "judge/service/session/sesswatch.h"
#include "judge/service/waiter.h"
#include "judge/store/db.h"

/* How long a create waits for a worker to start the sandbox. */
#define CREATE_WAIT_MS 30000

/* The policy of a served session file: an opaque origin, no script, no
 * loads of anything. */
#define SESSION_FILE_CSP "sandbox; default-src 'none'"

/* A parked request's state (r->ctx). */
struct sctx {
	struct api *api;
	struct http_request *r;
	struct waiter w;
	bool create; /* waiting for the session to start, else for call_id */
	/* create's answer: resume (200, restarted), fork (201, with forked_from
	 * and snapshot_id), or then_call: a paused session resumed for c->call,
	 * which is routed once it is ready */
	bool resume, fork, then_call;
	char parent[37], snapshot_id[37];
	char id[37];
	int64_t call_id;
	struct sess_call call; /* what was stored (its answer is rendered with it) */
	bool file_json;	       /* MCP: a file's bytes as JSON */
	int64_t t0_us;
	/* a process start answered by the relay of its output in this
	 * framing (E2B's Connect streams), not by the process's JSON */
	const struct sse_opts *events;
	/* a streamed cell in events' framing, waiting in the SSE hub for its
	 * stream's first event: start (relay it) or its refusal (answer that) */
	bool held;
};

static void sctx_free(void *p)
{
	struct sctx *c = p;
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
	sess_call_init(&c->call, SCALL_CLOSE);
	r->ctx = c;
	r->ctx_free = sctx_free;
	return c;
}

/* 410 (409 while starting) with why a session takes no calls. */
static void not_open(struct http_request *r, const struct sess_row *row)
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

static void no_session(struct http_request *r, const char *id)
{
	http_error(r, 404, "not_found", "no session '%.40s'", id);
}

/* ---- create ---- */

static void route_call(struct http_request *r, struct api *a, const char *id,
		       struct sess_call *call, bool file_json);
static void route_call_ex(struct http_request *r, struct api *a, const char *id,
			  struct sess_call *call, bool file_json, bool fork,
			  const struct sse_opts *events);
static void relay_process(struct http_request *r, struct api *a, const char *id, long pid,
			  int64_t after, const struct sse_opts *framing);

/* A create's wait ended with the session ready: answers as c asks. */
static void created(struct sctx *c, const struct sess_row *row)
{
	struct http_request *r = c->r;
	if (c->then_call) {
		/* the call that found the session paused, now that it is back */
		struct api *a = c->api;
		struct sess_call call = c->call;
		bool file_json = c->file_json;
		const struct sse_opts *events = c->events;
		char id[37];
		snprintf(id, sizeof id, "%s", c->id);
		sess_call_init(&c->call, SCALL_CLOSE);
		r->ctx = NULL;
		r->ctx_free = NULL;
		sctx_free(c);
		route_call_ex(r, a, id, &call, file_json, false, events);
		return;
	}
	cJSON *o = sess_row_json(row);
	if (c->resume && row->resumed_memory == 1) {
		cJSON_AddBoolToObject(o, "restarted", false);
		cJSON_AddStringToObject(
		    o, "message",
		    "resumed on a new sandbox from its stored image with its "
		    "memory: variables, processes, files and packages are back");
	} else if (c->resume) {
		cJSON_AddBoolToObject(o, "restarted", true);
		cJSON_AddStringToObject(o, "message",
					"resumed on a new sandbox from its stored image: files and "
					"installed packages are back; variables are lost");
	}
	if (c->fork) {
		cJSON_AddStringToObject(o, "forked_from", c->parent);
		cJSON_AddStringToObject(o, "snapshot_id", c->snapshot_id);
	}
	http_respond_json(r, c->resume ? 200 : 201, o);
	cJSON_Delete(o);
}

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
		else
			created(c, &row);
		sess_row_release(&row);
		return;
	}
}

/* Starts the wait of a session just created (or resumed) as id. */
static struct sctx *wait_start(struct http_request *r, struct api *a, const char *id)
{
	struct sctx *c = sctx_new(r, a, id, clock_mono_ms() + CREATE_WAIT_MS);
	c->create = true;
	char key[48];
	snprintf(key, sizeof key, "s%s", id);
	c->w.id = sesshub_key(key);
	return c;
}

/* The snapshot of a create's from_snapshot: 1 with its language, limits,
 * network and env (the body's own win), 0 after answering an error. */
static int from_snapshot(struct http_request *r, struct api *a, const cJSON *body, cJSON **in,
			 char *image, cJSON **lim, cJSON **net, cJSON **env)
{
	const cJSON *fs = cJSON_GetObjectItemCaseSensitive(body, "from_snapshot");
	char err[256], lang[32];
	if (!cJSON_IsString(fs) || !sessreq_id_valid(fs->valuestring)) {
		http_error(r, 422, "invalid_field", "from_snapshot must be a snapshot id");
		return 0;
	}
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessimage_snapshot_get(db, fs->valuestring, key_of(a, r), lang, lim, net, env,
					     err, sizeof err)
		    : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0) {
		render_db_error(r, "session create", err);
		return 0;
	}
	if (rc == 0) {
		http_error(r, 404, "not_found", "no snapshot '%.40s'", fs->valuestring);
		return 0;
	}
	snprintf(image, 37, "%s", fs->valuestring);
	*in = cJSON_Duplicate(body, true);
	cJSON_DeleteItemFromObjectCaseSensitive(*in, "from_snapshot");
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(*in, "language");
	if (l && (!cJSON_IsString(l) || strcmp(l->valuestring, lang))) {
		http_error(r, 422, "invalid_field",
			   "the snapshot is a %s session: language must be that or absent", lang);
		return 0;
	}
	if (!l)
		cJSON_AddStringToObject(*in, "language", lang);
	/* the request's limits and network, when it gives them, else the snapshot's */
	if (cJSON_GetObjectItemCaseSensitive(*in, "limits")) {
		cJSON_Delete(*lim);
		*lim = NULL;
	}
	if (cJSON_GetObjectItemCaseSensitive(*in, "network")) {
		cJSON_Delete(*net);
		*net = NULL;
	} else if (*net) {
		/* checked against today's cap as a request's own network is: the
		 * operator may have lowered it since the snapshot was taken */
		cJSON_AddItemToObject(*in, "network", *net);
		*net = NULL;
	}
	if (cJSON_GetObjectItemCaseSensitive(*in, "env")) {
		cJSON_Delete(*env);
		*env = NULL;
	}
	return 1;
}

int sessions_keycap(struct api *a, struct http_request *r, struct sessreq_keycap *kc, char *err,
		    size_t errlen)
{
	int64_t key = key_of(a, r);
	if (!key)
		return 0; /* auth off: no key, judge.ini's cap */
	cJSON *j = NULL;
	struct db *db = api_db(a, 5000, err, errlen);
	int rc = db ? auth_key_egress(db, key, &j, err, errlen) : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0 || !j)
		return rc;
	kc->key_id = key;
	rc = sessnet_keycap_parse(j, &kc->cap, err, errlen) < 0 ? -1 : 1;
	cJSON_Delete(j);
	return rc;
}

int sessions_egress_cap(struct api *a, struct http_request *r, struct sessnet_policy *cap,
			char *err, size_t errlen)
{
	struct sessreq_keycap kc;
	int rc = sessions_keycap(a, r, &kc, err, errlen);
	if (rc < 0)
		return -1;
	if (rc == 1) {
		*cap = kc.cap;
		return 0;
	}
	return sessnet_cap_parse(a->cfg->egress, a->cfg->egress_allow, cap, err, errlen);
}

void sessions_create(struct http_request *r, struct api *a, const cJSON *body)
{
	sessions_create_token(r, a, body, NULL);
}

void sessions_create_token(struct http_request *r, struct api *a, const cJSON *body,
			   const char *access_token)
{
	struct request_error e;
	struct sessreq_create cr;
	struct sessreq_keycap kc;
	char err[256], id[37], image[37] = "";
	cJSON *in = NULL, *slim = NULL, *snet = NULL, *senv = NULL;
	cr.env = NULL;
	cr.metadata = NULL;
	if (cJSON_GetObjectItemCaseSensitive(body, "from_snapshot")) {
		if (!from_snapshot(r, a, body, &in, image, &slim, &snet, &senv))
			goto out;
		body = in;
	}
	int has_kc = sessions_keycap(a, r, &kc, err, sizeof err);
	if (has_kc < 0) {
		render_db_error(r, "session create", err);
		goto out;
	}
	if (sessreq_create(a->cfg, &a->langs, body, has_kc ? &kc : NULL, &cr, &e) < 0) {
		render_req_error(r, &e);
		goto out;
	}
	cJSON *lim = slim ? cJSON_Duplicate(slim, true) : sessreq_limits_json(&cr.limits);
	cJSON *net = snet			   ? cJSON_Duplicate(snet, true)
		     : cr.net.mode == SESSNET_NONE ? NULL
						   : sessnet_json(&cr.net);
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessdb_create(db, key_of(a, r), cr.lang->name, lim, net, senv ? senv : cr.env,
				    image[0] ? image : NULL, cr.idle_ttl_s, cr.idle_pause,
				    a->cfg->session_max_lifetime_s, a->cfg->sessions_per_key,
				    cr.metadata, access_token, id, err, sizeof err)
		    : -1;
	if (db)
		db_pool_put(a->pool, db);
	cJSON_Delete(lim);
	cJSON_Delete(net);
	if (rc < 0) {
		render_db_error(r, "session create", err);
		goto out;
	}
	if (rc == 1) {
		const char *hdr[] = {"Retry-After", "10", NULL};
		http_error_h(r, 429, hdr, "too_many_sessions",
			     "this API key has %ld open sessions, the most it may hold; close one "
			     "(DELETE /v1/sessions/{id})",
			     a->cfg->sessions_per_key);
		goto out;
	}
	continue_create(wait_start(r, a, id));
out:
	cJSON_Delete(in);
	cJSON_Delete(slim);
	cJSON_Delete(snet);
	cJSON_Delete(senv);
	cJSON_Delete(cr.env);
	cJSON_Delete(cr.metadata);
}

/* Makes paused session id starting again and waits for it: then answers as
 * c's flags ask (c from wait_start, set by the caller through *then). Returns
 * 1 when resumed (the request parked or answered), 0 when it is not paused
 * (*row holds it), -1 after answering an error. */
static int resume_session(struct http_request *r, struct api *a, const char *id,
			  struct sess_row *row, struct sctx **then)
{
	char err[256];
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc =
	    db ? sessdb_resume(db, id, key_of(a, r), a->cfg->worker_timeout_s, row, err, sizeof err)
	       : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		render_db_error(r, "session resume", err);
	else if (rc == 0)
		no_session(r, id);
	if (rc == 0 || rc < 0)
		return -1;
	if (rc == 2)
		return 0;
	*then = wait_start(r, a, id);
	return 1;
}

/* ---- calls ---- */

/* Answers with a session's error. */
static void reply_error(struct http_request *r, const struct sess_reply *rep)
{
	int status;
	const char *code;
	sessrender_error(rep->err, &status, &code);
	http_error(r, status, code, "%s", rep->message);
}

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

/* Whether stored policy net (NULL: none) lies within the cap of r's key
 * today: 0, 1 when refused (msg names the rule), -1 with msg. */
static int net_refused(struct http_request *r, struct api *a, const cJSON *net, char *msg,
		       size_t len)
{
	struct sessnet_policy p, cap;
	struct sessreq_keycap kc;
	int k = sessions_keycap(a, r, &kc, msg, len);
	if (k < 0 || sessnet_parse(net, &p, msg, len) < 0)
		return -1;
	if (k)
		return sessnet_check_key(&p, &kc.cap, kc.key_id, msg, len) < 0;
	if (sessnet_cap_parse(a->cfg->egress, a->cfg->egress_allow, &cap, msg, len) < 0)
		return -1;
	return sessnet_check(&p, &cap, msg, len) < 0;
}

/* A fork's snapshot is stored (rep): a new session from it, c waiting for
 * it as a create waits. */
static void fork_create(struct sctx *c, const struct sess_reply *rep)
{
	struct api *a = c->api;
	struct http_request *r = c->r;
	char err[256], lang[32], id[37];
	cJSON *lim = NULL, *net = NULL, *env = NULL;
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessimage_snapshot_get(db, rep->image.id, key_of(a, r), lang, &lim, &net,
					     &env, err, sizeof err)
		    : -1;
	struct sess_row row = {0};
	int made = -1;
	if (db)
		db_pool_put(a->pool, db);
	/* a new session: held to the key's cap of today, which may be lower than
	 * when its parent was made */
	char msg[400];
	int refused = rc == 1 ? net_refused(r, a, net, msg, sizeof msg) : 0;
	db = rc == 1 && refused == 0 ? api_db(a, 5000, err, sizeof err) : NULL;
	if (refused)
		rc = -1;
	if (refused < 0)
		snprintf(err, sizeof err, "%.250s", msg);
	if (db && sessdb_get(db, c->id, key_of(a, r), a->cfg->worker_timeout_s, &row, err,
			     sizeof err) == 1)
		made = sessdb_create(db, key_of(a, r), lang, lim, net, env, rep->image.id,
				     row.idle_ttl_s, row.idle_pause, a->cfg->session_max_lifetime_s,
				     a->cfg->sessions_per_key, NULL, NULL, id, err, sizeof err);
	if (db)
		db_pool_put(a->pool, db);
	sess_row_release(&row);
	cJSON_Delete(lim);
	cJSON_Delete(net);
	cJSON_Delete(env);
	if (made == 1) {
		http_error(r, 429, "too_many_sessions",
			   "this API key has %ld open sessions, the most it may hold; the snapshot "
			   "%s is stored: start it later with from_snapshot",
			   a->cfg->sessions_per_key, rep->image.id);
		return;
	}
	if (refused == 1) {
		http_error(r, 403, "egress_forbidden", "%s; the snapshot %s is stored", msg,
			   rep->image.id);
		return;
	}
	if (made < 0) {
		render_db_error(r, "session fork", rc == 0 ? "its snapshot is gone" : err);
		return;
	}
	snprintf(c->parent, sizeof c->parent, "%s", c->id);
	snprintf(c->snapshot_id, sizeof c->snapshot_id, "%s", rep->image.id);
	snprintf(c->id, sizeof c->id, "%s", id);
	c->create = true;
	c->w.deadline_ms = clock_mono_ms() + CREATE_WAIT_MS;
	char key[48];
	snprintf(key, sizeof key, "s%s", id);
	c->w.id = sesshub_key(key);
	continue_create(c);
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
	char err[256];
	if (sessreq_watch(SCALL_WATCH_STOP, wl->watcher, &c, &e) == 0) {
		struct sess_row row = {0};
		int64_t call_id = 0;
		struct db *db = api_db(wl->a, 1000, err, sizeof err);
		/* its answer is not waited for: nobody is there to read it */
		if (db && sessdb_call(db, wl->sid, wl->key, wl->a->cfg->worker_timeout_s, &c,
				      &call_id, &row, err, sizeof err) < 0)
			log_warn("sessions: cannot end watcher %s of %s: %s", wl->watcher, wl->sid,
				 err);
		if (db)
			db_pool_put(wl->a->pool, db);
		sess_row_release(&row);
	}
	sess_call_release(&c);
}

/* Answers with the worker's typed answer to c->call. */
static void answer(struct sctx *c, const struct sess_reply *rep)
{
	struct http_request *r = c->r;
	const struct sess_call *call = &c->call;
	if (c->events && rep->err == SERR_NONE && call->kind == SCALL_WATCH_START) {
		/* watching: the answer is the relay of its events */
		struct api *a = c->api;
		const struct sse_opts *framing = c->events;
		char id[37], stream[OUTSTREAM_ID_MAX];
		snprintf(id, sizeof id, "%s", c->id);
		sesswatch_stream(id, rep->watch.id, stream, sizeof stream);
		struct watch_left *wl = xcalloc(1, sizeof *wl);
		wl->a = a;
		wl->key = key_of(a, r);
		snprintf(wl->sid, sizeof wl->sid, "%s", id);
		snprintf(wl->watcher, sizeof wl->watcher, "%s", rep->watch.id);
		r->ctx = NULL;
		r->ctx_free = NULL;
		sctx_free(c);
		struct sse_opts o = *framing;
		o.stream = stream;
		o.arg = wl;
		o.arg_free = free;
		o.on_left = watch_left;
		if (sse_relay(r, a->sse, &o) < 0 && !r->responded)
			http_error(r, 503, "unavailable", "cannot stream the watcher's events");
		return;
	}
	if (c->events && rep->err == SERR_NONE && call->kind == SCALL_PROCESS_START &&
	    rep->nprocs) {
		/* started: the answer is its output's relay, on this request */
		struct api *a = c->api;
		const struct sse_opts *framing = c->events;
		char id[37];
		snprintf(id, sizeof id, "%s", c->id);
		r->ctx = NULL;
		r->ctx_free = NULL;
		sctx_free(c);
		relay_process(r, a, id, rep->procs[0].pid, 0, framing);
		return;
	}
	if (rep->err != SERR_NONE) {
		reply_error(r, rep);
	} else if (call->kind == SCALL_FILE_GET && c->file_json) {
		file_as_json(r, rep);
	} else if (call->kind == SCALL_FILE_GET) {
		/* a file a cell wrote, served from the origin of the playground
		 * and the dashboard: never as a page of that origin (a sandbox
		 * policy gives it an origin of its own and no script), and
		 * downloaded unless its type is inert (docs/security.md) */
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
	} else if (c->fork) {
		fork_create(c, rep);
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

static void continue_call(struct sctx *c)
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
	struct sctx *c = arg;
	const char *status;
	char *data = sessrender_cell_done(stored, &status);
	metrics_session_cell(c->api->metrics, status, (double)(clock_mono_us() - c->t0_us) / 1e6);
	return data;
}

/* Relays a streamed cell's output: stdout and stderr as printed, then result
 * or error, then done with the whole answer (migrations/0010_session_model.sql). */
static void relay_cell(struct http_request *r, struct api *a, int64_t call_id,
		       const struct sse_opts *framing)
{
	int64_t after = sse_last_event_id(http_header(r, "Last-Event-ID"));
	char stream[48];
	snprintf(stream, sizeof stream, "cell:%" PRId64, call_id);
	struct sctx *c = xcalloc(1, sizeof *c);
	c->api = a;
	c->t0_us = clock_mono_us();
	struct sse_opts o = framing ? *framing : (struct sse_opts){0};
	o.stream = stream;
	o.after = after > 0 && !framing ? after : 0;
	o.done_data = cell_done;
	o.arg = c;
	o.arg_free = free;
	if (sse_relay(r, a->sse, &o) < 0 && !r->responded)
		http_error(r, 503, "unavailable", "cannot stream the output of call %" PRId64,
			   call_id);
}

/* A held cell (sctx.held): once its stream has a first event, the relay of
 * it when that is start; else the cell was refused before it ran (no such
 * context, the session lost): its stored answer, as an unstreamed call's. */
static void continue_held(struct sctx *c)
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
			if (waiter_park(h, &c->w, suspend_request))
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
			r->ctx = NULL;
			r->ctx_free = NULL;
			sctx_free(c);
			return relay_cell(r, a, call_id, framing);
		}
		/* its answer is stored with the stream's end: read it as a call's */
		c->held = false;
		char key[48];
		snprintf(key, sizeof key, "c%" PRId64, c->call_id);
		c->w.id = sesshub_key(key);
		return continue_call(c);
	}
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

/* Stores call (taken: released here) for session id and waits for its answer
 * (or relays its output as it comes, when it is a streamed cell). */
static void route_call_ex(struct http_request *r, struct api *a, const char *id,
			  struct sess_call *call, bool file_json, bool fork,
			  const struct sse_opts *events)
{
	char err[256];
	struct sess_row row = {0};
	int64_t call_id = 0;
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessdb_call(db, id, key_of(a, r), a->cfg->worker_timeout_s, call, &call_id,
				  &row, err, sizeof err)
		    : -1;
	if (db)
		db_pool_put(a->pool, db);
	bool image = call->kind == SCALL_PAUSE || call->kind == SCALL_SNAPSHOT;
	struct sctx *then = NULL;
	if (rc < 0)
		render_db_error(r, "session call", err);
	else if (rc == 0)
		no_session(r, id);
	else if (rc == 2 && row.status == SESS_PAUSED && call->kind == SCALL_CLOSE)
		close_paused(r, a, id);
	else if (rc == 2 && image && (row.status == SESS_PAUSED || row.status >= SESS_CLOSED))
		http_error(r, 409, row.status == SESS_PAUSED ? "session_paused" : "session_closed",
			   "session %s is %s%s%s", id, sess_status_name(row.status),
			   row.reason[0] ? ": " : "", row.reason);
	else if (rc == 2 && row.status == SESS_PAUSED) {
		/* the next call resumes it: on any worker, from its image */
		sess_row_release(&row);
		int rs = resume_session(r, a, id, &row, &then);
		if (rs == 0)
			not_open(r, &row); /* resumed meanwhile by another call: retry */
		else if (rs == 1) {
			then->then_call = true;
			then->file_json = file_json;
			then->events = events;
			then->call = *call;
			sess_call_init(call, call->kind);
			continue_create(then);
		}
	} else if (rc == 2)
		not_open(r, &row);
	else if (call->kind == SCALL_EXECUTE && call->exec.stream && !events)
		relay_cell(r, a, call_id, NULL);
	else {
		struct sctx *c = sctx_new(r, a, id, clock_mono_ms() + call_wait_ms(a, call, &row));
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

static void route_call(struct http_request *r, struct api *a, const char *id,
		       struct sess_call *call, bool file_json)
{
	route_call_ex(r, a, id, call, file_json, false, NULL);
}

/* A snapshot call; with fork, its answer starts a new session from it. */
static void route_call_fork(struct http_request *r, struct api *a, const char *id,
			    struct sess_call *call, bool fork)
{
	route_call_ex(r, a, id, call, false, fork, NULL);
}

void sessions_resume(struct http_request *r)
{
	struct sctx *c = r->ctx;
	if (c->create)
		continue_create(c);
	else if (c->held)
		continue_held(c);
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
	int rc =
	    db ? sessdb_get(db, id, key_of(a, r), a->cfg->worker_timeout_s, row, err, sizeof err)
	       : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		render_db_error(r, "session read", err);
	else if (rc == 0)
		no_session(r, id);
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
	int rc =
	    db ? sessdb_history(db, id, key_of(a, r), after, (long)limit, &h, &n, err, sizeof err)
	       : -1;
	if (rc == 1 &&
	    sessdb_egress_list(db, id, egress_after, (long)limit, &eg, &neg, err, sizeof err) < 0)
		rc = -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		render_db_error(r, "session history", err);
	else if (rc == 0)
		no_session(r, id);
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
	struct request_error e;
	if (request_parse_json(a->cfg, r->body.buf ? r->body.buf : "", r->body.len, &in, &e) < 0) {
		render_req_error(r, &e);
		return NULL;
	}
	return in;
}

/* Parses a call of kind from body in (or the path: file, context, process
 * routes) into out. Returns 0, or -1 after answering the error. */
static int parse_call(struct http_request *r, struct api *a, enum scall_kind kind, const cJSON *in,
		      struct sess_call *out)
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
	if (parse_call(r, a, kind, in, &c) == 0)
		route_call(r, a, id, &c, false);
	else
		sess_call_release(&c);
}

/* A files route: the path after "{id}/files/", checked. */
static void file_call(struct http_request *r, struct api *a, const char *id, const char *path,
		      enum scall_kind kind, const void *body, size_t len, bool file_json)
{
	struct request_error e;
	struct sess_call c;
	if (sessreq_file(kind, path, body, len, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	route_call(r, a, id, &c, file_json);
}

static void handle_file(struct http_request *r, struct api *a, const char *id, const char *arg)
{
	const char *path = arg + 36 + sizeof "/files/" - 1;
	if (!strcmp(r->method, "PUT"))
		file_call(r, a, id, path, SCALL_FILE_PUT, r->body.buf ? r->body.buf : "",
			  r->body.len, false);
	else if (!strcmp(r->method, "DELETE"))
		file_call(r, a, id, path, SCALL_FILE_DELETE, NULL, 0, false);
	else
		file_call(r, a, id, path, SCALL_FILE_GET, NULL, 0, false);
}

/* The segment after "{id}/<name>/" of arg, into out (at most n - 1 bytes). */
static void segment(const char *arg, const char *name, char *out, size_t n)
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
	segment(arg, "contexts", ctx, sizeof ctx);
	if (sessreq_context(kind, ctx, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	route_call(r, a, id, &c, false);
}

/* wait_ms of the query: 0 when absent, -1 when not a whole number. */
static long query_wait_ms(struct http_request *r)
{
	const char *w = http_query(r, "wait_ms");
	char *end;
	long v = w ? strtol(w, &end, 10) : 0;
	return w && (!*w || *end) ? -1 : v;
}

static void process_call(struct http_request *r, struct api *a, const char *id, const char *arg,
			 enum scall_kind kind, const cJSON *in)
{
	char pid[24];
	struct request_error e;
	struct sess_call c;
	segment(arg, "processes", pid, sizeof pid);
	if (sessreq_process(a->cfg, kind, pid, in,
			    kind == SCALL_PROCESS_WAIT ? query_wait_ms(r) : 0, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	route_call(r, a, id, &c, false);
}

static char *process_done(void *arg, const char *stored)
{
	(void)arg;
	return sessrender_process_done(stored);
}

/* Relays process pid's output (sessproc.h) from after on: start, stdout and
 * stderr as printed, done with its end; in framing's shape (NULL: SSE). */
static void relay_process(struct http_request *r, struct api *a, const char *id, long pid,
			  int64_t after, const struct sse_opts *framing)
{
	char stream[OUTSTREAM_ID_MAX];
	sessproc_stream(id, pid, stream, sizeof stream);
	struct sse_opts o = framing ? *framing : (struct sse_opts){0};
	o.stream = stream;
	o.after = after > 0 ? after : 0;
	o.done_data = process_done;
	if (sse_relay(r, a->sse, &o) < 0 && !r->responded)
		http_error(r, 503, "unavailable", "cannot stream the output of process %ld", pid);
}

/* A process's live output: its session must be this key's; its stream must
 * exist (written at its start), else 404. */
static void process_stream(struct http_request *r, struct api *a, const char *id,
			   const char *pidtext, int64_t after, const struct sse_opts *framing)
{
	char err[256], stream[OUTSTREAM_ID_MAX];
	char *end;
	long pid = strtol(pidtext, &end, 10);
	if (!*pidtext || *end || pid < 1) {
		http_error(r, 404, "not_found", "no process '%.20s'", pidtext);
		return;
	}
	sessproc_stream(id, pid, stream, sizeof stream);
	struct sess_row row = {0};
	struct outstream_chunk *ch = NULL;
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc =
	    db ? sessdb_get(db, id, key_of(a, r), a->cfg->worker_timeout_s, &row, err, sizeof err)
	       : -1;
	int n = rc == 1 ? outstream_read(db, stream, 0, 1, 1024, &ch, err, sizeof err) : 0;
	if (db)
		db_pool_put(a->pool, db);
	sess_row_release(&row);
	outstream_chunks_free(ch, n > 0 ? n : 0);
	if (rc < 0 || n < 0)
		return render_db_error(r, "process events", err);
	if (rc == 0)
		return no_session(r, id);
	if (n == 0) {
		http_error(r, 404, "not_found", "no process %ld in session %s", pid, id);
		return;
	}
	relay_process(r, a, id, pid, after, framing);
}

static void process_events(struct http_request *r, struct api *a, const char *id, const char *arg)
{
	char pidtext[24];
	segment(arg, "processes", pidtext, sizeof pidtext);
	process_stream(r, a, id, pidtext, sse_last_event_id(http_header(r, "Last-Event-ID")), NULL);
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
	route_call(r, a, id, &c, false);
}

void sessions_execute_events(struct http_request *r, struct api *a, const char *id, const cJSON *in,
			     const struct sse_opts *framing)
{
	char sid[37];
	struct sess_call c;
	if (id_of(r, id, sid) < 0)
		return;
	if (parse_call(r, a, SCALL_EXECUTE, in, &c) < 0) {
		sess_call_release(&c);
		return;
	}
	c.exec.stream = true;
	route_call_ex(r, a, sid, &c, false, false, framing);
}

void sessions_process_start_events(struct http_request *r, struct api *a, const char *id,
				   const cJSON *in, const struct sse_opts *framing)
{
	struct sess_call c;
	if (parse_call(r, a, SCALL_PROCESS_START, in, &c) == 0) {
		c.proc.relayed = true;
		route_call_ex(r, a, id, &c, false, false, framing);
	} else {
		sess_call_release(&c);
	}
}

void sessions_process_events(struct http_request *r, struct api *a, const char *id, const char *pid,
			     const struct sse_opts *framing)
{
	process_stream(r, a, id, pid, 0, framing);
}

void sessions_process(struct http_request *r, struct api *a, const char *id, enum scall_kind kind,
		      const char *pid, const cJSON *in)
{
	struct request_error e;
	struct sess_call c;
	if (sessreq_process(a->cfg, kind, pid, in, 0, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	route_call(r, a, id, &c, false);
}

bool sessions_body_optional(enum route rt)
{
	return rt == R_SESSION_PAUSE || rt == R_SESSION_RESUME || rt == R_SESSION_SNAPSHOT ||
	       rt == R_SESSION_FORK;
}

/* POST /snapshot and /fork {name?}: a snapshot call; a fork then creates. */
static void snapshot_call(struct http_request *r, struct api *a, const char *id, const cJSON *in,
			  bool fork)
{
	const cJSON *name = in ? cJSON_GetObjectItemCaseSensitive(in, "name") : NULL;
	if (in && !cJSON_IsObject(in)) {
		http_error(r, 422, "invalid_field", "the body must be a JSON object");
		return;
	}
	for (const cJSON *it = in ? in->child : NULL; it; it = it->next)
		if (strcmp(it->string, "name")) {
			http_error(r, 422, "unknown_field", "unknown field '%.40s'", it->string);
			return;
		}
	if (name && (!cJSON_IsString(name) || strlen(name->valuestring) >= 64 ||
		     !utf8_valid_text(name->valuestring, strlen(name->valuestring)))) {
		http_error(r, 422, "invalid_field", "name must be text of at most 63 bytes");
		return;
	}
	struct sess_call c;
	sess_call_init(&c, SCALL_SNAPSHOT);
	if (name)
		snprintf(c.image_name, sizeof c.image_name, "%s", name->valuestring);
	route_call_fork(r, a, id, &c, fork);
}

/* POST /resume: a paused session back on a new sandbox; an open one as it is. */
static void resume_route(struct http_request *r, struct api *a, const char *id)
{
	struct sess_row row = {0};
	struct sctx *then = NULL;
	int rc = resume_session(r, a, id, &row, &then);
	if (rc == 1) {
		then->resume = true;
		continue_create(then);
	} else if (rc == 0 && (row.status == SESS_READY || row.status == SESS_STARTING)) {
		cJSON *o = sess_row_json(&row);
		cJSON_AddBoolToObject(o, "restarted", false);
		http_respond_json(r, 200, o);
		cJSON_Delete(o);
	} else if (rc == 0)
		not_open(r, &row);
	sess_row_release(&row);
}

/* Session id is not open for this key: a 404 when it has none, else the
 * 409/410 of not_open. */
static void ended_or_unknown(struct http_request *r, struct api *a, const char *id)
{
	struct sess_row row = {0};
	if (row_of(r, a, id, &row))
		not_open(r, &row);
	sess_row_release(&row);
}

void sessions_set_idle_ttl(struct http_request *r, struct api *a, const char *id, const cJSON *in)
{
	static const char *const keys[] = {"idle_ttl", NULL};
	const cJSON *it, *ttl = cJSON_GetObjectItemCaseSensitive(in, "idle_ttl");
	char sid[37], err[256];
	if (id_of(r, id, sid) < 0)
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
	int rc =
	    db ? sessdb_set_idle_ttl(db, sid, key_of(a, r), (long)ttl->valuedouble, err, sizeof err)
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
	if (rt != R_SESSIONS && id_of(r, arg, id) < 0)
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
		file_call(r, a, id, dir ? dir : "", SCALL_FILE_LIST, NULL, 0, false);
		break;
	}
	case R_SESSION_FILE:
		handle_file(r, a, id, arg);
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
		process_call(r, a, id, arg, SCALL_PROCESS_WAIT, NULL);
		break;
	case R_SESSION_PROCESS_STDIN:
		process_call(r, a, id, arg, del ? SCALL_PROCESS_CLOSE_STDIN : SCALL_PROCESS_INPUT,
			     in);
		break;
	case R_SESSION_PROCESS_SIGNAL:
		process_call(r, a, id, arg, SCALL_PROCESS_SIGNAL, in);
		break;
	case R_SESSION_PROCESS_EVENTS:
		process_events(r, a, id, arg);
		break;
	case R_SESSION_PAUSE:
		json_call(r, a, id, SCALL_PAUSE, in);
		break;
	case R_SESSION_SNAPSHOT:
	case R_SESSION_FORK:
		snapshot_call(r, a, id, in, rt == R_SESSION_FORK);
		break;
	case R_SESSION_RESUME:
		resume_route(r, a, id);
		break;
	default:
		http_error(r, 404, "not_found", "no such endpoint: %.100s", r->url);
	}
	cJSON_Delete(in);
}

/* ---- the E2B front (e2b_*.c): the same calls, rendered by its transform ---- */

void sessions_get(struct http_request *r, struct api *a, const char *id)
{
	char sid[37];
	if (id_of(r, id, sid) == 0)
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
	if (id_of(r, id, sid) == 0)
		json_call(r, a, sid, kind, in);
}

void sessions_snapshot(struct http_request *r, struct api *a, const char *id, const cJSON *in)
{
	char sid[37];
	if (id_of(r, id, sid) == 0)
		snapshot_call(r, a, sid, in, false);
}

void sessions_resume_one(struct http_request *r, struct api *a, const char *id, long idle_ttl_s)
{
	char sid[37], err[256];
	if (id_of(r, id, sid) < 0)
		return;
	if (idle_ttl_s > 0) {
		/* before the resume, which starts the idle clock with it; a session
		 * that is not open is answered by resume_route */
		struct db *db = api_db(a, 5000, err, sizeof err);
		int rc =
		    db ? sessdb_set_idle_ttl(db, sid, key_of(a, r), idle_ttl_s, err, sizeof err)
		       : -1;
		if (db)
			db_pool_put(a->pool, db);
		if (rc < 0) {
			render_db_error(r, "session update", err);
			return;
		}
	}
	resume_route(r, a, sid);
}

void sessions_file(struct http_request *r, struct api *a, const char *id, const char *path,
		   enum scall_kind kind, const void *body, size_t len)
{
	char sid[37];
	if (id_of(r, id, sid) == 0)
		file_call(r, a, sid, path, kind, body, len, false);
}

void sessions_file_parts(struct http_request *r, struct api *a, const char *id, size_t n,
			 const struct sessreq_part *parts)
{
	char sid[37];
	struct request_error e;
	struct sess_call c;
	if (id_of(r, id, sid) < 0)
		return;
	if (sessreq_file_parts(n, parts, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	route_call(r, a, sid, &c, false);
}

void sessions_watch_start(struct http_request *r, struct api *a, const char *id, const char *path,
			  bool recursive, long timeout_ms, const struct sse_opts *framing)
{
	char sid[37];
	struct request_error e;
	struct sess_call c;
	if (id_of(r, id, sid) < 0)
		return;
	if (sessreq_watch_start(path, recursive, timeout_ms, framing != NULL, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	route_call_ex(r, a, sid, &c, false, false, framing);
}

void sessions_watch(struct http_request *r, struct api *a, const char *id, enum scall_kind kind,
		    const char *watcher)
{
	char sid[37];
	struct request_error e;
	struct sess_call c;
	if (id_of(r, id, sid) < 0)
		return;
	if (sessreq_watch(kind, watcher, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	route_call(r, a, sid, &c, false);
}

void sessions_file_list(struct http_request *r, struct api *a, const char *id, const char *path,
			int depth)
{
	char sid[37];
	struct request_error e;
	struct sess_call c;
	if (id_of(r, id, sid) < 0)
		return;
	if (sessreq_file(SCALL_FILE_LIST, path, NULL, 0, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	c.depth = depth < 1 ? 1 : depth > SESS_MAX_DEPTH ? SESS_MAX_DEPTH : depth;
	route_call(r, a, sid, &c, false);
}

void sessions_context(struct http_request *r, struct api *a, const char *id, const char *ctx,
		      enum scall_kind kind)
{
	char sid[37];
	struct request_error e;
	struct sess_call c;
	if (id_of(r, id, sid) < 0)
		return;
	if (sessreq_context(kind, ctx, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	route_call(r, a, sid, &c, false);
}

/* ---- MCP ---- */

void sessions_tool(struct http_request *r, struct api *a, enum scall_kind kind, const cJSON *body)
{
	char id[37];
	struct request_error e;
	struct sess_call c;
	if (sessreq_tool(a->cfg, &a->langs, kind, body, id, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	route_call(r, a, id, &c, kind == SCALL_FILE_GET);
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
		return no_session(r, sid->valuestring);
	history(r, a, sid->valuestring, cJSON_IsNumber(after) ? (long long)after->valuedouble : 0,
		HISTORY_MAX, cJSON_IsNumber(eafter) ? (long long)eafter->valuedouble : 0);
}

void sessions_image_tool(struct http_request *r, struct api *a, enum route rt, const cJSON *body)
{
	const cJSON *sid = cJSON_GetObjectItemCaseSensitive(body, "session_id");
	if (!cJSON_IsString(sid)) {
		http_error(r, 422, "missing_field", "session_id is required");
		return;
	}
	if (!sessreq_id_valid(sid->valuestring))
		return no_session(r, sid->valuestring);
	if (rt == R_SESSION_RESUME)
		return resume_route(r, a, sid->valuestring);
	cJSON *rest = cJSON_Duplicate(body, true);
	cJSON_DeleteItemFromObjectCaseSensitive(rest, "session_id");
	snapshot_call(r, a, sid->valuestring, rest, rt == R_SESSION_FORK);
	cJSON_Delete(rest);
}
