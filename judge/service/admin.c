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
	if (db_exec(db,
		    "INSERT INTO workers (name, backend, slots, busy) VALUES ($1, $2, $3::int, "
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
	if (db_exec(db, "DELETE FROM workers WHERE name = $1", 1, p) < 0) {
		snprintf(err, errlen, "cannot remove worker '%s': %s", name, db_error(db));
		return -1;
	}
	return 0;
}

/* Unix milliseconds of a timestamptz expression, as SQL text. */
#define MS(x) "(extract(epoch FROM " x ") * 1000)::bigint"
/* Queue-to-result time of a finished row, in milliseconds. */
#define LAT "extract(epoch FROM finished - created) * 1000"

static const char stats_sql[] =
    "SELECT json_build_object("
    "'now_ms', " MS(
	"now()") ","
		 "'queue_depth', (SELECT count(*) FROM submissions WHERE status = "
		 "'queued'),"
		 "'running', (SELECT count(*) FROM submissions WHERE status = 'running'),"
		 "'finished_total', (SELECT count(*) FROM submissions WHERE finished IS "
		 "NOT NULL),"
		 "'finished_last_minute', (SELECT count(*) FROM submissions "
		 "  WHERE finished > now() - interval '1 minute'),"
		 "'counts', (SELECT coalesce(json_object_agg(status, n), '{}') FROM "
		 "  (SELECT status, count(*) AS n FROM submissions GROUP BY status) c),"
		 "'series', (SELECT coalesce(json_agg(m ORDER BY m.t_ms), '[]') FROM ("
		 "  SELECT " MS(
		     "date_trunc('minute', finished)") " AS t_ms, count(*) AS "
						       "finished,"
						       "  count(*) FILTER "
						       "(WHERE status = "
						       "'internal_error') AS "
						       "failed,"
						       "  "
						       "round(percentile_cont("
						       "0.5) WITHIN GROUP "
						       "(ORDER BY " LAT "))::bigint AS "
						       "latency_p50_ms,"
						       "  "
						       "round(percentile_cont("
						       "0.95) WITHIN GROUP "
						       "(ORDER BY " LAT "))::bigint AS "
						       "latency_p95_ms"
						       "  FROM submissions "
						       "WHERE finished > now() "
						       "- interval '60 "
						       "minutes' GROUP BY 1) "
						       "m),"
						       "'workers', (SELECT "
						       "coalesce(json_agg(w "
						       "ORDER BY w.name), "
						       "'[]') FROM ("
						       "  SELECT name, "
						       "backend, slots, "
						       "busy, " MS("started") " AS started_ms, " MS(
							   "seen") " AS "
								   "  seen_ms, "
								   "seen > "
								   "now() - "
								   "make_"
								   "interval("
								   "secs => "
								   "$1::int) "
								   "AS alive "
								   "FROM "
								   "workers) "
								   "w),"
								   "'failures',"
								   " (SELECT "
								   "coalesce("
								   "json_agg(f "
								   "ORDER BY "
								   "f.finished_"
								   "ms DESC, "
								   "f.id "
								   "DESC), "
								   "'[]') "
								   "  FROM "
								   "(SELECT "
								   "id, "
								   "status, "
								   "request->>'"
								   "language' "
								   "AS "
								   "language,"
								   "  "
								   "coalesce("
								   "result->>'"
								   "message', "
								   "'') AS "
								   "message, "
								   "attempts, "
								   "worker,"
								   "  " MS("finishe"
									   "d") " A"
										"S "
										"fi"
										"ni"
										"sh"
										"ed"
										"_m"
										"s "
										"FR"
										"OM"
										" s"
										"ub"
										"mi"
										"ss"
										"io"
										"ns"
										" W"
										"HE"
										"RE"
										" s"
										"ta"
										"tu"
										"s "
										"= "
										"'i"
										"nt"
										"er"
										"na"
										"l_"
										"er"
										"ro"
										"r'"
										"  "
										"OR"
										"DE"
										"R "
										"BY"
										" f"
										"in"
										"is"
										"he"
										"d "
										"DE"
										"SC"
										" L"
										"IM"
										"IT"
										" 2"
										"0)"
										" f"
										")"
										")";

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
