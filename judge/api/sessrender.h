/* sessrender: how the /v1 API shows sessions' typed replies (judge/service/session/
 * sesscall.h): each reply's JSON, and the HTTP status and error code of each
 * session error. The one place a session error becomes HTTP; MCP shows the
 * same JSON, and another front (E2B) would render the same structs its way.
 * Pure: tested in tests/test_sessrender.c.
 */
#pragma once
#include <cjson/cJSON.h>

#include "judge/service/session/sessdb.h"
#include "judge/service/session/sesscall.h"

/* The HTTP status and API error code of e (SERR_NONE: 200, NULL). */
void sessrender_error(enum sess_err e, int *status, const char **code);
/* The HTTP status of a successful answer of kind k (201 for what it creates). */
int sessrender_status(enum scall_kind k);
/* The JSON body of r, the successful answer of call c (not file_get, whose
 * body is its bytes). Never NULL; the caller deletes it. */
cJSON *sessrender_reply(const struct sess_call *c, const struct sess_reply *r);
/* A cell's JSON (execute's answer). */
cJSON *sessrender_cell(const struct sess_cell *cell);
/* The data of a streamed cell's done event from the stored answer (the JSON
 * text session_calls.response holds): the cell's JSON, or {"http", "error":
 * {code, message}} for an error. malloc'd; "{}" when stored is NULL. *status:
 * the cell's status name (static), NULL for an error. */
char *sessrender_cell_done(const char *stored, const char **status);
/* The data of a process's done event from the stored end (a process_wait
 * reply, judge/service/session/sessproc.c): the process's JSON. malloc'd;
 * "{}" when stored is NULL or unreadable. */
char *sessrender_process_done(const char *stored);
/* One entry of a session's history (GET /v1/sessions/{id}/history): seq (the
 * call's id), kind, at, finished_at and duration_ms (null while open), state
 * (open or done), ok, error {code, message} as the caller was answered, and
 * what the call was: a cell's context, code, status and times; an install's
 * manager and packages; a file's path (and size written); a context's id and
 * language; a command's argv, cwd and pid; a signal. Never NULL. */
cJSON *sessrender_history_entry(const struct sess_hist *h);
struct sess_egress;
/* One egress attempt of the history: {"id", "at", "method", "host", "port",
 * "decision": "allowed"|"refused", "reason", "address", "bytes_out",
 * "bytes_in"}. */
cJSON *sessrender_egress_entry(const struct sess_egress *e);
