/* request (request_): turns a client's request body into the typed request of model.h.
 *
 * Everything a client sends passes through here before it reaches the queue:
 * the body must be UTF-8 JSON, every field has a type, a range and a cap from
 * judge.ini, and the output is the typed request the grader takes (model.h)
 * with its normalized JSON for the queue, so a worker never sees a field it did
 * not expect. Errors carry the HTTP status and the API error code the client gets.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "judge/grading/model.h"

struct judge_config;
struct lang_registry;

/* What the endpoint asks of the body. */
enum request_kind {
	REQ_EXECUTE,	      /* /v1/execute: expected output optional */
	REQ_EXECUTE_EXPECTED, /* /v1/execute_with_expected: expected_output or tests needed */
	REQ_SUBMISSION,	      /* /v1/submissions: inline tests, stdin, or a problem */
};

struct request_error {
	int http_status;   /* 400, 413, 415, 422 ... */
	char code[32];	   /* invalid_json, invalid_field, missing_field, unknown_language,
			      unknown_problem, too_large, invalid_encoding, callback_not_allowed */
	char message[256]; /* lower-case, names the field */
};

/* A validated request: the typed request, its normalized JSON for the queue
 * (model_request_render) and what the service keeps beside it. */
struct request_parsed {
	struct grade_request req; /* owned */
	cJSON *request;		  /* normalized request (model.h); owned */
	char *callback_url;	  /* validated callback URL, or NULL; owned */
};

/* Sets err and returns -1 (for one-line error returns). */
int request_fail(struct request_error *err, int http_status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Parses body (len bytes, not NUL-terminated, at most max_body_kb) as JSON:
 * valid UTF-8, one value with only white space after it, no \u0000 escape,
 * no key twice in one object (400 invalid_json naming the key).
 * Returns 0 with *out (the caller frees it), or -1 with err. */
int request_parse_json(const struct judge_config *cfg, const char *body, size_t len, cJSON **out,
		       struct request_error *err);

/* Parses body with request_parse_json, then validates it with request_validate. Returns 0 and fills
 * out (release with request_parsed_release), or -1 with err filled. */
int request_parse(const struct judge_config *cfg, const struct lang_registry *langs,
		  enum request_kind kind, const char *body, size_t len, struct request_parsed *out,
		  struct request_error *err);

/* Validates one request object in. Returns 0 and fills out, or -1 with err. */
int request_validate(const struct judge_config *cfg, const struct lang_registry *langs,
		     enum request_kind kind, const cJSON *in, struct request_parsed *out,
		     struct request_error *err);

void request_parsed_release(struct request_parsed *p);

/* True when id is a problem id: [a-z0-9][a-z0-9_-]*, at most 64 characters.
 * Such an id can never name a path outside problems_dir. */
bool request_problem_id_valid(const char *id);

/* Checks a callback URL: http:// or https://, a host listed in allowlist
 * (comma-separated host names or host:port, the port defaulting to 80 or 443;
 * empty = callbacks disabled), an optional port and path; no user info.
 * Returns 0, or -1 with err filled. */
int request_callback_url_check(const char *url, const char *allowlist, struct request_error *err);

/* Splits an http:// or https:// URL into host (lower case), port (default 80
 * or 443) and path (starts with '/'). Returns 0 or -1 when the URL is not of
 * that form. */
int request_url_split(const char *url, char *host, size_t hostlen, int *port, char *path,
		      size_t pathlen);
