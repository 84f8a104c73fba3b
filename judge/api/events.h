/* events: the live output of submissions as Server-Sent Events (sse.h).
 *
 *   GET /v1/submissions/{id}/events     (also GET /v1/submissions/{id} and the
 *       POSTs of execute, execute_with_expected and submissions with Accept:
 *       text/event-stream): stdout, stderr, test ... as the worker writes
 *       them, then done, whose data is the JSON a synchronous execute
 *       answers with (the result and "id"). Scoped by API key like GET
 *       /v1/submissions/{id}: another key's submission is 404.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct api;
struct http_request;

/* GET /v1/submissions/{id}/events: id_s is the path from the id on ("12/events"). */
void events_get(struct http_request *r, struct api *a, const char *id_s);
/* Relays submission id (already checked to be the caller's) to r; over: it is
 * final already. Last-Event-ID is read from r. Always answers r. */
void events_relay(struct http_request *r, struct api *a, int64_t id, bool over);
