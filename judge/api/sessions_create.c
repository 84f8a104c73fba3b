/* sessions_create: a session made (POST /v1/sessions, from_snapshot, a fork's new
 * session) and the wait for a worker to start it, which a resume shares; the
 * egress cap a key's sessions are held to. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/config.h"
#include "judge/api/api.h"
#include "judge/api/http.h"
#include "judge/api/render.h"
#include "judge/api/sessions.h"
#include "judge/api/sessions_int.h"
#include "judge/service/auth.h"
#include "judge/service/session/sessdb.h"
#include "judge/service/session/sesshub.h"
#include "judge/service/session/sessimage.h"
#include "judge/service/session/sessreq.h"
#include "judge/store/db.h"

/* How long a create waits for a worker to start the sandbox. */
#define CREATE_WAIT_MS 30000

/* A create's wait ended with the session ready: answers as c asks. */
static void created(struct sessions_ctx *c, const struct sess_row *row)
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
		sessions_ctx_end(c);
		sessions_route_call_ex(r, a, id, &call, file_json, false, events);
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

void sessions_continue_create(struct sessions_ctx *c)
{
	struct api *a = c->api;
	struct http_request *r = c->r;
	char err[256];
	for (;;) {
		waiter_register(sesshub_waiters(a->sessions), &c->w);
		struct sess_row row = {0};
		struct db *db = api_db(a, 5000, err, sizeof err);
		int rc = db ? sessdb_get(db, c->id, sessions_key_of(a, r), a->cfg->worker_timeout_s,
					 &row, err, sizeof err)
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
			if (waiter_park(sesshub_waiters(a->sessions), &c->w, sessions_suspend))
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

/* Makes c wait for session c->id to start, as a create waits. */
static void await_start(struct sessions_ctx *c)
{
	c->create = true;
	c->w.deadline_ms = clock_mono_ms() + CREATE_WAIT_MS;
	char key[48];
	snprintf(key, sizeof key, "s%s", c->id);
	c->w.id = sesshub_key(key);
}

struct sessions_ctx *sessions_wait_start(struct http_request *r, struct api *a, const char *id)
{
	struct sessions_ctx *c = sessions_ctx_new(r, a, id, 0);
	await_start(c);
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
	int rc = db ? sessimage_snapshot_get(db, fs->valuestring, sessions_key_of(a, r), lang, lim,
					     net, env, err, sizeof err)
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
	int64_t key = sessions_key_of(a, r);
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
	int rc = db ? sessdb_create(db, sessions_key_of(a, r), cr.lang->name, lim, net,
				    senv ? senv : cr.env, image[0] ? image : NULL, cr.idle_ttl_s,
				    cr.idle_pause, a->cfg->session_max_lifetime_s,
				    a->cfg->sessions_per_key, cr.metadata, access_token,
				    cr.checkpoint_interval_s, id, err, sizeof err)
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
	sessions_continue_create(sessions_wait_start(r, a, id));
out:
	cJSON_Delete(in);
	cJSON_Delete(slim);
	cJSON_Delete(snet);
	cJSON_Delete(senv);
	cJSON_Delete(cr.env);
	cJSON_Delete(cr.metadata);
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

void sessions_fork_create(struct sessions_ctx *c, const struct sess_reply *rep)
{
	struct api *a = c->api;
	struct http_request *r = c->r;
	char err[256], lang[32], id[37];
	cJSON *lim = NULL, *net = NULL, *env = NULL;
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessimage_snapshot_get(db, rep->image.id, sessions_key_of(a, r), lang, &lim,
					     &net, &env, err, sizeof err)
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
	if (db && sessdb_get(db, c->id, sessions_key_of(a, r), a->cfg->worker_timeout_s, &row, err,
			     sizeof err) == 1)
		made = sessdb_create(db, sessions_key_of(a, r), lang, lim, net, env, rep->image.id,
				     row.idle_ttl_s, row.idle_pause, a->cfg->session_max_lifetime_s,
				     a->cfg->sessions_per_key, NULL, NULL,
				     row.checkpoint_interval_s, id, err, sizeof err);
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
	await_start(c);
	sessions_continue_create(c);
}
