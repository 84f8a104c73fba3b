/* e2b_control: E2B's control plane (/sandboxes, /v2/sandboxes) over judge sessions.
 *
 * An E2B sandbox is a judge session of the key that made it (Python, its
 * default context). Each route calls the session endpoint it maps to
 * (sessions.h) and sets r->transform, which renders the /v1 answer as E2B's
 * SDKs expect it (docs/e2b.md; ../shared/E2B-PROTOCOL.md §2): create and
 * connect answer the sandbox (201 / 200), kill and pause 204, a snapshot 201
 * {snapshotID, names}, errors
 * {"code": <status>, "message": ...}, an unknown or ended sandbox 404.
 * The sandbox's envdAccessToken and trafficAccessToken are the caller's API
 * key, so the SDK's sandbox traffic (which carries no X-API-KEY) authenticates
 * as the same key and sees only its own sessions; with auth off there is none.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"

struct api;
struct http_request;

/* What the front reports as the sandbox's envd version (semver; the SDKs
 * gate features on it: 0.5.6 is multipart uploads, default user "user"). */
#define E2B_ENVD_VERSION "0.5.6"
/* The template every sandbox reports (any templateID gets a Python session). */
#define E2B_TEMPLATE "code-interpreter-v1"

/* Handles a control-plane request; arg is what follows "/sandboxes" or
 * "/v2/sandboxes" in the path ("" or "/{id}[/...]"). */
void e2b_control_handle(struct http_request *r, struct api *a, const char *arg);

/* The message of a /v1 error body ({"error": {"message": ...}}) into out,
 * or the body itself when it is not one. */
void e2b_control_message(const char *body, struct strbuf *out);
/* E2B's error body {"code": status, "message": message} into out. */
void e2b_control_error(struct strbuf *out, int status, const char *message);
/* Answers r with that body. */
void e2b_reply_error(struct http_request *r, int status, const char *message);
