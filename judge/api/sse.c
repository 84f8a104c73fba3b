/* sse: Server-Sent Events relay of live output streams (see sse.h). */
#define _GNU_SOURCE
#include "judge/api/sse.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "judge/api/http.h"
#include "judge/service/outstream.h"
#include "judge/service/waiter.h"
#include "judge/store/db.h"

/* One read takes at most this much of a stream: what a client that reads
 * slowly makes the server hold (more is read once it took this). */
#define READ_EVENTS 64
#define READ_BYTES  (64 * 1024)
/* After a failed read, the relay tries again this soon. */
#define RETRY_MS 1000
/* how often a relay with on_left looks whether its client closed the connection */
#define LIVENESS_MS 500

struct relay;

struct sse_hub {
	struct waiter_hub *waiters;
	struct db_pool *pool;
	pthread_mutex_t lock; /* guards tagged and every relay's next */
	struct relay *tagged; /* relays with a tag, while their request lives */
};

/* One relay: the content reader's state. Two owners: the request (until it
 * is over: ctx_free) and the response (until libmicrohttpd frees it). */
struct relay {
	struct sse_hub *hub;
	struct http_request *r; /* NULL once the request is over */
	char *stream;
	int64_t after; /* the last seq sent */
	bool over, ended;
	struct strbuf out; /* encoded, not yet sent */
	size_t off;
	int64_t next_keepalive_ms;
	struct strbuf keepalive; /* empty: SSE's comment */
	struct waiter w;
	char *(*done_data)(void *arg, const char *stored);
	void *arg;
	void (*arg_free)(void *arg);
	void (*on_left)(void *arg);
	int refs;
	char *tag;	/* the request's stream_tag, or NULL */
	bool cancelled; /* sse_cancel ended it (atomic) */
	struct relay *next;
};

int sse_hub_start(struct sse_hub **out, const char *db_url, struct db_pool *pool, char *err,
		  size_t errlen)
{
	struct sse_hub *h = xcalloc(1, sizeof *h);
	h->pool = pool;
	pthread_mutex_init(&h->lock, NULL);
	if (waiter_hub_start_on(&h->waiters, db_url, OUTSTREAM_CHANNEL, waiter_text_key, NULL, NULL,
				err, errlen) < 0) {
		pthread_mutex_destroy(&h->lock);
		free(h);
		return -1;
	}
	*out = h;
	return 0;
}

void sse_hub_stop(struct sse_hub *h)
{
	if (!h)
		return;
	waiter_hub_stop(h->waiters);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

struct waiter_hub *sse_hub_waiters(struct sse_hub *h)
{
	return h->waiters;
}

int sse_cancel(struct sse_hub *h, const char *tag)
{
	int n = 0;
	pthread_mutex_lock(&h->lock);
	for (struct relay *x = h->tagged; x; x = x->next)
		if (!strcmp(x->tag, tag)) {
			__atomic_store_n(&x->cancelled, true, __ATOMIC_RELEASE);
			waiter_hub_wake(h->waiters, x->w.id);
			n++;
		}
	pthread_mutex_unlock(&h->lock);
	return n;
}

void sse_encode(struct strbuf *out, int64_t id, const char *event, const char *data)
{
	if (id > 0)
		strbuf_addf(out, "id: %" PRId64 "\n", id);
	if (event)
		strbuf_addf(out, "event: %s\n", event);
	for (const char *p = data ? data : "";;) {
		size_t n = strcspn(p, "\r\n");
		strbuf_addstr(out, "data: ");
		strbuf_add(out, p, n);
		strbuf_addch(out, '\n');
		p += n;
		if (!*p)
			break;
		p += p[0] == '\r' && p[1] == '\n' ? 2 : 1;
	}
	strbuf_addch(out, '\n');
}

int64_t sse_last_event_id(const char *h)
{
	if (!h || !*h)
		return 0;
	if (strlen(h) > 18 || strspn(h, "0123456789") != strlen(h))
		return -1;
	return strtoll(h, NULL, 10);
}

bool sse_wanted(struct http_request *r)
{
	const char *a = http_header(r, "Accept");
	return a && strcasestr(a, "text/event-stream");
}

static void relay_unref(struct relay *x)
{
	if (__atomic_sub_fetch(&x->refs, 1, __ATOMIC_ACQ_REL))
		return;
	if (!x->ended && x->on_left)
		x->on_left(x->arg);
	if (x->arg_free)
		x->arg_free(x->arg);
	strbuf_release(&x->out);
	strbuf_release(&x->keepalive);
	free(x->stream);
	free(x->tag);
	free(x);
}

/* The response is gone (libmicrohttpd freed it). */
static void relay_response_gone(void *p)
{
	relay_unref(p);
}

/* The request is over (r->ctx_free): the hub must not resume it any more. */
static void relay_request_over(void *p)
{
	struct relay *x = p;
	if (x->tag) {
		pthread_mutex_lock(&x->hub->lock);
		for (struct relay **q = &x->hub->tagged; *q; q = &(*q)->next)
			if (*q == x) {
				*q = x->next;
				break;
			}
		pthread_mutex_unlock(&x->hub->lock);
	}
	waiter_unregister(x->hub->waiters, &x->w);
	x->r = NULL;
	relay_unref(x);
}

static void relay_resume(struct waiter *w)
{
	struct relay *x = w->arg;
	if (x->r)
		http_resume(x->r);
}

static void relay_suspend(struct waiter *w)
{
	http_suspend(((struct relay *)w->arg)->r);
}

/* Encodes one event, through the request's event_transform when it has one
 * (it may end the stream); done ends it, its data from done_data when that
 * gives some (stored is NULL for a made-up done). */
static void add_event(struct relay *x, int64_t seq, const char *event, const char *stored)
{
	bool done = !strcmp(event, "done");
	char *mine = done && x->done_data ? x->done_data(x->arg, stored) : NULL;
	const char *data = mine ? mine : stored ? stored : "{}";
	struct http_request *r = x->r;
	if (r->event_transform)
		done |= r->event_transform(r, event, data, &x->out, r->transform_arg);
	else
		sse_encode(&x->out, seq, event, data);
	free(mine);
	x->ended = done;
}

/* Reads what follows x->after into x->out. Returns 0 (maybe nothing new), or
 * -1 when the database could not be read. */
static int relay_fetch(struct relay *x)
{
	char err[256];
	struct db *db = db_pool_get(x->hub->pool, 200);
	if (!db)
		return -1;
	db_set_reconnect_ms(db, 1000);
	struct outstream_chunk *c = NULL;
	int n =
	    outstream_read(db, x->stream, x->after, READ_EVENTS, READ_BYTES, &c, err, sizeof err);
	db_pool_put(x->hub->pool, db); /* before done_data, which may take one too */
	if (n < 0) {
		log_warn("sse: %s", err);
		return -1;
	}
	for (int i = 0; i < n && !x->ended; i++) {
		add_event(x, c[i].seq, c[i].event, c[i].data);
		x->after = c[i].seq;
	}
	/* a stream over with no done left (pruned): the caller knows the end */
	if (!x->ended && x->over && n < READ_EVENTS)
		add_event(x, x->after, "done", NULL);
	outstream_chunks_free(c, n);
	return 0;
}

/* The content reader (http_stream_fn). */
static long relay_read(void *arg, char *buf, size_t max)
{
	struct relay *x = arg;
	for (;;) {
		if (x->off < x->out.len) {
			size_t n = x->out.len - x->off;
			n = n < max ? n : max;
			memcpy(buf, x->out.buf + x->off, n);
			x->off += n;
			return (long)n;
		}
		strbuf_reset(&x->out);
		x->off = 0;
		int64_t now = clock_mono_ms();
		/* register first, read second: a NOTIFY (or sse_cancel) in between is kept */
		x->w.deadline_ms = x->next_keepalive_ms;
		/* a relay that acts when its client leaves looks every LIVENESS_MS
		 * (a keepalive's write finds a closed peer only at the second one) */
		if (x->on_left && x->w.deadline_ms > now + LIVENESS_MS)
			x->w.deadline_ms = now + LIVENESS_MS;
		waiter_register(x->hub->waiters, &x->w);
		if (x->ended || !x->r || http_stopping(x->r) ||
		    __atomic_load_n(&x->cancelled, __ATOMIC_ACQUIRE) ||
		    (x->on_left && http_client_gone(x->r))) {
			waiter_unregister(x->hub->waiters, &x->w);
			return HTTP_STREAM_END;
		}
		if (relay_fetch(x) < 0 && x->w.deadline_ms > now + RETRY_MS)
			x->w.deadline_ms = now + RETRY_MS;
		if (!x->out.len && now >= x->next_keepalive_ms) {
			if (x->keepalive.len)
				strbuf_add(&x->out, x->keepalive.buf, x->keepalive.len);
			else
				strbuf_addstr(&x->out, ": keep-alive\n\n");
			x->next_keepalive_ms = now + SSE_KEEPALIVE_MS;
		}
		if (x->out.len) {
			waiter_unregister(x->hub->waiters, &x->w);
			continue;
		}
		if (waiter_park(x->hub->waiters, &x->w, relay_suspend))
			return 0;
	}
}

/* A reader that resumes (Last-Event-ID) a stream that has ended gets 204,
 * which tells an EventSource to stop reconnecting; an id the judge never gave
 * is a 400. Returns true when it answered. */
static bool resume_refused(struct http_request *r, struct sse_hub *hub, const struct sse_opts *o)
{
	char err[256];
	int64_t last = 0, done = 0;
	struct db *db = db_pool_get(hub->pool, 2000);
	int rc = db ? outstream_position(db, o->stream, &last, &done, err, sizeof err) : -1;
	if (db)
		db_pool_put(hub->pool, db);
	if (rc < 0)
		return false; /* the relay reads again and copes */
	if (o->after > last) {
		http_error(r, 400, "invalid_field", "Last-Event-ID %lld is no event of this judge",
			   (long long)o->after);
		return true;
	}
	if ((done && done <= o->after) || (!done && o->over)) {
		http_respond(r, 204, NULL, "", 0, NULL);
		return true;
	}
	return false;
}

int sse_relay(struct http_request *r, struct sse_hub *hub, const struct sse_opts *o)
{
	if (r->ctx || (o->after > 0 && resume_refused(r, hub, o))) {
		if (o->arg_free)
			o->arg_free(o->arg);
		return r->responded ? 0 : -1;
	}
	struct relay *x = xcalloc(1, sizeof *x);
	x->hub = hub;
	x->r = r;
	x->stream = xstrdup(o->stream);
	x->after = o->after > 0 ? o->after : 0;
	x->over = o->over;
	x->done_data = o->done_data;
	x->arg = o->arg;
	x->arg_free = o->arg_free;
	x->on_left = o->on_left;
	x->refs = 2;
	strbuf_init(&x->out);
	x->next_keepalive_ms = clock_mono_ms() + SSE_KEEPALIVE_MS;
	x->w = (struct waiter){.id = waiter_text_key(o->stream), .resume = relay_resume, .arg = x};
	/* the first bytes go at once: a client (or proxy) sees the stream open,
	 * and an EventSource retries after 2 s, not its default 3 s */
	strbuf_init(&x->keepalive);
	if (o->content_type) {
		strbuf_add(&x->out, o->prelude ? o->prelude : "", o->prelude ? o->prelude_len : 0);
		strbuf_add(&x->keepalive, o->keepalive ? o->keepalive : "",
			   o->keepalive ? o->keepalive_len : 0);
	} else {
		strbuf_addstr(&x->out, "retry: 2000\n\n");
	}
	r->ctx = x;
	r->ctx_free = relay_request_over;
	if (r->stream_tag) {
		x->tag = xstrdup(r->stream_tag);
		pthread_mutex_lock(&hub->lock);
		x->next = hub->tagged;
		hub->tagged = x;
		pthread_mutex_unlock(&hub->lock);
	}
	const char *hdr[14] = {"Cache-Control", "no-cache", "X-Accel-Buffering", "no"};
	for (size_t i = 0, n = 4; o->headers && o->headers[i] && o->headers[i + 1] && n < 12;
	     i += 2, n += 2) {
		hdr[n] = o->headers[i];
		hdr[n + 1] = o->headers[i + 1];
	}
	return http_respond_stream(r, 200, o->content_type ? o->content_type : "text/event-stream",
				   relay_read, x, relay_response_gone, hdr);
}
