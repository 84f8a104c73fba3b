/* e2b_access: an E2B sandbox's secret (envdAccessToken) and what it admits.
 *
 * A sandbox made by the E2B front with a secret (always with keys on; with
 * keys off when the create asks `secure`) holds a random token in its
 * session row (sessions.access_token, migrations/0022). Its traffic carries
 * it as X-Access-Token (envd) or E2B-Traffic-Access-Token (the code
 * interpreter); download and upload URLs carry instead a signature, "v1_" and
 * the unpadded base64 of SHA-256("<path>:<read|write>:<username>:<token>"
 * [":<expiration>"]) as the SDKs compute it, and such a URL may come without
 * the E2b-Sandbox-Id header (a browser, curl): the sandbox is then the one
 * whose token makes that signature. Every comparison takes the same time
 * whatever the bytes; the token is never logged nor listed.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct api;
struct http_request;

/* A token's bytes with the NUL: "sbt_" and 48 hex digits. */
#define E2B_TOKEN_SIZE 53

/* A new secret into tok. Returns 0, or -1 when the system gives no random bytes. */
int e2b_access_token_new(char tok[E2B_TOKEN_SIZE]);
/* True when s has a sandbox token's form (not an API key's). */
bool e2b_access_is_token(const char *s);

enum e2b_access {
	E2B_ACCESS_NONE,   /* no sandbox secret concerns r: the API key decides */
	E2B_ACCESS_OK,	   /* admitted as the sandbox's key (*key_id, sandbox) */
	E2B_ACCESS_DENIED, /* 401: message says why */
	E2B_ACCESS_GONE,   /* 502: a sandbox token for a sandbox not running */
	E2B_ACCESS_ERROR,  /* the secrets cannot be read: message */
};
/* What the sandbox's secret says of request r of E2B's sandbox traffic
 * (code: the code interpreter's port, else envd's), sent to sandbox (its
 * E2b-Sandbox-Id; "" or NULL when absent: a signed URL then finds its
 * sandbox, into sandbox, 37 bytes). A sandbox token in a header must be
 * that sandbox's; a /files request without one may carry a signature
 * instead; envd's /health needs neither. A sandbox with a secret refuses
 * requests with neither when keys are off (with keys on, a key of its own
 * still admits them). */
enum e2b_access e2b_access_check(struct http_request *r, struct api *a, bool code, char *sandbox,
				 int64_t *key_id, char *message, size_t len);
/* The secret of session id of key into tok ("" when it has none). Returns
 * 0, or -1 when it cannot be read. */
int e2b_access_token_of(struct api *a, const char *id, int64_t key, char tok[E2B_TOKEN_SIZE]);
