/* info: languages, problems, health and /metrics: endpoints that only read. */
#include "judge/api/info.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "judge/api/api.h"
#include "judge/api/http.h"
#include "judge/api/metrics.h"
#include "judge/grading/lang.h"
#include "judge/grading/problem.h"
#include "judge/service/callback.h"
#include "judge/service/queue.h"
#include "judge/service/session/sessdb.h"
#include "judge/store/db.h"

/* Probes the languages' versions once; the caller holds a->vlock. */
static void probe_versions(struct api *a)
{
	if (a->versions)
		return;
	a->versions = xcalloc((size_t)a->langs.count + 1, sizeof *a->versions);
	for (int i = 0; i < a->langs.count; i++) {
		char v[128] = "";
		if (lang_probe_version(&a->langs.langs[i], v, sizeof v, 3000) < 0)
			v[0] = 0;
		a->versions[i] = xstrdup(v);
	}
}

const char *info_language_version(struct api *a, int i)
{
	pthread_mutex_lock(&a->vlock);
	probe_versions(a);
	pthread_mutex_unlock(&a->vlock);
	/* written once under the lock, never changed until api_stop */
	return i >= 0 && i < a->langs.count ? a->versions[i] : "";
}

void info_languages(struct http_request *r, struct api *a)
{
	pthread_mutex_lock(&a->vlock);
	probe_versions(a);
	cJSON *arr = cJSON_CreateArray();
	for (int i = 0; i < a->langs.count; i++) {
		const struct lang *l = &a->langs.langs[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", l->name);
		cJSON_AddStringToObject(o, "display_name",
					l->display_name ? l->display_name : l->name);
		const char *v = a->versions[i];
		if (*v)
			cJSON_AddStringToObject(o, "version", v);
		else
			cJSON_AddNullToObject(o, "version");
		cJSON_AddStringToObject(o, "source_file", l->source_file);
		cJSON_AddBoolToObject(o, "compiled", l->compile_argv != NULL);
		cJSON_AddItemToArray(arr, o);
	}
	pthread_mutex_unlock(&a->vlock);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "languages", arr);
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

void info_health(struct http_request *r, struct api *a)
{
	char err[256];
	struct db *db = api_db(a, 2000, err, sizeof err);
	bool ok = db && db_exec(db, "SELECT 1", 0, NULL) == 0;
	if (db)
		db_pool_put(a->pool, db);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "status", ok ? "ok" : "degraded");
	cJSON_AddStringToObject(o, "database", ok ? "ok" : "unreachable");
	cJSON_AddNumberToObject(o, "languages", a->langs.count);
	http_respond_json(r, ok ? 200 : 503, o);
	cJSON_Delete(o);
}

void info_metrics(struct http_request *r, struct api *a)
{
	struct metrics_gauges g = {0};
	char err[256];
	struct db *db = api_db(a, 2000, err, sizeof err);
	struct admin_key_wait *keys = NULL;
	g.db_up = db && queue_counts(db, g.counts, err, sizeof err) == 0 &&
		  sessdb_counts(db, g.sessions, err, sizeof err) == 0 &&
		  sessdb_totals(db, &g.sess, err, sizeof err) == 0 &&
		  admin_key_waits(db, &keys, &g.nkeys, err, sizeof err) == 0;
	g.keys = keys;
	if (db)
		db_pool_put(a->pool, db);
	g.in_flight = http_active(a->http);
	g.deadline_closes = http_deadline_closes(a->http);
	g.callbacks_delivered = callback_delivered(a->callbacks);
	g.callbacks_failed = callback_failed(a->callbacks);
	struct strbuf sb = STRBUF_INIT;
	metrics_render(a->metrics, &g, &sb);
	http_respond(r, 200, "text/plain; version=0.0.4", sb.buf, sb.len, NULL);
	strbuf_release(&sb);
	free(keys);
}
