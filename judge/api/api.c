/* api: the server's state, routing to the endpoints and admission (key, rate, in-flight). */
#include "judge/api/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/xalloc.h"
#include "judge/api/http.h"
#include "judge/api/judge0.h"
#include "judge/api/metrics.h"
#include "judge/api/problems.h"
#include "judge/api/router.h"
#include "judge/api/route.h"
#include "judge/api/sse.h"
#include "judge/service/auth.h"
#include "judge/service/callback.h"
#include "judge/service/queue.h"
#include "judge/service/session/sesshub.h"
#include "judge/service/waiter.h"
#include "judge/store/db.h"

/* While PostgreSQL restarts a pooled connection retries this long at most. */
#define DB_BUDGET_MS 3000

struct db *api_db(struct api *a, int wait_ms, char *err, size_t errlen)
{
	struct db *db = db_pool_get(a->pool, wait_ms);
	if (db)
		db_set_reconnect_ms(db, DB_BUDGET_MS);
	else
		snprintf(err, errlen, "no database connection free");
	return db;
}

/* The waiter hub's thread heard judge_done: a callback is due when the
 * submission has one (or after a reconnect, when one may have been missed). */
static void kick_callbacks(void *arg, const char *payload)
{
	if (!payload || strstr(payload, QUEUE_DONE_CALLBACK))
		callback_kick(((struct api *)arg)->callbacks);
}

/* The keys hub's thread heard that api_keys changed (or reconnected, and may
 * have missed it): the key list is read again at the next check. */
static void keys_changed(void *arg, const char *payload)
{
	(void)payload;
	auth_invalidate(((struct api *)arg)->auth);
}

static int64_t no_waiter(const char *payload)
{
	(void)payload;
	return 0;
}

int api_start(struct api **out, const struct judge_config *cfg, const char *db_url, int listen_fd,
	      char *err, size_t errlen)
{
	struct api *a = xcalloc(1, sizeof *a);
	a->cfg = cfg;
	a->auth_on = strcmp(cfg->auth, "off") != 0;
	pthread_mutex_init(&a->vlock, NULL);
	long threads = cfg->http_threads ? cfg->http_threads : sysconf(_SC_NPROCESSORS_ONLN);
	if (threads < 1)
		threads = 1;
	a->metrics = metrics_new(route_names(), R_COUNT);
	if (lang_load_dir(&a->langs, cfg->languages_dir, err, errlen) < 0)
		goto fail_close;
	/* every HTTP thread may hold one connection, plus auth, callbacks and spares */
	if (db_pool_new(&a->pool, db_url, (int)threads + 4, 10000, err, errlen) < 0)
		goto fail_close;
	a->auth = auth_new(a->pool, cfg->rate_limit_per_min, cfg->max_in_flight);
	if (callback_start(&a->callbacks, a->pool, cfg, judge0_callback_format, err, errlen) < 0)
		goto fail_close;
	if (waiter_hub_start(&a->waiters, db_url, kick_callbacks, a, err, errlen) < 0)
		goto fail_close;
	if (waiter_hub_start_on(&a->keys, db_url, AUTH_CHANNEL, no_waiter, keys_changed, a, err,
				errlen) < 0)
		goto fail_close;
	if (sesshub_start(&a->sessions, db_url, cfg->worker_timeout_s, err, errlen) < 0)
		goto fail_close;
	if (sse_hub_start(&a->sse, db_url, a->pool, err, errlen) < 0)
		goto fail_close;
	/* problems_dir's packages into the store before the first request */
	problems_load_dir(a);
	struct http_opts ho = {.listen_fd = listen_fd,
			       .threads = (int)threads,
			       .max_body = (size_t)cfg->max_body_kb * 1024,
			       .max_upload = (size_t)cfg->problem_max_mb << 20,
			       .header_timeout_ms = (int64_t)cfg->http_header_timeout_s * 1000,
			       .body_timeout_ms = (int64_t)cfg->http_body_timeout_s * 1000,
			       .max_conns_per_ip = (int)cfg->http_max_conns_per_ip,
			       .headers = router_headers,
			       .handler = router_request,
			       .done = router_done,
			       .arg = a};
	if (http_start(&a->http, &ho, err, errlen) < 0)
		goto fail_close;
	*out = a;
	return 0;
fail_close:
	if (!a->http)
		close(listen_fd);
	api_stop(a);
	return -1;
}

void api_stop(struct api *a)
{
	if (!a)
		return;
	http_stop(a->http);
	waiter_hub_stop(a->waiters);
	waiter_hub_stop(a->keys);
	sesshub_stop(a->sessions);
	sse_hub_stop(a->sse);
	callback_stop(a->callbacks);
	auth_free(a->auth);
	if (a->pool)
		db_pool_free(a->pool);
	lang_registry_release(&a->langs);
	for (int i = 0; a->versions && a->versions[i]; i++)
		free(a->versions[i]);
	free(a->versions);
	metrics_free(a->metrics);
	pthread_mutex_destroy(&a->vlock);
	free(a);
}
