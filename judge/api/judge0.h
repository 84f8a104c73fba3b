/* judge0 (judge0_): the Judge0 CE compatible API, at Judge0's own paths.
 *
 *   POST /submissions[?base64_encoded&wait&fields]   201 {"token"}; wait=true: the submission
 *   GET  /submissions/{token}[?base64_encoded&fields]
 *   POST /submissions/batch {"submissions": [...]}     201 [{"token"} | {"field": [errors]}]
 *   GET  /submissions/batch?tokens=T1,T2[&base64_encoded&fields]   {"submissions": [...]}
 *   GET  /languages, /languages/all, /languages/{id}, /statuses, /about, /config_info
 *
 * A thin front: a Judge0 body becomes the /v1 request object and goes through
 * the same validation (request_validate) and queue (queue.h) as /v1; Judge0's
 * own fields (language_id, base64_encoded) are kept in submissions.front. The
 * answer is rendered by judge0_render.h. Submissions are named by their UUID
 * token and, with keys on, only the key that made one can read it.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>

struct api;
struct http_request;
struct queue_sub;

/* POST /submissions. */
void judge0_submit(struct http_request *r, struct api *a);
/* POST or GET /submissions/batch. */
void judge0_batch(struct http_request *r, struct api *a);
/* GET /submissions/{token}. */
void judge0_get(struct http_request *r, struct api *a, const char *token);
/* GET /languages (all: also /languages/all). */
void judge0_languages(struct http_request *r, struct api *a, bool all);
/* GET /languages/{id} ("all" is judge0_languages). */
void judge0_language(struct http_request *r, struct api *a, const char *id);
/* GET /statuses, /about, /config_info. */
void judge0_statuses(struct http_request *r, struct api *a);
void judge0_about(struct http_request *r, struct api *a);
void judge0_config_info(struct http_request *r, struct api *a);

/* The callback of a submission made through this API (callback.h's
 * callback_format_fn): Judge0 PUTs the submission with its default fields,
 * base64 encoded when the submission was. Returns the body (the caller frees
 * it) with *method "PUT", or NULL for any other submission. */
char *judge0_callback_format(const struct queue_sub *s, const char **method);
