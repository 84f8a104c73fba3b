/* route: path to endpoint, methods per endpoint, the local Origin check. */
#include "judge/api/route.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

/* the metrics labels; designated, so that a route added to the enum without
 * a label here is NULL (test_metrics fails) rather than shifting the others */
static const char *const names[R_COUNT] = {
    [R_EXECUTE] = "execute",
    [R_EXECUTE_EXPECTED] = "execute_with_expected",
    [R_SUBMIT] = "submissions",
    [R_BATCH] = "submissions_batch",
    [R_GET_SUB] = "submission",
    [R_SUB_EVENTS] = "submission_events",
    [R_LANGUAGES] = "languages",
    [R_PROBLEMS] = "problems",
    [R_PROBLEM] = "problem",
    [R_HEALTH] = "health",
    [R_METRICS] = "metrics",
    [R_MCP] = "mcp",
    [R_PISTON_RUNTIMES] = "piston_runtimes",
    [R_PISTON_EXECUTE] = "piston_execute",
    [R_J0_SUBMIT] = "judge0_submit",
    [R_J0_BATCH] = "judge0_batch",
    [R_J0_GET] = "judge0_submission",
    [R_J0_LANGUAGES] = "judge0_languages",
    [R_J0_LANGUAGE] = "judge0_language",
    [R_J0_STATUSES] = "judge0_statuses",
    [R_J0_ABOUT] = "judge0_about",
    [R_J0_CONFIG] = "judge0_config_info",
    [R_OPENAPI] = "openapi",
    [R_DOCS] = "docs",
    [R_EVALS] = "evaluations",
    [R_EVAL] = "evaluation",
    [R_EVAL_EVENTS] = "evaluation_events",
    [R_SESSIONS] = "sessions",
    [R_SESSION] = "session",
    [R_SESSION_EXECUTE] = "session_execute",
    [R_SESSION_INSTALL] = "session_install",
    [R_SESSION_HISTORY] = "session_history",
    [R_SESSION_FILES] = "session_files",
    [R_SESSION_FILE] = "session_file",
    [R_SESSION_CONTEXTS] = "session_contexts",
    [R_SESSION_CONTEXT] = "session_context",
    [R_SESSION_CONTEXT_RESTART] = "session_context_restart",
    [R_SESSION_PROCESSES] = "session_processes",
    [R_SESSION_PROCESS] = "session_process",
    [R_SESSION_PROCESS_STDIN] = "session_process_stdin",
    [R_SESSION_PROCESS_SIGNAL] = "session_process_signal",
    [R_SESSION_PROCESS_EVENTS] = "session_process_events",
    [R_SESSION_PAUSE] = "session_pause",
    [R_SESSION_INTERRUPT] = "session_interrupt",
    [R_SESSION_RESUME] = "session_resume",
    [R_SESSION_SNAPSHOT] = "session_snapshot",
    [R_SESSION_FORK] = "session_fork",
    [R_SNAPSHOTS] = "snapshots",
    [R_SNAPSHOT] = "snapshot",
    [R_WEB] = "web",
    [R_ADMIN_STATS] = "admin_stats",
    [R_ADMIN_KEYS] = "admin_keys",
    [R_ADMIN_KEY] = "admin_key",
    [R_E2B_API] = "e2b_api",
    [R_E2B_ENVD] = "e2b_envd",
    [R_E2B_CODE] = "e2b_code",
    [R_E2B_IMAGES] = "e2b_images",
    [R_OTHER] = "other",
};

const char *const *route_names(void)
{
	return names;
}

const char *route_name(int rt)
{
	return rt >= 0 && rt < R_COUNT ? names[rt] : names[R_OTHER];
}

/* True when s is one non-empty path segment (no '/'). */
__attribute__((noinline)) static bool one_segment(const char *s)
{
	size_t n = strcspn(s, "/");
	return n > 0 && s[n] == 0;
}

/* True when s is "<segment>/events". */
static bool events_path(const char *s)
{
	size_t n = strcspn(s, "/");
	return n > 0 && !strcmp(s + n, "/events");
}

/* The path prefix of a /{id} route; sizeof - 1 is its length. */
#define SUBS_PREFIX "/v1/submissions/"
#define PROB_PREFIX "/v1/problems/"
#define J0_SUBS	    "/submissions/"
#define J0_LANGS    "/languages/"
#define EVAL_PREFIX "/v1/evaluations/"
#define ADMIN_KEY   "/v1/admin/keys/"
#define SNAP_PREFIX "/v1/snapshots/"

#define SESS_PREFIX "/v1/sessions/"

/* The route of "/<name>/{x}<tail>" under a session (rest points after the
 * session id): one segment x, then tail exactly. */
static bool sub_route(const char *rest, const char *name, const char *tail)
{
	size_t n = strlen(name);
	if (strncmp(rest, name, n) || rest[n] != '/')
		return false;
	const char *x = rest + n + 1;
	size_t len = strcspn(x, "/");
	return len > 0 && !strcmp(x + len, tail);
}

/* /v1/sessions/{id}[/execute | /install | /files[/{path}] | /contexts[/{ctx}[/restart]]
 * | /processes[/{pid}[/stdin | /signal | /events]]], or R_OTHER. */
static enum route session_route(const char *url, const char **arg)
{
	size_t n = sizeof SESS_PREFIX - 1;
	if (strncmp(url, SESS_PREFIX, n))
		return R_OTHER;
	const char *id = url + n, *rest = id + strcspn(id, "/");
	if (rest == id)
		return R_OTHER;
	/* route first: tests/integration/openapi.sh reads {"/path", R_...} rows as routes */
	static const struct {
		enum route rt;
		const char *tail;
	} tails[] = {{R_SESSION, ""},
		     {R_SESSION_EXECUTE, "/execute"},
		     {R_SESSION_INSTALL, "/install"},
		     {R_SESSION_HISTORY, "/history"},
		     {R_SESSION_FILES, "/files"},
		     {R_SESSION_FILES, "/files/"},
		     {R_SESSION_CONTEXTS, "/contexts"},
		     {R_SESSION_PROCESSES, "/processes"},
		     {R_SESSION_PAUSE, "/pause"},
		     {R_SESSION_INTERRUPT, "/interrupt"},
		     {R_SESSION_RESUME, "/resume"},
		     {R_SESSION_SNAPSHOT, "/snapshot"},
		     {R_SESSION_FORK, "/fork"}};
	static const struct {
		enum route rt;
		const char *name, *tail;
	} subs[] = {{R_SESSION_CONTEXT, "/contexts", ""},
		    {R_SESSION_CONTEXT_RESTART, "/contexts", "/restart"},
		    {R_SESSION_PROCESS, "/processes", ""},
		    {R_SESSION_PROCESS_STDIN, "/processes", "/stdin"},
		    {R_SESSION_PROCESS_SIGNAL, "/processes", "/signal"},
		    {R_SESSION_PROCESS_EVENTS, "/processes", "/events"}};
	*arg = id;
	for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++)
		if (!strcmp(rest, tails[i].tail))
			return tails[i].rt;
	if (!strncmp(rest, "/files/", 7))
		return R_SESSION_FILE;
	for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
		if (sub_route(rest, subs[i].name, subs[i].tail))
			return subs[i].rt;
	*arg = NULL;
	return R_OTHER;
}

enum route route_of(const char *url, const char **arg)
{
	static const struct {
		const char *path;
		enum route rt;
	} exact[] = {
	    {"/v1/execute", R_EXECUTE},
	    {"/v1/execute_with_expected", R_EXECUTE_EXPECTED},
	    {"/v1/submissions", R_SUBMIT},
	    {"/v1/submissions/batch", R_BATCH},
	    {"/v1/languages", R_LANGUAGES},
	    {"/v1/problems", R_PROBLEMS},
	    {"/health", R_HEALTH},
	    {"/metrics", R_METRICS},
	    {"/mcp", R_MCP},
	    {"/api/v2/runtimes", R_PISTON_RUNTIMES},
	    {"/api/v2/execute", R_PISTON_EXECUTE},
	    /* the public API's paths: a client moves by changing the host only */
	    {"/api/v2/piston/runtimes", R_PISTON_RUNTIMES},
	    {"/api/v2/piston/execute", R_PISTON_EXECUTE},
	    {"/submissions", R_J0_SUBMIT},
	    {"/submissions/batch", R_J0_BATCH},
	    {"/languages", R_J0_LANGUAGES},
	    {"/statuses", R_J0_STATUSES},
	    {"/about", R_J0_ABOUT},
	    {"/config_info", R_J0_CONFIG},
	    {"/openapi.json", R_OPENAPI},
	    {"/docs", R_DOCS},
	    {"/docs.js", R_DOCS},
	    {"/v1/evaluations", R_EVALS},
	    {"/v1/sessions", R_SESSIONS},
	    {"/v1/snapshots", R_SNAPSHOTS},
	    {"/", R_WEB},
	    {"/dashboard", R_WEB},
	    {"/playground.js", R_WEB},
	    {"/dashboard.js", R_WEB},
	    {"/problems", R_WEB},
	    {"/problems.js", R_WEB},
	    {"/app.css", R_WEB},
	    {"/v1/admin/stats", R_ADMIN_STATS},
	    {"/v1/admin/keys", R_ADMIN_KEYS},
	};
	*arg = NULL;
	for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
		if (!strcmp(url, exact[i].path))
			return exact[i].rt;
	size_t ns = sizeof SUBS_PREFIX - 1, np = sizeof PROB_PREFIX - 1;
	if (!strncmp(url, SUBS_PREFIX, ns) && one_segment(url + ns)) {
		*arg = url + ns;
		return R_GET_SUB;
	}
	if (!strncmp(url, SUBS_PREFIX, ns) && events_path(url + ns)) {
		*arg = url + ns;
		return R_SUB_EVENTS;
	}
	if (!strncmp(url, PROB_PREFIX, np) && one_segment(url + np)) {
		*arg = url + np;
		return R_PROBLEM;
	}
	size_t njs = sizeof J0_SUBS - 1, njl = sizeof J0_LANGS - 1;
	if (!strncmp(url, J0_SUBS, njs) && one_segment(url + njs)) {
		*arg = url + njs;
		return R_J0_GET;
	}
	if (!strncmp(url, J0_LANGS, njl) && one_segment(url + njl)) {
		*arg = url + njl;
		return R_J0_LANGUAGE;
	}
	if (!strncmp(url, EVAL_PREFIX, sizeof EVAL_PREFIX - 1) &&
	    one_segment(url + sizeof EVAL_PREFIX - 1)) {
		*arg = url + sizeof EVAL_PREFIX - 1;
		return R_EVAL;
	}
	if (!strncmp(url, EVAL_PREFIX, sizeof EVAL_PREFIX - 1) &&
	    events_path(url + sizeof EVAL_PREFIX - 1)) {
		*arg = url + sizeof EVAL_PREFIX - 1;
		return R_EVAL_EVENTS;
	}
	size_t nak = sizeof ADMIN_KEY - 1;
	if (!strncmp(url, ADMIN_KEY, nak) && one_segment(url + nak)) {
		*arg = url + nak;
		return R_ADMIN_KEY;
	}
	size_t nsn = sizeof SNAP_PREFIX - 1;
	if (!strncmp(url, SNAP_PREFIX, nsn) && one_segment(url + nsn)) {
		*arg = url + nsn;
		return R_SNAPSHOT;
	}
	static const char *const e2b[] = {"/sandboxes", "/v2/sandboxes"};
	for (size_t i = 0; i < sizeof e2b / sizeof e2b[0]; i++) {
		size_t n = strlen(e2b[i]);
		if (!strncmp(url, e2b[i], n) && (!url[n] || url[n] == '/')) {
			*arg = url + n;
			return R_E2B_API;
		}
	}
	/* (not in the table above: they are E2B's paths, not in our document) */
	if (!strcmp(url, "/snapshots") || !strncmp(url, "/templates/", 11)) {
		*arg = url;
		return R_E2B_IMAGES;
	}
	return session_route(url, arg);
}

static bool takes_post(enum route rt)
{
	/* /mcp: no SSE stream to GET, no session to DELETE */
	return rt == R_EXECUTE || rt == R_EXECUTE_EXPECTED || rt == R_SUBMIT || rt == R_BATCH ||
	       rt == R_MCP || rt == R_PISTON_EXECUTE || rt == R_J0_SUBMIT || rt == R_EVALS;
}

const char *route_allow(enum route rt)
{
	switch (rt) {
	case R_J0_BATCH: /* Judge0: create a batch, or get one by tokens */
	case R_SESSIONS:
	case R_ADMIN_KEYS:
		return "GET, HEAD, POST";
	case R_SESSION:
		return "GET, HEAD, PATCH, DELETE";
	case R_SESSION_EXECUTE:
	case R_SESSION_INSTALL:
	case R_SESSION_CONTEXT_RESTART:
	case R_SESSION_PROCESS_SIGNAL:
	case R_SESSION_PAUSE:
	case R_SESSION_INTERRUPT:
	case R_SESSION_RESUME:
	case R_SESSION_SNAPSHOT:
	case R_SESSION_FORK:
		return "POST";
	case R_SESSION_FILE:
		return "GET, HEAD, PUT, DELETE";
	case R_SESSION_CONTEXTS:
	case R_SESSION_PROCESSES:
		return "GET, HEAD, POST";
	case R_SESSION_CONTEXT:
		return "DELETE";
	case R_SESSION_PROCESS_STDIN:
		return "POST, DELETE";
	case R_ADMIN_KEY:
		return "GET, HEAD, PATCH, DELETE";
	case R_SNAPSHOT:
		return "GET, HEAD, DELETE";
	case R_E2B_API:
	case R_E2B_ENVD:
	case R_E2B_CODE:
		return "GET, HEAD, POST, PUT, DELETE";
	case R_E2B_IMAGES:
		return "GET, HEAD, DELETE";
	case R_PROBLEMS:
		return "GET, HEAD, POST";
	case R_PROBLEM:
		return "GET, HEAD, PUT, PATCH, DELETE";
	default:
		return takes_post(rt) ? "POST" : "GET, HEAD";
	}
}

bool route_method_ok(enum route rt, const char *method)
{
	const char *allow = route_allow(rt);
	size_t n = strlen(method);
	for (const char *p = allow; *p; p += strspn(p, ", ")) {
		size_t len = strcspn(p, ", ");
		if (len == n && !strncmp(p, method, n))
			return true;
		p += len;
	}
	return false;
}

bool route_local_origin(const char *origin)
{
	if (!origin)
		return true;
	const char *h = strstr(origin, "://");
	if (!h)
		return false;
	h += 3;
	static const char *const hosts[] = {"localhost", "127.0.0.1", "[::1]"};
	for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++) {
		size_t n = strlen(hosts[i]);
		if (!strncasecmp(h, hosts[i], n) && (!h[n] || h[n] == ':' || h[n] == '/'))
			return true;
	}
	return false;
}
