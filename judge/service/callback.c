/* callback: sends finished results to their callback_url (POST, or a front's own), with retries and
 * backoff. */
#include "judge/service/callback.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/clock.h"
#include "common/config.h"
#include "judge/store/db.h"
#include "common/log.h"
#include "judge/service/queue.h"
#include "judge/grading/request.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#define LEASE_MS   30000
#define TIMEOUT_MS 10000
/* the answer is not used; a receiver that streams more is cut off */
#define MAX_ANSWER 65536

struct callback_sender {
	struct db_pool *pool;
	long attempts;
	char *allowlist;
	char *ca_file;
	callback_format_fn format;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool kicked, stop;
	long delivered, failed;
};

/* Counts and drops the answer's body; a short count stops the transfer. */
static size_t on_answer(char *data, size_t size, size_t n, void *arg)
{
	(void)data;
	size_t *got = arg;
	*got += size * n;
	return *got > MAX_ANSWER ? 0 : size * n;
}

/* Sets the URL from the parts request_url_split checked, then reads back what
 * libcurl parsed: its host and port must be those, so no URL that two parsers
 * read differently can send the result to a host the allowlist did not name. */
static int set_url(CURL *c, CURLU *u, const char *url, char *err, size_t errlen)
{
	char host[256], path[4096];
	int port;
	if (request_url_split(url, host, sizeof host, &port, path, sizeof path) < 0) {
		snprintf(err, errlen, "not an http:// or https:// url: '%.100s'", url);
		return -1;
	}
	bool tls = !strncasecmp(url, "https://", 8);
	struct strbuf b = STRBUF_INIT;
	strbuf_addf(&b, "%s://%s:%d%s", tls ? "https" : "http", host, port, path);
	char *h = NULL, *p = NULL, *ui = NULL;
	int ret = -1;
	if (curl_url_set(u, CURLUPART_URL, b.buf, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &h, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &p, 0) != CURLUE_OK) {
		snprintf(err, errlen, "libcurl cannot parse '%.100s'", url);
		goto out;
	}
	/* CURLUE_NO_USER is the answer wanted: no user info */
	if (curl_url_get(u, CURLUPART_USER, &ui, 0) != CURLUE_NO_USER || strcasecmp(h, host) ||
	    atoi(p) != port) {
		snprintf(err, errlen, "'%.100s' does not name host %s port %d", url, host, port);
		goto out;
	}
	if (curl_easy_setopt(c, CURLOPT_CURLU, u) != CURLE_OK) {
		snprintf(err, errlen, "libcurl refuses the url");
		goto out;
	}
	ret = 0;
out:
	curl_free(h);
	curl_free(p);
	curl_free(ui);
	strbuf_release(&b);
	return ret;
}

int callback_post(const char *url, const char *method, const char *body, size_t len,
		  const char *ca_file, int timeout_ms, char *err, size_t errlen)
{
	int ret = -1;
	char cerr[CURL_ERROR_SIZE] = "";
	size_t got = 0;
	struct curl_slist *hdr = NULL;
	CURL *c = curl_easy_init();
	CURLU *u = curl_url();
	if (!c || !u)
		xalloc_die(0);
	if (set_url(c, u, url, err, errlen) < 0)
		goto out;
	/* Expect: 100-continue would cost a second with receivers that ignore it */
	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	if (!hdr || !(hdr = curl_slist_append(hdr, "Expect:")))
		xalloc_die(0);
	CURLcode rc = CURLE_OK;
#define SET(opt, val)                                                                              \
	do {                                                                                       \
		if (rc == CURLE_OK)                                                                \
			rc = curl_easy_setopt(c, opt, val);                                        \
	} while (0)
	SET(CURLOPT_ERRORBUFFER, cerr);
	SET(CURLOPT_NOSIGNAL, 1L); /* a thread of serve: no SIGALRM for DNS timeouts */
#if LIBCURL_VERSION_NUM >= 0x075500
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
	SET(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
	SET(CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	/* the allowlisted host is the one connected to: no redirect, no proxy from
	 * the environment (http_proxy would otherwise be taken) */
	SET(CURLOPT_FOLLOWLOCATION, 0L);
	SET(CURLOPT_PROXY, "");
	SET(CURLOPT_SSL_VERIFYPEER, 1L);
	SET(CURLOPT_SSL_VERIFYHOST, 2L);
	if (ca_file && *ca_file)
		SET(CURLOPT_CAINFO, ca_file);
	SET(CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	SET(CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
	SET(CURLOPT_USERAGENT, "judge");
	SET(CURLOPT_HTTPHEADER, hdr);
	SET(CURLOPT_POST, 1L);
	if (strcmp(method, "POST"))
		SET(CURLOPT_CUSTOMREQUEST, method);
	SET(CURLOPT_POSTFIELDS, body);
	SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	SET(CURLOPT_WRITEFUNCTION, on_answer);
	SET(CURLOPT_WRITEDATA, &got);
#undef SET
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "libcurl: %s", curl_easy_strerror(rc));
		goto out;
	}
	rc = curl_easy_perform(c);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	/* an answer cut off at MAX_ANSWER still has its status */
	if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && status > 0)) {
		snprintf(err, errlen, "%s", *cerr ? cerr : curl_easy_strerror(rc));
		goto out;
	}
	if (status < 100 || status > 999) {
		snprintf(err, errlen, "no HTTP answer");
		goto out;
	}
	ret = (int)status;
out:
	curl_slist_free_all(hdr);
	if (c)
		curl_easy_cleanup(c);
	curl_url_cleanup(u);
	return ret;
}

/* Delivers one due callback. Returns 1 when one was handled, 0 when none was
 * due, -1 on a database error. */
static int deliver_one(struct callback_sender *s)
{
	char err[256];
	struct queue_sub sub;
	queue_sub_init(&sub);
	struct db *db = db_pool_get(s->pool, 5000);
	if (!db)
		return -1;
	int rc = queue_callback_next(db, LEASE_MS, &sub, err, sizeof err);
	if (rc <= 0) {
		if (rc < 0)
			log_warn("callback: %s", err);
		db_pool_put(s->pool, db);
		return rc;
	}
	/* the claim counted this attempt already */
	long attempt = sub.callback_attempts > 0 ? sub.callback_attempts : 1;
	db_pool_put(s->pool, db);

	const char *method = "POST";
	char *body = s->format ? s->format(&sub, &method) : NULL;
	if (!body) {
		method = "POST";
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "id", (double)sub.id);
		cJSON_AddStringToObject(o, "status", status_name(sub.status));
		cJSON_AddItemToObject(
		    o, "result", sub.result ? cJSON_Duplicate(sub.result, 1) : cJSON_CreateNull());
		body = cJSON_PrintUnformatted(o);
		cJSON_Delete(o);
	}
	int status = -1;
	struct request_error e;
	if (!sub.callback_url) {
		snprintf(err, sizeof err, "no callback_url");
	} else if (request_callback_url_check(sub.callback_url, s->allowlist, &e) < 0) {
		/* the allowlist changed since the submission was accepted */
		snprintf(err, sizeof err, "%s", e.message);
		attempt = s->attempts; /* do not retry */
	} else {
		status = callback_post(sub.callback_url, method, body, strlen(body), s->ca_file,
				       TIMEOUT_MS, err, sizeof err);
	}
	free(body);
	bool ok = status >= 200 && status < 300;
	if (!ok && status > 0)
		snprintf(err, sizeof err, "answered HTTP %d", status);
	long retry_ms = -1;
	if (!ok && attempt < s->attempts)
		retry_ms = 1000L << (attempt - 1 < 16 ? attempt - 1 : 16);
	pthread_mutex_lock(&s->lock);
	if (ok)
		s->delivered++;
	else
		s->failed++;
	pthread_mutex_unlock(&s->lock);
	if (ok)
		log_info("callback: submission %lld delivered to %s", (long long)sub.id,
			 sub.callback_url);
	else
		log_warn("callback: submission %lld to %s: %s%s", (long long)sub.id,
			 sub.callback_url ? sub.callback_url : "-", err,
			 retry_ms < 0 ? " (giving up)" : "");
	db = db_pool_get(s->pool, 5000);
	char dberr[256];
	if (!db || queue_callback_done(db, sub.id, ok, retry_ms, err, dberr, sizeof dberr) < 0)
		log_warn("callback: recording delivery of %lld: %s", (long long)sub.id,
			 db ? dberr : "no database connection");
	if (db)
		db_pool_put(s->pool, db);
	queue_sub_release(&sub);
	return 1;
}

static void *sender_main(void *arg)
{
	struct callback_sender *s = arg;
	for (;;) {
		pthread_mutex_lock(&s->lock);
		bool stop = s->stop;
		s->kicked = false;
		pthread_mutex_unlock(&s->lock);
		if (stop)
			break;
		int rc;
		int n = 0;
		while ((rc = deliver_one(s)) == 1 && ++n < 100 && !s->stop)
			;
		/* wake on a finished submission, else each second for due retries */
		struct timespec ts = clock_mono_after(1000);
		pthread_mutex_lock(&s->lock);
		while (!s->kicked && !s->stop && rc != 1)
			if (pthread_cond_timedwait(&s->cond, &s->lock, &ts) == ETIMEDOUT)
				break;
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

int callback_start(struct callback_sender **out, struct db_pool *pool,
		   const struct judge_config *cfg, callback_format_fn format, char *err,
		   size_t errlen)
{
	const char *ca = cfg->callback_ca_file ? cfg->callback_ca_file : "";
	/* a missing CA file would otherwise show only as failed deliveries */
	if (*ca) {
		FILE *f = fopen(ca, "r");
		if (!f) {
			snprintf(err, errlen, "callback_ca_file '%s': %s", ca, strerror(errno));
			return -1;
		}
		fclose(f);
	}
	/* one sender per process (judge serve): libcurl's global state lives with it */
	CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "libcurl: %s", curl_easy_strerror(rc));
		return -1;
	}
	struct callback_sender *s = xcalloc(1, sizeof *s);
	s->allowlist = xstrdup(cfg->callback_hosts ? cfg->callback_hosts : "");
	s->ca_file = xstrdup(ca);
	s->pool = pool;
	s->attempts = cfg->callback_attempts;
	s->format = format;
	pthread_mutex_init(&s->lock, NULL);
	clock_cond_init(&s->cond);
	if (pthread_create(&s->thread, NULL, sender_main, s)) {
		snprintf(err, errlen, "cannot start the callback thread");
		pthread_mutex_destroy(&s->lock);
		pthread_cond_destroy(&s->cond);
		free(s->allowlist);
		free(s->ca_file);
		free(s);
		curl_global_cleanup();
		return -1;
	}
	*out = s;
	return 0;
}

void callback_kick(struct callback_sender *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->kicked = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void callback_stop(struct callback_sender *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s->allowlist);
	free(s->ca_file);
	free(s);
	curl_global_cleanup();
}

long callback_delivered(const struct callback_sender *s)
{
	return s ? __atomic_load_n(&s->delivered, __ATOMIC_RELAXED) : 0;
}

long callback_failed(const struct callback_sender *s)
{
	return s ? __atomic_load_n(&s->failed, __ATOMIC_RELAXED) : 0;
}
