/* metrics: the server's counters and histograms, and the Prometheus text of GET /metrics.
 *
 * The counters are kept here (thread-safe); the gauges that come from
 * elsewhere (the database's counts, requests in flight, callbacks) are passed
 * to metrics_render, which prints everything in one fixed order, so the
 * rendering is a function of plain values that a unit test can check.
 */
#pragma once
#include <stdbool.h>

#include "common/strbuf.h"
#include "judge/grading/status.h"
#include "judge/service/admin.h"
#include "judge/service/session/sessdb.h"

/* The statuses of a session's cell, the "status" label of judge_session_cells_total. */
#define METRICS_CELL_STATUSES                                                                      \
	{                                                                                          \
		"ok", "error", "timeout", "memory_limit", "output_limit", "internal_error"         \
	}
#define METRICS_NCELL 6

struct metrics;

/* What metrics_render prints beside the counters. */
struct metrics_gauges {
	bool db_up;		       /* the database answered counts */
	long counts[SUB_STATUS_COUNT]; /* submissions by status, when db_up */
	long in_flight;		       /* requests being served or parked */
	long deadline_closes;	       /* connections cut at a header or body deadline */
	long callbacks_delivered, callbacks_failed;
	long sessions[SESS_STATUS_COUNT]; /* sessions by status, when db_up */
	struct sess_totals sess;	  /* what sessions used, when db_up */
	/* the queue of each API key (admin_key_waits), when db_up; not owned */
	const struct admin_key_wait *keys;
	size_t nkeys;
};

/* New counters for nroutes routes labelled names[0..nroutes-1] (kept, not
 * copied); nroutes >= 1. Never NULL. */
struct metrics *metrics_new(const char *const *names, int nroutes);
/* Frees m; NULL is fine. */
void metrics_free(struct metrics *m);

/* Counts one answered request of route (out of range: the last route) with
 * its HTTP status (0: none was sent, counted as 5xx; 499: the client went
 * away before an answer, counted apart) and duration. */
void metrics_request(struct metrics *m, int route, int status, double seconds);
/* Adds one enqueue-to-result time of a synchronous execute. */
void metrics_exec_latency(struct metrics *m, double seconds);
/* Counts a request refused 401 (or 503 when the keys cannot be read). */
void metrics_auth_failure(struct metrics *m);
/* Counts a request refused 429. */
void metrics_rate_limited(struct metrics *m);
/* Counts one session cell that ended with status (one of METRICS_CELL_STATUSES;
 * another counts as internal_error) after seconds end to end. */
void metrics_session_cell(struct metrics *m, const char *status, double seconds);

/* Appends the Prometheus text exposition (version 0.0.4) of m and g to out. */
void metrics_render(struct metrics *m, const struct metrics_gauges *g, struct strbuf *out);
