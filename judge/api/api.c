/* api: routing, authentication, admission, the endpoints, parked waits and /metrics. */
#define _GNU_SOURCE /* memmem */
#include "judge/api/api.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "judge/service/auth.h"
#include "judge/service/callback.h"
#include "common/config.h"
#include "judge/store/db.h"
#include "judge/api/http.h"
#include "judge/grading/lang.h"
#include "common/log.h"
#include "judge/api/mcp.h"
#include "judge/grading/problem.h"
#include "judge/service/queue.h"
#include "judge/grading/request.h"
#include "common/strbuf.h"
#include "common/utf8.h"

/* Routes, also the "route" label of the metrics. */
enum route {
	R_EXECUTE,
	R_EXECUTE_EXPECTED,
	R_SUBMIT,
	R_BATCH,
	R_GET_SUB,
	R_LANGUAGES,
	R_PROBLEMS,
	R_PROBLEM,
	R_HEALTH,
	R_METRICS,
	R_MCP,
	R_OTHER,
	R_COUNT
};
static const char *const route_names[R_COUNT] = {"execute",	"execute_with_expected",
						 "submissions", "submissions_batch",
						 "submission",	"languages",
						 "problems",	"problem",
						 "health",	"metrics",
						 "mcp",		"other"};

static const double buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
#define NBUCKETS (sizeof buckets / sizeof buckets[0])

struct histogram {
	long counts[NBUCKETS + 1]; /* last = +Inf */
	double sum;
	long n;
};

/* status classes counted per route */
enum { SC_2XX, SC_4XX, SC_429, SC_5XX, SC_COUNT };
static const char *const sc_names[SC_COUNT] = {"2xx", "4xx", "429", "5xx"};

struct metrics {
	pthread_mutex_t lock;
	long requests[R_COUNT][SC_COUNT];
	struct histogram http[R_COUNT];
	struct histogram
	    exec_latency[2]; /* enqueue to result of execute* (native/gvisor unknown) */
	long auth_failures, rate_limited;
};

/* A parked wait for submission id. */
struct waiter {
	struct http_request *r;
	int64_t id;
	double deadline;
	bool parked;   /* suspended; the notifier must resume it */
	bool notified; /* a notification came before it parked */
	struct waiter *next;
};

struct api {
	const struct judge_config *cfg;
	struct lang_registry langs;
	struct db_pool *pool;
	char *db_url;
	struct auth *auth;
	bool auth_on;
	struct http_server *http;
	struct callback_sender *callbacks;
	struct metrics m;
	/* waiters and the notifier thread */
	pthread_mutex_t wlock;
	struct waiter *waiters;
	pthread_t notifier;
	bool notifier_started;
	volatile int stop;
	long notifier_reconnects;
	/* languages' versions, probed once on first use */
	pthread_mutex_t vlock;
	char **versions;
};

/* Per-request state of the endpoints, kept across suspend/resume. */
struct req_ctx {
	struct api *api;
	int64_t id;
	double deadline;
	double enqueued_s;
	bool sync; /* execute*: answer with the result JSON */
	struct waiter w;
	bool in_table;
};

/* ---- metrics ---- */

static void hist_add(struct histogram *h, double v)
{
	size_t i = 0;
	while (i < NBUCKETS && v > buckets[i])
		i++;
	h->counts[i]++;
	h->sum += v;
	h->n++;
}

static void hist_print(struct strbuf *sb, const char *name, const char *labels,
		       const struct histogram *h)
{
	long cum = 0;
	for (size_t i = 0; i < NBUCKETS; i++) {
		cum += h->counts[i];
		strbuf_addf(sb, "%s_bucket{%s%sle=\"%g\"} %ld\n", name, labels, *labels ? "," : "",
			    buckets[i], cum);
	}
	cum += h->counts[NBUCKETS];
	strbuf_addf(sb, "%s_bucket{%s%sle=\"+Inf\"} %ld\n", name, labels, *labels ? "," : "", cum);
	strbuf_addf(sb, "%s_sum{%s} %.6f\n%s_count{%s} %ld\n", name, labels, h->sum, name, labels,
		    h->n);
}

/* ---- waiting ---- */

static void waiter_remove_locked(struct api *a, struct waiter *w)
{
	for (struct waiter **p = &a->waiters; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			return;
		}
}

static void req_ctx_free(void *p)
{
	struct req_ctx *c = p;
	if (!c)
		return;
	if (c->in_table) {
		pthread_mutex_lock(&c->api->wlock);
		waiter_remove_locked(c->api, &c->w);
		pthread_mutex_unlock(&c->api->wlock);
	}
	free(c);
}

/* Wakes waiters: those of id (id > 0), those past their deadline, or all (id < 0). */
static void wake(struct api *a, int64_t id, double now)
{
	pthread_mutex_lock(&a->wlock);
	struct waiter **p = &a->waiters;
	while (*p) {
		struct waiter *w = *p;
		bool hit = id < 0 || w->id == id || (now > 0 && now >= w->deadline);
		if (!hit) {
			p = &w->next;
			continue;
		}
		if (w->parked) {
			/* out of the table; the handler re-registers if it must wait on */
			*p = w->next;
			w->parked = false;
			((struct req_ctx *)w->r->ctx)->in_table = false;
			http_resume(w->r);
		} else {
			w->notified = true;
			p = &w->next;
		}
	}
	pthread_mutex_unlock(&a->wlock);
}

static double next_deadline(struct api *a)
{
	double d = 0;
	pthread_mutex_lock(&a->wlock);
	for (struct waiter *w = a->waiters; w; w = w->next)
		if (!d || w->deadline < d)
			d = w->deadline;
	pthread_mutex_unlock(&a->wlock);
	return d;
}

static void *notifier_main(void *arg)
{
	struct api *a = arg;
	struct db *db = NULL;
	char err[256];
	while (!a->stop) {
		if (!db) {
			if (db_open(&db, a->db_url, 1000, err, sizeof err) < 0) {
				log_warn("api: notifier cannot connect: %s", err);
				db = NULL;
				wake(a, 0, http_now());
				sleep(1);
				continue;
			}
			db_set_reconnect_ms(db, 1000);
			if (db_listen(db, QUEUE_CHANNEL_DONE) < 0) {
				log_warn("api: cannot listen: %s", db_error(db));
				db_close(db);
				db = NULL;
				sleep(1);
				continue;
			}
			/* anything may have finished while we were not listening */
			wake(a, -1, 0);
		}
		double now = http_now(), d = next_deadline(a);
		int timeout = 500; /* also how fast stop is noticed */
		if (d && (d - now) * 1000 < timeout)
			timeout = d > now ? (int)((d - now) * 1000) + 1 : 0;
		struct db_notify n;
		int rc = db_wait_notify(db, timeout, &n);
		if (rc == 1) {
			int64_t id = strtoll(n.payload, NULL, 10);
			if (id > 0)
				wake(a, id, 0);
			callback_kick(a->callbacks);
		} else if (rc == 2) {
			__atomic_add_fetch(&a->notifier_reconnects, 1, __ATOMIC_RELAXED);
			wake(a, -1, 0);
			callback_kick(a->callbacks);
		} else if (rc < 0) {
			log_warn("api: notifier lost the database: %s", db_error(db));
			db_close(db);
			db = NULL;
			wake(a, -1, 0);
			sleep(1);
			continue;
		}
		wake(a, 0, http_now());
	}
	db_close(db);
	return NULL;
}

/* ---- responses ---- */

/* A pooled connection that gives up reconnecting after DB_BUDGET_MS: while
 * PostgreSQL restarts, a request answers 503 + Retry-After soon rather than
 * holding one of the few HTTP threads for the default 30 s. */
#define DB_BUDGET_MS 3000
static struct db *get_db(struct api *a, int wait_ms)
{
	struct db *db = db_pool_get(a->pool, wait_ms);
	if (db)
		db_set_reconnect_ms(db, DB_BUDGET_MS);
	return db;
}

static int64_t parse_id(const char *s)
{
	if (!*s || strlen(s) > 18)
		return -1;
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return -1;
	return strtoll(s, NULL, 10);
}

static cJSON *sub_json(const struct queue_sub *s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)s->id);
	cJSON_AddStringToObject(o, "status", sub_status_name(s->status));
	const cJSON *lang = cJSON_GetObjectItemCaseSensitive(s->request, "language");
	if (cJSON_IsString(lang))
		cJSON_AddStringToObject(o, "language", lang->valuestring);
	const cJSON *prob = cJSON_GetObjectItemCaseSensitive(s->request, "problem");
	if (cJSON_IsString(prob))
		cJSON_AddStringToObject(o, "problem", prob->valuestring);
	cJSON_AddNumberToObject(o, "created_ms", (double)s->created_ms);
	if (s->started_ms)
		cJSON_AddNumberToObject(o, "started_ms", (double)s->started_ms);
	else
		cJSON_AddNullToObject(o, "started_ms");
	if (s->finished_ms)
		cJSON_AddNumberToObject(o, "finished_ms", (double)s->finished_ms);
	else
		cJSON_AddNullToObject(o, "finished_ms");
	cJSON_AddNumberToObject(o, "attempts", s->attempts);
	if (s->callback_url) {
		/* where its delivery stands: the client may be waiting for it */
		cJSON *cb = cJSON_AddObjectToObject(o, "callback");
		cJSON_AddStringToObject(cb, "url", s->callback_url);
		cJSON_AddNumberToObject(cb, "attempts", s->callback_attempts);
		cJSON_AddStringToObject(cb, "state",
					s->callback_done_ms   ? "delivered"
					: s->callback_pending ? "pending"
					: s->finished_ms      ? "failed"
							      : "waiting");
		if (s->callback_error && !s->callback_done_ms)
			cJSON_AddStringToObject(cb, "error", s->callback_error);
		else
			cJSON_AddNullToObject(cb, "error");
	}
	if (s->result)
		cJSON_AddItemToObject(o, "result", cJSON_Duplicate(s->result, 1));
	else
		cJSON_AddNullToObject(o, "result");
	return o;
}

static void respond_db_error(struct http_request *r, const char *what, const char *err)
{
	log_warn("api: %s: %s", what, err);
	const char *hdr[] = {"Retry-After", "1", NULL};
	http_error_h(r, 503, hdr, "unavailable", "the database is not available, retry later");
}

/* Reads submission c->id and answers when it is final or the wait is over;
 * else parks the request. */
static void continue_wait(struct http_request *r, struct req_ctx *c)
{
	struct api *a = c->api;
	char err[256];
	for (;;) {
		/* register first, read second: a notification in between is kept */
		pthread_mutex_lock(&a->wlock);
		if (!c->in_table) {
			c->w = (struct waiter){.r = r, .id = c->id, .deadline = c->deadline};
			c->w.next = a->waiters;
			a->waiters = &c->w;
			c->in_table = true;
		}
		c->w.notified = false;
		pthread_mutex_unlock(&a->wlock);

		struct queue_sub s;
		queue_sub_init(&s);
		struct db *db = get_db(a, 5000);
		int rc =
		    db ? queue_get(db, c->id, a->auth_on ? r->key_id : 0, &s, err, sizeof err) : -1;
		if (!db)
			snprintf(err, sizeof err, "no database connection free");
		if (db)
			db_pool_put(a->pool, db);
		bool final = rc == 1 && sub_status_is_final(s.status);
		if (rc != 1 || final || http_now() >= c->deadline) {
			pthread_mutex_lock(&a->wlock);
			if (c->in_table)
				waiter_remove_locked(a, &c->w);
			c->in_table = false;
			pthread_mutex_unlock(&a->wlock);
		}
		if (rc < 0) {
			respond_db_error(r, "reading a submission", err);
		} else if (rc == 0) {
			http_error(r, 404, "not_found", "no submission %" PRId64, c->id);
		} else if (final && c->sync) {
			cJSON *res = s.result ? cJSON_Duplicate(s.result, 1) : cJSON_CreateObject();
			cJSON_AddNumberToObject(res, "id", (double)s.id);
			if (!cJSON_GetObjectItemCaseSensitive(res, "status"))
				cJSON_AddStringToObject(res, "status", sub_status_name(s.status));
			http_respond_json(r, 200, res);
			cJSON_Delete(res);
			pthread_mutex_lock(&a->m.lock);
			hist_add(&a->m.exec_latency[0], http_now() - c->enqueued_s);
			pthread_mutex_unlock(&a->m.lock);
		} else if (final || http_now() >= c->deadline) {
			cJSON *o = sub_json(&s);
			http_respond_json(r, final || !c->sync ? 200 : 202, o);
			cJSON_Delete(o);
		} else {
			pthread_mutex_lock(&a->wlock);
			bool again = c->w.notified;
			if (!again) {
				c->w.parked = true;
				http_suspend(r);
			}
			pthread_mutex_unlock(&a->wlock);
			queue_sub_release(&s);
			if (again)
				continue;
			return;
		}
		queue_sub_release(&s);
		return;
	}
}

static struct req_ctx *new_ctx(struct http_request *r, struct api *a)
{
	struct req_ctx *c = calloc(1, sizeof *c);
	if (!c) {
		http_error(r, 503, "out_of_memory", "out of memory");
		return NULL;
	}
	c->api = a;
	r->ctx = c;
	r->ctx_free = req_ctx_free;
	return c;
}

static void reply_req_error(struct http_request *r, const struct req_error *e)
{
	http_error(r, e->http_status, e->code, "%s", e->message);
}

/* Optional Idempotency-Key header (or the body's idempotency_key). */
static int idempotency_key(struct http_request *r, const cJSON *body, const char **out)
{
	const char *k = http_header(r, "Idempotency-Key");
	const cJSON *bk = body ? cJSON_GetObjectItemCaseSensitive(body, "idempotency_key") : NULL;
	if (!k && cJSON_IsString(bk))
		k = bk->valuestring;
	else if (!k && bk && !cJSON_IsNull(bk)) {
		http_error(r, 422, "invalid_field", "idempotency_key must be a string");
		return -1;
	}
	if (k && (!*k || strlen(k) > 200 || !utf8_valid_text(k, strlen(k)))) {
		http_error(r, 422, "invalid_field",
			   "the idempotency key must be 1 to 200 bytes of UTF-8 text");
		return -1;
	}
	*out = k;
	return 0;
}

/* Whether submission id (found by its idempotency key) holds the request p:
 * 1 yes (with its *status), 0 no, -1 on a database error (err). */
static int same_request(struct api *a, struct http_request *r, int64_t id,
			const struct req_parsed *p, enum sub_status *status, char *err,
			size_t errlen)
{
	struct queue_sub s;
	queue_sub_init(&s);
	struct db *db = get_db(a, 5000);
	int rc = db ? queue_get(db, id, a->auth_on ? r->key_id : 0, &s, err, errlen) : -1;
	if (!db)
		snprintf(err, errlen, "no database connection free");
	else
		db_pool_put(a->pool, db);
	*status = s.status;
	if (rc == 1)
		rc = cJSON_Compare(s.request, p->request, true) &&
		     !strcmp(s.callback_url ? s.callback_url : "",
			     p->callback_url ? p->callback_url : "");
	queue_sub_release(&s);
	return rc;
}

static bool is_json(struct http_request *r)
{
	const char *ct = http_header(r, "Content-Type");
	if (!ct)
		return false;
	size_t n = strcspn(ct, "; \t");
	return n == 16 && !strncasecmp(ct, "application/json", 16);
}

/* Validates the body as a request of kind and queues it. sync: answer with
 * the result once it is final (interactive priority, as the execute
 * endpoints); else 201 {"id", "status"} at once (bulk, as /v1/submissions). */
static void handle_enqueue(struct http_request *r, struct api *a, enum req_kind kind, bool sync)
{
	struct req_parsed p = {0};
	struct req_error e;
	char err[256];
	if (req_parse(a->cfg, &a->langs, kind, r->body.buf, r->body.len, &p, &e) < 0) {
		reply_req_error(r, &e);
		return;
	}
	/* the body's idempotency_key is not part of the normalized request */
	cJSON *raw = memmem(r->body.buf, r->body.len, "\"idempotency_key\"", 17)
			 ? cJSON_ParseWithLength(r->body.buf, r->body.len)
			 : NULL;
	const char *ikey = NULL;
	if (idempotency_key(r, raw, &ikey) < 0)
		goto out;
	struct queue_new qn = {
	    .request = p.request,
	    .priority = sync ? QUEUE_PRIO_INTERACTIVE : QUEUE_PRIO_BULK,
	    .idempotency_key = ikey,
	    .api_key_id = a->auth_on ? r->key_id : 0,
	    .callback_url = p.callback_url,
	};
	int64_t id = 0;
	bool created = true;
	struct db *db = get_db(a, 5000);
	int rc = db ? queue_enqueue(db, &qn, &id, &created, err, sizeof err) : -1;
	if (!db)
		snprintf(err, sizeof err, "no database connection free");
	else
		db_pool_put(a->pool, db);
	if (rc < 0) {
		respond_db_error(r, "enqueue", err);
		goto out;
	}
	/* a reused key must not quietly stand for a different program */
	enum sub_status status = SUB_QUEUED;
	if (!created && (rc = same_request(a, r, id, &p, &status, err, sizeof err)) != 1) {
		if (rc < 0)
			respond_db_error(r, "idempotency check", err);
		else
			http_error(r, 422, "invalid_field",
				   "the idempotency key was used before for a different request");
		goto out;
	}
	log_debug("api: submission %" PRId64 " %s (%s)", id, created ? "queued" : "repeated",
		  sync ? "sync" : "async");
	if (!sync) {
		char loc[64];
		snprintf(loc, sizeof loc, "/v1/submissions/%" PRId64, id);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "id", (double)id);
		/* a repeat gets the submission's state (there is no "exists" state) */
		cJSON_AddStringToObject(o, "status", sub_status_name(status));
		char *text = cJSON_PrintUnformatted(o);
		const char *hdr[] = {"Location", loc, NULL};
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "%s\n", text ? text : "{}");
		http_respond(r, created ? 201 : 200, "application/json", sb.buf, sb.len, hdr);
		strbuf_release(&sb);
		free(text);
		cJSON_Delete(o);
		goto out;
	}
	struct req_ctx *c = new_ctx(r, a);
	if (!c)
		goto out;
	c->id = id;
	c->sync = true;
	c->enqueued_s = http_now();
	c->deadline = c->enqueued_s + (double)a->cfg->max_wait_s;
	continue_wait(r, c);
out:
	cJSON_Delete(raw);
	req_parsed_release(&p);
}

static void handle_batch(struct http_request *r, struct api *a)
{
	struct req_error e;
	char err[256];
	cJSON *in;
	/* one key for several submissions cannot mean anything: each has its own */
	if (http_header(r, "Idempotency-Key")) {
		http_error(r, 422, "invalid_field",
			   "a batch takes an idempotency_key in each submission, not the "
			   "Idempotency-Key header");
		return;
	}
	if (req_parse_json(a->cfg, r->body.buf, r->body.len, &in, &e) < 0)
		return reply_req_error(r, &e);
	const cJSON *subs = cJSON_GetObjectItemCaseSensitive(in, "submissions");
	if (cJSON_IsArray(in))
		subs = in;
	if (!cJSON_IsArray(subs)) {
		http_error(r, 422, "missing_field",
			   "submissions (an array of requests) is required");
		cJSON_Delete(in);
		return;
	}
	if (cJSON_IsObject(in) && cJSON_GetArraySize(in) != 1) {
		http_error(r, 422, "invalid_field", "a batch has one field, submissions");
		cJSON_Delete(in);
		return;
	}
	int n = cJSON_GetArraySize(subs);
	if (n == 0 || n > a->cfg->max_batch) {
		http_error(r, n ? 413 : 422, n ? "too_large" : "invalid_field",
			   "a batch holds 1 to %ld submissions, not %d", a->cfg->max_batch, n);
		cJSON_Delete(in);
		return;
	}
	struct req_parsed *ps = calloc((size_t)n, sizeof *ps);
	struct queue_new *qn = calloc((size_t)n, sizeof *qn);
	int64_t *ids = calloc((size_t)n, sizeof *ids);
	bool *created = calloc((size_t)n, sizeof *created);
	int i = 0;
	const cJSON *it;
	if (!ps || !qn || !ids || !created) {
		http_error(r, 503, "out_of_memory", "out of memory");
		goto out;
	}
	cJSON_ArrayForEach(it, subs)
	{
		if (req_validate(a->cfg, &a->langs, REQ_SUBMISSION, it, &ps[i], &e) < 0) {
			http_error(r, e.http_status, e.code, "submissions[%d]: %s", i, e.message);
			goto out;
		}
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, "idempotency_key");
		if (k && !cJSON_IsNull(k) &&
		    (!cJSON_IsString(k) || !*k->valuestring || strlen(k->valuestring) > 200)) {
			http_error(r, 422, "invalid_field",
				   "submissions[%d]: idempotency_key must be a string of 1 to 200 "
				   "bytes",
				   i);
			goto out;
		}
		/* twice in one batch: the second would silently become the first */
		for (int j = 0; cJSON_IsString(k) && j < i; j++)
			if (qn[j].idempotency_key &&
			    !strcmp(qn[j].idempotency_key, k->valuestring)) {
				http_error(
				    r, 422, "invalid_field",
				    "submissions[%d]: idempotency_key '%.40s' is also the key "
				    "of submissions[%d]",
				    i, k->valuestring, j);
				goto out;
			}
		qn[i] =
		    (struct queue_new){.request = ps[i].request,
				       .priority = QUEUE_PRIO_BULK,
				       .idempotency_key = cJSON_IsString(k) ? k->valuestring : NULL,
				       .api_key_id = a->auth_on ? r->key_id : 0,
				       .callback_url = ps[i].callback_url};
		i++;
	}
	struct db *db = get_db(a, 5000);
	int rc = db ? queue_enqueue_batch(db, qn, (size_t)n, ids, created, err, sizeof err) : -1;
	if (!db)
		snprintf(err, sizeof err, "no database connection free");
	else
		db_pool_put(a->pool, db);
	if (rc < 0) {
		respond_db_error(r, "enqueue batch", err);
		goto out;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(o, "ids");
	for (int j = 0; j < n; j++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)ids[j]));
	http_respond_json(r, 201, o);
	cJSON_Delete(o);
out:
	for (int j = 0; ps && j < n; j++)
		req_parsed_release(&ps[j]);
	free(ps);
	free(qn);
	free(ids);
	free(created);
	cJSON_Delete(in);
}

/* wait: the ?wait= value (seconds, digits only), or NULL for none. */
static void handle_get_sub(struct http_request *r, struct api *a, const char *id_s, const char *w)
{
	int64_t id = parse_id(id_s);
	if (id <= 0) {
		http_error(r, 404, "not_found", "no submission '%.40s'", id_s);
		return;
	}
	long wait = 0;
	if (w) {
		char *end;
		errno = 0;
		wait = strtol(w, &end, 10);
		/* digits only: strtol would also take " +5" */
		if (errno || end == w || *end || strspn(w, "0123456789") != strlen(w)) {
			http_error(r, 400, "invalid_field",
				   "wait must be a whole number of seconds");
			return;
		}
		if (wait > a->cfg->max_wait_s)
			wait = a->cfg->max_wait_s;
	}
	struct req_ctx *c = new_ctx(r, a);
	if (!c)
		return;
	c->id = id;
	c->deadline = http_now() + (double)wait;
	continue_wait(r, c);
}

static void handle_languages(struct http_request *r, struct api *a)
{
	pthread_mutex_lock(&a->vlock);
	if (!a->versions) {
		a->versions = calloc((size_t)a->langs.count + 1, sizeof *a->versions);
		for (int i = 0; a->versions && i < a->langs.count; i++) {
			char v[128] = "";
			if (lang_probe_version(&a->langs.langs[i], v, sizeof v, 3000) < 0)
				v[0] = 0;
			a->versions[i] = strdup(v);
		}
	}
	cJSON *arr = cJSON_CreateArray();
	for (int i = 0; i < a->langs.count; i++) {
		const struct lang *l = &a->langs.langs[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", l->name);
		cJSON_AddStringToObject(o, "display_name",
					l->display_name ? l->display_name : l->name);
		const char *v = a->versions && a->versions[i] ? a->versions[i] : "";
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

static void handle_problems(struct http_request *r, struct api *a)
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
		if (prob_open(&p, a->cfg->problems_dir, ids[i], err, sizeof err) == 0) {
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

static void handle_problem(struct http_request *r, struct api *a, const char *id)
{
	struct problem p;
	char err[256];
	int rc = prob_open(&p, a->cfg->problems_dir, id, err, sizeof err);
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
	cJSON_AddBoolToObject(o, "interactive", p.interactive);
	cJSON_AddBoolToObject(o, "scoring", p.scoring);
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

static void handle_health(struct http_request *r, struct api *a)
{
	struct db *db = get_db(a, 2000);
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

static void handle_metrics(struct http_request *r, struct api *a)
{
	struct strbuf sb = STRBUF_INIT;
	long counts[SUB_STATUS_COUNT] = {0};
	char err[256];
	struct db *db = get_db(a, 2000);
	int rc = db ? queue_counts(db, counts, err, sizeof err) : -1;
	if (db)
		db_pool_put(a->pool, db);
	strbuf_addf(&sb,
		    "# HELP judge_up 1 when the database answers\n# TYPE judge_up gauge\n"
		    "judge_up %d\n",
		    rc == 0);
	if (rc == 0) {
		strbuf_addstr(&sb, "# HELP judge_submissions Submissions by status.\n"
				   "# TYPE judge_submissions gauge\n");
		for (int s = 0; s < SUB_STATUS_COUNT; s++)
			strbuf_addf(&sb, "judge_submissions{status=\"%s\"} %ld\n",
				    sub_status_name((enum sub_status)s), counts[s]);
		strbuf_addf(&sb,
			    "# HELP judge_queue_depth Submissions waiting for a worker.\n"
			    "# TYPE judge_queue_depth gauge\njudge_queue_depth %ld\n"
			    "# HELP judge_running Submissions being graded.\n"
			    "# TYPE judge_running gauge\njudge_running %ld\n"
			    "# HELP judge_sandbox_failures Submissions that ended internal_error "
			    "(a fault of the judge or its sandbox, never of the program).\n"
			    "# TYPE judge_sandbox_failures gauge\njudge_sandbox_failures %ld\n",
			    counts[SUB_QUEUED], counts[SUB_RUNNING], counts[SUB_INTERNAL_ERROR]);
	}
	pthread_mutex_lock(&a->m.lock);
	strbuf_addstr(&sb, "# HELP judge_http_requests_total HTTP requests by route and status "
			   "class.\n# TYPE judge_http_requests_total counter\n");
	for (int i = 0; i < R_COUNT; i++)
		for (int k = 0; k < SC_COUNT; k++)
			strbuf_addf(&sb,
				    "judge_http_requests_total{route=\"%s\",code=\"%s\"} %ld\n",
				    route_names[i], sc_names[k], a->m.requests[i][k]);
	strbuf_addstr(&sb, "# HELP judge_http_request_duration_seconds Time to answer, by "
			   "route.\n# TYPE judge_http_request_duration_seconds histogram\n");
	for (int i = 0; i < R_COUNT; i++) {
		char labels[64];
		snprintf(labels, sizeof labels, "route=\"%s\"", route_names[i]);
		hist_print(&sb, "judge_http_request_duration_seconds", labels, &a->m.http[i]);
	}
	strbuf_addstr(&sb, "# HELP judge_execute_latency_seconds Enqueue to final result of "
			   "synchronous executes.\n# TYPE judge_execute_latency_seconds "
			   "histogram\n");
	hist_print(&sb, "judge_execute_latency_seconds", "", &a->m.exec_latency[0]);
	strbuf_addf(&sb,
		    "# HELP judge_auth_failures_total Requests refused 401.\n"
		    "# TYPE judge_auth_failures_total counter\njudge_auth_failures_total %ld\n"
		    "# HELP judge_rate_limited_total Requests refused 429.\n"
		    "# TYPE judge_rate_limited_total counter\njudge_rate_limited_total %ld\n",
		    a->m.auth_failures, a->m.rate_limited);
	pthread_mutex_unlock(&a->m.lock);
	strbuf_addf(
	    &sb,
	    "# HELP judge_http_in_flight Requests being served or waiting.\n"
	    "# TYPE judge_http_in_flight gauge\njudge_http_in_flight %ld\n"
	    "# HELP judge_callbacks_delivered_total Callbacks answered 2xx.\n"
	    "# TYPE judge_callbacks_delivered_total counter\n"
	    "judge_callbacks_delivered_total %ld\n"
	    "# HELP judge_callbacks_failed_total Callback attempts that failed.\n"
	    "# TYPE judge_callbacks_failed_total counter\njudge_callbacks_failed_total %ld\n",
	    http_active(a->http), callback_delivered(a->callbacks), callback_failed(a->callbacks));
	http_respond(r, 200, "text/plain; version=0.0.4", sb.buf, sb.len, NULL);
	strbuf_release(&sb);
}

/* ---- MCP tools: each runs its endpoint's handler ---- */

static void mcp_dispatch(struct http_request *r, const struct mcp_call *call, void *arg)
{
	struct api *a = arg;
	switch (call->tool) {
	case MCP_EXECUTE:
		return handle_enqueue(r, a, REQ_EXECUTE, true);
	case MCP_EXECUTE_EXPECTED:
		return handle_enqueue(r, a, REQ_EXECUTE_EXPECTED, true);
	case MCP_SOLVE_PROBLEM:
		/* a submission that waits for its verdict like an execute */
		return handle_enqueue(r, a, REQ_SUBMISSION, true);
	case MCP_GET_SUBMISSION:
		return handle_get_sub(r, a, call->id, call->wait);
	case MCP_LIST_LANGUAGES:
		return handle_languages(r, a);
	case MCP_LIST_PROBLEMS:
		return handle_problems(r, a);
	case MCP_GET_PROBLEM:
		return handle_problem(r, a, call->id);
	default:
		http_error(r, 404, "not_found", "no such tool");
	}
}

/* ---- routing ---- */

static void method_not_allowed(struct http_request *r, const char *allow)
{
	const char *hdr[] = {"Allow", allow, NULL};
	http_error_h(r, 405, hdr, "method_not_allowed", "%s is not allowed here (allowed: %s)",
		     r->method, allow);
}

/* True when s is one non-empty path segment (no '/'). */
__attribute__((noinline)) static bool one_segment(const char *s)
{
	size_t n = strcspn(s, "/");
	return n > 0 && s[n] == 0;
}

/* Classifies r->url; *arg points into the url for /{id} routes. */
static enum route route_of(const char *url, const char **arg)
{
	*arg = NULL;
	if (!strcmp(url, "/v1/execute"))
		return R_EXECUTE;
	if (!strcmp(url, "/v1/execute_with_expected"))
		return R_EXECUTE_EXPECTED;
	if (!strcmp(url, "/v1/submissions"))
		return R_SUBMIT;
	if (!strcmp(url, "/v1/submissions/batch"))
		return R_BATCH;
	size_t len = strlen(url);
	if (len > 16 && !memcmp(url, "/v1/submissions/", 16) && one_segment(url + 16)) {
		*arg = url + 16;
		return R_GET_SUB;
	}
	if (!strcmp(url, "/v1/languages"))
		return R_LANGUAGES;
	if (!strcmp(url, "/v1/problems"))
		return R_PROBLEMS;
	if (len > 13 && !memcmp(url, "/v1/problems/", 13) && one_segment(url + 13)) {
		*arg = url + 13;
		return R_PROBLEM;
	}
	if (!strcmp(url, "/health"))
		return R_HEALTH;
	if (!strcmp(url, "/metrics"))
		return R_METRICS;
	if (!strcmp(url, "/mcp"))
		return R_MCP;
	return R_OTHER;
}

/* True when origin (an Origin header, or NULL when there is none) is a page
 * of this machine: http(s)://localhost, 127.0.0.1 or [::1], any port. */
static bool local_origin(const char *origin)
{
	if (!origin)
		return true;
	const char *h = strstr(origin, "://");
	if (!h)
		return false;
	h += 3;
	static const char *const hosts[] = {"localhost", "127.0.0.1", "[::1]"};
	for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++) {
		size_t n = strlen(hosts[i]);
		if (!strncasecmp(h, hosts[i], n) && (!h[n] || h[n] == ':' || h[n] == '/'))
			return true;
	}
	return false;
}

/* What the headers alone decide: route, method, API key, admission and
 * content type. It runs before the body is read, so the body of a request
 * refused here is never buffered (a client without a key cannot make the
 * server hold max_body bytes per connection). */
static void on_headers(struct http_request *r, void *arg)
{
	struct api *a = arg;
	const char *id = NULL;
	enum route rt = route_of(r->url, &id);
	r->route = rt;
	bool get = !strcmp(r->method, "GET") || !strcmp(r->method, "HEAD");
	bool post = !strcmp(r->method, "POST");
	switch (rt) {
	case R_OTHER:
		http_error(r, 404, "not_found", "no such endpoint: %.100s", r->url);
		return;
	case R_EXECUTE:
	case R_EXECUTE_EXPECTED:
	case R_SUBMIT:
	case R_BATCH:
	case R_MCP: /* no SSE stream to GET, no session to DELETE */
		if (!post)
			return method_not_allowed(r, "POST");
		break;
	default:
		if (!get)
			return method_not_allowed(r, "GET, HEAD");
	}
	if (rt == R_HEALTH || rt == R_METRICS)
		return;
	/* MCP's transport asks servers to check Origin against DNS rebinding: a
	 * web page must not drive a keyless (loopback) judge through a browser.
	 * With keys on, a page without the key gets 401 anyway. */
	if (rt == R_MCP && !a->auth_on && !local_origin(http_header(r, "Origin"))) {
		http_error(r, 403, "forbidden_origin",
			   "requests from a web page of another origin are refused");
		return;
	}

	r->key_id = 0;
	if (a->auth_on) {
		enum auth_result ar =
		    auth_check(a->auth, http_header(r, "Authorization"), &r->key_id);
		if (ar != AUTH_OK) {
			pthread_mutex_lock(&a->m.lock);
			a->m.auth_failures++;
			pthread_mutex_unlock(&a->m.lock);
			if (ar == AUTH_UNAVAILABLE)
				return respond_db_error(r, "auth", "cannot read the api keys");
			const char *hdr[] = {"WWW-Authenticate", "Bearer", NULL};
			http_error_h(r, 401, hdr, "unauthorized",
				     ar == AUTH_MISSING ? "an API key is required "
							  "(Authorization: Bearer KEY)"
							: "the API key is not valid");
			return;
		}
	}
	int retry = 1;
	if (auth_admit(a->auth, r->key_id, &retry) < 0) {
		pthread_mutex_lock(&a->m.lock);
		a->m.rate_limited++;
		pthread_mutex_unlock(&a->m.lock);
		char ra[16];
		snprintf(ra, sizeof ra, "%d", retry);
		const char *hdr[] = {"Retry-After", ra, NULL};
		http_error_h(r, 429, hdr, "rate_limited",
			     "too many requests for this API key; retry in %d s", retry);
		return;
	}
	r->admitted = true;
	if (post && !is_json(r)) {
		http_error(r, 415, "unsupported_media_type",
			   "the body must be JSON (Content-Type: application/json)");
		return;
	}
}

/* The body is in and on_headers let the request through. */
static void on_request(struct http_request *r, void *arg)
{
	struct api *a = arg;
	const char *id = NULL;
	enum route rt = route_of(r->url, &id);
	/* a parked request that was resumed */
	if (r->ctx) {
		struct req_ctx *c = r->ctx;
		/* shutting down: answer with what there is (202 + id for a sync execute) */
		if (http_stopping(r))
			c->deadline = 0;
		continue_wait(r, c);
		return;
	}
	switch (rt) {
	case R_HEALTH:
		return handle_health(r, a);
	case R_METRICS:
		return handle_metrics(r, a);
	case R_EXECUTE:
		return handle_enqueue(r, a, REQ_EXECUTE, true);
	case R_EXECUTE_EXPECTED:
		return handle_enqueue(r, a, REQ_EXECUTE_EXPECTED, true);
	case R_SUBMIT:
		return handle_enqueue(r, a, REQ_SUBMISSION, false);
	case R_BATCH:
		return handle_batch(r, a);
	case R_GET_SUB:
		return handle_get_sub(r, a, id, http_query(r, "wait"));
	case R_MCP:
		return mcp_handle(r, a->cfg, mcp_dispatch, a);
	case R_LANGUAGES:
		return handle_languages(r, a);
	case R_PROBLEMS:
		return handle_problems(r, a);
	case R_PROBLEM:
		return handle_problem(r, a, id);
	default:
		http_error(r, 404, "not_found", "no such endpoint: %.100s", r->url);
	}
}

static void on_done(struct http_request *r, void *arg)
{
	struct api *a = arg;
	if (r->admitted)
		auth_done(a->auth, r->key_id);
	int rt = r->route >= 0 && r->route < R_COUNT ? r->route : R_OTHER;
	int sc = r->status == 429		  ? SC_429
		 : r->status >= 500 || !r->status ? SC_5XX
		 : r->status >= 400		  ? SC_4XX
						  : SC_2XX;
	pthread_mutex_lock(&a->m.lock);
	a->m.requests[rt][sc]++;
	hist_add(&a->m.http[rt], http_now() - r->start_s);
	pthread_mutex_unlock(&a->m.lock);
	log_debug("api: %s %s %d %.1f ms", r->method, r->url, r->status,
		  (http_now() - r->start_s) * 1000);
}

int api_start(struct api **out, const struct judge_config *cfg, const char *db_url, int listen_fd,
	      char *err, size_t errlen)
{
	struct api *a = calloc(1, sizeof *a);
	if (!a) {
		snprintf(err, errlen, "out of memory");
		close(listen_fd);
		return -1;
	}
	a->cfg = cfg;
	a->auth_on = strcmp(cfg->auth, "off") != 0;
	pthread_mutex_init(&a->m.lock, NULL);
	pthread_mutex_init(&a->wlock, NULL);
	pthread_mutex_init(&a->vlock, NULL);
	long threads = cfg->http_threads ? cfg->http_threads : sysconf(_SC_NPROCESSORS_ONLN);
	if (threads < 1)
		threads = 1;
	a->db_url = strdup(db_url);
	if (!a->db_url)
		goto fail_close;
	if (lang_load_dir(&a->langs, cfg->languages_dir, err, errlen) < 0)
		goto fail_close;
	/* every HTTP thread may hold one connection, plus auth, callbacks and spares */
	if (db_pool_new(&a->pool, db_url, (int)threads + 4, 10000, err, errlen) < 0)
		goto fail_close;
	a->auth = auth_new(a->pool, cfg->rate_limit_per_min, cfg->max_in_flight);
	if (!a->auth) {
		snprintf(err, errlen, "out of memory");
		goto fail_close;
	}
	if (callback_start(&a->callbacks, a->pool, cfg, err, errlen) < 0)
		goto fail_close;
	if (pthread_create(&a->notifier, NULL, notifier_main, a)) {
		snprintf(err, errlen, "cannot start a thread");
		goto fail_close;
	}
	a->notifier_started = true;
	struct http_opts ho = {.listen_fd = listen_fd,
			       .threads = (int)threads,
			       .max_body = (size_t)cfg->max_body_kb * 1024,
			       .headers = on_headers,
			       .handler = on_request,
			       .done = on_done,
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
	a->stop = 1;
	if (a->notifier_started)
		pthread_join(a->notifier, NULL);
	callback_stop(a->callbacks);
	auth_free(a->auth);
	if (a->pool)
		db_pool_free(a->pool);
	lang_registry_release(&a->langs);
	for (int i = 0; a->versions && a->versions[i]; i++)
		free(a->versions[i]);
	free(a->versions);
	pthread_mutex_destroy(&a->m.lock);
	pthread_mutex_destroy(&a->wlock);
	pthread_mutex_destroy(&a->vlock);
	free(a->db_url);
	free(a);
}
