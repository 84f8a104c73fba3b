/* outbuf: the pure part of a live output writer: batching a run's output and
 * events into the rows of output_chunks (migrations/0004_output.sql).
 *
 * Output bytes of one fd that follow each other become one event of at most
 * OUTBUF_EVENT_BYTES; another fd or an event (test ...) closes it. A UTF-8
 * sequence cut between two reads is held back until its end comes, and what
 * is not UTF-8 becomes U+FFFD: an output event's data is a JSON string of
 * valid UTF-8. Two bounds keep memory and the table small: the stream's
 * output cap (max_bytes over the whole stream) and the backlog (max_pending
 * bytes not yet taken, when PostgreSQL is slower than the program). Output
 * past either is dropped and the stream gets one `truncated` event
 * ({"reason": "limit" | "backlog" | "lost"}); later output is dropped too,
 * other events still pass. No locking here: outstream.c holds the lock.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"

/* Output of one fd in one event at most (a flush also cuts one). */
#define OUTBUF_EVENT_BYTES (16 * 1024)

struct outbuf_event {
	char name[33]; /* stdout, stderr, compile, test, truncated, ... */
	int fd;	       /* 1, 2 or 3 for output (raw bytes in data), 0 for JSON data */
	struct strbuf data;
};

struct outbuf {
	size_t max_bytes;   /* output bytes a stream keeps */
	size_t max_pending; /* bytes waiting to be taken */
	struct outbuf_event *ev;
	size_t nev, aev;
	size_t accepted; /* output bytes kept so far in this stream */
	size_t pending;	 /* bytes in ev */
	bool truncated;	 /* the truncated event is queued: output is dropped now */
};

void outbuf_init(struct outbuf *b, size_t max_bytes, size_t max_pending);
/* Frees what b holds; b is left as after outbuf_init with the same bounds. */
void outbuf_reset(struct outbuf *b);
void outbuf_release(struct outbuf *b);
/* Adds output bytes of fd (1 stdout, 2 stderr, 3 the compiler's: event
 * "compile"), within the bounds. */
void outbuf_output(struct outbuf *b, int fd, const char *data, size_t len);
/* Adds an event whose data is one JSON value on one line (copied). */
void outbuf_event(struct outbuf *b, const char *name, const char *json);
/* Drops further output with one truncated event of reason (e.g. "lost":
 * a batch could not be written). No-op once truncated. */
void outbuf_truncate(struct outbuf *b, const char *reason);
/* Bytes waiting to be taken. */
size_t outbuf_pending(const struct outbuf *b);
/* Moves what waits into *out (n events, malloc'd, each with JSON data; free
 * with outbuf_events_free). Unless at_end, the incomplete UTF-8 sequence at
 * the end of the last output event stays behind for the next bytes. Returns n. */
size_t outbuf_take(struct outbuf *b, bool at_end, struct outbuf_event **out);
void outbuf_events_free(struct outbuf_event *ev, size_t n);
/* Appends s (n bytes, valid UTF-8 without NUL) to out as a JSON string. */
void outbuf_json_string(struct strbuf *out, const char *s, size_t n);
