/* admin: the dashboard's numbers in one SQL statement, and the workers' heartbeats. */
#include "judge/service/admin.h"

#include <stdio.h>

#include "judge/store/db.h"

int admin_worker_beat(struct db *db, const char *name, const char *backend, int slots, int busy,
		      char *err, size_t errlen)
{
	char s[16], b[16];
	snprintf(s, sizeof s, "%d", slots);
	snprintf(b, sizeof b, "%d", busy);
	const char *p[] = {name, backend, s, b};
	if (db_exec(
		db,
		"INSERT INTO worker_beats (name, backend, slots, busy) VALUES ($1, $2, $3::int, "
		"$4::int) ON CONFLICT (name) DO UPDATE SET backend = $2, slots = $3::int, "
		"busy = $4::int, seen = now()",
		4, p) < 0) {
		snprintf(err, errlen, "cannot record worker '%s': %s", name, db_error(db));
		return -1;
	}
	return 0;
}

int admin_worker_leave(struct db *db, const char *name, char *err, size_t errlen)
{
	const char *p[] = {name};
	if (db_exec(db, "DELETE FROM worker_beats WHERE name = $1", 1, p) < 0) {
		snprintf(err, errlen, "cannot remove worker '%s': %s", name, db_error(db));
		return -1;
	}
	return 0;
}

/* One statement, so the numbers are of one moment. Times are Unix
 * milliseconds; latency is queued (created) to result (finished). */
static const char stats_sql[] =
    "WITH ms AS (SELECT status, "
    "  (extract(epoch FROM date_trunc('minute', finished)) * 1000)::bigint AS minute_ms, "
    "  extract(epoch FROM finished - created) * 1000 AS latency_ms "
    "  FROM submissions WHERE finished > now() - interval '60 minutes') "
    "SELECT json_build_object("
    " 'now_ms', (extract(epoch FROM now()) * 1000)::bigint,"
    " 'queue_depth', (SELECT count(*) FROM submissions WHERE status = 'queued'),"
    " 'running', (SELECT count(*) FROM submissions WHERE status = 'running'),"
    " 'finished_total', (SELECT count(*) FROM submissions WHERE finished IS NOT NULL),"
    " 'finished_last_minute', (SELECT count(*) FROM submissions"
    "   WHERE finished > now() - interval '1 minute'),"
    " 'counts', (SELECT coalesce(json_object_agg(status, n), '{}') FROM"
    "   (SELECT status, count(*) AS n FROM submissions GROUP BY status) c),"
    " 'series', (SELECT coalesce(json_agg(m ORDER BY m.t_ms), '[]') FROM"
    "   (SELECT minute_ms AS t_ms, count(*) AS finished,"
    "   count(*) FILTER (WHERE status = 'internal_error') AS failed,"
    "   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms))::bigint"
    "     AS latency_p50_ms,"
    "   round(percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms))::bigint"
    "     AS latency_p95_ms"
    "   FROM ms GROUP BY minute_ms) m),"
    " 'workers', (SELECT coalesce(json_agg(w ORDER BY w.name), '[]') FROM"
    "   (SELECT name, backend, slots, busy,"
    "   (extract(epoch FROM started) * 1000)::bigint AS started_ms,"
    "   (extract(epoch FROM seen) * 1000)::bigint AS seen_ms,"
    "   seen > now() - make_interval(secs => $1::int) AS alive FROM worker_beats) w),"
    " 'failures', (SELECT coalesce(json_agg(f ORDER BY f.finished_ms DESC, f.id DESC), '[]')"
    "   FROM (SELECT id, status, request->>'language' AS language,"
    "   coalesce(result->>'message', '') AS message, attempts, worker,"
    "   (extract(epoch FROM finished) * 1000)::bigint AS finished_ms"
    "   FROM submissions WHERE status = 'internal_error'"
    "   ORDER BY finished DESC LIMIT 20) f))";

int admin_stats(struct db *db, cJSON **out, char *err, size_t errlen)
{
	char alive[16];
	snprintf(alive, sizeof alive, "%d", ADMIN_ALIVE_S);
	const char *p[] = {alive};
	PGresult *res = db_query(db, stats_sql, 1, p);
	if (!res) {
		snprintf(err, errlen, "cannot read the dashboard's numbers: %s", db_error(db));
		return -1;
	}
	*out = PQntuples(res) == 1 ? cJSON_Parse(db_value(res, 0, 0)) : NULL;
	PQclear(res);
	if (!*out) {
		snprintf(err, errlen, "the dashboard's numbers are not JSON");
		return -1;
	}
	return 0;
}
