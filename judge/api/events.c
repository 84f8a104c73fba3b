/* events: submissions' live output as Server-Sent Events (see events.h). */
#include "judge/api/events.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "judge/api/api.h"
#include "judge/api/http.h"
#include "judge/api/render.h"
#include "judge/api/sse.h"
#include "judge/service/queue.h"
#include "judge/store/db.h"

/* sse_opts.done_data: the row's result as a synchronous execute shows it. */
static char *done_data(void *arg, const char *stored)
{
	(void)stored;
	struct events_done_arg *d = arg;
	char err[256];
	struct queue_sub s;
	queue_sub_init(&s);
	struct db *db = api_db(d->a, 2000, err, sizeof err);
	int rc = db ? queue_get(db, d->id, 0, &s, err, sizeof err) : -1;
	if (db)
		db_pool_put(d->a->pool, db);
	char *text = NULL;
	if (rc == 1 && status_is_final(s.status)) {
		cJSON *res = render_result(&s);
		text = cJSON_PrintUnformatted(res);
		cJSON_Delete(res);
	}
	queue_sub_release(&s);
	return text; /* NULL: the stored {"id", "status"} */
}

void events_relay_stream(struct http_request *r, struct api *a, int64_t id, bool over,
			 const char *stream, const char *loc,
			 char *(*render_done)(void *arg, const char *stored), const char *what)
{
	int64_t after = sse_last_event_id(http_header(r, "Last-Event-ID"));
	if (after < 0) {
		http_error(r, 400, "invalid_field", "Last-Event-ID must be an event's id");
		return;
	}
	struct events_done_arg *d = xcalloc(1, sizeof *d);
	*d = (struct events_done_arg){a, id};
	/* the POST forms learn the record's id here, before done */
	const char *hdr[] = {"Location", loc, NULL};
	struct sse_opts o = {.stream = stream,
			     .headers = hdr,
			     .after = after,
			     .over = over,
			     .done_data = render_done,
			     .arg = d,
			     .arg_free = free};
	if (sse_relay(r, a->sse, &o) < 0 && !r->responded)
		http_error(r, 503, "internal", "cannot stream %s %" PRId64, what, id);
}

void events_relay(struct http_request *r, struct api *a, int64_t id, bool over)
{
	char stream[48], loc[64];
	snprintf(stream, sizeof stream, "sub:%" PRId64, id);
	snprintf(loc, sizeof loc, "/v1/submissions/%" PRId64, id);
	events_relay_stream(r, a, id, over, stream, loc, done_data, "submission");
}

/* The id at the start of s ("12/events" or "12"): > 0, or -1. */
static int64_t leading_id(const char *s)
{
	size_t n = strspn(s, "0123456789");
	if (!n || n > 18 || (s[n] && strcmp(s + n, "/events")))
		return -1;
	return strtoll(s, NULL, 10);
}

void events_get(struct http_request *r, struct api *a, const char *id_s)
{
	int64_t id = leading_id(id_s);
	char err[256];
	if (id <= 0) {
		http_error(r, 404, "not_found", "no submission '%.40s'", id_s);
		return;
	}
	struct queue_sub s;
	queue_sub_init(&s);
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? queue_get(db, id, a->auth_on ? r->key_id : 0, &s, err, sizeof err) : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		render_db_error(r, "reading a submission", err);
	else if (rc == 0)
		http_error(r, 404, "not_found", "no submission %" PRId64, id);
	else
		events_relay(r, a, id, status_is_final(s.status));
	queue_sub_release(&s);
}
