/* e2b_envd: envd's /health, /files (read, write one or several files) and process.Process over a
 * session; the rest 501. */
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
#include "judge/api/e2b_connect.h"
#include "judge/api/e2b_control.h"
#include "judge/api/e2b_fs.h"
#include "judge/api/e2b_process.h"
#include "judge/api/http.h"
#include "judge/api/sessions.h"
#include "judge/service/session/sesscall.h"

/* The sandbox's home (the session folder) as E2B's users know it. */
#define HOME "/home/user"

/* A write's answer names its files as the caller will see them. */
struct fctx {
	size_t n;
	char (*paths)[1024]; /* absolute, under HOME; one per file written */
};

static void fctx_free(void *p)
{
	struct fctx *c = p;
	if (c)
		free(c->paths);
	free(c);
}

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
	/* one EntryInfo per file, in the order of the parts */
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < c->n; i++) {
		cJSON *o = cJSON_CreateObject();
		const char *slash = strrchr(c->paths[i], '/');
		cJSON_AddStringToObject(o, "name", slash ? slash + 1 : c->paths[i]);
		cJSON_AddStringToObject(o, "type", "file");
		cJSON_AddStringToObject(o, "path", c->paths[i]);
		cJSON_AddItemToArray(arr, o);
	}
	char *s = cJSON_PrintUnformatted(arr);
	strbuf_addstr(out, s);
	free(s);
	cJSON_Delete(arr);
	return 200;
}

/* Parameter name (name or filename) of a part's Content-Disposition header
 * line hdr into out; false when absent. */
static bool disposition_param(const char *hdr, const char *name, struct strbuf *out)
{
	size_t n = strlen(name);
	for (const char *p = hdr; (p = strcasestr(p, name)); p += n) {
		/* whole parameter names only: "name" is not the end of "filename" */
		if ((p > hdr && p[-1] != ';' && p[-1] != ' ' && p[-1] != '\t') || p[n] != '=')
			continue;
		const char *v = p + n + 1;
		if (*v == '"')
			strbuf_add(out, v + 1, strcspn(v + 1, "\""));
		else
			strbuf_add(out, v, strcspn(v, "; \t\r\n"));
		return true;
	}
	return false;
}

/* The parts named "file" of a multipart/form-data body, in order, into
 * parts (at most max; bytes point into r's body, filenames into names[i],
 * "" when a part has none). Returns how many, or -1 when the body is not
 * such a body, -2 when it holds more than max. */
static int multipart_files(struct http_request *r, struct sessreq_part *parts, struct strbuf *names,
			   int max)
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
	int n = 0, ret = -1;
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
		struct strbuf hdr = STRBUF_INIT, field = STRBUF_INIT;
		strbuf_add(&hdr, p, (size_t)(hend - p));
		/* parts of any other field are ignored, as envd does */
		if (disposition_param(hdr.buf, "name", &field) && field.buf &&
		    !strcmp(field.buf, "file")) {
			if (n == max) {
				strbuf_release(&hdr);
				strbuf_release(&field);
				ret = -2;
				goto out;
			}
			disposition_param(hdr.buf, "filename", &names[n]);
			parts[n].data = pd;
			parts[n].len = (size_t)(next - pd);
			n++;
		}
		strbuf_release(&hdr);
		strbuf_release(&field);
		p = next;
	}
	ret = n;
out:
	strbuf_release(&delim);
	return ret;
}

/* POST /files: every part named file, its path the path parameter when given
 * (envd's rule), else its filename; all written by one file_put call. */
static void write_files(struct http_request *r, struct api *a, const char *sandbox)
{
	const char *qpath = http_query(r, "path");
	struct sessreq_part parts[SESS_MAX_PARTS];
	struct strbuf names[SESS_MAX_PARTS], rel[SESS_MAX_PARTS];
	for (int i = 0; i < SESS_MAX_PARTS; i++) {
		strbuf_init(&names[i]);
		strbuf_init(&rel[i]);
	}
	struct fctx *c = NULL;
	int n = multipart_files(r, parts, names, SESS_MAX_PARTS);
	if (n == -1) {
		files_error(r, 400, "the body must be multipart/form-data with parts named file");
		goto out;
	}
	if (n == -2) {
		char m[96];
		snprintf(m, sizeof m, "a write holds at most %d files", SESS_MAX_PARTS);
		files_error(r, 400, m);
		goto out;
	}
	if (n == 0) {
		files_error(r, 400, "no part named file");
		goto out;
	}
	c = xcalloc(1, sizeof *c);
	c->paths = xcalloc((size_t)n, sizeof *c->paths);
	for (int i = 0; i < n; i++) {
		const char *p = qpath && *qpath ? qpath : names[i].buf;
		if (!p || !*p) {
			char m[96];
			snprintf(
			    m, sizeof m,
			    "part %d has no filename (its path) and there is no path parameter",
			    i + 1);
			files_error(r, 400, m);
			goto out;
		}
		if (e2b_envd_path(p, &rel[i], c->paths[i]) < 0) {
			char m[1200];
			snprintf(m, sizeof m,
				 "the path '%.1000s' must be under " HOME " (the sandbox's home)",
				 p);
			files_error(r, 400, m);
			goto out;
		}
		parts[i].path = rel[i].buf ? rel[i].buf : "";
	}
	c->n = (size_t)n;
	r->transform = files_render;
	r->transform_arg = c;
	r->transform_free = fctx_free;
	sessions_file_parts(r, a, sandbox, (size_t)n, parts);
	c = NULL;
out:
	fctx_free(c);
	for (int i = 0; i < SESS_MAX_PARTS; i++) {
		strbuf_release(&names[i]);
		strbuf_release(&rel[i]);
	}
}

static void files(struct http_request *r, struct api *a, const char *sandbox)
{
	if (strcmp(r->method, "GET"))
		return write_files(r, a, sandbox);
	const char *qpath = http_query(r, "path");
	struct strbuf rel = STRBUF_INIT;
	struct fctx *c = xcalloc(1, sizeof *c);
	c->paths = xcalloc(1, sizeof *c->paths);
	if (!qpath || !*qpath || e2b_envd_path(qpath, &rel, c->paths[0]) < 0) {
		fctx_free(c);
		files_error(r, 400, "the path must be under " HOME " (the sandbox's home)");
		goto out;
	}
	c->n = 1;
	r->transform = files_render;
	r->transform_arg = c;
	r->transform_free = fctx_free;
	sessions_file(r, a, sandbox, rel.buf ? rel.buf : "", SCALL_FILE_GET, NULL, 0);
out:
	strbuf_release(&rel);
}

int e2b_envd_refusal(struct http_request *r, int status, const char *body, size_t len,
		     struct strbuf *out, void *arg)
{
	(void)len;
	(void)arg;
	cJSON *j = status >= 400 ? cJSON_Parse(body) : NULL;
	bool judge_error = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "error"));
	cJSON_Delete(j);
	if (!judge_error)
		return -1;
	if (!strncmp(r->url, "/process.", 9) || !strncmp(r->url, "/filesystem.", 12))
		return e2b_connect_render_error(status, body, out);
	struct strbuf m = STRBUF_INIT;
	e2b_control_message(body, &m);
	e2b_control_error(out, status, m.buf ? m.buf : "");
	strbuf_release(&m);
	return status;
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
