/* e2b_envd: the sandbox daemon's API (E2b-Sandbox-Port: 49983) over a session.
 *
 * GET /health: 204 while the sandbox's session is open, 502 (as E2B's edge
 * answers for a sandbox that is not running) once it ended or when it is
 * not this key's. /files reads a file and writes one or several (multipart); process.Process is
 * e2b_process.h's, filesystem.Filesystem e2b_fs.h's (docs/e2b.md).
 */
#pragma once
#include <stddef.h>

struct api;
struct http_request;
struct strbuf;

/* E2B's path (absolute under /home/user, "~/..." or relative to it) into the
 * session folder's relative path rel and the absolute one abs. Returns 0,
 * or -1 when it is outside /home/user. */
int e2b_envd_path(const char *p, struct strbuf *rel, char abs[1024]);

/* The transform of envd requests refused before their handler runs (401,
 * 413, 429 ...): the judge's error body as envd's ({"code": status,
 * "message"}), or Connect's ({"code": "unauthenticated", ...}) on an RPC path;
 * other bodies pass. */
int e2b_envd_refusal(struct http_request *r, int status, const char *body, size_t len,
		     struct strbuf *out, void *arg);

/* Handles a request routed here by its E2b-Sandbox-Port header; sandbox is
 * its E2b-Sandbox-Id. */
void e2b_envd_handle(struct http_request *r, struct api *a, const char *sandbox);
