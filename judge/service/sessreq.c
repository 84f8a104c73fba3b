/* sessreq: checks and normalizes the bodies and paths of the session endpoints. */
#include "judge/service/sessreq.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "common/config.h"
#include "common/utf8.h"
#include "judge/grading/lang.h"
#include "runner/install/install.h"

#define MAX_PATH_BYTES 1024
#define MAX_NAME_BYTES 255 /* NAME_MAX of Linux file systems */

static const cJSON *field(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return v && !cJSON_IsNull(v) ? v : NULL;
}

static int known_keys(const cJSON *o, const char *const *keys, const char *where,
		      struct req_error *e)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, o)
	{
		bool ok = false;
		for (size_t i = 0; keys[i] && !ok; i++)
			ok = it->string && !strcmp(it->string, keys[i]);
		if (!ok)
			return req_fail(e, 422, "invalid_field", "unknown field '%s%.60s'", where,
					it->string ? it->string : "");
	}
	return 0;
}

/* An integer in [lo, hi]; absent leaves *out as it is. */
static int get_long(const cJSON *o, const char *name, const char *where, long lo, long hi,
		    long *out, struct req_error *e)
{
	const cJSON *v = field(o, name);
	if (!v)
		return 0;
	double d = cJSON_IsNumber(v) ? v->valuedouble : -1e300;
	if (!cJSON_IsNumber(v) || d != d || d < (double)lo || d > (double)hi || d != (long)d)
		return req_fail(e, 422, "invalid_field",
				"%s%s must be a whole number from %ld to %ld", where, name, lo, hi);
	*out = (long)d;
	return 0;
}

/* A string of at most max_kb KiB of UTF-8 text; absent leaves *out NULL. */
static int get_text(const cJSON *o, const char *name, bool required, long max_kb, const char **out,
		    struct req_error *e)
{
	const cJSON *v = field(o, name);
	*out = NULL;
	if (!v)
		return required ? req_fail(e, 422, "missing_field", "%s is required", name) : 0;
	if (!cJSON_IsString(v))
		return req_fail(e, 422, "invalid_field", "%s must be a string", name);
	size_t n = strlen(v->valuestring);
	if (n > (size_t)max_kb * 1024)
		return req_fail(e, 413, "too_large", "%s is larger than %ld KiB", name, max_kb);
	if (!utf8_valid_text(v->valuestring, n))
		return req_fail(e, 422, "invalid_encoding", "%s must be UTF-8 text", name);
	*out = v->valuestring;
	return 0;
}

const struct lang *sreq_language(const struct lang_registry *langs, const char *name,
				 struct req_error *e)
{
	const struct lang *l = lang_find(langs, req_language_alias(name));
	if (!l || !l->session_argv) {
		req_fail(e, 422, "unknown_language",
			 l ? "language '%.40s' has no sessions"
			   : "unknown language '%.40s' (python, node, csharp or bash)",
			 name);
		return NULL;
	}
	return l;
}

static int create_limits(const struct judge_config *cfg, const cJSON *in, struct sess_limits *l,
			 struct req_error *e)
{
	*l = (struct sess_limits){.memory_mb = cfg->session_memory_mb,
				  .cpu_ms = cfg->cell_time_limit_ms,
				  .disk_mb = cfg->session_disk_mb};
	if (l->memory_mb > cfg->max_memory_limit_mb)
		l->memory_mb = cfg->max_memory_limit_mb;
	if (l->cpu_ms > cfg->max_time_limit_ms)
		l->cpu_ms = cfg->max_time_limit_ms;
	const cJSON *lim = field(in, "limits");
	if (lim && !cJSON_IsObject(lim))
		return req_fail(e, 422, "invalid_field", "limits must be an object");
	if (lim) {
		static const char *const keys[] = {"memory_mb", "cpu_ms", "wall_ms", "disk_mb",
						   NULL};
		long wall_cap = cfg->max_time_limit_ms * cfg->wall_limit_factor + 1000;
		if (known_keys(lim, keys, "limits.", e) < 0 ||
		    get_long(lim, "memory_mb", "limits.", 32, cfg->max_memory_limit_mb,
			     &l->memory_mb, e) < 0 ||
		    get_long(lim, "cpu_ms", "limits.", 1, cfg->max_time_limit_ms, &l->cpu_ms, e) <
			0 ||
		    get_long(lim, "wall_ms", "limits.", 1, wall_cap, &l->wall_ms, e) < 0 ||
		    get_long(lim, "disk_mb", "limits.", 1, cfg->max_session_disk_mb, &l->disk_mb,
			     e) < 0)
			return -1;
	}
	if (!l->wall_ms)
		l->wall_ms = l->cpu_ms * cfg->wall_limit_factor + 1000;
	return 0;
}

int sreq_create(const struct judge_config *cfg, const struct lang_registry *langs, const cJSON *in,
		struct sreq_create *out, struct req_error *e)
{
	static const char *const keys[] = {"language", "idle_ttl", "limits", NULL};
	const char *name;
	memset(out, 0, sizeof *out);
	if (!cJSON_IsObject(in))
		return req_fail(e, 422, "invalid_field", "the body must be a JSON object");
	if (known_keys(in, keys, "", e) < 0 || get_text(in, "language", true, 1, &name, e) < 0)
		return -1;
	if (!(out->lang = sreq_language(langs, name, e)))
		return -1;
	out->idle_ttl_s = cfg->session_idle_ttl_s;
	if (get_long(in, "idle_ttl", "", 1, cfg->session_max_idle_ttl_s, &out->idle_ttl_s, e) < 0)
		return -1;
	return create_limits(cfg, in, &out->limits, e);
}

cJSON *sreq_limits_json(const struct sess_limits *l)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "memory_mb", (double)l->memory_mb);
	cJSON_AddNumberToObject(o, "cpu_ms", (double)l->cpu_ms);
	cJSON_AddNumberToObject(o, "wall_ms", (double)l->wall_ms);
	cJSON_AddNumberToObject(o, "disk_mb", (double)l->disk_mb);
	return o;
}

void sreq_limits_load(const cJSON *j, struct sess_limits *out)
{
	const char *names[] = {"memory_mb", "cpu_ms", "wall_ms", "disk_mb"};
	long *dst[] = {&out->memory_mb, &out->cpu_ms, &out->wall_ms, &out->disk_mb};
	for (int i = 0; i < 4; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, names[i]);
		*dst[i] = cJSON_IsNumber(v) ? (long)v->valuedouble : 0;
	}
}

/* compare as one-shot grading takes it, normalized by request.c. */
static int check_compare(const struct judge_config *cfg, const struct lang_registry *langs,
			 const char *language, const cJSON *in, cJSON *out, struct req_error *e)
{
	const cJSON *c = field(in, "compare");
	if (!c)
		return 0;
	cJSON *probe = cJSON_CreateObject();
	cJSON_AddStringToObject(probe, "language", language);
	cJSON_AddStringToObject(probe, "source", "pass");
	cJSON_AddStringToObject(probe, "expected_output", "");
	cJSON_AddItemToObject(probe, "compare", cJSON_Duplicate(c, 1));
	struct req_parsed p = {0};
	int rc = req_validate(cfg, langs, REQ_EXECUTE_EXPECTED, probe, &p, e);
	if (rc == 0) {
		const cJSON *nc = cJSON_GetObjectItemCaseSensitive(p.request, "compare");
		if (nc)
			cJSON_AddItemToObject(out, "compare", cJSON_Duplicate(nc, 1));
	}
	req_parsed_release(&p);
	cJSON_Delete(probe);
	return rc;
}

int sreq_execute(const struct judge_config *cfg, const struct lang_registry *langs,
		 const char *language, const cJSON *in, cJSON **out, struct req_error *e)
{
	static const char *const keys[] = {"code",    "stdin", "timeout_ms", "expected_output",
					   "compare", NULL};
	const char *code, *in_s, *expected;
	long timeout = 0;
	*out = NULL;
	if (!cJSON_IsObject(in))
		return req_fail(e, 422, "invalid_field", "the body must be a JSON object");
	if (known_keys(in, keys, "", e) < 0 ||
	    get_text(in, "code", true, cfg->max_source_kb, &code, e) < 0 ||
	    get_text(in, "stdin", false, cfg->max_stdin_kb, &in_s, e) < 0 ||
	    get_text(in, "expected_output", false, cfg->max_stdin_kb, &expected, e) < 0 ||
	    get_long(in, "timeout_ms", "", 1, cfg->max_time_limit_ms, &timeout, e) < 0)
		return -1;
	if (field(in, "compare") && !expected)
		return req_fail(e, 422, "missing_field", "compare needs expected_output");
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "code", code);
	if (in_s)
		cJSON_AddStringToObject(o, "stdin", in_s);
	if (timeout)
		cJSON_AddNumberToObject(o, "timeout_ms", (double)timeout);
	if (expected)
		cJSON_AddStringToObject(o, "expected_output", expected);
	if (check_compare(cfg, langs, language, in, o, e) < 0) {
		cJSON_Delete(o);
		return -1;
	}
	*out = o;
	return 0;
}

int sreq_install(const cJSON *in, cJSON **out, struct req_error *e)
{
	static const char *const keys[] = {"manager", "packages", NULL};
	const char *mgr;
	*out = NULL;
	if (!cJSON_IsObject(in))
		return req_fail(e, 422, "invalid_field", "the body must be a JSON object");
	if (known_keys(in, keys, "", e) < 0 || get_text(in, "manager", true, 1, &mgr, e) < 0)
		return -1;
	if (strcmp(mgr, "pip") && strcmp(mgr, "npm"))
		return req_fail(e, 422, "invalid_field", "manager must be \"pip\" or \"npm\"");
	const cJSON *pk = field(in, "packages");
	if (!pk)
		return req_fail(e, 422, "missing_field", "packages is required");
	int n = cJSON_IsArray(pk) ? cJSON_GetArraySize(pk) : 0;
	if (n < 1 || n > SREQ_MAX_PACKAGES)
		return req_fail(e, 422, "invalid_field",
				"packages must be an array of 1 to %d package names",
				SREQ_MAX_PACKAGES);
	const cJSON *it;
	cJSON_ArrayForEach(it, pk)
	{
		char why[200];
		if (!cJSON_IsString(it))
			return req_fail(e, 422, "invalid_field", "packages holds only strings");
		if (!utf8_valid_text(it->valuestring, strlen(it->valuestring)) ||
		    !install_check_package(mgr, it->valuestring, why, sizeof why))
			return req_fail(e, 422, "invalid_package", "package '%.60s' is refused: %s",
					it->valuestring, why);
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "manager", mgr);
	cJSON_AddItemToObject(o, "packages", cJSON_Duplicate(pk, 1));
	*out = o;
	return 0;
}

bool sreq_path(const char *path, bool empty_ok, struct req_error *e)
{
	size_t n = strlen(path);
	if (!n) {
		if (!empty_ok)
			req_fail(e, 400, "bad_path", "a file path is required");
		return empty_ok;
	}
	if (n > MAX_PATH_BYTES || !utf8_valid_text(path, n)) {
		req_fail(e, 400, "bad_path", "a path is at most %d bytes of UTF-8", MAX_PATH_BYTES);
		return false;
	}
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		if (*p < 0x20 || *p == 0x7f || *p == '\\') {
			req_fail(e, 400, "bad_path", "the path holds a control character or '\\'");
			return false;
		}
	const char *s = path;
	for (;;) {
		size_t len = strcspn(s, "/");
		if (len == 0 || (len == 1 && s[0] == '.') || (len == 2 && !strncmp(s, "..", 2))) {
			req_fail(e, 400, "bad_path",
				 "the path must stay in the session folder: relative, with no "
				 "empty, '.' or '..' part");
			return false;
		}
		if (len > MAX_NAME_BYTES) {
			req_fail(e, 400, "bad_path", "a file or folder name is at most %d bytes",
				 MAX_NAME_BYTES);
			return false;
		}
		if (!s[len])
			return true;
		s += len + 1;
	}
}

const char *sreq_content_type(const char *name)
{
	static const char *const types[][2] = {
	    {"png", "image/png"},	{"jpg", "image/jpeg"},
	    {"jpeg", "image/jpeg"},	{"gif", "image/gif"},
	    {"svg", "image/svg+xml"},	{"webp", "image/webp"},
	    {"pdf", "application/pdf"}, {"csv", "text/csv"},
	    {"txt", "text/plain"},	{"md", "text/markdown"},
	    {"html", "text/html"},	{"json", "application/json"},
	    {"xml", "application/xml"}, {"zip", "application/zip"},
	    {"gz", "application/gzip"}, {"tar", "application/x-tar"},
	    {"py", "text/x-python"},	{"js", "text/javascript"},
	    {"cs", "text/plain"},	{"sh", "text/x-shellscript"},
	    {"log", "text/plain"},	{"parquet", "application/vnd.apache.parquet"},
	};
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	const char *dot = strrchr(base, '.');
	if (!dot || dot == base)
		return "application/octet-stream";
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (!strcasecmp(dot + 1, types[i][0]))
			return types[i][1];
	return "application/octet-stream";
}

bool sreq_inline_ok(const char *content_type)
{
	/* what a browser shows without running anything: no HTML, SVG, XML,
	 * PDF or script; the rest is downloaded */
	static const char *const inert[] = {"image/png",       "image/jpeg", "image/gif",
					    "image/webp",      "text/plain", "text/csv",
					    "application/json"};
	for (size_t i = 0; i < sizeof inert / sizeof inert[0]; i++)
		if (!strcasecmp(content_type, inert[i]))
			return true;
	return false;
}

void sreq_disposition(const char *name, struct strbuf *out)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (sreq_inline_ok(sreq_content_type(name))) {
		strbuf_addstr(out, "inline");
		return;
	}
	/* RFC 6266 4.3 with RFC 8187's encoding: attr-chars as they are, every
	 * other byte (quotes, spaces, UTF-8) percent-encoded */
	strbuf_addstr(out, "attachment; filename*=UTF-8''");
	for (const unsigned char *p = (const unsigned char *)base; *p; p++)
		if (isalnum(*p) || strchr("!#$&+-.^_`|~", *p))
			strbuf_addch(out, (char)*p);
		else
			strbuf_addf(out, "%%%02X", *p);
}

bool sreq_id_valid(const char *s)
{
	if (strlen(s) != 36)
		return false;
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}
