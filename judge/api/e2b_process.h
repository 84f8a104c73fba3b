/* e2b_process: envd's process.Process service (Connect-RPC in JSON, what the
 * SDK's `commands` call) over a session's processes (docs/e2b.md).
 *
 * Start and Connect are server streams: the process's output relay
 * (sessions.h, sse.h) framed as Connect envelopes, `start` first, `data` as
 * printed, `end` and the end-of-stream envelope last; errors, even before
 * the start, go in that last envelope. List, SendInput, CloseStdin and
 * SendSignal are unary, onto the session's process calls. PTYs (Update, a
 * Start with `pty`) and StreamInput answer `unimplemented`.
 */
#pragma once

struct api;
struct http_request;

/* Handles POST /process.Process/<method> of sandbox (a session id). */
void e2b_process_handle(struct http_request *r, struct api *a, const char *sandbox,
			const char *method);
