/* sessdb: the SQL of sessions, session calls and worker heartbeats (see sessdb.h). */
#include "judge/service/session/sessdb.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "judge/service/auth.h"
#include "judge/service/session/sessnet.h"
#include "judge/store/db.h"

static const char *const status_names[SESS_STATUS_COUNT] = {
    "starting", "ready", "closed", "expired", "lost", "failed", "paused"};

const char *sess_status_name(enum sess_status s)
{
	return s >= 0 && s < SESS_STATUS_COUNT ? status_names[s] : "failed";
}

int sess_status_parse(const char *s)
{
	for (int i = 0; s && i < SESS_STATUS_COUNT; i++)
		if (!strcmp(s, status_names[i]))
			return i;
	return -1;
}

#define LOST_REASON "the worker holding the session stopped answering; its state is lost"
#define ISO(x)	    DB_ISO_TIME(x)

/* The columns of a session as readers see it ($T: the worker timeout in
 * seconds): a lost worker or a passed deadline already applies. */
/* why a paused session past its retention ended (its expires_at was set to
 * the pause's time, last_used, plus the retention) */
#define PAUSED_REASON                                                                              \
	"format('it stayed paused for more than %s s', "                                           \
	"extract(epoch FROM s.expires_at - s.last_used)::bigint)"
#define EFF_STATUS                                                                                 \
	"CASE WHEN s.status IN ('starting', 'ready') AND s.worker_id IS NOT NULL AND "             \
	"s.checkpoint_image_id IS NULL AND "                                                       \
	"(w.stopped IS NOT NULL OR w.last_seen < now() - make_interval(secs => $T)) THEN 'lost' "  \
	"WHEN s.status = 'ready' AND ((s.expires_at <= now() AND s.idle_action = 'close') OR "     \
	"s.max_until <= now()) THEN 'expired' "                                                    \
	"WHEN s.status = 'paused' AND least(s.expires_at, s.max_until) <= now() THEN 'expired' "   \
	"ELSE s.status END"
#define EFF_REASON                                                                                 \
	"CASE WHEN s.status IN ('starting', 'ready') AND s.worker_id IS NOT NULL AND "             \
	"s.checkpoint_image_id IS NULL AND "                                                       \
	"(w.stopped IS NOT NULL OR w.last_seen < now() - make_interval(secs => $T)) "              \
	"THEN '" LOST_REASON "' "                                                                  \
	"WHEN s.status = 'ready' AND s.max_until <= now() THEN '" SESS_REASON_LIFETIME "' "        \
	"WHEN s.status = 'ready' AND s.expires_at <= now() AND s.idle_action = 'close' "           \
	"THEN format('it was idle for more than %s s', s.idle_ttl_s) "                             \
	"WHEN s.status = 'paused' AND s.max_until <= now() THEN '" SESS_REASON_LIFETIME "' "       \
	"WHEN s.status = 'paused' AND s.expires_at <= now() THEN " PAUSED_REASON " "               \
	"ELSE coalesce(s.close_reason, '') END"
#define ROW_COLS                                                                                   \
	"s.id, s.language, " EFF_STATUS                                                            \
	" AS status, coalesce(s.worker_id, 0) AS worker, s.limits, "                               \
	"s.idle_ttl_s, " ISO("s.created") " AS c_at, " ISO(                                        \
	    "least(s.expires_at, s.max_until)") " AS e_at, " ISO("s.last_used") " AS "             \
										"u_at,"            \
										" " EFF_REASON     \
										" AS reason, "     \
										"s.execution_"     \
										"count, "          \
										"s.restarts, "     \
										"s.usage, "        \
										"s.network, "      \
										"s.idle_action, "  \
										"s.metadata, "     \
										"coalesce(s."      \
										"resumed_memory::" \
										"text, ''), "      \
										"coalesce(s."      \
										"checkpoint_"      \
										"interval_s, -1)"
#define ROW_NCOLS 18 /* the columns of ROW_COLS */
#define ROW_FROM  " FROM sessions s LEFT JOIN workers w ON w.id = s.worker_id "

/* sql with every "$T" replaced by the timeout (a number, from judge.ini). */
static void with_timeout(struct strbuf *out, const char *sql, long timeout_s)
{
	for (const char *p = sql; *p; p++) {
		if (p[0] == '$' && p[1] == 'T') {
			strbuf_addf(out, "%ld", timeout_s);
			p++;
		} else {
			strbuf_addch(out, *p);
		}
	}
}

static int fail(struct db *db, char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "%s: %s", what, db_error(db));
	return -1;
}

static void copy(char *dst, size_t n, const char *s)
{
	snprintf(dst, n, "%s", s ? s : "");
}

void sess_row_release(struct sess_row *r)
{
	cJSON_Delete(r->limits);
	cJSON_Delete(r->usage);
	cJSON_Delete(r->network);
	cJSON_Delete(r->metadata);
	memset(r, 0, sizeof *r);
}

static void row_read(const PGresult *res, int i, struct sess_row *r)
{
	sess_row_release(r);
	copy(r->id, sizeof r->id, db_value(res, i, 0));
	copy(r->language, sizeof r->language, db_value(res, i, 1));
	int st = sess_status_parse(db_value(res, i, 2));
	r->status = st < 0 ? SESS_FAILED : (enum sess_status)st;
	r->worker_id = db_value_ll(res, i, 3);
	const char *lim = db_value(res, i, 4);
	r->limits = lim ? cJSON_Parse(lim) : NULL;
	r->idle_ttl_s = (long)db_value_ll(res, i, 5);
	copy(r->created_at, sizeof r->created_at, db_value(res, i, 6));
	copy(r->expires_at, sizeof r->expires_at, db_value(res, i, 7));
	copy(r->last_used_at, sizeof r->last_used_at, db_value(res, i, 8));
	copy(r->reason, sizeof r->reason, db_value(res, i, 9));
	r->execution_count = (long)db_value_ll(res, i, 10);
	r->restarts = (long)db_value_ll(res, i, 11);
	const char *usage = db_value(res, i, 12);
	r->usage = usage ? cJSON_Parse(usage) : NULL;
	const char *net = db_value(res, i, 13);
	r->network = net ? cJSON_Parse(net) : NULL;
	r->idle_pause = !strcmp(db_value(res, i, 14), "pause");
	const char *meta = db_value(res, i, 15);
	r->metadata = meta ? cJSON_Parse(meta) : NULL;
	const char *mem = db_value(res, i, 16);
	r->resumed_memory = mem && mem[0] ? mem[0] == 't' : -1;
	r->checkpoint_interval_s = (long)db_value_ll(res, i, 17);
}

cJSON *sess_row_json(const struct sess_row *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", r->id);
	cJSON_AddStringToObject(o, "language", r->language);
	cJSON_AddStringToObject(o, "status", sess_status_name(r->status));
	cJSON_AddStringToObject(o, "created_at", r->created_at);
	cJSON_AddStringToObject(o, "expires_at", r->expires_at);
	cJSON_AddStringToObject(o, "last_used_at", r->last_used_at);
	cJSON_AddNumberToObject(o, "idle_ttl", (double)r->idle_ttl_s);
	cJSON_AddStringToObject(o, "idle_action", r->idle_pause ? "pause" : "close");
	cJSON_AddItemToObject(o, "limits",
			      r->limits ? cJSON_Duplicate(r->limits, 1) : cJSON_CreateObject());
	cJSON_AddNumberToObject(o, "execution_count", (double)r->execution_count);
	cJSON_AddNumberToObject(o, "restarts", (double)r->restarts);
	/* NULL: a session made before migrations/0014, or with none asked */
	if (cJSON_IsObject(r->network))
		cJSON_AddItemToObject(o, "network", cJSON_Duplicate(r->network, 1));
	else
		cJSON_AddItemToObject(o, "network", sessnet_json(&(struct sessnet_policy){0}));
	if (cJSON_IsObject(r->usage))
		cJSON_AddItemToObject(o, "usage", cJSON_Duplicate(r->usage, 1));
	if (cJSON_IsObject(r->metadata))
		cJSON_AddItemToObject(o, "metadata", cJSON_Duplicate(r->metadata, 1));
	if (r->checkpoint_interval_s >= 0)
		cJSON_AddNumberToObject(o, "checkpoint_interval_s",
					(double)r->checkpoint_interval_s);
	if (r->status > SESS_READY)
		cJSON_AddStringToObject(o, "reason", r->reason);
	return o;
}

/* bytes as a bytea literal in text form ("\x" and hex). */
static void bytea_hex(struct strbuf *out, const void *data, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = data;
	strbuf_grow(out, 2 * len + 3);
	strbuf_addstr(out, "\\x");
	for (size_t i = 0; i < len; i++) {
		strbuf_addch(out, hex[p[i] >> 4]);
		strbuf_addch(out, hex[p[i] & 15]);
	}
}

static void bytea_read(const char *text, struct strbuf *out)
{
	size_t n = 0;
	unsigned char *b = text ? PQunescapeBytea((const unsigned char *)text, &n) : NULL;
	if (b) {
		strbuf_add(out, b, n);
		PQfreemem(b);
	}
}

/* ---- serve's side ---- */

int sessdb_create(struct db *db, int64_t key, const char *language, const cJSON *limits,
		  const cJSON *network, const cJSON *env, const char *image_id, long idle_ttl_s,
		  bool idle_pause, long lifetime_s, long per_key, const cJSON *metadata,
		  const char *access_token, long checkpoint_interval_s, char *id, char *err,
		  size_t errlen)
{
	char k[24], ttl[24], life[24], cap[24], ckpt[24];
	snprintf(k, sizeof k, "%" PRId64, key);
	snprintf(ckpt, sizeof ckpt, "%ld", checkpoint_interval_s);
	snprintf(ttl, sizeof ttl, "%ld", idle_ttl_s);
	snprintf(life, sizeof life, "%ld", lifetime_s);
	snprintf(cap, sizeof cap, "%ld", per_key);
	char *lim = cJSON_PrintUnformatted(limits);
	char *net = network ? cJSON_PrintUnformatted(network) : NULL;
	char *envs = env ? cJSON_PrintUnformatted(env) : NULL;
	char *meta = metadata ? cJSON_PrintUnformatted(metadata) : NULL;
	const char *p[] = {k,	 language,     lim,	 ttl,  life,
			   cap,	 net,	       image_id, envs, idle_pause ? "pause" : "close",
			   meta, access_token, ckpt};
	int ret = -1;
	if (db_begin(db) < 0) {
		fail(db, err, errlen, "create session");
		goto out;
	}
	/* one creator of a key at a time, so two cannot both pass the cap */
	const char *lp[] = {k};
	PGresult *res = NULL;
	if (db_exec(db, "SELECT pg_advisory_xact_lock(7243, ($1::bigint % 2147483647)::int)", 1,
		    lp) == 0)
		res = db_query(
		    db,
		    "WITH n AS (SELECT count(*) AS c FROM sessions WHERE coalesce(api_key_id, 0) = "
		    "$1::bigint AND status IN ('starting', 'ready')), "
		    "ins AS (INSERT INTO sessions (api_key_id, language, limits, idle_ttl_s, "
		    "expires_at, "
		    "max_until, network, image_id, env, idle_action, metadata, access_token, "
		    "checkpoint_interval_s) "
		    "SELECT nullif($1::bigint, 0), "
		    "$2, $3::jsonb, $4::int, now() + make_interval(secs => $4::int), now() + "
		    "make_interval(secs => $5::int), $7::jsonb, $8::uuid, $9::jsonb, $10, "
		    "$11::jsonb, $12, nullif($13::int, -1) FROM n WHERE n.c < $6::bigint "
		    "RETURNING id) "
		    "SELECT id, pg_notify('" SESS_CHANNEL_NEW "', id::text) FROM ins",
		    13, p);
	if (!res) {
		fail(db, err, errlen, "create session");
		db_rollback(db);
		goto out;
	}
	bool made = PQntuples(res) == 1;
	if (made)
		copy(id, 37, db_value(res, 0, 0));
	PQclear(res);
	if (db_commit(db) < 0) {
		fail(db, err, errlen, "create session");
		goto out;
	}
	ret = made ? 0 : 1;
out:
	free(lim);
	free(net);
	free(envs);
	free(meta);
	return ret;
}

int sessdb_set_idle_ttl(struct db *db, const char *id, int64_t key, long ttl_s, char *err,
			size_t errlen)
{
	char k[24], t[24];
	snprintf(k, sizeof k, "%" PRId64, key);
	snprintf(t, sizeof t, "%ld", ttl_s);
	const char *p[] = {id, k, t};
	PGresult *res = db_query(
	    db,
	    "UPDATE sessions SET idle_ttl_s = $3::int, expires_at = CASE WHEN status = 'paused' "
	    "THEN expires_at ELSE now() + make_interval(secs => $3::int) END WHERE id = $1::uuid "
	    "AND coalesce(api_key_id, 0) = $2::bigint AND status IN ('starting', 'ready', "
	    "'paused') RETURNING id",
	    3, p);
	if (!res)
		return fail(db, err, errlen, "set the idle TTL");
	int n = PQntuples(res);
	PQclear(res);
	return n ? 1 : 0;
}

int sessdb_get(struct db *db, const char *id, int64_t key, long timeout_s, struct sess_row *out,
	       char *err, size_t errlen)
{
	char k[24];
	snprintf(k, sizeof k, "%" PRId64, key);
	const char *p[] = {id, k};
	struct strbuf sql = STRBUF_INIT;
	with_timeout(&sql,
		     "SELECT " ROW_COLS ROW_FROM
		     "WHERE s.id = $1::uuid AND coalesce(s.api_key_id, 0) = $2::bigint",
		     timeout_s);
	PGresult *res = db_query(db, sql.buf, 2, p);
	strbuf_release(&sql);
	if (!res)
		return fail(db, err, errlen, "read session");
	int n = PQntuples(res);
	if (n)
		row_read(res, 0, out);
	PQclear(res);
	return n ? 1 : 0;
}

int sessdb_access(struct db *db, const char *id, struct sess_access **out, size_t *n, char *err,
		  size_t errlen)
{
	*out = NULL;
	*n = 0;
	const char *p[] = {id ? id : ""};
	/* an open session's (a paused one's too: a call resumes it); one with
	 * id, else all of them, at most SESS_ACCESS_MAX */
	PGresult *res = db_query(
	    db,
	    "SELECT id, coalesce(api_key_id, 0), access_token FROM sessions WHERE status IN "
	    "('starting', 'ready', 'paused') AND access_token IS NOT NULL AND ($1 = '' OR id = "
	    "(CASE WHEN $1 ~ '^[0-9a-f-]{36}$' THEN $1 ELSE NULL END)::uuid) "
	    "ORDER BY created DESC LIMIT " SESS_ACCESS_MAX_SQL,
	    1, p);
	if (!res)
		return fail(db, err, errlen, "read sandbox tokens");
	int rows = PQntuples(res);
	*out = rows ? xcalloc((size_t)rows, sizeof **out) : NULL;
	for (int i = 0; i < rows; i++) {
		struct sess_access *x = &(*out)[(*n)++];
		copy(x->id, sizeof x->id, db_value(res, i, 0));
		x->key_id = db_value_ll(res, i, 1);
		copy(x->token, sizeof x->token, db_value(res, i, 2));
	}
	PQclear(res);
	return 0;
}

int sessdb_list(struct db *db, int64_t key, long timeout_s, bool all, cJSON **out, char *err,
		size_t errlen)
{
	char k[24];
	snprintf(k, sizeof k, "%" PRId64, key);
	const char *p[] = {k};
	struct strbuf sql = STRBUF_INIT;
	with_timeout(
	    &sql,
	    all ? "SELECT " ROW_COLS ROW_FROM "WHERE coalesce(s.api_key_id, 0) = "
		  "$1::bigint AND (s.closed IS NULL OR s.closed > now() - interval '1 day') "
		  "ORDER BY s.created DESC LIMIT 1000"
		: "SELECT * FROM (SELECT " ROW_COLS ROW_FROM
		  "WHERE coalesce(s.api_key_id, 0) = $1::bigint AND s.status IN "
		  "('starting', 'ready', 'paused') ORDER BY s.created DESC LIMIT 1000) x "
		  "WHERE x.status IN ('starting', 'ready', 'paused')",
	    timeout_s);
	PGresult *res = db_query(db, sql.buf, 1, p);
	strbuf_release(&sql);
	if (!res)
		return fail(db, err, errlen, "list sessions");
	*out = cJSON_CreateArray();
	struct sess_row r = {0};
	for (int i = 0; i < PQntuples(res); i++) {
		row_read(res, i, &r);
		cJSON_AddItemToArray(*out, sess_row_json(&r));
	}
	sess_row_release(&r);
	PQclear(res);
	return 0;
}

int sessdb_fail_unclaimed(struct db *db, const char *id, const char *reason, char *err,
			  size_t errlen)
{
	const char *p[] = {id, reason};
	if (db_exec(db,
		    "UPDATE sessions SET status = 'failed', closed = now(), close_reason = $2 "
		    "WHERE id = $1::uuid AND status = 'starting'",
		    2, p) < 0)
		return fail(db, err, errlen, "end session");
	return 0;
}

int sessdb_call(struct db *db, const char *id, int64_t key, long timeout_s,
		const struct sess_call *c, int64_t *call_id, struct sess_row *row, char *err,
		size_t errlen)
{
	char k[24];
	snprintf(k, sizeof k, "%" PRId64, key);
	cJSON *request = sesscall_store(c);
	char *req = cJSON_PrintUnformatted(request);
	cJSON_Delete(request);
	bool has_body = c->kind == SCALL_FILE_PUT || c->kind == SCALL_PROCESS_INPUT;
	struct strbuf hex = STRBUF_INIT, sql = STRBUF_INIT;
	if (has_body)
		bytea_hex(&hex, c->body.buf ? c->body.buf : "", c->body.len);
	const char *p[] = {id, k, scall_kind_name(c->kind), req, has_body ? hex.buf : NULL};
	/* the row locked, touched, the call stored and announced: one statement */
	with_timeout(
	    &sql,
	    "WITH cur AS (SELECT " ROW_COLS ", " EFF_STATUS " AS eff " ROW_FROM
	    "WHERE s.id = $1::uuid AND coalesce(s.api_key_id, 0) = $2::bigint FOR UPDATE OF s), "
	    "touch AS (UPDATE sessions t SET last_used = now(), expires_at = now() + "
	    "make_interval(secs => t.idle_ttl_s) FROM cur WHERE t.id = cur.id AND cur.eff = "
	    "'ready' RETURNING t.id, t.worker_id), "
	    "ins AS (INSERT INTO session_calls (session_id, kind, request, body) "
	    "SELECT id, $3, $4::jsonb, $5::bytea FROM touch RETURNING id), "
	    "n AS (SELECT pg_notify('judge_w' || touch.worker_id, ins.id::text) FROM ins, touch) "
	    "SELECT cur.*, (SELECT id FROM ins), (SELECT count(*) FROM n) FROM cur",
	    timeout_s);
	PGresult *res = db_query(db, sql.buf, 5, p);
	int ret = -1;
	if (!res) {
		fail(db, err, errlen, "route a call");
		goto out;
	}
	ret = 0;
	if (PQntuples(res) == 1) {
		row_read(res, 0, row);
		/* after the row's ROW_NCOLS columns and eff */
		*call_id = db_value_ll(res, 0, ROW_NCOLS + 1);
		ret = *call_id > 0 ? 1 : 2;
	}
	PQclear(res);
out:
	free(req);
	strbuf_release(&hex);
	strbuf_release(&sql);
	return ret;
}

int sessdb_call_get(struct db *db, int64_t call_id, enum scall_kind k, bool with_body,
		    struct sess_reply *out, char *err, size_t errlen)
{
	char c[24];
	snprintf(c, sizeof c, "%" PRId64, call_id);
	const char *p[] = {c};
	PGresult *res =
	    db_query(db,
		     with_body ? "SELECT state, response, response_body FROM session_calls "
				 "WHERE id = $1::bigint"
			       : "SELECT state, response, NULL FROM session_calls "
				 "WHERE id = $1::bigint",
		     1, p);
	if (!res)
		return fail(db, err, errlen, "read a call");
	int ret = -1;
	if (PQntuples(res) != 1) {
		snprintf(err, errlen, "call %" PRId64 " is gone", call_id);
	} else if (strcmp(db_value(res, 0, 0), "done")) {
		ret = 0;
	} else {
		cJSON *resp = cJSON_Parse(db_value(res, 0, 1));
		struct strbuf body = STRBUF_INIT;
		if (with_body)
			bytea_read(db_value(res, 0, 2), &body);
		ret = sesscall_reply_load(k, resp, with_body ? (body.buf ? body.buf : "") : NULL,
					  body.len, out) == 0
			  ? 1
			  : -1;
		if (ret < 0) {
			snprintf(err, errlen, "call %" PRId64 ": %s", call_id, out->message);
			sess_reply_release(out);
		}
		strbuf_release(&body);
		cJSON_Delete(resp);
	}
	PQclear(res);
	return ret;
}

/* The stored answer of a call whose session ended (sesscall_reply_store's
 * error form): code a sess_err name, msg a SQL expression of the message. */
#define GONE(code, msg)                                                                            \
	"jsonb_build_object('error', jsonb_build_object('code', '" code "', 'message', " msg "))"

int sessdb_reap_lost(struct db *db, long timeout_s, char *err, size_t errlen)
{
	char t[24];
	snprintf(t, sizeof t, "%ld", timeout_s);
	const char *p[] = {t};
	PGresult *res = db_query(
	    db,
	    /* a session with a periodic checkpoint moves: any worker restores it,
	     * its pending calls wait for that one, a running call is answered */
	    "WITH moved AS (UPDATE sessions s SET status = 'starting', worker_id = NULL, "
	    "image_id = s.checkpoint_image_id, restored_checkpoint_age_s = extract(epoch FROM "
	    "now() - s.checkpoint_at) FROM workers w WHERE w.id = s.worker_id AND s.status IN "
	    "('starting', 'ready') AND s.checkpoint_image_id IS NOT NULL AND s.max_until > "
	    "now() "
	    "AND (w.stopped IS NOT NULL OR w.last_seen < now() - make_interval(secs => "
	    "$1::int)) "
	    "RETURNING s.id), "
	    "mcalls AS (UPDATE session_calls c SET state = 'done', finished = now(), response "
	    "= " GONE("conflict", "'the worker holding the session stopped during this call; "
				  "the "
				  "session resumes from its last checkpoint: send the call "
				  "again'") " WHERE c.session_id IN (SELECT id FROM moved) AND "
					    "c.state = 'running' RETURNING c.id), "
					    "dead AS (UPDATE sessions s SET status = 'lost', "
					    "closed = now(), close_reason = "
					    "'" LOST_REASON
					    "' FROM workers w WHERE w.id = s.worker_id AND "
					    "s.status IN ('starting', 'ready') AND "
					    "s.id NOT IN (SELECT id FROM moved) AND "
					    "(w.stopped IS NOT NULL OR w.last_seen < now() - "
					    "make_interval(secs => $1::int)) "
					    "RETURNING s.id), "
					    "orphan AS (UPDATE sessions s SET status = "
					    "'failed', closed = now(), close_reason = "
					    "'no worker took the session' WHERE s.status = "
					    "'starting' AND s.worker_id IS NULL AND "
					    "s.created < now() - interval '60 s' RETURNING "
					    "s.id), "
					    "calls AS (UPDATE session_calls c SET state = "
					    "'done', finished = now(), response "
					    "= " GONE("session_lost",
						      "'" LOST_REASON
						      "'") " WHERE c.session_id IN (SELECT id FROM "
							   "dead) "
							   "AND c.state <> 'done' RETURNING c.id), "
							   "n AS (SELECT "
							   "pg_notify('" SESS_CHANNEL_REPLY
							   "', 'c' || id) FROM calls UNION ALL "
							   "SELECT pg_notify('" SESS_CHANNEL_REPLY
							   "', 'c' || id) FROM mcalls UNION ALL "
							   "SELECT pg_notify('" SESS_CHANNEL_NEW
							   "', id::text) FROM moved UNION ALL "
							   "SELECT pg_notify('" SESS_CHANNEL_REPLY
							   "', 's' || id) FROM dead UNION ALL "
							   "SELECT pg_notify('" SESS_CHANNEL_REPLY
							   "', 's' || id) FROM orphan) "
							   "SELECT (SELECT count(*) FROM dead) + "
							   "(SELECT count(*) FROM orphan) + "
							   "(SELECT count(*) FROM moved), "
							   "(SELECT count(*) FROM n)",
	    1, p);
	if (!res)
		return fail(db, err, errlen, "reap lost sessions");
	int n = (int)db_value_ll(res, 0, 0);
	PQclear(res);
	return n;
}

int sessdb_counts(struct db *db, long counts[SESS_STATUS_COUNT], char *err, size_t errlen)
{
	memset(counts, 0, sizeof(long) * SESS_STATUS_COUNT);
	PGresult *res =
	    db_query(db, "SELECT status, count(*) FROM sessions GROUP BY status", 0, NULL);
	if (!res)
		return fail(db, err, errlen, "count sessions");
	for (int i = 0; i < PQntuples(res); i++) {
		int st = sess_status_parse(db_value(res, i, 0));
		if (st >= 0)
			counts[st] = (long)db_value_ll(res, i, 1);
	}
	PQclear(res);
	return 0;
}

static const char *const end_names[SESS_END_COUNT] = {
    "client", "idle", "lifetime", "cpu_budget", "key_revoked", "lost", "failed", "other"};

const char *sess_end_name(enum sess_end e)
{
	return e >= 0 && e < SESS_END_COUNT ? end_names[e] : "other";
}

/* One group per sess_end name, and 'open'; the reasons are the texts the
 * closers store (sesshost.c, auth.c, sessdb_expire). */
static const char totals_sql[] =
    "SELECT CASE WHEN status IN ('starting', 'ready') THEN 'open' "
    "WHEN status = 'closed' AND close_reason LIKE '" SESS_REASON_CPU_BUDGET "%' "
    "THEN 'cpu_budget' "
    "WHEN status = 'closed' AND close_reason = '" AUTH_REVOKED_REASON "' THEN 'key_revoked' "
    "WHEN status = 'closed' AND close_reason = '" SESS_REASON_CLIENT "' THEN 'client' "
    "WHEN status = 'expired' AND close_reason LIKE '" SESS_REASON_LIFETIME "%' "
    "THEN 'lifetime' "
    "WHEN status = 'expired' THEN 'idle' WHEN status IN ('lost', 'failed') THEN status "
    "ELSE 'other' END, count(*), "
    "coalesce(sum((usage->>'cpu_ms')::float8), 0), "
    "coalesce(sum((usage->>'throttled_ms')::float8), 0), "
    "coalesce(sum((usage->>'pids_refused')::float8), 0), "
    "coalesce(sum((usage->>'memory_kb')::float8), 0), "
    "coalesce(sum((usage->>'processes')::float8), 0) "
    "FROM sessions GROUP BY 1";

int sessdb_totals(struct db *db, struct sess_totals *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	PGresult *res = db_query(db, totals_sql, 0, NULL);
	if (!res)
		return fail(db, err, errlen, "sum session usage");
	for (int i = 0; i < PQntuples(res); i++) {
		const char *cause = db_value(res, i, 0);
		out->cpu_s += atof(db_value(res, i, 2)) / 1000;
		out->throttled_s += atof(db_value(res, i, 3)) / 1000;
		out->pids_refused += (long)atof(db_value(res, i, 4));
		if (!strcmp(cause, "open")) {
			out->memory_kb = (long)atof(db_value(res, i, 5));
			out->processes = (long)atof(db_value(res, i, 6));
			continue;
		}
		int e = SESS_END_OTHER;
		for (int k = 0; k < SESS_END_COUNT; k++)
			if (!strcmp(cause, end_names[k]))
				e = k;
		out->ended[e] += (long)db_value_ll(res, i, 1);
	}
	PQclear(res);
	res =
	    db_query(db,
		     "SELECT count(*) FILTER (WHERE allowed), count(*) FILTER (WHERE NOT allowed) "
		     "FROM session_egress",
		     0, NULL);
	if (!res)
		return fail(db, err, errlen, "count egress attempts");
	out->egress_allowed = (long)db_value_ll(res, 0, 0);
	out->egress_refused = (long)db_value_ll(res, 0, 1);
	PQclear(res);
	return 0;
}

/* ---- the worker's side ---- */

int sessdb_worker_register(struct db *db, const char *name, const char *host, long capacity,
			   int64_t *id, char *err, size_t errlen)
{
	char cap[24];
	snprintf(cap, sizeof cap, "%ld", capacity);
	const char *p[] = {name, host, cap};
	PGresult *res = db_query(db,
				 "INSERT INTO workers (name, host, capacity) VALUES ($1, $2, "
				 "$3::int) RETURNING id",
				 3, p);
	if (!res)
		return fail(db, err, errlen, "register the worker");
	*id = db_value_ll(res, 0, 0);
	PQclear(res);
	return 0;
}

int sessdb_heartbeat(struct db *db, int64_t worker, bool stopping, char *err, size_t errlen)
{
	char w[24];
	snprintf(w, sizeof w, "%" PRId64, worker);
	const char *p[] = {w, stopping ? "t" : "f"};
	if (db_exec(db,
		    "UPDATE workers SET last_seen = now(), stopped = CASE WHEN $2::bool THEN now() "
		    "END WHERE id = $1::bigint",
		    2, p) < 0)
		return fail(db, err, errlen, "heartbeat");
	return 0;
}

int sessdb_claim(struct db *db, int64_t worker, char *id, char *language, cJSON **limits,
		 cJSON **network, cJSON **env, char *image_id, char *err, size_t errlen)
{
	char w[24];
	snprintf(w, sizeof w, "%" PRId64, worker);
	const char *p[] = {w};
	PGresult *res = db_query(
	    db,
	    "UPDATE sessions SET worker_id = $1::bigint WHERE id = (SELECT id FROM sessions WHERE "
	    "status = 'starting' AND worker_id IS NULL ORDER BY created FOR UPDATE SKIP LOCKED "
	    "LIMIT 1) RETURNING id, language, limits, network, coalesce(image_id::text, ''), env",
	    1, p);
	if (!res)
		return fail(db, err, errlen, "claim a session");
	int n = PQntuples(res);
	if (n) {
		copy(id, 37, db_value(res, 0, 0));
		copy(language, 32, db_value(res, 0, 1));
		*limits = cJSON_Parse(db_value(res, 0, 2));
		*network = PQgetisnull(res, 0, 3) ? NULL : cJSON_Parse(db_value(res, 0, 3));
		copy(image_id, 37, db_value(res, 0, 4));
		*env = PQgetisnull(res, 0, 5) ? NULL : cJSON_Parse(db_value(res, 0, 5));
	}
	PQclear(res);
	return n ? 1 : 0;
}

int sessdb_started(struct db *db, const char *id, int64_t worker, bool ok, const char *reason,
		   int memory, char *err, size_t errlen)
{
	char w[24];
	snprintf(w, sizeof w, "%" PRId64, worker);
	const char *p[] = {id, w, ok ? "t" : "f", ok ? NULL : reason,
			   memory < 0 ? NULL
			   : memory   ? "t"
				      : "f"};
	PGresult *res = db_query(
	    db,
	    "WITH u AS (UPDATE sessions SET status = CASE WHEN $3::bool THEN 'ready' ELSE 'failed' "
	    "END, closed = CASE WHEN $3::bool THEN NULL ELSE now() END, close_reason = $4, "
	    "last_used = now(), expires_at = now() + make_interval(secs => idle_ttl_s), "
	    "resumed_memory = $5::bool "
	    "WHERE id = $1::uuid AND worker_id = $2::bigint AND status = 'starting' RETURNING id) "
	    "SELECT pg_notify('" SESS_CHANNEL_REPLY "', 's' || id) FROM u",
	    5, p);
	if (!res)
		return fail(db, err, errlen, "mark a session started");
	int n = PQntuples(res);
	PQclear(res);
	return n;
}

int sessdb_expire(struct db *db, int64_t worker, char *err, size_t errlen)
{
	char w[24];
	snprintf(w, sizeof w, "%" PRId64, worker);
	const char *p[] = {w};
	/* a session in the middle of a call is not idle */
	PGresult *res = db_query(
	    db,
	    "WITH e AS (UPDATE sessions s SET status = 'expired', closed = now(), close_reason = "
	    "CASE WHEN max_until <= now() THEN '" SESS_REASON_LIFETIME "' ELSE "
	    "format('it was idle for more than %s s', idle_ttl_s) END WHERE worker_id = "
	    "$1::bigint AND status = 'ready' AND ((expires_at <= now() AND idle_action = 'close') "
	    "OR max_until <= now()) AND "
	    "NOT EXISTS (SELECT 1 FROM session_calls c WHERE c.session_id = s.id AND c.state <> "
	    "'done') RETURNING id) "
	    "SELECT pg_notify('" SESS_CHANNEL_REPLY "', 's' || id) FROM e",
	    1, p);
	if (!res)
		return fail(db, err, errlen, "expire sessions");
	int n = PQntuples(res);
	PQclear(res);
	return n;
}

int sessdb_idle_pause(struct db *db, int64_t worker, char *err, size_t errlen)
{
	char w[24];
	snprintf(w, sizeof w, "%" PRId64, worker);
	struct sess_call c;
	sess_call_init(&c, SCALL_PAUSE);
	c.idle = true;
	cJSON *request = sesscall_store(&c);
	char *req = cJSON_PrintUnformatted(request);
	cJSON_Delete(request);
	sess_call_release(&c);
	const char *p[] = {w, req};
	/* an idle session of idle_action pause, within its lifetime, with no call
	 * in flight: one pause call each, announced to this worker */
	PGresult *res = db_query(
	    db,
	    "WITH i AS (SELECT s.id FROM sessions s WHERE s.worker_id = $1::bigint AND s.status = "
	    "'ready' AND s.idle_action = 'pause' AND s.expires_at <= now() AND s.max_until > now() "
	    "AND NOT EXISTS (SELECT 1 FROM session_calls c WHERE c.session_id = s.id AND c.state "
	    "<> 'done') FOR UPDATE OF s SKIP LOCKED), "
	    "ins AS (INSERT INTO session_calls (session_id, kind, request) SELECT id, 'pause', "
	    "$2::jsonb FROM i RETURNING id) "
	    "SELECT pg_notify('judge_w' || $1, id::text) FROM ins",
	    2, p);
	free(req);
	if (!res)
		return fail(db, err, errlen, "pause idle sessions");
	int n = PQntuples(res);
	PQclear(res);
	return n;
}

int sessdb_checkpoint_due(struct db *db, int64_t worker, long interval_s, char *err, size_t errlen)
{
	char w[24], iv[24];
	snprintf(w, sizeof w, "%" PRId64, worker);
	snprintf(iv, sizeof iv, "%ld", interval_s);
	struct sess_call c;
	sess_call_init(&c, SCALL_SNAPSHOT);
	c.checkpoint = true;
	cJSON *request = sesscall_store(&c);
	char *req = cJSON_PrintUnformatted(request);
	cJSON_Delete(request);
	sess_call_release(&c);
	const char *p[] = {w, req, iv};
	/* a ready session used since its last checkpoint (or never checkpointed),
	 * that long ago, with no network (its memory is not kept) and no call in
	 * flight: one checkpoint call each, announced to this worker */
	PGresult *res = db_query(
	    db,
	    "WITH i AS (SELECT s.id FROM sessions s WHERE s.worker_id = $1::bigint AND s.status = "
	    "'ready' AND s.max_until > now() AND (s.network IS NULL OR s.network->>'mode' = "
	    "'none') AND coalesce(s.checkpoint_interval_s, $3::int) > 0 AND "
	    "coalesce(s.checkpoint_at, s.created) <= now() - make_interval(secs => "
	    "coalesce(s.checkpoint_interval_s, $3::int)) AND (s.checkpoint_at IS NULL OR "
	    "s.last_used > s.checkpoint_at) AND NOT "
	    "EXISTS (SELECT 1 FROM session_calls c WHERE c.session_id = s.id AND c.state <> "
	    "'done') FOR UPDATE OF s SKIP LOCKED), "
	    "ins AS (INSERT INTO session_calls (session_id, kind, request) SELECT id, 'snapshot', "
	    "$2::jsonb FROM i RETURNING id) "
	    "SELECT pg_notify('judge_w' || $1, id::text) FROM ins",
	    3, p);
	free(req);
	if (!res)
		return fail(db, err, errlen, "checkpoint sessions");
	int n = PQntuples(res);
	PQclear(res);
	return n;
}

int sessdb_checkpoint_age(struct db *db, const char *id, double *age_s, char *err, size_t errlen)
{
	const char *p[] = {id};
	PGresult *res = db_query(
	    db,
	    "UPDATE sessions s SET restored_checkpoint_age_s = NULL FROM (SELECT id, "
	    "restored_checkpoint_age_s AS a FROM sessions WHERE id = $1::uuid FOR UPDATE) o "
	    "WHERE s.id = o.id AND o.a IS NOT NULL RETURNING o.a",
	    1, p);
	if (!res)
		return fail(db, err, errlen, "read the checkpoint's age");
	int n = PQntuples(res);
	const char *v = n == 1 ? db_value(res, 0, 0) : NULL;
	if (v)
		*age_s = atof(v);
	else
		n = 0;
	PQclear(res);
	return n == 1;
}

int sessdb_paused_sweep(struct db *db, char *err, size_t errlen)
{
	/* SKIP LOCKED: the workers all sweep; a row one of them holds is its */
	PGresult *res = db_query(
	    db,
	    "WITH e AS (SELECT s.id FROM sessions s WHERE s.status = 'paused' AND "
	    "least(s.expires_at, s.max_until) <= now() FOR UPDATE SKIP LOCKED), "
	    "u AS (UPDATE sessions s SET status = 'expired', closed = now(), close_reason = CASE "
	    "WHEN s.max_until <= now() THEN '" SESS_REASON_LIFETIME "' ELSE " PAUSED_REASON " END "
	    "FROM e WHERE s.id = e.id RETURNING s.id) "
	    "SELECT pg_notify('" SESS_CHANNEL_REPLY "', 's' || id) FROM u",
	    0, NULL);
	if (!res)
		return fail(db, err, errlen, "end paused sessions");
	int n = PQntuples(res);
	PQclear(res);
	return n;
}

int sessdb_open_ids(struct db *db, int64_t worker, cJSON **out, char *err, size_t errlen)
{
	char w[24];
	snprintf(w, sizeof w, "%" PRId64, worker);
	const char *p[] = {w};
	PGresult *res = db_query(db,
				 "SELECT id FROM sessions WHERE worker_id = $1::bigint AND status "
				 "IN ('starting', 'ready')",
				 1, p);
	if (!res)
		return fail(db, err, errlen, "list open sessions");
	*out = cJSON_CreateArray();
	for (int i = 0; i < PQntuples(res); i++)
		cJSON_AddItemToArray(*out, cJSON_CreateString(db_value(res, i, 0)));
	PQclear(res);
	return 0;
}

void sess_hist_release(struct sess_hist *h)
{
	sess_call_release(&h->call);
	sess_reply_release(&h->reply);
}

/* Reads row i of sessdb_history's query into h. */
static void hist_read(PGresult *res, int i, struct sess_hist *h)
{
	const char *kind = db_value(res, i, 1);
	int k = scall_kind_parse(kind);
	sess_reply_init(&h->reply);
	h->call.id = db_value_ll(res, i, 0);
	h->body_len = db_value_ll(res, i, 3);
	h->done = !strcmp(db_value(res, i, 5), "done");
	copy(h->created_at, sizeof h->created_at, db_value(res, i, 6));
	copy(h->finished_at, sizeof h->finished_at, db_value(res, i, 7));
	h->duration_ms = (long)db_value_ll(res, i, 8);
	if (k < 0) {
		sess_call_init(&h->call, SCALL_EXECUTE);
		h->call.id = db_value_ll(res, i, 0);
		snprintf(h->load_error, sizeof h->load_error, "unknown call '%s'",
			 kind ? kind : "");
		return;
	}
	int64_t call_id = h->call.id;
	cJSON *request = cJSON_Parse(db_value(res, i, 2));
	if (sesscall_load((enum scall_kind)k, request, NULL, 0, &h->call, h->load_error,
			  sizeof h->load_error) == 0)
		h->load_error[0] = 0;
	h->call.id = call_id;
	cJSON_Delete(request);
	if (h->done) {
		cJSON *resp = cJSON_Parse(db_value(res, i, 4));
		sess_reply_release(&h->reply);
		if (sesscall_reply_load((enum scall_kind)k, resp, NULL, 0, &h->reply) < 0 &&
		    !h->load_error[0])
			snprintf(h->load_error, sizeof h->load_error, "%.200s", h->reply.message);
		cJSON_Delete(resp);
	}
}

int sessdb_history(struct db *db, const char *id, int64_t key, int64_t after, long limit,
		   struct sess_hist **out, size_t *n, char *err, size_t errlen)
{
	char k[24], a[24], l[24];
	snprintf(k, sizeof k, "%" PRId64, key);
	snprintf(a, sizeof a, "%" PRId64, after);
	snprintf(l, sizeof l, "%ld", limit);
	*out = NULL;
	*n = 0;
	const char *p[] = {id, k}, *q[] = {id, a, l};
	PGresult *res = db_query(db,
				 "SELECT 1 FROM sessions WHERE id = $1::uuid AND "
				 "coalesce(api_key_id, 0) = $2::bigint",
				 2, p);
	if (!res)
		return fail(db, err, errlen, "read session");
	int found = PQntuples(res);
	PQclear(res);
	if (!found)
		return 0;
	/* session_calls_history (migrations/0013) serves the scan in id order */
	res = db_query(
	    db,
	    "SELECT c.id, c.kind, c.request, coalesce(octet_length(c.body), 0), c.response, "
	    "c.state, " ISO("c.created") ", coalesce(" ISO(
		"c.finished") ", ''), "
			      "coalesce((extract(epoch FROM c.finished - coalesce(c.started, "
			      "c.created)) * 1000)"
			      "::bigint, -1) FROM session_calls c WHERE c.session_id = $1::uuid "
			      "AND c.id > "
			      "$2::bigint ORDER BY c.id LIMIT $3::bigint",
	    3, q);
	if (!res)
		return fail(db, err, errlen, "read session history");
	int rows = PQntuples(res);
	*out = rows ? xcalloc((size_t)rows, sizeof **out) : NULL;
	for (int i = 0; i < rows; i++)
		hist_read(res, i, &(*out)[i]);
	*n = (size_t)rows;
	PQclear(res);
	return 1;
}

void sess_claimed_release(struct sess_claimed *c)
{
	sess_call_release(&c->call);
	c->load_error[0] = 0;
}

static int by_id(const void *a, const void *b)
{
	int64_t x = ((const struct sess_claimed *)a)->call.id,
		y = ((const struct sess_claimed *)b)->call.id;
	return x < y ? -1 : x > y;
}

int sessdb_calls_claim(struct db *db, int64_t worker, int max, struct sess_claimed **out, char *err,
		       size_t errlen)
{
	char w[24], m[24];
	snprintf(w, sizeof w, "%" PRId64, worker);
	snprintf(m, sizeof m, "%d", max);
	const char *p[] = {w, m};
	PGresult *res = db_query(
	    db,
	    "UPDATE session_calls c SET state = 'running', started = now() WHERE c.id IN (SELECT "
	    "c2.id FROM session_calls c2 JOIN sessions s ON s.id = c2.session_id WHERE "
	    "s.worker_id = $1::bigint AND c2.state = 'pending' ORDER BY c2.id LIMIT $2::int FOR "
	    "UPDATE OF c2 SKIP LOCKED) RETURNING c.id, c.session_id, c.kind, c.request, c.body",
	    2, p);
	if (!res)
		return fail(db, err, errlen, "claim calls");
	int n = PQntuples(res);
	*out = n ? xcalloc((size_t)n, sizeof **out) : NULL;
	for (int i = 0; i < n; i++) {
		struct sess_claimed *c = &(*out)[i];
		const char *kind = db_value(res, i, 2);
		int k = scall_kind_parse(kind);
		cJSON *request = cJSON_Parse(db_value(res, i, 3));
		struct strbuf body = STRBUF_INIT;
		bytea_read(db_value(res, i, 4), &body);
		if (k < 0) {
			sess_call_init(&c->call, SCALL_EXECUTE);
			snprintf(c->load_error, sizeof c->load_error, "unknown call '%s'",
				 kind ? kind : "");
		} else if (sesscall_load((enum scall_kind)k, request, body.buf, body.len, &c->call,
					 c->load_error, sizeof c->load_error) < 0 &&
			   !c->load_error[0]) {
			snprintf(c->load_error, sizeof c->load_error, "the call cannot be read");
		}
		c->call.id = db_value_ll(res, i, 0);
		copy(c->call.session_id, sizeof c->call.session_id, db_value(res, i, 1));
		strbuf_release(&body);
		cJSON_Delete(request);
	}
	PQclear(res);
	if (n > 1)
		qsort(*out, (size_t)n, sizeof **out, by_id);
	return n;
}

int sessdb_call_finish(struct db *db, int64_t call_id, enum scall_kind k,
		       const struct sess_reply *reply, enum sess_status end, const char *reason,
		       char *err, size_t errlen)
{
	char c[24], cells[24];
	snprintf(c, sizeof c, "%" PRId64, call_id);
	snprintf(cells, sizeof cells, "%d", reply->cells);
	cJSON *response = sesscall_reply_store(k, reply);
	char *resp = cJSON_PrintUnformatted(response);
	cJSON_Delete(response);
	/* a file read answers with its bytes, an empty file too */
	/* the worker's own calls (a periodic checkpoint, an idle pause) leave
	 * last_used and the idle deadline alone: else each checkpoint made the
	 * session used again (another one an interval later, for ever) and an
	 * idle session never expired */
	bool bytes = k == SCALL_FILE_GET && reply->err == SERR_NONE;
	struct strbuf hex = STRBUF_INIT;
	if (bytes)
		bytea_hex(&hex, reply->file.bytes.buf ? reply->file.bytes.buf : "",
			  reply->file.bytes.len);
	const char *p[] = {c,
			   resp,
			   bytes ? hex.buf : NULL,
			   cells,
			   reply->restarted ? "1" : "0",
			   sess_status_name(end),
			   reason};
	PGresult *res = db_query(
	    db,
	    "WITH c AS (UPDATE session_calls SET state = 'done', finished = now(), response = "
	    "$2::jsonb, response_body = $3::bytea WHERE id = $1::bigint AND state <> 'done' "
	    "RETURNING id, session_id, request ? 'checkpoint' OR request ? 'idle' AS own), "
	    "s AS (UPDATE sessions t SET execution_count = execution_count + $4::int, restarts = "
	    "restarts + $5::int, last_used = CASE WHEN c.own THEN t.last_used ELSE now() END, "
	    "expires_at = CASE WHEN c.own THEN t.expires_at ELSE now() + make_interval(secs => "
	    "t.idle_ttl_s) END, status = CASE WHEN $6 = 'ready' THEN t.status ELSE $6 END, closed "
	    "= "
	    "CASE WHEN $6 = 'ready' THEN NULL ELSE now() END, close_reason = coalesce($7, "
	    "t.close_reason) FROM c WHERE t.id = c.session_id AND t.status = 'ready' RETURNING "
	    "t.id) "
	    "SELECT pg_notify('" SESS_CHANNEL_REPLY "', 'c' || id), (SELECT count(*) FROM s) "
	    "FROM c",
	    7, p);
	free(resp);
	strbuf_release(&hex);
	if (!res)
		return fail(db, err, errlen, "store a call's answer");
	PQclear(res);
	return 0;
}

int sessdb_usage_store(struct db *db, int64_t worker, const cJSON *usage, char *err, size_t errlen)
{
	char w[24], *text = cJSON_PrintUnformatted(usage);
	snprintf(w, sizeof w, "%" PRId64, worker);
	const char *p[] = {text, w};
	PGresult *res =
	    db_query(db,
		     "UPDATE sessions s SET usage = u.value FROM jsonb_each($1::jsonb) u "
		     "WHERE s.id = u.key::uuid AND s.worker_id = $2::bigint",
		     2, p);
	free(text);
	if (!res)
		return fail(db, err, errlen, "store session usage");
	PQclear(res);
	return 0;
}

int sessdb_end(struct db *db, const char *id, enum sess_status st, const char *reason, char *err,
	       size_t errlen)
{
	const char *p[] = {id, sess_status_name(st), reason};
	PGresult *res = db_query(
	    db,
	    "WITH e AS (UPDATE sessions SET status = $2, closed = now(), close_reason = $3 WHERE "
	    "id = $1::uuid AND status IN ('starting', 'ready', 'paused') RETURNING id), "
	    "c AS (UPDATE session_calls SET state = 'done', finished = now(), response = " GONE(
		"session_closed", "$3") " WHERE session_id = $1::uuid AND state <> 'done' "
					"RETURNING id), "
					"n AS (SELECT pg_notify('" SESS_CHANNEL_REPLY
					"', 'c' || id) FROM c UNION ALL "
					"SELECT pg_notify('" SESS_CHANNEL_REPLY
					"', 's' || id) FROM e) "
					"SELECT count(*) FROM n",
	    3, p);
	if (!res)
		return fail(db, err, errlen, "end a session");
	PQclear(res);
	return 0;
}

int sessdb_egress_list(struct db *db, const char *id, int64_t after, long limit,
		       struct sess_egress **out, size_t *n, char *err, size_t errlen)
{
	char a[24], l[24];
	snprintf(a, sizeof a, "%" PRId64, after);
	snprintf(l, sizeof l, "%ld", limit);
	const char *p[] = {id, a, l};
	*out = NULL;
	*n = 0;
	PGresult *res = db_query(
	    db,
	    "SELECT id, " ISO(
		"at") ", method, host, port, allowed, reason, addr, "
		      "bytes_out, bytes_in FROM session_egress WHERE session_id = $1::uuid "
		      "AND id > $2::bigint ORDER BY id LIMIT $3::bigint",
	    3, p);
	if (!res)
		return fail(db, err, errlen, "read egress attempts");
	int rows = PQntuples(res);
	*out = rows ? xcalloc((size_t)rows, sizeof **out) : NULL;
	for (int i = 0; i < rows; i++) {
		struct sess_egress *e = &(*out)[i];
		e->id = db_value_ll(res, i, 0);
		copy(e->at, sizeof e->at, db_value(res, i, 1));
		copy(e->method, sizeof e->method, db_value(res, i, 2));
		copy(e->host, sizeof e->host, db_value(res, i, 3));
		e->port = (int)db_value_ll(res, i, 4);
		e->allowed = !strcmp(db_value(res, i, 5), "t");
		copy(e->reason, sizeof e->reason, db_value(res, i, 6));
		copy(e->addr, sizeof e->addr, db_value(res, i, 7));
		e->bytes_out = db_value_ll(res, i, 8);
		e->bytes_in = db_value_ll(res, i, 9);
	}
	*n = (size_t)rows;
	PQclear(res);
	return 0;
}

int sessdb_egress_add(struct db *db, const char *id, const struct sess_egress *e, char *err,
		      size_t errlen)
{
	char port[16], out[24], in[24];
	snprintf(port, sizeof port, "%d", e->port);
	snprintf(out, sizeof out, "%lld", e->bytes_out);
	snprintf(in, sizeof in, "%lld", e->bytes_in);
	const char *p[] = {id,	      e->method, e->host, port, e->allowed ? "t" : "f",
			   e->reason, e->addr,	 out,	  in};
	PGresult *res =
	    db_query(db,
		     "INSERT INTO session_egress (session_id, method, host, port, "
		     "allowed, reason, addr, bytes_out, bytes_in) VALUES ($1::uuid, $2, "
		     "$3, $4::int, $5::bool, $6, $7, $8::bigint, $9::bigint)",
		     9, p);
	if (!res)
		return fail(db, err, errlen, "store an egress attempt");
	PQclear(res);
	return 0;
}

int sessdb_pause_finish(struct db *db, int64_t call_id, const struct sess_reply *reply,
			long retention_s, char *err, size_t errlen)
{
	char c[24], ret[24];
	snprintf(c, sizeof c, "%" PRId64, call_id);
	snprintf(ret, sizeof ret, "%ld", retention_s);
	cJSON *response = sesscall_reply_store(SCALL_PAUSE, reply);
	char *resp = cJSON_PrintUnformatted(response);
	cJSON_Delete(response);
	bool ok = reply->err == SERR_NONE;
	const char *p[] = {c, resp, ok ? reply->image.id : NULL, ret};
	/* the answer and the session's new state in one statement: a reader never
	 * sees a stored pause whose session still says ready, nor the other way */
	PGresult *res = db_query(
	    db,
	    "WITH c AS (UPDATE session_calls SET state = 'done', finished = now(), response = "
	    "$2::jsonb WHERE id = $1::bigint AND state <> 'done' RETURNING id, session_id), "
	    "s AS (UPDATE sessions t SET status = 'paused', worker_id = NULL, image_id = "
	    "$3::uuid, last_used = now(), expires_at = now() + make_interval(secs => $4::int) "
	    "FROM c WHERE $3::uuid IS NOT NULL AND t.id = c.session_id AND t.status = 'ready' "
	    "RETURNING t.id) "
	    "SELECT pg_notify('" SESS_CHANNEL_REPLY "', 'c' || id), (SELECT count(*) FROM s) "
	    "FROM c",
	    4, p);
	free(resp);
	if (!res)
		return fail(db, err, errlen, "store a pause");
	int n = PQntuples(res) ? (int)db_value_ll(res, 0, 1) : 0;
	PQclear(res);
	return n;
}

int sessdb_resume(struct db *db, const char *id, int64_t key, long timeout_s, struct sess_row *row,
		  char *err, size_t errlen)
{
	char k[24];
	snprintf(k, sizeof k, "%" PRId64, key);
	const char *p[] = {id, k};
	PGresult *res = db_query(
	    db,
	    "WITH u AS (UPDATE sessions SET status = 'starting', worker_id = NULL, last_used = "
	    "now(), expires_at = now() + make_interval(secs => idle_ttl_s) WHERE id = $1::uuid "
	    "AND coalesce(api_key_id, 0) = $2::bigint AND status = 'paused' AND "
	    "least(expires_at, max_until) > now() RETURNING id) "
	    "SELECT id, pg_notify('" SESS_CHANNEL_NEW "', id::text) FROM u",
	    2, p);
	if (!res)
		return fail(db, err, errlen, "resume a session");
	int n = PQntuples(res);
	PQclear(res);
	if (n)
		return 1;
	int rc = sessdb_get(db, id, key, timeout_s, row, err, errlen);
	return rc == 1 ? 2 : rc;
}
