/* outstream: live output streams in PostgreSQL: writer, reader, pruning (see outstream.h). */
#include "judge/service/outstream.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "judge/service/outbuf.h"
#include "judge/store/db.h"

struct outstream {
	char *url;
	struct db_pool *pool; /* or NULL: a connection of its own to url */
	pthread_t thread;
	pthread_mutex_t lock; /* guards everything below */
	pthread_cond_t wake;  /* the flusher waits on it */
	pthread_cond_t done;  /* outstream_flush waits on it */
	struct outbuf buf;
	char id[OUTSTREAM_ID_MAX + 1];
	unsigned long gen;	  /* counts begins: a batch of an older stream is not ours */
	int64_t first_pending_ms; /* when the oldest waiting byte came */
	bool flush_asked;	  /* outstream_flush waits: write all, held UTF-8 too */
	bool now_asked;		  /* outstream_event_now: the next batch goes at once */
	bool writing;		  /* the flusher holds a batch */
	bool failed;		  /* some of this stream was dropped */
	bool stop;
	long batches;
};

/* One INSERT for the batch, NOTIFY in the same statement. The batch goes as
 * one json array of [event, data] pairs: a json (not jsonb) element keeps its
 * text, so data lands as written. */
static int write_batch(struct db *db, const char *id, const struct outbuf_event *ev, size_t n)
{
	struct strbuf arr = STRBUF_INIT;
	strbuf_addch(&arr, '[');
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&arr, "%s[\"%s\",%s]", i ? "," : "", ev[i].name, ev[i].data.buf);
	strbuf_addch(&arr, ']');
	const char *p[] = {id, arr.buf};
	int rc = db_exec(db,
			 "WITH ins AS (INSERT INTO output_chunks (stream, event, data) "
			 "SELECT $1, x->>0, (x->1)::text FROM json_array_elements($2::json) "
			 "WITH ORDINALITY AS t(x, n) ORDER BY n RETURNING 1) "
			 "SELECT pg_notify('" OUTSTREAM_CHANNEL "', $1)",
			 2, p);
	strbuf_release(&arr);
	return rc;
}

/* Writes one batch outside the lock (taken again on return). */
static void flush_batch(struct outstream *o, struct db **db)
{
	struct outbuf_event *ev = NULL;
	bool at_end = o->flush_asked || o->stop;
	o->now_asked = false;
	size_t n = outbuf_take(&o->buf, at_end, &ev);
	o->first_pending_ms = outbuf_pending(&o->buf) ? clock_mono_ms() : 0;
	if (!n)
		return;
	char id[sizeof o->id];
	memcpy(id, o->id, sizeof id);
	unsigned long gen = o->gen;
	o->writing = true;
	pthread_mutex_unlock(&o->lock);
	char err[256];
	int rc = -1;
	if (o->pool && !(*db = db_pool_get(o->pool, 1000)))
		log_warn("outstream: no database connection free for '%s'", id);
	else if (!*db && db_open(db, o->url, 1000, err, sizeof err) < 0)
		log_warn("outstream: %s", err);
	else if (*db)
		db_set_reconnect_ms(*db, 1000);
	if (*db && (rc = write_batch(*db, id, ev, n)) < 0)
		log_warn("outstream: cannot write to '%s': %s", id, db_error(*db));
	if (o->pool && *db) {
		db_pool_put(o->pool, *db);
		*db = NULL;
	}
	outbuf_events_free(ev, n);
	pthread_mutex_lock(&o->lock);
	o->writing = false;
	o->batches++;
	if (rc < 0 && gen == o->gen) {
		o->failed = true;
		outbuf_truncate(&o->buf, "lost");
	}
}

static void *flusher_main(void *arg)
{
	struct outstream *o = arg;
	struct db *db = NULL;
	pthread_mutex_lock(&o->lock);
	for (;;) {
		size_t pending = outbuf_pending(&o->buf);
		if (!pending && o->stop)
			break;
		int64_t now = clock_mono_ms();
		bool due = pending && (o->flush_asked || o->stop || o->now_asked ||
				       pending >= OUTBUF_EVENT_BYTES ||
				       now >= o->first_pending_ms + OUTSTREAM_FLUSH_MS);
		if (due) {
			flush_batch(o, &db);
			pthread_cond_broadcast(&o->done);
			continue;
		}
		pthread_cond_broadcast(&o->done); /* nothing waits to be written */
		long wait = pending ? (long)(o->first_pending_ms + OUTSTREAM_FLUSH_MS - now) : 1000;
		struct timespec until = clock_mono_after(wait > 0 ? wait : 1);
		pthread_cond_timedwait(&o->wake, &o->lock, &until);
	}
	pthread_mutex_unlock(&o->lock);
	db_close(db);
	return NULL;
}

static struct outstream *open_writer(const char *db_url, struct db_pool *pool)
{
	struct outstream *o = xcalloc(1, sizeof *o);
	o->url = db_url ? xstrdup(db_url) : NULL;
	o->pool = pool;
	pthread_mutex_init(&o->lock, NULL);
	clock_cond_init(&o->wake);
	clock_cond_init(&o->done);
	outbuf_init(&o->buf, OUTSTREAM_MAX_BYTES, OUTSTREAM_BACKLOG_BYTES);
	if (pthread_create(&o->thread, NULL, flusher_main, o) != 0) {
		/* no thread, no live output: the caller's runs still work */
		log_error("outstream: cannot start a thread");
		free(o->url);
		outbuf_release(&o->buf);
		free(o);
		return NULL;
	}
	return o;
}

struct outstream *outstream_open(const char *db_url)
{
	return open_writer(db_url, NULL);
}

struct outstream *outstream_open_pooled(struct db_pool *pool)
{
	return open_writer(NULL, pool);
}

void outstream_close(struct outstream *o)
{
	if (!o)
		return;
	outstream_flush(o, 3000);
	pthread_mutex_lock(&o->lock);
	o->stop = true;
	outbuf_reset(&o->buf); /* what is not written by now will not be */
	pthread_cond_signal(&o->wake);
	pthread_mutex_unlock(&o->lock);
	pthread_join(o->thread, NULL);
	outbuf_release(&o->buf);
	pthread_mutex_destroy(&o->lock);
	pthread_cond_destroy(&o->wake);
	pthread_cond_destroy(&o->done);
	free(o->url);
	free(o);
}

void outstream_begin(struct outstream *o, const char *id)
{
	if (!o)
		return;
	pthread_mutex_lock(&o->lock);
	outbuf_reset(&o->buf);
	snprintf(o->id, sizeof o->id, "%s", id);
	o->gen++;
	o->failed = false;
	o->first_pending_ms = 0;
	pthread_mutex_unlock(&o->lock);
}

/* Called with the lock held after adding (before: what waited then). */
static void added(struct outstream *o, size_t before)
{
	size_t now = outbuf_pending(&o->buf);
	/* the first bytes start the flusher's clock; a full batch goes at once */
	if (!before && now)
		o->first_pending_ms = clock_mono_ms();
	if ((!before && now) || (before < OUTBUF_EVENT_BYTES && now >= OUTBUF_EVENT_BYTES))
		pthread_cond_signal(&o->wake);
}

void outstream_output(void *arg, int fd, const char *data, size_t len)
{
	struct outstream *o = arg;
	if (!o)
		return;
	pthread_mutex_lock(&o->lock);
	size_t before = outbuf_pending(&o->buf);
	bool was = o->buf.truncated;
	outbuf_output(&o->buf, fd, data, len);
	if (!was && o->buf.truncated)
		o->failed = true;
	added(o, before);
	pthread_mutex_unlock(&o->lock);
}

static void add_event(struct outstream *o, const char *event, const char *json, bool now)
{
	if (!o)
		return;
	pthread_mutex_lock(&o->lock);
	size_t before = outbuf_pending(&o->buf);
	outbuf_event(&o->buf, event, json);
	o->now_asked |= now;
	added(o, before);
	if (now)
		pthread_cond_signal(&o->wake);
	pthread_mutex_unlock(&o->lock);
}

void outstream_event(struct outstream *o, const char *event, const char *json)
{
	add_event(o, event, json, false);
}

void outstream_event_now(struct outstream *o, const char *event, const char *json)
{
	add_event(o, event, json, true);
}

int outstream_flush(struct outstream *o, int timeout_ms)
{
	if (!o)
		return -1;
	struct timespec until = clock_mono_after(timeout_ms);
	pthread_mutex_lock(&o->lock);
	o->flush_asked = true;
	pthread_cond_signal(&o->wake);
	int rc = 0;
	while ((outbuf_pending(&o->buf) || o->writing) && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&o->done, &o->lock, &until);
	bool all = !outbuf_pending(&o->buf) && !o->writing && !o->failed;
	o->flush_asked = false;
	pthread_mutex_unlock(&o->lock);
	return all ? 0 : -1;
}

long outstream_batches(struct outstream *o)
{
	pthread_mutex_lock(&o->lock);
	long n = o->batches;
	pthread_mutex_unlock(&o->lock);
	return n;
}

int outstream_read(struct db *db, const char *id, int64_t after, int max, size_t max_bytes,
		   struct outstream_chunk **out, char *err, size_t errlen)
{
	char a[32], m[16];
	snprintf(a, sizeof a, "%" PRId64, after);
	snprintf(m, sizeof m, "%d", max > 0 ? max : 1);
	const char *p[] = {id, a, m};
	*out = NULL;
	PGresult *res = db_query(db,
				 "SELECT seq, event, data FROM output_chunks WHERE stream = $1 "
				 "AND seq > $2::bigint ORDER BY seq LIMIT $3::int",
				 3, p);
	if (!res) {
		snprintf(err, errlen, "cannot read output '%s': %s", id, db_error(db));
		return -1;
	}
	int rows = PQntuples(res), n = 0;
	size_t bytes = 0;
	*out = xcalloc((size_t)(rows ? rows : 1), sizeof **out);
	for (; n < rows && (n == 0 || bytes < max_bytes); n++) {
		struct outstream_chunk *c = &(*out)[n];
		c->seq = db_value_ll(res, n, 0);
		snprintf(c->event, sizeof c->event, "%s", db_value(res, n, 1));
		c->data = xstrdup(db_value(res, n, 2));
		bytes += strlen(c->data);
	}
	PQclear(res);
	return n;
}

int outstream_position(struct db *db, const char *id, int64_t *last_seq, int64_t *done_seq,
		       char *err, size_t errlen)
{
	const char *p[] = {id};
	/* the sequence's last_value never goes back, even when rows are pruned */
	PGresult *res = db_query(db,
				 "SELECT (SELECT CASE WHEN is_called THEN last_value ELSE 0 END "
				 "FROM output_chunks_seq_seq), (SELECT min(seq) FROM output_chunks "
				 "WHERE stream = $1 AND event = 'done')",
				 1, p);
	if (!res) {
		snprintf(err, errlen, "cannot read output '%s': %s", id, db_error(db));
		return -1;
	}
	*last_seq = db_value_ll(res, 0, 0);
	*done_seq = db_value_ll(res, 0, 1);
	PQclear(res);
	return 0;
}

void outstream_chunks_free(struct outstream_chunk *c, int n)
{
	for (int i = 0; c && i < n; i++)
		free(c[i].data);
	free(c);
}

/* Runs one DELETE of prune (older than secs) and adds its count to *n. */
static int prune_step(struct db *db, const char *sql, long secs, long *n, char *err, size_t errlen)
{
	char v[32];
	snprintf(v, sizeof v, "%ld", secs);
	const char *p[] = {v};
	PGresult *res = db_query(db, sql, 1, p);
	if (!res) {
		snprintf(err, errlen, "cannot prune output: %s", db_error(db));
		return -1;
	}
	*n += (long)db_value_ll(res, 0, 0);
	PQclear(res);
	return 0;
}

long outstream_prune(struct db *db, long keep_s, long keep_max_s, char *err, size_t errlen)
{
	/* two statements, each on its index (an OR of both would scan the table) */
	long n = 0;
	if (prune_step(db,
		       "WITH d AS (DELETE FROM output_chunks WHERE stream IN (SELECT stream FROM "
		       "output_chunks WHERE event = 'done' AND created < now() - "
		       "make_interval(secs => $1::bigint)) RETURNING 1) SELECT count(*) FROM d",
		       keep_s, &n, err, errlen) < 0 ||
	    prune_step(db,
		       "WITH d AS (DELETE FROM output_chunks WHERE created < now() - "
		       "make_interval(secs => $1::bigint) RETURNING 1) SELECT count(*) FROM d",
		       keep_max_s, &n, err, errlen) < 0)
		return -1;
	return n;
}
