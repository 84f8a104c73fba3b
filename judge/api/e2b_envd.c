/* e2b_envd: envd's /health, /files (read, write one file) and process.Process over a session; the
 * rest 501. */
#define _GNU_SOURCE /* memmem, strcasestr */
#include "judge/api/e2b_envd.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/strbuf.h"
#include "common/xalloc.h"
#include "judge/api/api.h"
#include "judge/api/e2b_control.h"
#include "judge/api/e2b_fs.h"
#include "judge/api/e2b_process.h"
#include "judge/api/http.h"
#include "judge/api/sessions.h"
#include "judge/service/session/sesscall.h"

/* The sandbox's home (the session folder) as E2B's users know it. */
#define HOME "/home/user"

/* A written file's answer needs its path, as the caller will see it. */
struct fctx {
	char path[1024]; /* absolute, under HOME */
};

/* The transform of /health: the session's /v1 JSON as 204 or 502. */
static int health(struct http_request *r, int status, const char *body, size_t len,
		  struct strbuf *out, void *arg)
{
	(void)r;
	(void)len;
	(void)arg;
	cJSON *j = status == 200 ? cJSON_Parse(body) : NULL;
	const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "status"));
	bool up = st && !strcmp(st, "ready");
	cJSON_Delete(j);
	if (up)
		return 204;
	e2b_control_error(out, 502, "the sandbox is not running");
	return 502;
}

int e2b_envd_path(const char *p, struct strbuf *rel, char abs[1024])
{
	size_t n = sizeof HOME - 1;
	if (!strncmp(p, "~/", 2) || !strcmp(p, "~"))
		p += p[1] ? 2 : 1;
	else if (p[0] == '/') {
		if (strncmp(p, HOME, n) || (p[n] && p[n] != '/'))
			return -1;
		p += n + (p[n] == '/');
	}
	strbuf_addstr(rel, p);
	snprintf(abs, 1024, "%s%s%s", HOME, *p ? "/" : "", p);
	return 0;
}

static void files_error(struct http_request *r, int status, const char *message)
{
	struct strbuf b = STRBUF_INIT;
	e2b_control_error(&b, status, message);
	http_respond(r, status, "application/json", b.buf, b.len, NULL);
	strbuf_release(&b);
}

/* The transform of /files: bytes (read) or the written file (write) as
 * envd's answers; errors as {"code", "message"} (404: FileNotFoundError). */
static int files_render(struct http_request *r, int status, const char *body, size_t len,
			struct strbuf *out, void *arg)
{
	struct fctx *c = arg;
	if (status >= 300) {
		struct strbuf m = STRBUF_INIT;
		e2b_control_message(body, &m);
		int st = status == 410 ||
				 (status == 404 && !strncmp(m.buf ? m.buf : "", "no session", 10))
			     ? 502
			 : status == 409 ? 400
					 : status;
		e2b_control_error(out, st, m.buf ? m.buf : "");
		strbuf_release(&m);
		return st;
	}
	if (!strcmp(r->method, "GET")) {
		strbuf_add(out, body, len);
		return 200;
	}
	const char *slash = strrchr(c->path, '/');
	cJSON *arr = cJSON_CreateArray(), *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", slash ? slash + 1 : c->path);
	cJSON_AddStringToObject(o, "type", "file");
	cJSON_AddStringToObject(o, "path", c->path);
	cJSON_AddItemToArray(arr, o);
	char *s = cJSON_PrintUnformatted(arr);
	strbuf_addstr(out, s);
	free(s);
	cJSON_Delete(arr);
	return 200;
}

/* The one part named "file" of a multipart/form-data body: its bytes (into
 * *data, *len, pointing into r's body) and its filename (into name).
 * Returns 1, 0 when there is none, -1 when the body is not such (or holds
 * more than one file: not served yet). */
static int multipart_file(struct http_request *r, const char **data, size_t *len,
			  struct strbuf *name)
{
	const char *ct = http_header(r, "Content-Type");
	const char *b = ct ? strcasestr(ct, "boundary=") : NULL;
	if (!ct || strncasecmp(ct, "multipart/form-data", 19) || !b)
		return -1;
	b += 9;
	struct strbuf delim = STRBUF_INIT;
	strbuf_addstr(&delim, "\r\n--");
	size_t bl = *b == '"' ? strcspn(b + 1, "\"") : strcspn(b, "; \t");
	strbuf_add(&delim, *b == '"' ? b + 1 : b, bl);
	const char *body = r->body.buf ? r->body.buf : "", *end = body + r->body.len;
	int found = 0, ret = -1;
	/* the first delimiter has no CRLF before it */
	const char *p = memmem(body, r->body.len, delim.buf + 2, delim.len - 2);
	while (p) {
		p += (p == body || p[0] == '-' ? delim.len - 2 : delim.len);
		if (end - p >= 2 && !memcmp(p, "--", 2))
			break;
		const char *hend = memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
		if (!hend)
			goto out;
		const char *pd = hend + 4;
		const char *next = memmem(pd, (size_t)(end - pd), delim.buf, delim.len);
		if (!next)
			goto out;
		struct strbuf hdr = STRBUF_INIT;
		strbuf_add(&hdr, p, (size_t)(hend - p));
		const char *fn = strstr(hdr.buf, "filename=\"");
		bool is_file = strstr(hdr.buf, "name=\"file\"") != NULL;
		if (is_file) {
			if (found++) {
				strbuf_release(&hdr);
				goto out;
			}
			if (fn)
				strbuf_add(name, fn + 10, strcspn(fn + 10, "\""));
			*data = pd;
			*len = (size_t)(next - pd);
		}
		strbuf_release(&hdr);
		p = next;
	}
	ret = found;
out:
	strbuf_release(&delim);
	return ret;
}

static void files(struct http_request *r, struct api *a, const char *sandbox)
{
	const char *qpath = http_query(r, "path");
	bool get = !strcmp(r->method, "GET");
	struct strbuf rel = STRBUF_INIT, name = STRBUF_INIT;
	const char *data = NULL;
	size_t len = 0;
	if (!get) {
		int n = multipart_file(r, &data, &len, &name);
		if (n <= 0) {
			files_error(r, 400,
				    n < 0 ? "the body must be multipart/form-data with one part "
					    "named file (several files per request: not yet)"
					  : "no part named file");
			goto out;
		}
	}
	const char *p = qpath && *qpath ? qpath : name.buf;
	struct fctx *c = xcalloc(1, sizeof *c);
	if (!p || !*p || e2b_envd_path(p, &rel, c->path) < 0) {
		free(c);
		files_error(r, 400, "the path must be under " HOME " (the sandbox's home)");
		goto out;
	}
	r->transform = files_render;
	r->transform_arg = c;
	r->transform_free = free;
	sessions_file(r, a, sandbox, rel.buf ? rel.buf : "", get ? SCALL_FILE_GET : SCALL_FILE_PUT,
		      data, len);
out:
	strbuf_release(&rel);
	strbuf_release(&name);
}

void e2b_envd_handle(struct http_request *r, struct api *a, const char *sandbox)
{
	if (!strcmp(r->url, "/health") && strcmp(r->method, "POST")) {
		r->transform = health;
		sessions_get(r, a, sandbox);
		return;
	}
	if (!strcmp(r->url, "/files") && (!strcmp(r->method, "GET") || !strcmp(r->method, "POST")))
		return files(r, a, sandbox);
	if (!strncmp(r->url, "/process.Process/", 17))
		return e2b_process_handle(r, a, sandbox, r->url + 17);
	if (!strncmp(r->url, "/filesystem.Filesystem/", 23))
		return e2b_fs_handle(r, a, sandbox, r->url + 23);
	struct strbuf b = STRBUF_INIT;
	{
		/* a Connect-RPC error: its code is a string */
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "code", "unimplemented");
		cJSON_AddStringToObject(o, "message",
					"this judge does not serve that E2B call yet");
		char *s = cJSON_PrintUnformatted(o);
		strbuf_addstr(&b, s);
		cJSON_free(s);
		cJSON_Delete(o);
	}
	http_respond(r, 501, "application/json", b.buf, b.len, NULL);
	strbuf_release(&b);
}
