/* problems: upload, list, read, publish and retire problem packages (see problems.h). */
#include "judge/api/problems.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/base64.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "judge/api/api.h"
#include "judge/api/http.h"
#include "judge/api/render.h"
#include "judge/api/submit.h"
#include "judge/grading/package.h"
#include "judge/grading/problem.h"
#include "judge/service/auth.h"
#include "judge/service/problemstore.h"
#include "judge/service/queue.h"
#include "judge/service/waiter.h"
#include "judge/store/db.h"

/* Samples shown by GET (and kept in the version's info), and their caps. */
#define INFO_SAMPLES	   20
#define INFO_SAMPLE_MAX	   (64 * 1024)
#define INFO_STATEMENT_MAX (256 * 1024)

static struct problemstore_actor actor(struct api *a, struct http_request *r)
{
	if (!a->auth_on)
		return (struct problemstore_actor){.key_id = 0, .admin = true};
	return (struct problemstore_actor){.key_id = r->key_id,
					   .admin = auth_is_admin(a->auth, r->key_id)};
}

static bool upload_allowed(struct api *a, struct http_request *r)
{
	const char *who = a->cfg->problem_upload;
	if (!strcmp(who, "keys"))
		return true;
	if (!strcmp(who, "admin"))
		return actor(a, r).admin;
	return false;
}

static bool is_upload(struct http_request *r, enum route rt)
{
	return (rt == R_PROBLEMS && !strcmp(r->method, "POST")) ||
	       (rt == R_PROBLEM && !strcmp(r->method, "PUT"));
}

/* True when the Content-Type's media type is one of the NULL-terminated list. */
static bool media_type(struct http_request *r, const char *const *types)
{
	const char *ct = http_header(r, "Content-Type");
	if (!ct)
		return false;
	size_t n = strcspn(ct, "; \t");
	for (int i = 0; types[i]; i++)
		if (n == strlen(types[i]) && !strncasecmp(ct, types[i], n))
			return true;
	return false;
}

/* The uploads whose bodies the server holds now (problems_headers admits,
 * problems_done releases). */
static struct {
	pthread_mutex_t lock;
	const struct http_request *held[PROBLEMS_UPLOADS_MAX];
} uploads = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool upload_hold(const struct http_request *r)
{
	bool ok = false;
	pthread_mutex_lock(&uploads.lock);
	for (int i = 0; i < PROBLEMS_UPLOADS_MAX && !ok; i++)
		if (!uploads.held[i]) {
			uploads.held[i] = r;
			ok = true;
		}
	pthread_mutex_unlock(&uploads.lock);
	return ok;
}

void problems_done(struct http_request *r)
{
	pthread_mutex_lock(&uploads.lock);
	for (int i = 0; i < PROBLEMS_UPLOADS_MAX; i++)
		if (uploads.held[i] == r)
			uploads.held[i] = NULL;
	pthread_mutex_unlock(&uploads.lock);
}

bool problems_headers(struct http_request *r, struct api *a, enum route rt)
{
	if (is_upload(r, rt)) {
		if (!upload_allowed(a, r)) {
			http_error(r, 403, "forbidden",
				   "this key may not upload problems (problem_upload = %s)",
				   a->cfg->problem_upload);
			return false;
		}
		static const char *const zip[] = {"application/zip", "application/x-zip-compressed",
						  "application/octet-stream", NULL};
		if (!media_type(r, zip)) {
			http_error(r, 415, "unsupported_media_type",
				   "the body must be a zip of the problem package (Content-Type: "
				   "application/zip)");
			return false;
		}
		if (!upload_hold(r)) {
			const char *hdr[] = {"Retry-After", "5", NULL};
			http_error_h(r, 429, hdr, "rate_limited",
				     "%d problem uploads are being read now; retry in 5 s",
				     PROBLEMS_UPLOADS_MAX);
			return false;
		}
		r->max_body = (size_t)a->cfg->problem_max_mb << 20;
		return true;
	}
	static const char *const json[] = {"application/json", NULL};
	if (!strcmp(r->method, "PATCH") && !media_type(r, json)) {
		http_error(r, 415, "unsupported_media_type",
			   "the body must be JSON (Content-Type: application/json)");
		return false;
	}
	return true;
}

/* ---- what a version shows ---- */

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

cJSON *problems_info(const struct problem *p, const struct judge_config *cfg)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", p->name ? p->name : p->id);
	cJSON_AddStringToObject(o, "format_version", p->format_version ? p->format_version : "");
	if (p->unsupported) /* why it cannot be graded */
		cJSON_AddStringToObject(o, "unsupported", p->unsupported);
	cJSON_AddBoolToObject(o, "interactive", p->interactive);
	cJSON_AddBoolToObject(o, "scoring", p->scoring);
	cJSON_AddBoolToObject(o, "multi_pass", p->multi_pass);
	cJSON_AddBoolToObject(o, "custom_validator", p->custom_validator);
	cJSON *lim = cJSON_AddObjectToObject(o, "limits");
	if (p->limits.time_limit_s > 0)
		cJSON_AddNumberToObject(lim, "time_ms", p->limits.time_limit_s * 1000);
	else
		cJSON_AddNullToObject(lim, "time_ms");
	cJSON_AddNumberToObject(lim, "memory_mb",
				p->limits.memory_mb ? p->limits.memory_mb : cfg->memory_limit_mb);
	add_file(o, "statement", p->statement_path, INFO_STATEMENT_MAX);
	cJSON_AddNumberToObject(o, "tests", p->ntests);
	cJSON_AddNumberToObject(o, "submissions", p->nsubs);
	/* samples only: secret data never leaves the server */
	cJSON *samples = cJSON_AddArrayToObject(o, "samples");
	for (int i = 0, n = 0; i < p->ntests && n < INFO_SAMPLES; i++) {
		if (!p->tests[i].is_sample)
			continue;
		cJSON *s = cJSON_CreateObject();
		cJSON_AddStringToObject(s, "name", p->tests[i].name);
		add_file(s, "input", p->tests[i].in_path, INFO_SAMPLE_MAX);
		add_file(s, "output", p->tests[i].ans_path, INFO_SAMPLE_MAX);
		cJSON_AddItemToArray(samples, s);
		n++;
	}
	return o;
}

/* ---- reading ---- */

void problems_list(struct http_request *r, struct api *a)
{
	char err[256];
	struct problemstore_actor who = actor(a, r);
	cJSON *arr = NULL;
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? problemstore_list(db, &who, &arr, err, sizeof err) : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		return render_db_error(r, "listing problems", err);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "problems", arr);
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

/* Reads version (0: current) of id as who sees it: 1 with *out, 0 not found,
 * -1 after answering 503. */
static int read_problem(struct http_request *r, struct api *a, const char *id, int version,
			cJSON **out)
{
	char err[256];
	struct problemstore_actor who = actor(a, r);
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? problemstore_get(db, id, version, &who, out, err, sizeof err) : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		render_db_error(r, "reading a problem", err);
	return rc;
}

/* A version number from text (digits, 1 ..): the number, or -1. */
static int parse_version(const char *s)
{
	if (!s || !*s || strlen(s) > 9 || strspn(s, "0123456789") != strlen(s))
		return -1;
	int v = atoi(s);
	return v >= 1 ? v : -1;
}

void problems_get(struct http_request *r, struct api *a, const char *id, const char *version)
{
	int v = 0;
	if (version && (v = parse_version(version)) < 0) {
		http_error(r, 400, "invalid_field", "version must be a whole number from 1");
		return;
	}
	cJSON *o = NULL;
	int rc = problem_id_valid(id) ? read_problem(r, a, id, v, &o) : 0;
	if (rc == 0)
		http_error(r, 404, "unknown_problem", "unknown problem '%.64s'%s", id,
			   v ? " (or no such version)" : "");
	if (rc == 1)
		http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

/* ---- upload ---- */

struct upload {
	const char *id;		/* NULL: from the zip's top-level folder */
	const char *visibility; /* NULL: unchanged (a new one private) */
	bool keep;
	bool replace; /* PUT */
	long wait_s;
	bool from_body; /* the zip is r->body (an HTTP upload, held by upload_hold) */
};

/* Replaces the temporary folder's path in msg by the problem's id, so a
 * message names the package's files as the author knows them. */
static void unhost(char *msg, size_t len, const char *dir)
{
	struct strbuf sb = STRBUF_INIT;
	size_t dl = strlen(dir);
	for (const char *s = msg; *s;) {
		const char *hit = strstr(s, dir);
		if (!hit) {
			strbuf_addstr(&sb, s);
			break;
		}
		strbuf_add(&sb, s, (size_t)(hit - s));
		s = hit + dl;
		if (*s == '/')
			s++;
		else
			strbuf_addstr(&sb, ".");
	}
	snprintf(msg, len, "%s", sb.buf);
	strbuf_release(&sb);
}

/* A 422 naming the problem, and the file at fault in msg. */
static void bad_package(struct http_request *r, const char *id, const char *code, const char *msg)
{
	http_error(r, 422, code, "problem '%s': %s", id ? id : "?", msg);
}

/* The first failing submissions of a report, for the refusal's message. */
static void failures(struct strbuf *sb, const cJSON *report)
{
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(report, "error");
	if (cJSON_IsString(err))
		strbuf_addf(sb, ": %s", err->valuestring);
	int shown = 0;
	const cJSON *s;
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(report, "submissions"))
	{
		const cJSON *o = cJSON_GetObjectItemCaseSensitive(s, "outcome");
		if (!cJSON_IsString(o) || strcmp(o->valuestring, "fail"))
			continue;
		if (shown++ == 3) {
			strbuf_addstr(sb, "; ...");
			break;
		}
		strbuf_addf(sb, "%s %s: %s", shown == 1 ? ":" : ";",
			    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "path")),
			    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "message")));
	}
}

/* Answers with version's state: ready 201 (200 when nothing new was
 * stored), verifying 202, refused or failed 422 with the problem beside the
 * error. */
static void answer_version(struct http_request *r, struct api *a, const char *id, int version,
			   bool created)
{
	cJSON *o = NULL;
	int rc = read_problem(r, a, id, version, &o);
	if (rc < 0)
		return;
	if (rc == 0) {
		http_error(r, 404, "unknown_problem", "unknown problem '%.64s'", id);
		return;
	}
	const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "status"));
	st = st ? st : "";
	if (!strcmp(st, "ready") || !strcmp(st, "verifying")) {
		http_respond_json(r, !strcmp(st, "verifying") ? 202 : created ? 201 : 200, o);
		cJSON_Delete(o);
		return;
	}
	const cJSON *rep = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(o, "verification"), "report");
	struct strbuf msg = STRBUF_INIT;
	bool refused = !strcmp(st, "refused");
	if (refused) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(rep, "failed");
		strbuf_addf(&msg,
			    "problem '%s' version %d was refused: %d example submission(s) did not "
			    "get their expected verdicts (?keep=true stores it anyway)",
			    id, version, cJSON_IsNumber(f) ? f->valueint : 0);
	} else {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(rep, "message");
		strbuf_addf(&msg, "problem '%s' version %d cannot be graded%s%s", id, version,
			    cJSON_IsString(m) ? ": " : "", cJSON_IsString(m) ? m->valuestring : "");
	}
	failures(&msg, rep);
	cJSON *e = cJSON_CreateObject();
	cJSON *eo = cJSON_AddObjectToObject(e, "error");
	cJSON_AddStringToObject(eo, "code", refused ? "package_refused" : "package_failed");
	cJSON_AddStringToObject(eo, "message", msg.buf);
	cJSON_AddItemToObject(e, "problem", o);
	http_respond_json(r, 422, e);
	cJSON_Delete(e);
	strbuf_release(&msg);
}

/* submit_wait's answer: the verification job s of an upload ended or the
 * wait is over. */
static void verified(struct http_request *r, struct api *a, const struct queue_sub *s, bool final)
{
	(void) final;
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(s->request, "problem");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(s->request, "problem_version");
	if (!cJSON_IsString(id) || !cJSON_IsNumber(v)) {
		http_error(r, 500, "internal_error", "the verification job names no version");
		return;
	}
	answer_version(r, a, id->valuestring, v->valueint, true);
}

static const char *result_error(int rc, const char *id, bool replace, char *buf, size_t len)
{
	switch (rc) {
	case PS_TAKEN:
		snprintf(buf, len, "problem id '%s' is taken%s", id,
			 replace ? "" : " (PUT /v1/problems/{id} adds a version to your own)");
		return "problem_exists";
	case PS_NOT_FOUND:
		snprintf(buf, len, "unknown problem '%s'", id);
		return "unknown_problem";
	default:
		snprintf(buf, len, "problem '%s' belongs to another key", id);
		return "forbidden";
	}
}

/* Answers a put that problemstore would refuse. Returns 0 when it may go on,
 * else 1 (answered). */
static int refused_early(struct http_request *r, struct api *a, const struct upload *u)
{
	char err[256];
	struct problemstore_put in = {.id = u->id, .who = actor(a, r), .replace = u->replace};
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? problemstore_may_put(db, &in, err, sizeof err) : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc == PS_DONE)
		return 0;
	if (rc < 0) {
		render_db_error(r, "storing a problem", err);
		return 1;
	}
	char msg[256];
	const char *code = result_error(rc, u->id, u->replace, msg, sizeof msg);
	http_error(r, rc == PS_TAKEN ? 409 : rc == PS_NOT_FOUND ? 404 : 403, code, "%s", msg);
	return 1;
}

/* Stores the zip as problem u->id and answers (see problems.h). */
static void upload(struct http_request *r, struct api *a, const struct upload *u, const void *zip,
		   size_t len)
{
	char err[1024];
	const char *tmp_root = getenv("TMPDIR");
	struct package pk;
	struct problem p;
	bool loaded = false;
	char id[80] = "";
	cJSON *info = NULL;
	if (!tmp_root || !*tmp_root)
		tmp_root = "/tmp";
	struct package_caps caps = {.max_files = (int)a->cfg->problem_max_files,
				    .max_bytes = (int64_t)a->cfg->problem_max_mb << 20};
	if (u->id && !problem_id_valid(u->id)) {
		http_error(r, 422, "invalid_field",
			   "a problem id matches [a-z0-9][a-z0-9_-]* (at most 64 characters)");
		return;
	}
	if (u->id)
		snprintf(id, sizeof id, "%s", u->id);
	/* who may put it is decided before the zip is read (and again when stored) */
	if (u->id && refused_early(r, a, u) != 0)
		return;
	int zrc = package_from_zip(&pk, zip, len, tmp_root, &caps, err, sizeof err);
	if (u->from_body) {
		/* unpacked: the zip's memory goes, and its place among the uploads
		 * held, before the wait for the verification */
		strbuf_release(&r->body);
		problems_done(r);
	}
	if (zrc < 0) {
		bad_package(r, u->id, "invalid_package", err);
		return;
	}
	if (!u->id) {
		/* the zip's one top-level folder names it */
		const char *base = strcmp(pk.dir, pk.tmp) ? strrchr(pk.dir, '/') + 1 : NULL;
		if (!base || !problem_id_valid(base)) {
			http_error(r, 422, "missing_field",
				   "give the problem's id (?id=), or zip the package in a folder "
				   "named by it ([a-z0-9][a-z0-9_-]*)");
			goto out;
		}
		snprintf(id, sizeof id, "%s", base);
	}
	if (problem_load(&p, pk.dir, &a->langs, err, sizeof err) < 0) {
		unhost(err, sizeof err, pk.dir);
		bad_package(r, id, "invalid_package", err);
		goto out;
	}
	loaded = true;
	free(p.id);
	p.id = xstrdup(id);
	if (p.unsupported) {
		bad_package(r, id, "unsupported_problem", p.unsupported);
		goto out;
	}
	info = problems_info(&p, a->cfg);
	struct problemstore_put in = {.id = id,
				      .who = actor(a, r),
				      .replace = u->replace,
				      .visibility = u->visibility,
				      .keep = u->keep,
				      .verify = true,
				      .pk = &pk,
				      .info = info};
	int version = 0;
	int64_t job = 0;
	struct waiter_mark mark = waiter_mark(a->waiters);
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? problemstore_put(db, &in, &version, &job, err, sizeof err) : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0) {
		render_db_error(r, "storing a problem", err);
		goto out;
	}
	if (rc != PS_DONE && rc != PS_SAME) {
		char msg[256];
		const char *code = result_error(rc, id, u->replace, msg, sizeof msg);
		http_error(r,
			   rc == PS_TAKEN	? 409
			   : rc == PS_NOT_FOUND ? 404
						: 403,
			   code, "%s", msg);
		goto out;
	}
	log_info("api: problem %s version %d %s by key %" PRId64 " (%d files, %lld bytes, %s)", id,
		 version, rc == PS_SAME ? "unchanged" : "stored", r->key_id, pk.nfiles,
		 (long long)pk.bytes, pk.hash);
	if (job > 0)
		submit_wait(r, a, job, clock_mono_ms() + u->wait_s * 1000, verified,
			    rc == PS_DONE ? &mark : NULL);
	else
		answer_version(r, a, id, version, rc == PS_DONE);
out:
	cJSON_Delete(info);
	if (loaded)
		problem_release(&p);
	package_release(&pk);
}

/* A boolean query value: true for "true" or "1", false for "false", "0" or
 * absent. Returns 0, or -1 when it is something else. */
static int query_bool(const char *v, bool *out)
{
	*out = false;
	if (!v || !strcmp(v, "false") || !strcmp(v, "0"))
		return 0;
	if (!strcmp(v, "true") || !strcmp(v, "1")) {
		*out = true;
		return 0;
	}
	return -1;
}

static bool visibility_valid(const char *v)
{
	return !strcmp(v, "public") || !strcmp(v, "private");
}

/* The wait of an upload: ?wait= (seconds, at most max_wait_s), default max_wait_s. */
static int upload_wait(struct api *a, const char *w, long *out)
{
	*out = a->cfg->max_wait_s;
	if (!w)
		return 0;
	if (!*w || strlen(w) > 9 || strspn(w, "0123456789") != strlen(w))
		return -1;
	long v = atol(w);
	*out = v < a->cfg->max_wait_s ? v : a->cfg->max_wait_s;
	return 0;
}

static void upload_http(struct http_request *r, struct api *a, const char *path_id)
{
	struct upload u = {.id = path_id ? path_id : http_query(r, "id"),
			   .visibility = http_query(r, "visibility"),
			   .replace = path_id != NULL,
			   .from_body = true};
	if (u.visibility && !visibility_valid(u.visibility)) {
		http_error(r, 422, "invalid_field", "visibility must be public or private");
		return;
	}
	if (query_bool(http_query(r, "keep"), &u.keep) < 0) {
		http_error(r, 422, "invalid_field", "keep must be true or false");
		return;
	}
	if (upload_wait(a, http_query(r, "wait"), &u.wait_s) < 0) {
		http_error(r, 422, "invalid_field", "wait must be a whole number of seconds");
		return;
	}
	if (path_id && !problem_id_valid(path_id)) {
		http_error(r, 404, "unknown_problem", "unknown problem '%.64s'", path_id);
		return;
	}
	upload(r, a, &u, r->body.buf ? r->body.buf : "", r->body.len);
}

void problems_mcp_upload(struct http_request *r, struct api *a, const cJSON *body)
{
	if (!upload_allowed(a, r)) {
		http_error(r, 403, "forbidden",
			   "this key may not upload problems (problem_upload = %s)",
			   a->cfg->problem_upload);
		return;
	}
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(body, "id");
	const cJSON *zip = cJSON_GetObjectItemCaseSensitive(body, "package_base64");
	const cJSON *vis = cJSON_GetObjectItemCaseSensitive(body, "visibility");
	const cJSON *keep = cJSON_GetObjectItemCaseSensitive(body, "keep");
	const cJSON *replace = cJSON_GetObjectItemCaseSensitive(body, "replace");
	if (!cJSON_IsString(id) || !cJSON_IsString(zip)) {
		http_error(
		    r, 422, "missing_field",
		    "id and package_base64 (the zip of the package, in base64) are required");
		return;
	}
	if ((vis && !cJSON_IsNull(vis) &&
	     !(cJSON_IsString(vis) && visibility_valid(vis->valuestring))) ||
	    (keep && !cJSON_IsBool(keep)) || (replace && !cJSON_IsBool(replace))) {
		http_error(r, 422, "invalid_field",
			   "visibility is public or private; keep and replace are booleans");
		return;
	}
	struct strbuf bytes = STRBUF_INIT;
	if (!base64_decode(&bytes, zip->valuestring, strlen(zip->valuestring))) {
		http_error(r, 422, "invalid_field", "package_base64 is not base64");
		strbuf_release(&bytes);
		return;
	}
	struct upload u = {.id = id->valuestring,
			   .visibility = cJSON_IsString(vis) ? vis->valuestring : NULL,
			   .keep = cJSON_IsTrue(keep),
			   .replace = cJSON_IsTrue(replace),
			   .wait_s = a->cfg->max_wait_s};
	if (u.replace && !problem_id_valid(u.id))
		http_error(r, 404, "unknown_problem", "unknown problem '%.64s'", u.id);
	else
		upload(r, a, &u, bytes.buf ? bytes.buf : "", bytes.len);
	strbuf_release(&bytes);
}

/* ---- publish and retire ---- */

static void changed(struct http_request *r, struct api *a, const char *id, int rc, const char *err)
{
	if (rc < 0)
		return render_db_error(r, "changing a problem", err);
	if (rc == PS_DONE)
		return answer_version(r, a, id, 0, false);
	char msg[256];
	const char *code = result_error(rc, id, true, msg, sizeof msg);
	http_error(r, rc == PS_NOT_FOUND ? 404 : 403, code, "%s", msg);
}

static void patch(struct http_request *r, struct api *a, const char *id)
{
	cJSON *in = NULL;
	struct request_error e;
	char err[256];
	if (request_parse_json(a->cfg, r->body.buf ? r->body.buf : "", r->body.len, &in, &e) < 0)
		return render_req_error(r, &e);
	const cJSON *vis = cJSON_GetObjectItemCaseSensitive(in, "visibility");
	if (!cJSON_IsObject(in) || cJSON_GetArraySize(in) != 1 || !cJSON_IsString(vis) ||
	    !visibility_valid(vis->valuestring)) {
		http_error(r, 422, "invalid_field",
			   "the body is {\"visibility\": \"public\"} or {\"visibility\": "
			   "\"private\"}");
		cJSON_Delete(in);
		return;
	}
	struct problemstore_actor who = actor(a, r);
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc =
	    db ? problemstore_set_visibility(db, id, &who, vis->valuestring, err, sizeof err) : -1;
	if (db)
		db_pool_put(a->pool, db);
	cJSON_Delete(in);
	changed(r, a, id, rc, err);
}

static void retire(struct http_request *r, struct api *a, const char *id)
{
	char err[256];
	struct problemstore_actor who = actor(a, r);
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? problemstore_retire(db, id, &who, err, sizeof err) : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc != PS_DONE)
		return changed(r, a, id, rc, err);
	log_info("api: problem %s retired by key %" PRId64, id, r->key_id);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddBoolToObject(o, "retired", true);
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

void problems_handle(struct http_request *r, struct api *a, enum route rt, const char *id)
{
	const char *m = r->method;
	if (rt == R_PROBLEMS) {
		if (!strcmp(m, "POST"))
			return upload_http(r, a, NULL);
		return problems_list(r, a);
	}
	if (!strcmp(m, "PUT"))
		return upload_http(r, a, id);
	if (!problem_id_valid(id)) {
		http_error(r, 404, "unknown_problem", "unknown problem '%.64s'", id);
		return;
	}
	if (!strcmp(m, "PATCH"))
		return patch(r, a, id);
	if (!strcmp(m, "DELETE"))
		return retire(r, a, id);
	problems_get(r, a, id, http_query(r, "version"));
}

/* ---- submissions ---- */

int problems_pin(struct api *a, struct http_request *r, struct request_parsed *p,
		 struct request_error *e)
{
	if (!p->req.problem)
		return 0;
	char err[256];
	struct problemstore_actor who = actor(a, r);
	int version = 0;
	char *unsupported = NULL;
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? problemstore_resolve(db, p->req.problem, &who, &version, &unsupported, err,
					   sizeof err)
		    : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0) {
		log_warn("api: problem %s: %s", p->req.problem, err);
		return request_fail(e, 503, "unavailable",
				    "the database is not available, retry later");
	}
	if (rc == 0)
		return request_fail(e, 422, "unknown_problem", "unknown problem '%s'",
				    p->req.problem);
	if (unsupported) {
		request_fail(e, 422, "unsupported_problem", "problem '%s' is not supported: %s",
			     p->req.problem, unsupported);
		free(unsupported);
		return -1;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(p->request, "problem_version");
	cJSON_AddNumberToObject(p->request, "problem_version", version);
	return 0;
}

/* ---- problems_dir ---- */

/* Loads problems_dir/id into the store. */
static void load_one(struct api *a, struct db *db, const char *id)
{
	char err[1024];
	struct package pk;
	struct problem p;
	struct package_caps caps = {.max_files = (int)a->cfg->problem_max_files,
				    .max_bytes = (int64_t)a->cfg->problem_max_mb << 20};
	char *dir = xasprintf("%s/%s", a->cfg->problems_dir, id);
	if (package_from_dir(&pk, dir, &caps, err, sizeof err) < 0) {
		log_warn("problems: '%s' is not loaded: %s", dir, err);
		free(dir);
		return;
	}
	if (problem_load(&p, dir, &a->langs, err, sizeof err) < 0) {
		log_warn("problems: '%s' is not loaded: %s", dir, err);
		package_release(&pk);
		free(dir);
		return;
	}
	cJSON *info = problems_info(&p, a->cfg);
	struct problemstore_put in = {
	    .id = id, .who = {.key_id = 0, .admin = true}, .import = true, .pk = &pk, .info = info};
	int version = 0;
	int64_t job = 0;
	int rc = problemstore_put(db, &in, &version, &job, err, sizeof err);
	if (rc < 0)
		log_warn("problems: '%s' is not loaded: %s", dir, err);
	else if (rc == PS_TAKEN)
		log_warn("problems: '%s' is not loaded: problem '%s' is an API key's", dir, id);
	else if (rc == PS_DONE)
		log_info("problems: '%s' loaded as version %d (%d files, %s)", dir, version,
			 pk.nfiles, pk.hash);
	cJSON_Delete(info);
	problem_release(&p);
	package_release(&pk);
	free(dir);
}

void problems_load_dir(struct api *a)
{
	const char *root = a->cfg->problems_dir;
	char **ids = NULL, err[512];
	if (!root || !*root)
		return;
	int n = problem_list(root, &ids, err, sizeof err);
	if (n < 0) {
		log_info("problems: no problems loaded from '%s': %s", root, err);
		return;
	}
	struct db *db = api_db(a, 10000, err, sizeof err);
	if (!db) {
		log_warn("problems: '%s' is not loaded: %s", root, err);
		problem_ids_free(ids);
		return;
	}
	int64_t t0 = clock_mono_ms();
	for (int i = 0; i < n; i++)
		load_one(a, db, ids[i]);
	db_pool_put(a->pool, db);
	log_info("problems: %d package(s) of '%s' checked in %lld ms", n, root,
		 (long long)(clock_mono_ms() - t0));
	problem_ids_free(ids);
}
