/* sesscall: session calls and replies, typed, and their stored JSON (see sesscall.h). */
#include "judge/service/session/sesscall.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

/* ---- kinds and errors ---- */

static const struct {
	const char *name;
	bool serial;
} kinds[SCALL_KIND_COUNT] = {
    [SCALL_EXECUTE] = {"execute", true},
    [SCALL_INSTALL] = {"install", true},
    [SCALL_FILE_PUT] = {"file_put", true},
    [SCALL_FILE_GET] = {"file_get", true},
    [SCALL_FILE_LIST] = {"file_list", true},
    [SCALL_FILE_DELETE] = {"file_delete", true},
    [SCALL_CLOSE] = {"close", true},
    [SCALL_CONTEXT_CREATE] = {"context_create", true},
    [SCALL_CONTEXT_LIST] = {"context_list", true},
    [SCALL_CONTEXT_RESTART] = {"context_restart", true},
    [SCALL_CONTEXT_REMOVE] = {"context_remove", true},
    [SCALL_PROCESS_START] = {"process_start", false},
    [SCALL_PROCESS_INPUT] = {"process_input", false},
    [SCALL_PROCESS_CLOSE_STDIN] = {"process_close_stdin", false},
    [SCALL_PROCESS_SIGNAL] = {"process_signal", false},
    [SCALL_PROCESS_WAIT] = {"process_wait", false},
    [SCALL_PROCESS_LIST] = {"process_list", false},
    [SCALL_PAUSE] = {"pause", true},
    [SCALL_SNAPSHOT] = {"snapshot", true},
    [SCALL_FILE_STAT] = {"file_stat", true},
    [SCALL_FILE_MKDIR] = {"file_mkdir", true},
    [SCALL_FILE_MOVE] = {"file_move", true},
    [SCALL_WATCH_START] = {"watch_start", false},
    [SCALL_WATCH_EVENTS] = {"watch_events", false},
    [SCALL_WATCH_STOP] = {"watch_stop", false},
    [SCALL_INTERRUPT] = {"interrupt", false},
};

const char *scall_kind_name(enum scall_kind k)
{
	return k >= 0 && k < SCALL_KIND_COUNT ? kinds[k].name : "unknown";
}

int scall_kind_parse(const char *s)
{
	for (int i = 0; s && i < SCALL_KIND_COUNT; i++)
		if (!strcmp(s, kinds[i].name))
			return i;
	return -1;
}

bool scall_kind_serial(enum scall_kind k)
{
	return k < 0 || k >= SCALL_KIND_COUNT || kinds[k].serial;
}

static const char *const err_names[SERR_COUNT] = {
    [SERR_NONE] = "none",
    [SERR_BAD_REQUEST] = "bad_request",
    [SERR_NOT_FOUND] = "not_found",
    [SERR_BAD_PATH] = "bad_path",
    [SERR_IS_A_DIRECTORY] = "is_a_directory",
    [SERR_NOT_A_DIRECTORY] = "not_a_directory",
    [SERR_TOO_LARGE] = "too_large",
    [SERR_DISK_FULL] = "disk_full",
    [SERR_INSTALL_FAILED] = "install_failed",
    [SERR_NO_CONTEXT] = "no_context",
    [SERR_NO_PROCESS] = "no_process",
    [SERR_CONFLICT] = "conflict",
    [SERR_FORBIDDEN] = "forbidden",
    [SERR_LIMIT] = "limit",
    [SERR_SESSION_CLOSED] = "session_closed",
    [SERR_SESSION_LOST] = "session_lost",
    [SERR_IMAGE_TOO_LARGE] = "image_too_large",
    [SERR_INTERNAL] = "internal_error",
};

const char *sess_err_name(enum sess_err e)
{
	return e >= 0 && e < SERR_COUNT ? err_names[e] : err_names[SERR_INTERNAL];
}

enum sess_err sess_err_parse(const char *s)
{
	for (int i = 0; s && i < SERR_COUNT; i++)
		if (!strcmp(s, err_names[i]))
			return (enum sess_err)i;
	return SERR_INTERNAL;
}

/* ---- helpers ---- */

static void copy(char *dst, size_t n, const char *s)
{
	snprintf(dst, n, "%s", s ? s : "");
}

static const char *str_of(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static char *dup_of(const cJSON *o, const char *name)
{
	const char *s = str_of(o, name);
	return s ? xstrdup(s) : NULL;
}

static long long num_of(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return cJSON_IsNumber(v) ? (long long)v->valuedouble : 0;
}

static bool bool_of(const cJSON *o, const char *name)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, name));
}

/* A JSON array of strings as a NULL-terminated list (NULL when absent). */
static char **strv_of(const cJSON *o, const char *name)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, name);
	if (!cJSON_IsArray(a))
		return NULL;
	char **v = xcalloc((size_t)cJSON_GetArraySize(a) + 1, sizeof *v);
	size_t n = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, a) if (cJSON_IsString(it)) v[n++] = xstrdup(it->valuestring);
	return v;
}

static void add_strv(cJSON *o, const char *name, char *const *v)
{
	cJSON *a = cJSON_AddArrayToObject(o, name);
	for (char *const *p = v; p && *p; p++)
		cJSON_AddItemToArray(a, cJSON_CreateString(*p));
}

static void add_text(cJSON *o, const char *name, const char *s)
{
	cJSON_AddStringToObject(o, name, s ? s : "");
}

static void add_buf(cJSON *o, const char *name, const struct strbuf *b)
{
	cJSON_AddStringToObject(o, name, b->buf ? b->buf : "");
}

/* ---- calls ---- */

void sess_call_init(struct sess_call *c, enum scall_kind k)
{
	memset(c, 0, sizeof *c);
	c->kind = k;
	strbuf_init(&c->body);
	compare_options_init(&c->exec.cmp, CMP_LINES);
}

void sess_call_release(struct sess_call *c)
{
	free(c->exec.code);
	free(c->exec.stdin_data);
	xstrvfree(c->exec.env);
	free(c->exec.expected);
	xstrvfree(c->install.packages);
	free(c->path);
	free(c->to);
	strbuf_release(&c->body);
	for (size_t i = 0; i < c->nparts; i++)
		free(c->parts[i].path);
	free(c->parts);
	xstrvfree(c->proc.argv);
	xstrvfree(c->proc.env);
	enum scall_kind k = c->kind;
	memset(c, 0, sizeof *c);
	c->kind = k;
}

cJSON *sesscall_store(const struct sess_call *c)
{
	cJSON *o = cJSON_CreateObject();
	if (c->context[0])
		add_text(o, "context", c->context);
	switch (c->kind) {
	case SCALL_EXECUTE:
		add_text(o, "code", c->exec.code);
		if (c->exec.stdin_data)
			add_text(o, "stdin", c->exec.stdin_data);
		if (c->exec.env)
			add_strv(o, "env", c->exec.env);
		if (c->exec.timeout_ms)
			cJSON_AddNumberToObject(o, "timeout_ms", (double)c->exec.timeout_ms);
		if (c->exec.expected)
			add_text(o, "expected_output", c->exec.expected);
		if (c->exec.has_compare)
			model_compare_render(o, &c->exec.cmp);
		if (c->exec.stream)
			cJSON_AddBoolToObject(o, "stream", true);
		if (c->exec.language[0])
			add_text(o, "language", c->exec.language);
		break;
	case SCALL_INSTALL:
		add_text(o, "manager", c->install.manager);
		add_strv(o, "packages", c->install.packages);
		break;
	case SCALL_FILE_PUT:
	case SCALL_FILE_GET:
	case SCALL_FILE_LIST:
	case SCALL_FILE_DELETE:
	case SCALL_FILE_STAT:
	case SCALL_FILE_MKDIR:
	case SCALL_FILE_MOVE:
		add_text(o, "path", c->path);
		if (c->to)
			add_text(o, "to", c->to);
		if (c->depth > 1)
			cJSON_AddNumberToObject(o, "depth", c->depth);
		if (c->nparts) {
			cJSON *a = cJSON_AddArrayToObject(o, "parts");
			for (size_t i = 0; i < c->nparts; i++) {
				cJSON *e = cJSON_CreateObject();
				add_text(e, "path", c->parts[i].path);
				cJSON_AddNumberToObject(e, "size", (double)c->parts[i].len);
				cJSON_AddItemToArray(a, e);
			}
		}
		break;
	case SCALL_CONTEXT_CREATE:
		if (c->ctx.language[0])
			add_text(o, "language", c->ctx.language);
		if (c->path)
			add_text(o, "cwd", c->path);
		break;
	case SCALL_PROCESS_START:
		add_strv(o, "argv", c->proc.argv);
		if (c->proc.env)
			add_strv(o, "env", c->proc.env);
		if (c->path)
			add_text(o, "cwd", c->path);
		if (c->proc.stdin_open)
			cJSON_AddBoolToObject(o, "stdin", true);
		if (c->proc.timeout_ms)
			cJSON_AddNumberToObject(o, "timeout_ms", (double)c->proc.timeout_ms);
		if (c->proc.tag[0])
			add_text(o, "tag", c->proc.tag);
		if (c->proc.relayed)
			cJSON_AddTrueToObject(o, "relayed");
		break;
	case SCALL_PROCESS_SIGNAL:
		cJSON_AddNumberToObject(o, "signal", c->proc.signal);
		/* fall through */
	case SCALL_PROCESS_INPUT:
	case SCALL_PROCESS_CLOSE_STDIN:
		cJSON_AddNumberToObject(o, "pid", (double)c->proc.pid);
		break;
	case SCALL_PROCESS_WAIT:
		cJSON_AddNumberToObject(o, "pid", (double)c->proc.pid);
		if (c->proc.timeout_ms)
			cJSON_AddNumberToObject(o, "timeout_ms", (double)c->proc.timeout_ms);
		break;
	case SCALL_SNAPSHOT:
		add_text(o, "name", c->image_name);
		if (c->checkpoint)
			cJSON_AddTrueToObject(o, "checkpoint");
		break;
	case SCALL_PAUSE:
		if (c->idle)
			cJSON_AddTrueToObject(o, "idle");
		break;
	case SCALL_WATCH_START:
		add_text(o, "path", c->path);
		cJSON_AddBoolToObject(o, "recursive", c->watch.recursive);
		cJSON_AddBoolToObject(o, "stream", c->watch.stream);
		if (c->watch.timeout_ms)
			cJSON_AddNumberToObject(o, "timeout_ms", (double)c->watch.timeout_ms);
		break;
	case SCALL_WATCH_EVENTS:
	case SCALL_WATCH_STOP:
		add_text(o, "watcher", c->watch.id);
		break;
	case SCALL_INTERRUPT:
		if (c->target)
			cJSON_AddNumberToObject(o, "call", (double)c->target);
		break;
	default:
		break;
	}
	return o;
}

/* A file_put's parts (none: one file at path), their sizes adding up to its
 * body's. Returns 0, or -1 with err. */
static int load_parts(const cJSON *request, struct sess_call *out, char *err, size_t errlen)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(request, "parts"), *it;
	size_t n = cJSON_IsArray(a) ? (size_t)cJSON_GetArraySize(a) : 0, sum = 0;
	if (n > SESS_MAX_PARTS) {
		snprintf(err, errlen, "the write has %zu files, more than %d", n, SESS_MAX_PARTS);
		return -1;
	}
	out->parts = n ? xcalloc(n, sizeof *out->parts) : NULL;
	cJSON_ArrayForEach(it, a)
	{
		struct sess_part *p = &out->parts[out->nparts++];
		p->path = xstrdup(str_of(it, "path") ? str_of(it, "path") : "");
		long long len = num_of(it, "size");
		p->len = len > 0 ? (size_t)len : 0;
		sum += p->len;
	}
	if (n && sum != out->body.len) {
		snprintf(err, errlen, "the write's parts hold %zu bytes, its body %zu", sum,
			 out->body.len);
		return -1;
	}
	return 0;
}

int sesscall_load(enum scall_kind k, const cJSON *request, const void *body, size_t len,
		  struct sess_call *out, char *err, size_t errlen)
{
	sess_call_init(out, k);
	if (k < 0 || k >= SCALL_KIND_COUNT) {
		snprintf(err, errlen, "unknown call kind %d", (int)k);
		return -1;
	}
	if (!cJSON_IsObject(request)) {
		snprintf(err, errlen, "the %s call has no request", scall_kind_name(k));
		return -1;
	}
	copy(out->context, sizeof out->context, str_of(request, "context"));
	if (body)
		strbuf_add(&out->body, body, len);
	switch (k) {
	case SCALL_EXECUTE: {
		out->exec.code = dup_of(request, "code");
		out->exec.stdin_data = dup_of(request, "stdin");
		out->exec.env = strv_of(request, "env");
		out->exec.timeout_ms = (long)num_of(request, "timeout_ms");
		out->exec.expected = dup_of(request, "expected_output");
		out->exec.stream = bool_of(request, "stream");
		copy(out->exec.language, sizeof out->exec.language, str_of(request, "language"));
		const cJSON *cmp = cJSON_GetObjectItemCaseSensitive(request, "compare");
		out->exec.has_compare = cmp != NULL;
		if (cmp && model_compare_load(cmp, &out->exec.cmp, err, errlen) < 0)
			return -1;
		if (!out->exec.code) {
			snprintf(err, errlen, "the cell has no code");
			return -1;
		}
		break;
	}
	case SCALL_INSTALL:
		copy(out->install.manager, sizeof out->install.manager, str_of(request, "manager"));
		out->install.packages = strv_of(request, "packages");
		if (!out->install.packages) {
			snprintf(err, errlen, "the install has no packages");
			return -1;
		}
		break;
	case SCALL_FILE_PUT:
	case SCALL_FILE_GET:
	case SCALL_FILE_LIST:
	case SCALL_FILE_DELETE:
	case SCALL_FILE_STAT:
	case SCALL_FILE_MKDIR:
	case SCALL_FILE_MOVE:
		out->path = xstrdup(str_of(request, "path") ? str_of(request, "path") : "");
		out->to = dup_of(request, "to");
		if (k == SCALL_FILE_MOVE && !out->to) {
			snprintf(err, errlen, "the move has no destination");
			return -1;
		}
		out->depth = (int)num_of(request, "depth");
		if (k == SCALL_FILE_PUT && load_parts(request, out, err, errlen) < 0)
			return -1;
		break;
	case SCALL_CONTEXT_CREATE:
		copy(out->ctx.language, sizeof out->ctx.language, str_of(request, "language"));
		out->path = dup_of(request, "cwd");
		break;
	case SCALL_SNAPSHOT:
		copy(out->image_name, sizeof out->image_name, str_of(request, "name"));
		out->checkpoint = bool_of(request, "checkpoint");
		break;
	case SCALL_PAUSE:
		out->idle = bool_of(request, "idle");
		break;
	case SCALL_WATCH_START:
		out->path = xstrdup(str_of(request, "path") ? str_of(request, "path") : "");
		out->watch.recursive = bool_of(request, "recursive");
		out->watch.stream = bool_of(request, "stream");
		out->watch.timeout_ms = (long)num_of(request, "timeout_ms");
		break;
	case SCALL_WATCH_EVENTS:
	case SCALL_WATCH_STOP:
		copy(out->watch.id, sizeof out->watch.id, str_of(request, "watcher"));
		break;
	case SCALL_INTERRUPT:
		out->target = (int64_t)num_of(request, "call");
		break;
	case SCALL_PROCESS_START:
		out->proc.argv = strv_of(request, "argv");
		out->proc.env = strv_of(request, "env");
		out->path = dup_of(request, "cwd");
		out->proc.stdin_open = bool_of(request, "stdin");
		out->proc.timeout_ms = (long)num_of(request, "timeout_ms");
		copy(out->proc.tag, sizeof out->proc.tag, str_of(request, "tag"));
		out->proc.relayed = bool_of(request, "relayed");
		if (!out->proc.argv || !out->proc.argv[0]) {
			snprintf(err, errlen, "the process has no argv");
			return -1;
		}
		break;
	case SCALL_PROCESS_INPUT:
	case SCALL_PROCESS_CLOSE_STDIN:
	case SCALL_PROCESS_SIGNAL:
	case SCALL_PROCESS_WAIT:
		out->proc.pid = (long)num_of(request, "pid");
		out->proc.signal = (int)num_of(request, "signal");
		out->proc.timeout_ms = (long)num_of(request, "timeout_ms");
		break;
	default:
		break;
	}
	return 0;
}

/* ---- replies ---- */

void sess_reply_init(struct sess_reply *r)
{
	memset(r, 0, sizeof *r);
	strbuf_init(&r->cell.out);
	strbuf_init(&r->cell.err);
	strbuf_init(&r->install.output);
	strbuf_init(&r->file.bytes);
	r->cell.session_memory_kb = -1;
	r->cell.checkpoint_age_s = -1;
	r->cell.status = CELL_INTERNAL_ERROR;
}

static void process_info_release(struct sess_process_info *p)
{
	xstrvfree(p->argv);
	free(p->cwd);
}

void sess_reply_release(struct sess_reply *r)
{
	strbuf_release(&r->cell.out);
	strbuf_release(&r->cell.err);
	free(r->cell.result);
	free(r->cell.error_name);
	free(r->cell.error_value);
	free(r->cell.error_traceback);
	free(r->cell.results);
	xstrvfree(r->install.packages);
	strbuf_release(&r->install.output);
	free(r->file.path);
	strbuf_release(&r->file.bytes);
	free(r->file.entries);
	for (size_t i = 0; i < r->ncontexts; i++)
		free(r->contexts[i].cwd);
	free(r->contexts);
	for (size_t i = 0; i < r->nprocs; i++)
		process_info_release(&r->procs[i]);
	free(r->procs);
	free(r->watch.events);
	memset(r, 0, sizeof *r);
}

struct sess_reply *sess_reply_fail(struct sess_reply *r, enum sess_err e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->message, sizeof r->message, fmt, ap);
	va_end(ap);
	r->err = e == SERR_NONE ? SERR_INTERNAL : e;
	return r;
}

void sess_reply_add_context(struct sess_reply *r, const char *id, const char *language,
			    const char *cwd)
{
	r->contexts = xreallocarray(r->contexts, r->ncontexts + 1, sizeof *r->contexts);
	struct sess_context_info *c = &r->contexts[r->ncontexts++];
	memset(c, 0, sizeof *c);
	copy(c->id, sizeof c->id, id);
	copy(c->language, sizeof c->language, language);
	c->cwd = xstrdup(cwd ? cwd : "");
}

struct sess_process_info *sess_reply_add_process(struct sess_reply *r,
						 const struct sess_process_info *p)
{
	r->procs = xreallocarray(r->procs, r->nprocs + 1, sizeof *r->procs);
	struct sess_process_info *c = &r->procs[r->nprocs++];
	*c = *p;
	c->argv = xstrvdup((const char *const *)p->argv);
	c->cwd = xstrdup(p->cwd ? p->cwd : "");
	return c;
}

void sesscall_cell_store(cJSON *o, const struct sess_cell *c)
{
	add_text(o, "status", cell_status_name(c->status));
	add_buf(o, "stdout", &c->out);
	add_buf(o, "stderr", &c->err);
	cJSON_AddBoolToObject(o, "stdout_truncated", c->out_truncated);
	cJSON_AddBoolToObject(o, "stderr_truncated", c->err_truncated);
	cJSON_AddItemToObject(o, "result",
			      c->result ? cJSON_CreateString(c->result) : cJSON_CreateNull());
	if (c->has_error) {
		cJSON *e = cJSON_AddObjectToObject(o, "error");
		add_text(e, "name", c->error_name);
		add_text(e, "value", c->error_value);
		add_text(e, "traceback", c->error_traceback);
	} else {
		cJSON_AddNullToObject(o, "error");
	}
	cJSON *rs = c->results ? cJSON_Parse(c->results) : NULL;
	if (!cJSON_IsArray(rs)) { /* none: an empty list, as the API shows it */
		cJSON_Delete(rs);
		rs = cJSON_CreateArray();
	}
	cJSON_AddItemToObject(o, "results", rs);
	if (c->results_dropped)
		cJSON_AddNumberToObject(o, "results_dropped", (double)c->results_dropped);
	cJSON_AddNumberToObject(o, "execution_count", (double)c->execution_count);
	cJSON_AddNumberToObject(o, "time_ms", (double)c->time_ms);
	cJSON_AddNumberToObject(o, "wall_ms", (double)c->wall_ms);
	cJSON_AddNumberToObject(o, "memory_kb", (double)c->memory_kb);
	cJSON_AddNumberToObject(o, "session_memory_kb", (double)c->session_memory_kb);
	cJSON_AddBoolToObject(o, "restarted", c->restarted);
	if (c->checkpoint_age_s >= 0) {
		cJSON *rc = cJSON_AddObjectToObject(o, "restored_from_checkpoint");
		cJSON_AddNumberToObject(rc, "age_s", (double)(long)(c->checkpoint_age_s * 10) / 10);
	}
	if (c->message[0])
		add_text(o, "message", c->message);
	if (c->has_verdict)
		add_text(o, "verdict", status_name(c->verdict));
	if (c->feedback.present) {
		const struct grade_feedback *f = &c->feedback;
		cJSON *fo = cJSON_AddObjectToObject(o, "feedback");
		cJSON_AddNumberToObject(fo, "line", (double)f->line);
		cJSON_AddNumberToObject(fo, "column", (double)f->column);
		add_text(fo, "expected", f->expected);
		add_text(fo, "got", f->got);
		add_text(fo, "message", f->message);
	}
}

static void load_cell(const cJSON *o, struct sess_cell *c)
{
	const char *st = str_of(o, "status");
	c->status = CELL_INTERNAL_ERROR;
	for (int i = 0; st && i < CELL_STATUS_COUNT; i++)
		if (!strcmp(st, cell_status_name((enum cell_status)i)))
			c->status = (enum cell_status)i;
	const char *s;
	if ((s = str_of(o, "stdout")))
		strbuf_addstr(&c->out, s);
	if ((s = str_of(o, "stderr")))
		strbuf_addstr(&c->err, s);
	c->out_truncated = bool_of(o, "stdout_truncated");
	c->err_truncated = bool_of(o, "stderr_truncated");
	c->result = dup_of(o, "result");
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
	if (cJSON_IsObject(e)) {
		c->has_error = true;
		c->error_name = xstrdup(str_of(e, "name") ? str_of(e, "name") : "");
		c->error_value = xstrdup(str_of(e, "value") ? str_of(e, "value") : "");
		c->error_traceback = xstrdup(str_of(e, "traceback") ? str_of(e, "traceback") : "");
	}
	const cJSON *rs = cJSON_GetObjectItemCaseSensitive(o, "results");
	if (cJSON_IsArray(rs) && rs->child)
		c->results = cJSON_PrintUnformatted(rs);
	c->results_dropped = (long)num_of(o, "results_dropped");
	c->execution_count = (long)num_of(o, "execution_count");
	c->time_ms = (long)num_of(o, "time_ms");
	c->wall_ms = (long)num_of(o, "wall_ms");
	c->memory_kb = (long)num_of(o, "memory_kb");
	c->session_memory_kb = (long)num_of(o, "session_memory_kb");
	c->restarted = bool_of(o, "restarted");
	const cJSON *rfc = cJSON_GetObjectItemCaseSensitive(o, "restored_from_checkpoint");
	c->checkpoint_age_s = cJSON_IsObject(rfc) ? num_of(rfc, "age_s") : -1;
	copy(c->message, sizeof c->message, str_of(o, "message"));
	const char *v = str_of(o, "verdict");
	c->has_verdict = v && status_parse(v, &c->verdict) == 0;
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "feedback");
	if (cJSON_IsObject(f)) {
		struct grade_feedback *fb = &c->feedback;
		fb->present = fb->has_position = fb->has_expected = true;
		fb->line = (long)num_of(f, "line");
		fb->column = (long)num_of(f, "column");
		copy(fb->expected, sizeof fb->expected, str_of(f, "expected"));
		copy(fb->got, sizeof fb->got, str_of(f, "got"));
		copy(fb->message, sizeof fb->message, str_of(f, "message"));
	}
}

static char dirent_code(const char *t)
{
	return !t		       ? 'o'
	       : !strcmp(t, "file")    ? 'f'
	       : !strcmp(t, "dir")     ? 'd'
	       : !strcmp(t, "symlink") ? 'l'
				       : 'o';
}

static const char *dirent_type(char t)
{
	return t == 'f' ? "file" : t == 'd' ? "dir" : t == 'l' ? "symlink" : "other";
}

static void store_processes(cJSON *o, const struct sess_reply *r)
{
	cJSON *a = cJSON_AddArrayToObject(o, "processes");
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct sess_process_info *p = &r->procs[i];
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "pid", (double)p->pid);
		add_strv(e, "argv", p->argv);
		add_text(e, "cwd", p->cwd);
		if (p->tag[0])
			add_text(e, "tag", p->tag);
		cJSON_AddBoolToObject(e, "running", p->running);
		cJSON_AddBoolToObject(e, "exited", p->exited);
		cJSON_AddNumberToObject(e, "exit_code", p->exit_code);
		cJSON_AddNumberToObject(e, "signal", p->signal);
		if (p->message[0])
			add_text(e, "message", p->message);
		cJSON_AddItemToArray(a, e);
	}
}

static void load_processes(const cJSON *o, struct sess_reply *r)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "processes"), *e;
	cJSON_ArrayForEach(e, a)
	{
		struct sess_process_info p = {0};
		p.pid = (long)num_of(e, "pid");
		p.argv = strv_of(e, "argv");
		p.cwd = dup_of(e, "cwd");
		copy(p.tag, sizeof p.tag, str_of(e, "tag"));
		p.running = bool_of(e, "running");
		p.exited = bool_of(e, "exited");
		p.exit_code = (int)num_of(e, "exit_code");
		p.signal = (int)num_of(e, "signal");
		copy(p.message, sizeof p.message, str_of(e, "message"));
		sess_reply_add_process(r, &p);
		process_info_release(&p);
	}
}

void sesscall_image_numbers(cJSON *o, const struct sess_reply *r)
{
	cJSON_AddNumberToObject(o, "size", (double)r->image.size);
	cJSON_AddNumberToObject(o, "stored", (double)r->image.stored);
	cJSON_AddNumberToObject(o, "files", (double)r->image.files);
	cJSON_AddNumberToObject(o, "skipped", (double)r->image.skipped);
	cJSON_AddNumberToObject(o, "time_ms", (double)r->image.ms);
	cJSON_AddBoolToObject(o, "memory", r->image.memory);
}

cJSON *sesscall_reply_store(enum scall_kind k, const struct sess_reply *r)
{
	cJSON *top = cJSON_CreateObject();
	if (r->err != SERR_NONE) {
		cJSON *e = cJSON_AddObjectToObject(top, "error");
		add_text(e, "code", sess_err_name(r->err));
		add_text(e, "message", r->message);
		return top;
	}
	cJSON *o = cJSON_AddObjectToObject(top, "reply");
	switch (k) {
	case SCALL_EXECUTE:
		sesscall_cell_store(o, &r->cell);
		break;
	case SCALL_INSTALL:
		cJSON_AddBoolToObject(o, "ok", r->install.ok);
		add_strv(o, "packages", r->install.packages);
		add_buf(o, "output", &r->install.output);
		cJSON_AddNumberToObject(o, "time_ms", (double)r->install.time_ms);
		if (r->install.message[0])
			add_text(o, "message", r->install.message);
		break;
	case SCALL_FILE_PUT:
	case SCALL_FILE_GET:
	case SCALL_FILE_LIST:
	case SCALL_FILE_DELETE:
	case SCALL_FILE_STAT:
	case SCALL_FILE_MKDIR:
	case SCALL_FILE_MOVE:
		add_text(o, "path", r->file.path);
		if (k == SCALL_FILE_PUT)
			cJSON_AddNumberToObject(o, "size", (double)r->file.size);
		if (k == SCALL_FILE_DELETE)
			cJSON_AddBoolToObject(o, "deleted", r->file.deleted);
		if (k == SCALL_FILE_MKDIR)
			cJSON_AddBoolToObject(o, "existed", r->file.existed);
		if (k == SCALL_FILE_GET)
			add_text(o, "content_type", r->file.type);
		if (r->file.nentries) {
			cJSON *a = cJSON_AddArrayToObject(o, "files");
			for (size_t i = 0; i < r->file.nentries; i++) {
				const struct sandbox_dirent *d = &r->file.entries[i];
				cJSON *e = cJSON_CreateObject();
				add_text(e, "name", d->name);
				add_text(e, "type", dirent_type(d->type));
				cJSON_AddNumberToObject(e, "size", (double)d->size);
				cJSON_AddNumberToObject(e, "mtime", (double)d->mtime);
				cJSON_AddNumberToObject(e, "mode", d->mode);
				cJSON_AddItemToArray(a, e);
			}
		} else if (k == SCALL_FILE_LIST) {
			cJSON_AddArrayToObject(o, "files");
		}
		break;
	case SCALL_CLOSE:
		add_text(o, "id", r->closed);
		break;
	case SCALL_INTERRUPT:
		cJSON_AddNumberToObject(o, "interrupted", r->interrupted);
		break;
	case SCALL_WATCH_START:
		add_text(o, "watcher", r->watch.id);
		break;
	case SCALL_WATCH_EVENTS: {
		cJSON *ev = r->watch.events ? cJSON_Parse(r->watch.events) : NULL;
		cJSON_AddItemToObject(o, "events", ev ? ev : cJSON_CreateArray());
		break;
	}
	case SCALL_PAUSE:
	case SCALL_SNAPSHOT:
		add_text(o, "image_id", r->image.id);
		add_text(o, "name", r->image.name);
		sesscall_image_numbers(o, r);
		break;
	default:
		break;
	}
	if (r->ncontexts) {
		cJSON *a = cJSON_AddArrayToObject(o, "contexts");
		for (size_t i = 0; i < r->ncontexts; i++) {
			cJSON *e = cJSON_CreateObject();
			add_text(e, "id", r->contexts[i].id);
			add_text(e, "language", r->contexts[i].language);
			add_text(e, "cwd", r->contexts[i].cwd);
			cJSON_AddItemToArray(a, e);
		}
	}
	if (r->nprocs)
		store_processes(o, r);
	return top;
}

int sesscall_reply_load(enum scall_kind k, const cJSON *response, const void *body, size_t len,
			struct sess_reply *out)
{
	sess_reply_init(out);
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(response, "error");
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(response, "reply");
	if (cJSON_IsObject(e)) {
		sess_reply_fail(out, sess_err_parse(str_of(e, "code")), "%s",
				str_of(e, "message") ? str_of(e, "message") : "");
		return 0;
	}
	if (!cJSON_IsObject(o)) {
		sess_reply_fail(out, SERR_INTERNAL, "the answer of the %s call cannot be read",
				scall_kind_name(k));
		return -1;
	}
	switch (k) {
	case SCALL_EXECUTE:
		load_cell(o, &out->cell);
		break;
	case SCALL_INSTALL:
		out->install.ok = bool_of(o, "ok");
		out->install.packages = strv_of(o, "packages");
		if (str_of(o, "output"))
			strbuf_addstr(&out->install.output, str_of(o, "output"));
		out->install.time_ms = (long)num_of(o, "time_ms");
		copy(out->install.message, sizeof out->install.message, str_of(o, "message"));
		break;
	case SCALL_FILE_PUT:
	case SCALL_FILE_GET:
	case SCALL_FILE_LIST:
	case SCALL_FILE_DELETE:
	case SCALL_FILE_STAT:
	case SCALL_FILE_MKDIR:
	case SCALL_FILE_MOVE: {
		out->file.path = xstrdup(str_of(o, "path") ? str_of(o, "path") : "");
		out->file.size = num_of(o, "size");
		out->file.deleted = bool_of(o, "deleted");
		out->file.existed = bool_of(o, "existed");
		copy(out->file.type, sizeof out->file.type, str_of(o, "content_type"));
		if (body)
			strbuf_add(&out->file.bytes, body, len);
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "files"), *it;
		size_t n = cJSON_IsArray(a) ? (size_t)cJSON_GetArraySize(a) : 0;
		out->file.entries = n ? xcalloc(n, sizeof *out->file.entries) : NULL;
		cJSON_ArrayForEach(it, a)
		{
			struct sandbox_dirent *d = &out->file.entries[out->file.nentries++];
			copy(d->name, sizeof d->name, str_of(it, "name"));
			d->type = dirent_code(str_of(it, "type"));
			d->size = num_of(it, "size");
			d->mtime = num_of(it, "mtime");
			d->mode = (int)num_of(it, "mode");
		}
		break;
	}
	case SCALL_CLOSE:
		copy(out->closed, sizeof out->closed, str_of(o, "id"));
		break;
	case SCALL_INTERRUPT:
		out->interrupted = (int)num_of(o, "interrupted");
		break;
	case SCALL_WATCH_START:
		copy(out->watch.id, sizeof out->watch.id, str_of(o, "watcher"));
		break;
	case SCALL_WATCH_EVENTS: {
		const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "events");
		out->watch.events = cJSON_IsArray(ev) ? cJSON_PrintUnformatted(ev) : xstrdup("[]");
		break;
	}
	case SCALL_PAUSE:
	case SCALL_SNAPSHOT:
		copy(out->image.id, sizeof out->image.id, str_of(o, "image_id"));
		copy(out->image.name, sizeof out->image.name, str_of(o, "name"));
		out->image.size = (long long)num_of(o, "size");
		out->image.stored = (long long)num_of(o, "stored");
		out->image.files = (long)num_of(o, "files");
		out->image.skipped = (long)num_of(o, "skipped");
		out->image.ms = (long)num_of(o, "time_ms");
		out->image.memory = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "memory"));
		break;
	default:
		break;
	}
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "contexts"), *it;
	cJSON_ArrayForEach(it, a) sess_reply_add_context(out, str_of(it, "id"),
							 str_of(it, "language"), str_of(it, "cwd"));
	load_processes(o, out);
	return 0;
}
