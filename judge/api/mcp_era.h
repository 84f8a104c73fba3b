/* mcp_era: which MCP era a POST /mcp request speaks, and the checks of the modern one.
 *
 * How it works: the judge is a "dual-era" server (spec 2026-07-28,
 * basic/versioning.mdx, "Backward Compatibility with Initialization-Based
 * Versions"). A legacy client (2024-11-05 .. 2025-11-25) opens with initialize
 * and is served as before. A modern client (2026-07-28) sends no initialize:
 * every request carries its protocol version and client capabilities in
 * params._meta ("io.modelcontextprotocol/protocolVersion", ".../clientCapabilities")
 * and mirrors the version, the method and the tool's name into the headers
 * MCP-Protocol-Version, Mcp-Method and Mcp-Name (basic/transports/streamable-http.mdx,
 * "Request Metadata"). The era is read from the body first, as the spec's
 * dual-era rule says: "A request carrying modern per-request _meta is served
 * statelessly according to this revision". mcp_era_classify checks such a
 * request's headers against its body and answers what a refusal must say
 * (HTTP 400 with HeaderMismatch -32020, UnsupportedProtocolVersion -32022 or
 * invalid params -32602). The server keeps no state between requests in either
 * era (it never had sessions: no Mcp-Session-Id, no GET stream).
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>

#define MCP_SERVER_NAME	   "judge"
#define MCP_SERVER_VERSION "1.0.0"
/* The modern revision this server speaks (schema/2026-07-28/schema.ts). */
#define MCP_MODERN_VERSION "2026-07-28"

/* JSON-RPC error codes; the last three are MCP's own (schema.ts, "MCP error codes") */
enum {
	MCP_PARSE_ERROR = -32700,
	MCP_INVALID_REQUEST = -32600,
	MCP_METHOD_NOT_FOUND = -32601,
	MCP_INVALID_PARAMS = -32602,
	MCP_HEADER_MISMATCH = -32020,
	MCP_MISSING_CLIENT_CAPABILITY = -32021,
	MCP_UNSUPPORTED_VERSION = -32022,
};

/* What mcp_era_classify found. */
struct mcp_era {
	bool modern; /* served by the 2026-07-28 rules (stateless, results with resultType) */
	/* a refusal, when code is not 0: HTTP status and JSON-RPC error */
	int status;
	int code;
	char message[300];
	cJSON *data; /* error.data, or NULL; owned, mcp_era_release frees it */
};

/* A request header's value by name (case-insensitive), or NULL when absent
 * (http_header over an http_request, or a table in a test). */
typedef const char *(*mcp_header_fn)(void *arg, const char *name);

/* Classifies the JSON-RPC request msg (an object with a string method and an
 * id) whose HTTP headers header(arg, name) gives, into *e (which it
 * initialises). A legacy request is left as it is; a modern one must pass
 * every check of the 2026-07-28 transport, else e->code says why it is
 * refused. */
void mcp_era_classify(const cJSON *msg, mcp_header_fn header, void *arg, struct mcp_era *e);
void mcp_era_release(struct mcp_era *e);

/* The legacy version an initialize for version v agrees on: v when this server
 * knows it, else the newest legacy one (2025-11-25). Never NULL. */
const char *mcp_era_initialize_version(const char *v);
/* Every version this server speaks, newest first (a new array). */
cJSON *mcp_era_versions(void);
/* Adds what every result of the modern era holds: resultType "complete" and
 * _meta["io.modelcontextprotocol/serverInfo"] (schema.ts, Result and
 * ResultMetaObject). */
void mcp_era_result(cJSON *result);
/* Adds serverInfo {name, title, version} to o under key. */
void mcp_era_server_info(cJSON *o, const char *key);
