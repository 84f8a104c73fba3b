/* route: which endpoint a path names, which methods it takes, and the Origin rule of /mcp.
 *
 * Pure functions of strings: the router (api.c) asks them before a body is
 * read, and the metrics use the route names as their "route" label.
 */
#pragma once
#include <stdbool.h>

/* Routes, also the "route" label of the metrics (route_name). */
enum route {
	R_EXECUTE,
	R_EXECUTE_EXPECTED,
	R_SUBMIT,
	R_BATCH,
	R_GET_SUB,
	R_SUB_EVENTS, /* GET /v1/submissions/{id}/events (events.h) */
	R_LANGUAGES,
	R_PROBLEMS,
	R_PROBLEM,
	R_HEALTH,
	R_METRICS,
	R_MCP,
	R_PISTON_RUNTIMES, /* GET /api/v2/runtimes (piston.h) */
	R_PISTON_EXECUTE,  /* POST /api/v2/execute */
	/* Judge0 CE's paths (judge0.h) */
	R_J0_SUBMIT,
	R_J0_BATCH,
	R_J0_GET,
	R_J0_LANGUAGES,
	R_J0_LANGUAGE,
	R_J0_STATUSES,
	R_J0_ABOUT,
	R_J0_CONFIG,
	R_OPENAPI,     /* GET /openapi.json (docs.h) */
	R_DOCS,	       /* GET /docs and /docs.js */
	R_EVALS,       /* POST /v1/evaluations (evaluation.h) */
	R_EVAL,	       /* GET /v1/evaluations/{id} */
	R_EVAL_EVENTS, /* GET /v1/evaluations/{id}/events */
	/* sessions (sessions.h): arg points at the session id in the path */
	R_SESSIONS,		   /* GET, POST /v1/sessions */
	R_SESSION,		   /* GET, DELETE /v1/sessions/{id} */
	R_SESSION_EXECUTE,	   /* POST /v1/sessions/{id}/execute */
	R_SESSION_INSTALL,	   /* POST /v1/sessions/{id}/install */
	R_SESSION_HISTORY,	   /* GET /v1/sessions/{id}/history[?after=&limit=] */
	R_SESSION_FILES,	   /* GET /v1/sessions/{id}/files?dir= */
	R_SESSION_FILE,		   /* GET, PUT, DELETE /v1/sessions/{id}/files/{path} */
	R_SESSION_CONTEXTS,	   /* GET, POST /v1/sessions/{id}/contexts */
	R_SESSION_CONTEXT,	   /* DELETE /v1/sessions/{id}/contexts/{ctx} */
	R_SESSION_CONTEXT_RESTART, /* POST /v1/sessions/{id}/contexts/{ctx}/restart */
	R_SESSION_PROCESSES,	   /* GET, POST /v1/sessions/{id}/processes */
	R_SESSION_PROCESS,	   /* GET /v1/sessions/{id}/processes/{pid}[?wait_ms=] */
	R_SESSION_PROCESS_STDIN,   /* POST, DELETE /v1/sessions/{id}/processes/{pid}/stdin */
	R_SESSION_PROCESS_SIGNAL,  /* POST /v1/sessions/{id}/processes/{pid}/signal */
	R_SESSION_PROCESS_EVENTS,  /* GET /v1/sessions/{id}/processes/{pid}/events */
	R_SESSION_PAUSE,	   /* POST /v1/sessions/{id}/pause */
	R_SESSION_INTERRUPT,	   /* POST /v1/sessions/{id}/interrupt */
	R_SESSION_RESUME,	   /* POST /v1/sessions/{id}/resume */
	R_SESSION_SNAPSHOT,	   /* POST /v1/sessions/{id}/snapshot */
	R_SESSION_FORK,		   /* POST /v1/sessions/{id}/fork */
	/* a key's snapshots (snapshots.h) */
	R_SNAPSHOTS, /* GET /v1/snapshots */
	R_SNAPSHOT,  /* GET, DELETE /v1/snapshots/{id} */
	/* the playground and the dashboard's pages and assets (docs.h) */
	R_WEB,
	/* the dashboard's JSON: admin keys only (admin.h) */
	R_ADMIN_STATS, /* GET /v1/admin/stats */
	R_ADMIN_KEYS,  /* GET (list), POST (create) /v1/admin/keys */
	R_ADMIN_KEY,   /* GET, PATCH (egress, weight), DELETE (revoke) /v1/admin/keys/{id} */
	/* the E2B front (e2b_control.h): arg points after "/sandboxes" or
	 * "/v2/sandboxes" ("" or "/{id}[/...]"); the sandbox's own traffic is
	 * routed by its E2b-Sandbox-Port header (api.c), not by path */
	R_E2B_API,  /* /sandboxes[/...], /v2/sandboxes[/...] */
	R_E2B_ENVD, /* E2b-Sandbox-Port: 49983 (e2b_envd.h) */
	R_E2B_CODE, /* E2b-Sandbox-Port: 49999 (e2b_code.h) */
	/* E2B's snapshots (e2b_images.h): arg is the whole path */
	R_E2B_IMAGES, /* GET /snapshots, DELETE /templates/{id} */
	R_OTHER,
	R_COUNT
};

/* Classifies a path (without the query string). *arg points into url for the
 * /{id} routes (R_GET_SUB, R_PROBLEM, R_J0_GET, R_J0_LANGUAGE, R_EVAL, R_ADMIN_KEY,
 * R_SNAPSHOT),
 * else it is NULL; for R_SUB_EVENTS and R_EVAL_EVENTS it points at "{id}/events", and for the
 * session routes but R_SESSIONS at the session id and what follows. */
enum route route_of(const char *url, const char **arg);
/* The metrics label of rt ("execute_with_expected" ...); "other" when out of range. */
const char *route_name(int rt);
/* The R_COUNT labels, in the order of enum route (static). */
const char *const *route_names(void);
/* The methods rt takes, as an Allow header value ("POST", "GET, HEAD, DELETE" ...). */
const char *route_allow(enum route rt);
/* True when method is one of route_allow(rt). */
bool route_method_ok(enum route rt, const char *method);
/* True when origin (an Origin header, or NULL when there is none) is a page
 * of this machine: http(s)://localhost, 127.0.0.1 or [::1], any port. */
bool route_local_origin(const char *origin);
