/* sessreq: the bodies and paths of the session endpoints, parsed into typed calls. */
#include "judge/service/session/sessreq.h"

#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/config.h"
#include "common/base64.h"
#include "common/utf8.h"
#include "common/xalloc.h"
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
		      struct request_error *e)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, o)
	{
		bool ok = false;
		for (size_t i = 0; keys[i] && !ok; i++)
			ok = it->string && !strcmp(it->string, keys[i]);
		if (!ok)
			return request_fail(e, 422, "invalid_field", "unknown field '%s%.60s'",
					    where, it->string ? it->string : "");
	}
	return 0;
}

/* An integer in [lo, hi]; absent leaves *out as it is. */
static int get_long(const cJSON *o, const char *name, const char *where, long lo, long hi,
		    long *out, struct request_error *e)
{
	const cJSON *v = field(o, name);
	if (!v)
		return 0;
	double d = cJSON_IsNumber(v) ? v->valuedouble : -1e300;
	if (!cJSON_IsNumber(v) || d != d || d < (double)lo || d > (double)hi || d != (long)d)
		return request_fail(e, 422, "invalid_field",
				    "%s%s must be a whole number from %ld to %ld", where, name, lo,
				    hi);
	*out = (long)d;
	return 0;
}

/* A string of at most max_kb KiB of UTF-8 text; absent leaves *out NULL. */
static int get_text(const cJSON *o, const char *name, bool required, long max_kb, const char **out,
		    struct request_error *e)
{
	const cJSON *v = field(o, name);
	*out = NULL;
	if (!v)
		return required ? request_fail(e, 422, "missing_field", "%s is required", name) : 0;
	if (!cJSON_IsString(v))
		return request_fail(e, 422, "invalid_field", "%s must be a string", name);
	size_t n = strlen(v->valuestring);
	if (n > (size_t)max_kb * 1024)
		return request_fail(e, 413, "too_large", "%s is larger than %ld KiB", name, max_kb);
	if (!utf8_valid_text(v->valuestring, n))
		return request_fail(e, 422, "invalid_encoding", "%s must be UTF-8 text", name);
	*out = v->valuestring;
	return 0;
}

static bool has_sessions(const struct lang *l)
{
	return l->session_argv != NULL;
}

const struct lang *sessreq_language(const struct lang_registry *langs, const char *name,
				    struct request_error *e)
{
	const struct lang *l = lang_lookup(langs, name);
	if (l && l->session_argv)
		return l;
	if (l) {
		request_fail(e, 422, "unknown_language", "language '%.40s' has no sessions", name);
		return NULL;
	}
	struct strbuf names = STRBUF_INIT;
	lang_names(langs, has_sessions, "or", &names);
	request_fail(e, 422, "unknown_language", "unknown language '%.40s' (%s)", name, names.buf);
	strbuf_release(&names);
	return NULL;
}

/* A limit of the create body in range r; absent leaves *out as it is. */
static int get_limit(const cJSON *o, const char *name, struct limits_range r, long *out,
		     struct request_error *e)
{
	return get_long(o, name, "limits.", r.lo, r.hi, out, e);
}

/* limits.cpus: a number of CPUs (fractions too) within r (thousandths), into
 * *millis; absent leaves it as it is. */
static int get_cpus(const cJSON *o, struct limits_range r, long *millis, struct request_error *e)
{
	const cJSON *v = field(o, "cpus");
	if (!v)
		return 0;
	double d = cJSON_IsNumber(v) ? v->valuedouble * 1000 : -1e300;
	if (!cJSON_IsNumber(v) || d != d || d < (double)r.lo - 1e-6 || d > (double)r.hi + 1e-6)
		return request_fail(e, 422, "invalid_field",
				    "limits.cpus must be a number from %g to %g",
				    (double)r.lo / 1000, (double)r.hi / 1000);
	*millis = (long)(d + 0.5);
	return 0;
}

static int create_limits(const struct judge_config *cfg, const cJSON *in, struct limits_session *l,
			 struct request_error *e)
{
	struct limits_policy p;
	struct limits_session_caps caps;
	struct limits_session req = {0};
	limits_policy_from_config(cfg, &p);
	limits_session_caps(&p, &caps);
	const cJSON *lim = field(in, "limits");
	if (lim && !cJSON_IsObject(lim))
		return request_fail(e, 422, "invalid_field", "limits must be an object");
	if (lim) {
		static const char *const keys[] = {"memory_mb",	 "cpu_ms",    "wall_ms",
						   "disk_mb",	 "cpus",      "cpu_budget_s",
						   "cpu_weight", "processes", NULL};
		if (known_keys(lim, keys, "limits.", e) < 0 ||
		    get_limit(lim, "memory_mb", caps.memory_mb, &req.memory_mb, e) < 0 ||
		    get_limit(lim, "cpu_ms", caps.cpu_ms, &req.cpu_ms, e) < 0 ||
		    get_limit(lim, "wall_ms", caps.wall_ms, &req.wall_ms, e) < 0 ||
		    get_limit(lim, "disk_mb", caps.disk_mb, &req.disk_mb, e) < 0 ||
		    get_cpus(lim, caps.cpu_millis, &req.cpu_millis, e) < 0 ||
		    get_limit(lim, "cpu_budget_s", caps.cpu_budget_s, &req.cpu_budget_s, e) < 0 ||
		    get_limit(lim, "cpu_weight", caps.cpu_weight, &req.cpu_weight, e) < 0 ||
		    get_limit(lim, "processes", caps.processes, &req.processes, e) < 0)
			return -1;
	}
	limits_session(&p, &req, l);
	return 0;
}

/* An environment variable's name: [A-Za-z_][A-Za-z0-9_]*. */
static bool env_name_valid(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* The body's "env" object of strings into *out ("K=V", NULL-terminated; NULL
 * when absent), its bytes added to *bytes. */
static int get_env(const cJSON *in, char ***out, size_t *bytes, struct request_error *e)
{
	const cJSON *env = field(in, "env"), *it;
	if (!env)
		return 0;
	if (!cJSON_IsObject(env))
		return request_fail(e, 422, "invalid_field", "env must be an object of strings");
	*out = xcalloc((size_t)cJSON_GetArraySize(env) + 1, sizeof **out);
	int i = 0;
	cJSON_ArrayForEach(it, env)
	{
		if (!it->string || !env_name_valid(it->string))
			return request_fail(e, 422, "invalid_field",
					    "env: '%.40s' is not a variable name",
					    it->string ? it->string : "");
		if (!strncmp(it->string, "JUDGE_", 6))
			return request_fail(e, 422, "invalid_field",
					    "env: names starting JUDGE_ are the judge's own");
		if (!cJSON_IsString(it) ||
		    !utf8_valid_text(it->valuestring, strlen(it->valuestring)))
			return request_fail(e, 422, "invalid_field",
					    "env: %.40s must be a string of text", it->string);
		(*out)[i] = xasprintf("%s=%s", it->string, it->valuestring);
		*bytes += strlen((*out)[i++]) + 1;
	}
	return 0;
}

/* metadata: an object of at most SESS_META_PAIRS strings, keys of 1 to
 * SESS_META_KEY bytes, values of at most SESS_META_VALUE, printable UTF-8. */
static int get_metadata(const cJSON *in, cJSON **out, struct request_error *e)
{
	const cJSON *m = field(in, "metadata"), *it;
	if (!m)
		return 0;
	if (!cJSON_IsObject(m))
		return request_fail(e, 422, "invalid_field",
				    "metadata must be an object of strings");
	int n = 0;
	cJSON_ArrayForEach(it, m)
	{
		size_t kl = strlen(it->string);
		if (++n > SESS_META_PAIRS)
			return request_fail(e, 422, "invalid_field",
					    "metadata holds at most %d keys", SESS_META_PAIRS);
		if (!kl || kl > SESS_META_KEY || !utf8_valid_text(it->string, kl))
			return request_fail(e, 422, "invalid_field",
					    "a metadata key is 1 to %d bytes of text",
					    SESS_META_KEY);
		if (!cJSON_IsString(it))
			return request_fail(e, 422, "invalid_field",
					    "metadata.%.40s must be a string", it->string);
		size_t vl = strlen(it->valuestring);
		if (vl > SESS_META_VALUE || !utf8_valid_text(it->valuestring, vl))
			return request_fail(e, 422, "invalid_field",
					    "metadata.%.40s is at most %d bytes of text",
					    it->string, SESS_META_VALUE);
		for (const char *c = it->string; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				return request_fail(e, 422, "invalid_field",
						    "a metadata key holds a control character");
	}
	if (n)
		*out = cJSON_Duplicate(m, true);
	return 0;
}

int sessreq_create(const struct judge_config *cfg, const struct lang_registry *langs,
		   const cJSON *in, const struct sessreq_keycap *kc, struct sessreq_create *out,
		   struct request_error *e)
{
	static const char *const keys[] = {
	    "language", "idle_ttl", "idle_action",	     "limits", "network",
	    "env",	"metadata", "checkpoint_interval_s", NULL};
	const char *name;
	memset(out, 0, sizeof *out);
	if (!cJSON_IsObject(in))
		return request_fail(e, 422, "invalid_field", "the body must be a JSON object");
	if (known_keys(in, keys, "", e) < 0 || get_text(in, "language", true, 1, &name, e) < 0)
		return -1;
	if (!(out->lang = sessreq_language(langs, name, e)))
		return -1;
	out->idle_ttl_s = cfg->session_idle_ttl_s;
	if (get_long(in, "idle_ttl", "", 1, cfg->session_max_idle_ttl_s, &out->idle_ttl_s, e) < 0)
		return -1;
	const char *action;
	if (get_text(in, "idle_action", false, 1, &action, e) < 0)
		return -1;
	if (!action)
		action = cfg->session_idle_action;
	if (strcmp(action, "close") && strcmp(action, "pause"))
		return request_fail(e, 422, "invalid_field",
				    "idle_action must be \"close\" or \"pause\"");
	out->idle_pause = !strcmp(action, "pause");
	out->checkpoint_interval_s = -1;
	if (get_long(in, "checkpoint_interval_s", "", 0, 86400, &out->checkpoint_interval_s, e) < 0)
		return -1;
	if (create_limits(cfg, in, &out->limits, e) < 0)
		return -1;
	char msg[400];
	struct sessnet_policy cap;
	if (sessnet_parse(cJSON_GetObjectItemCaseSensitive(in, "network"), &out->net, msg,
			  sizeof msg) < 0)
		return request_fail(e, 422, "invalid_field", "%s", msg);
	if (kc) {
		if (sessnet_check_key(&out->net, &kc->cap, kc->key_id, msg, sizeof msg) < 0)
			return request_fail(e, 403, "egress_forbidden", "%s", msg);
	} else {
		if (sessnet_cap_parse(cfg->egress, cfg->egress_allow, &cap, msg, sizeof msg) < 0)
			return request_fail(e, 500, "internal_error", "judge.ini: %s", msg);
		if (sessnet_check(&out->net, &cap, msg, sizeof msg) < 0)
			return request_fail(e, 403, "egress_forbidden", "%s", msg);
	}
	char **env = NULL;
	size_t env_bytes = 0;
	int rc = get_env(in, &env, &env_bytes, e);
	xstrvfree(env);
	if (rc < 0)
		return -1;
	if (env_bytes > (size_t)cfg->max_stdin_kb * 1024)
		return request_fail(e, 413, "too_large", "env is larger than %ld KiB",
				    cfg->max_stdin_kb);
	if (field(in, "env") && field(in, "env")->child)
		out->env = cJSON_Duplicate(field(in, "env"), true);
	return get_metadata(in, &out->metadata, e);
}

cJSON *sessreq_limits_json(const struct limits_session *l)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "memory_mb", (double)l->memory_mb);
	cJSON_AddNumberToObject(o, "cpu_ms", (double)l->cpu_ms);
	cJSON_AddNumberToObject(o, "wall_ms", (double)l->wall_ms);
	cJSON_AddNumberToObject(o, "disk_mb", (double)l->disk_mb);
	/* 0: no quota (judge.ini session_cpus = 0) */
	cJSON_AddNumberToObject(o, "cpus", (double)l->cpu_millis / 1000);
	/* 0: no budget */
	cJSON_AddNumberToObject(o, "cpu_budget_s", (double)l->cpu_budget_s);
	cJSON_AddNumberToObject(o, "cpu_weight", (double)l->cpu_weight);
	/* only when asked: else the sandbox's default (limits_session_sandbox) */
	if (l->processes > 0)
		cJSON_AddNumberToObject(o, "processes", (double)l->processes);
	return o;
}

void sessreq_limits_load(const cJSON *j, struct limits_session *out)
{
	const char *names[] = {"memory_mb",    "cpu_ms",     "wall_ms",	 "disk_mb",
			       "cpu_budget_s", "cpu_weight", "processes"};
	long *dst[] = {&out->memory_mb,	   &out->cpu_ms,     &out->wall_ms,  &out->disk_mb,
		       &out->cpu_budget_s, &out->cpu_weight, &out->processes};
	for (int i = 0; i < 7; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, names[i]);
		*dst[i] = cJSON_IsNumber(v) ? (long)v->valuedouble : 0;
	}
	const cJSON *cpus = cJSON_GetObjectItemCaseSensitive(j, "cpus");
	out->cpu_millis = cJSON_IsNumber(cpus) ? (long)(cpus->valuedouble * 1000 + 0.5) : 0;
}

/* compare as one-shot grading takes it: request.c checks it in a probe body. */
static int check_compare(const struct judge_config *cfg, const struct lang_registry *langs,
			 const cJSON *c, struct sess_call *out, struct request_error *e)
{
	cJSON *probe = cJSON_CreateObject();
	/* any language: compare options do not depend on it */
	cJSON_AddStringToObject(probe, "language", lang_default(langs)->name);
	cJSON_AddStringToObject(probe, "source", "pass");
	cJSON_AddStringToObject(probe, "expected_output", "");
	cJSON_AddItemToObject(probe, "compare", cJSON_Duplicate(c, 1));
	struct request_parsed p = {0};
	int rc = request_validate(cfg, langs, REQ_EXECUTE_EXPECTED, probe, &p, e);
	if (rc == 0) {
		out->exec.has_compare = p.req.has_compare;
		out->exec.cmp = p.req.cmp;
	}
	request_parsed_release(&p);
	cJSON_Delete(probe);
	return rc;
}

/* A context id of the body ("context"): "" when absent. */
static int get_context(const cJSON *in, struct sess_call *out, struct request_error *e)
{
	const char *id;
	if (get_text(in, "context", false, 1, &id, e) < 0)
		return -1;
	if (id && !sessreq_context_id_valid(id))
		return request_fail(e, 422, "invalid_field",
				    "context must be a context id (letters, digits, '_' and '-')");
	snprintf(out->context, sizeof out->context, "%s", id ? id : "");
	return 0;
}

int sessreq_execute(const struct judge_config *cfg, const struct lang_registry *langs,
		    const cJSON *in, struct sess_call *out, struct request_error *e)
{
	static const char *const keys[] = {"code",    "stdin",	 "timeout_ms", "expected_output",
					   "compare", "context", "language",   "env",
					   NULL};
	const char *code, *in_s, *expected, *lang;
	long timeout = 0;
	sess_call_init(out, SCALL_EXECUTE);
	if (!cJSON_IsObject(in))
		return request_fail(e, 422, "invalid_field", "the body must be a JSON object");
	if (known_keys(in, keys, "", e) < 0 ||
	    get_text(in, "code", true, cfg->max_source_kb, &code, e) < 0 ||
	    get_text(in, "stdin", false, cfg->max_stdin_kb, &in_s, e) < 0 ||
	    get_text(in, "expected_output", false, cfg->max_stdin_kb, &expected, e) < 0 ||
	    get_long(in, "timeout_ms", "", 1, cfg->max_time_limit_ms, &timeout, e) < 0 ||
	    get_context(in, out, e) < 0 || get_text(in, "language", false, 1, &lang, e) < 0)
		return -1;
	if (lang && out->context[0])
		return request_fail(e, 422, "invalid_field", "context and language are exclusive");
	const struct lang *l = lang ? sessreq_language(langs, lang, e) : NULL;
	if (lang && !l)
		return -1;
	snprintf(out->exec.language, sizeof out->exec.language, "%s", l ? l->name : "");
	const cJSON *cmp = field(in, "compare");
	if (cmp && !expected)
		return request_fail(e, 422, "missing_field", "compare needs expected_output");
	if (cmp && check_compare(cfg, langs, cmp, out, e) < 0)
		return -1;
	size_t env_bytes = 0;
	if (get_env(in, &out->exec.env, &env_bytes, e) < 0)
		return -1;
	if (env_bytes > (size_t)cfg->max_stdin_kb * 1024)
		return request_fail(e, 413, "too_large", "env is larger than %ld KiB",
				    cfg->max_stdin_kb);
	out->exec.code = xstrdup(code);
	out->exec.stdin_data = in_s ? xstrdup(in_s) : NULL;
	out->exec.timeout_ms = timeout;
	out->exec.expected = expected ? xstrdup(expected) : NULL;
	return 0;
}

int sessreq_install(const cJSON *in, struct sess_call *out, struct request_error *e)
{
	static const char *const keys[] = {"manager", "packages", NULL};
	const char *mgr;
	sess_call_init(out, SCALL_INSTALL);
	if (!cJSON_IsObject(in))
		return request_fail(e, 422, "invalid_field", "the body must be a JSON object");
	if (known_keys(in, keys, "", e) < 0 || get_text(in, "manager", true, 1, &mgr, e) < 0)
		return -1;
	if (strcmp(mgr, "pip") && strcmp(mgr, "npm"))
		return request_fail(e, 422, "invalid_field", "manager must be \"pip\" or \"npm\"");
	const cJSON *pk = field(in, "packages");
	if (!pk)
		return request_fail(e, 422, "missing_field", "packages is required");
	int n = cJSON_IsArray(pk) ? cJSON_GetArraySize(pk) : 0;
	if (n < 1 || n > SESS_MAX_PACKAGES)
		return request_fail(e, 422, "invalid_field",
				    "packages must be an array of 1 to %d package names",
				    SESS_MAX_PACKAGES);
	const cJSON *it;
	cJSON_ArrayForEach(it, pk)
	{
		char why[200];
		if (!cJSON_IsString(it))
			return request_fail(e, 422, "invalid_field", "packages holds only strings");
		if (!utf8_valid_text(it->valuestring, strlen(it->valuestring)) ||
		    !install_check_package(mgr, it->valuestring, why, sizeof why))
			return request_fail(e, 422, "invalid_package",
					    "package '%.60s' is refused: %s", it->valuestring, why);
	}
	snprintf(out->install.manager, sizeof out->install.manager, "%s", mgr);
	out->install.packages = xcalloc((size_t)n + 1, sizeof *out->install.packages);
	int i = 0;
	cJSON_ArrayForEach(it, pk) out->install.packages[i++] = xstrdup(it->valuestring);
	return 0;
}

/* path without its "." parts and a trailing '/', into out: "." and "./" are the
 * session folder itself, "./data/" is "data". Anything else stays for
 * sessreq_path to judge ("/x", "a//b" and ".." are still refused). Every
 * front (HTTP, MCP, E2B) reaches a file through sessreq_file, so all of them
 * read a path alike. */
static void drop_dots(const char *path, struct strbuf *out)
{
	bool first = true;
	for (const char *s = path;;) {
		size_t len = strcspn(s, "/");
		bool end = !s[len];
		bool dot = len == 1 && s[0] == '.';
		bool trailing = len == 0 && end && s != path;
		if (!dot && !trailing) {
			if (!first)
				strbuf_addch(out, '/');
			strbuf_add(out, s, len);
			first = false;
		}
		if (end)
			break;
		s += len + 1;
	}
}

int sessreq_file(enum scall_kind kind, const char *path, const void *body, size_t len,
		 struct sess_call *out, struct request_error *e)
{
	struct strbuf clean = STRBUF_INIT;
	sess_call_init(out, kind);
	drop_dots(path, &clean);
	if (!sessreq_path(clean.buf ? clean.buf : "",
			  kind == SCALL_FILE_LIST || kind == SCALL_FILE_STAT, e)) {
		strbuf_release(&clean);
		return -1;
	}
	out->path = strbuf_detach(&clean, NULL);
	if (body)
		strbuf_add(&out->body, body, len);
	return 0;
}

int sessreq_file_parts(size_t n, const struct sessreq_part *parts, struct sess_call *out,
		       struct request_error *e)
{
	sess_call_init(out, SCALL_FILE_PUT);
	if (!n || n > SESS_MAX_PARTS) {
		request_fail(e, 400, "bad_request", "a write holds 1 to %d files", SESS_MAX_PARTS);
		return -1;
	}
	out->parts = xcalloc(n, sizeof *out->parts);
	for (size_t i = 0; i < n; i++) {
		struct strbuf clean = STRBUF_INIT;
		drop_dots(parts[i].path, &clean);
		if (!sessreq_path(clean.buf ? clean.buf : "", false, e)) {
			strbuf_release(&clean);
			return -1;
		}
		out->parts[out->nparts].path = strbuf_detach(&clean, NULL);
		out->parts[out->nparts++].len = parts[i].len;
		strbuf_add(&out->body, parts[i].data, parts[i].len);
	}
	out->path = xstrdup(out->parts[0].path);
	return 0;
}

int sessreq_watch_start(const char *path, bool recursive, long timeout_ms, bool stream,
			struct sess_call *out, struct request_error *e)
{
	if (sessreq_file(SCALL_FILE_LIST, path, NULL, 0, out, e) < 0)
		return -1;
	out->kind = SCALL_WATCH_START;
	out->watch.recursive = recursive;
	out->watch.stream = stream;
	out->watch.timeout_ms =
	    timeout_ms > 0 && timeout_ms < SESS_WATCH_MAX_MS ? timeout_ms : SESS_WATCH_MAX_MS;
	return 0;
}

int sessreq_watch(enum scall_kind kind, const char *watcher, struct sess_call *out,
		  struct request_error *e)
{
	sess_call_init(out, kind);
	size_t n = watcher ? strlen(watcher) : 0;
	if (!n || n >= SESS_ID_MAX || strspn(watcher, "0123456789abcdef") != n)
		return request_fail(e, 404, "not_found", "no watcher '%.64s'",
				    watcher ? watcher : "");
	snprintf(out->watch.id, sizeof out->watch.id, "%s", watcher);
	return 0;
}

int sessreq_file_move(const char *from, const char *to, struct sess_call *out,
		      struct request_error *e)
{
	if (sessreq_file(SCALL_FILE_MOVE, from, NULL, 0, out, e) < 0)
		return -1;
	struct strbuf clean = STRBUF_INIT;
	drop_dots(to, &clean);
	if (!sessreq_path(clean.buf ? clean.buf : "", false, e)) {
		strbuf_release(&clean);
		return -1;
	}
	out->to = strbuf_detach(&clean, NULL);
	return 0;
}

/* ---- contexts ---- */

bool sessreq_context_id_valid(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n >= SESS_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
			return false;
	return true;
}

/* A working directory of the body ("cwd"): a folder of the session, "" when absent. */
static int get_cwd(const cJSON *in, struct sess_call *out, struct request_error *e)
{
	const char *cwd;
	if (get_text(in, "cwd", false, 2, &cwd, e) < 0)
		return -1;
	if (cwd && !sessreq_path(cwd, true, e)) {
		snprintf(e->message, sizeof e->message, "cwd must be a folder of the session: %s",
			 cwd[0] == '/' ? "relative, without a leading '/'" : "no '.' or '..' part");
		return -1;
	}
	out->path = xstrdup(cwd ? cwd : "");
	return 0;
}

int sessreq_context_create(const struct lang_registry *langs, const cJSON *in,
			   struct sess_call *out, struct request_error *e)
{
	static const char *const keys[] = {"language", "cwd", NULL};
	const char *name;
	sess_call_init(out, SCALL_CONTEXT_CREATE);
	if (!cJSON_IsObject(in))
		return request_fail(e, 422, "invalid_field", "the body must be a JSON object");
	if (known_keys(in, keys, "", e) < 0 || get_text(in, "language", false, 1, &name, e) < 0 ||
	    get_cwd(in, out, e) < 0)
		return -1;
	const struct lang *l = name ? sessreq_language(langs, name, e) : NULL;
	if (name && !l)
		return -1;
	snprintf(out->ctx.language, sizeof out->ctx.language, "%s", l ? l->name : "");
	return 0;
}

int sessreq_context(enum scall_kind kind, const char *id, struct sess_call *out,
		    struct request_error *e)
{
	sess_call_init(out, kind);
	if (!sessreq_context_id_valid(id))
		return request_fail(e, 404, "not_found", "no context '%.40s'", id);
	snprintf(out->context, sizeof out->context, "%s", id);
	return 0;
}

/* ---- processes ---- */

static const struct {
	const char *name;
	int sig;
} signals[] = {{"HUP", SIGHUP},	  {"INT", SIGINT},   {"QUIT", SIGQUIT},
	       {"KILL", SIGKILL}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
	       {"TERM", SIGTERM}, {"CONT", SIGCONT}, {"STOP", SIGSTOP}};

int sessreq_signal(const char *s)
{
	if (!s)
		return 0;
	char *end;
	long n = strtol(s, &end, 10);
	bool num = *s && !*end;
	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
		if (num ? n == signals[i].sig : !strcasecmp(s, signals[i].name))
			return signals[i].sig;
	return 0;
}

#define MAX_ARGV 256

int sessreq_process_start(const struct judge_config *cfg, const cJSON *in, struct sess_call *out,
			  struct request_error *e)
{
	static const char *const keys[] = {"argv",	 "cwd", "env", "stdin",
					   "timeout_ms", "tag", NULL};
	const char *tag;
	sess_call_init(out, SCALL_PROCESS_START);
	if (!cJSON_IsObject(in))
		return request_fail(e, 422, "invalid_field", "the body must be a JSON object");
	if (known_keys(in, keys, "", e) < 0 || get_cwd(in, out, e) < 0 ||
	    get_long(in, "timeout_ms", "", 1, 7L * 24 * 3600 * 1000, &out->proc.timeout_ms, e) <
		0 ||
	    get_text(in, "tag", false, 1, &tag, e) < 0)
		return -1;
	if (tag && (strlen(tag) >= SESS_ID_MAX || !utf8_valid_text(tag, strlen(tag))))
		return request_fail(e, 422, "invalid_field", "tag is at most %d bytes",
				    SESS_ID_MAX - 1);
	snprintf(out->proc.tag, sizeof out->proc.tag, "%s", tag ? tag : "");
	const cJSON *st = field(in, "stdin");
	if (st && !cJSON_IsBool(st))
		return request_fail(e, 422, "invalid_field", "stdin must be true or false");
	out->proc.stdin_open = cJSON_IsTrue(st);
	size_t bytes = 0, max = (size_t)cfg->max_source_kb * 1024;
	const cJSON *argv = field(in, "argv"), *it;
	if (!argv)
		return request_fail(e, 422, "missing_field", "argv is required");
	int n = cJSON_IsArray(argv) ? cJSON_GetArraySize(argv) : 0;
	if (n < 1 || n > MAX_ARGV)
		return request_fail(e, 422, "invalid_field",
				    "argv must be an array of 1 to %d strings", MAX_ARGV);
	out->proc.argv = xcalloc((size_t)n + 1, sizeof *out->proc.argv);
	int i = 0;
	cJSON_ArrayForEach(it, argv)
	{
		if (!cJSON_IsString(it) ||
		    !utf8_valid_text(it->valuestring, strlen(it->valuestring)))
			return request_fail(e, 422, "invalid_field",
					    "argv holds only strings of text");
		bytes += strlen(it->valuestring) + 1;
		out->proc.argv[i++] = xstrdup(it->valuestring);
	}
	if (!out->proc.argv[0][0])
		return request_fail(e, 422, "invalid_field", "argv[0] names the program");
	if (get_env(in, &out->proc.env, &bytes, e) < 0)
		return -1;
	if (bytes > max)
		return request_fail(e, 413, "too_large", "argv and env are larger than %ld KiB",
				    cfg->max_source_kb);
	return 0;
}

int sessreq_process(const struct judge_config *cfg, enum scall_kind kind, const char *pid,
		    const cJSON *in, long wait_ms, struct sess_call *out, struct request_error *e)
{
	char *end;
	sess_call_init(out, kind);
	long n = strtol(pid, &end, 10);
	if (!*pid || *end || n < 1 || n > 1000000000L)
		return request_fail(e, 404, "not_found", "no process '%.20s'", pid);
	out->proc.pid = n;
	if (kind == SCALL_PROCESS_WAIT) {
		if (wait_ms < 0 || wait_ms > SESSREQ_MAX_WAIT_MS)
			return request_fail(e, 422, "invalid_field",
					    "wait_ms must be from 0 to %ld", SESSREQ_MAX_WAIT_MS);
		out->proc.timeout_ms = wait_ms;
		return 0;
	}
	if (kind == SCALL_PROCESS_SIGNAL) {
		static const char *const keys[] = {"signal", NULL};
		const cJSON *sg = cJSON_IsObject(in) ? field(in, "signal") : NULL;
		if (!cJSON_IsObject(in) || known_keys(in, keys, "", e) < 0)
			return cJSON_IsObject(in) ? -1
						  : request_fail(e, 422, "invalid_field",
								 "the body must be a JSON object");
		char num[16];
		if (cJSON_IsNumber(sg))
			snprintf(num, sizeof num, "%d", (int)sg->valuedouble);
		out->proc.signal = cJSON_IsString(sg)	? sessreq_signal(sg->valuestring)
				   : cJSON_IsNumber(sg) ? sessreq_signal(num)
							: 0;
		if (!sg)
			return request_fail(e, 422, "missing_field", "signal is required");
		if (!out->proc.signal)
			return request_fail(
			    e, 422, "invalid_field",
			    "signal must be one of SIGHUP, SIGINT, SIGQUIT, SIGKILL, "
			    "SIGUSR1, SIGUSR2, SIGTERM, SIGCONT, SIGSTOP");
		return 0;
	}
	if (kind != SCALL_PROCESS_INPUT)
		return 0;
	static const char *const keys[] = {"data", "encoding", NULL};
	const char *data, *enc;
	if (!cJSON_IsObject(in))
		return request_fail(e, 422, "invalid_field", "the body must be a JSON object");
	if (known_keys(in, keys, "", e) < 0 || get_text(in, "encoding", false, 1, &enc, e) < 0 ||
	    get_text(in, "data", true, cfg->max_stdin_kb * 2, &data, e) < 0)
		return -1;
	bool b64 = enc && !strcmp(enc, "base64");
	if (enc && !b64 && strcmp(enc, "utf-8"))
		return request_fail(e, 422, "invalid_field",
				    "encoding must be \"utf-8\" or \"base64\"");
	if (!b64)
		strbuf_addstr(&out->body, data);
	else if (!base64_decode(&out->body, data, strlen(data)))
		return request_fail(e, 422, "invalid_field", "data is not valid base64");
	if (out->body.len > (size_t)cfg->max_stdin_kb * 1024)
		return request_fail(e, 413, "too_large", "data is larger than %ld KiB",
				    cfg->max_stdin_kb);
	return 0;
}

/* session_write_file's content: text, or base64. */
static int tool_content(const cJSON *args, struct strbuf *out, struct request_error *e)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(args, "content");
	const cJSON *enc = cJSON_GetObjectItemCaseSensitive(args, "encoding");
	if (!cJSON_IsString(c))
		return request_fail(e, 422, "missing_field", "content (a string) is required");
	bool b64 = cJSON_IsString(enc) && !strcmp(enc->valuestring, "base64");
	if (enc && !b64 && !(cJSON_IsString(enc) && !strcmp(enc->valuestring, "utf-8")))
		return request_fail(e, 422, "invalid_field",
				    "encoding must be \"utf-8\" or \"base64\"");
	if (!b64)
		strbuf_addstr(out, c->valuestring);
	else if (!base64_decode(out, c->valuestring, strlen(c->valuestring)))
		return request_fail(e, 422, "invalid_field", "content is not valid base64");
	return 0;
}

int sessreq_tool(const struct judge_config *cfg, const struct lang_registry *langs,
		 enum scall_kind kind, const cJSON *args, char *id, struct sess_call *out,
		 struct request_error *e)
{
	const cJSON *sid = cJSON_GetObjectItemCaseSensitive(args, "session_id");
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(args, "path");
	const char *path = cJSON_IsString(p) ? p->valuestring : "";
	sess_call_init(out, kind);
	if (!cJSON_IsString(sid))
		return request_fail(e, 422, "missing_field", "session_id is required");
	if (!sessreq_id_valid(sid->valuestring))
		return request_fail(e, 404, "not_found", "no session '%.40s'", sid->valuestring);
	snprintf(id, 37, "%s", sid->valuestring);
	int rc = 0;
	cJSON *rest = cJSON_Duplicate(args, 1);
	cJSON_DeleteItemFromObjectCaseSensitive(rest, "session_id");
	struct strbuf content = STRBUF_INIT;
	switch (kind) {
	case SCALL_EXECUTE:
		rc = sessreq_execute(cfg, langs, rest, out, e);
		break;
	case SCALL_INSTALL:
		rc = sessreq_install(rest, out, e);
		break;
	case SCALL_CLOSE:
	case SCALL_PAUSE:
		break;
	case SCALL_FILE_PUT:
		rc = tool_content(args, &content, e);
		if (rc == 0)
			rc = sessreq_file(kind, path, content.buf ? content.buf : "", content.len,
					  out, e);
		break;
	case SCALL_FILE_LIST:
	case SCALL_FILE_GET:
		rc = sessreq_file(kind, path, NULL, 0, out, e);
		break;
	default:
		rc = request_fail(e, 404, "not_found", "no such tool");
	}
	strbuf_release(&content);
	cJSON_Delete(rest);
	return rc;
}

bool sessreq_path(const char *path, bool empty_ok, struct request_error *e)
{
	size_t n = strlen(path);
	if (!n) {
		if (!empty_ok)
			request_fail(e, 400, "bad_path", "a file path is required");
		return empty_ok;
	}
	if (n > MAX_PATH_BYTES || !utf8_valid_text(path, n)) {
		request_fail(e, 400, "bad_path", "a path is at most %d bytes of UTF-8",
			     MAX_PATH_BYTES);
		return false;
	}
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		if (*p < 0x20 || *p == 0x7f || *p == '\\') {
			request_fail(e, 400, "bad_path",
				     "the path holds a control character or '\\'");
			return false;
		}
	const char *s = path;
	for (;;) {
		size_t len = strcspn(s, "/");
		if (len == 0 || (len == 1 && s[0] == '.') || (len == 2 && !strncmp(s, "..", 2))) {
			request_fail(e, 400, "bad_path",
				     "the path must stay in the session folder: relative, with no "
				     "empty, '.' or '..' part");
			return false;
		}
		if (len > MAX_NAME_BYTES) {
			request_fail(e, 400, "bad_path",
				     "a file or folder name is at most %d bytes", MAX_NAME_BYTES);
			return false;
		}
		if (!s[len])
			return true;
		s += len + 1;
	}
}

const char *sessreq_content_type(const char *name)
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
	    {"py", "text/x-python"},	{"js", "text/javascript"},    /* lang-ok: file endings */
	    {"cs", "text/plain"},	{"sh", "text/x-shellscript"}, /* lang-ok: file endings */
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

bool sessreq_inline_ok(const char *content_type)
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

void sessreq_disposition(const char *name, struct strbuf *out)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (sessreq_inline_ok(sessreq_content_type(name))) {
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

bool sessreq_id_valid(const char *s)
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
