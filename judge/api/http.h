/* http: the HTTP/1.1 server under the API (libmicrohttpd), JSON responses and errors.
 *
 * How it works: libmicrohttpd runs a pool of threads over epoll. For each
 * request this module first calls the headers hook, which may refuse the
 * request before its body is read (a refused body is never kept); then it
 * gathers the body (at most max_body bytes: a larger Content-Length is
 * answered 413 before the body is read, a larger chunked body is discarded
 * and answered 413), then calls the handler once the body is complete.
 * A handler answers with http_respond_*() / http_error(), or parks the
 * request with http_suspend() so no thread waits with it; whoever resumes it
 * (http_resume(), any thread) makes the server call the handler again for
 * the same request, whose r->ctx keeps the handler's state. http_stop()
 * resumes every parked request and gives them a moment to answer
 * (http_stopping() tells them); a request parked after that gets 503.
 * Every request ends in the done callback (metrics, admission bookkeeping),
 * also when the client went away.
 * Deadlines: libmicrohttpd's own timeout only ends idle connections, so a
 * thread of this module closes a connection whose request headers, or whole
 * body, take longer than the configured time (slowloris); requests that are
 * whole (waiting, streaming) have none. Header lines and lengths that a proxy
 * could read another way are refused 400 (framing_error).
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

struct MHD_Connection;
struct http_server;
struct http_request;

/* A response rewrite: gets the response a handler made (status, body of len
 * bytes, NUL-terminated) and fills out with the body to send instead, as
 * application/json. Returns the status to send, or -1 to send the original. */
typedef int (*http_transform_fn)(struct http_request *r, int status, const char *body, size_t len,
				 struct strbuf *out, void *arg);

struct http_request {
	struct http_server *server;
	struct MHD_Connection *conn;
	const char *method;
	const char *url; /* path, without the query string */
	struct strbuf body;
	size_t max_body;	      /* the body's cap: http_opts.max_body, unless the headers
					 hook raised it (up to http_opts.max_upload) */
	bool too_large;		      /* the body passed max_body; it was not kept */
	size_t large_limit;	      /* the cap it passed (0: max_body) */
	unsigned long long body_seen; /* bytes of body read, kept or not */
	bool responded;		      /* a response was queued */
	bool suspended;
	unsigned long suspends; /* http_suspend calls so far (a resume may come at once) */
	int status;		/* status of the response, for the done callback
				 * (HTTP_CLIENT_CLOSED: the client went first) */
	int64_t start_us;	/* clock_mono_us() at the start */
	/* For the handler: kept across suspend/resume, freed by ctx_free at the end. */
	void *ctx;
	void (*ctx_free)(void *ctx);
	int route;	    /* handler's label for metrics; -1 = none */
	int64_t key_id;	    /* handler's: the authenticated API key */
	bool admitted;	    /* handler's: counted by admission control */
	char found_arg[40]; /* the router's: a route's argument that admission found
			       (the sandbox of an E2B signed URL), "" = none */
	/* Optional, set by the handler: applied by http_respond to every response
	 * of this request, also after a resume (the MCP endpoint wraps the
	 * endpoints' JSON in JSON-RPC replies). Extra headers are dropped then.
	 * transform_free(transform_arg) runs at the end of the request. */
	http_transform_fn transform;
	void *transform_arg;
	void (*transform_free)(void *arg);
	const char *transform_type; /* a transformed response's type (NULL: JSON) */
	/* Optional, set by the handler (MCP): a streamed response of sse.h
	 * passes each event (name, its JSON data) through it with transform_arg
	 * instead of sending it as it is: it appends what to send to out and
	 * returns true when the stream ends after it. */
	bool (*event_transform)(struct http_request *r, const char *event, const char *data,
				struct strbuf *out, void *arg);
	/* Optional (MCP): a name by which another request may end this
	 * request's stream (sse_cancel); owned by the handler, read at once. */
	const char *stream_tag;
	struct http_conn *hc; /* private to http.c: the connection's deadline */
};

/* http_request.status of a request whose client went away (or was cut off
 * at a deadline) before an answer was queued: nginx's 499, never sent. */
#define HTTP_CLIENT_CLOSED 499
/* A refused body up to this size is read past before the 413 (see http.c). */
#define HTTP_DRAIN_BYTES (16ULL << 20)

/* Called when the body is complete, and again after each http_resume().
 * It must respond or suspend before it returns. */
typedef void (*http_handler_fn)(struct http_request *r, void *arg);
/* Called once per request when it is over (r is freed afterwards). */
typedef void (*http_done_fn)(struct http_request *r, void *arg);

struct http_opts {
	int listen_fd;	   /* a bound, listening socket (http_listen) */
	int threads;	   /* threads of the pool, >= 1 */
	size_t max_body;   /* bytes */
	size_t max_upload; /* the most a headers hook may raise a request's max_body to */
	/* A connection gets header_timeout_ms for a request's headers, from its
	 * start or from the end of its previous request, then body_timeout_ms
	 * for the whole body; past either it is closed (0: no deadline). */
	int64_t header_timeout_ms, body_timeout_ms;
	int max_conns_per_ip; /* open connections of one address; 0 = no cap */
	/* Optional: called once the headers are in, before the body is read. It
	 * may respond (refuse); then the body is never read and the handler is
	 * not called. */
	http_handler_fn headers;
	http_handler_fn handler;
	http_done_fn done;
	void *arg;
};

/* Opens a TCP socket bound to listen ("host:port", "[v6]:port" or ":port")
 * and listening. Returns the fd, or -1 with a message in err. */
int http_listen(const char *listen, char *err, size_t errlen);
/* Starts serving on opts->listen_fd (the server owns it from now on).
 * Returns 0 with *out, or -1 with err. */
int http_start(struct http_server **out, const struct http_opts *opts, char *err, size_t errlen);
/* Stops accepting, resumes and ends requests still suspended, frees s. */
void http_stop(struct http_server *s);
/* True once http_stop() began: a resumed handler must answer now, not park again. */
bool http_stopping(struct http_request *r);
/* True when r's client closed its connection (its FIN or a reset arrived),
 * without writing to it: how a long answer (a relayed stream) learns at once
 * that nobody reads it any more. Call from r's handler or content reader. */
bool http_client_gone(struct http_request *r);
/* Number of requests being served now (also the suspended ones). */
long http_active(const struct http_server *s);
/* Connections closed so far because their headers or body came too late. */
long http_deadline_closes(struct http_server *s);

/* Value of a request header or of a query parameter; NULL when absent.
 * Valid while the request lives. */
const char *http_header(struct http_request *r, const char *name);
const char *http_query(struct http_request *r, const char *name);
/* Whether query parameter name, given once or more, each a comma-separated
 * list (?state=a,b or ?state=a&state=b), lists value: 1 it does, 0 it does
 * not, -1 the parameter is absent. */
int http_query_lists(struct http_request *r, const char *name, const char *value);
/* Query parameter name as a whole number in [lo, hi] into *v (def when
 * absent): 0, or -1 when it is present but not such a number (the caller
 * answers, in its front's error shape). */
int http_query_long(struct http_request *r, const char *name, long long def, long long lo,
		    long long hi, long long *v);

/* Queues a response with body (copied) and content type (NULL: none, for an
 * empty body). Extra headers: NULL-terminated name, value pairs (may be NULL).
 * Passes through r->transform first when one is set. Returns 0 or -1. */
int http_respond(struct http_request *r, int status, const char *content_type, const char *body,
		 size_t len, const char *const *headers);
/* A streamed body (Server-Sent Events): fills buf with at most max bytes
 * and returns how many; returns 0 when it has nothing now, after parking r
 * with http_suspend (whoever has more calls http_resume); HTTP_STREAM_END
 * when the body is complete. It runs in a server thread: it must not block. */
typedef long (*http_stream_fn)(void *arg, char *buf, size_t max);
#define HTTP_STREAM_END (-1L)
/* Queues a response of status whose body read produces, chunk by chunk, with
 * content type and extra headers (as http_respond; no transform applies).
 * free_arg(arg) runs once when the response is gone (also on failure).
 * Returns 0 or -1. */
int http_respond_stream(struct http_request *r, int status, const char *content_type,
			http_stream_fn read, void *arg, void (*free_arg)(void *arg),
			const char *const *headers);
/* Responds with json printed compactly (json is not freed). Returns 0 or -1. */
int http_respond_json(struct http_request *r, int status, const cJSON *json);
/* Responds {"error": {"code": code, "message": ...}}. Returns 0 or -1. */
int http_error(struct http_request *r, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Like http_error, with extra headers (e.g. Retry-After). */
int http_error_h(struct http_request *r, int status, const char *const *headers, const char *code,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Parks r: call from the handler only, then return. */
void http_suspend(struct http_request *r);
/* Wakes a parked r (any thread); the handler runs again soon. */
void http_resume(struct http_request *r);
