/* e2b_fs: envd's filesystem.Filesystem over a session's file calls (see e2b_fs.h). */
#include "judge/api/e2b_fs.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "judge/api/e2b_connect.h"
#include "judge/api/e2b_envd.h"
#include "judge/api/e2b_watch.h"
#include "judge/api/http.h"
#include "judge/api/sessions.h"

#define STR_(x) #x
#define STR(x)	STR_(x)

enum method { M_STAT, M_LIST, M_MKDIR, M_MOVE, M_REMOVE };

/* What the answer needs: the call, and the E2B path its entries are under. */
struct fsctx {
	enum method m;
	char abs[1024]; /* the path asked for (Move: the destination) */
};

/* An EntryInfo from a /v1 entry {name, type, size, mtime, mode?} at path. */
static cJSON *entry_info(const cJSON *e, const char *path)
{
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "type"));
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
	cJSON *size = cJSON_GetObjectItemCaseSensitive(e, "size");
	cJSON *mtime = cJSON_GetObjectItemCaseSensitive(e, "mtime");
	cJSON *mode = cJSON_GetObjectItemCaseSensitive(e, "mode");
	bool dir = type && !strcmp(type, "dir"), link = type && !strcmp(type, "symlink");
	bool file = type && !strcmp(type, "file");
	int perm = cJSON_IsNumber(mode) ? mode->valueint & 0777 : dir ? 0755 : 0644;
	cJSON *o = cJSON_CreateObject();
	const char *slash = strrchr(path, '/');
	/* a deep listing names entries by their path below the folder listed */
	const char *nslash = name ? strrchr(name, '/') : NULL;
	cJSON_AddStringToObject(o, "name",
				nslash		? nslash + 1
				: name && *name ? name
				: slash		? slash + 1
						: path);
	/* the SDK leaves out entries of an unspecified type (FIFOs, sockets) */
	cJSON_AddStringToObject(o, "type",
				file   ? "FILE_TYPE_FILE"
				: dir  ? "FILE_TYPE_DIRECTORY"
				: link ? "FILE_TYPE_SYMLINK"
				       : "FILE_TYPE_UNSPECIFIED");
	cJSON_AddStringToObject(o, "path", path);
	char num[32];
	snprintf(num, sizeof num, "%.0f", cJSON_IsNumber(size) ? size->valuedouble : 0);
	cJSON_AddStringToObject(o, "size", num); /* int64: a string in proto3 JSON */
	cJSON_AddNumberToObject(o, "mode", perm);
	char p[11] = "----------";
	p[0] = dir ? 'd' : link ? 'l' : '-';
	for (int i = 0; i < 9; i++)
		if (perm & (0400 >> i))
			p[1 + i] = "rwx"[i % 3];
	cJSON_AddStringToObject(o, "permissions", p);
	cJSON_AddStringToObject(o, "owner", "user");
	cJSON_AddStringToObject(o, "group", "user");
	char when[32];
	clock_rfc3339_ms((int64_t)(cJSON_IsNumber(mtime) ? mtime->valuedouble : 0) * 1000, when);
	cJSON_AddStringToObject(o, "modifiedTime", when);
	return o;
}

/* The /v1 answer of a file call as the Filesystem method's. */
static int render(struct http_request *r, int status, const char *body, size_t len,
		  struct strbuf *out, void *arg)
{
	(void)r;
	(void)len;
	struct fsctx *c = arg;
	if (status >= 300) {
		if (c->m == M_REMOVE && status == 404 && !strstr(body, "no session"))
			status = 200; /* envd removes with RemoveAll: nothing there is done */
		else
			return e2b_connect_render_error(status, body, out);
	}
	cJSON *in = cJSON_Parse(body), *o = cJSON_CreateObject();
	if (c->m == M_LIST) {
		cJSON *list = cJSON_AddArrayToObject(o, "entries");
		const cJSON *e;
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(in, "files"))
		{
			const char *n =
			    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
			char path[1400];
			snprintf(path, sizeof path, "%s/%s", c->abs, n ? n : "");
			cJSON_AddItemToArray(list, entry_info(e, path));
		}
	} else if (c->m == M_MKDIR &&
		   cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(in, "existed"))) {
		cJSON_Delete(in);
		cJSON_Delete(o);
		cJSON *err = e2b_connect_error_json("already_exists", "the folder exists already");
		char *s = cJSON_PrintUnformatted(err);
		strbuf_addstr(out, s);
		cJSON_free(s);
		cJSON_Delete(err);
		return 409;
	} else if (c->m != M_REMOVE) {
		cJSON *e = cJSON_GetObjectItemCaseSensitive(in, "entry");
		if (e)
			cJSON_AddItemToObject(o, "entry", entry_info(e, c->abs));
	}
	char *s = cJSON_PrintUnformatted(o);
	strbuf_addstr(out, s);
	cJSON_free(s);
	cJSON_Delete(o);
	cJSON_Delete(in);
	return 200;
}

/* The message's path field as the session folder's (rel) and E2B's (abs);
 * false after answering the error. */
static bool path_of(struct http_request *r, const cJSON *in, const char *field, struct strbuf *rel,
		    char abs[1024])
{
	const char *p = cJSON_GetStringValue(e2b_connect_field(in, field, NULL));
	if (!p || !*p) {
		char m[64];
		snprintf(m, sizeof m, "%s is required", field);
		e2b_connect_respond_error(r, "invalid_argument", m);
		return false;
	}
	if (e2b_envd_path(p, rel, abs) < 0) {
		e2b_connect_respond_error(r, "invalid_argument",
					  "the path must be under /home/user (the sandbox's home)");
		return false;
	}
	return true;
}

void e2b_fs_handle(struct http_request *r, struct api *a, const char *sandbox, const char *method)
{
	static const struct {
		const char *name;
		enum method m;
	} methods[] = {{"Stat", M_STAT},
		       {"ListDir", M_LIST},
		       {"MakeDir", M_MKDIR},
		       {"Move", M_MOVE},
		       {"Remove", M_REMOVE}};
	if (!strcmp(r->method, "POST") && e2b_watch_handle(r, a, sandbox, method))
		return;
	int found = -1;
	for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
		if (!strcmp(method, methods[i].name))
			found = (int)i;
	if (found < 0 || strcmp(r->method, "POST")) {
		e2b_connect_respond_error(r, "unimplemented",
					  "this judge does not serve that filesystem call");
		return;
	}
	cJSON *in = e2b_connect_message(r, false);
	if (!in)
		return;
	struct fsctx *c = xcalloc(1, sizeof *c);
	c->m = methods[found].m;
	struct strbuf rel = STRBUF_INIT, to = STRBUF_INIT;
	bool ok = path_of(r, in, c->m == M_MOVE ? "source" : "path", &rel, c->abs);
	if (ok && c->m == M_MOVE)
		ok = path_of(r, in, "destination", &to, c->abs);
	const cJSON *d = e2b_connect_field(in, "depth", NULL);
	int depth = cJSON_IsNumber(d) && d->valuedouble >= 1 ? (int)fmin(d->valuedouble, 1e6) : 1;
	if (ok && c->m == M_LIST && depth > SESS_MAX_DEPTH) {
		e2b_connect_respond_error(r, "invalid_argument",
					  "depth is at most " STR(SESS_MAX_DEPTH));
		ok = false;
	}
	if (!ok) {
		free(c);
		goto out;
	}
	r->transform = render;
	r->transform_arg = c;
	r->transform_free = free;
	const char *p = rel.buf ? rel.buf : "";
	switch (c->m) {
	case M_STAT:
		sessions_file(r, a, sandbox, p, SCALL_FILE_STAT, NULL, 0);
		break;
	case M_LIST: {
		/* envd: depth 0 is 1; deeper lists every folder's entries down to
		 * it (capped at SESS_MAX_DEPTH levels and SESS_MAX_ENTRIES entries) */
		sessions_file_list(r, a, sandbox, p, depth);
		break;
	}
	case M_MKDIR:
		sessions_file(r, a, sandbox, p, SCALL_FILE_MKDIR, NULL, 0);
		break;
	case M_MOVE:
		sessions_file_move(r, a, sandbox, p, to.buf ? to.buf : "");
		break;
	case M_REMOVE:
		sessions_file(r, a, sandbox, p, SCALL_FILE_DELETE, NULL, 0);
		break;
	}
out:
	strbuf_release(&rel);
	strbuf_release(&to);
	cJSON_Delete(in);
}
