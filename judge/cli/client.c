/* client: a running judge's URL, the API key, one HTTP request with libcurl (see client.h). */
#include "judge/cli/client.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/xalloc.h"

char *client_base_url(const struct judge_config *cfg, const char *given)
{
	struct strbuf u = STRBUF_INIT;
	const char *l = cfg->listen;
	if (given && *given)
		strbuf_addstr(&u, given);
	else if (!strncmp(l, "0.0.0.0:", 8))
		strbuf_addf(&u, "http://127.0.0.1:%s", l + 8);
	else if (!strncmp(l, "[::]:", 5))
		strbuf_addf(&u, "http://[::1]:%s", l + 5);
	else
		strbuf_addf(&u, "http://%s", l);
	while (u.len && u.buf[u.len - 1] == '/')
		u.buf[--u.len] = 0;
	return strbuf_detach(&u, NULL);
}

char *client_auth_header(const struct judge_config *cfg, const char *given)
{
	struct strbuf k = STRBUF_INIT, path = STRBUF_INIT;
	const char *env = getenv("JUDGE_API_KEY");
	if (given && *given)
		strbuf_addstr(&k, given);
	else if (env && *env)
		strbuf_addstr(&k, env);
	else {
		strbuf_addf(&path, "%s/api-key", cfg->state_dir);
		if (strbuf_read_file(&k, path.buf, 256) < 0)
			strbuf_reset(&k);
	}
	strbuf_release(&path);
	while (k.len && strchr(" \t\r\n", k.buf[k.len - 1]))
		k.buf[--k.len] = 0;
	if (!k.len || strpbrk(k.buf, "\r\n")) {
		strbuf_release(&k);
		return NULL;
	}
	char *auth = xasprintf("Authorization: Bearer %s", k.buf);
	strbuf_release(&k);
	return auth;
}

static size_t collect(char *data, size_t size, size_t n, void *arg)
{
	strbuf_add(arg, data, size * n);
	return size * n;
}

long client_request(const char *method, const char *url, const char *auth, const char *content_type,
		    const void *body, size_t len, long timeout_s, struct strbuf *out, char *err,
		    size_t errlen)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, errlen, "libcurl does not start");
		return -1;
	}
	CURL *c = curl_easy_init();
	if (!c)
		xalloc_die(0);
	struct curl_slist *hdr = NULL;
	char ct[160], cerr[CURL_ERROR_SIZE] = "";
	long status = -1;
	if (auth)
		hdr = curl_slist_append(hdr, auth);
	if (body) {
		snprintf(ct, sizeof ct, "Content-Type: %s", content_type);
		hdr = curl_slist_append(hdr, ct);
	}
	hdr = curl_slist_append(hdr, "Expect:");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	}
	CURLcode rc = curl_easy_perform(c);
	if (rc != CURLE_OK)
		snprintf(err, errlen, "%s %s: %s", method, url,
			 cerr[0] ? cerr : curl_easy_strerror(rc));
	else
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	curl_global_cleanup();
	return status;
}
