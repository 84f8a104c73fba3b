/* sesshub: waiting for sessions' answers with one thread (serve's side of sessdb.h).
 *
 * The same protocol as waiter.h, keyed by text: a hub is one thread with its
 * own connection LISTENing on judge_session_reply, whose payloads are
 * "s<session id>" (a session started or ended) and "c<call id>" (a call was
 * answered). A waiting HTTP request registers its key, reads the row, and
 * parks when there is no answer yet; the hub resumes it on its key's
 * notification, at its deadline, and after every reconnect. The thread also
 * runs sessdb_reap_lost once a second, so the calls of a dead worker are
 * answered (410 session_lost) even when no worker is left to do it.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sesshub;

struct sesshub_wait {
	/* Set by the caller before sesshub_register. */
	char key[48];	     /* "s<uuid>" or "c<call id>" */
	int64_t deadline_ms; /* clock_mono_ms() time after which it is woken anyway */
	/* Called by the hub's thread with the hub locked, once per park. */
	void (*resume)(struct sesshub_wait *w);
	void *arg;
	/* The hub's own. */
	bool registered, parked, notified;
	struct sesshub_wait *next;
};

/* Starts the thread (it connects to db_url itself and reconnects); workers
 * silent for timeout_s are reaped. Returns 0 with *out, or -1 with err. */
int sesshub_start(struct sesshub **out, const char *db_url, long timeout_s, char *err,
		  size_t errlen);
/* Stops the thread and frees h (no wait may be registered). NULL is fine. */
void sesshub_stop(struct sesshub *h);
/* Puts w in the table (forgetting older notifications): before reading. */
void sesshub_register(struct sesshub *h, struct sesshub_wait *w);
/* Takes w out of the table (no-op when it is not in). */
void sesshub_unregister(struct sesshub *h, struct sesshub_wait *w);
/* After a read that found no answer: false when a notification came since
 * sesshub_register (read again), else marks w parked, calls suspend(w) with the
 * hub locked and returns true. */
bool sesshub_park(struct sesshub *h, struct sesshub_wait *w,
		  void (*suspend)(struct sesshub_wait *w));
