/* e2b_connect: Connect-RPC in JSON, as envd's services speak it to E2B's SDKs
 * (../shared/E2B-PROTOCOL.md 3.6): a unary call's bare JSON message and its
 * {"code", "message"} errors, a server stream's envelopes (a flag byte, a
 * big-endian length, JSON) ending in the end-of-stream envelope, and the
 * Connect code of a /v1 error answer. Used by e2b_process and e2b_fs.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>

#include "common/strbuf.h"

struct http_request;

#define E2B_CONNECT_STREAM_TYPE "application/connect+json"
#define E2B_CONNECT_FLAG_END	0x02 /* the end-of-stream envelope */

/* Appends one envelope of flags holding json (o: deleted here). */
void e2b_connect_envelope(struct strbuf *out, unsigned flags, const char *json);
void e2b_connect_envelope_json(struct strbuf *out, unsigned flags, cJSON *o);
/* {"code": code, "message": message} (the caller deletes it). */
cJSON *e2b_connect_error_json(const char *code, const char *message);
/* A stream's end with an error: the end-of-stream envelope {"error": {...}}. */
void e2b_connect_stream_error(struct strbuf *out, const char *code, const char *message);
/* Answers r: a stream that ends at once with that error (200), or a unary
 * error (its conventional status, JSON). */
void e2b_connect_respond_stream_error(struct http_request *r, const char *code,
				      const char *message);
void e2b_connect_respond_error(struct http_request *r, const char *code, const char *message);
/* A Connect code's conventional HTTP status. */
int e2b_connect_status(const char *code);
/* The Connect code of a /v1 error answer (status and JSON body), its message
 * into msg: a session that is not there, not this key's or ended is
 * `unavailable` (E2B's edge answers 502 for such a sandbox). */
const char *e2b_connect_code_of(int status, const char *body, struct strbuf *msg);
/* http_request.transform of a server stream (process Start/Connect, WatchDir):
 * the /v1 call's error answer as the stream's end (a success went to the
 * relay and is not seen here); arg: the message when the answer has none.
 * No such sandbox (`unavailable`) is a 502 in JSON instead, as E2B's edge
 * answers: the SDK reads a stream's code from a non-200 status alone. */
int e2b_connect_stream_render(struct http_request *r, int status, const char *body, size_t len,
			      struct strbuf *out, void *arg);
/* Fills out with the unary error body for a /v1 error answer; returns its status. */
int e2b_connect_render_error(int status, const char *body, struct strbuf *out);
/* The request's one message: a bare JSON object (unary) or one envelope
 * (stream). NULL after answering the error. */
cJSON *e2b_connect_message(struct http_request *r, bool stream);
/* A member by its proto3 JSON name or its original snake_case one; NULL for
 * absent or null. */
cJSON *e2b_connect_field(const cJSON *o, const char *camel, const char *snake);
