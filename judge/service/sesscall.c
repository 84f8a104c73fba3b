/* sesscall: one execute, install or file call in a held session (see sesscall.h). */
#include "judge/service/sesscall.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/xalloc.h"
#include "judge/grading/compare.h"
#include "judge/grading/lang.h"
#include "judge/grading/model.h"
#include "runner/install/install.h"
#include "runner/sandbox.h"
#include "runner/session/session.h"

/* The largest file the files API reads back (it travels through PostgreSQL). */
#define FILE_GET_MAX (64L << 20)

void sesscall_out_init(struct sesscall_out *o)
{
	memset(o, 0, sizeof *o);
	strbuf_init(&o->body);
}

void sesscall_out_release(struct sesscall_out *o)
{
	cJSON_Delete(o->response);
	strbuf_release(&o->body);
	memset(o, 0, sizeof *o);
}

cJSON *sesscall_error(int status, const char *code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "http", status);
	cJSON *e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddStringToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", msg);
	return o;
}

static cJSON *ok_body(cJSON *body)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "http", 200);
	cJSON_AddItemToObject(o, "body", body);
	return o;
}

static const char *str(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static long num(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return cJSON_IsNumber(v) ? (long)v->valuedouble : 0;
}

/* The cell's status as the API names it. */
static const char *cell_status(const struct cell_result *res, const cJSON *reply)
{
	/* stdout cut at its cap is output_limit, as in one-shot runs, also when the
	 * cell's reply came before the runner's next limit check */
	if (res->status == RUN_OK && res->out_truncated)
		return "output_limit";
	switch (res->status) {
	case RUN_OK: {
		const char *st = str(reply, "status");
		return st && !strcmp(st, "ok") ? "ok" : "error";
	}
	case RUN_TIMEOUT:
		return "timeout";
	case RUN_MEMORY_LIMIT:
		return "memory_limit";
	case RUN_OUTPUT_LIMIT:
		return "output_limit";
	case RUN_RUNTIME_ERROR:
		return "error"; /* the driver itself ended: exit(), a crash */
	default:
		return "internal_error";
	}
}

/* verdict and feedback against expected_output, as one-shot grading decides. */
static void add_verdict(cJSON *o, const cJSON *req, const char *status, const struct strbuf *out,
			const char *language)
{
	const char *expected = str(req, "expected_output");
	if (!expected)
		return;
	if (strcmp(status, "ok")) {
		cJSON_AddStringToObject(o, "verdict",
					!strcmp(status, "error") ? "runtime_error" : status);
		return;
	}
	/* compare as the stored one-shot request would: model.c reads it */
	cJSON *probe = cJSON_CreateObject();
	cJSON_AddStringToObject(probe, "language", language);
	cJSON_AddStringToObject(probe, "source", "-");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(req, "compare");
	if (c)
		cJSON_AddItemToObject(probe, "compare", cJSON_Duplicate(c, 1));
	struct grade_request gr;
	char err[256];
	struct cmp_opts opts;
	cmp_opts_init(&opts, CMP_LINES);
	if (model_request_load(probe, &gr, err, sizeof err) == 0 && gr.has_compare)
		opts = gr.cmp;
	model_request_release(&gr);
	cJSON_Delete(probe);
	struct cmp_feedback fb;
	memset(&fb, 0, sizeof fb);
	enum cmp_outcome oc =
	    cmp_compare(&opts, expected, strlen(expected), out->buf ? out->buf : "", out->len, &fb);
	cJSON_AddStringToObject(o, "verdict",
				oc == CMP_MATCH	   ? "accepted"
				: oc == CMP_DIFFER ? "wrong_answer"
						   : "internal_error");
	if (oc == CMP_MATCH)
		return;
	cJSON *f = cJSON_AddObjectToObject(o, "feedback");
	cJSON_AddNumberToObject(f, "line", (double)fb.line);
	cJSON_AddNumberToObject(f, "column", (double)fb.column);
	cJSON_AddStringToObject(f, "expected", fb.expected);
	cJSON_AddStringToObject(f, "got", fb.got);
	cJSON_AddStringToObject(f, "message", fb.message);
}

static void add_text(cJSON *o, const char *name, const struct strbuf *sb)
{
	cJSON_AddStringToObject(o, name, sb->buf ? sb->buf : "");
}

static cJSON *exec_body(struct sesscall_env *env, const cJSON *req, struct cell_result *res)
{
	cJSON *reply = res->reply.len ? cJSON_Parse(res->reply.buf) : NULL;
	const char *status = cell_status(res, reply);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "status", status);
	add_text(o, "stdout", &res->out);
	add_text(o, "stderr", &res->err);
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(reply, "result");
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(reply, "error");
	cJSON_AddItemToObject(o, "result",
			      cJSON_IsString(r) ? cJSON_Duplicate(r, 1) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "error",
			      cJSON_IsObject(e) ? cJSON_Duplicate(e, 1) : cJSON_CreateNull());
	cJSON_AddNumberToObject(o, "execution_count", (double)env->execution_count);
	cJSON_AddNumberToObject(o, "time_ms", (double)res->cpu_ms);
	cJSON_AddNumberToObject(o, "wall_ms", (double)res->wall_ms);
	cJSON_AddNumberToObject(o, "memory_kb", (double)res->memory_kb);
	/* the whole sandbox's host memory now (driver, and gVisor's sentry and gofer) */
	cJSON_AddNumberToObject(o, "session_memory_kb", (double)session_memory_kb(env->s));
	cJSON_AddBoolToObject(o, "stdout_truncated", res->out_truncated);
	cJSON_AddBoolToObject(o, "stderr_truncated", res->err_truncated);
	cJSON_AddBoolToObject(o, "restarted", res->restarted);
	if (res->restarted)
		cJSON_AddStringToObject(o, "message",
					"the session's process was started again: variables, "
					"imports and definitions are lost (files and installed "
					"packages are kept)");
	else if (res->message[0])
		cJSON_AddStringToObject(o, "message", res->message);
	add_verdict(o, req, status, &res->out, env->lang->name);
	cJSON_Delete(reply);
	return o;
}

static void run_execute(struct sesscall_env *env, const cJSON *req, struct sesscall_out *out)
{
	const char *code = str(req, "code"), *in = str(req, "stdin");
	long timeout = num(req, "timeout_ms");
	struct cell_spec cell = {
	    .code = code ? code : "",
	    .code_len = code ? strlen(code) : 0,
	    .stdin_data = in,
	    .stdin_len = in ? strlen(in) : 0,
	    /* timeout_ms bounds the cell's wall time, and its CPU within the session's */
	    .cpu_ms = timeout && timeout < env->limits.cpu_ms ? timeout : 0,
	    .wall_ms = timeout,
	    .on_output = env->on_output,
	    .arg = env->output_arg,
	};
	struct cell_result res;
	cell_result_init(&res);
	session_exec(env->s, &cell, &res);
	env->execution_count++;
	out->cells = 1;
	out->restarted = res.restarted;
	out->response = ok_body(exec_body(env, req, &res));
	cell_result_release(&res);
}

static void run_install(struct sesscall_env *env, const cJSON *req, struct sesscall_out *out)
{
	const char *mgr = str(req, "manager");
	const cJSON *pk = cJSON_GetObjectItemCaseSensitive(req, "packages");
	int n = cJSON_GetArraySize(pk);
	const char **names = xcalloc((size_t)n + 1, sizeof *names);
	for (int i = 0; i < n; i++)
		names[i] = cJSON_GetArrayItem(pk, i)->valuestring;
	struct install_result res;
	install_result_init(&res);
	if (install_packages(env->sb, env->install, mgr ? mgr : "", names, &res) < 0) {
		out->response = sesscall_error(422, "install_failed", "%s", res.message);
	} else {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "status", res.ok ? "ok" : "error");
		cJSON_AddItemToObject(o, "packages", cJSON_Duplicate(pk, 1));
		add_text(o, "output", &res.output);
		cJSON_AddNumberToObject(o, "time_ms", (double)res.time_ms);
		if (!res.ok && res.message[0])
			cJSON_AddStringToObject(o, "message", res.message);
		out->response = ok_body(o);
	}
	install_result_release(&res);
	free(names);
}

/* A file call's -errno as the API's error. */
static cJSON *file_error(int rc, const char *path)
{
	switch (-rc) {
	case ENOENT:
		return sesscall_error(404, "not_found", "no file '%.200s' in the session", path);
	case ELOOP:
		return sesscall_error(400, "bad_path",
				      "'%.200s' goes through a symlink, which is never followed",
				      path);
	case EISDIR:
		return sesscall_error(409, "is_a_directory", "'%.200s' is a folder", path);
	case ENOTDIR:
		return sesscall_error(409, "not_a_directory", "a part of '%.200s' is not a folder",
				      path);
	case EFBIG:
		return sesscall_error(413, "too_large", "'%.200s' is too large", path);
	case ENOSPC:
	case EDQUOT:
		return sesscall_error(413, "disk_full", "the session folder is full");
	case EINVAL:
		return sesscall_error(400, "bad_path", "'%.200s' is not a path in the session",
				      path);
	case ENAMETOOLONG:
		return sesscall_error(400, "bad_path", "'%.200s': a name in it is too long", path);
	/* the session's own programs change its folder while the call runs, or
	 * made something the call may not touch: the caller may try again */
	case ENOTEMPTY:
	case EEXIST:
	case EBUSY:
	case EAGAIN:
		return sesscall_error(409, "conflict",
				      "'%.200s' changed while this call ran (a program of the "
				      "session is writing there); try again",
				      path);
	case EACCES:
	case EPERM:
	case ETXTBSY:
		return sesscall_error(403, "forbidden", "'%.200s': %s", path, strerror(-rc));
	default:
		return sesscall_error(500, "internal_error", "file call on '%.200s': %s", path,
				      strerror(-rc));
	}
}

static const char *dirent_type(char t)
{
	return t == 'f' ? "file" : t == 'd' ? "dir" : t == 'l' ? "symlink" : "other";
}

static cJSON *file_list(struct sesscall_env *env, const char *path)
{
	struct sandbox_dirent *ents = NULL;
	size_t n = 0;
	int rc = sandbox_file_list(env->sb, path, &ents, &n);
	if (rc < 0)
		return file_error(rc, path);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "dir", path);
	cJSON *arr = cJSON_AddArrayToObject(o, "files");
	for (size_t i = 0; i < n; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", ents[i].name);
		cJSON_AddStringToObject(e, "type", dirent_type(ents[i].type));
		cJSON_AddNumberToObject(e, "size", (double)ents[i].size);
		cJSON_AddNumberToObject(e, "mtime", (double)ents[i].mtime);
		cJSON_AddItemToArray(arr, e);
	}
	free(ents);
	return ok_body(o);
}

static void run_file(struct sesscall_env *env, const struct sess_call *c, struct sesscall_out *out)
{
	const char *path = str(c->request, "path");
	path = path ? path : "";
	int rc = 0;
	if (!strcmp(c->kind, "file_list")) {
		out->response = file_list(env, path);
		return;
	}
	if (!strcmp(c->kind, "file_put"))
		rc = sandbox_file_put(env->sb, path, c->body.buf ? c->body.buf : "", c->body.len);
	else if (!strcmp(c->kind, "file_delete"))
		rc = sandbox_file_remove(env->sb, path);
	else
		rc = sandbox_file_get(env->sb, path, &out->body, FILE_GET_MAX);
	if (rc < 0) {
		out->response = file_error(rc, path);
		strbuf_reset(&out->body);
		return;
	}
	if (!strcmp(c->kind, "file_get")) {
		out->response = cJSON_CreateObject();
		cJSON_AddNumberToObject(out->response, "http", 200);
		cJSON_AddBoolToObject(out->response, "raw", true);
		cJSON_AddStringToObject(out->response, "content_type", sreq_content_type(path));
		return;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "path", path);
	if (!strcmp(c->kind, "file_put"))
		cJSON_AddNumberToObject(o, "size", (double)c->body.len);
	else
		cJSON_AddBoolToObject(o, "deleted", true);
	out->response = ok_body(o);
}

void sesscall_run(struct sesscall_env *env, const struct sess_call *c, struct sesscall_out *out)
{
	if (!c->request)
		out->response = sesscall_error(500, "internal_error", "the call has no request");
	else if (!strcmp(c->kind, "execute"))
		run_execute(env, c->request, out);
	else if (!strcmp(c->kind, "install"))
		run_install(env, c->request, out);
	else if (!strncmp(c->kind, "file_", 5))
		run_file(env, c, out);
	else
		out->response = sesscall_error(500, "internal_error", "unknown call '%s'", c->kind);
}
