/* dash: the operator dashboard's JSON endpoints under /v1/admin/ (admin keys only).
 *
 * GET /v1/admin/stats: queue, throughput and latency over time, workers and
 * slots, recent failures (admin.h), and sessions by status (sessdb.h).
 * GET /v1/admin/keys lists the API keys, POST creates one ({"name", "admin",
 * "egress"}: the key is in the answer, once); GET /v1/admin/keys/{id} reads
 * one, PATCH sets its own egress cap ({"egress": {"mode", "allow"} | null},
 * sessnet.h) and its weight, DELETE revokes it.
 * A key without the admin flag gets 403 forbidden; with auth = off (loopback
 * only) every caller is the operator.
 */
#pragma once
#include <stdbool.h>

struct api;
struct http_request;

/* True when r's key may use /v1/admin/; else it answered 403. */
bool dash_admit(struct http_request *r, struct api *a);
/* GET /v1/admin/stats. */
void dash_stats(struct http_request *r, struct api *a);
/* GET and POST /v1/admin/keys. */
void dash_keys(struct http_request *r, struct api *a);
/* GET, PATCH and DELETE /v1/admin/keys/{id}. */
void dash_key(struct http_request *r, struct api *a, const char *id);
