/* snapshots: a key's stored session snapshots (docs/sessions.md, "Pause,
 * resume, snapshots and forks"), listed and deleted.
 *
 * A snapshot is made by POST /v1/sessions/{id}/snapshot or /fork and starts
 * sessions with POST /v1/sessions {from_snapshot} (sessions.h). Its bytes
 * count against the key's session_images_mb_per_key; deleting it is how a
 * key makes room. Answered here, from PostgreSQL alone: no worker takes part.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>

#include "judge/api/route.h"

struct api;
struct http_request;

/* GET /v1/snapshots: {snapshots, stored, cap}; GET and DELETE
 * /v1/snapshots/{id} (id: the path's id). */
void snapshots_handle(struct http_request *r, struct api *a, enum route rt, const char *id);
/* MCP's snapshot_list ({}) and snapshot_delete (del: {snapshot_id}). */
void snapshots_tool(struct http_request *r, struct api *a, bool del, const cJSON *body);
