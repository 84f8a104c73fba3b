/* submit: the submission endpoints: enqueue (execute*, /v1/submissions), batch, get with wait.
 *
 * Each endpoint parses its body once (request_parse_json) and validates it once
 * (request_validate); the MCP tools hand over their already parsed arguments.
 * A request that waits for a verdict is parked in the waiter hub (waiter.h)
 * and resumed by it; submit_resume carries it on.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "judge/grading/request.h"
#include "judge/service/waiter.h"

struct api;
struct http_request;
struct queue_new;
struct queue_sub;

/* POST /v1/execute, /v1/execute_with_expected (sync: answer with the result
 * once it is final, interactive priority) and /v1/submissions (201 at once,
 * bulk priority): parses r->body and calls submit_enqueue. Always answers or
 * parks r. */
void submit_post(struct http_request *r, struct api *a, enum request_kind kind, bool sync);
/* The same with the body already parsed (not kept after the return). */
void submit_enqueue(struct http_request *r, struct api *a, enum request_kind kind, bool sync,
		    const cJSON *body);
/* The same at interactive priority, answered with the submission's live
 * output (events.h) instead of waiting; a refused request is answered as
 * submit_enqueue does. */
void submit_stream(struct http_request *r, struct api *a, enum request_kind kind,
		   const cJSON *body);
/* How a front other than /v1 (piston.c, judge0.c) answers a run it waited for: s is
 * the submission, final unless the wait of max_wait_s ran out. It must respond. */
typedef void (*submit_answer_fn)(struct http_request *r, struct api *a, const struct queue_sub *s,
				 bool final);
/* Enqueues one submission on a connection of the pool (queue_enqueue's returns
 * and out-parameters; created may be NULL). mark (may be NULL) gets what the
 * waiter hub had heard just before the INSERT, for submit_wait. Returns 0 or -1
 * with err. */
int submit_enqueue_one(struct api *a, const struct queue_new *qn, int64_t *id, bool *created,
		       struct waiter_mark *mark, char *err, size_t errlen);
/* Enqueues the validated request p at interactive priority (no idempotency
 * key) and waits for it like /v1/execute, then answers through answer (a
 * database failure is a 503 of the API's own shape). Always answers or parks r. */
void submit_run(struct http_request *r, struct api *a, const struct request_parsed *p,
		submit_answer_fn answer);
/* POST /v1/submissions/batch {"submissions": [request, ...]}: all or none,
 * 201 {"ids": [...]}. */
void submit_batch(struct http_request *r, struct api *a);
/* GET /v1/submissions/{id_s}[?wait=w] (w: whole seconds, or NULL). */
void submit_get(struct http_request *r, struct api *a, const char *id_s, const char *w);
/* Waits (parked, without a thread) for submission id until deadline_ms (a
 * clock_mono_ms() time), then answers with answer; a database error is a 503
 * and a vanished row a 404, in this API's shape. queued: submit_enqueue_one's
 * mark when this request has just queued id (its first read may be skipped),
 * else NULL. */
void submit_wait(struct http_request *r, struct api *a, int64_t id, int64_t deadline_ms,
		 submit_answer_fn answer, const struct waiter_mark *queued);
/* Carries on a parked request of these endpoints that was resumed (r->ctx is
 * theirs); when the server is stopping it answers with what there is. */
void submit_resume(struct http_request *r);
