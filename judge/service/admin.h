/* admin: what the operator's dashboard reads (queue, throughput and latency
 * over time, workers and slots, recent failures) and the workers' heartbeats.
 *
 * Workers write one row each into `worker_beats` (migrations/0006_admin.sql) from
 * their housekeeping thread every ADMIN_BEAT_MS and delete it when they stop;
 * a row older than ADMIN_ALIVE_S is a worker that died without saying so.
 * The numbers come from the database in one statement, so that several
 * `judge serve` processes show the same dashboard.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

struct db;

#define ADMIN_BEAT_MS 3000
#define ADMIN_ALIVE_S 15

/* Records that worker name ("host:pid") is alive with slots slots, busy of them
 * grading, on backend. Returns 0 or -1 with err. */
int admin_worker_beat(struct db *db, const char *name, const char *backend, int slots, int busy,
		      char *err, size_t errlen);
/* Removes worker name's row (it is stopping). Returns 0 or -1 with err. */
int admin_worker_leave(struct db *db, const char *name, char *err, size_t errlen);

/* Queue wait per API key (the fair queue's result, queue.h) is measured over
 * the submissions claimed in the last ADMIN_WAIT_WINDOW_S: those finished
 * since, and those running. */
#define ADMIN_WAIT_WINDOW_S    300
#define ADMIN_WAIT_WINDOW_TEXT "5 minutes"

/* One API key's queue (key_id 0: submissions without a key, auth off). */
struct admin_key_wait {
	int64_t key_id;
	char name[64]; /* the key's name, cut to fit; "" without a key */
	long weight;
	long queued, running; /* now */
	double oldest_s;      /* how long its oldest queued submission has waited; 0: none */
	long claimed;	      /* claimed in the window */
	/* queued to claimed, of those: sum, median, 99th percentile, largest */
	double wait_sum_s, wait_p50_s, wait_p99_s, wait_max_s;
};

/* Every key with queued or running work or claims in the window, by id, into
 * *out (caller frees) and *n. Returns 0, or -1 with err. */
int admin_key_waits(struct db *db, struct admin_key_wait **out, size_t *n, char *err,
		    size_t errlen);

/* The dashboard's numbers as one object (caller owns it, cJSON_Delete):
 * {now_ms, queue_depth, running, finished_total, finished_last_minute,
 *  counts: {status: n}, series: [{t_ms, finished, failed, latency_p50_ms,
 *  latency_p95_ms}] (one per minute of the last hour that has any),
 *  workers: [{name, backend, slots, busy, started_ms, seen_ms, alive}],
 *  failures: [{id, status, language, message, attempts, worker, finished_ms}]
 *  (the last 20 internal_error submissions),
 *  keys: [{id, name, weight, queued, running, oldest_ms, claimed, wait_sum_ms,
 *  wait_p50_ms, wait_p99_ms, wait_max_ms}] (admin_key_waits, in ms),
 *  egress: [{id, session_id, key_id, at_ms, method, host, port, decision
 *  ("allowed", "refused"), reason, address, bytes_out, bytes_in}] (the
 *  sessions' network attempts, newest first: the last ADMIN_EGRESS_RECENT of
 *  every session, or the last ADMIN_EGRESS_SESSION of egress_session, a
 *  session id checked by the caller, when not NULL)}.
 * Returns 0, or -1 with err. */
#define ADMIN_EGRESS_RECENT	  20
#define ADMIN_EGRESS_RECENT_TEXT  "20"
#define ADMIN_EGRESS_SESSION	  500
#define ADMIN_EGRESS_SESSION_TEXT "500"
int admin_stats(struct db *db, const char *egress_session, cJSON **out, char *err, size_t errlen);
