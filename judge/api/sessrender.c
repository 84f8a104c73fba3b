/* sessrender: the /v1 JSON of sessions' typed replies, and their errors as HTTP. */
#include "judge/api/sessrender.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

void sessrender_error(enum sess_err e, int *status, const char **code)
{
	static const struct {
		int status;
		const char *code;
	} map[SERR_COUNT] = {
	    [SERR_NONE] = {200, NULL},
	    [SERR_BAD_REQUEST] = {422, "invalid_field"},
	    [SERR_NOT_FOUND] = {404, "not_found"},
	    [SERR_BAD_PATH] = {400, "bad_path"},
	    [SERR_IS_A_DIRECTORY] = {409, "is_a_directory"},
	    [SERR_NOT_A_DIRECTORY] = {409, "not_a_directory"},
	    [SERR_TOO_LARGE] = {413, "too_large"},
	    [SERR_DISK_FULL] = {413, "disk_full"},
	    [SERR_INSTALL_FAILED] = {422, "install_failed"},
	    [SERR_NO_CONTEXT] = {404, "not_found"},
	    [SERR_NO_PROCESS] = {404, "not_found"},
	    [SERR_CONFLICT] = {409, "conflict"},
	    [SERR_FORBIDDEN] = {403, "forbidden"},
	    [SERR_LIMIT] = {429, "too_many"},
	    [SERR_SESSION_CLOSED] = {410, "session_closed"},
	    [SERR_SESSION_LOST] = {410, "session_lost"},
	    [SERR_IMAGE_TOO_LARGE] = {413, "image_too_large"},
	    [SERR_INTERNAL] = {500, "internal_error"},
	};
	if (e < 0 || e >= SERR_COUNT)
		e = SERR_INTERNAL;
	*status = map[e].status;
	*code = map[e].code;
}

int sessrender_status(enum scall_kind k)
{
	return k == SCALL_CONTEXT_CREATE || k == SCALL_PROCESS_START || k == SCALL_SNAPSHOT ? 201
											    : 200;
}

static void add_text(cJSON *o, const char *name, const char *s)
{
	cJSON_AddStringToObject(o, name, s ? s : "");
}

static void add_buf(cJSON *o, const char *name, const struct strbuf *b)
{
	cJSON_AddStringToObject(o, name, b->buf ? b->buf : "");
}

cJSON *sessrender_cell(const struct sess_cell *c)
{
	cJSON *o = cJSON_CreateObject();
	sesscall_cell_store(o, c);
	return o;
}

static cJSON *context_json(const struct sess_context_info *c)
{
	cJSON *o = cJSON_CreateObject();
	add_text(o, "id", c->id);
	add_text(o, "language", c->language);
	add_text(o, "cwd", c->cwd);
	return o;
}

static cJSON *process_json(const struct sess_process_info *p)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "pid", (double)p->pid);
	cJSON *a = cJSON_AddArrayToObject(o, "argv");
	for (char *const *s = p->argv; s && *s; s++)
		cJSON_AddItemToArray(a, cJSON_CreateString(*s));
	add_text(o, "cwd", p->cwd);
	if (p->tag[0])
		add_text(o, "tag", p->tag);
	cJSON_AddBoolToObject(o, "running", p->running);
	bool ended = !p->running;
	cJSON_AddItemToObject(o, "exit_code",
			      ended && p->exited ? cJSON_CreateNumber(p->exit_code)
						 : cJSON_CreateNull());
	cJSON_AddItemToObject(
	    o, "signal", ended && !p->exited ? cJSON_CreateNumber(p->signal) : cJSON_CreateNull());
	if (p->message[0])
		add_text(o, "message", p->message);
	return o;
}

/* One entry of a folder; mode (its permission bits) only when asked. */
static cJSON *entry_json(const struct sandbox_dirent *d, bool mode)
{
	char t = d->type;
	cJSON *e = cJSON_CreateObject();
	add_text(e, "name", d->name);
	add_text(e, "type", t == 'f' ? "file" : t == 'd' ? "dir" : t == 'l' ? "symlink" : "other");
	cJSON_AddNumberToObject(e, "size", (double)d->size);
	cJSON_AddNumberToObject(e, "mtime", (double)d->mtime);
	if (mode)
		cJSON_AddNumberToObject(e, "mode", d->mode);
	return e;
}

static cJSON *file_json(const struct sess_call *c, const struct sess_reply *r)
{
	cJSON *o = cJSON_CreateObject();
	if (c->kind == SCALL_FILE_LIST) {
		add_text(o, "dir", r->file.path);
		cJSON *arr = cJSON_AddArrayToObject(o, "files");
		for (size_t i = 0; i < r->file.nentries; i++)
			cJSON_AddItemToArray(arr, entry_json(&r->file.entries[i], false));
		return o;
	}
	add_text(o, "path", r->file.path);
	if (c->kind == SCALL_FILE_STAT || c->kind == SCALL_FILE_MKDIR ||
	    c->kind == SCALL_FILE_MOVE) {
		if (r->file.nentries)
			cJSON_AddItemToObject(o, "entry", entry_json(&r->file.entries[0], true));
		if (c->kind == SCALL_FILE_MKDIR)
			cJSON_AddBoolToObject(o, "existed", r->file.existed);
	} else if (c->kind == SCALL_FILE_PUT) {
		cJSON_AddNumberToObject(o, "size", (double)r->file.size);
	} else {
		cJSON_AddBoolToObject(o, "deleted", r->file.deleted);
	}
	return o;
}

cJSON *sessrender_reply(const struct sess_call *c, const struct sess_reply *r)
{
	cJSON *o;
	switch (c->kind) {
	case SCALL_EXECUTE:
		return sessrender_cell(&r->cell);
	case SCALL_INSTALL:
		o = cJSON_CreateObject();
		add_text(o, "status", r->install.ok ? "ok" : "error");
		cJSON *pk = cJSON_AddArrayToObject(o, "packages");
		for (char *const *p = r->install.packages; p && *p; p++)
			cJSON_AddItemToArray(pk, cJSON_CreateString(*p));
		add_buf(o, "output", &r->install.output);
		cJSON_AddNumberToObject(o, "time_ms", (double)r->install.time_ms);
		if (!r->install.ok && r->install.message[0])
			add_text(o, "message", r->install.message);
		return o;
	case SCALL_FILE_PUT:
	case SCALL_FILE_LIST:
	case SCALL_FILE_DELETE:
	case SCALL_FILE_GET:
	case SCALL_FILE_STAT:
	case SCALL_FILE_MKDIR:
	case SCALL_FILE_MOVE:
		return file_json(c, r);
	case SCALL_CLOSE:
		o = cJSON_CreateObject();
		add_text(o, "id", r->closed);
		add_text(o, "status", "closed");
		return o;
	case SCALL_PAUSE:
	case SCALL_SNAPSHOT:
		o = cJSON_CreateObject();
		if (c->kind == SCALL_PAUSE)
			add_text(o, "status", "paused");
		add_text(o, c->kind == SCALL_PAUSE ? "image_id" : "snapshot_id", r->image.id);
		if (c->kind == SCALL_SNAPSHOT)
			add_text(o, "name", r->image.name);
		sesscall_image_numbers(o, r);
		return o;
	case SCALL_CONTEXT_LIST: {
		o = cJSON_CreateObject();
		cJSON *a = cJSON_AddArrayToObject(o, "contexts");
		for (size_t i = 0; i < r->ncontexts; i++)
			cJSON_AddItemToArray(a, context_json(&r->contexts[i]));
		return o;
	}
	case SCALL_CONTEXT_REMOVE:
		o = cJSON_CreateObject();
		add_text(o, "id", c->context);
		cJSON_AddBoolToObject(o, "removed", true);
		return o;
	case SCALL_CONTEXT_CREATE:
	case SCALL_CONTEXT_RESTART:
		return r->ncontexts ? context_json(&r->contexts[0]) : cJSON_CreateObject();
	case SCALL_PROCESS_LIST: {
		o = cJSON_CreateObject();
		cJSON *a = cJSON_AddArrayToObject(o, "processes");
		for (size_t i = 0; i < r->nprocs; i++)
			cJSON_AddItemToArray(a, process_json(&r->procs[i]));
		return o;
	}
	case SCALL_WATCH_START:
	case SCALL_WATCH_STOP:
		o = cJSON_CreateObject();
		add_text(o, "watcher", c->kind == SCALL_WATCH_START ? r->watch.id : c->watch.id);
		return o;
	case SCALL_WATCH_EVENTS: {
		o = cJSON_CreateObject();
		cJSON *ev = r->watch.events ? cJSON_Parse(r->watch.events) : NULL;
		cJSON_AddItemToObject(o, "events", ev ? ev : cJSON_CreateArray());
		return o;
	}
	case SCALL_INTERRUPT:
		o = cJSON_CreateObject();
		cJSON_AddBoolToObject(o, "interrupted", r->interrupted > 0);
		return o;
	default:
		return r->nprocs ? process_json(&r->procs[0]) : cJSON_CreateObject();
	}
}

char *sessrender_cell_done(const char *stored, const char **status)
{
	cJSON *j = stored ? cJSON_Parse(stored) : NULL;
	struct sess_reply r;
	char *out;
	*status = NULL;
	if (!j) {
		cJSON_Delete(j);
		return xstrdup("{}");
	}
	sesscall_reply_load(SCALL_EXECUTE, j, NULL, 0, &r);
	cJSON *o;
	if (r.err != SERR_NONE) {
		int http;
		const char *code;
		sessrender_error(r.err, &http, &code);
		o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "http", http);
		cJSON *e = cJSON_AddObjectToObject(o, "error");
		add_text(e, "code", code);
		add_text(e, "message", r.message);
	} else {
		o = sessrender_cell(&r.cell);
		*status = cell_status_name(r.cell.status);
	}
	out = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	cJSON_Delete(j);
	sess_reply_release(&r);
	return out;
}

char *sessrender_process_done(const char *stored)
{
	cJSON *j = stored ? cJSON_Parse(stored) : NULL;
	struct sess_reply r;
	if (!j || sesscall_reply_load(SCALL_PROCESS_WAIT, j, NULL, 0, &r) < 0 || !r.nprocs) {
		if (j)
			sess_reply_release(&r);
		cJSON_Delete(j);
		return xstrdup("{}");
	}
	cJSON *o = process_json(&r.procs[0]);
	char *out = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	cJSON_Delete(j);
	sess_reply_release(&r);
	return out;
}

/* What the call asked, by kind, and what its answer named (a new pid ...). */
static void history_what(cJSON *o, const struct sess_hist *h)
{
	const struct sess_call *c = &h->call;
	const struct sess_reply *r = &h->reply;
	bool ok = h->done && r->err == SERR_NONE;
	switch (c->kind) {
	case SCALL_EXECUTE:
		add_text(o, "context", c->context[0] ? c->context : SESS_DEFAULT_CONTEXT);
		add_text(o, "code", c->exec.code);
		if (ok) {
			add_text(o, "status", cell_status_name(r->cell.status));
			cJSON_AddNumberToObject(o, "time_ms", (double)r->cell.time_ms);
			cJSON_AddNumberToObject(o, "wall_ms", (double)r->cell.wall_ms);
			cJSON_AddNumberToObject(o, "execution_count",
						(double)r->cell.execution_count);
			if (r->cell.has_verdict)
				add_text(o, "verdict", status_name(r->cell.verdict));
		}
		break;
	case SCALL_INSTALL: {
		add_text(o, "manager", c->install.manager);
		cJSON *a = cJSON_AddArrayToObject(o, "packages");
		for (char *const *s = c->install.packages; s && *s; s++)
			cJSON_AddItemToArray(a, cJSON_CreateString(*s));
		if (ok)
			cJSON_AddBoolToObject(o, "installed", r->install.ok);
		break;
	}
	case SCALL_FILE_PUT:
		add_text(o, "path", c->path);
		cJSON_AddNumberToObject(o, "size", (double)h->body_len);
		break;
	case SCALL_FILE_GET:
	case SCALL_FILE_LIST:
	case SCALL_FILE_DELETE:
	case SCALL_FILE_STAT:
	case SCALL_FILE_MKDIR:
	case SCALL_FILE_MOVE:
		add_text(o, "path", c->path);
		if (c->to)
			add_text(o, "to", c->to);
		break;
	case SCALL_CONTEXT_CREATE:
		if (c->ctx.language[0])
			add_text(o, "language", c->ctx.language);
		if (ok && r->ncontexts)
			add_text(o, "context", r->contexts[0].id);
		break;
	case SCALL_CONTEXT_RESTART:
	case SCALL_CONTEXT_REMOVE:
		add_text(o, "context", c->context);
		break;
	case SCALL_PROCESS_START: {
		cJSON *a = cJSON_AddArrayToObject(o, "argv");
		for (char *const *s = c->proc.argv; s && *s; s++)
			cJSON_AddItemToArray(a, cJSON_CreateString(*s));
		add_text(o, "cwd", c->path);
		if (c->proc.tag[0])
			add_text(o, "tag", c->proc.tag);
		if (ok && r->nprocs)
			cJSON_AddNumberToObject(o, "pid", (double)r->procs[0].pid);
		break;
	}
	case SCALL_PROCESS_INPUT:
		cJSON_AddNumberToObject(o, "pid", (double)c->proc.pid);
		cJSON_AddNumberToObject(o, "size", (double)h->body_len);
		break;
	case SCALL_PROCESS_SIGNAL:
		cJSON_AddNumberToObject(o, "pid", (double)c->proc.pid);
		cJSON_AddNumberToObject(o, "signal", c->proc.signal);
		break;
	case SCALL_PROCESS_CLOSE_STDIN:
	case SCALL_PROCESS_WAIT:
		cJSON_AddNumberToObject(o, "pid", (double)c->proc.pid);
		break;
	default:
		break;
	}
}

cJSON *sessrender_history_entry(const struct sess_hist *h)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "seq", (double)h->call.id);
	add_text(o, "kind", scall_kind_name(h->call.kind));
	add_text(o, "at", h->created_at);
	cJSON_AddItemToObject(o, "finished_at",
			      h->finished_at[0] ? cJSON_CreateString(h->finished_at)
						: cJSON_CreateNull());
	cJSON_AddItemToObject(o, "duration_ms",
			      h->done && h->duration_ms >= 0
				  ? cJSON_CreateNumber((double)h->duration_ms)
				  : cJSON_CreateNull());
	add_text(o, "state", h->done ? "done" : "open");
	bool ok = h->done && h->reply.err == SERR_NONE && !h->load_error[0];
	cJSON_AddBoolToObject(o, "ok", ok);
	if (h->load_error[0]) {
		cJSON *e = cJSON_AddObjectToObject(o, "error");
		add_text(e, "code", "internal_error");
		add_text(e, "message", h->load_error);
	} else if (h->done && h->reply.err != SERR_NONE) {
		int status;
		const char *code;
		sessrender_error(h->reply.err, &status, &code);
		cJSON *e = cJSON_AddObjectToObject(o, "error");
		add_text(e, "code", code);
		add_text(e, "message", h->reply.message);
	}
	history_what(o, h);
	return o;
}

cJSON *sessrender_egress_entry(const struct sess_egress *e)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)e->id);
	cJSON_AddStringToObject(o, "at", e->at);
	cJSON_AddStringToObject(o, "method", e->method);
	cJSON_AddStringToObject(o, "host", e->host);
	cJSON_AddNumberToObject(o, "port", e->port);
	cJSON_AddStringToObject(o, "decision", e->allowed ? "allowed" : "refused");
	cJSON_AddStringToObject(o, "reason", e->reason);
	cJSON_AddStringToObject(o, "address", e->addr);
	cJSON_AddNumberToObject(o, "bytes_out", (double)e->bytes_out);
	cJSON_AddNumberToObject(o, "bytes_in", (double)e->bytes_in);
	return o;
}
