/* test_metrics: the Prometheus text of /metrics from plain counters and gauges. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/strbuf.h"
#include "judge/api/metrics.h"
#include "judge/api/route.h"

static const char *const names[] = {"alpha", "beta", "other"};

/* The value of the sample line that starts with "name{labels} " (or "name "). */
static const char *sample(const char *text, const char *line_start)
{
	size_t n = strlen(line_start);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, line_start, n) && p[n] == ' ')
			return p + n + 1;
	return NULL;
}

static long value(const char *text, const char *line_start)
{
	const char *v = sample(text, line_start);
	cr_assert(v, "no sample %s in:\n%s", line_start, text);
	return strtol(v, NULL, 10);
}

Test(metrics, counters_by_route_and_status_class)
{
	struct metrics *m = metrics_new(names, 3);
	cr_assert(m);
	metrics_request(m, 0, 200, 0.001);
	metrics_request(m, 0, 201, 0.001);
	metrics_request(m, 0, 404, 0.001);
	metrics_request(m, 1, 429, 0.001);
	metrics_request(m, 1, 503, 0.001);
	metrics_request(m, 1, 0, 0.001);    /* nothing was sent */
	metrics_request(m, 1, 499, 0.001);  /* the client went away first: not 5xx */
	metrics_request(m, 99, 200, 0.001); /* out of range: the last route */
	metrics_auth_failure(m);
	metrics_auth_failure(m);
	metrics_rate_limited(m);
	struct metrics_gauges g = {
	    .db_up = false, .in_flight = 3, .callbacks_delivered = 4, .callbacks_failed = 5};
	struct strbuf sb = STRBUF_INIT;
	metrics_render(m, &g, &sb);
	const char *t = sb.buf;
	cr_assert_eq(value(t, "judge_up"), 0);
	cr_assert_null(strstr(t, "judge_submissions{"), "no counts without the database");
	cr_assert_eq(value(t, "judge_http_requests_total{route=\"alpha\",code=\"2xx\"}"), 2);
	cr_assert_eq(value(t, "judge_http_requests_total{route=\"alpha\",code=\"4xx\"}"), 1);
	cr_assert_eq(value(t, "judge_http_requests_total{route=\"beta\",code=\"429\"}"), 1);
	cr_assert_eq(value(t, "judge_http_requests_total{route=\"beta\",code=\"4xx\"}"), 0);
	cr_assert_eq(value(t, "judge_http_requests_total{route=\"beta\",code=\"5xx\"}"), 2);
	cr_assert_eq(value(t, "judge_http_requests_total{route=\"beta\",code=\"499\"}"), 1);
	cr_assert_eq(value(t, "judge_http_requests_total{route=\"other\",code=\"2xx\"}"), 1);
	cr_assert_eq(value(t, "judge_auth_failures_total"), 2);
	cr_assert_eq(value(t, "judge_rate_limited_total"), 1);
	cr_assert_eq(value(t, "judge_http_in_flight"), 3);
	cr_assert_eq(value(t, "judge_callbacks_delivered_total"), 4);
	cr_assert_eq(value(t, "judge_callbacks_failed_total"), 5);
	cr_assert(strstr(t, "# TYPE judge_http_requests_total counter\n"));
	cr_assert(strstr(t, "# TYPE judge_http_request_duration_seconds histogram\n"));
	strbuf_release(&sb);
	metrics_free(m);
}

Test(metrics, histograms_are_cumulative)
{
	struct metrics *m = metrics_new(names, 3);
	metrics_request(m, 1, 200, 0.004); /* le 0.005 */
	metrics_request(m, 1, 200, 0.005); /* le 0.005: the bound is inclusive */
	metrics_request(m, 1, 200, 0.2);   /* le 0.25 */
	metrics_request(m, 1, 200, 100);   /* only +Inf */
	metrics_exec_latency(m, 1.5);	   /* le 2.5 */
	struct metrics_gauges g = {.db_up = true};
	g.counts[SUB_QUEUED] = 7;
	g.counts[SUB_RUNNING] = 2;
	g.counts[SUB_INTERNAL_ERROR] = 1;
	struct strbuf sb = STRBUF_INIT;
	metrics_render(m, &g, &sb);
	const char *t = sb.buf;
	const char *h = "judge_http_request_duration_seconds_bucket{route=\"beta\",le=";
	char k[160];
	snprintf(k, sizeof k, "%s\"0.005\"}", h);
	cr_assert_eq(value(t, k), 2);
	snprintf(k, sizeof k, "%s\"0.1\"}", h);
	cr_assert_eq(value(t, k), 2);
	snprintf(k, sizeof k, "%s\"0.25\"}", h);
	cr_assert_eq(value(t, k), 3);
	snprintf(k, sizeof k, "%s\"60\"}", h);
	cr_assert_eq(value(t, k), 3);
	snprintf(k, sizeof k, "%s\"+Inf\"}", h);
	cr_assert_eq(value(t, k), 4);
	cr_assert_eq(value(t, "judge_http_request_duration_seconds_count{route=\"beta\"}"), 4);
	const char *sum = sample(t, "judge_http_request_duration_seconds_sum{route=\"beta\"}");
	cr_assert(sum && !strncmp(sum, "100.209000\n", 11), "sum: %.20s", sum ? sum : "(none)");
	cr_assert_eq(value(t, "judge_http_request_duration_seconds_count{route=\"alpha\"}"), 0);
	cr_assert_eq(value(t, "judge_execute_latency_seconds_bucket{le=\"1\"}"), 0);
	cr_assert_eq(value(t, "judge_execute_latency_seconds_bucket{le=\"2.5\"}"), 1);
	cr_assert_eq(value(t, "judge_execute_latency_seconds_count{}"), 1);
	cr_assert_eq(value(t, "judge_up"), 1);
	cr_assert_eq(value(t, "judge_submissions{status=\"queued\"}"), 7);
	cr_assert_eq(value(t, "judge_queue_depth"), 7);
	cr_assert_eq(value(t, "judge_running"), 2);
	cr_assert_eq(value(t, "judge_sandbox_failures"), 1);
	strbuf_release(&sb);
	metrics_free(m);
}

/* The labels /metrics has always used: dashboards depend on them. */
Test(metrics, route_labels)
{
	const char *const *n = route_names();
	static const char *const want[R_COUNT] = {"execute",
						  "execute_with_expected",
						  "submissions",
						  "submissions_batch",
						  "submission",
						  "submission_events",
						  "languages",
						  "problems",
						  "problem",
						  "health",
						  "metrics",
						  "mcp",
						  "piston_runtimes",
						  "piston_execute",
						  "judge0_submit",
						  "judge0_batch",
						  "judge0_submission",
						  "judge0_languages",
						  "judge0_language",
						  "judge0_statuses",
						  "judge0_about",
						  "judge0_config_info",
						  "openapi",
						  "docs",
						  "evaluations",
						  "evaluation",
						  "evaluation_events",
						  "sessions",
						  "session",
						  "session_execute",
						  "session_install",
						  "session_history",
						  "session_files",
						  "session_file",
						  "session_contexts",
						  "session_context",
						  "session_context_restart",
						  "session_processes",
						  "session_process",
						  "session_process_stdin",
						  "session_process_signal",
						  "session_process_events",
						  "session_pause",
						  "session_interrupt",
						  "session_resume",
						  "session_snapshot",
						  "session_fork",
						  "snapshots",
						  "snapshot",
						  "web",
						  "admin_stats",
						  "admin_keys",
						  "admin_key",
						  "e2b_api",
						  "e2b_envd",
						  "e2b_code",
						  "e2b_images",
						  "other"};
	for (int i = 0; i < R_COUNT; i++)
		cr_assert_str_eq(n[i], want[i]);
	const char *arg;
	cr_assert_eq(route_of("/v1/submissions/42", &arg), R_GET_SUB);
	cr_assert_str_eq(arg, "42");
	cr_assert_eq(route_of("/v1/submissions/42/x", &arg), R_OTHER);
	cr_assert_eq(route_of("/v1/submissions/", &arg), R_OTHER);
	cr_assert_eq(route_of("/v1/submissions/batch", &arg), R_BATCH);
	cr_assert_eq(route_of("/v1/problems/hello", &arg), R_PROBLEM);
	cr_assert_str_eq(arg, "hello");
	/* sessions: arg points at the session id and what follows it */
	static const char sid[] = "0d9d6129-0b90-4c99-b0fd-dec24de0c3c1";
	cr_assert_eq(route_of("/v1/sessions", &arg), R_SESSIONS);
	cr_assert_eq(route_of("/v1/sessions/0d9d6129-0b90-4c99-b0fd-dec24de0c3c1", &arg),
		     R_SESSION);
	cr_assert_str_eq(arg, sid);
	cr_assert_eq(route_of("/v1/sessions/x/execute", &arg), R_SESSION_EXECUTE);
	cr_assert_eq(route_of("/v1/sessions/x/install", &arg), R_SESSION_INSTALL);
	cr_assert_eq(route_of("/v1/sessions/x/files", &arg), R_SESSION_FILES);
	cr_assert_eq(route_of("/v1/sessions/x/files/a/b.csv", &arg), R_SESSION_FILE);
	cr_assert_str_eq(arg, "x/files/a/b.csv");
	cr_assert_eq(route_of("/v1/sessions/x/other", &arg), R_OTHER);
	cr_assert_eq(route_of("/v1/sessions//execute", &arg), R_OTHER);
	cr_assert_eq(route_of("/v1/snapshots", &arg), R_SNAPSHOTS);
	cr_assert_eq(route_of("/v1/snapshots/x", &arg), R_SNAPSHOT);
	cr_assert_str_eq(arg, "x");
	cr_assert_eq(route_of("/v1/snapshots/x/y", &arg), R_OTHER);
	cr_assert(route_method_ok(R_SNAPSHOT, "DELETE") && route_method_ok(R_SNAPSHOT, "GET"));
	cr_assert_not(route_method_ok(R_SNAPSHOTS, "POST"));
	cr_assert_eq(route_of("/snapshots", &arg), R_E2B_IMAGES);
	cr_assert_str_eq(arg, "/snapshots");
	cr_assert_eq(route_of("/templates/x", &arg), R_E2B_IMAGES);
	cr_assert(route_method_ok(R_SESSION_FILE, "PUT") && route_method_ok(R_SESSION, "DELETE"));
	cr_assert(route_method_ok(R_SESSIONS, "POST") && route_method_ok(R_SESSIONS, "GET"));
	cr_assert_not(route_method_ok(R_SESSION_EXECUTE, "GET"));
	cr_assert_not(route_method_ok(R_SESSION_FILES, "PUT"));
	cr_assert_not(route_method_ok(R_SESSION, "POST"));
	cr_assert(route_method_ok(R_MCP, "POST"));
	cr_assert_not(route_method_ok(R_MCP, "GET"));
	cr_assert(route_method_ok(R_LANGUAGES, "HEAD"));
	/* E2B's control plane: arg is what follows the prefix */
	cr_assert_eq(route_of("/v2/sandboxes", &arg), R_E2B_API);
	cr_assert_str_eq(arg, "");
	cr_assert_eq(route_of("/sandboxes/abc/timeout", &arg), R_E2B_API);
	cr_assert_str_eq(arg, "/abc/timeout");
	cr_assert_eq(route_of("/sandboxesx", &arg), R_OTHER);
	cr_assert(route_method_ok(R_E2B_API, "DELETE") && route_method_ok(R_E2B_CODE, "POST"));
	/* Judge0's paths */
	cr_assert_eq(route_of("/submissions", &arg), R_J0_SUBMIT);
	cr_assert_eq(route_of("/submissions/batch", &arg), R_J0_BATCH);
	cr_assert_eq(route_of("/submissions/0f8fad5b-d9cb-469f-a165-70867728950e", &arg), R_J0_GET);
	cr_assert_str_eq(arg, "0f8fad5b-d9cb-469f-a165-70867728950e");
	cr_assert_eq(route_of("/languages/all", &arg), R_J0_LANGUAGE);
	cr_assert_eq(route_of("/statuses", &arg), R_J0_STATUSES);
	cr_assert(route_method_ok(R_J0_BATCH, "POST") && route_method_ok(R_J0_BATCH, "GET"));
	/* evaluation runs */
	cr_assert_eq(route_of("/v1/evaluations", &arg), R_EVALS);
	cr_assert(route_method_ok(R_EVALS, "POST") && !route_method_ok(R_EVALS, "GET"));
	cr_assert_eq(route_of("/v1/evaluations/7", &arg), R_EVAL);
	cr_assert_str_eq(arg, "7");
	cr_assert_eq(route_of("/v1/evaluations/7/x", &arg), R_OTHER);
	cr_assert_eq(route_of("/v1/evaluations/7/events", &arg), R_EVAL_EVENTS);
	cr_assert_str_eq(arg, "7/events");
	cr_assert(route_method_ok(R_EVAL_EVENTS, "GET") && !route_method_ok(R_EVAL_EVENTS, "POST"));
	cr_assert_not(route_method_ok(R_J0_SUBMIT, "GET"));
	/* the playground, the dashboard and its admin JSON */
	cr_assert_eq(route_of("/", &arg), R_WEB);
	cr_assert_eq(route_of("/dashboard", &arg), R_WEB);
	cr_assert_eq(route_of("/v1/admin/keys/7", &arg), R_ADMIN_KEY);
	cr_assert_str_eq(arg, "7");
	cr_assert(route_method_ok(R_ADMIN_KEY, "DELETE"));
	cr_assert(route_method_ok(R_ADMIN_KEY, "GET") && route_method_ok(R_ADMIN_KEY, "PATCH"));
	cr_assert_not(route_method_ok(R_ADMIN_KEY, "POST"));
	cr_assert(route_method_ok(R_ADMIN_KEYS, "POST") && route_method_ok(R_ADMIN_KEYS, "GET"));
	cr_assert(route_local_origin(NULL));
	cr_assert(route_local_origin("http://localhost:3000"));
	cr_assert_not(route_local_origin("http://localhost.evil.com"));
}

/* The queue of each API key: wait quantiles, sum and count (a summary), queued,
 * oldest and running, labelled by key id and name (escaped: names are the
 * operators' text). */
Test(metrics, queue_wait_per_key)
{
	struct metrics *m = metrics_new(names, 3);
	struct admin_key_wait keys[2] = {{.key_id = 0, .queued = 1, .oldest_s = 0.5, .claimed = 0},
					 {.key_id = 7,
					  .name = "eval \"bulk\"\\x",
					  .weight = 3,
					  .queued = 40,
					  .running = 2,
					  .oldest_s = 12.25,
					  .claimed = 10,
					  .wait_sum_s = 31,
					  .wait_p50_s = 2.5,
					  .wait_p99_s = 9.75,
					  .wait_max_s = 10}};
	struct metrics_gauges g = {.db_up = true, .keys = keys, .nkeys = 2};
	struct strbuf sb = STRBUF_INIT;
	metrics_render(m, &g, &sb);
	const char *t = sb.buf;
	cr_assert(strstr(t, "# TYPE judge_queue_wait_seconds summary\n"), "%s", t);
	const char *lab = "key=\"7\",name=\"eval \\\"bulk\\\"\\\\x\"";
	char line[256];
	snprintf(line, sizeof line, "judge_queue_wait_seconds{%s,quantile=\"0.99\"}", lab);
	cr_assert(!strncmp(sample(t, line), "9.750\n", 6), "%s", t);
	snprintf(line, sizeof line, "judge_queue_wait_seconds{%s,quantile=\"0.5\"}", lab);
	cr_assert(!strncmp(sample(t, line), "2.500\n", 6), "%s", t);
	snprintf(line, sizeof line, "judge_queue_wait_seconds_count{%s}", lab);
	cr_assert_eq(value(t, line), 10);
	snprintf(line, sizeof line, "judge_queue_waiting{%s}", lab);
	cr_assert_eq(value(t, line), 40);
	snprintf(line, sizeof line, "judge_queue_running{%s}", lab);
	cr_assert_eq(value(t, line), 2);
	snprintf(line, sizeof line, "judge_queue_oldest_seconds{%s}", lab);
	cr_assert(!strncmp(sample(t, line), "12.250\n", 7), "%s", t);
	cr_assert_eq(value(t, "judge_queue_waiting{key=\"0\",name=\"\"}"), 1);
	strbuf_release(&sb);
	metrics_free(m);
}

/* What sessions used: counters of CPU, throttling and refused forks, gauges of
 * the open sessions' memory and processes, ended sessions by reason. */
Test(metrics, session_usage)
{
	struct metrics *m = metrics_new(names, 3);
	struct metrics_gauges g = {
	    .db_up = true,
	    .sess = {.cpu_s = 12.5,
		     .throttled_s = 3.25,
		     .pids_refused = 41,
		     .memory_kb = 2048,
		     .processes = 9,
		     .ended = {[SESS_END_CPU_BUDGET] = 2, [SESS_END_IDLE] = 5}}};
	struct strbuf sb = STRBUF_INIT;
	metrics_render(m, &g, &sb);
	const char *t = sb.buf;
	cr_assert(strstr(t, "# TYPE judge_session_cpu_seconds_total counter\n"), "%s", t);
	cr_assert(!strncmp(sample(t, "judge_session_cpu_seconds_total"), "12.500\n", 7), "%s", t);
	cr_assert(!strncmp(sample(t, "judge_session_throttled_seconds_total"), "3.250\n", 6), "%s",
		  t);
	cr_assert_eq(value(t, "judge_session_pids_refused_total"), 41);
	cr_assert_eq(value(t, "judge_session_memory_bytes"), 2048 * 1024);
	cr_assert_eq(value(t, "judge_session_processes"), 9);
	cr_assert_eq(value(t, "judge_sessions_ended_total{reason=\"cpu_budget\"}"), 2);
	cr_assert_eq(value(t, "judge_sessions_ended_total{reason=\"idle\"}"), 5);
	cr_assert_eq(value(t, "judge_sessions_ended_total{reason=\"client\"}"), 0);
	cr_assert_eq(value(t, "judge_sessions_ended_total{reason=\"key_revoked\"}"), 0);
	strbuf_release(&sb);
	metrics_free(m);
}
