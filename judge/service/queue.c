/* queue: the submission queue in PostgreSQL (see queue.h for how it works).
 *
 * Each state change is one SQL statement: a data-modifying CTE changes the row
 * and a pg_notify() in the same statement announces it, so the change and its
 * NOTIFY commit together or not at all. A claim is (id, worker, attempts):
 * every later change of a running row names all three, which is what makes a
 * worker whose lease was reaped unable to finish or extend someone else's run.
 */
#include "judge/service/queue.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/store/db.h"
#include "common/log.h"
#include "common/xalloc.h"

#define SUB_COLS                                                                                   \
	"id, status, request::text, result::text, priority, idempotency_key, "                     \
	"coalesce(api_key_id, 0), callback_url, attempts, worker, "                                \
	"(extract(epoch FROM created) * 1000)::bigint, "                                           \
	"(extract(epoch FROM started) * 1000)::bigint, "                                           \
	"(extract(epoch FROM finished) * 1000)::bigint, callback_attempts, "                       \
	"(extract(epoch FROM callback_done) * 1000)::bigint, callback_next IS NOT NULL, "          \
	"callback_error, token::text, front::text"

void queue_sub_init(struct queue_sub *s)
{
	memset(s, 0, sizeof *s);
}

void queue_sub_release(struct queue_sub *s)
{
	cJSON_Delete(s->request);
	cJSON_Delete(s->result);
	cJSON_Delete(s->front);
	free(s->idempotency_key);
	free(s->callback_url);
	free(s->worker);
	free(s->callback_error);
	queue_sub_init(s);
}

static char *dup_or_null(const char *v)
{
	return v ? xstrdup(v) : NULL;
}

/* Fills *s from row of r (selected with SUB_COLS). */
static int read_row(const PGresult *r, int row, struct queue_sub *s, char *err, size_t errlen)
{
	queue_sub_release(s);
	s->id = db_value_ll(r, row, 0);
	const char *st = db_value(r, row, 1);
	if (!st || status_parse(st, &s->status) < 0) {
		snprintf(err, errlen, "submission %" PRId64 " has unknown status '%s'", s->id,
			 st ? st : "");
		return -1;
	}
	const char *req = db_value(r, row, 2), *res = db_value(r, row, 3);
	s->request = req ? cJSON_Parse(req) : NULL;
	s->result = res ? cJSON_Parse(res) : NULL;
	s->priority = (int)db_value_ll(r, row, 4);
	s->idempotency_key = dup_or_null(db_value(r, row, 5));
	s->api_key_id = db_value_ll(r, row, 6);
	s->callback_url = dup_or_null(db_value(r, row, 7));
	s->attempts = (int)db_value_ll(r, row, 8);
	s->worker = dup_or_null(db_value(r, row, 9));
	s->created_ms = db_value_ll(r, row, 10);
	s->started_ms = db_value_ll(r, row, 11);
	s->finished_ms = db_value_ll(r, row, 12);
	s->callback_attempts = (int)db_value_ll(r, row, 13);
	s->callback_done_ms = db_value_ll(r, row, 14);
	const char *pending = db_value(r, row, 15);
	s->callback_pending = pending && *pending == 't';
	s->callback_error = dup_or_null(db_value(r, row, 16));
	const char *tok = db_value(r, row, 17), *front = db_value(r, row, 18);
	snprintf(s->token, sizeof s->token, "%s", tok ? tok : "");
	s->front = front ? cJSON_Parse(front) : NULL;
	if ((req && !s->request) || (res && !s->result) || (front && !s->front)) {
		snprintf(err, errlen, "submission %" PRId64 ": cannot parse stored JSON", s->id);
		return -1;
	}
	return 0;
}

static void db_fail(struct db *db, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s", what, db_error(db));
}

/* Reads the single submission row a query returned, if any, and clears r.
 * Returns 1 with *out filled, 0 when no row came back, or -1 (r NULL: the
 * query failed, reported as "what: ..."). */
static int one_row(struct db *db, PGresult *r, const char *what, struct queue_sub *out, char *err,
		   size_t errlen)
{
	if (!r) {
		db_fail(db, what, err, errlen);
		return -1;
	}
	int ret = 0;
	if (PQntuples(r) == 1)
		ret = read_row(r, 0, out, err, errlen) < 0 ? -1 : 1;
	PQclear(r);
	return ret;
}

/* One submission, inside whatever transaction the caller has open. */
static int enqueue_one(struct db *db, const struct queue_new *in, int64_t *id, bool *created,
		       char *err, size_t errlen)
{
	int ret = -1;
	char *json = NULL, *front = NULL;
	PGresult *r = NULL;
	if (!in->request) {
		snprintf(err, errlen, "enqueue: no request");
		goto out;
	}
	json = cJSON_PrintUnformatted(in->request);
	front = in->front ? cJSON_PrintUnformatted(in->front) : NULL;
	char prio[16], key[24];
	snprintf(prio, sizeof prio, "%d", in->priority);
	snprintf(key, sizeof key, "%" PRId64, in->api_key_id);
	const char *p[] = {json, prio, in->idempotency_key, key, in->callback_url, front};
	/* a conflicting key inserts nothing: the SELECT below finds the first one,
	 * which READ COMMITTED lets us see once its transaction committed */
	r = db_query(db,
		     "WITH ins AS (INSERT INTO submissions (request, priority, idempotency_key, "
		     "api_key_id, callback_url, front) VALUES ($1::jsonb, $2::smallint, $3, "
		     "nullif($4::bigint, 0), $5, $6::jsonb) "
		     "ON CONFLICT ((coalesce(api_key_id, 0)), idempotency_key) "
		     "WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id) "
		     "SELECT id, pg_notify('" QUEUE_CHANNEL_NEW "', id::text) FROM ins",
		     6, p);
	if (!r) {
		db_fail(db, "cannot enqueue", err, errlen);
		goto out;
	}
	if (PQntuples(r) == 1) {
		*id = db_value_ll(r, 0, 0);
		if (created)
			*created = true;
		ret = 0;
		goto out;
	}
	PQclear(r);
	const char *q[] = {key, in->idempotency_key};
	r = db_query(db,
		     "SELECT id FROM submissions WHERE coalesce(api_key_id, 0) = $1::bigint "
		     "AND idempotency_key = $2",
		     2, q);
	if (!r || PQntuples(r) != 1) {
		if (r)
			snprintf(err, errlen, "cannot enqueue: idempotency key conflict not found");
		else
			db_fail(db, "cannot enqueue", err, errlen);
		goto out;
	}
	*id = db_value_ll(r, 0, 0);
	if (created)
		*created = false;
	ret = 0;
out:
	PQclear(r);
	free(json);
	free(front);
	return ret;
}

int queue_enqueue(struct db *db, const struct queue_new *in, int64_t *id, bool *created, char *err,
		  size_t errlen)
{
	/* without a key the INSERT statement is its own transaction; with a key
	 * the fallback SELECT must run after it, also fine outside a transaction */
	return enqueue_one(db, in, id, created, err, errlen);
}

int queue_enqueue_batch(struct db *db, const struct queue_new *in, size_t n, int64_t *ids,
			bool *created, char *err, size_t errlen)
{
	if (db_begin(db) < 0) {
		db_fail(db, "cannot enqueue", err, errlen);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (enqueue_one(db, &in[i], &ids[i], created ? &created[i] : NULL, err, errlen) <
		    0) {
			db_rollback(db);
			return -1;
		}
	if (db_commit(db) < 0) {
		db_fail(db, "cannot enqueue", err, errlen);
		return -1;
	}
	return 0;
}

int queue_get(struct db *db, int64_t id, int64_t api_key_id, struct queue_sub *out, char *err,
	      size_t errlen)
{
	char ids[24], keys[24];
	snprintf(ids, sizeof ids, "%" PRId64, id);
	snprintf(keys, sizeof keys, "%" PRId64, api_key_id);
	const char *p[] = {ids, keys};
	PGresult *r = db_query(db,
			       "SELECT " SUB_COLS " FROM submissions WHERE id = $1::bigint "
			       "AND ($2::bigint <= 0 OR api_key_id = $2::bigint)",
			       2, p);
	return one_row(db, r, "cannot read submission", out, err, errlen);
}

bool queue_token_valid(const char *token)
{
	if (strlen(token) != 36)
		return false;
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		char c = token[i];
		bool hex =
		    (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
		if (dash ? c != '-' : !hex)
			return false;
	}
	return true;
}

int queue_get_token(struct db *db, const char *token, int64_t api_key_id, struct queue_sub *out,
		    char *err, size_t errlen)
{
	/* a malformed token would be a cast error of the query, not "not found" */
	if (!queue_token_valid(token))
		return 0;
	char keys[24];
	snprintf(keys, sizeof keys, "%" PRId64, api_key_id);
	const char *p[] = {token, keys};
	PGresult *r = db_query(db,
			       "SELECT " SUB_COLS " FROM submissions WHERE token = $1::uuid "
			       "AND ($2::bigint <= 0 OR api_key_id = $2::bigint)",
			       2, p);
	return one_row(db, r, "cannot read submission", out, err, errlen);
}

int queue_claim(struct db *db, const char *worker, long lease_ms, long lead_ms,
		struct queue_sub *out, char *err, size_t errlen)
{
	char lease[24], lead[24];
	snprintf(lease, sizeof lease, "%ld", lease_ms);
	snprintf(lead, sizeof lead, "%ld", lead_ms);
	const char *p[] = {worker, lease, lead};
	/* the policy is judge_claim's (migrations/0008_fair_queue.sql) */
	PGresult *r =
	    db_query(db, "SELECT " SUB_COLS " FROM judge_claim($1, $2::bigint, $3::bigint)", 3, p);
	return one_row(db, r, "cannot claim", out, err, errlen);
}

/* Runs a statement on one claim; returns 0 when it matched a row, 1 when the
 * claim is no longer ours, -1 on error. */
static int on_claim(struct db *db, const char *sql, int64_t id, const char *worker, int attempt,
		    const char *p4, const char *p5, const char *what, char *err, size_t errlen)
{
	char ids[24], att[16];
	snprintf(ids, sizeof ids, "%" PRId64, id);
	snprintf(att, sizeof att, "%d", attempt);
	const char *p[] = {ids, worker, att, p4, p5};
	int n = p5 ? 5 : p4 ? 4 : 3;
	PGresult *r = db_query(db, sql, n, p);
	if (!r) {
		db_fail(db, what, err, errlen);
		return -1;
	}
	int matched =
	    PQresultStatus(r) == PGRES_TUPLES_OK ? PQntuples(r) > 0 : atoi(PQcmdTuples(r)) > 0;
	PQclear(r);
	return matched ? 0 : 1;
}

#define CLAIM_WHERE                                                                                \
	"WHERE id = $1::bigint AND worker = $2 AND attempts = $3::int AND status = 'running'"

int queue_extend(struct db *db, int64_t id, const char *worker, int attempt, long lease_ms,
		 char *err, size_t errlen)
{
	char lease[24];
	snprintf(lease, sizeof lease, "%ld", lease_ms);
	return on_claim(db,
			"UPDATE submissions SET lease_until = now() + $4::bigint * interval "
			"'1 millisecond' " CLAIM_WHERE,
			id, worker, attempt, lease, NULL, "cannot extend lease", err, errlen);
}

/* The state stored for status and its result: only a final one ends a claim. */
static enum sub_status finish_status(enum sub_status st, const cJSON *result)
{
	return result && status_is_final(st) && (unsigned)st < SUB_STATUS_COUNT
		   ? st
		   : SUB_INTERNAL_ERROR;
}

/* The JSON to store for result of status st: a status that is not final is
 * the judge's fault, not a verdict, and is stored as internal_error. Returns a
 * malloc'd string. */
static char *finish_json(enum sub_status st, const cJSON *result)
{
	cJSON *fixed = NULL;
	if (!result || finish_status(st, result) != st) {
		fixed = result ? cJSON_Duplicate(result, 1) : cJSON_CreateObject();
		cJSON_DeleteItemFromObjectCaseSensitive(fixed, "status");
		cJSON_AddStringToObject(fixed, "status", "internal_error");
		if (!cJSON_GetObjectItemCaseSensitive(fixed, "message"))
			cJSON_AddStringToObject(fixed, "message",
						"grading returned no final status");
	}
	char *json = cJSON_PrintUnformatted(fixed ? fixed : result);
	cJSON_Delete(fixed);
	return json;
}

#define FINISH_UPDATE                                                                              \
	"UPDATE submissions SET status = $4, result = $5::jsonb, "                                 \
	"finished = now(), lease_until = NULL, "                                                   \
	"callback_next = CASE WHEN callback_url IS NOT NULL THEN now() END " CLAIM_WHERE           \
	" RETURNING id, callback_url IS NOT NULL AS cb"

/* judge_done's payload (queue.h) of a row with id and cb */
#define DONE_PAYLOAD "id::text || CASE WHEN cb THEN '" QUEUE_DONE_CALLBACK "' ELSE '' END"

int queue_finish(struct db *db, int64_t id, const char *worker, int attempt, enum sub_status status,
		 const cJSON *result, char *err, size_t errlen)
{
	enum sub_status st = finish_status(status, result);
	char *json = finish_json(status, result);
	int rc = on_claim(db,
			  "WITH u AS (" FINISH_UPDATE ") "
			  "SELECT pg_notify('" QUEUE_CHANNEL_DONE "', " DONE_PAYLOAD ") FROM u",
			  id, worker, attempt, status_name(st), json, "cannot finish", err, errlen);
	free(json);
	return rc;
}

int queue_finish_claim(struct db *db, int64_t id, const char *worker, int attempt,
		       enum sub_status status, const cJSON *result, long lease_ms, long lead_ms,
		       struct queue_sub *next, bool *claimed, char *err, size_t errlen)
{
	*claimed = false;
	enum sub_status st = finish_status(status, result);
	char *json = finish_json(status, result);
	char ids[24], att[16], lease[24], lead[24];
	snprintf(ids, sizeof ids, "%" PRId64, id);
	snprintf(att, sizeof att, "%d", attempt);
	snprintf(lease, sizeof lease, "%ld", lease_ms);
	snprintf(lead, sizeof lead, "%ld", lead_ms);
	const char *p[] = {ids, worker, att, status_name(st), json, lease, lead};
	/* the finished row was never 'queued', so the claim cannot pick it; n
	 * must be read by the outer query, or its NOTIFY would not run, and c
	 * (volatile: never inlined) runs once. One row always: the claim's columns
	 * (NULL when the queue is empty), then how many rows the finish changed. */
	PGresult *r = db_query(
	    db,
	    "WITH u AS (" FINISH_UPDATE "), "
	    "n AS (SELECT pg_notify('" QUEUE_CHANNEL_DONE "', " DONE_PAYLOAD ") FROM u), "
	    "c AS (SELECT " SUB_COLS " FROM judge_claim($2, $6::bigint, $7::bigint)) "
	    "SELECT c.*, (SELECT count(*) FROM n) FROM (SELECT 1) AS one LEFT JOIN c ON true",
	    7, p);
	free(json);
	if (!r) {
		db_fail(db, "cannot finish", err, errlen);
		return -1;
	}
	int ncols = PQnfields(r);
	if (PQntuples(r) != 1 || ncols < 2) {
		PQclear(r);
		snprintf(err, errlen, "cannot finish: unexpected answer");
		return -1;
	}
	int ret = db_value_ll(r, 0, ncols - 1) > 0 ? 0 : 1;
	if (!PQgetisnull(r, 0, 0)) {
		/* the claim is committed: it is ours even if its row cannot be read */
		if (read_row(r, 0, next, err, errlen) < 0) {
			cJSON_Delete(next->request); /* graded as internal_error */
			next->request = NULL;
		}
		*claimed = true;
	}
	PQclear(r);
	return ret;
}

int queue_release(struct db *db, int64_t id, const char *worker, int attempt, char *err,
		  size_t errlen)
{
	return on_claim(db,
			"WITH u AS (UPDATE submissions SET status = 'queued', worker = NULL, "
			"lease_until = NULL, started = NULL, attempts = attempts - 1 " CLAIM_WHERE
			" RETURNING id) "
			"SELECT pg_notify('" QUEUE_CHANNEL_NEW "', id::text) FROM u",
			id, worker, attempt, NULL, NULL, "cannot hand back", err, errlen);
}

int queue_reap(struct db *db, int max_attempts, int *requeued, int *failed, char *err,
	       size_t errlen)
{
	char maxs[16];
	snprintf(maxs, sizeof maxs, "%d", max_attempts);
	const char *p[] = {maxs};
	/* SKIP LOCKED: a row a worker is finishing right now is not expired */
	PGresult *r = db_query(
	    db,
	    "WITH expired AS (SELECT id FROM submissions WHERE status = 'running' "
	    "AND lease_until < now() FOR UPDATE SKIP LOCKED), "
	    "failed AS (UPDATE submissions s SET status = 'internal_error', "
	    "result = jsonb_build_object('status', 'internal_error', 'message', "
	    "format('gave up after %s attempts: the worker running it stopped (last: %s)', "
	    "s.attempts, s.worker)), finished = now(), lease_until = NULL, "
	    "callback_next = CASE WHEN s.callback_url IS NOT NULL THEN now() END "
	    "FROM expired e WHERE s.id = e.id AND s.attempts >= $1::int "
	    "RETURNING s.id, s.callback_url IS NOT NULL AS cb), "
	    "requeued AS (UPDATE submissions s SET status = 'queued', worker = NULL, "
	    "lease_until = NULL FROM expired e WHERE s.id = e.id AND s.attempts < $1::int "
	    "RETURNING s.id) "
	    "SELECT 'f', pg_notify('" QUEUE_CHANNEL_DONE "', " DONE_PAYLOAD ") FROM failed "
	    "UNION ALL SELECT 'r', pg_notify('" QUEUE_CHANNEL_NEW "', id::text) FROM requeued",
	    1, p);
	if (!r) {
		db_fail(db, "cannot reap leases", err, errlen);
		return -1;
	}
	int nr = 0, nf = 0;
	for (int i = 0; i < PQntuples(r); i++)
		if (*PQgetvalue(r, i, 0) == 'f')
			nf++;
		else
			nr++;
	PQclear(r);
	if (nr || nf)
		log_info("reaper: %d expired lease%s requeued, %d given up", nr, nr == 1 ? "" : "s",
			 nf);
	if (requeued)
		*requeued = nr;
	if (failed)
		*failed = nf;
	return 0;
}

int queue_counts(struct db *db, long counts[SUB_STATUS_COUNT], char *err, size_t errlen)
{
	PGresult *r =
	    db_query(db, "SELECT status, count(*) FROM submissions GROUP BY status", 0, NULL);
	if (!r) {
		db_fail(db, "cannot count submissions", err, errlen);
		return -1;
	}
	for (int i = 0; i < SUB_STATUS_COUNT; i++)
		counts[i] = 0;
	for (int i = 0; i < PQntuples(r); i++) {
		enum sub_status st;
		if (status_parse(PQgetvalue(r, i, 0), &st) == 0)
			counts[st] = (long)db_value_ll(r, i, 1);
	}
	PQclear(r);
	return 0;
}

int queue_callback_next(struct db *db, long lease_ms, struct queue_sub *out, char *err,
			size_t errlen)
{
	char lease[24];
	snprintf(lease, sizeof lease, "%ld", lease_ms);
	const char *p[] = {lease};
	PGresult *r = db_query(
	    db,
	    "UPDATE submissions SET callback_attempts = callback_attempts + 1, "
	    "callback_next = now() + $1::bigint * interval '1 millisecond' "
	    "WHERE id = (SELECT id FROM submissions WHERE callback_url IS NOT NULL "
	    "AND callback_done IS NULL AND finished IS NOT NULL AND callback_next <= now() "
	    "ORDER BY callback_next FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING " SUB_COLS,
	    1, p);
	return one_row(db, r, "cannot take a callback", out, err, errlen);
}

int queue_callback_done(struct db *db, int64_t id, bool delivered, long retry_ms, const char *why,
			char *err, size_t errlen)
{
	char ids[24], retry[24];
	snprintf(ids, sizeof ids, "%" PRId64, id);
	snprintf(retry, sizeof retry, "%ld", retry_ms);
	const char *p[] = {ids, delivered ? "t" : "f", retry, delivered ? NULL : why};
	/* given up: callback_next NULL is never due again */
	if (db_exec(db,
		    "UPDATE submissions SET "
		    "callback_done = CASE WHEN $2::boolean THEN now() END, "
		    "callback_next = CASE WHEN $2::boolean OR $3::bigint < 0 THEN NULL "
		    "ELSE now() + $3::bigint * interval '1 millisecond' END, "
		    "callback_error = $4 "
		    "WHERE id = $1::bigint",
		    4, p) < 0) {
		db_fail(db, "cannot record the callback", err, errlen);
		return -1;
	}
	return 0;
}
