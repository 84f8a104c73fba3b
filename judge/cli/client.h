/* client: the CLI as a client of a running judge's HTTP API (judge mcp,
 * judge problems): where it listens, the API key, one request. */
#pragma once
#include <stddef.h>

#include "common/strbuf.h"

struct judge_config;

/* The judge's base URL: given (without a trailing '/'), else http://LISTEN from
 * judge.ini, a wildcard address meaning this host. Caller frees it. */
char *client_base_url(const struct judge_config *cfg, const char *given);

/* "Authorization: Bearer KEY" for the key: given, else $JUDGE_API_KEY, else
 * state_dir/api-key (`judge up` writes it). NULL when there is none (auth =
 * off) or it is not one line. Caller frees it. */
char *client_auth_header(const struct judge_config *cfg, const char *given);

/* One request: method to url with the body (len bytes, content_type; none
 * when body is NULL), waiting at most timeout_s for the answer. Returns the
 * HTTP status with the body in out, or -1 with err (no answer). */
long client_request(const char *method, const char *url, const char *auth, const char *content_type,
		    const void *body, size_t len, long timeout_s, struct strbuf *out, char *err,
		    size_t errlen);
