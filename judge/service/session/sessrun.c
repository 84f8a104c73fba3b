/* sessrun: one call in a held session, answered typed (see sessrun.h). */
#include "judge/service/session/sessrun.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/xalloc.h"
#include "judge/grading/compare.h"
#include "judge/grading/lang.h"
#include "judge/service/session/sessreq.h"
#include "judge/service/session/sessproc.h"
#include "runner/install/install.h"
#include "runner/sandbox.h"
#include "runner/session/session.h"

/* The largest file the files API reads back (it travels through PostgreSQL). */
#define FILE_GET_MAX (64L << 20)

/* ---- execute ---- */

/* The verdict against expected_output, as one-shot grading decides it. */
static void judge_cell(const struct sess_call *c, struct sess_cell *cell)
{
	if (!c->exec.expected)
		return;
	cell->has_verdict = true;
	switch (cell->status) {
	case CELL_OK:
		break;
	case CELL_ERROR:
		cell->verdict = SUB_RUNTIME_ERROR;
		return;
	case CELL_TIMEOUT:
		cell->verdict = SUB_TIMEOUT;
		return;
	case CELL_MEMORY_LIMIT:
		cell->verdict = SUB_MEMORY_LIMIT;
		return;
	case CELL_OUTPUT_LIMIT:
		cell->verdict = SUB_OUTPUT_LIMIT;
		return;
	default:
		cell->verdict = SUB_INTERNAL_ERROR;
		return;
	}
	struct compare_options lines;
	compare_options_init(&lines, CMP_LINES);
	struct compare_feedback fb;
	memset(&fb, 0, sizeof fb);
	const char *expected = c->exec.expected;
	enum compare_outcome oc =
	    compare_outputs(c->exec.has_compare ? &c->exec.cmp : &lines, expected, strlen(expected),
			    cell->out.buf ? cell->out.buf : "", cell->out.len, &fb);
	cell->verdict = oc == CMP_MATCH	   ? SUB_ACCEPTED
			: oc == CMP_DIFFER ? SUB_WRONG_ANSWER
					   : SUB_INTERNAL_ERROR;
	if (oc == CMP_MATCH)
		return;
	struct grade_feedback *f = &cell->feedback;
	f->present = f->has_position = f->has_expected = true;
	f->line = (long)fb.line;
	f->column = (long)fb.column;
	snprintf(f->expected, sizeof f->expected, "%s", fb.expected);
	snprintf(f->got, sizeof f->got, "%s", fb.got);
	snprintf(f->message, sizeof f->message, "%s", fb.message);
}

static void take(struct strbuf *dst, struct strbuf *src)
{
	strbuf_release(dst);
	*dst = *src;
	strbuf_init(src);
}

/* The context id names ("" = the default), or NULL. */
static struct sessrun_context *context_of(struct sessrun_env *env, const char *id)
{
	if (!*id)
		id = SESS_DEFAULT_CONTEXT;
	for (int i = 0; i < SESS_MAX_CONTEXTS; i++)
		if (env->contexts[i].id[0] && !strcmp(env->contexts[i].id, id))
			return &env->contexts[i];
	return NULL;
}

static struct sessrun_context *context_create(struct sessrun_env *env, const struct sess_call *c,
					      struct sess_reply *out);

/* The default context of the language named (lang's name): the session's own
 * when it is of that language, else the one an earlier cell made, else a new
 * one (in the session folder). NULL with out failed. */
static struct sessrun_context *language_context(struct sessrun_env *env, const char *lang,
						struct sess_reply *out)
{
	if (!strcmp(env->contexts[0].lang->name, lang))
		return &env->contexts[0];
	for (int i = 1; i < SESS_MAX_CONTEXTS; i++)
		if (env->contexts[i].id[0] && env->contexts[i].lang_default &&
		    !strcmp(env->contexts[i].lang->name, lang))
			return &env->contexts[i];
	struct sess_call mk;
	struct sess_reply made;
	sess_call_init(&mk, SCALL_CONTEXT_CREATE);
	snprintf(mk.ctx.language, sizeof mk.ctx.language, "%s", lang);
	sess_reply_init(&made);
	struct sessrun_context *ctx = context_create(env, &mk, &made);
	if (ctx)
		ctx->lang_default = true;
	else
		sess_reply_fail(out, made.err, "%s", made.message);
	sess_reply_release(&made);
	sess_call_release(&mk);
	return ctx;
}

static void run_execute(struct sessrun_env *env, const struct sess_call *c, struct sess_reply *out)
{
	struct sessrun_context *ctx = c->exec.language[0]
					  ? language_context(env, c->exec.language, out)
					  : context_of(env, c->context);
	if (!ctx && c->exec.language[0])
		return;
	if (!ctx) {
		sess_reply_fail(out, SERR_NO_CONTEXT, "no context '%s' in the session", c->context);
		return;
	}
	if (env->on_start)
		env->on_start(env->output_arg, env->execution_count + 1);
	const char *code = c->exec.code ? c->exec.code : "", *in = c->exec.stdin_data;
	struct cell_spec cell = {
	    .context = ctx->rctx,
	    .code = code,
	    .code_len = strlen(code),
	    .stdin_data = in,
	    .stdin_len = in ? strlen(in) : 0,
	    .env = (const char *const *)c->exec.env,
	    .on_output = env->on_output,
	    .arg = env->output_arg,
	};
	limits_cell(&env->limits, c->exec.timeout_ms, &cell.cpu_ms, &cell.wall_ms);
	struct cell_result res;
	cell_result_init(&res);
	session_exec(env->s, &cell, &res);
	env->execution_count++;
	out->cells = 1;
	out->restarted = res.restarted;
	struct sess_cell *r = &out->cell;
	r->status = res.status;
	take(&r->out, &res.out);
	take(&r->err, &res.err);
	r->out_truncated = res.out_truncated;
	r->err_truncated = res.err_truncated;
	r->result = res.result;
	r->has_error = res.has_error;
	r->error_name = res.error_name;
	r->error_value = res.error_value;
	r->error_traceback = res.error_traceback;
	r->results = res.results;
	r->results_dropped = res.results_dropped;
	res.result = res.error_name = res.error_value = res.error_traceback = res.results = NULL;
	r->execution_count = env->execution_count;
	r->time_ms = res.cpu_ms;
	r->wall_ms = res.wall_ms;
	r->memory_kb = res.memory_kb;
	/* the whole sandbox's host memory now (driver, and gVisor's sentry and gofer) */
	r->session_memory_kb = session_memory_kb(env->s);
	r->restarted = res.restarted;
	if (env->from_checkpoint) {
		env->from_checkpoint = false;
		r->checkpoint_age_s = env->checkpoint_age_s;
	}
	if (env->restored && !res.restarted) {
		env->restored = false;
		out->restarted = r->restarted = true;
		if (env->restored_why[0])
			snprintf(
			    r->message, sizeof r->message,
			    "the session was resumed from its stored image without its memory "
			    "(%.90s): files and installed packages are back, variables are lost",
			    env->restored_why);
		else
			snprintf(r->message, sizeof r->message,
				 "the session was resumed from its stored image on a new sandbox: "
				 "files and installed packages are back, variables, imports and "
				 "definitions are lost");
	} else if (res.restarted)
		snprintf(r->message, sizeof r->message,
			 "the session's process was started again: variables, imports and "
			 "definitions are lost (files and installed packages are kept)");
	else
		snprintf(r->message, sizeof r->message, "%s", res.message);
	judge_cell(c, r);
	cell_result_release(&res);
}

/* ---- install ---- */

static void run_install(struct sessrun_env *env, const struct sess_call *c, struct sess_reply *out)
{
	struct install_result res;
	install_result_init(&res);
	if (install_packages(env->sb, env->install, c->install.manager,
			     (const char *const *)c->install.packages, &res) < 0) {
		sess_reply_fail(out, SERR_INSTALL_FAILED, "%s", res.message);
	} else {
		out->install.ok = res.ok;
		out->install.packages = xstrvdup((const char *const *)c->install.packages);
		take(&out->install.output, &res.output);
		out->install.time_ms = res.time_ms;
		if (!res.ok)
			snprintf(out->install.message, sizeof out->install.message, "%s",
				 res.message);
	}
	install_result_release(&res);
}

/* ---- files ---- */

/* A file call's -errno as the session's error. */
static void file_error(struct sess_reply *out, int rc, const char *path)
{
	switch (-rc) {
	case ENOENT:
		sess_reply_fail(out, SERR_NOT_FOUND, "no file '%.200s' in the session", path);
		break;
	case ELOOP:
		sess_reply_fail(out, SERR_BAD_PATH,
				"'%.200s' goes through a symlink, which is never followed", path);
		break;
	case EISDIR:
		sess_reply_fail(out, SERR_IS_A_DIRECTORY, "'%.200s' is a folder", path);
		break;
	case ENOTDIR:
		sess_reply_fail(out, SERR_NOT_A_DIRECTORY, "a part of '%.200s' is not a folder",
				path);
		break;
	case EFBIG:
		sess_reply_fail(out, SERR_TOO_LARGE, "'%.200s' is too large", path);
		break;
	case ENOSPC:
	case EDQUOT:
		sess_reply_fail(out, SERR_DISK_FULL, "the session folder is full");
		break;
	case EINVAL:
		sess_reply_fail(out, SERR_BAD_PATH, "'%.200s' is not a path in the session", path);
		break;
	case ENAMETOOLONG:
		sess_reply_fail(out, SERR_BAD_PATH, "'%.200s': a name in it is too long", path);
		break;
	/* the session's own programs change its folder while the call runs, or
	 * made something the call may not touch: the caller may try again */
	case ENOTEMPTY:
	case EEXIST:
	case EBUSY:
	case EAGAIN:
		sess_reply_fail(out, SERR_CONFLICT,
				"'%.200s' changed while this call ran (a program of the session "
				"is writing there); try again",
				path);
		break;
	case EACCES:
	case EPERM:
	case ETXTBSY:
		sess_reply_fail(out, SERR_FORBIDDEN, "'%.200s': %s", path, strerror(-rc));
		break;
	default:
		sess_reply_fail(out, SERR_INTERNAL, "file call on '%.200s': %s", path,
				strerror(-rc));
	}
}

/* The entries of folder dir (relative to the box) and of its folders down to
 * depth levels, each named by its path below the top (prefix), a folder
 * before what it holds; links are listed, never followed. At most
 * SESS_MAX_ENTRIES (then -EFBIG: the caller asks for less). */
static int list_deep(struct sandbox *sb, const char *dir, const char *prefix, int depth,
		     struct sess_reply *out, size_t *cap)
{
	struct sandbox_dirent *d = NULL;
	size_t n = 0;
	int rc = sandbox_file_list(sb, dir, &d, &n);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char name[sizeof d->name];
		/* a path below the top longer than a name holds is left out */
		if (snprintf(name, sizeof name, "%s%s%s", prefix, *prefix ? "/" : "", d[i].name) >=
		    (int)sizeof name)
			continue;
		if (out->file.nentries >= SESS_MAX_ENTRIES) {
			rc = -EFBIG;
			break;
		}
		if (out->file.nentries == *cap) {
			*cap = *cap ? 2 * *cap : 64;
			out->file.entries =
			    xrealloc(out->file.entries, *cap * sizeof *out->file.entries);
		}
		struct sandbox_dirent *e = &out->file.entries[out->file.nentries++];
		*e = d[i];
		snprintf(e->name, sizeof e->name, "%s", name);
		if (d[i].type == 'd' && depth > 1) {
			char *sub = xasprintf("%s%s%s", dir, *dir ? "/" : "", d[i].name);
			rc = list_deep(sb, sub, name, depth - 1, out, cap);
			free(sub);
			/* a folder removed meanwhile is not an error */
			if (rc == -ENOENT)
				rc = 0;
		}
	}
	free(d);
	return rc;
}

static void run_file(struct sessrun_env *env, const struct sess_call *c, struct sess_reply *out)
{
	const char *path = c->path ? c->path : "";
	int rc = 0;
	out->file.path = xstrdup(path);
	switch (c->kind) {
	case SCALL_FILE_LIST:
		if (c->depth > 1) {
			size_t cap = 0;
			rc = list_deep(env->sb, path, "", c->depth, out, &cap);
			if (rc == -EFBIG) {
				sess_reply_fail(out, SERR_TOO_LARGE,
						"'%.200s' holds more than %d entries down to %d "
						"levels: ask for fewer levels",
						path, SESS_MAX_ENTRIES, c->depth);
				return;
			}
		} else {
			rc = sandbox_file_list(env->sb, path, &out->file.entries,
					       &out->file.nentries);
		}
		break;
	case SCALL_FILE_PUT:
		if (c->nparts) {
			/* in order; the first that fails names its path */
			size_t off = 0;
			for (size_t i = 0; i < c->nparts && rc == 0; i++) {
				path = c->parts[i].path;
				rc = sandbox_file_put(env->sb, path, c->body.buf + off,
						      c->parts[i].len);
				off += c->parts[i].len;
			}
		} else {
			rc = sandbox_file_put(env->sb, path, c->body.buf ? c->body.buf : "",
					      c->body.len);
		}
		out->file.size = (long long)c->body.len;
		break;
	case SCALL_FILE_DELETE:
		rc = sandbox_file_remove(env->sb, path);
		out->file.deleted = rc == 0;
		break;
	case SCALL_FILE_STAT:
	case SCALL_FILE_MKDIR:
	case SCALL_FILE_MOVE: {
		struct sandbox_dirent d = {0};
		if (c->kind == SCALL_FILE_MKDIR) {
			out->file.existed =
			    sandbox_file_stat(env->sb, path, &d) == 0 && d.type == 'd';
			rc = sandbox_file_mkdir(env->sb, path);
		} else if (c->kind == SCALL_FILE_MOVE) {
			rc = sandbox_file_move(env->sb, path, c->to ? c->to : "");
			if (rc == 0) {
				free(out->file.path);
				out->file.path = xstrdup(c->to ? c->to : "");
			}
		}
		/* the entry as it stands now (a move's at its new path) */
		if (rc == 0)
			rc = sandbox_file_stat(env->sb, out->file.path, &d);
		if (rc == 0) {
			out->file.entries = xcalloc(1, sizeof *out->file.entries);
			out->file.entries[0] = d;
			out->file.nentries = 1;
		}
		break;
	}
	default:
		rc = sandbox_file_get(env->sb, path, &out->file.bytes, FILE_GET_MAX);
		snprintf(out->file.type, sizeof out->file.type, "%s", sessreq_content_type(path));
	}
	if (rc < 0) {
		strbuf_reset(&out->file.bytes);
		file_error(out, rc, path);
	}
}

/* ---- contexts ---- */

void sessrun_env_init(struct sessrun_env *env)
{
	struct sessrun_context *d = &env->contexts[0];
	snprintf(d->id, sizeof d->id, "%s", SESS_DEFAULT_CONTEXT);
	d->lang = env->lang;
	d->cwd = xstrdup("");
	d->rctx = 0;
}

void sessrun_env_release(struct sessrun_env *env)
{
	for (int i = 0; i < SESS_MAX_CONTEXTS; i++) {
		free(env->contexts[i].cwd);
		memset(&env->contexts[i], 0, sizeof env->contexts[i]);
	}
}

static void add_context(struct sess_reply *out, const struct sessrun_context *c)
{
	sess_reply_add_context(out, c->id, c->lang->name, c->cwd);
}

cJSON *sessrun_contexts_json(const struct sessrun_env *env)
{
	cJSON *arr = cJSON_CreateArray();
	for (int i = 1; i < SESS_MAX_CONTEXTS; i++) {
		const struct sessrun_context *c = &env->contexts[i];
		if (!c->id[0])
			continue;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "id", c->id);
		cJSON_AddStringToObject(o, "language", c->lang->name);
		cJSON_AddStringToObject(o, "cwd", c->cwd ? c->cwd : "");
		cJSON_AddBoolToObject(o, "lang_default", c->lang_default);
		cJSON_AddNumberToObject(o, "rctx", c->rctx);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

int sessrun_contexts_restore(struct sessrun_env *env, const cJSON *arr, char *err, size_t errlen)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "id");
		const cJSON *lang = cJSON_GetObjectItemCaseSensitive(it, "language");
		const cJSON *cwd = cJSON_GetObjectItemCaseSensitive(it, "cwd");
		if (!cJSON_IsString(id) || !cJSON_IsString(lang) || !cJSON_IsString(cwd) ||
		    !sessreq_context_id_valid(id->valuestring)) {
			snprintf(err, errlen, "the image's contexts are malformed");
			return -1;
		}
		struct sess_call mk;
		struct sess_reply made;
		sess_call_init(&mk, SCALL_CONTEXT_CREATE);
		snprintf(mk.ctx.language, sizeof mk.ctx.language, "%s", lang->valuestring);
		mk.path = xstrdup(cwd->valuestring);
		sess_reply_init(&made);
		struct sessrun_context *ctx = context_create(env, &mk, &made);
		if (ctx) {
			snprintf(ctx->id, sizeof ctx->id, "%s", id->valuestring);
			ctx->lang_default =
			    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "lang_default"));
		} else
			snprintf(err, errlen, "context '%s': %s", id->valuestring, made.message);
		sess_reply_release(&made);
		sess_call_release(&mk);
		if (!ctx)
			return -1;
	}
	return 0;
}

int sessrun_contexts_adopt(struct sessrun_env *env, const cJSON *arr, char *err, size_t errlen)
{
	const cJSON *it;
	int i = 1;
	cJSON_ArrayForEach(it, arr)
	{
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "id");
		const cJSON *lang = cJSON_GetObjectItemCaseSensitive(it, "language");
		const cJSON *cwd = cJSON_GetObjectItemCaseSensitive(it, "cwd");
		const cJSON *rctx = cJSON_GetObjectItemCaseSensitive(it, "rctx");
		const struct lang *l =
		    cJSON_IsString(lang) ? lang_find(env->langs, lang->valuestring) : NULL;
		if (!cJSON_IsString(id) || !l || !cJSON_IsString(cwd) || !cJSON_IsNumber(rctx) ||
		    rctx->valueint < 1 || rctx->valueint >= SESSION_MAX_CONTEXTS ||
		    i >= SESS_MAX_CONTEXTS || !sessreq_context_id_valid(id->valuestring)) {
			snprintf(err, errlen, "the image's contexts are malformed");
			return -1;
		}
		struct sessrun_context *c = &env->contexts[i++];
		snprintf(c->id, sizeof c->id, "%s", id->valuestring);
		c->lang = l;
		free(c->cwd);
		c->cwd = xstrdup(cwd->valuestring);
		c->rctx = rctx->valueint;
		c->lang_default =
		    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "lang_default"));
	}
	return 0;
}

/* A new context's id: 16 hex digits, unlike any other of the session. */
static void new_context_id(struct sessrun_env *env, char out[SESS_ID_MAX])
{
	char id[SESS_ID_MAX];
	do {
		unsigned char raw[8];
		if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
			unsigned long long x = (unsigned long long)clock_mono_us();
			memcpy(raw, &x, sizeof raw);
		}
		for (size_t i = 0; i < sizeof raw; i++)
			snprintf(id + 2 * i, 3, "%02x", raw[i]);
	} while (context_of(env, id));
	memcpy(out, id, SESS_ID_MAX);
}

/* Starts the context c asks for; its slot, or NULL with out failed. */
static struct sessrun_context *context_create(struct sessrun_env *env, const struct sess_call *c,
					      struct sess_reply *out)
{
	const struct lang *l =
	    c->ctx.language[0] ? lang_find(env->langs, c->ctx.language) : env->lang;
	if (!l || !l->session_argv) {
		sess_reply_fail(out, SERR_BAD_REQUEST, "this worker has no sessions of '%s'",
				c->ctx.language);
		return NULL;
	}
	struct sessrun_context *slot = NULL;
	for (int i = 1; i < SESS_MAX_CONTEXTS && !slot; i++)
		if (!env->contexts[i].id[0])
			slot = &env->contexts[i];
	if (!slot) {
		sess_reply_fail(out, SERR_LIMIT, "the session holds %d contexts, the most it may",
				SESS_MAX_CONTEXTS);
		return NULL;
	}
	char err[512], *cwd = c->path && *c->path ? xasprintf(SANDBOX_HOME "/%s", c->path) : NULL;
	char **denv = sessproc_env((const char *const *)l->session_env, env->drv_env);
	struct session_driver d = {.argv = (const char *const *)l->session_argv,
				   .env = (const char *const *)denv};
	int rctx;
	int rc = session_context_start(env->s, &d, cwd, &rctx, err, sizeof err);
	xstrvfree(denv);
	free(cwd);
	if (rc < 0) {
		sess_reply_fail(out, strstr(err, "too many") ? SERR_LIMIT : SERR_BAD_REQUEST,
				"cannot start a %s context%s%s: %s", l->name,
				c->path && *c->path ? " in " : "", c->path ? c->path : "", err);
		return NULL;
	}
	new_context_id(env, slot->id);
	slot->lang = l;
	slot->cwd = xstrdup(c->path ? c->path : "");
	slot->rctx = rctx;
	slot->lang_default = false;
	add_context(out, slot);
	return slot;
}

static void run_context(struct sessrun_env *env, const struct sess_call *c, struct sess_reply *out)
{
	char err[512];
	if (c->kind == SCALL_CONTEXT_CREATE) {
		context_create(env, c, out);
		return;
	}
	if (c->kind == SCALL_CONTEXT_LIST) {
		for (int i = 0; i < SESS_MAX_CONTEXTS; i++)
			if (env->contexts[i].id[0])
				add_context(out, &env->contexts[i]);
		return;
	}
	struct sessrun_context *ctx = context_of(env, c->context);
	if (!ctx) {
		sess_reply_fail(out, SERR_NO_CONTEXT, "no context '%s' in the session", c->context);
		return;
	}
	if (c->kind == SCALL_CONTEXT_RESTART) {
		if (session_context_restart(env->s, ctx->rctx, err, sizeof err) < 0) {
			sess_reply_fail(out, SERR_INTERNAL, "cannot restart context '%s': %s",
					ctx->id, err);
			return;
		}
		out->restarted = true;
		add_context(out, ctx);
		return;
	}
	if (ctx == &env->contexts[0]) {
		sess_reply_fail(out, SERR_BAD_REQUEST,
				"the default context stays as long as the session (restart it)");
		return;
	}
	session_context_stop(env->s, ctx->rctx);
	free(ctx->cwd);
	memset(ctx, 0, sizeof *ctx);
}

void sessrun_call(struct sessrun_env *env, const struct sess_call *c, struct sess_reply *out)
{
	sess_reply_init(out);
	switch (c->kind) {
	case SCALL_EXECUTE:
		run_execute(env, c, out);
		break;
	case SCALL_INSTALL:
		run_install(env, c, out);
		break;
	case SCALL_FILE_PUT:
	case SCALL_FILE_GET:
	case SCALL_FILE_LIST:
	case SCALL_FILE_DELETE:
	case SCALL_FILE_STAT:
	case SCALL_FILE_MKDIR:
	case SCALL_FILE_MOVE:
		run_file(env, c, out);
		break;
	case SCALL_CONTEXT_CREATE:
	case SCALL_CONTEXT_LIST:
	case SCALL_CONTEXT_RESTART:
	case SCALL_CONTEXT_REMOVE:
		run_context(env, c, out);
		break;
	default:
		sess_reply_fail(out, SERR_INTERNAL, "the worker cannot run %s calls",
				scall_kind_name(c->kind));
	}
}
