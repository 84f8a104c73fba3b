/* sessions_proc: a session's processes: started, listed, waited for, given input
 * or a signal, and their output relayed as it comes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "judge/api/api.h"
#include "judge/api/http.h"
#include "judge/api/render.h"
#include "judge/api/sessions.h"
#include "judge/api/sessions_int.h"
#include "judge/api/sessrender.h"
#include "judge/api/sse.h"
#include "judge/service/outstream.h"
#include "judge/service/session/sessdb.h"
#include "judge/service/session/sessproc.h"
#include "judge/service/session/sessreq.h"
#include "judge/store/db.h"

/* wait_ms of the query: 0 when absent, -1 when not a whole number. */
static long query_wait_ms(struct http_request *r)
{
	const char *w = http_query(r, "wait_ms");
	char *end;
	long v = w ? strtol(w, &end, 10) : 0;
	return w && (!*w || *end) ? -1 : v;
}

void sessions_process_call(struct http_request *r, struct api *a, const char *id, const char *arg,
			   enum scall_kind kind, const cJSON *in)
{
	char pid[24];
	struct request_error e;
	struct sess_call c;
	sessions_segment(arg, "processes", pid, sizeof pid);
	if (sessreq_process(a->cfg, kind, pid, in,
			    kind == SCALL_PROCESS_WAIT ? query_wait_ms(r) : 0, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	sessions_route_call(r, a, id, &c, false);
}

static char *process_done(void *arg, const char *stored)
{
	(void)arg;
	return sessrender_process_done(stored);
}

void sessions_relay_process(struct http_request *r, struct api *a, const char *id, long pid,
			    int64_t after, const struct sse_opts *framing)
{
	char stream[OUTSTREAM_ID_MAX];
	sessproc_stream(id, pid, stream, sizeof stream);
	struct sse_opts o = framing ? *framing : (struct sse_opts){0};
	o.stream = stream;
	o.after = after > 0 ? after : 0;
	o.done_data = process_done;
	if (sse_relay(r, a->sse, &o) < 0 && !r->responded)
		http_error(r, 503, "unavailable", "cannot stream the output of process %ld", pid);
}

/* A process's live output: its session must be this key's; its stream must
 * exist (written at its start), else 404. */
static void process_stream(struct http_request *r, struct api *a, const char *id,
			   const char *pidtext, int64_t after, const struct sse_opts *framing)
{
	char err[256], stream[OUTSTREAM_ID_MAX];
	char *end;
	long pid = strtol(pidtext, &end, 10);
	if (!*pidtext || *end || pid < 1) {
		http_error(r, 404, "not_found", "no process '%.20s'", pidtext);
		return;
	}
	sessproc_stream(id, pid, stream, sizeof stream);
	struct sess_row row = {0};
	struct outstream_chunk *ch = NULL;
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessdb_get(db, id, sessions_key_of(a, r), a->cfg->worker_timeout_s, &row, err,
				 sizeof err)
		    : -1;
	int n = rc == 1 ? outstream_read(db, stream, 0, 1, 1024, &ch, err, sizeof err) : 0;
	if (db)
		db_pool_put(a->pool, db);
	sess_row_release(&row);
	outstream_chunks_free(ch, n > 0 ? n : 0);
	if (rc < 0 || n < 0)
		return render_db_error(r, "process events", err);
	if (rc == 0)
		return sessions_no_session(r, id);
	if (n == 0) {
		http_error(r, 404, "not_found", "no process %ld in session %s", pid, id);
		return;
	}
	sessions_relay_process(r, a, id, pid, after, framing);
}

void sessions_process_events_route(struct http_request *r, struct api *a, const char *id,
				   const char *arg)
{
	char pidtext[24];
	sessions_segment(arg, "processes", pidtext, sizeof pidtext);
	process_stream(r, a, id, pidtext, sse_last_event_id(http_header(r, "Last-Event-ID")), NULL);
}

void sessions_process_start_events(struct http_request *r, struct api *a, const char *id,
				   const cJSON *in, const struct sse_opts *framing)
{
	struct sess_call c;
	if (sessions_parse_call(r, a, SCALL_PROCESS_START, in, &c) == 0) {
		c.proc.relayed = true;
		sessions_route_call_ex(r, a, id, &c, false, false, framing);
	} else {
		sess_call_release(&c);
	}
}

void sessions_process_events(struct http_request *r, struct api *a, const char *id, const char *pid,
			     const struct sse_opts *framing)
{
	process_stream(r, a, id, pid, 0, framing);
}

void sessions_process(struct http_request *r, struct api *a, const char *id, enum scall_kind kind,
		      const char *pid, const cJSON *in)
{
	struct request_error e;
	struct sess_call c;
	if (sessreq_process(a->cfg, kind, pid, in, 0, &c, &e) < 0) {
		sess_call_release(&c);
		return render_req_error(r, &e);
	}
	sessions_route_call(r, a, id, &c, false);
}
