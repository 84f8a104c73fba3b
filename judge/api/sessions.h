/* sessions: the HTTP endpoints of stateful sessions (judge/service/session/).
 *
 *   POST   /v1/sessions {language, idle_ttl?, limits?}        201 the session
 *   GET    /v1/sessions[?all=1]                               this key's sessions
 *   GET    /v1/sessions/{id}                                  the session (any state)
 *   DELETE /v1/sessions/{id}                                  close it
 *   POST   /v1/sessions/{id}/execute {code, stdin?, timeout_ms?, expected_output?,
 *                                     compare?, context?}
 *   POST   /v1/sessions/{id}/install {manager, packages}
 *   PUT / GET / DELETE /v1/sessions/{id}/files/{path}        raw bytes
 *   GET    /v1/sessions/{id}/files?dir=PATH                   a folder's listing
 *   POST   /v1/sessions/{id}/contexts {language?, cwd?}       201 a code context
 *   GET    /v1/sessions/{id}/contexts                         the contexts
 *   POST   /v1/sessions/{id}/contexts/{ctx}/restart           its state lost, its id kept
 *   DELETE /v1/sessions/{id}/contexts/{ctx}
 *   POST   /v1/sessions/{id}/processes {argv, cwd?, env?, stdin?, timeout_ms?, tag?}
 *   GET    /v1/sessions/{id}/processes                        running and ended
 *   GET    /v1/sessions/{id}/processes/{pid}[?wait_ms=N]      its state (after its end)
 *   POST   /v1/sessions/{id}/processes/{pid}/stdin {data, encoding?}
 *   DELETE /v1/sessions/{id}/processes/{pid}/stdin            EOF on its stdin
 *   POST   /v1/sessions/{id}/processes/{pid}/signal {signal}
 *   GET    /v1/sessions/{id}/processes/{pid}/events           its output (SSE)
 *   POST   /v1/sessions/{id}/pause                            store its image, end its sandbox
 *   POST   /v1/sessions/{id}/resume                           a new sandbox from the image
 *   POST   /v1/sessions/{id}/snapshot {name?}                 201 a named image, it goes on
 *   POST   /v1/sessions/{id}/fork {name?}                     201 a new session from a snapshot
 *   POST   /v1/sessions {from_snapshot, ...}                  201 a session from a snapshot
 *
 * A call to a paused session resumes it first (any worker: the image is in
 * PostgreSQL, sessimage.h); its first cell says restarted: true.
 *
 * Each body is parsed once into a typed call (sessreq.h); serve never runs
 * code: the call is stored for the worker that holds the session and announced
 * on its channel; the request is parked (http_suspend) in the session hub's
 * table until the answer's NOTIFY, its deadline, or the worker's loss (410
 * session_lost) resumes it. No thread waits per call. The typed answer is
 * rendered by sessrender.h.
 *
 * The module's files, one room each, are listed atop sessions_int.h.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>

#include "judge/api/route.h"
#include "judge/service/session/sesscall.h"
#include "judge/service/session/sessreq.h"

struct api;
struct http_request;
struct sse_opts;

/* Handles a request of a session route rt (arg from route_of). */
void sessions_handle(struct http_request *r, struct api *a, enum route rt, const char *arg);
/* True when r is parked by this module (then sessions_resume takes it on). */
bool sessions_owns(const struct http_request *r);
/* Goes on with a parked request after the hub resumed it. */
void sessions_resume(struct http_request *r);

/* The E2B front's way in (judge/api/e2b_control.h): one session of id (a
 * 404 when id is not a session id), this key's open sessions (list's JSON
 * of GET /v1/sessions), and a call of kind with body in, answered as /v1
 * answers it (the caller's r->transform renders it). */
void sessions_get(struct http_request *r, struct api *a, const char *id);
/* PATCH /v1/sessions/{id} {idle_ttl}: a new idle TTL, the session's end
 * moved to now + it; answers the session as GET does (E2B's setTimeout too). */
void sessions_set_idle_ttl(struct http_request *r, struct api *a, const char *id, const cJSON *in);
void sessions_list(struct http_request *r, struct api *a);
void sessions_call(struct http_request *r, struct api *a, const char *id, enum scall_kind kind,
		   const cJSON *in);
/* POST /v1/sessions/{id}/snapshot with body in (NULL: none). */
void sessions_snapshot(struct http_request *r, struct api *a, const char *id, const cJSON *in);
/* POST /v1/sessions/{id}/resume: a paused session back on a sandbox, an open
 * one answered as it is; idle_ttl_s > 0 sets its idle TTL first (checked by
 * the caller). */
void sessions_resume_one(struct http_request *r, struct api *a, const char *id, long idle_ttl_s);
/* A file call of kind (file_get, file_put with body, file_list, file_delete,
 * file_stat, file_mkdir) on path, relative to the session folder, of session id. */
void sessions_file(struct http_request *r, struct api *a, const char *id, const char *path,
		   enum scall_kind kind, const void *body, size_t len);
/* A file_put of n files at once (sessreq_file_parts checks them). */
void sessions_file_parts(struct http_request *r, struct api *a, const char *id, size_t n,
			 const struct sessreq_part *parts);
/* A file_list of path and its folders down to depth levels (1 to
 * SESS_MAX_DEPTH; each entry named by its path below path). */
void sessions_file_list(struct http_request *r, struct api *a, const char *id, const char *path,
			int depth);
struct sse_opts;
/* A watch_start of folder path (relative to the session folder) of session
 * id (sesswatch.h): with framing, the answer is the relay of the watcher's
 * stream in that framing (start, fs events, done); without, its JSON
 * {"watcher": id} and the events kept for sessions_watch's polls. */
void sessions_watch_start(struct http_request *r, struct api *a, const char *id, const char *path,
			  bool recursive, long timeout_ms, const struct sse_opts *framing);
/* watch_events ({"events": [...]}) or watch_stop of watcher of session id. */
void sessions_watch(struct http_request *r, struct api *a, const char *id, enum scall_kind kind,
		    const char *watcher);
/* A file_move of from to to (both relative to the session folder). */
void sessions_file_move(struct http_request *r, struct api *a, const char *id, const char *from,
			const char *to);
/* A call on context ctx of session id: context_restart or context_remove. */
void sessions_context(struct http_request *r, struct api *a, const char *id, const char *ctx,
		      enum scall_kind kind);

/* E2B's /execute (judge/api/e2b_code.h): a cell of session id from in (as
 * POST .../execute takes it) answered, once it starts, by the relay of its
 * output in framing's shape (sse.h; the request's event_transform frames
 * each event); a cell refused before it runs (no such context) is answered
 * as sessions_call answers it, through r->transform, before any byte. */
void sessions_execute_events(struct http_request *r, struct api *a, const char *id, const cJSON *in,
			     const struct sse_opts *framing);
/* E2B's process.Process (judge/api/e2b_process.h): a process started from
 * in (as POST .../processes takes it) whose answer is the relay of its
 * output in framing's shape (sse.h; the request's event_transform frames
 * each event), the relay of process pid's output from its start, and a
 * call of kind (process_input, _close_stdin, _signal, _wait) on pid. */
void sessions_process_start_events(struct http_request *r, struct api *a, const char *id,
				   const cJSON *in, const struct sse_opts *framing);
void sessions_process_events(struct http_request *r, struct api *a, const char *id, const char *pid,
			     const struct sse_opts *framing);
void sessions_process(struct http_request *r, struct api *a, const char *id, enum scall_kind kind,
		      const char *pid, const cJSON *in);

/* The MCP tools' entry points: the same endpoints with a parsed body. */
void sessions_create(struct http_request *r, struct api *a, const cJSON *body);
/* The same, the session holding access_token (NULL: none): its E2B
 * sandbox's secret (sessdb_create), made by the caller. */
void sessions_create_token(struct http_request *r, struct api *a, const cJSON *body,
			   const char *access_token);
struct sessreq_keycap;
struct sessnet_policy;
/* The egress cap of r's key when it has one of its own (api_keys.egress) into
 * *kc: 1; 0 when it has none (judge.ini's applies), -1 with err. */
int sessions_keycap(struct api *a, struct http_request *r, struct sessreq_keycap *kc, char *err,
		    size_t errlen);
/* The cap r's sessions are held to: the key's own, else judge.ini's. Returns
 * 0, or -1 with err. */
int sessions_egress_cap(struct api *a, struct http_request *r, struct sessnet_policy *cap,
			char *err, size_t errlen);
/* kind: execute, install, file_list, file_get (answered as JSON: text or
 * base64), file_put (body's "content", with "encoding": "base64" optional) or
 * close; body's "session_id" names the session. */
void sessions_tool(struct http_request *r, struct api *a, enum scall_kind kind, const cJSON *body);
/* session_history: body's "session_id", optional "after" (a call's seq) and
 * "egress_after" (a network attempt's id). */
void sessions_history_tool(struct http_request *r, struct api *a, const cJSON *body);
/* MCP's session_resume (rt R_SESSION_RESUME: {session_id}), session_fork and
 * session_snapshot (R_SESSION_FORK, R_SESSION_SNAPSHOT: {session_id, name?}). */
void sessions_image_tool(struct http_request *r, struct api *a, enum route rt, const cJSON *body);
/* True for the routes whose POST body may be empty (pause, resume, snapshot, fork). */
bool sessions_body_optional(enum route rt);
