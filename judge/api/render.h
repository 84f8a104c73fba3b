/* render: the JSON the submission endpoints answer with, and their error replies. */
#pragma once
#include <cjson/cJSON.h>

struct http_request;
struct queue_sub;
struct request_error;

/* A submission as GET /v1/submissions/{id} shows it: id, status, language,
 * problem, times, attempts, callback state, result. Returns a new object
 * (the caller deletes it). */
cJSON *render_sub(const struct queue_sub *s);
/* The answer of a synchronous execute: the result JSON of s with "id" (and
 * "status" when the result has none). Returns a new object. */
cJSON *render_result(const struct queue_sub *s);
/* Logs what failed (what: err) and answers 503 unavailable + Retry-After: 1. */
void render_db_error(struct http_request *r, const char *what, const char *err);
/* Answers the status, code and message of a request error (request.h). */
void render_req_error(struct http_request *r, const struct request_error *e);
/* Answers status with {"<key>": "<message>"}: the error shape of a front that
 * is not ours (Judge0's "error", Piston's "message"). */
void render_keyed_error(struct http_request *r, int status, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
