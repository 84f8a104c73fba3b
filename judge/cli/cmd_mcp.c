/* cmd_mcp: `judge mcp [--url URL] [--key KEY]`, the MCP stdio transport for
 * desktop clients that start a command. A thin bridge: each newline-delimited
 * JSON-RPC message read on stdin is POSTed to a running judge's /mcp (the
 * Streamable HTTP endpoint of judge/api/mcp.c), and the JSON reply is written
 * as one line on stdout (nothing for a notification's 202). stdout carries
 * MCP messages only; logs go to stderr. A line that is not JSON, or a judge
 * that cannot be reached, becomes a JSON-RPC error line; EOF on stdin ends
 * the process with 0.
 *
 * A line of the 2026-07-28 revision (its params._meta names the protocol
 * version: no initialize came first) is sent with the headers that revision's
 * HTTP transport requires, mirrored from the line itself: MCP-Protocol-Version,
 * Mcp-Method, and Mcp-Name for tools/call, prompts/get and resources/read
 * (streamable-http.mdx, "Request Metadata"). On stdio these headers do not
 * exist; the bridge is the HTTP client here, so it adds them.
 */
#include <curl/curl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "judge/cli/client.h"
#include "judge/cli/cmd.h"
#include "common/base64.h"
#include "common/config.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#define MCP_CONNECT_TIMEOUT_S 10L
/* longer than any tool waits (max_wait_s, get_submission's wait_s) */
#define MCP_TIMEOUT_S 900L
#define MCP_MAX_REPLY (64L << 20)
/* JSON-RPC: the server could not answer (implementation-defined range) */
#define MCP_ERR_UNREACHABLE -32000

struct mcp_bridge {
	CURL *curl;
	char *url;
	char *auth;	  /* "Authorization: Bearer ..." or NULL */
	char version[32]; /* the protocol version initialize agreed on, for the header */
};

static size_t mcp_on_body(char *data, size_t size, size_t n, void *arg)
{
	struct strbuf *b = arg;
	if (b->len + size * n > (size_t)MCP_MAX_REPLY)
		return 0;
	strbuf_add(b, data, size * n);
	return size * n;
}

/* Writes one message as one line on stdout and flushes it; -1 when stdout is gone. */
static int mcp_write(const cJSON *msg)
{
	char *s = cJSON_PrintUnformatted(msg);
	if (!s)
		xalloc_die(0);
	int ret = puts(s) < 0 || fflush(stdout) ? -1 : 0;
	cJSON_free(s);
	return ret;
}

/* A JSON-RPC error answer; id is copied (NULL: null). */
static int mcp_write_error(const cJSON *id, int code, const char *message)
{
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "jsonrpc", "2.0");
	cJSON_AddItemToObject(m, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
	cJSON *e = cJSON_AddObjectToObject(m, "error");
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", message);
	int ret = mcp_write(m);
	cJSON_Delete(m);
	return ret;
}

/* Remembers the version an initialize result agreed on: later requests carry
 * it in MCP-Protocol-Version, as the HTTP transport asks. */
static void mcp_note_version(struct mcp_bridge *br, const cJSON *reply)
{
	const cJSON *res = cJSON_GetObjectItemCaseSensitive(reply, "result");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(res, "protocolVersion");
	if (cJSON_IsString(v) && strlen(v->valuestring) < sizeof br->version &&
	    !strpbrk(v->valuestring, "\r\n"))
		snprintf(br->version, sizeof br->version, "%s", v->valuestring);
}

/* Appends "name: value" to hdr, value as streamable-http.mdx's "Value Encoding"
 * asks: plain when it is visible ASCII or inner spaces, else (and when it
 * looks like the sentinel itself) =?base64?...?=. */
static struct curl_slist *mcp_add_header(struct curl_slist *hdr, const char *name,
					 const char *value)
{
	struct strbuf h = STRBUF_INIT;
	size_t n = strlen(value);
	bool plain = n && value[0] != ' ' && value[n - 1] != ' ' &&
		     !(n >= 11 && !strncmp(value, "=?base64?", 9) && !strcmp(value + n - 2, "?="));
	for (size_t i = 0; plain && i < n; i++)
		plain = (unsigned char)value[i] >= 0x20 && (unsigned char)value[i] < 0x7f;
	strbuf_addf(&h, "%s: ", name);
	if (plain) {
		strbuf_addstr(&h, value);
	} else {
		strbuf_addstr(&h, "=?base64?");
		base64_encode(&h, value, n);
		strbuf_addstr(&h, "?=");
	}
	struct curl_slist *l = curl_slist_append(hdr, h.buf);
	strbuf_release(&h);
	if (!l)
		xalloc_die(0);
	return l;
}

/* The version msg's _meta names when it is of the 2026-07-28 era or later
 * (versions are dates), else NULL. */
static const char *mcp_modern_version(const cJSON *msg)
{
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	const cJSON *v =
	    cJSON_GetObjectItemCaseSensitive(meta, "io.modelcontextprotocol/protocolVersion");
	return cJSON_IsString(v) && strcmp(v->valuestring, "2026-07-28") >= 0 ? v->valuestring
									      : NULL;
}

/* Adds the headers of the modern request msg (method, version v) to hdr. */
static struct curl_slist *mcp_modern_headers(struct curl_slist *hdr, const cJSON *msg,
					     const char *method, const char *v)
{
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
	hdr = mcp_add_header(hdr, "MCP-Protocol-Version", v);
	hdr = mcp_add_header(hdr, "Mcp-Method", method);
	const char *field = !strcmp(method, "resources/read") ? "uri"
			    : !strcmp(method, "tools/call") || !strcmp(method, "prompts/get")
				? "name"
				: NULL;
	const cJSON *name = field ? cJSON_GetObjectItemCaseSensitive(params, field) : NULL;
	if (cJSON_IsString(name))
		hdr = mcp_add_header(hdr, "Mcp-Name", name->valuestring);
	return hdr;
}

/* Writes each message of an SSE body as one line: the judge's messages are
 * JSON on one line, so each is one data: line (sse_encode in judge/api/sse.c).
 * Returns -1 only when stdout is gone. */
static int mcp_write_sse(struct strbuf *body)
{
	int ret = 0;
	char *save = NULL;
	for (char *l = strtok_r(body->buf, "\r\n", &save); l && !ret;
	     l = strtok_r(NULL, "\r\n", &save)) {
		if (strncmp(l, "data:", 5))
			continue; /* a comment, an event name, an id */
		l += 5 + (l[5] == ' ');
		cJSON *m = cJSON_Parse(l);
		if (m)
			ret = mcp_write(m);
		else
			log_warn("mcp: a stream message that is not JSON: %.80s", l);
		cJSON_Delete(m);
	}
	return ret;
}

/* Forwards one message (line, parsed as msg) to /mcp and writes the answer.
 * Returns -1 only when stdout is gone. */
static int mcp_forward(struct mcp_bridge *br, const char *line, const cJSON *msg)
{
	int ret = -1;
	struct strbuf body = STRBUF_INIT, why = STRBUF_INIT, vh = STRBUF_INIT;
	struct curl_slist *hdr = NULL;
	cJSON *reply = NULL;
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
	/* a request wants an answer; a notification or a client's response does not */
	bool request = cJSON_IsObject(msg) && cJSON_IsString(method) && id;
	char cerr[CURL_ERROR_SIZE] = "";
	long status = 0;

	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	/* one JSON reply per line: never a stream (mcp_stream.h), whose progress
	 * this line-by-line bridge could not interleave; but subscriptions/listen
	 * (2026-07-28) is answered as a stream only, each message of it a line */
	bool listen =
	    cJSON_IsString(method) && !strcmp(method->valuestring, "subscriptions/listen");
	hdr = curl_slist_append(hdr, listen ? "Accept: application/json, text/event-stream"
					    : "Accept: application/json");
	hdr = curl_slist_append(hdr, "Expect:");
	if (br->auth)
		hdr = curl_slist_append(hdr, br->auth);
	const char *modern = request ? mcp_modern_version(msg) : NULL;
	if (modern) {
		hdr = mcp_modern_headers(hdr, msg, method->valuestring, modern);
	} else if (br->version[0]) {
		strbuf_addf(&vh, "MCP-Protocol-Version: %s", br->version);
		hdr = curl_slist_append(hdr, vh.buf);
	}
	if (!hdr)
		xalloc_die(0);
	CURL *c = br->curl;
	curl_easy_reset(c);
	CURLcode rc = CURLE_OK;
#define SET(opt, val)                                                                              \
	do {                                                                                       \
		if (rc == CURLE_OK)                                                                \
			rc = curl_easy_setopt(c, opt, val);                                        \
	} while (0)
	SET(CURLOPT_URL, br->url);
	SET(CURLOPT_ERRORBUFFER, cerr);
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_HTTPHEADER, hdr);
	SET(CURLOPT_POSTFIELDS, line);
	SET(CURLOPT_POSTFIELDSIZE, (long)strlen(line));
	SET(CURLOPT_WRITEFUNCTION, mcp_on_body);
	SET(CURLOPT_WRITEDATA, &body);
	SET(CURLOPT_CONNECTTIMEOUT, MCP_CONNECT_TIMEOUT_S);
	SET(CURLOPT_TIMEOUT, MCP_TIMEOUT_S);
#undef SET
	if (rc == CURLE_OK)
		rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		strbuf_addf(&why, "cannot reach the judge at %s: %s", br->url,
			    cerr[0] ? cerr : curl_easy_strerror(rc));
		goto failed;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	char *ctype = NULL;
	curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ctype);
	if (status == 200 && ctype && !strncmp(ctype, "text/event-stream", 17)) {
		ret = mcp_write_sse(&body);
		goto out;
	}
	if (status == 202 && body.len == 0) {
		ret = 0;
		goto out;
	}
	reply = cJSON_ParseWithLength(body.buf, body.len);
	/* a JSON-RPC answer, whatever the status (a parse error comes with 400) */
	if (cJSON_IsObject(reply) && cJSON_GetObjectItemCaseSensitive(reply, "jsonrpc")) {
		if (cJSON_IsString(method) && !strcmp(method->valuestring, "initialize"))
			mcp_note_version(br, reply);
		ret = mcp_write(reply);
		goto out;
	}
	/* the HTTP layer refused (401 bad key, 403, 413, 429 ...): its error message */
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(reply, "error");
	const cJSON *emsg = cJSON_GetObjectItemCaseSensitive(err, "message");
	strbuf_addf(&why, "the judge at %s answered HTTP %ld", br->url, status);
	if (cJSON_IsString(emsg))
		strbuf_addf(&why, ": %s", emsg->valuestring);
failed:
	if (!request) {
		log_warn("mcp: %s", why.buf);
		ret = 0;
		goto out;
	}
	ret = mcp_write_error(id, MCP_ERR_UNREACHABLE, why.buf);
out:
	cJSON_Delete(reply);
	curl_slist_free_all(hdr);
	strbuf_release(&body);
	strbuf_release(&why);
	strbuf_release(&vh);
	return ret;
}

/* The endpoint from judge.ini's listen (client.h). */
static char *mcp_default_url(const struct judge_config *cfg)
{
	char *base = client_base_url(cfg, NULL);
	char *u = xasprintf("%s/mcp", base);
	free(base);
	return u;
}

/* A URL with no path gets /mcp: --url http://host:8080 is enough. */
static char *mcp_url(const char *given)
{
	const char *host = strstr(given, "://");
	struct strbuf u = STRBUF_INIT;
	strbuf_addstr(&u, given);
	if (host && !strchr(host + 3, '/'))
		strbuf_addstr(&u, "/mcp");
	return strbuf_detach(&u, NULL);
}

static void mcp_usage(FILE *out)
{
	fputs("usage: judge mcp [--url URL] [--key KEY]\n\n"
	      "MCP over stdio: reads JSON-RPC messages, one a line, on stdin, forwards each\n"
	      "to a running judge's POST /mcp and writes the answers, one a line, on stdout.\n"
	      "  --url URL  the judge's MCP endpoint (default http://LISTEN/mcp from judge.ini;\n"
	      "             a URL with no path gets /mcp)\n"
	      "  --key KEY  the API key (default $JUDGE_API_KEY, else state_dir/api-key)\n",
	      out);
}

int cmd_mcp(int argc, char **argv, struct judge_config *cfg)
{
	static const struct option opts[] = {{"url", required_argument, NULL, 'u'},
					     {"key", required_argument, NULL, 'k'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *url = NULL, *key = NULL;
	int o;
	optind = 1;
	while ((o = getopt_long(argc, argv, "u:k:h", opts, NULL)) != -1) {
		switch (o) {
		case 'u':
			url = optarg;
			break;
		case 'k':
			key = optarg;
			break;
		case 'h':
			mcp_usage(stdout);
			return 0;
		default:
			mcp_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		mcp_usage(stderr);
		return 2;
	}
	int ret = 1;
	char *line = NULL;
	size_t cap = 0;
	struct mcp_bridge br = {0};
	signal(SIGPIPE, SIG_IGN); /* a client that closed stdout: a write error, then exit */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		log_error("mcp: libcurl does not start");
		return 1;
	}
	br.curl = curl_easy_init();
	if (!br.curl)
		xalloc_die(0);
	br.url = url ? mcp_url(url) : mcp_default_url(cfg);
	br.auth = client_auth_header(cfg, key);
	log_info("mcp: stdio bridge to %s (%s)", br.url, br.auth ? "with a key" : "no key");
	ssize_t n;
	while ((n = getline(&line, &cap, stdin)) >= 0) {
		while (n && strchr(" \t\r\n", line[n - 1]))
			line[--n] = 0;
		if (!n)
			continue;
		const char *end = NULL;
		cJSON *msg = cJSON_ParseWithOpts(line, &end, 1);
		int w;
		if (!msg)
			w = mcp_write_error(NULL, -32700, "Parse error: the line is not JSON");
		else
			w = mcp_forward(&br, line, msg);
		cJSON_Delete(msg);
		if (w < 0) {
			log_warn("mcp: stdout is closed");
			goto out;
		}
	}
	ret = 0;
out:
	free(line);
	free(br.url);
	free(br.auth);
	curl_easy_cleanup(br.curl);
	curl_global_cleanup();
	return ret;
}
