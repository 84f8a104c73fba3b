/* judge0: the Judge0 CE compatible endpoints, a thin front over /v1's validation and queue. */
#include "judge/api/judge0.h"

#include <inttypes.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/utf8.h"
#include "common/zipfiles.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "judge/api/api.h"
#include "judge/api/http.h"
#include "judge/api/judge0_render.h"
#include "judge/api/render.h"
#include "judge/api/submit.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "judge/grading/request.h"
#include "judge/service/queue.h"
#include "judge/store/db.h"

#define NOT_UTF8                                                                                   \
	"some attributes for this submission cannot be converted to UTF-8, use "                   \
	"base64_encoded=true"
#define NOT_UTF8_BATCH                                                                             \
	"some attributes for one or more submissions cannot be converted to UTF-8, use "           \
	"base64_encoded=true"

/* Judge0's error shape: {"error": "..."} */
#define j0_error(r, status, ...) render_keyed_error(r, status, "error", __VA_ARGS__)

static bool query_true(struct http_request *r, const char *name)
{
	const char *v = http_query(r, name);
	return v && !strcmp(v, "true");
}

/* ---- a Judge0 body into the /v1 request object ---- */

/* Judge0's validation error of one attribute: {"field": ["message"]}. */
struct j0_fault {
	char field[48];
	char message[256];
};

static int fault(struct j0_fault *f, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fault(struct j0_fault *f, const char *field, const char *fmt, ...)
{
	snprintf(f->field, sizeof f->field, "%s", field);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->message, sizeof f->message, fmt, ap);
	va_end(ap);
	return -1;
}

static cJSON *fault_json(const struct j0_fault *f)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(o, f->field);
	cJSON_AddItemToArray(arr, cJSON_CreateString(f->message));
	return o;
}

/* Copies text attribute name of in (decoded from base64 when b64) into out
 * under key. Absent and null are fine unless required. */
static int copy_text(const cJSON *in, const char *name, bool b64, bool required, cJSON *out,
		     const char *key, struct j0_fault *f)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, name);
	if (!v || cJSON_IsNull(v)) {
		if (required)
			return fault(f, name, "can't be blank");
		return 0;
	}
	if (!cJSON_IsString(v))
		return fault(f, name, "must be a string");
	if (!b64) {
		if (required && !*v->valuestring)
			return fault(f, name, "can't be blank");
		cJSON_AddStringToObject(out, key, v->valuestring);
		return 0;
	}
	struct strbuf d = STRBUF_INIT;
	int ret = -1;
	if (!base64_decode(&d, v->valuestring, strlen(v->valuestring)))
		fault(f, name, "is not valid base64");
	/* stored as JSON text: the bytes must be UTF-8 without NUL */
	else if (!utf8_valid_text(d.buf, d.len))
		fault(f, name, "is not UTF-8 text once decoded from base64");
	else if (required && !d.len)
		fault(f, name, "can't be blank");
	else
		ret = 0;
	if (ret == 0)
		cJSON_AddStringToObject(out, key, d.buf);
	strbuf_release(&d);
	return ret;
}

/* A number, or a string holding one: Judge0 (Rails) reads "71" as 71. */
static bool number_of(const cJSON *v, double *out)
{
	if (cJSON_IsNumber(v)) {
		*out = v->valuedouble;
		return true;
	}
	if (!cJSON_IsString(v) || !*v->valuestring || strlen(v->valuestring) > 32)
		return false;
	char *end;
	*out = strtod(v->valuestring, &end);
	return !*end && isfinite(*out);
}

/* A number attribute (seconds, KB, count) into limits.key as round(v * mul). */
static int copy_limit(const cJSON *in, const char *name, double mul, bool up, cJSON *limits,
		      const char *key, struct j0_fault *f)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, name);
	double d;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!number_of(v, &d) || !isfinite(d) || d <= 0)
		return fault(f, name, "must be a number greater than 0");
	double x = d * mul;
	cJSON_AddNumberToObject(limits, key, up ? ceil(x) : round(x));
	return 0;
}

/* Attributes that change how the program runs and that this judge does not
 * do: refused unless they have Judge0's default, rather than ignored. */
static int refuse_unsupported(const cJSON *in, struct j0_fault *f)
{
	static const char *const flags[] = {"redirect_stderr_to_stdout", "enable_network"};
	for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(in, flags[i])))
			return fault(f, flags[i], "is not supported by this judge");
	return 0;
}

/* Judge0 hands command_line_arguments (compiler_options) to a shell after the
 * run (compile) command: the words of that string, split as sh splits them
 * (blanks; '...'; "..." with \" \\ \$ \` escapes; \ outside quotes), become the
 * request's args (compiler_options). No expansion or redirection: a word is
 * what it says. field names the attribute in a fault. */
static int split_words(const char *s, cJSON *args, const char *field, struct j0_fault *f)
{
	struct strbuf w = STRBUF_INIT;
	bool in_word = false;
	int ret = 0;
	for (;; s++) {
		char c = *s;
		if (!c || c == ' ' || c == '\t' || c == '\n') {
			if (in_word)
				cJSON_AddItemToArray(args, cJSON_CreateString(w.buf ? w.buf : ""));
			strbuf_reset(&w);
			in_word = false;
			if (!c)
				break;
			continue;
		}
		in_word = true;
		if (c == '\\' && s[1]) {
			strbuf_add(&w, ++s, 1);
		} else if (c == '\'' || c == '"') {
			const char *end = s + 1;
			for (; *end && *end != c; end++)
				if (c == '"' && *end == '\\' && end[1] && strchr("\"\\$`", end[1]))
					strbuf_add(&w, ++end, 1);
				else
					strbuf_add(&w, end, 1);
			if (!*end) {
				ret = fault(f, field, "has an unmatched %c", c);
				break;
			}
			s = end;
		} else {
			strbuf_add(&w, s, 1);
		}
	}
	strbuf_release(&w);
	return ret;
}

/* Judge0's attribute name (a shell string) into o's key (a list of words). */
static int copy_words(const cJSON *in, const char *name, cJSON *o, const char *key,
		      struct j0_fault *f)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, name);
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return fault(f, name, "must be a string");
	if (strlen(v->valuestring) > 512)
		return fault(f, name, "is too long (maximum is 512 characters)");
	cJSON *words = cJSON_CreateArray();
	if (split_words(v->valuestring, words, name, f) < 0) {
		cJSON_Delete(words);
		return -1;
	}
	if (cJSON_GetArraySize(words))
		cJSON_AddItemToObject(o, key, words);
	else
		cJSON_Delete(words);
	return 0;
}

static int copy_args(const cJSON *in, cJSON *o, struct j0_fault *f)
{
	return copy_words(in, "command_line_arguments", o, "args", f) < 0 ||
		       copy_words(in, "compiler_options", o, "compiler_options", f) < 0
		   ? -1
		   : 0;
}

/* One file of additional_files into the request's files (model.h). */
static int add_zip_file(void *arg, const char *name, const char *data, size_t len, char *err,
			size_t errlen)
{
	if (strchr(name, '/')) {
		snprintf(err, errlen, "'%s': only files at the zip's top level are supported",
			 name);
		return -1;
	}
	if (memchr(data, 0, len) || !utf8_valid_text(data, len)) {
		snprintf(err, errlen, "'%s' is not a text file (UTF-8, no NUL)", name);
		return -1;
	}
	cJSON *file = cJSON_CreateObject();
	cJSON_AddStringToObject(file, "name", name);
	cJSON_AddStringToObject(file, "content", data);
	cJSON_AddItemToArray(arg, file);
	return 0;
}

/* additional_files: a base64 .zip whose files go beside the source (Judge0
 * unzips them into the program's folder), as the request's files. */
static int copy_additional_files(const struct api *a, const cJSON *in, cJSON *o, struct j0_fault *f)
{
	const char *name = "additional_files";
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, name);
	if (!v || cJSON_IsNull(v) || (cJSON_IsString(v) && !*v->valuestring))
		return 0;
	if (!cJSON_IsString(v))
		return fault(f, name, "must be a string (a base64 encoded zip)");
	struct strbuf zip = STRBUF_INIT;
	char err[200];
	int ret = 0;
	cJSON *files = cJSON_CreateArray();
	if (!base64_decode(&zip, v->valuestring, strlen(v->valuestring)))
		ret = fault(f, name, "is not valid base64");
	else if (zipfiles_read(zip.buf, zip.len, 64, (size_t)a->cfg->max_source_kb * 1024,
			       add_zip_file, files, err, sizeof err) < 0)
		ret = fault(f, name, "%s", err);
	strbuf_release(&zip);
	if (ret == 0 && cJSON_GetArraySize(files))
		cJSON_AddItemToObject(o, "files", files);
	else
		cJSON_Delete(files);
	return ret;
}

/* The /v1 request object of Judge0 body in (the caller deletes it), with the
 * Judge0 language id in *lang_id; NULL with f. Other Judge0 attributes
 * (number_of_runs, stack_limit, cpu_extra_time ...) are accepted and ignored. */
static cJSON *to_request(const struct api *a, const cJSON *in, bool b64, long *lang_id,
			 struct j0_fault *f)
{
	if (!cJSON_IsObject(in)) {
		fault(f, "submission", "must be a JSON object");
		return NULL;
	}
	const cJSON *lid = cJSON_GetObjectItemCaseSensitive(in, "language_id");
	if (!lid || cJSON_IsNull(lid)) {
		fault(f, "language_id", "can't be blank");
		return NULL;
	}
	const struct lang *l = NULL;
	double idv = 0;
	bool isnum = number_of(lid, &idv);
	if (isnum && idv == floor(idv) && fabs(idv) < 1e9)
		l = lang_by_judge0(&a->langs, (long)idv);
	if (!l) {
		if (isnum)
			fault(f, "language_id", "language with id %.0f doesn't exist",
			      fabs(idv) < 1e12 ? idv : 0);
		else
			fault(f, "language_id", "must be a number");
		return NULL;
	}
	*lang_id = (long)idv;
	cJSON *o = cJSON_CreateObject();
	cJSON *limits = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "language", l->name);
	if (refuse_unsupported(in, f) < 0 ||
	    copy_text(in, "source_code", b64, true, o, "source", f) < 0 ||
	    copy_text(in, "stdin", b64, false, o, "stdin", f) < 0 ||
	    copy_text(in, "expected_output", b64, false, o, "expected_output", f) < 0 ||
	    copy_limit(in, "cpu_time_limit", 1000, false, limits, "time_ms", f) < 0 ||
	    copy_limit(in, "wall_time_limit", 1000, false, limits, "wall_ms", f) < 0 ||
	    copy_limit(in, "memory_limit", 1.0 / 1024, true, limits, "memory_mb", f) < 0 ||
	    copy_limit(in, "max_processes_and_or_threads", 1, false, limits, "processes", f) < 0 ||
	    copy_text(in, "callback_url", false, false, o, "callback_url", f) < 0 ||
	    copy_args(in, o, f) < 0 || copy_additional_files(a, in, o, f) < 0) {
		cJSON_Delete(limits);
		cJSON_Delete(o);
		return NULL;
	}
	/* Judge0 compares with trailing white space of each line and of the
	 * whole output ignored: our lines mode (see the README for the rest) */
	if (cJSON_GetObjectItemCaseSensitive(o, "expected_output"))
		cJSON_AddStringToObject(o, "compare", "lines");
	if (cJSON_GetArraySize(limits))
		cJSON_AddItemToObject(o, "limits", limits);
	else
		cJSON_Delete(limits);
	if (cJSON_GetObjectItemCaseSensitive(o, "compiler_options") && l->compile_options_at < 0) {
		fault(f, "compiler_options", "setting compiler options is not allowed for %s",
		      l->judge0_name);
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* What submissions.front keeps of a Judge0 submission. */
static cJSON *front_of(long lang_id, bool b64)
{
	cJSON *fr = cJSON_CreateObject();
	cJSON_AddStringToObject(fr, "api", "judge0");
	cJSON_AddNumberToObject(fr, "language_id", (double)lang_id);
	cJSON_AddBoolToObject(fr, "base64_encoded", b64);
	return fr;
}

/* Validates one Judge0 submission into p (request_parsed_release it) and its
 * front. Returns 0, or -1 with *err_json, Judge0's error object (new), and
 * *status. */
static int validate(struct api *a, const cJSON *in, bool b64, struct request_parsed *p,
		    cJSON **front, cJSON **err_json, int *status)
{
	struct j0_fault f;
	struct request_error e;
	long lang_id = 0;
	*front = NULL;
	memset(p, 0, sizeof *p);
	cJSON *v1 = to_request(a, in, b64, &lang_id, &f);
	if (!v1) {
		*err_json = fault_json(&f);
		*status = 422;
		return -1;
	}
	int rc = request_validate(a->cfg, &a->langs, REQ_EXECUTE, v1, p, &e);
	cJSON_Delete(v1);
	if (rc < 0) {
		*err_json = cJSON_CreateObject();
		cJSON_AddStringToObject(*err_json, "error", e.message);
		*status = e.http_status;
		return -1;
	}
	*front = front_of(lang_id, b64);
	return 0;
}

/* ---- answers ---- */

/* Answers submission s with the fields and base64_encoded of r's query. */
static void answer_sub(struct http_request *r, const struct api *a, const struct queue_sub *s,
		       int status)
{
	j0r_fields fields;
	char bad[80];
	if (judge0_render_fields_parse(http_query(r, "fields"), &fields, bad, sizeof bad) < 0) {
		j0_error(r, 400, "invalid fields: [%s]", bad);
		return;
	}
	cJSON *o = judge0_render_submission(s, &a->langs, fields, query_true(r, "base64_encoded"));
	if (!o) {
		j0_error(r, 400, NOT_UTF8);
		return;
	}
	http_respond_json(r, status, o);
	cJSON_Delete(o);
}

/* wait=true: the submission as it is when final or when max_wait_s is over. */
static void answer_wait(struct http_request *r, struct api *a, const struct queue_sub *s,
			bool final)
{
	(void) final;
	answer_sub(r, a, s, 201);
}

/* Reads the tokens of ids (n) into toks (37 bytes each). Returns 0 or -1. */
static int read_tokens(struct api *a, const int64_t *ids, size_t n, char (*toks)[37], char *err,
		       size_t errlen)
{
	struct db *db = api_db(a, 5000, err, errlen);
	if (!db)
		return -1;
	int ret = 0;
	for (size_t i = 0; i < n && ret == 0; i++) {
		struct queue_sub s;
		queue_sub_init(&s);
		int rc = queue_get(db, ids[i], 0, &s, err, errlen);
		if (rc == 1)
			memcpy(toks[i], s.token, 37);
		else if (rc == 0)
			snprintf(err, errlen, "submission %" PRId64 " vanished", ids[i]);
		ret = rc == 1 ? 0 : -1;
		queue_sub_release(&s);
	}
	db_pool_put(a->pool, db);
	return ret;
}

void judge0_submit(struct http_request *r, struct api *a)
{
	cJSON *in = NULL, *front = NULL, *ej = NULL;
	struct request_parsed p = {0};
	struct request_error e;
	char err[256], bad[80];
	int status;
	bool b64 = query_true(r, "base64_encoded"), wait = query_true(r, "wait");
	j0r_fields fields;
	if (judge0_render_fields_parse(http_query(r, "fields"), &fields, bad, sizeof bad) < 0) {
		j0_error(r, 400, "invalid fields: [%s]", bad);
		return;
	}
	if (request_parse_json(a->cfg, r->body.buf, r->body.len, &in, &e) < 0) {
		j0_error(r, e.http_status, "%s", e.message);
		return;
	}
	if (validate(a, in, b64, &p, &front, &ej, &status) < 0) {
		http_respond_json(r, status, ej);
		goto out;
	}
	struct queue_new qn = {.request = p.request,
			       .priority = QUEUE_PRIO_INTERACTIVE,
			       .api_key_id = a->auth_on ? r->key_id : 0,
			       .callback_url = p.callback_url,
			       .front = front};
	int64_t id = 0;
	struct waiter_mark mark;
	if (submit_enqueue_one(a, &qn, &id, NULL, &mark, err, sizeof err) < 0) {
		render_db_error(r, "judge0 enqueue", err);
		goto out;
	}
	log_debug("judge0: submission %" PRId64 " queued%s", id, wait ? " (wait)" : "");
	if (wait) {
		submit_wait(r, a, id, clock_mono_ms() + a->cfg->max_wait_s * 1000, answer_wait,
			    &mark);
		goto out;
	}
	char tok[1][37];
	if (read_tokens(a, &id, 1, tok, err, sizeof err) < 0) {
		render_db_error(r, "judge0 token", err);
		goto out;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "token", tok[0]);
	http_respond_json(r, 201, o);
	cJSON_Delete(o);
out:
	request_parsed_release(&p);
	cJSON_Delete(front);
	cJSON_Delete(ej);
	cJSON_Delete(in);
}

void judge0_get(struct http_request *r, struct api *a, const char *token)
{
	char err[256];
	struct queue_sub s;
	queue_sub_init(&s);
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc =
	    db ? queue_get_token(db, token, a->auth_on ? r->key_id : 0, &s, err, sizeof err) : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		render_db_error(r, "judge0 get", err);
	else if (rc == 0)
		j0_error(r, 404, "submission '%.40s' not found", token);
	else
		answer_sub(r, a, &s, 200);
	queue_sub_release(&s);
}

/* GET /submissions/batch?tokens=T1,T2 */
static void batch_get(struct http_request *r, struct api *a)
{
	const char *tokens = http_query(r, "tokens");
	char err[256], bad[80];
	j0r_fields fields;
	if (judge0_render_fields_parse(http_query(r, "fields"), &fields, bad, sizeof bad) < 0) {
		j0_error(r, 400, "invalid fields: [%s]", bad);
		return;
	}
	if (!tokens || !*tokens) {
		j0_error(r, 400, "tokens is required (tokens=T1,T2,...)");
		return;
	}
	bool b64 = query_true(r, "base64_encoded");
	cJSON *o = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(o, "submissions");
	struct db *db = api_db(a, 5000, err, sizeof err);
	if (!db) {
		render_db_error(r, "judge0 batch get", err);
		goto out;
	}
	long n = 0;
	for (const char *p = tokens; *p;) {
		size_t len = strcspn(p, ",");
		char tok[40] = "";
		if (len < sizeof tok)
			memcpy(tok, p, len);
		if (++n > a->cfg->max_batch) {
			j0_error(r, 400, "at most %ld tokens", a->cfg->max_batch);
			goto out;
		}
		struct queue_sub s;
		queue_sub_init(&s);
		int rc = queue_get_token(db, tok, a->auth_on ? r->key_id : 0, &s, err, sizeof err);
		if (rc < 0) {
			render_db_error(r, "judge0 batch get", err);
			goto out;
		}
		cJSON *sj =
		    rc ? judge0_render_submission(&s, &a->langs, fields, b64) : cJSON_CreateNull();
		queue_sub_release(&s);
		if (!sj) {
			j0_error(r, 400, NOT_UTF8_BATCH);
			goto out;
		}
		cJSON_AddItemToArray(arr, sj);
		p += len + (p[len] == ',');
	}
	http_respond_json(r, 200, o);
out:
	if (db)
		db_pool_put(a->pool, db);
	cJSON_Delete(o);
}

/* POST /submissions/batch {"submissions": [...]}: each valid item is queued
 * (all in one transaction), each invalid one answered with its errors. */
static void batch_post(struct http_request *r, struct api *a)
{
	cJSON *in = NULL, *out = NULL;
	struct request_error e;
	char err[256];
	bool b64 = query_true(r, "base64_encoded");
	int n = 0, nq = 0;
	struct request_parsed *ps = NULL;
	cJSON **fronts = NULL;
	struct queue_new *qn = NULL;
	int64_t *ids = NULL;
	char(*toks)[37] = NULL;
	if (request_parse_json(a->cfg, r->body.buf, r->body.len, &in, &e) < 0) {
		j0_error(r, e.http_status, "%s", e.message);
		return;
	}
	const cJSON *subs = cJSON_GetObjectItemCaseSensitive(in, "submissions");
	n = cJSON_GetArraySize(subs);
	if (!cJSON_IsArray(subs) || n < 1 || n > a->cfg->max_batch) {
		j0_error(r, cJSON_IsArray(subs) && n ? 413 : 422,
			 "submissions must be an array of 1 to %ld submissions", a->cfg->max_batch);
		goto out;
	}
	ps = xcalloc((size_t)n, sizeof *ps);
	fronts = xcalloc((size_t)n, sizeof *fronts);
	qn = xcalloc((size_t)n, sizeof *qn);
	ids = xcalloc((size_t)n, sizeof *ids);
	toks = xcalloc((size_t)n, sizeof *toks);
	out = cJSON_CreateArray();
	const cJSON *it;
	int i = 0;
	cJSON_ArrayForEach(it, subs)
	{
		cJSON *ej = NULL;
		int status;
		if (validate(a, it, b64, &ps[i], &fronts[i], &ej, &status) < 0) {
			cJSON_AddItemToArray(out, ej);
		} else {
			cJSON_AddItemToArray(out, cJSON_CreateNull()); /* the token, below */
			qn[nq++] = (struct queue_new){.request = ps[i].request,
						      .priority = QUEUE_PRIO_BULK,
						      .api_key_id = a->auth_on ? r->key_id : 0,
						      .callback_url = ps[i].callback_url,
						      .front = fronts[i]};
		}
		i++;
	}
	if (nq) {
		struct db *db = api_db(a, 5000, err, sizeof err);
		int rc =
		    db ? queue_enqueue_batch(db, qn, (size_t)nq, ids, NULL, err, sizeof err) : -1;
		if (db)
			db_pool_put(a->pool, db);
		if (rc < 0 || read_tokens(a, ids, (size_t)nq, toks, err, sizeof err) < 0) {
			render_db_error(r, "judge0 batch", err);
			goto out;
		}
	}
	int k = 0;
	for (i = 0; i < n; i++) {
		if (!fronts[i])
			continue;
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "token", toks[k++]);
		cJSON_ReplaceItemInArray(out, i, t);
	}
	http_respond_json(r, 201, out);
out:
	for (i = 0; ps && i < n; i++) {
		request_parsed_release(&ps[i]);
		cJSON_Delete(fronts[i]);
	}
	free(ps);
	free(fronts);
	free(qn);
	free(ids);
	free(toks);
	cJSON_Delete(out);
	cJSON_Delete(in);
}

void judge0_batch(struct http_request *r, struct api *a)
{
	if (!strcmp(r->method, "POST"))
		batch_post(r, a);
	else
		batch_get(r, a);
}

/* ---- read-only endpoints ---- */

void judge0_languages(struct http_request *r, struct api *a, bool all)
{
	cJSON *arr = cJSON_CreateArray();
	for (int i = 0; i < a->langs.njudge0; i++) {
		const struct lang_judge0 *j = &a->langs.judge0[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "id", j->id);
		cJSON_AddStringToObject(o, "name", j->lang->judge0_name);
		if (all)
			cJSON_AddFalseToObject(o, "is_archived");
		cJSON_AddItemToArray(arr, o);
	}
	http_respond_json(r, 200, arr);
	cJSON_Delete(arr);
}

/* argv as one command line, or null. */
static void add_argv(cJSON *o, const char *name, char **argv)
{
	if (!argv) {
		cJSON_AddNullToObject(o, name);
		return;
	}
	struct strbuf b = STRBUF_INIT;
	for (int i = 0; argv[i]; i++)
		strbuf_addf(&b, "%s%s", i ? " " : "", argv[i]);
	cJSON_AddStringToObject(o, name, b.buf ? b.buf : "");
	strbuf_release(&b);
}

void judge0_language(struct http_request *r, struct api *a, const char *id)
{
	if (!strcmp(id, "all"))
		return judge0_languages(r, a, true);
	char *end;
	long v = strtol(id, &end, 10);
	const struct lang *l = *id && !*end ? lang_by_judge0(&a->langs, v) : NULL;
	if (!l) {
		j0_error(r, 404, "language with id '%.20s' doesn't exist", id);
		return;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", v);
	cJSON_AddStringToObject(o, "name", l->judge0_name);
	cJSON_AddFalseToObject(o, "is_archived");
	cJSON_AddStringToObject(o, "source_file", l->source_file);
	add_argv(o, "compile_cmd", l->compile_argv);
	add_argv(o, "run_cmd", l->run_argv);
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

void judge0_statuses(struct http_request *r, struct api *a)
{
	(void)a;
	cJSON *arr = cJSON_CreateArray();
	for (int id = 1; judge0_render_status_name(id); id++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "id", id);
		cJSON_AddStringToObject(o, "description", judge0_render_status_name(id));
		cJSON_AddItemToArray(arr, o);
	}
	http_respond_json(r, 200, arr);
	cJSON_Delete(arr);
}

void judge0_about(struct http_request *r, struct api *a)
{
	(void)a;
	cJSON *o = cJSON_CreateObject();
	/* the Judge0 API version whose shapes this front follows */
	cJSON_AddStringToObject(o, "version", "1.13.1");
	cJSON_AddStringToObject(o, "homepage", "");
	cJSON_AddStringToObject(o, "source_code", "");
	cJSON_AddStringToObject(o, "maintainer", "judge: a Judge0 CE compatible API");
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

void judge0_config_info(struct http_request *r, struct api *a)
{
	const struct judge_config *cfg = a->cfg;
	struct limits_policy pol;
	limits_policy_from_config(cfg, &pol);
	bool callbacks = cfg->callback_hosts && *cfg->callback_hosts;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddFalseToObject(o, "maintenance_mode");
	cJSON_AddTrueToObject(o, "enable_wait_result");
	cJSON_AddTrueToObject(o, "enable_compiler_options");
	/* the languages whose compile command takes them ({options}) */
	cJSON *allowed = cJSON_AddArrayToObject(o, "allowed_languages_for_compile_options");
	for (int i = 0; i < a->langs.njudge0; i++) {
		const struct lang *l = a->langs.judge0[i].lang;
		if (l->compile_options_at >= 0)
			cJSON_AddItemToArray(allowed, cJSON_CreateString(l->judge0_name));
	}
	cJSON_AddTrueToObject(o, "enable_command_line_arguments");
	cJSON_AddFalseToObject(o, "enable_submission_delete");
	cJSON_AddBoolToObject(o, "enable_callbacks", callbacks);
	cJSON_AddNumberToObject(o, "callbacks_max_tries", (double)cfg->callback_attempts);
	cJSON_AddNumberToObject(o, "callbacks_timeout", 10);
	cJSON_AddTrueToObject(o, "enable_additional_files");
	cJSON_AddNumberToObject(o, "max_queue_size", 0);
	cJSON_AddNumberToObject(o, "cpu_time_limit", pol.time_ms / 1000.0);
	cJSON_AddNumberToObject(o, "max_cpu_time_limit", pol.max_time_ms / 1000.0);
	cJSON_AddNumberToObject(o, "cpu_extra_time", 0);
	cJSON_AddNumberToObject(o, "max_cpu_extra_time", 0);
	cJSON_AddNumberToObject(o, "wall_time_limit",
				limits_wall_ms(pol.time_ms, pol.wall_factor) / 1000.0);
	cJSON_AddNumberToObject(o, "max_wall_time_limit",
				limits_wall_ms(pol.max_time_ms, pol.wall_factor) / 1000.0);
	cJSON_AddNumberToObject(o, "memory_limit", (double)pol.memory_mb * 1024);
	cJSON_AddNumberToObject(o, "max_memory_limit", (double)pol.max_memory_mb * 1024);
	cJSON_AddNumberToObject(o, "stack_limit", (double)pol.memory_mb * 1024);
	cJSON_AddNumberToObject(o, "max_stack_limit", (double)pol.max_memory_mb * 1024);
	cJSON_AddNumberToObject(o, "max_processes_and_or_threads", (double)pol.processes);
	cJSON_AddNumberToObject(o, "max_max_processes_and_or_threads", (double)pol.max_processes);
	cJSON_AddFalseToObject(o, "enable_per_process_and_thread_time_limit");
	cJSON_AddFalseToObject(o, "allow_enable_per_process_and_thread_time_limit");
	cJSON_AddFalseToObject(o, "enable_per_process_and_thread_memory_limit");
	cJSON_AddFalseToObject(o, "allow_enable_per_process_and_thread_memory_limit");
	cJSON_AddNumberToObject(o, "max_file_size", (double)pol.output_kb);
	cJSON_AddNumberToObject(o, "max_max_file_size", (double)pol.max_output_kb);
	cJSON_AddNumberToObject(o, "number_of_runs", 1);
	cJSON_AddNumberToObject(o, "max_number_of_runs", 1);
	cJSON_AddFalseToObject(o, "redirect_stderr_to_stdout");
	cJSON_AddNumberToObject(o, "max_extract_size", 0);
	cJSON_AddTrueToObject(o, "enable_batched_submissions");
	cJSON_AddNumberToObject(o, "max_submission_batch_size", (double)cfg->max_batch);
	cJSON_AddNumberToObject(o, "submission_cache_duration", 0);
	cJSON_AddFalseToObject(o, "use_docs_as_homepage");
	cJSON_AddFalseToObject(o, "allow_enable_network");
	cJSON_AddFalseToObject(o, "enable_network");
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

char *judge0_callback_format(const struct queue_sub *s, const char **method)
{
	const cJSON *api = cJSON_GetObjectItemCaseSensitive(s->front, "api");
	if (!cJSON_IsString(api) || strcmp(api->valuestring, "judge0"))
		return NULL;
	*method = "PUT";
	j0r_fields fields;
	char bad[8];
	judge0_render_fields_parse(NULL, &fields, bad, sizeof bad);
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(s->front, "base64_encoded");
	/* Judge0's default fields hold no language: no names needed */
	cJSON *o = judge0_render_submission(s, NULL, fields, cJSON_IsTrue(b));
	/* output that is not UTF-8 can only travel as base64 */
	if (!o)
		o = judge0_render_submission(s, NULL, fields, true);
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return text;
}
