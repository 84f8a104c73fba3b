/* e2b_images: E2B's snapshot routes outside /sandboxes, over a key's session
 * snapshots (snapshots.h): GET /snapshots (Sandbox.listSnapshots, optionally
 * ?sandboxID= and ?name=) and DELETE /templates/{id} (Sandbox.deleteSnapshot:
 * in E2B a snapshot is a template). Errors are E2B's {"code", "message"}.
 */
#pragma once

struct api;
struct http_request;

/* Handles GET /snapshots and DELETE /templates/{id}; url is the request's path. */
void e2b_images_handle(struct http_request *r, struct api *a, const char *url);
