/* api: the HTTP API (docs/ARCHITECTURE.md): its shared state, start and stop;
 * routing and admission are router.h's; the endpoints are in submit.h (submissions) and info.h
 * (read-only), rendered by render.h, counted by metrics.h, parked by the waiter of waiter.h.
 *
 *   POST /v1/execute, /v1/execute_with_expected   enqueue (interactive priority) and
 *        answer with the result JSON (+ "id") once it is final; after max_wait_s
 *        202 {"id", "status"}.
 *   POST /v1/submissions                          201 {"id", "status": "queued"}
 *        (200 with the same id when the Idempotency-Key was used before)
 *   POST /v1/submissions/batch {"submissions": [request, ...]}   201 {"ids": [...]}
 *   GET  /v1/submissions/{id}[?wait=S]            {"id", "status", "result", times}
 *   GET  /v1/submissions/{id}/events              live output as Server-Sent Events
 *        (events.h; also the POSTs above with Accept: text/event-stream)
 *   GET  /v1/languages
 *   /v1/problems, /v1/problems/{id}               upload, list, read, publish, retire (problems.h)
 *   GET  /health (no key needed), /metrics (Prometheus text, no key needed)
 *   POST /mcp                                     MCP tools over these endpoints (mcp.h)
 *   GET  /api/v2/runtimes, POST /api/v2/execute   Piston v2 compatible (piston.h)
 *   Judge0 CE's paths (/submissions, /languages, /statuses ...)   judge0.h
 *   /v1/sessions...                               stateful sessions (sessions.h)
 *
 * Waiting without a thread: a waiting request is parked (http_suspend) in the
 * table of the waiter hub (judge/service/waiter.h), keyed by submission id.
 * The hub's one thread LISTENs on judge_done (its own connection) and resumes
 * the requests of each finished id; it also resumes those whose wait ran out,
 * and all of them after a reconnect (a notification may have been lost). A
 * parked request registers before it reads the row, so a result that lands
 * between the read and the park is never missed.
 *
 * Callbacks: this server delivers them (callback.c), driven by the same
 * judge_done notifications; the delivery state is in the submissions row so a
 * restart loses none, and a lease keeps two servers from sending one twice.
 */
#pragma once
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "judge/grading/lang.h"

struct auth;
struct callback_sender;
struct db;
struct db_pool;
struct http_server;
struct judge_config;
struct metrics;
struct sse_hub;
struct waiter_hub;
struct sesshub;

/* The server's state, shared by the modules of judge/api/ (not for others). */
struct api {
	const struct judge_config *cfg;
	struct lang_registry langs;
	struct db_pool *pool;
	struct auth *auth;
	bool auth_on; /* with keys on, a key sees only its own submissions */
	struct http_server *http;
	struct callback_sender *callbacks;
	struct metrics *metrics;
	struct waiter_hub *waiters;
	struct waiter_hub *keys;  /* LISTENs on AUTH_CHANNEL: api_keys changed (auth.h) */
	struct sesshub *sessions; /* parks session calls until their answer (sessions.h) */
	struct sse_hub *sse;	  /* live output relays (sse.h) */
	/* languages' versions, probed once on first use (info.c) */
	pthread_mutex_t vlock;
	char **versions;
};

/* Loads languages, opens the database pool, starts the notification and
 * callback threads and the HTTP server on listen_fd (owned from now on).
 * db_url is the libpq connection string. Returns 0 with *out, or -1 with err. */
int api_start(struct api **out, const struct judge_config *cfg, const char *db_url, int listen_fd,
	      char *err, size_t errlen);
/* Stops the HTTP server (parked requests answer at once with the state they
 * have: 202 + id for a synchronous execute) and the threads, frees a. */
void api_stop(struct api *a);

/* A pooled connection (db_pool_put it) that gives up reconnecting after a
 * few seconds: while PostgreSQL restarts a request answers 503 + Retry-After
 * soon rather than holding one of the few HTTP threads. NULL when none is
 * free within wait_ms (then err says so). */
struct db *api_db(struct api *a, int wait_ms, char *err, size_t errlen);
