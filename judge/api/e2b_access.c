/* e2b_access: an E2B sandbox's secret and what it admits (see e2b_access.h). */
#include "judge/api/e2b_access.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/base64.h"
#include "common/clock.h"
#include "common/sha256.h"
#include "common/strbuf.h"
#include "judge/api/api.h"
#include "judge/api/http.h"
#include "judge/service/session/sessdb.h"
#include "judge/store/db.h"

#define PREFIX "sbt_"

int e2b_access_token_new(char tok[E2B_TOKEN_SIZE])
{
	unsigned char raw[24];
	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
		return -1;
	static const char hex[] = "0123456789abcdef";
	memcpy(tok, PREFIX, 4);
	for (size_t i = 0; i < sizeof raw; i++) {
		tok[4 + 2 * i] = hex[raw[i] >> 4];
		tok[5 + 2 * i] = hex[raw[i] & 15];
	}
	tok[E2B_TOKEN_SIZE - 1] = 0;
	return 0;
}

bool e2b_access_is_token(const char *s)
{
	if (!s || strlen(s) != E2B_TOKEN_SIZE - 1 || strncmp(s, PREFIX, 4))
		return false;
	return strspn(s + 4, "0123456789abcdef") == E2B_TOKEN_SIZE - 5;
}

/* a equals b, in a time that depends on their lengths only (a secret's length
 * is public: every token has the same) */
static bool same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;
	for (size_t i = 0; i < la; i++)
		d |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
	return d == 0;
}

/* The SDKs' signature of op on path by user with token (and exp when not
 * NULL) into sig. */
static void signature(const char *path, const char *op, const char *user, const char *token,
		      const char *exp, struct strbuf *sig)
{
	struct strbuf raw = STRBUF_INIT;
	strbuf_addf(&raw, "%s:%s:%s:%s", path, op, user, token);
	if (exp)
		strbuf_addf(&raw, ":%s", exp);
	unsigned char d[32];
	sha256_buf(raw.buf, raw.len, d);
	strbuf_release(&raw);
	strbuf_addstr(sig, "v1_");
	base64_encode(sig, d, sizeof d);
	while (sig->len && sig->buf[sig->len - 1] == '=')
		sig->buf[--sig->len] = 0;
}

/* The signature parameter as the SDK made it: a '+' sent unencoded reads as
 * a space. */
static void signature_param(const char *s, struct strbuf *out)
{
	for (; *s; s++)
		strbuf_addch(out, *s == ' ' ? '+' : *s);
}

enum e2b_access e2b_access_check(struct http_request *r, struct api *a, bool code, char *sandbox,
				 int64_t *key_id, char *message, size_t len)
{
	const char *names[] = {"X-Access-Token", "E2B-Traffic-Access-Token"};
	const char *tok = NULL;
	for (size_t i = 0; i < 2 && !tok; i++)
		if (e2b_access_is_token(http_header(r, names[i])))
			tok = http_header(r, names[i]);
	bool files = !code && !strcmp(r->url, "/files");
	const char *sig = files ? http_query(r, "signature") : NULL;
	bool health = !code && !strcmp(r->url, "/health");
	bool has_id = sandbox && *sandbox;
	if (!has_id && !sig)
		return E2B_ACCESS_NONE;
	struct sess_access *x = NULL;
	size_t n = 0;
	char err[256];
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessdb_access(db, has_id ? sandbox : NULL, &x, &n, err, sizeof err) : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0) {
		snprintf(message, len, "%s", err);
		return E2B_ACCESS_ERROR;
	}
	enum e2b_access ret = E2B_ACCESS_NONE;
	if (has_id && !n) {
		/* a sandbox's token for a sandbox that holds none (ended, or never
		 * there): E2B's edge answers such traffic 502, not running */
		if (tok) {
			snprintf(message, len, "the sandbox is not running");
			ret = E2B_ACCESS_GONE;
		}
		goto out; /* a sandbox without a secret: the key decides */
	}
	if (tok) {
		/* every candidate is compared, so the time says nothing of which */
		size_t hit = n;
		for (size_t i = 0; i < n; i++)
			if (same(tok, x[i].token) && hit == n)
				hit = i;
		if (hit == n) {
			snprintf(message, len, "the access token is not this sandbox's");
			ret = E2B_ACCESS_DENIED;
			goto out;
		}
		*key_id = x[hit].key_id;
		snprintf(sandbox, 37, "%s", x[hit].id);
		ret = E2B_ACCESS_OK;
		goto out;
	}
	if (sig) {
		const char *path = http_query(r, "path"), *user = http_query(r, "username");
		const char *exp = http_query(r, "signature_expiration");
		const char *op = !strcmp(r->method, "GET") ? "read" : "write";
		char *end = NULL;
		long long when = exp ? strtoll(exp, &end, 10) : 0;
		if (exp && (!*exp || *end)) {
			snprintf(message, len,
				 "signature_expiration must be a Unix time in seconds");
			ret = E2B_ACCESS_DENIED;
			goto out;
		}
		struct strbuf given = STRBUF_INIT;
		signature_param(sig, &given);
		size_t hit = n;
		for (size_t i = 0; i < n; i++) {
			struct strbuf want = STRBUF_INIT;
			signature(path ? path : "", op, user ? user : "", x[i].token, exp, &want);
			if (same(given.buf ? given.buf : "", want.buf) && hit == n)
				hit = i;
			strbuf_release(&want);
		}
		strbuf_release(&given);
		if (hit == n) {
			snprintf(message, len,
				 "the signature is not valid for this path and operation");
			ret = E2B_ACCESS_DENIED;
		} else if (exp && when < clock_real_ms() / 1000) {
			snprintf(message, len, "signature is already expired");
			ret = E2B_ACCESS_DENIED;
		} else {
			*key_id = x[hit].key_id;
			snprintf(sandbox, 37, "%s", x[hit].id);
			ret = E2B_ACCESS_OK;
		}
		goto out;
	}
	if (health) {
		/* envd answers /health to anyone: running or not says nothing more */
		*key_id = x[0].key_id;
		ret = E2B_ACCESS_OK;
		goto out;
	}
	if (!a->auth_on) {
		snprintf(message, len,
			 "this sandbox is secured: send its access token (X-Access-Token)");
		ret = E2B_ACCESS_DENIED;
	}
out:
	free(x);
	return ret;
}

int e2b_access_token_of(struct api *a, const char *id, int64_t key, char tok[E2B_TOKEN_SIZE])
{
	struct sess_access *x = NULL;
	size_t n = 0;
	char err[256];
	tok[0] = 0;
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessdb_access(db, id, &x, &n, err, sizeof err) : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc == 0 && n && x[0].key_id == key)
		snprintf(tok, E2B_TOKEN_SIZE, "%.52s", x[0].token);
	free(x);
	return rc;
}
