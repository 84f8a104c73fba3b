/* sessreq (sreq_): the bodies and paths of the session endpoints, checked and normalized.
 *
 * Pure functions of plain values (no database, no sandbox): serve checks a
 * request here before anything is stored, and stores the normalized JSON in
 * session_calls.request, which the worker reads back with the sreq_*_load
 * helpers. Errors are request.h's struct req_error (HTTP status, code, message).
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"
#include "judge/grading/request.h"

struct judge_config;
struct lang;
struct lang_registry;

/* A session's limits, all > 0 after sreq_create: memory of the sandbox, CPU
 * and wall of each cell (the default of a call), size of the session folder. */
struct sess_limits {
	long memory_mb, cpu_ms, wall_ms, disk_mb;
};

struct sreq_create {
	const struct lang *lang; /* in the registry given */
	long idle_ttl_s;
	struct sess_limits limits;
};

/* The language of a session: name or alias ("python3", "javascript") of a
 * language with a session driver. Returns it, or NULL with e (422 unknown_language). */
const struct lang *sreq_language(const struct lang_registry *langs, const char *name,
				 struct req_error *e);
/* POST /v1/sessions {language, idle_ttl?, limits?: {memory_mb, cpu_ms,
 * wall_ms, disk_mb}}: ranges and defaults from cfg. Returns 0, or -1 with e. */
int sreq_create(const struct judge_config *cfg, const struct lang_registry *langs, const cJSON *in,
		struct sreq_create *out, struct req_error *e);
/* The JSON of limits (for sessions.limits) and back (missing fields 0). */
cJSON *sreq_limits_json(const struct sess_limits *l);
void sreq_limits_load(const cJSON *j, struct sess_limits *out);

/* POST /v1/sessions/{id}/execute {code, stdin?, timeout_ms?, expected_output?,
 * compare?}: returns 0 with *out, the normalized call request (the caller
 * deletes it), or -1 with e. language names the session's language (compare
 * is checked as one-shot grading checks it). */
int sreq_execute(const struct judge_config *cfg, const struct lang_registry *langs,
		 const char *language, const cJSON *in, cJSON **out, struct req_error *e);
/* POST /v1/sessions/{id}/install {manager: "pip" | "npm", packages: [...]}:
 * every spec checked with install_check_package; 1 to SREQ_MAX_PACKAGES.
 * Returns 0 with *out (normalized), or -1 with e (422 for a refused name). */
#define SREQ_MAX_PACKAGES 64
int sreq_install(const cJSON *in, cJSON **out, struct req_error *e);

/* A path of the session folder as the files API takes it (already URL-decoded):
 * relative, parts separated by single '/', no "." or ".." part, no NUL or
 * control character, valid UTF-8, at most 1024 bytes, not empty unless
 * empty_ok (the folder itself). Returns true, or false with e (400 bad_path). */
bool sreq_path(const char *path, bool empty_ok, struct req_error *e);
/* The Content-Type a file is served with, from its name's extension
 * ("application/octet-stream" when unknown). Static. */
const char *sreq_content_type(const char *name);
/* Whether a file of content_type may be shown inline: a browser runs no
 * script in it (raster images, plain text, CSV, JSON). */
bool sreq_inline_ok(const char *content_type);
/* Appends the Content-Disposition a session file named name is served
 * with: "inline" when sreq_inline_ok of its type, else "attachment" with its
 * base name (RFC 6266, filename*=UTF-8''percent-encoded). */
void sreq_disposition(const char *name, struct strbuf *out);
/* True when s is a session id: a UUID in lower- or upper-case hex. */
bool sreq_id_valid(const char *s);
