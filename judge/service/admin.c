/* admin: the dashboard's numbers in one SQL statement, and the workers' heartbeats. */
#include "judge/service/admin.h"

#include <stdio.h>

#include "judge/store/db.h"
#include "common/xalloc.h"

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

/* Per API key: queued and running now, the oldest queued, and the queue
 * wait (created to started) of what was claimed in the window: finished
 * since (the finished index) or running. Rows: id, name, weight, queued,
 * running, oldest_ms, claimed, wait_sum_ms, wait_p50_ms, wait_p99_ms,
 * wait_max_ms. */
#define WINDOW_SQL	      "make_interval(secs => " ADMIN_WAIT_WINDOW_STR ")"
#define ADMIN_WAIT_WINDOW_STR "300"
#define KEY_WAITS_SQL                                                                              \
	"WITH recent AS (SELECT coalesce(api_key_id, 0) AS key, "                                  \
	"  extract(epoch FROM started - created) * 1000 AS wait_ms FROM submissions "              \
	"  WHERE finished > now() - " WINDOW_SQL " AND started IS NOT NULL "                       \
	"  UNION ALL SELECT coalesce(api_key_id, 0), extract(epoch FROM started - created) * "     \
	"1000 "                                                                                    \
	"  FROM submissions WHERE status = 'running'), "                                           \
	"w AS (SELECT key, count(*) AS n, sum(wait_ms) AS s, "                                     \
	"  percentile_cont(0.5) WITHIN GROUP (ORDER BY wait_ms) AS p50, "                          \
	"  percentile_cont(0.99) WITHIN GROUP (ORDER BY wait_ms) AS p99, max(wait_ms) AS mx "      \
	"  FROM recent GROUP BY key), "                                                            \
	"q AS (SELECT coalesce(api_key_id, 0) AS key, count(*) AS n, "                             \
	"  extract(epoch FROM now() - min(created)) * 1000 AS oldest "                             \
	"  FROM submissions WHERE status = 'queued' GROUP BY 1), "                                 \
	"r AS (SELECT coalesce(api_key_id, 0) AS key, count(*) AS n FROM submissions "             \
	"  WHERE status = 'running' GROUP BY 1), "                                                 \
	"k AS (SELECT key FROM w UNION SELECT key FROM q) "                                        \
	"SELECT k.key AS id, coalesce(a.name, '') AS name, coalesce(a.weight, 1) AS weight, "      \
	"coalesce(q.n, 0) AS queued, coalesce(r.n, 0) AS running, "                                \
	"round(coalesce(q.oldest, 0))::bigint AS oldest_ms, coalesce(w.n, 0) AS claimed, "         \
	"round(coalesce(w.s, 0))::bigint AS wait_sum_ms, "                                         \
	"round(coalesce(w.p50, 0))::bigint AS wait_p50_ms, "                                       \
	"round(coalesce(w.p99, 0))::bigint AS wait_p99_ms, "                                       \
	"round(coalesce(w.mx, 0))::bigint AS wait_max_ms "                                         \
	"FROM k LEFT JOIN w USING (key) LEFT JOIN q USING (key) LEFT JOIN r USING (key) "          \
	"LEFT JOIN api_keys a ON a.id = k.key"

_Static_assert(ADMIN_WAIT_WINDOW_S == 300, "ADMIN_WAIT_WINDOW_STR is its text");

int admin_key_waits(struct db *db, struct admin_key_wait **out, size_t *n, char *err, size_t errlen)
{
	*out = NULL;
	*n = 0;
	PGresult *res = db_query(db, KEY_WAITS_SQL " ORDER BY k.key", 0, NULL);
	if (!res) {
		snprintf(err, errlen, "cannot read the queue by key: %s", db_error(db));
		return -1;
	}
	int rows = PQntuples(res);
	struct admin_key_wait *k = xcalloc(rows ? (size_t)rows : 1, sizeof *k);
	for (int i = 0; i < rows; i++) {
		k[i].key_id = db_value_ll(res, i, 0);
		snprintf(k[i].name, sizeof k[i].name, "%s", db_value(res, i, 1));
		k[i].weight = (long)db_value_ll(res, i, 2);
		k[i].queued = (long)db_value_ll(res, i, 3);
		k[i].running = (long)db_value_ll(res, i, 4);
		k[i].oldest_s = (double)db_value_ll(res, i, 5) / 1000;
		k[i].claimed = (long)db_value_ll(res, i, 6);
		k[i].wait_sum_s = (double)db_value_ll(res, i, 7) / 1000;
		k[i].wait_p50_s = (double)db_value_ll(res, i, 8) / 1000;
		k[i].wait_p99_s = (double)db_value_ll(res, i, 9) / 1000;
		k[i].wait_max_s = (double)db_value_ll(res, i, 10) / 1000;
	}
	PQclear(res);
	*out = k;
	*n = (size_t)rows;
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
    "   ORDER BY finished DESC LIMIT 20) f),"
    " 'keys', (SELECT coalesce(json_agg(x ORDER BY x.id), '[]') FROM (" KEY_WAITS_SQL ") x),"
    /* the sessions' network attempts (sessegress.h), newest first: every
     * session's last ones, or one session's ($2) */
    " 'egress', (SELECT coalesce(json_agg(e ORDER BY e.id DESC), '[]') FROM"
    "   (SELECT g.id, g.session_id, s.api_key_id AS key_id,"
    "   (extract(epoch FROM g.at) * 1000)::bigint AS at_ms, g.method, g.host, g.port,"
    "   CASE WHEN g.allowed THEN 'allowed' ELSE 'refused' END AS decision, g.reason,"
    "   g.addr AS address, g.bytes_out, g.bytes_in"
    "   FROM session_egress g JOIN sessions s ON s.id = g.session_id"
    "   WHERE $2::uuid IS NULL OR g.session_id = $2::uuid"
    "   ORDER BY g.id DESC LIMIT CASE WHEN $2::uuid IS NULL THEN " ADMIN_EGRESS_RECENT_TEXT
    "   ELSE " ADMIN_EGRESS_SESSION_TEXT " END) e))";

int admin_stats(struct db *db, const char *egress_session, cJSON **out, char *err, size_t errlen)
{
	char alive[16];
	snprintf(alive, sizeof alive, "%d", ADMIN_ALIVE_S);
	const char *p[] = {alive, egress_session};
	PGresult *res = db_query(db, stats_sql, 2, p);
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
