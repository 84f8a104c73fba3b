/* mcp: the Model Context Protocol endpoint (POST /mcp) over the HTTP API's endpoints.
 *
 * How it works: MCP's Streamable HTTP transport, without sessions: each POST
 * holds one JSON-RPC 2.0 message; a request gets one application/json reply
 * (or an SSE stream, mcp_stream.h), a notification or a client's response gets
 * 202 and no body. Two eras are served on the one endpoint (mcp_era.h): the
 * legacy one (2024-11-05 .. 2025-11-25: initialize, ping, tools/list) and the
 * stateless 2026-07-28 one (server/discover, tools/list, each request with its
 * version and capabilities in _meta, its results with resultType). tools/call
 * does not reimplement any endpoint: it hands the tool's arguments over as
 * the endpoint's parsed request body, sets r->transform, and calls the
 * endpoint's own handler through the dispatch function. Every response that
 * handler makes, at once or after a parked wait, passes through the
 * transform, which wraps it in the JSON-RPC reply: a 2xx becomes a tool
 * result, an API error a tool result with isError (the model must read the
 * message to fix its call), a 202 a result that says how to fetch the
 * verdict later. Validation and limits are thus the HTTP API's, exactly.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"

struct http_request;
struct judge_config;
struct lang_registry;

/* The tools, each one endpoint of the HTTP API. */
enum mcp_tool {
	MCP_EXECUTE,	      /* POST /v1/execute */
	MCP_EXECUTE_EXPECTED, /* POST /v1/execute_with_expected */
	MCP_SOLVE_PROBLEM,    /* POST /v1/submissions with problem, waiting like execute */
	MCP_GET_SUBMISSION,   /* GET /v1/submissions/{id}?wait= */
	MCP_LIST_LANGUAGES,   /* GET /v1/languages */
	MCP_LIST_PROBLEMS,    /* GET /v1/problems */
	MCP_GET_PROBLEM,      /* GET /v1/problems/{id} */
	MCP_UPLOAD_PROBLEM,   /* POST (PUT with replace) /v1/problems: a zip in base64 */
	/* sessions (sessions.h): the arguments are the body, with session_id */
	MCP_SESSION_CREATE,	/* POST /v1/sessions */
	MCP_SESSION_EXECUTE,	/* POST /v1/sessions/{id}/execute */
	MCP_SESSION_INSTALL,	/* POST /v1/sessions/{id}/install */
	MCP_SESSION_WRITE_FILE, /* PUT /v1/sessions/{id}/files/{path} (text or base64) */
	MCP_SESSION_READ_FILE,	/* GET /v1/sessions/{id}/files/{path} (as JSON) */
	MCP_SESSION_LIST_FILES, /* GET /v1/sessions/{id}/files?dir= */
	MCP_SESSION_CLOSE,	/* DELETE /v1/sessions/{id} */
	MCP_SESSION_HISTORY,	/* GET /v1/sessions/{id}/history (after) */
	MCP_SESSION_PAUSE,	/* POST /v1/sessions/{id}/pause */
	MCP_SESSION_RESUME,	/* POST /v1/sessions/{id}/resume */
	MCP_SESSION_FORK,	/* POST /v1/sessions/{id}/fork (name) */
	MCP_SESSION_SNAPSHOT,	/* POST /v1/sessions/{id}/snapshot (name) */
	MCP_SNAPSHOT_LIST,	/* GET /v1/snapshots */
	MCP_SNAPSHOT_DELETE,	/* DELETE /v1/snapshots/{id} */
	MCP_TOOL_COUNT
};

/* One tool call for the dispatcher. */
struct mcp_call {
	enum mcp_tool tool;
	const cJSON *body; /* POST and session tools: the arguments, the endpoint's parsed
			      body (an object); valid during the dispatch */
	const char *id;	   /* get_submission, get_problem: the path's id */
	const char *wait;  /* get_submission: the ?wait= value, or NULL */
	/* The POST tools: answer as a stream (mcp_stream.h: the endpoint's
	 * Server-Sent Events relay, r->event_transform set) instead of JSON. */
	bool stream;
	/* Set for notifications/cancelled (tool is MCP_TOOL_COUNT): end the
	 * stream tagged so (sse_cancel); the dispatcher must not respond. */
	const char *cancel_tag;
};

/* Runs the endpoint of call->tool on r, which answers as that endpoint does
 * (and may park r: the transform still applies after the resume). */
typedef void (*mcp_dispatch_fn)(struct http_request *r, const struct mcp_call *call, void *arg);

/* Handles POST /mcp once the body is in (authentication and admission were
 * done before, as for every route). cfg gives the body caps (request.h), langs
 * the languages the tools' descriptions name. Always responds or has the
 * dispatched endpoint respond. */
void mcp_handle(struct http_request *r, const struct judge_config *cfg,
		const struct lang_registry *langs, mcp_dispatch_fn dispatch, void *arg);

/* The tools/call reply (JSON-RPC, one line and a newline) for request id
 * whose endpoint answered status with body (len bytes) into out; modern: a
 * 2026-07-28 result (resultType, serverInfo). */
void mcp_tool_reply(const cJSON *id, int status, const char *body, size_t len, bool modern,
		    struct strbuf *out);
/* Name of a tool ("execute_with_expected" ...), for logs. */
const char *mcp_tool_name(enum mcp_tool t);
