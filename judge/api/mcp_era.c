/* mcp_era: the era of a POST /mcp request and the 2026-07-28 header checks (see mcp_era.h). */
#include "judge/api/mcp_era.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/base64.h"
#include "common/strbuf.h"

/* The initialize-based versions, newest first. */
static const char *const legacy_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
					      "2024-11-05"};
#define N_LEGACY (sizeof legacy_versions / sizeof legacy_versions[0])

#define META_VERSION	  "io.modelcontextprotocol/protocolVersion"
#define META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define META_CLIENT_INFO  "io.modelcontextprotocol/clientInfo"
#define META_SERVER_INFO  "io.modelcontextprotocol/serverInfo"
/* streamable-http.mdx, "Value Encoding": a header value that is not plain ASCII */
#define B64_OPEN  "=?base64?"
#define B64_CLOSE "?="

static bool is_legacy(const char *v)
{
	for (size_t i = 0; i < N_LEGACY; i++)
		if (!strcmp(v, legacy_versions[i]))
			return true;
	return false;
}

const char *mcp_era_initialize_version(const char *v)
{
	for (size_t i = 0; v && i < N_LEGACY; i++)
		if (!strcmp(v, legacy_versions[i]))
			return legacy_versions[i];
	return legacy_versions[0];
}

cJSON *mcp_era_versions(void)
{
	cJSON *a = cJSON_CreateArray();
	cJSON_AddItemToArray(a, cJSON_CreateString(MCP_MODERN_VERSION));
	for (size_t i = 0; i < N_LEGACY; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(legacy_versions[i]));
	return a;
}

void mcp_era_server_info(cJSON *o, const char *key)
{
	cJSON *si = cJSON_AddObjectToObject(o, key);
	cJSON_AddStringToObject(si, "name", MCP_SERVER_NAME);
	cJSON_AddStringToObject(si, "title", "judge: sandboxed code execution and grading");
	cJSON_AddStringToObject(si, "version", MCP_SERVER_VERSION);
}

void mcp_era_result(cJSON *result)
{
	cJSON_AddStringToObject(result, "resultType", "complete");
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(result, "_meta");
	if (!cJSON_IsObject(meta))
		meta = cJSON_AddObjectToObject(result, "_meta");
	mcp_era_server_info(meta, META_SERVER_INFO);
}

void mcp_era_release(struct mcp_era *e)
{
	cJSON_Delete(e->data);
	e->data = NULL;
}

static void refuse(struct mcp_era *e, int status, int code, cJSON *data, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void refuse(struct mcp_era *e, int status, int code, cJSON *data, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof e->message, fmt, ap);
	va_end(ap);
	e->status = status;
	e->code = code;
	e->data = data;
	e->modern = true;
}

/* UnsupportedProtocolVersionError: HTTP 400, -32022, data {supported, requested}
 * (schema.ts; versioning.mdx, "Protocol Version Negotiation"). */
static void unsupported(struct mcp_era *e, const char *requested)
{
	cJSON *d = cJSON_CreateObject();
	cJSON_AddItemToObject(d, "supported", mcp_era_versions());
	cJSON_AddStringToObject(d, "requested", requested);
	refuse(e, 400, MCP_UNSUPPORTED_VERSION, d, "Unsupported protocol version");
}

/* Header name's value with RFC 9110's optional white space around it cut off,
 * into *out (a copy); false when absent. *bad is set when it holds a byte a
 * header value must not (controls but tab, DEL, non-ASCII). */
static bool header(mcp_header_fn get, void *arg, const char *name, struct strbuf *out, bool *bad)
{
	const char *v = get(arg, name);
	if (!v)
		return false;
	size_t n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	while (n && (*v == ' ' || *v == '\t'))
		v++, n--;
	strbuf_add(out, v, n);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];
		if ((c < 0x20 && c != '\t') || c >= 0x7f)
			*bad = true;
	}
	return true;
}

/* Decodes an Mcp-Name value (plain, or the Base64 sentinel) into out; false
 * when the sentinel's Base64 is broken. */
static bool decode_name(const struct strbuf *h, struct strbuf *out)
{
	size_t lo = strlen(B64_OPEN), lc = strlen(B64_CLOSE);
	if (h->len >= lo + lc && !strncmp(h->buf, B64_OPEN, lo) &&
	    !strcmp(h->buf + h->len - lc, B64_CLOSE))
		return base64_decode(out, h->buf + lo, h->len - lo - lc) &&
		       strlen(out->buf) == out->len; /* no NUL: a JSON string cannot match */
	strbuf_add(out, h->buf, h->len);
	return true;
}

/* The body field Mcp-Name mirrors for method (streamable-http.mdx, "Standard
 * Request Headers"), or NULL when it has none. */
static const char *name_field(const char *method)
{
	if (!strcmp(method, "tools/call") || !strcmp(method, "prompts/get"))
		return "name";
	if (!strcmp(method, "resources/read"))
		return "uri";
	return NULL;
}

/* The checks of a request that claims version v in its _meta and is not legacy. */
static void check_modern(mcp_header_fn get, void *arg, const char *method, const cJSON *params,
			 const cJSON *meta, const char *v, struct mcp_era *e)
{
	struct strbuf hv = STRBUF_INIT, hm = STRBUF_INIT, hn = STRBUF_INIT, name = STRBUF_INIT;
	bool bad_v = false, bad_m = false, bad_n = false;
	bool has_v = header(get, arg, "MCP-Protocol-Version", &hv, &bad_v);
	bool has_m = header(get, arg, "Mcp-Method", &hm, &bad_m);
	bool has_n = header(get, arg, "Mcp-Name", &hn, &bad_n);
	const char *field = name_field(method);
	const cJSON *body_name = field ? cJSON_GetObjectItemCaseSensitive(params, field) : NULL;
	const cJSON *caps = cJSON_GetObjectItemCaseSensitive(meta, META_CAPABILITIES);
	const cJSON *ci = cJSON_GetObjectItemCaseSensitive(meta, META_CLIENT_INFO);

	/* streamable-http.mdx, "Protocol Version Header" and "Server Validation":
	 * a header that is missing, malformed or not the body's value is a
	 * HeaderMismatch (400, -32020) */
	if (!has_v || bad_v || strcmp(hv.buf, v)) {
		if (!has_v)
			refuse(e, 400, MCP_HEADER_MISMATCH, NULL,
			       "Header mismatch: the MCP-Protocol-Version header is missing "
			       "(the body's _meta names %.40s)",
			       v);
		else
			refuse(
			    e, 400, MCP_HEADER_MISMATCH, NULL,
			    "Header mismatch: MCP-Protocol-Version header value '%.40s' does not "
			    "match body value '%.40s'",
			    bad_v ? "(invalid characters)" : hv.buf, v);
		goto out;
	}
	/* versioning.mdx: a version the server does not implement gets
	 * UnsupportedProtocolVersionError listing the ones it does */
	if (strcmp(v, MCP_MODERN_VERSION)) {
		unsupported(e, v);
		goto out;
	}
	/* schema.ts, RequestMetaObject: clientCapabilities is required ({} for
	 * none); clientInfo, when given, is an Implementation (name, version) */
	if (!cJSON_IsObject(caps)) {
		refuse(e, 400, MCP_INVALID_PARAMS, NULL,
		       "invalid params: _meta[\"" META_CAPABILITIES "\"] (an object, {} for none) "
		       "is required");
		goto out;
	}
	if (ci &&
	    !(cJSON_IsObject(ci) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ci, "name")) &&
	      cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ci, "version")))) {
		refuse(e, 400, MCP_INVALID_PARAMS, NULL,
		       "invalid params: _meta[\"" META_CLIENT_INFO "\"] must be an object with "
		       "string name and version");
		goto out;
	}
	if (!has_m || bad_m || strcmp(hm.buf, method)) {
		if (!has_m)
			refuse(
			    e, 400, MCP_HEADER_MISMATCH, NULL,
			    "Header mismatch: the Mcp-Method header is missing (the body's method "
			    "is '%.64s')",
			    method);
		else
			refuse(
			    e, 400, MCP_HEADER_MISMATCH, NULL,
			    "Header mismatch: Mcp-Method header value '%.64s' does not match body "
			    "value '%.64s'",
			    bad_m ? "(invalid characters)" : hm.buf, method);
		goto out;
	}
	if (cJSON_IsString(body_name)) {
		if (!has_n) {
			refuse(
			    e, 400, MCP_HEADER_MISMATCH, NULL,
			    "Header mismatch: the Mcp-Name header is missing (the body's params.%s "
			    "is '%.64s')",
			    field, body_name->valuestring);
			goto out;
		}
		if (bad_n || !decode_name(&hn, &name)) {
			refuse(e, 400, MCP_HEADER_MISMATCH, NULL,
			       "Header mismatch: the Mcp-Name header has invalid characters or a "
			       "broken =?base64?...?= value");
			goto out;
		}
		if (strcmp(name.buf, body_name->valuestring)) {
			refuse(e, 400, MCP_HEADER_MISMATCH, NULL,
			       "Header mismatch: Mcp-Name header value '%.64s' does not match body "
			       "value '%.64s'",
			       name.buf, body_name->valuestring);
			goto out;
		}
	}
	e->modern = true;
out:
	strbuf_release(&hv);
	strbuf_release(&hm);
	strbuf_release(&hn);
	strbuf_release(&name);
}

void mcp_era_classify(const cJSON *msg, mcp_header_fn get, void *arg, struct mcp_era *e)
{
	memset(e, 0, sizeof *e);
	const char *method = cJSON_GetObjectItemCaseSensitive(msg, "method")->valuestring;
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	const cJSON *claim =
	    cJSON_IsObject(meta) ? cJSON_GetObjectItemCaseSensitive(meta, META_VERSION) : NULL;

	if (claim && !cJSON_IsString(claim)) {
		refuse(e, 400, MCP_INVALID_PARAMS, NULL,
		       "invalid params: _meta[\"" META_VERSION "\"] must be a version string");
		return;
	}
	/* a claim of a legacy version: a legacy server would not read _meta, nor
	 * does this one; initialize opens the legacy era unless it claims a modern
	 * version (versioning.mdx: "An initialize request selects legacy semantics") */
	if (claim && !is_legacy(claim->valuestring))
		return check_modern(get, arg, method, params, meta, claim->valuestring, e);
	if (claim || !strcmp(method, "initialize"))
		return;

	/* no claim: legacy, unless the header names a modern version (the SDK of
	 * 2026-07-28 does so too: such a request lacks its required _meta) */
	struct strbuf hv = STRBUF_INIT;
	bool bad = false;
	if (header(get, arg, "MCP-Protocol-Version", &hv, &bad) && !bad &&
	    strcmp(hv.buf, MCP_MODERN_VERSION) >= 0 && !is_legacy(hv.buf)) {
		if (strcmp(hv.buf, MCP_MODERN_VERSION))
			unsupported(e, hv.buf);
		else
			refuse(e, 400, MCP_INVALID_PARAMS, NULL,
			       "invalid params: the MCP-Protocol-Version header "
			       "names " MCP_MODERN_VERSION " but params._meta lacks \"" META_VERSION
			       "\" and \"" META_CAPABILITIES
			       "\" (every request of " MCP_MODERN_VERSION " carries them)");
	}
	strbuf_release(&hv);
}
