/* mcp_stream: tools/call answered as Server-Sent Events, with progress and cancellation (see
 * mcp_stream.h). */
#include "judge/api/mcp_stream.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "judge/api/http.h"
#include "judge/api/mcp.h"
#include "judge/api/sse.h"

/* Output text a progress message carries at most. */
#define MESSAGE_MAX 2000

struct mcp_stream {
	cJSON *token; /* _meta.progressToken, or NULL: no progress notifications */
	long progress;
	char *tag;
	bool modern;
};

/* "mcp:<key>:<id as JSON>" (a string id and a number id stay apart). */
static bool make_tag(int64_t key_id, const cJSON *id, char *buf, size_t len)
{
	if (!cJSON_IsString(id) && !cJSON_IsNumber(id))
		return false;
	char *text = cJSON_PrintUnformatted(id);
	int n = snprintf(buf, len, "mcp:%" PRId64 ":%s", key_id, text);
	free(text);
	return n > 0 && (size_t)n < len;
}

bool mcp_stream_wanted(struct http_request *r, const cJSON *params)
{
	if (!sse_wanted(r))
		return false;
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	const cJSON *tok = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
	const char *accept = http_header(r, "Accept");
	return cJSON_IsString(tok) || cJSON_IsNumber(tok) || !strstr(accept, "application/json");
}

struct mcp_stream *mcp_stream_new(int64_t key_id, const cJSON *id, const cJSON *params, bool modern)
{
	struct mcp_stream *s = xcalloc(1, sizeof *s);
	s->modern = modern;
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	const cJSON *tok = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
	if (cJSON_IsString(tok) || cJSON_IsNumber(tok))
		s->token = cJSON_Duplicate(tok, 1);
	char tag[300];
	s->tag = xstrdup(make_tag(key_id, id, tag, sizeof tag) ? tag : "mcp:none");
	return s;
}

void mcp_stream_free(struct mcp_stream *s)
{
	if (!s)
		return;
	cJSON_Delete(s->token);
	free(s->tag);
	free(s);
}

const char *mcp_stream_tag(const struct mcp_stream *s)
{
	return s->tag;
}

bool mcp_stream_cancel_tag(int64_t key_id, const cJSON *params, char *buf, size_t len)
{
	return make_tag(key_id, cJSON_GetObjectItemCaseSensitive(params, "requestId"), buf, len);
}

/* Appends at most max bytes of s, cut at a character boundary. */
static void add_cut(struct strbuf *sb, const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n > max) {
		n = max;
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	strbuf_add(sb, s, n);
	if (n < strlen(s))
		strbuf_addstr(sb, "...");
}

/* What a progress message says of an event. */
static void describe(const char *event, const char *data, struct strbuf *msg)
{
	cJSON *d = cJSON_Parse(data);
	strbuf_addf(msg, "%s", event);
	if (cJSON_IsString(d)) { /* stdout, stderr */
		strbuf_addstr(msg, ": ");
		add_cut(msg, d->valuestring, MESSAGE_MAX);
	} else if (!strcmp(event, "test")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(d, "name");
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(d, "status");
		strbuf_addf(msg, " %.100s: %.40s", cJSON_IsString(name) ? name->valuestring : "?",
			    cJSON_IsString(st) ? st->valuestring : "?");
	} else if (!strcmp(event, "truncated")) {
		strbuf_addstr(msg, ": the live output stops here (the result keeps its own)");
	}
	cJSON_Delete(d);
}

static void add_message(struct strbuf *out, cJSON *o)
{
	char *text = cJSON_PrintUnformatted(o);
	sse_encode(out, 0, NULL, text);
	free(text);
	cJSON_Delete(o);
}

bool mcp_stream_event(struct mcp_stream *s, const cJSON *id, const char *event, const char *data,
		      struct strbuf *out)
{
	if (!strcmp(event, "done")) {
		struct strbuf reply = STRBUF_INIT;
		mcp_tool_reply(id, 200, data, strlen(data), s->modern, &reply);
		while (reply.len && reply.buf[reply.len - 1] == '\n')
			reply.buf[--reply.len] = 0;
		sse_encode(out, 0, NULL, reply.buf);
		strbuf_release(&reply);
		return true;
	}
	if (!s->token)
		return false;
	struct strbuf msg = STRBUF_INIT;
	describe(event, data, &msg);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddStringToObject(o, "method", "notifications/progress");
	cJSON *p = cJSON_AddObjectToObject(o, "params");
	cJSON_AddItemToObject(p, "progressToken", cJSON_Duplicate(s->token, 1));
	cJSON_AddNumberToObject(p, "progress", (double)++s->progress);
	cJSON_AddStringToObject(p, "message", msg.buf);
	strbuf_release(&msg);
	add_message(out, o);
	return false;
}
