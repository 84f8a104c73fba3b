/* e2b_code: the code interpreter's API (E2b-Sandbox-Port: 49999) over a session's contexts.
 *
 * POST /execute {code, context_id?, language?, env_vars?} runs a cell in the
 * sandbox's session (the default context, or context_id) and answers E2B's
 * NDJSON lines: number_of_executions, stdout, stderr, result (text: the
 * last expression's repr, one pair of quotes stripped), error (name, value,
 * traceback), end_of_execution (../shared/E2B-PROTOCOL.md §4.1). The lines
 * come at the cell's end, not as it prints. A sandbox that is not running is
 * a 502, as E2B's edge answers; an unknown context a 404.
 * /contexts (create, list, remove, restart) are the session's context calls;
 * a language is named by its e2b_names (in its languages ini file), a cwd is
 * /home/user (the session folder) or under it.
 */
#pragma once

struct api;
struct http_request;

/* Handles a request routed here by its E2b-Sandbox-Port header; sandbox is
 * its E2b-Sandbox-Id. */
void e2b_code_handle(struct http_request *r, struct api *a, const char *sandbox);
