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
#include <cjson/cJSON.h>
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

/* E2B's "all traffic" (the SDKs' ALL_TRAFFIC) in network.allowOut / denyOut. */
#define E2B_ALL_TRAFFIC "0.0.0.0/0"

struct sessnet_policy;
/* A create body's allow_internet_access and network as /v1's network, under
 * cap (the key's cap: its own, else judge.ini's), into *out (the caller
 * deletes it): network.allowOut host names are an allowlist (ALL_TRAFFIC in
 * it: open; allowOut wins over denyOut, as in E2B), allow_internet_access
 * false or denyOut [ALL_TRAFFIC] is none; an address, a CIDR, denyOut of
 * anything else, egressProxy or rules cannot be mapped (-1 with err: a
 * 400). allow_internet_access true or absent, the SDKs' default, returns 1
 * with the most cap allows (sessnet_cap_most), so that a default create is
 * never refused; else 0. */
int e2b_control_network(const cJSON *body, const struct sessnet_policy *cap, cJSON **out, char *err,
			size_t errlen);

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
