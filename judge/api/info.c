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

void info_problems(struct http_request *r, struct api *a)
{
	char **ids = NULL, err[256];
	int n = prob_list(a->cfg->problems_dir, &ids, err, sizeof err);
	if (n < 0) {
		log_warn("api: listing problems: %s", err);
		http_error(r, 503, "unavailable", "the problems cannot be listed now");
		return;
	}
	cJSON *arr = cJSON_CreateArray();
	for (int i = 0; i < n; i++) {
		struct problem p;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "id", ids[i]);
		if (prob_open(&p, a->cfg->problems_dir, ids[i], &a->langs, err, sizeof err) == 0) {
			cJSON_AddStringToObject(o, "name", p.name ? p.name : ids[i]);
			cJSON_AddBoolToObject(o, "supported", p.unsupported == NULL);
			prob_release(&p);
		} else {
			cJSON_AddStringToObject(o, "name", ids[i]);
			cJSON_AddBoolToObject(o, "supported", false);
		}
		cJSON_AddItemToArray(arr, o);
	}
	prob_ids_free(ids);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "problems", arr);
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

/* Adds the file at path (at most max bytes, made valid UTF-8) as name. */
static void add_file(cJSON *o, const char *name, const char *path, size_t max)
{
	struct strbuf sb = STRBUF_INIT, clean = STRBUF_INIT;
	int rc = path ? strbuf_read_file(&sb, path, max) : -ENOENT;
	if (rc == 0 || rc == -EFBIG) {
		utf8_sanitize(&clean, sb.buf, sb.len);
		cJSON_AddStringToObject(o, name, clean.buf);
	} else {
		cJSON_AddNullToObject(o, name);
	}
	strbuf_release(&sb);
	strbuf_release(&clean);
}

void info_problem(struct http_request *r, struct api *a, const char *id)
{
	struct problem p;
	char err[256];
	int rc = prob_open(&p, a->cfg->problems_dir, id, &a->langs, err, sizeof err);
	if (rc == -2) {
		http_error(r, 404, "unknown_problem", "unknown problem '%.64s'", id);
		return;
	}
	if (rc < 0) {
		log_warn("api: problem %s: %s", id, err);
		http_error(r, 503, "unavailable", "problem '%.64s' cannot be read now", id);
		return;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", p.id);
	cJSON_AddStringToObject(o, "name", p.name ? p.name : p.id);
	cJSON_AddStringToObject(o, "format_version", p.format_version ? p.format_version : "");
	cJSON_AddBoolToObject(o, "supported", p.unsupported == NULL);
	if (p.unsupported) /* why it cannot be graded */
		cJSON_AddStringToObject(o, "unsupported", p.unsupported);
	cJSON_AddBoolToObject(o, "interactive", p.interactive);
	cJSON_AddBoolToObject(o, "scoring", p.scoring);
	cJSON_AddBoolToObject(o, "multi_pass", p.multi_pass);
	cJSON_AddBoolToObject(o, "custom_validator", p.custom_validator);
	cJSON *lim = cJSON_AddObjectToObject(o, "limits");
	if (p.limits.time_limit_s > 0)
		cJSON_AddNumberToObject(lim, "time_ms", p.limits.time_limit_s * 1000);
	else
		cJSON_AddNullToObject(lim, "time_ms");
	cJSON_AddNumberToObject(lim, "memory_mb",
				p.limits.memory_mb ? p.limits.memory_mb : a->cfg->memory_limit_mb);
	add_file(o, "statement", p.statement_path, 256 * 1024);
	cJSON_AddNumberToObject(o, "tests", p.ntests);
	/* samples only: secret data never leaves the server */
	cJSON *samples = cJSON_AddArrayToObject(o, "samples");
	for (int i = 0; i < p.ntests; i++) {
		if (!p.tests[i].is_sample)
			continue;
		cJSON *s = cJSON_CreateObject();
		cJSON_AddStringToObject(s, "name", p.tests[i].name);
		add_file(s, "input", p.tests[i].in_path, 64 * 1024);
		add_file(s, "output", p.tests[i].ans_path, 64 * 1024);
		cJSON_AddItemToArray(samples, s);
	}
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
	prob_release(&p);
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
