/* e2b_envd: the sandbox daemon's API (E2b-Sandbox-Port: 49983) over a session.
 *
 * GET /health: 204 while the sandbox's session is open, 502 (as E2B's edge
 * answers for a sandbox that is not running) once it ended or when it is
 * not this key's. The files API (/files) and the Connect-RPC services
 * (filesystem.Filesystem and process.Process) are not served yet: they
 * answer 501 in the shape the SDK reads (docs/e2b.md).
 */
#pragma once

struct api;
struct http_request;

/* Handles a request routed here by its E2b-Sandbox-Port header; sandbox is
 * its E2b-Sandbox-Id. */
void e2b_envd_handle(struct http_request *r, struct api *a, const char *sandbox);
