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

/* What a done renderer gets: the record whose stream is relayed. */
struct events_done_arg {
	struct api *a;
	int64_t id;
};
/* The relay of any stream of output_chunks whose done event is rendered from
 * a record: stream, headed by "Location: <loc>", done's data from
 * render_done(struct events_done_arg *, stored data) (NULL: the stored data);
 * what names the record in a 503. Always answers r. */
void events_relay_stream(struct http_request *r, struct api *a, int64_t id, bool over,
			 const char *stream, const char *loc,
			 char *(*render_done)(void *arg, const char *stored), const char *what);
