/* problems: the problem endpoints of the HTTP API (docs/problems.md).
 *
 *   GET    /v1/problems                      what the key may see, with versions
 *   POST   /v1/problems?id=&visibility=&keep=&wait=   a new problem from a zip
 *          (Content-Type: application/zip): 201 once verified (ready), 422
 *          package_refused with the report when its submissions did not get
 *          their verdicts (unless keep), 202 while it is still being verified
 *   GET    /v1/problems/{id}[?version=N]     statement, samples, limits, state,
 *          the verification report and every version
 *   PUT    /v1/problems/{id}?visibility=&keep=&wait=   a new version (zip body)
 *   PATCH  /v1/problems/{id}  {"visibility": "public" | "private"}
 *   DELETE /v1/problems/{id}                 retire: no new submissions
 *
 * serve never runs code: an upload is unpacked and read here (format, test
 * data, limits: problem.h), stored (problemstore.h) with a verification job
 * that a worker runs, and the request waits for that job like a synchronous
 * execute (submit.h's parked wait). A submission of a problem is pinned here
 * to the version current when it is queued.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "judge/api/route.h"
#include "judge/grading/request.h"

struct api;
struct http_request;
struct judge_config;
struct problem;

/* The headers hook's part for R_PROBLEMS and R_PROBLEM: an upload (POST, PUT)
 * needs a zip body and a key allowed to upload, and may be as large as
 * problem_max_mb; PATCH takes JSON. Returns true when r may go on; else it
 * answered. */
bool problems_headers(struct http_request *r, struct api *a, enum route rt);

/* Uploads held in memory at once, by the whole server: a zip may be
 * problem_max_mb, so a further upload is 429 before its body is read. */
#define PROBLEMS_UPLOADS_MAX 4

/* A request is over: it no longer counts among the uploads held. */
void problems_done(struct http_request *r);

/* Handles R_PROBLEMS and R_PROBLEM (id: the path's id) once the body is in. */
void problems_handle(struct http_request *r, struct api *a, enum route rt, const char *id);

/* GET /v1/problems, and GET /v1/problems/{id} (version NULL: the current one). */
void problems_list(struct http_request *r, struct api *a);
void problems_get(struct http_request *r, struct api *a, const char *id, const char *version);

/* MCP's upload_problem: body {"id", "package_base64", "visibility", "keep",
 * "replace"} does what POST (or, with replace, PUT) does with the zip. */
void problems_mcp_upload(struct http_request *r, struct api *a, const cJSON *body);

/* Pins a validated submission p that names a problem to the version the key
 * may use now ("problem_version" in p->request). Returns 0 (also when p names
 * no problem), or -1 with e (422 unknown_problem, unsupported_problem; 503). */
int problems_pin(struct api *a, struct http_request *r, struct request_parsed *p,
		 struct request_error *e);

/* Loads problems_dir's packages into the store (the operator's, public, no
 * verification; a package whose files did not change adds no version).
 * Bad packages are logged and left out. */
void problems_load_dir(struct api *a);

/* What GET /v1/problems/{id} shows of a loaded package (never its secret
 * data): name, format, kind, limits, statement, samples. Caller owns it. */
cJSON *problems_info(const struct problem *p, const struct judge_config *cfg);
