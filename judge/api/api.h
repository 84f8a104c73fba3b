/* api: the endpoints of the HTTP API (docs/ARCHITECTURE.md), over http.h, request.h, auth.h and
 * queue.h.
 *
 *   POST /v1/execute, /v1/execute_with_expected   enqueue (interactive priority) and
 *        answer with the result JSON (+ "id") once it is final; after max_wait_s
 *        202 {"id", "status"}.
 *   POST /v1/submissions                          201 {"id", "status": "queued"}
 *        (200 with the same id when the Idempotency-Key was used before)
 *   POST /v1/submissions/batch {"submissions": [request, ...]}   201 {"ids": [...]}
 *   GET  /v1/submissions/{id}[?wait=S]            {"id", "status", "result", times}
 *   GET  /v1/languages, /v1/problems, /v1/problems/{id}
 *   GET  /health (no key needed), /metrics (Prometheus text, no key needed)
 *   POST /mcp                                     MCP tools over these endpoints (mcp.h)
 *
 * Waiting without a thread: a waiting request is parked (http_suspend) in a
 * table keyed by submission id. One thread LISTENs on judge_done (its own
 * connection) and resumes the requests of each finished id; it also resumes
 * those whose wait ran out, and all of them after a reconnect (a notification
 * may have been lost). A parked request registers before it reads the row, so
 * a result that lands between the read and the park is never missed.
 *
 * Callbacks: this server delivers them (callback.c), driven by the same
 * judge_done notifications; the delivery state is in the submissions row so a
 * restart loses none, and a lease keeps two servers from sending one twice.
 */
#pragma once
#include <stddef.h>

struct judge_config;
struct api;

/* Loads languages, opens the database pool, starts the notification and
 * callback threads and the HTTP server on listen_fd (owned from now on).
 * db_url is the libpq connection string. Returns 0 with *out, or -1 with err. */
int api_start(struct api **out, const struct judge_config *cfg, const char *db_url, int listen_fd,
	      char *err, size_t errlen);
/* Stops the HTTP server (parked requests answer at once with the state they
 * have: 202 + id for a synchronous execute) and the threads, frees a. */
void api_stop(struct api *a);
