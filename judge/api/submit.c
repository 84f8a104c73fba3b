/* submit: enqueue, batch and get of submissions, with parked waits for their verdict. */
#include "judge/api/submit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "common/config.h"
#include "common/xalloc.h"
#include "judge/api/api.h"
#include "judge/api/events.h"
#include "judge/api/http.h"
#include "judge/api/metrics.h"
#include "judge/api/problems.h"
#include "judge/api/render.h"
#include "judge/api/sse.h"
#include "judge/service/queue.h"
#include "judge/service/waiter.h"
#include "judge/store/db.h"

/* Per-request state of a wait, kept across suspend/resume (r->ctx). */
struct wait_ctx {
	struct api *api;
	struct http_request *r;
	int64_t enqueued_us;	 /* clock_mono_us() */
	bool sync;		 /* execute*: answer with the result JSON */
	submit_answer_fn answer; /* another front's answer, or NULL */
	struct waiter w;	 /* w.id: the submission; w.deadline_ms: when to stop waiting */
	bool fresh;		 /* queued by this request after mark, not read yet */
	struct waiter_mark mark;
};

static void wait_ctx_free(void *p)
{
	struct wait_ctx *c = p;
	if (!c)
		return;
	waiter_unregister(c->api->waiters, &c->w);
	free(c);
}

static void resume_request(struct waiter *w)
{
	http_resume(((struct wait_ctx *)w->arg)->r);
}

static void suspend_request(struct waiter *w)
{
	http_suspend(((struct wait_ctx *)w->arg)->r);
}

/* Reads submission c->w.id; answers when it is final or the wait is over,
 * else parks the request (the hub resumes it into submit_resume). */
static void continue_wait(struct wait_ctx *c)
{
	struct api *a = c->api;
	struct http_request *r = c->r;
	char err[256];
	for (;;) {
		/* just queued by this request: it cannot be final while the hub is sure
		 * it heard no finish for it, so park without reading */
		if (c->fresh) {
			c->fresh = false;
			if (waiter_register_since(a->waiters, &c->w, &c->mark) &&
			    clock_mono_ms() < c->w.deadline_ms) {
				if (waiter_park(a->waiters, &c->w, suspend_request))
					return;
				continue;
			}
		}
		/* register first, read second: a notification in between is kept */
		waiter_register(a->waiters, &c->w);
		struct queue_sub s;
		queue_sub_init(&s);
		struct db *db = api_db(a, 5000, err, sizeof err);
		int rc =
		    db ? queue_get(db, c->w.id, a->auth_on ? r->key_id : 0, &s, err, sizeof err)
		       : -1;
		if (db)
			db_pool_put(a->pool, db);
		bool final = rc == 1 && status_is_final(s.status);
		bool over = clock_mono_ms() >= c->w.deadline_ms;
		if (rc == 1 && !final && !over) {
			queue_sub_release(&s);
			if (waiter_park(a->waiters, &c->w, suspend_request))
				return;
			continue; /* notified while reading: read again */
		}
		waiter_unregister(a->waiters, &c->w);
		if (rc < 0) {
			render_db_error(r, "reading a submission", err);
		} else if (rc == 0) {
			http_error(r, 404, "not_found", "no submission %" PRId64, c->w.id);
		} else if (c->answer) {
			c->answer(r, a, &s, final);
			if (final)
				metrics_exec_latency(a->metrics,
						     (clock_mono_us() - c->enqueued_us) / 1e6);
		} else if (final && c->sync) {
			cJSON *res = render_result(&s);
			http_respond_json(r, 200, res);
			cJSON_Delete(res);
			metrics_exec_latency(a->metrics, (clock_mono_us() - c->enqueued_us) / 1e6);
		} else {
			cJSON *o = render_sub(&s);
			http_respond_json(r, final || !c->sync ? 200 : 202, o);
			cJSON_Delete(o);
		}
		queue_sub_release(&s);
		return;
	}
}

/* Starts waiting for id until deadline_ms (a clock_mono_ms() time); queued: see
 * submit_wait. */
static void start_wait(struct http_request *r, struct api *a, int64_t id, int64_t deadline_ms,
		       bool sync, submit_answer_fn answer, const struct waiter_mark *queued)
{
	struct wait_ctx *c = xcalloc(1, sizeof *c);
	*c = (struct wait_ctx){
	    .api = a,
	    .r = r,
	    .enqueued_us = clock_mono_us(),
	    .sync = sync,
	    .answer = answer,
	    .w = {.id = id, .deadline_ms = deadline_ms, .resume = resume_request}};
	c->w.arg = c;
	if (queued) {
		c->fresh = true;
		c->mark = *queued;
	}
	r->ctx = c;
	r->ctx_free = wait_ctx_free;
	continue_wait(c);
}

void submit_wait(struct http_request *r, struct api *a, int64_t id, int64_t deadline_ms,
		 submit_answer_fn answer, const struct waiter_mark *queued)
{
	start_wait(r, a, id, deadline_ms, true, answer, queued);
}

void submit_resume(struct http_request *r)
{
	struct wait_ctx *c = r->ctx;
	/* shutting down: answer with what there is (202 + id for a sync execute) */
	if (http_stopping(r))
		c->w.deadline_ms = 0;
	continue_wait(c);
}

/* The idempotency key of one request, for single and batch requests alike:
 * the Idempotency-Key header (header, NULL when none) or the body's
 * idempotency_key (both: they must be equal). Returns 0 with *out (NULL: none; it points into
 * header or body), or -1 with e (422 invalid_field). */
static int idempotency_key(const char *header, const cJSON *body, const char **out,
			   struct request_error *e)
{
	const char *k = header;
	const cJSON *bk = cJSON_GetObjectItemCaseSensitive(body, "idempotency_key");
	*out = NULL;
	if (bk && !cJSON_IsNull(bk) && !cJSON_IsString(bk))
		return request_fail(e, 422, "invalid_field", "idempotency_key must be a string");
	/* both given: they must agree, or one of them would be silently dropped */
	if (k && cJSON_IsString(bk) && strcmp(k, bk->valuestring))
		return request_fail(
		    e, 422, "invalid_field",
		    "the Idempotency-Key header and the body's idempotency_key differ");
	if (!k && cJSON_IsString(bk))
		k = bk->valuestring;
	if (k && (!*k || strlen(k) > 200 || !utf8_valid_text(k, strlen(k))))
		return request_fail(e, 422, "invalid_field",
				    "the idempotency key must be 1 to 200 bytes of UTF-8 text");
	*out = k;
	return 0;
}

/* Whether submission id (found by its idempotency key) holds the request p:
 * 1 yes (with its *status), 0 no, -1 on a database error (err). */
static int same_request(struct api *a, struct http_request *r, int64_t id,
			const struct request_parsed *p, enum sub_status *status, char *err,
			size_t errlen)
{
	struct queue_sub s;
	queue_sub_init(&s);
	struct db *db = api_db(a, 5000, err, errlen);
	int rc = db ? queue_get(db, id, a->auth_on ? r->key_id : 0, &s, err, errlen) : -1;
	if (db)
		db_pool_put(a->pool, db);
	*status = s.status;
	if (rc == 1) {
		/* the same program for the same problem, whichever version is current now */
		cJSON *was = cJSON_Duplicate(s.request, 1), *now = cJSON_Duplicate(p->request, 1);
		cJSON_DeleteItemFromObjectCaseSensitive(was, "problem_version");
		cJSON_DeleteItemFromObjectCaseSensitive(now, "problem_version");
		rc = cJSON_Compare(was, now, true) &&
		     !strcmp(s.callback_url ? s.callback_url : "",
			     p->callback_url ? p->callback_url : "");
		cJSON_Delete(was);
		cJSON_Delete(now);
	}
	queue_sub_release(&s);
	return rc;
}

/* 201 (200 for a repeat) {"id", "status"} with a Location header. */
static void respond_queued(struct http_request *r, int64_t id, bool created, enum sub_status status)
{
	char loc[64];
	snprintf(loc, sizeof loc, "/v1/submissions/%" PRId64, id);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)id);
	/* a repeat gets the submission's state (there is no "exists" state) */
	cJSON_AddStringToObject(o, "status", status_name(status));
	char *text = cJSON_PrintUnformatted(o);
	const char *hdr[] = {"Location", loc, NULL};
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s\n", text);
	http_respond(r, created ? 201 : 200, "application/json", sb.buf, sb.len, hdr);
	strbuf_release(&sb);
	free(text);
	cJSON_Delete(o);
}

static void enqueue(struct http_request *r, struct api *a, enum request_kind kind, bool sync,
		    const cJSON *body, bool stream);

void submit_post(struct http_request *r, struct api *a, enum request_kind kind, bool sync)
{
	cJSON *in = NULL;
	struct request_error e;
	if (request_parse_json(a->cfg, r->body.buf, r->body.len, &in, &e) < 0)
		return render_req_error(r, &e);
	/* Accept: text/event-stream: the live output, done carrying the answer */
	enqueue(r, a, kind, sync, in, sse_wanted(r));
	cJSON_Delete(in);
}

void submit_enqueue(struct http_request *r, struct api *a, enum request_kind kind, bool sync,
		    const cJSON *body)
{
	enqueue(r, a, kind, sync, body, false);
}

void submit_stream(struct http_request *r, struct api *a, enum request_kind kind, const cJSON *body)
{
	enqueue(r, a, kind, true, body, true);
}

static void enqueue(struct http_request *r, struct api *a, enum request_kind kind, bool sync,
		    const cJSON *body, bool stream)
{
	struct request_parsed p = {0};
	struct request_error e;
	char err[256];
	const char *ikey = NULL;
	/* the body's idempotency_key is not part of the normalized request */
	if (request_validate(a->cfg, &a->langs, kind, body, &p, &e) < 0 ||
	    idempotency_key(http_header(r, "Idempotency-Key"), body, &ikey, &e) < 0 ||
	    problems_pin(a, r, &p, &e) < 0) {
		render_req_error(r, &e);
		goto out;
	}
	struct queue_new qn = {
	    .request = p.request,
	    .priority = sync ? QUEUE_PRIO_INTERACTIVE : QUEUE_PRIO_BULK,
	    .idempotency_key = ikey,
	    .api_key_id = a->auth_on ? r->key_id : 0,
	    .callback_url = p.callback_url,
	};
	int64_t id = 0;
	bool created = true;
	struct waiter_mark mark;
	int rc = submit_enqueue_one(a, &qn, &id, &created, &mark, err, sizeof err);
	if (rc < 0) {
		render_db_error(r, "enqueue", err);
		goto out;
	}
	/* a reused key must not quietly stand for a different program */
	enum sub_status status = SUB_QUEUED;
	if (!created && (rc = same_request(a, r, id, &p, &status, err, sizeof err)) != 1) {
		if (rc < 0)
			render_db_error(r, "idempotency check", err);
		else
			http_error(r, 422, "invalid_field",
				   "the idempotency key was used before for a different request");
		goto out;
	}
	log_debug("api: submission %" PRId64 " %s (%s)", id, created ? "queued" : "repeated",
		  sync ? "sync" : "async");
	if (stream)
		events_relay(r, a, id, status_is_final(status));
	else if (sync)
		start_wait(r, a, id, clock_mono_ms() + a->cfg->max_wait_s * 1000, true, NULL,
			   created ? &mark : NULL);
	else
		respond_queued(r, id, created, status);
out:
	request_parsed_release(&p);
}

int submit_enqueue_one(struct api *a, const struct queue_new *qn, int64_t *id, bool *created,
		       struct waiter_mark *mark, char *err, size_t errlen)
{
	struct db *db = api_db(a, 5000, err, errlen);
	if (mark)
		*mark = waiter_mark(a->waiters);
	int rc = db ? queue_enqueue(db, qn, id, created, err, errlen) : -1;
	if (db)
		db_pool_put(a->pool, db);
	return rc;
}

void submit_run(struct http_request *r, struct api *a, const struct request_parsed *p,
		submit_answer_fn answer)
{
	char err[256];
	struct queue_new qn = {
	    .request = p->request,
	    .priority = QUEUE_PRIO_INTERACTIVE,
	    .api_key_id = a->auth_on ? r->key_id : 0,
	};
	int64_t id = 0;
	struct waiter_mark mark;
	if (submit_enqueue_one(a, &qn, &id, NULL, &mark, err, sizeof err) < 0)
		return render_db_error(r, "enqueue", err);
	log_debug("api: submission %" PRId64 " queued (sync, another front)", id);
	start_wait(r, a, id, clock_mono_ms() + a->cfg->max_wait_s * 1000, true, answer, &mark);
}

/* The submissions array of a batch body, or NULL with e. */
static const cJSON *batch_items(const struct api *a, const cJSON *in, struct request_error *e)
{
	const cJSON *subs =
	    cJSON_IsArray(in) ? in : cJSON_GetObjectItemCaseSensitive(in, "submissions");
	if (!cJSON_IsArray(subs)) {
		request_fail(e, 422, "missing_field",
			     "submissions (an array of requests) is required");
		return NULL;
	}
	if (cJSON_IsObject(in) && cJSON_GetArraySize(in) != 1) {
		request_fail(e, 422, "invalid_field", "a batch has one field, submissions");
		return NULL;
	}
	int n = cJSON_GetArraySize(subs);
	if (n == 0 || n > a->cfg->max_batch) {
		request_fail(e, n ? 413 : 422, n ? "too_large" : "invalid_field",
			     "a batch holds 1 to %ld submissions, not %d", a->cfg->max_batch, n);
		return NULL;
	}
	return subs;
}

/* Validates item i of a batch into ps[i] and qn[i]. Returns 0, or -1 with e. */
static int batch_item(struct http_request *r, struct api *a, const cJSON *it, int i,
		      struct request_parsed *ps, struct queue_new *qn, struct request_error *e)
{
	const char *k = NULL;
	if (request_validate(a->cfg, &a->langs, REQ_SUBMISSION, it, &ps[i], e) < 0 ||
	    idempotency_key(NULL, it, &k, e) < 0 || problems_pin(a, r, &ps[i], e) < 0)
		return -1;
	/* twice in one batch: the second would silently become the first */
	for (int j = 0; k && j < i; j++)
		if (qn[j].idempotency_key && !strcmp(qn[j].idempotency_key, k))
			return request_fail(
			    e, 422, "invalid_field",
			    "idempotency_key '%.40s' is also the key of submissions[%d]", k, j);
	qn[i] = (struct queue_new){.request = ps[i].request,
				   .priority = QUEUE_PRIO_BULK,
				   .idempotency_key = k,
				   .api_key_id = a->auth_on ? r->key_id : 0,
				   .callback_url = ps[i].callback_url};
	return 0;
}

void submit_batch(struct http_request *r, struct api *a)
{
	struct request_error e;
	char err[256];
	cJSON *in = NULL;
	struct request_parsed *ps = NULL;
	struct queue_new *qn = NULL;
	int64_t *ids = NULL;
	bool *created = NULL;
	int n = 0;
	/* one key for several submissions cannot mean anything: each has its own */
	if (http_header(r, "Idempotency-Key")) {
		http_error(r, 422, "invalid_field",
			   "a batch takes an idempotency_key in each submission, not the "
			   "Idempotency-Key header");
		return;
	}
	const cJSON *subs;
	if (request_parse_json(a->cfg, r->body.buf, r->body.len, &in, &e) < 0 ||
	    !(subs = batch_items(a, in, &e))) {
		render_req_error(r, &e);
		goto out;
	}
	n = cJSON_GetArraySize(subs);
	ps = xcalloc((size_t)n, sizeof *ps);
	qn = xcalloc((size_t)n, sizeof *qn);
	ids = xcalloc((size_t)n, sizeof *ids);
	created = xcalloc((size_t)n, sizeof *created);
	int i = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, subs)
	{
		if (batch_item(r, a, it, i, ps, qn, &e) < 0) {
			http_error(r, e.http_status, e.code, "submissions[%d]: %s", i, e.message);
			goto out;
		}
		i++;
	}
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? queue_enqueue_batch(db, qn, (size_t)n, ids, created, err, sizeof err) : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0) {
		render_db_error(r, "enqueue batch", err);
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
		request_parsed_release(&ps[j]);
	free(ps);
	free(qn);
	free(ids);
	free(created);
	cJSON_Delete(in);
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

void submit_get(struct http_request *r, struct api *a, const char *id_s, const char *w)
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
	start_wait(r, a, id, clock_mono_ms() + (int64_t)wait * 1000, false, NULL, NULL);
}
