/* e2b_code: /execute and /health of the code interpreter, rendered from session cells. */
#include "judge/api/e2b_code.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "judge/api/api.h"
#include "judge/api/e2b_control.h"
#include "judge/api/http.h"
#include "judge/api/sessions.h"
#include "judge/api/sse.h"
#include "judge/grading/lang.h"
#include "judge/service/session/sesscall.h"

enum op {
	OP_EXECUTE,	    /* POST /execute */
	OP_HEALTH,	    /* GET /health */
	OP_CONTEXT_NEW,	    /* POST /contexts */
	OP_CONTEXT_LIST,    /* GET /contexts */
	OP_CONTEXT_REMOVE,  /* DELETE /contexts/{id} */
	OP_CONTEXT_RESTART, /* POST /contexts/{id}/restart */
};

/* The sandbox's home as E2B's users know it: the session folder. */
#define HOME "/home/user"

struct cctx {
	enum op op;
	const struct lang_registry *langs;
	char context[SESS_ID_MAX];
};

/* A judge language's E2B name: its first e2b_names, else its own. */
static const char *e2b_name(const struct lang_registry *langs, const char *judge_name)
{
	const struct lang *l = lang_find(langs, judge_name);
	return l && l->e2b_names[0] ? l->e2b_names[0] : judge_name;
}

/* A context of the session's /v1 JSON as E2B's {id, language, cwd}. */
static cJSON *context_json(const struct lang_registry *langs, const cJSON *c)
{
	const char *cwd = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "cwd"));
	const char *lang = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "language"));
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "id"));
	struct strbuf path = STRBUF_INIT;
	strbuf_addstr(&path, HOME);
	if (cwd && *cwd)
		strbuf_addf(&path, "/%s", cwd);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", id ? id : "");
	cJSON_AddStringToObject(o, "language", e2b_name(langs, lang ? lang : ""));
	cJSON_AddStringToObject(o, "cwd", path.buf);
	strbuf_release(&path);
	return o;
}

static void print_json(struct strbuf *out, cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);
	strbuf_addstr(out, s);
	free(s);
	cJSON_Delete(o);
}

/* One NDJSON line of o (deleted) onto out. */
static void line(struct strbuf *out, cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);
	strbuf_addstr(out, s);
	strbuf_addch(out, '\n');
	free(s);
	cJSON_Delete(o);
}

static cJSON *typed(const char *type)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "type", type);
	return o;
}

static void log_line(struct strbuf *out, const char *type, const char *text)
{
	if (!text || !*text)
		return;
	char ts[32];
	clock_rfc3339_ms(clock_real_ms(), ts);
	cJSON *o = typed(type);
	cJSON_AddStringToObject(o, "text", text);
	cJSON_AddStringToObject(o, "timestamp", ts);
	line(out, o);
}

/* A repr's text as Jupyter's text/plain reaches the SDK: one pair of
 * surrounding quotes stripped (code-interpreter template/server, messaging.py). */
static char *plain_text(const char *repr)
{
	size_t n = strlen(repr);
	if (n >= 2 && (repr[0] == '\'' || repr[0] == '"') && repr[n - 1] == repr[0])
		return xstrndup(repr + 1, n - 2);
	return xstrdup(repr);
}

/* The Result fields of E2B's for MIME types (code-interpreter's
 * template/server/api/models/result.py; the SDKs' Result): the rest go in extra. */
static const struct {
	const char *mime, *field;
} result_fields[] = {
    /* clang-format off */
    {"text/plain", "text"},
    {"text/html", "html"},
    {"text/markdown", "markdown"},
    {"image/svg+xml", "svg"},
    {"image/png", "png"},
    {"image/jpeg", "jpeg"},
    {"application/pdf", "pdf"},
    {"text/latex", "latex"},
    {"application/json", "json"},
    {"application/javascript", "javascript"}, /* lang-ok: a Result field */
    {"e2b/data", "data"},
    {"e2b/chart", "chart"},
    /* clang-format on */
};

/* One result of the cell's /v1 results (a MIME bundle) as E2B's result line. */
static cJSON *result_line(const cJSON *bundle)
{
	cJSON *o = typed("result"), *extra = cJSON_CreateObject(), *x;
	cJSON_ArrayForEach(x, bundle)
	{
		if (!x->string || !strcmp(x->string, "is_main_result"))
			continue;
		const char *field = NULL;
		for (size_t i = 0; i < sizeof result_fields / sizeof *result_fields; i++)
			if (!strcmp(x->string, result_fields[i].mime))
				field = result_fields[i].field;
		if (field && !strcmp(field, "text") && cJSON_IsString(x)) {
			char *text = plain_text(x->valuestring);
			cJSON_AddStringToObject(o, "text", text);
			free(text);
		} else {
			cJSON_AddItemToObject(field ? o : extra, field ? field : x->string,
					      cJSON_Duplicate(x, 1));
		}
	}
	cJSON_AddItemToObject(o, "extra", extra);
	cJSON_AddBoolToObject(
	    o, "is_main_result",
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(bundle, "is_main_result")));
	return o;
}

/* The error line of a cell that did not finish on its own (timeout, memory ...). */
static const char *status_error(const char *status)
{
	if (!strcmp(status, "timeout"))
		return "TimeoutError";
	if (!strcmp(status, "memory_limit"))
		return "MemoryError";
	if (!strcmp(status, "output_limit"))
		return "OutputLimitError";
	return "ExecutionError";
}

static void count_line(struct strbuf *out, const cJSON *n)
{
	cJSON *o = typed("number_of_executions");
	cJSON_AddNumberToObject(o, "execution_count", cJSON_IsNumber(n) ? n->valuedouble : 0);
	line(out, o);
}

/* The end of a cell's NDJSON from its /v1 JSON: its results, its error, end_of_execution. */
static void end_lines(const cJSON *cell, struct strbuf *out)
{
	cJSON *o;
	const char *result = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cell, "result"));
	const cJSON *results = cJSON_GetObjectItemCaseSensitive(cell, "results"), *x;
	/* a driver with rich results gives its value among them; the others (C#,
	 * bash) the value's text alone */
	if (cJSON_GetArraySize(results) > 0) {
		cJSON_ArrayForEach(x, results)
		{
			if (cJSON_IsObject(x))
				line(out, result_line(x));
		}
	} else if (result) {
		char *text = plain_text(result);
		o = typed("result");
		cJSON_AddStringToObject(o, "text", text);
		cJSON_AddBoolToObject(o, "is_main_result", true);
		line(out, o);
		free(text);
	}
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(cell, "error");
	const char *status = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cell, "status"));
	if (cJSON_IsObject(err)) {
		o = typed("error");
		static const char *const keys[] = {"name", "value", "traceback"};
		for (size_t i = 0; i < 3; i++) {
			const char *v =
			    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(err, keys[i]));
			cJSON_AddStringToObject(o, keys[i], v ? v : "");
		}
		line(out, o);
	} else if (status && strcmp(status, "ok") && strcmp(status, "error")) {
		const char *msg =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cell, "message"));
		o = typed("error");
		cJSON_AddStringToObject(o, "name", status_error(status));
		cJSON_AddStringToObject(o, "value", msg && *msg ? msg : status);
		cJSON_AddStringToObject(o, "traceback", "");
		line(out, o);
	}
	line(out, typed("end_of_execution"));
}

/* The cell's /v1 JSON as the NDJSON lines of /execute (all at once). */
static void execute_lines(const cJSON *cell, struct strbuf *out)
{
	count_line(out, cJSON_GetObjectItemCaseSensitive(cell, "execution_count"));
	log_line(out, "stdout",
		 cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cell, "stdout")));
	log_line(out, "stderr",
		 cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cell, "stderr")));
	end_lines(cell, out);
}

/* http_request.event_transform of a streamed cell (sessions_execute_events):
 * start, stdout and stderr as they come, then the rest from done's whole
 * cell; the relay's result and error are done's too, so they are skipped. */
static bool stream_line(struct http_request *r, const char *event, const char *data,
			struct strbuf *out, void *arg)
{
	(void)r;
	(void)arg;
	cJSON *d = cJSON_Parse(data);
	bool end = !strcmp(event, "done");
	if (!strcmp(event, "start")) {
		count_line(out, cJSON_GetObjectItemCaseSensitive(d, "execution_count"));
	} else if (!strcmp(event, "stdout") || !strcmp(event, "stderr")) {
		log_line(out, event, cJSON_GetStringValue(d));
	} else if (end) {
		const cJSON *err = cJSON_GetObjectItemCaseSensitive(d, "error");
		if (cJSON_IsObject(err) && cJSON_GetObjectItemCaseSensitive(d, "http")) {
			/* the cell never ended on its own (its worker lost): as E2B's
			 * server reports an execution cut short */
			const char *msg =
			    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(err, "message"));
			cJSON *o = typed("error");
			cJSON_AddStringToObject(o, "name", "UnexpectedEndOfExecution");
			cJSON_AddStringToObject(o, "value", msg ? msg : "");
			cJSON_AddStringToObject(o, "traceback", "");
			line(out, o);
			line(out, typed("end_of_execution"));
		} else {
			end_lines(d, out);
		}
	}
	cJSON_Delete(d);
	return end;
}

/* A streamed cell's answer: NDJSON, a keepalive line while nothing is printed. */
static const char keepalive[] = "{\"type\":\"keepalive\"}\n";
static const struct sse_opts framing = {
    .content_type = "application/x-ndjson",
    .keepalive = keepalive,
    .keepalive_len = sizeof keepalive - 1,
};

/* The transform: a session's answer as the code interpreter's. */
static int render(struct http_request *r, int status, const char *body, size_t len,
		  struct strbuf *out, void *arg)
{
	(void)r;
	(void)len;
	struct cctx *c = arg;
	if (status >= 300) {
		struct strbuf m = STRBUF_INIT;
		e2b_control_message(body, &m);
		const char *msg = m.buf ? m.buf : "";
		int st = status;
		/* no such session, or one that ended: E2B's edge says 502 */
		if (status == 410 || (status == 404 && !strncmp(msg, "no session", 10)))
			st = 502;
		else if (status == 422)
			st = 400;
		else if (status == 429 || status == 409)
			st = 500; /* the server's answer to a context it cannot make */
		if (status == 404 && st == 404)
			strbuf_addf(out, "Context %s not found", c->context);
		else
			strbuf_addstr(out, msg);
		strbuf_release(&m);
		return st;
	}
	cJSON *j = cJSON_Parse(body);
	int ret = 200;
	if (c->op == OP_HEALTH) {
		const char *st =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "status"));
		bool up = st && !strcmp(st, "ready");
		strbuf_addstr(out, up ? "\"OK\"" : "the sandbox is not running");
		ret = up ? 200 : 502;
	} else if (c->op == OP_EXECUTE) {
		execute_lines(j, out);
	} else if (c->op == OP_CONTEXT_NEW) {
		print_json(out, context_json(c->langs, j));
	} else if (c->op == OP_CONTEXT_LIST) {
		cJSON *arr = cJSON_CreateArray(), *x;
		cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(j, "contexts"))
		{
			cJSON_AddItemToArray(arr, context_json(c->langs, x));
		}
		print_json(out, arr);
	} else {
		strbuf_addstr(out, "null");
	}
	cJSON_Delete(j);
	return ret;
}

static void plain(struct http_request *r, int status, const char *msg)
{
	http_respond(r, status, "text/plain", msg, strlen(msg), NULL);
}

/* The /v1 execute body of E2B's, into *out; 0, or -1 after a 400. */
static int execute_body(struct http_request *r, const struct lang_registry *langs, struct cctx *c,
			cJSON **out)
{
	cJSON *in = cJSON_ParseWithLength(r->body.buf ? r->body.buf : "", r->body.len);
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(in, "code");
	const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(in, "context_id");
	const cJSON *lang = cJSON_GetObjectItemCaseSensitive(in, "language");
	const cJSON *env = cJSON_GetObjectItemCaseSensitive(in, "env_vars");
	int ret = -1;
	if (!cJSON_IsString(code)) {
		plain(r, 400, "code is required");
		goto out;
	}
	if (cJSON_IsString(ctx) && cJSON_IsString(lang)) {
		plain(r, 400, "context_id and language are exclusive");
		goto out;
	}
	/* a language's default context, made at its first cell (E2B's server
	 * does the same); the default language's is the session's own */
	const struct lang *l = cJSON_IsString(lang) ? lang_by_e2b(langs, lang->valuestring) : NULL;
	if (cJSON_IsString(lang) && !l) {
		plain(r, 400, "no such language here");
		goto out;
	}
	if (env && !cJSON_IsNull(env) && !cJSON_IsObject(env)) {
		plain(r, 400, "env_vars must be an object of strings");
		goto out;
	}
	*out = cJSON_CreateObject();
	cJSON_AddStringToObject(*out, "code", code->valuestring);
	/* the cell's own variables: /v1's execute checks them (names, text, size) */
	if (cJSON_IsObject(env) && env->child)
		cJSON_AddItemToObject(*out, "env", cJSON_Duplicate(env, true));
	if (cJSON_IsString(ctx)) {
		snprintf(c->context, sizeof c->context, "%s", ctx->valuestring);
		cJSON_AddStringToObject(*out, "context", ctx->valuestring);
	}
	if (l && l != lang_by_e2b(langs, ""))
		cJSON_AddStringToObject(*out, "language", l->name);
	ret = 0;
out:
	cJSON_Delete(in);
	return ret;
}

/* The /v1 context body of E2B's {language?, cwd?} into *out; 0, or -1 after a 400. */
static int context_body(struct http_request *r, const struct lang_registry *langs, cJSON **out)
{
	cJSON *in = cJSON_ParseWithLength(r->body.buf ? r->body.buf : "", r->body.len);
	const cJSON *lang = cJSON_GetObjectItemCaseSensitive(in, "language");
	const cJSON *cwd = cJSON_GetObjectItemCaseSensitive(in, "cwd");
	int ret = -1;
	const struct lang *l = lang_by_e2b(langs, cJSON_IsString(lang) ? lang->valuestring : "");
	if (!l) {
		plain(r, 400, "no such language here");
		goto out;
	}
	const char *dir = cJSON_IsString(cwd) ? cwd->valuestring : HOME;
	size_t n = sizeof HOME - 1;
	if (strncmp(dir, HOME, n) || (dir[n] && dir[n] != '/')) {
		plain(r, 400, "cwd must be " HOME " or a folder under it");
		goto out;
	}
	dir += n + (dir[n] == '/');
	*out = cJSON_CreateObject();
	cJSON_AddStringToObject(*out, "language", l->name);
	if (*dir)
		cJSON_AddStringToObject(*out, "cwd", dir);
	ret = 0;
out:
	cJSON_Delete(in);
	return ret;
}

void e2b_code_handle(struct http_request *r, struct api *a, const char *sandbox)
{
	bool post = !strcmp(r->method, "POST"), del = !strcmp(r->method, "DELETE");
	struct cctx *c = xcalloc(1, sizeof *c);
	c->langs = &a->langs;
	static const char ctxs[] = "/contexts/";
	size_t nc = sizeof ctxs - 1;
	const char *sub = !strncmp(r->url, ctxs, nc) ? r->url + nc : NULL;
	size_t idlen = sub ? strcspn(sub, "/") : 0;
	if (sub)
		snprintf(c->context, sizeof c->context, "%.*s",
			 (int)(idlen < SESS_ID_MAX ? idlen : SESS_ID_MAX - 1), sub);
	if (post && !strcmp(r->url, "/execute")) {
		c->op = OP_EXECUTE;
	} else if (!post && !del && !strcmp(r->url, "/health")) {
		c->op = OP_HEALTH;
	} else if (!strcmp(r->url, "/contexts") && (post || !del)) {
		c->op = post ? OP_CONTEXT_NEW : OP_CONTEXT_LIST;
	} else if (sub && del && idlen && !sub[idlen]) {
		c->op = OP_CONTEXT_REMOVE;
	} else if (sub && post && idlen && !strcmp(sub + idlen, "/restart")) {
		c->op = OP_CONTEXT_RESTART;
	} else {
		free(c);
		plain(r, 404, "this judge does not serve that code interpreter endpoint");
		return;
	}
	cJSON *in = NULL;
	if ((c->op == OP_EXECUTE && execute_body(r, &a->langs, c, &in) < 0) ||
	    (c->op == OP_CONTEXT_NEW && context_body(r, &a->langs, &in) < 0)) {
		free(c);
		return;
	}
	r->transform = render;
	r->transform_arg = c;
	r->transform_free = free;
	switch (c->op) {
	case OP_EXECUTE:
		r->event_transform = stream_line;
		sessions_execute_events(r, a, sandbox, in, &framing);
		break;
	case OP_CONTEXT_NEW:
		sessions_call(r, a, sandbox, SCALL_CONTEXT_CREATE, in);
		break;
	case OP_CONTEXT_LIST:
		sessions_call(r, a, sandbox, SCALL_CONTEXT_LIST, NULL);
		break;
	case OP_CONTEXT_REMOVE:
		sessions_context(r, a, sandbox, c->context, SCALL_CONTEXT_REMOVE);
		break;
	case OP_CONTEXT_RESTART:
		sessions_context(r, a, sandbox, c->context, SCALL_CONTEXT_RESTART);
		break;
	case OP_HEALTH:
		sessions_get(r, a, sandbox);
	}
	cJSON_Delete(in);
}
