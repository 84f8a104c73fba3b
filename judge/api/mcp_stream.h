/* mcp_stream: MCP's Streamable HTTP with SSE for the tools that run code.
 *
 * A tools/call of execute, execute_with_expected or solve_problem that asks
 * for progress (params._meta.progressToken) from a client that accepts
 * text/event-stream is answered as a stream (sse.h) of the submission's live
 * output: each output chunk and each judged test becomes a
 * notifications/progress (progress counts them; message says what came:
 * "stdout: ...", "test 2: accepted"), and last comes the tools/call reply,
 * the same one a JSON answer would hold. notifications/cancelled (same API
 * key, the call's request id) ends that stream at once without a reply, as
 * the 2025 spec asks; 2026-07-28 keeps progress, and its cancellation over
 * HTTP is the client closing the stream, which ends it the same way
 * (streamable-http.mdx, "Cancellation"). The run itself goes on and its
 * result is stored (an agent may still fetch it with get_submission). A
 * stream is found by its tag,
 * "mcp:<key id>:<request id as JSON>", in this server process.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

struct http_request;
struct mcp_stream;

/* Whether to answer tools/call r (params) as a stream: its client accepts
 * text/event-stream and asks for progress (_meta.progressToken), or accepts
 * nothing else. Others get the JSON answer, as before streams existed. */
bool mcp_stream_wanted(struct http_request *r, const cJSON *params);
/* State of one streamed call of API key key_id with request id and params
 * (its _meta.progressToken is kept), of the 2026-07-28 era when modern (its
 * reply is then a modern result). Never NULL; mcp_stream_free it. */
struct mcp_stream *mcp_stream_new(int64_t key_id, const cJSON *id, const cJSON *params,
				  bool modern);
void mcp_stream_free(struct mcp_stream *s);
/* The stream's tag, for http_request.stream_tag (owned by s). */
const char *mcp_stream_tag(const struct mcp_stream *s);
/* http_request.event_transform's work: appends the SSE message for event
 * (name, JSON data) to out: a notifications/progress, or for done the
 * tools/call reply (data is the endpoint's answer); true after done. */
bool mcp_stream_event(struct mcp_stream *s, const cJSON *id, const char *event, const char *data,
		      struct strbuf *out);
/* The tag that notifications/cancelled with params names (for key_id) into
 * buf. Returns false when params has no requestId of JSON-RPC's kinds. */
bool mcp_stream_cancel_tag(int64_t key_id, const cJSON *params, char *buf, size_t len);
