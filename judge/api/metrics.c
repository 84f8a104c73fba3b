/* metrics: counters and histograms under one lock, rendered as Prometheus text. */
#include "judge/api/metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

static const double buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
#define NBUCKETS (sizeof buckets / sizeof buckets[0])

struct histogram {
	long counts[NBUCKETS + 1]; /* last = +Inf */
	double sum;
	long n;
};

/* status classes counted per route */
/* 499: the client went away before an answer (nginx's code), not a 5xx */
enum { SC_2XX, SC_4XX, SC_429, SC_499, SC_5XX, SC_COUNT };
static const char *const sc_names[SC_COUNT] = {"2xx", "4xx", "429", "499", "5xx"};

struct metrics {
	pthread_mutex_t lock;
	const char *const *names;
	int nroutes;
	long (*requests)[SC_COUNT]; /* [nroutes] */
	struct histogram *http;	    /* [nroutes] */
	struct histogram exec_latency;
	long auth_failures, rate_limited;
	long cells[METRICS_NCELL];
	struct histogram cell_latency;
};

static const char *const cell_names[METRICS_NCELL] = METRICS_CELL_STATUSES;

struct metrics *metrics_new(const char *const *names, int nroutes)
{
	struct metrics *m = xcalloc(1, sizeof *m);
	m->names = names;
	m->nroutes = nroutes;
	m->requests = xcalloc((size_t)nroutes, sizeof *m->requests);
	m->http = xcalloc((size_t)nroutes, sizeof *m->http);
	pthread_mutex_init(&m->lock, NULL);
	return m;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->lock);
	free(m->requests);
	free(m->http);
	free(m);
}

static void hist_add(struct histogram *h, double v)
{
	size_t i = 0;
	while (i < NBUCKETS && v > buckets[i])
		i++;
	h->counts[i]++;
	h->sum += v;
	h->n++;
}

static void hist_print(struct strbuf *sb, const char *name, const char *labels,
		       const struct histogram *h)
{
	long cum = 0;
	for (size_t i = 0; i < NBUCKETS; i++) {
		cum += h->counts[i];
		strbuf_addf(sb, "%s_bucket{%s%sle=\"%g\"} %ld\n", name, labels, *labels ? "," : "",
			    buckets[i], cum);
	}
	cum += h->counts[NBUCKETS];
	strbuf_addf(sb, "%s_bucket{%s%sle=\"+Inf\"} %ld\n", name, labels, *labels ? "," : "", cum);
	strbuf_addf(sb, "%s_sum{%s} %.6f\n%s_count{%s} %ld\n", name, labels, h->sum, name, labels,
		    h->n);
}

void metrics_request(struct metrics *m, int route, int status, double seconds)
{
	int rt = route >= 0 && route < m->nroutes ? route : m->nroutes - 1;
	int sc = status == 429		    ? SC_429
		 : status == 499	    ? SC_499
		 : status >= 500 || !status ? SC_5XX
		 : status >= 400	    ? SC_4XX
					    : SC_2XX;
	pthread_mutex_lock(&m->lock);
	m->requests[rt][sc]++;
	hist_add(&m->http[rt], seconds);
	pthread_mutex_unlock(&m->lock);
}

void metrics_exec_latency(struct metrics *m, double seconds)
{
	pthread_mutex_lock(&m->lock);
	hist_add(&m->exec_latency, seconds);
	pthread_mutex_unlock(&m->lock);
}

void metrics_auth_failure(struct metrics *m)
{
	pthread_mutex_lock(&m->lock);
	m->auth_failures++;
	pthread_mutex_unlock(&m->lock);
}

void metrics_rate_limited(struct metrics *m)
{
	pthread_mutex_lock(&m->lock);
	m->rate_limited++;
	pthread_mutex_unlock(&m->lock);
}

void metrics_session_cell(struct metrics *m, const char *status, double seconds)
{
	int i = METRICS_NCELL - 1;
	for (int k = 0; k < METRICS_NCELL; k++)
		if (status && !strcmp(status, cell_names[k]))
			i = k;
	pthread_mutex_lock(&m->lock);
	m->cells[i]++;
	hist_add(&m->cell_latency, seconds);
	pthread_mutex_unlock(&m->lock);
}

static void render_sessions(const struct metrics_gauges *g, struct strbuf *sb)
{
	strbuf_addstr(sb, "# HELP judge_sessions Sessions by status (starting and ready are "
			  "open).\n# TYPE judge_sessions gauge\n");
	for (int s = 0; s < SESS_STATUS_COUNT; s++)
		strbuf_addf(sb, "judge_sessions{status=\"%s\"} %ld\n",
			    sess_status_name((enum sess_status)s), g->sessions[s]);
	strbuf_addf(sb,
		    "# HELP judge_sessions_open Sessions starting or ready.\n"
		    "# TYPE judge_sessions_open gauge\njudge_sessions_open %ld\n",
		    g->sessions[SESS_STARTING] + g->sessions[SESS_READY]);
	const struct sess_totals *t = &g->sess;
	strbuf_addf(
	    sb,
	    "# HELP judge_session_cpu_seconds_total CPU time of every session's processes, "
	    "background ones included, as their workers last read it.\n"
	    "# TYPE judge_session_cpu_seconds_total counter\n"
	    "judge_session_cpu_seconds_total %.3f\n"
	    "# HELP judge_session_throttled_seconds_total Time sessions were held back by their "
	    "CPU quota.\n# TYPE judge_session_throttled_seconds_total counter\n"
	    "judge_session_throttled_seconds_total %.3f\n"
	    "# HELP judge_session_pids_refused_total Forks refused by sessions' process limits.\n"
	    "# TYPE judge_session_pids_refused_total counter\n"
	    "judge_session_pids_refused_total %ld\n"
	    "# HELP judge_session_memory_bytes Memory the open sessions' sandboxes hold.\n"
	    "# TYPE judge_session_memory_bytes gauge\njudge_session_memory_bytes %.0f\n"
	    "# HELP judge_session_processes Processes and threads of the open sessions.\n"
	    "# TYPE judge_session_processes gauge\njudge_session_processes %ld\n"
	    "# HELP judge_sessions_ended_total Sessions that ended, by why.\n"
	    "# TYPE judge_sessions_ended_total counter\n",
	    t->cpu_s, t->throttled_s, t->pids_refused, (double)t->memory_kb * 1024, t->processes);
	for (int e = 0; e < SESS_END_COUNT; e++)
		strbuf_addf(sb, "judge_sessions_ended_total{reason=\"%s\"} %ld\n",
			    sess_end_name((enum sess_end)e), t->ended[e]);
	strbuf_addf(sb,
		    "# HELP judge_egress_total Sessions' attempts to reach the network through "
		    "their egress proxy, by decision.\n# TYPE judge_egress_total counter\n"
		    "judge_egress_total{decision=\"allowed\"} %ld\n"
		    "judge_egress_total{decision=\"refused\"} %ld\n",
		    t->egress_allowed, t->egress_refused);
}

/* A Prometheus label value: backslash, double quote and newline escaped. */
static void add_label(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			strbuf_addch(sb, '\\');
		if (*s == '\n')
			strbuf_addstr(sb, "\\n");
		else
			strbuf_addch(sb, *s);
	}
}

/* The queue of each API key: the fair queue's result (judge/service/queue.h). */
static void render_keys(const struct metrics_gauges *g, struct strbuf *sb)
{
	static const char *const help[] = {
	    "# HELP judge_queue_wait_seconds Time from queued to claimed, per API key, of the "
	    "submissions claimed in the last " ADMIN_WAIT_WINDOW_TEXT " (finished since, or "
	    "running).\n# TYPE judge_queue_wait_seconds summary\n",
	    "# HELP judge_queue_waiting Submissions queued now, per API key.\n"
	    "# TYPE judge_queue_waiting gauge\n",
	    "# HELP judge_queue_oldest_seconds How long the oldest queued submission of each API "
	    "key has waited.\n# TYPE judge_queue_oldest_seconds gauge\n",
	    "# HELP judge_queue_running Submissions being graded now, per API key.\n"
	    "# TYPE judge_queue_running gauge\n",
	};
	struct strbuf lab = STRBUF_INIT;
	for (int m = 0; m < 4; m++) {
		strbuf_addstr(sb, help[m]);
		for (size_t i = 0; i < g->nkeys; i++) {
			const struct admin_key_wait *k = &g->keys[i];
			strbuf_reset(&lab);
			strbuf_addf(&lab, "key=\"%lld\",name=\"", (long long)k->key_id);
			add_label(&lab, k->name);
			strbuf_addch(&lab, '"');
			if (m == 0)
				strbuf_addf(sb,
					    "judge_queue_wait_seconds{%s,quantile=\"0.5\"} %.3f\n"
					    "judge_queue_wait_seconds{%s,quantile=\"0.99\"} %.3f\n"
					    "judge_queue_wait_seconds_sum{%s} %.3f\n"
					    "judge_queue_wait_seconds_count{%s} %ld\n",
					    lab.buf, k->wait_p50_s, lab.buf, k->wait_p99_s, lab.buf,
					    k->wait_sum_s, lab.buf, k->claimed);
			else if (m == 1)
				strbuf_addf(sb, "judge_queue_waiting{%s} %ld\n", lab.buf,
					    k->queued);
			else if (m == 2)
				strbuf_addf(sb, "judge_queue_oldest_seconds{%s} %.3f\n", lab.buf,
					    k->oldest_s);
			else
				strbuf_addf(sb, "judge_queue_running{%s} %ld\n", lab.buf,
					    k->running);
		}
	}
	strbuf_release(&lab);
}

static void render_db(const struct metrics_gauges *g, struct strbuf *sb)
{
	strbuf_addf(sb,
		    "# HELP judge_up 1 when the database answers\n# TYPE judge_up gauge\n"
		    "judge_up %d\n",
		    g->db_up);
	if (!g->db_up)
		return;
	strbuf_addstr(sb, "# HELP judge_submissions Submissions by status.\n"
			  "# TYPE judge_submissions gauge\n");
	for (int s = 0; s < SUB_STATUS_COUNT; s++)
		strbuf_addf(sb, "judge_submissions{status=\"%s\"} %ld\n",
			    status_name((enum sub_status)s), g->counts[s]);
	strbuf_addf(sb,
		    "# HELP judge_queue_depth Submissions waiting for a worker.\n"
		    "# TYPE judge_queue_depth gauge\njudge_queue_depth %ld\n"
		    "# HELP judge_running Submissions being graded.\n"
		    "# TYPE judge_running gauge\njudge_running %ld\n"
		    "# HELP judge_sandbox_failures Submissions that ended internal_error "
		    "(a fault of the judge or its sandbox, never of the program).\n"
		    "# TYPE judge_sandbox_failures gauge\njudge_sandbox_failures %ld\n",
		    g->counts[SUB_QUEUED], g->counts[SUB_RUNNING], g->counts[SUB_INTERNAL_ERROR]);
	render_keys(g, sb);
	render_sessions(g, sb);
}

/* The counters; called with m->lock held. */
static void render_counters(struct metrics *m, struct strbuf *sb)
{
	strbuf_addstr(sb, "# HELP judge_http_requests_total HTTP requests by route and status "
			  "class (499: the client went away before the answer).\n# TYPE "
			  "judge_http_requests_total counter\n");
	for (int i = 0; i < m->nroutes; i++)
		for (int k = 0; k < SC_COUNT; k++)
			strbuf_addf(sb, "judge_http_requests_total{route=\"%s\",code=\"%s\"} %ld\n",
				    m->names[i], sc_names[k], m->requests[i][k]);
	strbuf_addstr(sb, "# HELP judge_http_request_duration_seconds Time to answer, by "
			  "route.\n# TYPE judge_http_request_duration_seconds histogram\n");
	for (int i = 0; i < m->nroutes; i++) {
		char labels[64];
		snprintf(labels, sizeof labels, "route=\"%s\"", m->names[i]);
		hist_print(sb, "judge_http_request_duration_seconds", labels, &m->http[i]);
	}
	strbuf_addstr(sb, "# HELP judge_execute_latency_seconds Enqueue to final result of "
			  "synchronous executes.\n# TYPE judge_execute_latency_seconds "
			  "histogram\n");
	hist_print(sb, "judge_execute_latency_seconds", "", &m->exec_latency);
	strbuf_addf(sb,
		    "# HELP judge_auth_failures_total Requests refused 401.\n"
		    "# TYPE judge_auth_failures_total counter\njudge_auth_failures_total %ld\n"
		    "# HELP judge_rate_limited_total Requests refused 429.\n"
		    "# TYPE judge_rate_limited_total counter\njudge_rate_limited_total %ld\n",
		    m->auth_failures, m->rate_limited);
	strbuf_addstr(sb, "# HELP judge_session_cells_total Session cells run, by status.\n"
			  "# TYPE judge_session_cells_total counter\n");
	for (int i = 0; i < METRICS_NCELL; i++)
		strbuf_addf(sb, "judge_session_cells_total{status=\"%s\"} %ld\n", cell_names[i],
			    m->cells[i]);
	strbuf_addstr(sb, "# HELP judge_session_cell_seconds A session cell end to end (HTTP "
			  "in to answer).\n# TYPE judge_session_cell_seconds histogram\n");
	hist_print(sb, "judge_session_cell_seconds", "", &m->cell_latency);
}

void metrics_render(struct metrics *m, const struct metrics_gauges *g, struct strbuf *out)
{
	render_db(g, out);
	pthread_mutex_lock(&m->lock);
	render_counters(m, out);
	pthread_mutex_unlock(&m->lock);
	strbuf_addf(
	    out,
	    "# HELP judge_http_in_flight Requests being served or waiting.\n"
	    "# TYPE judge_http_in_flight gauge\njudge_http_in_flight %ld\n"
	    "# HELP judge_http_deadline_closes_total Connections closed because a request's "
	    "headers or body came too late.\n"
	    "# TYPE judge_http_deadline_closes_total counter\n"
	    "judge_http_deadline_closes_total %ld\n"
	    "# HELP judge_callbacks_delivered_total Callbacks answered 2xx.\n"
	    "# TYPE judge_callbacks_delivered_total counter\n"
	    "judge_callbacks_delivered_total %ld\n"
	    "# HELP judge_callbacks_failed_total Callback attempts that failed.\n"
	    "# TYPE judge_callbacks_failed_total counter\njudge_callbacks_failed_total %ld\n",
	    g->in_flight, g->deadline_closes, g->callbacks_delivered, g->callbacks_failed);
}
