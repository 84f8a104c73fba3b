/* router: the HTTP API's routing and admission (see router.h). */
#include "judge/api/router.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "judge/api/dash.h"
#include "judge/api/docs.h"
#include "judge/api/e2b_access.h"
#include "judge/api/e2b_code.h"
#include "judge/api/e2b_connect.h"
#include "judge/api/e2b_control.h"
#include "judge/api/e2b_envd.h"
#include "judge/api/e2b_images.h"
#include "judge/api/evaluation.h"
#include "judge/api/events.h"
#include "judge/api/api.h"
#include "judge/api/http.h"
#include "judge/api/info.h"
#include "judge/api/judge0.h"
#include "judge/api/mcp.h"
#include "judge/api/metrics.h"
#include "judge/api/piston.h"
#include "judge/api/problems.h"
#include "judge/api/render.h"
#include "judge/api/route.h"
#include "judge/api/sessions.h"
#include "judge/api/snapshots.h"
#include "judge/api/sse.h"
#include "judge/api/submit.h"
#include "judge/service/auth.h"
#include "judge/service/callback.h"
#include "judge/service/queue.h"
#include "judge/service/session/sesshub.h"
#include "judge/service/waiter.h"
#include "judge/store/db.h"

/* ---- MCP tools: each runs its endpoint's handler ---- */

/* A tool that runs code: waits for the verdict like an execute, or streams
 * the run's live output (mcp_stream.h). */
static void run_tool(struct http_request *r, struct api *a, enum request_kind kind,
		     const struct mcp_call *call)
{
	if (call->stream)
		submit_stream(r, a, kind, call->body);
	else
		submit_enqueue(r, a, kind, true, call->body);
}

static void mcp_dispatch(struct http_request *r, const struct mcp_call *call, void *arg)
{
	struct api *a = arg;
	if (call->cancel_tag) {
		sse_cancel(a->sse, call->cancel_tag);
		return;
	}
	switch (call->tool) {
	case MCP_EXECUTE:
		return run_tool(r, a, REQ_EXECUTE, call);
	case MCP_EXECUTE_EXPECTED:
		return run_tool(r, a, REQ_EXECUTE_EXPECTED, call);
	case MCP_SOLVE_PROBLEM:
		/* a submission that waits for its verdict like an execute */
		return run_tool(r, a, REQ_SUBMISSION, call);
	case MCP_GET_SUBMISSION:
		return submit_get(r, a, call->id, call->wait);
	case MCP_LIST_LANGUAGES:
		return info_languages(r, a);
	case MCP_LIST_PROBLEMS:
		return problems_list(r, a);
	case MCP_GET_PROBLEM:
		return problems_get(r, a, call->id, NULL);
	case MCP_UPLOAD_PROBLEM:
		return problems_mcp_upload(r, a, call->body);
	case MCP_SESSION_CREATE:
		return sessions_create(r, a, call->body);
	case MCP_SESSION_EXECUTE:
		return sessions_tool(r, a, SCALL_EXECUTE, call->body);
	case MCP_SESSION_INSTALL:
		return sessions_tool(r, a, SCALL_INSTALL, call->body);
	case MCP_SESSION_WRITE_FILE:
		return sessions_tool(r, a, SCALL_FILE_PUT, call->body);
	case MCP_SESSION_READ_FILE:
		return sessions_tool(r, a, SCALL_FILE_GET, call->body);
	case MCP_SESSION_LIST_FILES:
		return sessions_tool(r, a, SCALL_FILE_LIST, call->body);
	case MCP_SESSION_CLOSE:
		return sessions_tool(r, a, SCALL_CLOSE, call->body);
	case MCP_SESSION_HISTORY:
		return sessions_history_tool(r, a, call->body);
	case MCP_SESSION_PAUSE:
		return sessions_tool(r, a, SCALL_PAUSE, call->body);
	case MCP_SESSION_RESUME:
		return sessions_image_tool(r, a, R_SESSION_RESUME, call->body);
	case MCP_SESSION_FORK:
		return sessions_image_tool(r, a, R_SESSION_FORK, call->body);
	case MCP_SESSION_SNAPSHOT:
		return sessions_image_tool(r, a, R_SESSION_SNAPSHOT, call->body);
	case MCP_SNAPSHOT_LIST:
	case MCP_SNAPSHOT_DELETE:
		return snapshots_tool(r, a, call->tool == MCP_SNAPSHOT_DELETE, call->body);
	default:
		http_error(r, 404, "not_found", "no such tool");
	}
}

/* ---- routing ---- */

static bool is_json(struct http_request *r)
{
	static const char json[] = "application/json";
	const char *ct = http_header(r, "Content-Type");
	if (!ct)
		return false;
	size_t n = strcspn(ct, "; \t");
	return n == sizeof json - 1 && !strncasecmp(ct, json, n);
}

/* The API key and the key's rate and in-flight limits. Returns true when r
 * may go on; else it answered (401, 429, or 503 when the keys cannot be read). */
static bool admit(struct http_request *r, struct api *a, enum route rt)
{
	r->key_id = 0;
	bool by_sandbox = false;
	if (rt == R_E2B_ENVD || rt == R_E2B_CODE) {
		/* E2B's sandbox traffic: the sandbox's own secret, or a signature
		 * made with it, admits it as the key that made the sandbox */
		char sb[40], msg[200];
		int64_t kid = 0;
		snprintf(sb, 37, "%.36s", r->found_arg);
		const char *h = http_header(r, "E2b-Sandbox-Id");
		if (h)
			snprintf(sb, 37, "%.36s", h);
		switch (e2b_access_check(r, a, rt == R_E2B_CODE, sb, &kid, msg, sizeof msg)) {
		case E2B_ACCESS_OK:
			r->key_id = a->auth_on ? kid : 0;
			snprintf(r->found_arg, sizeof r->found_arg, "%s", sb);
			by_sandbox = true;
			break;
		case E2B_ACCESS_DENIED:
			metrics_auth_failure(a->metrics);
			http_error(r, 401, "unauthorized", "%s", msg);
			return false;
		case E2B_ACCESS_GONE:
			/* as an ended sandbox's traffic is answered without secrets */
			if (!strncmp(r->url, "/process.", 9) ||
			    !strncmp(r->url, "/filesystem.", 12))
				e2b_connect_respond_error(r, "unavailable", msg);
			else
				e2b_reply_error(r, 502, msg);
			return false;
		case E2B_ACCESS_ERROR:
			render_db_error(r, "auth", msg);
			return false;
		case E2B_ACCESS_NONE:
			break;
		}
	}
	if (a->auth_on && !by_sandbox) {
		/* Judge0's clients send the key as X-Auth-Token */
		const char *h = http_header(r, "Authorization"),
			   *xt = http_header(r, "X-Auth-Token");
		/* E2B's SDKs: X-API-KEY to the control plane; the sandbox's
		 * traffic carries its access tokens, which are the key
		 * (e2b_control.h) */
		static const char *const e2b[] = {"X-API-KEY", "X-Access-Token",
						  "E2B-Traffic-Access-Token"};
		for (size_t i = 0; !xt && i < sizeof e2b / sizeof e2b[0]; i++)
			xt = http_header(r, e2b[i]);
		char bearer[96];
		if (!h && xt) {
			snprintf(bearer, sizeof bearer, "Bearer %.80s", xt);
			h = bearer;
		}
		enum auth_result ar = auth_check(a->auth, h, &r->key_id);
		if (ar != AUTH_OK) {
			metrics_auth_failure(a->metrics);
			if (ar == AUTH_UNAVAILABLE) {
				render_db_error(r, "auth", "cannot read the api keys");
				return false;
			}
			const char *hdr[] = {"WWW-Authenticate", "Bearer", NULL};
			http_error_h(r, 401, hdr, "unauthorized",
				     ar == AUTH_MISSING ? "an API key is required "
							  "(Authorization: Bearer KEY)"
							: "the API key is not valid");
			return false;
		}
	}
	int retry = 1;
	if (auth_admit(a->auth, r->key_id, &retry) < 0) {
		metrics_rate_limited(a->metrics);
		char ra[16];
		snprintf(ra, sizeof ra, "%d", retry);
		const char *hdr[] = {"Retry-After", ra, NULL};
		http_error_h(r, 429, hdr, "rate_limited",
			     "too many requests for this API key; retry in %d s", retry);
		return false;
	}
	r->admitted = true;
	return true;
}

/* The route of r: E2B's sandbox traffic by its E2b-Sandbox-Id and
 * E2b-Sandbox-Port headers (*arg: the sandbox id), else by path (route_of). */
static enum route route_request(struct http_request *r, const char **arg)
{
	const char *sb = http_header(r, "E2b-Sandbox-Id");
	if (sb) {
		const char *port = http_header(r, "E2b-Sandbox-Port");
		*arg = sb;
		return port && !strcmp(port, "49999") ? R_E2B_CODE : R_E2B_ENVD;
	}
	/* a signed download or upload URL comes without the sandbox's headers
	 * (a browser, curl): admission finds its sandbox by the signature */
	if (!strcmp(r->url, "/files") && http_query(r, "signature")) {
		*arg = r->found_arg;
		return R_E2B_ENVD;
	}
	return route_of(r->url, arg);
}

/* What the headers alone decide: route, method, API key, admission and
 * content type. It runs before the body is read, so the body of a request
 * refused here is never buffered (a client without a key cannot make the
 * server hold max_body bytes per connection). */
void router_headers(struct http_request *r, void *arg)
{
	struct api *a = arg;
	const char *id = NULL;
	enum route rt = route_request(r, &id);
	r->route = rt;
	if (rt == R_OTHER) {
		http_error(r, 404, "not_found", "no such endpoint: %.100s", r->url);
		return;
	}
	if (!route_method_ok(rt, r->method)) {
		const char *allow = route_allow(rt);
		const char *hdr[] = {"Allow", allow, NULL};
		http_error_h(r, 405, hdr, "method_not_allowed",
			     "%s is not allowed here (allowed: %s)", r->method, allow);
		return;
	}
	if (rt == R_HEALTH || rt == R_METRICS || rt == R_OPENAPI || rt == R_DOCS || rt == R_WEB)
		return;
	bool admin_route = rt == R_ADMIN_STATS || rt == R_ADMIN_KEYS || rt == R_ADMIN_KEY;
	/* MCP's transport asks servers to check Origin against DNS rebinding: a
	 * web page must not drive a keyless (loopback) judge through a browser.
	 * With keys on, a page without the key gets 401 anyway.
	 * The Piston paths too: their POST takes any Content-Type, so a page's
	 * plain form post would reach them without a CORS preflight.
	 * And the dashboard's: a page must not make or revoke keys. */
	bool origin_checked =
	    rt == R_MCP || rt == R_PISTON_RUNTIMES || rt == R_PISTON_EXECUTE || admin_route;
	if (origin_checked && !a->auth_on && !route_local_origin(http_header(r, "Origin"))) {
		http_error(r, 403, "forbidden_origin",
			   "requests from a web page of another origin are refused");
		return;
	}
	/* envd's refusals (a bad token, a body over the cap) in envd's shape */
	if (rt == R_E2B_ENVD)
		r->transform = e2b_envd_refusal;
	if (!admit(r, a, rt))
		return;
	if (admin_route && !dash_admit(r, a))
		return;
	/* uploads are zips, PATCH is JSON (problems.h) */
	if (rt == R_PROBLEMS || rt == R_PROBLEM) {
		problems_headers(r, a, rt);
		return;
	}
	/* Piston's clients send JSON without saying so (text/plain); a context's
	 * restart takes no body */
	if ((!strcmp(r->method, "POST") || !strcmp(r->method, "PATCH")) && !is_json(r) &&
	    rt != R_PISTON_EXECUTE && rt != R_SESSION_CONTEXT_RESTART &&
	    !sessions_body_optional(rt) && rt != R_E2B_ENVD && rt != R_E2B_CODE && rt != R_E2B_API)
		http_error(r, 415, "unsupported_media_type",
			   "the body must be JSON (Content-Type: application/json)");
}

/* The body is in and router_headers let the request through. */
void router_request(struct http_request *r, void *arg)
{
	struct api *a = arg;
	const char *id = NULL;
	enum route rt = route_request(r, &id);
	/* the submission and session endpoints park requests */
	if (r->ctx) {
		if (rt == R_EVAL)
			return evaluation_resume(r);
		return sessions_owns(r) ? sessions_resume(r) : submit_resume(r);
	}
	switch (rt) {
	case R_HEALTH:
		return info_health(r, a);
	case R_METRICS:
		return info_metrics(r, a);
	case R_OPENAPI:
	case R_DOCS:
	case R_WEB:
		return docs_serve(r);
	case R_ADMIN_STATS:
		return dash_stats(r, a);
	case R_ADMIN_KEYS:
		return dash_keys(r, a);
	case R_ADMIN_KEY:
		return dash_key(r, a, id);
	case R_EXECUTE:
		return submit_post(r, a, REQ_EXECUTE, true);
	case R_EXECUTE_EXPECTED:
		return submit_post(r, a, REQ_EXECUTE_EXPECTED, true);
	case R_SUBMIT:
		return submit_post(r, a, REQ_SUBMISSION, false);
	case R_BATCH:
		return submit_batch(r, a);
	case R_GET_SUB:
		/* Accept: text/event-stream: its live output (MCP's get_submission,
		 * whose clients accept both, does not come here) */
		if (sse_wanted(r))
			return events_get(r, a, id);
		return submit_get(r, a, id, http_query(r, "wait"));
	case R_SUB_EVENTS:
		return events_get(r, a, id);
	case R_MCP:
		return mcp_handle(r, a->cfg, &a->langs, mcp_dispatch, a);
	case R_LANGUAGES:
		return info_languages(r, a);
	case R_PROBLEMS:
	case R_PROBLEM:
		return problems_handle(r, a, rt, id);
	case R_PISTON_RUNTIMES:
		return piston_runtimes(r, a);
	case R_PISTON_EXECUTE:
		return piston_execute(r, a);
	case R_J0_SUBMIT:
		return judge0_submit(r, a);
	case R_J0_BATCH:
		return judge0_batch(r, a);
	case R_J0_GET:
		return judge0_get(r, a, id);
	case R_J0_LANGUAGES:
		return judge0_languages(r, a, false);
	case R_J0_LANGUAGE:
		return judge0_language(r, a, id);
	case R_J0_STATUSES:
		return judge0_statuses(r, a);
	case R_J0_ABOUT:
		return judge0_about(r, a);
	case R_J0_CONFIG:
		return judge0_config_info(r, a);
	case R_EVALS:
		return evaluation_create(r, a);
	case R_EVAL:
		/* Accept: text/event-stream: its progress, as /events */
		if (sse_wanted(r))
			return evaluation_events(r, a, id);
		return evaluation_get(r, a, id, http_query(r, "wait"), http_query(r, "format"));
	case R_EVAL_EVENTS:
		return evaluation_events(r, a, id);
	case R_SESSIONS:
	case R_SESSION:
	case R_SESSION_EXECUTE:
	case R_SESSION_INSTALL:
	case R_SESSION_HISTORY:
	case R_SESSION_FILES:
	case R_SESSION_FILE:
	case R_SESSION_CONTEXTS:
	case R_SESSION_CONTEXT:
	case R_SESSION_CONTEXT_RESTART:
	case R_SESSION_PROCESSES:
	case R_SESSION_PROCESS:
	case R_SESSION_PROCESS_STDIN:
	case R_SESSION_PROCESS_SIGNAL:
	case R_SESSION_PROCESS_EVENTS:
	case R_SESSION_PAUSE:
	case R_SESSION_INTERRUPT:
	case R_SESSION_RESUME:
	case R_SESSION_SNAPSHOT:
	case R_SESSION_FORK:
		return sessions_handle(r, a, rt, id);
	case R_SNAPSHOTS:
	case R_SNAPSHOT:
		return snapshots_handle(r, a, rt, id);
	case R_E2B_API:
		return e2b_control_handle(r, a, id);
	case R_E2B_ENVD:
		return e2b_envd_handle(r, a, id);
	case R_E2B_CODE:
		return e2b_code_handle(r, a, id);
	case R_E2B_IMAGES:
		return e2b_images_handle(r, a, id);
	default:
		http_error(r, 404, "not_found", "no such endpoint: %.100s", r->url);
	}
}

void router_done(struct http_request *r, void *arg)
{
	struct api *a = arg;
	if (r->admitted)
		auth_done(a->auth, r->key_id);
	problems_done(r);
	double took = (double)(clock_mono_us() - r->start_us) / 1e6;
	metrics_request(a->metrics, r->route, r->status, took);
	log_debug("api: %s %s %d %.1f ms", r->method, r->url, r->status, took * 1000);
}
