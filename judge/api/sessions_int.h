/* sessions_int.h: what the files of the sessions module (sessions*.c) share: a
 * parked request's state and the steps one file takes for another.
 *
 *   sessions.c         the route table, session reads, history, cells, contexts, MCP tools
 *   sessions_call.c    a call stored for the holding worker, parked, answered
 *   sessions_create.c  create, from_snapshot, fork's new session, the wait for a start
 *   sessions_image.c   pause's neighbours: resume, snapshot, fork
 *   sessions_files.c   files and folder watchers
 *   sessions_proc.c    processes and their output
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "judge/service/session/sesscall.h"
#include "judge/service/session/sessdb.h"
#include "judge/service/waiter.h"

struct api;
struct http_request;
struct sse_opts;

/* A parked request's state (r->ctx). */
struct sessions_ctx {
	struct api *api;
	struct http_request *r;
	struct waiter w;
	bool create; /* waiting for the session to start, else for call_id */
	/* create's answer: resume (200, restarted), fork (201, with forked_from
	 * and snapshot_id), or then_call: a paused session resumed for c->call,
	 * which is routed once it is ready */
	bool resume, fork, then_call;
	char parent[37], snapshot_id[37];
	char id[37];
	int64_t call_id;
	int64_t key;	       /* a relayed cell's: its interrupt when its client leaves */
	struct sess_call call; /* what was stored (its answer is rendered with it) */
	bool file_json;	       /* MCP: a file's bytes as JSON */
	int64_t t0_us;
	/* a process start answered by the relay of its output in this
	 * framing (E2B's Connect streams), not by the process's JSON */
	const struct sse_opts *events;
	/* a streamed cell in events' framing, waiting in the SSE hub for its
	 * stream's first event: start (relay it) or its refusal (answer that) */
	bool held;
};

/* sessions.c */

/* The key whose sessions r may touch (0 when auth is off). */
int64_t sessions_key_of(struct api *a, struct http_request *r);
/* Answers 410 (409 while starting) with why row's session takes no calls. */
void sessions_not_open(struct http_request *r, const struct sess_row *row);
/* Answers 404 for session id. */
void sessions_no_session(struct http_request *r, const char *id);
/* The session id at the start of arg ("{id}" or "{id}/..."): 0 with id, or
 * -1 after a 404 (not a session id). */
int sessions_id_of(struct http_request *r, const char *arg, char id[37]);
/* The segment after "{id}/<name>/" of arg, into out (at most n - 1 bytes). */
void sessions_segment(const char *arg, const char *name, char *out, size_t n);
/* Parses a call of kind from body in (or the path: file, context, process
 * routes) into out. Returns 0, or -1 after answering the error; the caller
 * releases out either way. */
int sessions_parse_call(struct http_request *r, struct api *a, enum scall_kind kind,
			const cJSON *in, struct sess_call *out);

/* sessions_call.c */

/* A new parked state of r for session id, owned by r (r->ctx). */
struct sessions_ctx *sessions_ctx_new(struct http_request *r, struct api *a, const char *id,
				      int64_t deadline_ms);
/* Frees c, its request going on without it. */
void sessions_ctx_end(struct sessions_ctx *c);
/* The waiter hook that parks a request (waiter_park). */
void sessions_suspend(struct waiter *w);
/* Stores call (taken: released here) for session id and waits for its answer
 * (or relays its output as it comes, when it is a streamed cell); with fork,
 * a snapshot's answer starts a new session from it; with events, a streamed
 * answer is relayed in that framing. A paused session is resumed first. */
void sessions_route_call_ex(struct http_request *r, struct api *a, const char *id,
			    struct sess_call *call, bool file_json, bool fork,
			    const struct sse_opts *events);
/* sessions_route_call_ex without fork or events. */
void sessions_route_call(struct http_request *r, struct api *a, const char *id,
			 struct sess_call *call, bool file_json);
/* Stores call c for session sid of key, its answer not waited for: nobody is
 * there to read it (a relay's client left). */
void sessions_call_unanswered(struct api *a, const char *sid, int64_t key, struct sess_call *c);

/* sessions_create.c */

/* A new parked state of r waiting for session id, just created or resumed, to
 * start. */
struct sessions_ctx *sessions_wait_start(struct http_request *r, struct api *a, const char *id);
/* Waits on for c's session to start, then answers as c asks (created,
 * resumed, forked, or c->call routed). */
void sessions_continue_create(struct sessions_ctx *c);
/* A fork's snapshot is stored (rep): a new session from it, c waiting for it
 * as a create waits. */
void sessions_fork_create(struct sessions_ctx *c, const struct sess_reply *rep);

/* sessions_image.c */

/* Makes paused session id starting again and waits for it: then answers as
 * c's flags ask (c from sessions_wait_start, set by the caller through
 * *then). Returns 1 when resumed (the request parked or answered), 0 when it
 * is not paused (*row holds it), -1 after answering an error. */
int sessions_resume_paused(struct http_request *r, struct api *a, const char *id,
			   struct sess_row *row, struct sessions_ctx **then);
/* POST /resume: a paused session back on a new sandbox; an open one as it is. */
void sessions_resume_route(struct http_request *r, struct api *a, const char *id);
/* POST /snapshot and /fork {name?}: a snapshot call; a fork then creates. */
void sessions_snapshot_call(struct http_request *r, struct api *a, const char *id, const cJSON *in,
			    bool fork);

/* sessions_files.c */

/* A files route: a call of kind on path, checked, routed. */
void sessions_file_call(struct http_request *r, struct api *a, const char *id, const char *path,
			enum scall_kind kind, const void *body, size_t len, bool file_json);
/* PUT, GET or DELETE /v1/sessions/{id}/files/{path} (arg from route_of). */
void sessions_file_route(struct http_request *r, struct api *a, const char *id, const char *arg);
/* Answers file_get call's reply rep: the bytes, or with file_json MCP's JSON. */
void sessions_answer_file(struct http_request *r, const struct sess_call *call,
			  const struct sess_reply *rep, bool file_json);
/* Answers a started watcher of session id by the relay of its events in
 * framing's shape; the watcher ends when the client leaves. */
void sessions_relay_watcher(struct http_request *r, struct api *a, const char *id,
			    const char *watcher, const struct sse_opts *framing);

/* sessions_proc.c */

/* A call of kind on the process named in arg ("{id}/processes/{pid}..."). */
void sessions_process_call(struct http_request *r, struct api *a, const char *id, const char *arg,
			   enum scall_kind kind, const cJSON *in);
/* GET .../processes/{pid}/events: the process's output as SSE. */
void sessions_process_events_route(struct http_request *r, struct api *a, const char *id,
				   const char *arg);
/* Relays process pid's output (sessproc.h) from after on: start, stdout and
 * stderr as printed, done with its end; in framing's shape (NULL: SSE). */
void sessions_relay_process(struct http_request *r, struct api *a, const char *id, long pid,
			    int64_t after, const struct sse_opts *framing);
