/* evalstore: evaluation runs in PostgreSQL. */
#include "judge/service/evalstore.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "judge/service/queue.h"
#include "judge/store/db.h"

int evalstore_create(struct db *db, int64_t api_key_id, const char *language, const cJSON *ks,
		     const cJSON *task_ids, const cJSON *requests, int64_t *id, char *err,
		     size_t errlen)
{
	char key[24], prio[8];
	snprintf(key, sizeof key, "%" PRId64, api_key_id);
	snprintf(prio, sizeof prio, "%d", QUEUE_PRIO_BULK);
	char *ksj = cJSON_PrintUnformatted(ks), *tj = cJSON_PrintUnformatted(task_ids);
	char *rj = cJSON_PrintUnformatted(requests);
	const char *p[] = {key, language, ksj, tj, rj, prio};
	/* submission ids are drawn first, so each sample knows its own; one
	 * NOTIFY per sample, as queue_enqueue sends */
	PGresult *r = db_query(
	    db,
	    "WITH e AS (INSERT INTO evaluations (api_key_id, language, ks, total) VALUES "
	    "(nullif($1::bigint, 0), $2, $3::jsonb, jsonb_array_length($5::jsonb)) RETURNING id), "
	    "r AS (SELECT nextval(pg_get_serial_sequence('submissions', 'id')) AS sid, value, "
	    "ord FROM jsonb_array_elements($5::jsonb) WITH ORDINALITY AS t(value, ord)), "
	    "s AS (INSERT INTO submissions (id, request, priority, api_key_id) SELECT sid, value, "
	    "$6::smallint, nullif($1::bigint, 0) FROM r RETURNING id), "
	    "es AS (INSERT INTO evaluation_samples (evaluation_id, idx, task_id, submission_id) "
	    "SELECT e.id, r.ord - 1, $4::jsonb ->> (r.ord - 1)::int, r.sid FROM e, r), "
	    "n AS (SELECT pg_notify('" QUEUE_CHANNEL_NEW "', id::text) FROM s) "
	    "SELECT e.id, (SELECT count(*) FROM n) FROM e",
	    6, p);
	free(ksj);
	free(tj);
	free(rj);
	if (!r) {
		snprintf(err, errlen, "cannot create the evaluation: %s", db_error(db));
		return -1;
	}
	*id = db_value_ll(r, 0, 0);
	PQclear(r);
	return 0;
}

void evalstore_view_release(struct evalstore_view *v)
{
	for (int i = 0; i < v->n; i++) {
		free(v->samples[i].task_id);
		cJSON_Delete(v->samples[i].result);
	}
	free(v->samples);
	free(v->language);
	cJSON_Delete(v->ks);
	memset(v, 0, sizeof *v);
}

static void fill_samples(PGresult *r, struct evalstore_view *v)
{
	v->n = PQntuples(r);
	v->samples = xcalloc((size_t)v->n + 1, sizeof *v->samples);
	for (int i = 0; i < v->n; i++) {
		struct evalstore_sample *s = &v->samples[i];
		s->idx = (int)db_value_ll(r, i, 0);
		s->task_id = xstrdup(db_value(r, i, 1));
		s->submission_id = db_value_ll(r, i, 2);
		if (status_parse(db_value(r, i, 3), &s->status) < 0)
			s->status = SUB_INTERNAL_ERROR;
		if (!PQgetisnull(r, i, 4))
			s->result = cJSON_Parse(db_value(r, i, 4));
		if (status_is_final(s->status))
			v->done++;
		v->queued += s->status == SUB_QUEUED;
	}
}

int evalstore_get(struct db *db, int64_t id, int64_t api_key_id, struct evalstore_view *out,
		  char *err, size_t errlen)
{
	char ids[24], keys[24];
	memset(out, 0, sizeof *out);
	snprintf(ids, sizeof ids, "%" PRId64, id);
	snprintf(keys, sizeof keys, "%" PRId64, api_key_id);
	const char *p[] = {ids, keys};
	PGresult *r =
	    db_query(db,
		     "SELECT id, language, ks::text, "
		     "(extract(epoch FROM created) * 1000)::bigint FROM evaluations "
		     "WHERE id = $1::bigint AND ($2::bigint <= 0 OR api_key_id = $2::bigint)",
		     2, p);
	if (!r || PQntuples(r) != 1) {
		if (!r)
			snprintf(err, errlen, "cannot read the evaluation: %s", db_error(db));
		PQclear(r);
		return r ? 0 : -1;
	}
	out->id = db_value_ll(r, 0, 0);
	out->language = xstrdup(db_value(r, 0, 1));
	out->ks = cJSON_Parse(db_value(r, 0, 2));
	out->created_ms = db_value_ll(r, 0, 3);
	PQclear(r);
	r = db_query(db,
		     "SELECT es.idx, es.task_id, es.submission_id, s.status, s.result::text "
		     "FROM evaluation_samples es JOIN submissions s ON s.id = es.submission_id "
		     "WHERE es.evaluation_id = $1::bigint ORDER BY es.idx",
		     1, p);
	if (!r) {
		snprintf(err, errlen, "cannot read the evaluation: %s", db_error(db));
		evalstore_view_release(out);
		return -1;
	}
	fill_samples(r, out);
	PQclear(r);
	return 1;
}

int evalstore_progress(struct db *db, int64_t id, int64_t api_key_id, int *done, int *total,
		       int64_t *open_id, char *err, size_t errlen)
{
	char ids[24], keys[24];
	snprintf(ids, sizeof ids, "%" PRId64, id);
	snprintf(keys, sizeof keys, "%" PRId64, api_key_id);
	const char *p[] = {ids, keys, open_id ? "t" : "f"};
	/* the last open sample: the one the workers claim last (queue order) */
	PGresult *r = db_query(
	    db,
	    "SELECT e.finished, e.total, CASE WHEN $3::boolean AND e.finished < e.total THEN "
	    "(SELECT es.submission_id FROM evaluation_samples es JOIN submissions s "
	    "ON s.id = es.submission_id WHERE es.evaluation_id = e.id "
	    "AND s.status IN ('queued', 'running') ORDER BY es.idx DESC LIMIT 1) END "
	    "FROM evaluations e WHERE e.id = $1::bigint "
	    "AND ($2::bigint <= 0 OR e.api_key_id = $2::bigint)",
	    3, p);
	if (!r) {
		snprintf(err, errlen, "cannot read the evaluation: %s", db_error(db));
		return -1;
	}
	int found = PQntuples(r) == 1;
	if (found) {
		*done = (int)db_value_ll(r, 0, 0);
		*total = (int)db_value_ll(r, 0, 1);
		if (open_id)
			*open_id = PQgetisnull(r, 0, 2) ? 0 : db_value_ll(r, 0, 2);
	}
	PQclear(r);
	return found;
}
