/* outstream: live output streams in PostgreSQL (table output_chunks): the
 * writer a worker uses while a run goes on, the reader `judge serve` relays
 * from (judge/api/sse.h), and pruning.
 *
 * A stream is named by a text id: "sub:<submission id>" for a submission,
 * "cell:<session call id>" for a session's cell. Its events are rows
 * (seq, event, data): seq orders them and is the SSE id, event is stdout,
 * stderr, test, truncated, done ..., data is one JSON value on one line.
 * A submission's `done` is written by the database itself when the row
 * becomes final (migrations/0004_output.sql); other streams write their own
 * `done` with outstream_event() last. A stream's readers stop at `done`.
 *
 * How the writer works: one writer per worker slot, one stream at a time.
 * The program's output goes into a bounded buffer (outbuf.h) under a lock
 * and a thread of the writer flushes it with one INSERT per batch (every
 * OUTSTREAM_FLUSH_MS, or at once when OUTBUF_EVENT_BYTES wait) on a
 * connection of its own, with NOTIFY judge_output (payload: the stream id)
 * in the same statement. The sandbox's pump never waits for PostgreSQL: when
 * it is slow the buffer fills and the stream gets a truncated event instead.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

struct db;
struct db_pool;

#define OUTSTREAM_CHANNEL   "judge_output" /* NOTIFY payload: the stream id */
#define OUTSTREAM_MAX_BYTES (1024 * 1024)  /* output bytes a stream keeps */
/* unwritten bytes before output is dropped: below the cap, so that a stalled
 * database shows as "backlog", not as the stream's end */
#define OUTSTREAM_BACKLOG_BYTES (768 * 1024)
#define OUTSTREAM_FLUSH_MS	50
#define OUTSTREAM_ID_MAX	200 /* bytes of a stream id */
/* Pruning: a stream goes this long after its done; any row after KEEP_MAX_S. */
#define OUTSTREAM_KEEP_S     3600
#define OUTSTREAM_KEEP_MAX_S (7 * 24 * 3600)

struct outstream;

/* Starts a writer and its flusher thread, which connects to db_url itself
 * (and reconnects). Never fails for lack of a database: batches it cannot
 * write are dropped with a truncated event. Returns the writer (free with
 * outstream_close). */
struct outstream *outstream_open(const char *db_url);
/* The same, but each batch is written through a connection taken from pool
 * for that batch: a writer opened per process of a session costs no
 * connection of its own (a PostgreSQL connect is 3-10 ms, on the path to a
 * command's first byte). pool outlives the writer. */
struct outstream *outstream_open_pooled(struct db_pool *pool);
/* Writes what waits (up to a few seconds), stops the thread, frees o. NULL is fine. */
void outstream_close(struct outstream *o);
/* Starts stream id (anything of an earlier stream not written by now is
 * dropped). Output and events go to it until the next begin. */
void outstream_begin(struct outstream *o, const char *id);
/* Adds output of fd (1 stdout, 2 stderr, 3 compiler): the signature of
 * run_spec.on_output (arg = o). Never blocks on PostgreSQL. */
void outstream_output(void *o, int fd, const char *data, size_t len);
/* Adds an event whose data is one JSON value on one line (test, done ...). */
void outstream_event(struct outstream *o, const char *event, const char *json);
/* The same, and the batch holding it goes at once, not OUTSTREAM_FLUSH_MS
 * later (a reader waits for it: a process's start, whose pid E2B's
 * background commands.run returns). Never blocks on PostgreSQL. */
void outstream_event_now(struct outstream *o, const char *event, const char *json);
/* Writes everything added to the current stream, waiting up to timeout_ms.
 * Returns 0 when all of it is in the table, -1 when some was dropped or
 * could not be written in time. */
int outstream_flush(struct outstream *o, int timeout_ms);
/* The stream's batches written so far (tests). */
long outstream_batches(struct outstream *o);

/* One event read back. */
struct outstream_chunk {
	int64_t seq;
	char event[33];
	char *data; /* owned */
};
/* Reads up to max events of stream id with seq > after, in order, stopping
 * early past max_bytes of data. *out is malloc'd (outstream_chunks_free).
 * Returns the count (>= 0), or -1 with err. */
int outstream_read(struct db *db, const char *id, int64_t after, int max, size_t max_bytes,
		   struct outstream_chunk **out, char *err, size_t errlen);
void outstream_chunks_free(struct outstream_chunk *c, int n);
/* Where stream id stands: *last_seq the newest seq ever given (of any
 * stream; 0 when none), *done_seq the seq of its done (0 when it has none).
 * Returns 0, or -1 with err. */
int outstream_position(struct db *db, const char *id, int64_t *last_seq, int64_t *done_seq,
		       char *err, size_t errlen);
/* Deletes the streams whose done is older than keep_s, and any row older
 * than keep_max_s. Returns the rows deleted, or -1 with err. */
long outstream_prune(struct db *db, long keep_s, long keep_max_s, char *err, size_t errlen);
