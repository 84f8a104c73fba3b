/* sse: relays a live output stream (judge/service/outstream.h) to an HTTP
 * request as Server-Sent Events, without a thread per client.
 *
 * Streaming something new (a session's cell, say) takes two steps:
 *   1. where the work runs (a worker): an outstream writer writes the events
 *      under a stream id of yours, e.g. outstream_begin(o, "cell:<call id>"),
 *      outstream_output / outstream_event(o, "result", json) ..., and last
 *      outstream_event(o, "done", json) and outstream_flush(o, ms);
 *   2. in the serve handler (after its own key check):
 *      sse_relay(r, a->sse, &(struct sse_opts){.stream = "cell:<call id>",
 *                .after = sse_last_event_id(http_header(r, "Last-Event-ID"))});
 * The relay answers 200 text/event-stream at once, sends what the stream
 * already holds (a late reader gets everything), then each event as its
 * batch is written, and ends after `done`. Events: "id: <seq>\nevent:
 * <name>\ndata: <json>\n\n"; a client that reconnects with Last-Event-ID:
 * <seq> gets the events after it; one that resumes after the stream's done
 * gets 204 No Content (an EventSource then stops reconnecting), and an id
 * the judge never gave is a 400. A ": keep-alive" comment goes every
 * SSE_KEEPALIVE_MS while nothing happens (it is also how a client that left
 * is noticed). A reader never slows a writer: they meet only in PostgreSQL.
 *
 * How it works: the body is a libmicrohttpd content reader (http_respond_stream).
 * When it has sent all it has, it registers in the hub (a waiter hub of
 * waiter.h LISTENing on judge_output, keyed by the stream id's hash), reads
 * once more, and parks the connection (http_suspend) when there is still
 * nothing new; the hub resumes it on a NOTIFY of its stream, at the next
 * keep-alive, or after a reconnect. A parked stream holds no thread, and a
 * resumed one reads its events on a pooled connection held only for the read.
 *
 * A handler may change what is sent: r->event_transform rewrites each event
 * (MCP turns output into notifications/progress and done into the tools/call
 * reply), and r->stream_tag names the stream so that sse_cancel() can end it.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "common/strbuf.h"

struct db_pool;
struct http_request;
struct sse_hub;

#define SSE_KEEPALIVE_MS 15000

/* Starts the hub's thread (its own connection to db_url); relays read with
 * connections of pool. Returns 0 with *out, or -1 with err. */
int sse_hub_start(struct sse_hub **out, const char *db_url, struct db_pool *pool, char *err,
		  size_t errlen);
/* Stops the hub (after the HTTP server: no relay may be left). NULL is fine. */
void sse_hub_stop(struct sse_hub *h);
/* The hub's waiters, woken by each NOTIFY of a stream (keyed by
 * waiter_text_key of its id): a handler that answers only once a stream's
 * first event is written parks there (waiter.h) before it relays. */
struct waiter_hub *sse_hub_waiters(struct sse_hub *h);

struct sse_opts {
	const char *stream; /* the stream id (copied) */
	int64_t after;	    /* relay the events with seq > after (Last-Event-ID) */
	/* The stream is known to be over: when it holds no done (pruned), the
	 * relay ends with a done of done_data(arg, NULL) (or {}). */
	bool over;
	/* Optional: the data sent for the done event instead of the stored one
	 * (stored is NULL when made up, see over): malloc'd JSON text on one
	 * line, or NULL to send the stored data. Runs in an HTTP thread. */
	char *(*done_data)(void *arg, const char *stored);
	/* Another framing than SSE's (E2B's Connect streams): the response's
	 * type, the bytes sent first instead of "retry: 2000", and those sent as
	 * a keep-alive instead of a comment (each of len bytes); the events go
	 * through the request's event_transform. NULL: SSE's. */
	const char *content_type;
	const char *prelude, *keepalive;
	size_t prelude_len, keepalive_len;
	/* Extra response headers: name, value, ..., NULL (at most 4 pairs). */
	const char *const *headers;
	void *arg;		     /* owned by the relay from now on */
	void (*arg_free)(void *arg); /* frees arg (may be NULL) */
	/* Optional: called (in an HTTP thread, before arg_free) when the relay
	 * ends before its done: the client left (noticed at a keep-alive),
	 * serve stops, or sse_cancel. */
	void (*on_left)(void *arg);
};

/* Answers r with the relay of o->stream (see above), or with 204 / 400 for
 * a Last-Event-ID after its end or unknown. r must not have answered yet nor
 * hold a ctx. Returns 0, or -1 when no response could be queued (o->arg is
 * freed in every case). */
int sse_relay(struct http_request *r, struct sse_hub *hub, const struct sse_opts *o);
/* Ends the relays whose request had stream_tag tag (MCP's cancellation):
 * each stops at once, sending nothing more. Any thread. Returns how many. */
int sse_cancel(struct sse_hub *hub, const char *tag);
/* A Last-Event-ID header's seq: 0 when h is NULL or empty, -1 when it is not
 * a whole number. */
int64_t sse_last_event_id(const char *h);
/* True when the request's Accept header asks for text/event-stream. */
bool sse_wanted(struct http_request *r);
/* Appends one event (id omitted when <= 0): data is split at its line ends
 * (\n, \r\n, \r) into data: lines, so any text survives the trip. */
void sse_encode(struct strbuf *out, int64_t id, const char *event, const char *data);
