/* waiter: waiting until a submission is final, for any number of waits, with one thread.
 *
 * How it works: a hub is one thread with its own connection LISTENing on
 * judge_done (queue.h). A wait is a struct waiter the caller owns (in an HTTP
 * request's state, or on a blocked thread's stack) and registers in the hub's
 * table by submission id. The waiting side then:
 *
 *   1. waiter_register()   (before reading, so a finish in between is kept)
 *   2. reads the row; when it is final or the deadline passed it answers and
 *      calls waiter_unregister()
 *   3. waiter_park(): false when a notification came since step 1 (go to 1);
 *      true when it is parked: nothing holds a thread for it now.
 *
 * The hub's thread takes a parked waiter out of the table and calls its
 * resume hook when judge_done names its id, when its deadline passes, and for
 * every waiter after (re)connecting to PostgreSQL, since a notification may
 * have been missed while it was not listening. The resumed side starts again
 * at step 1. The HTTP API parks requests this way (resume = http_resume);
 * waiter_wait() is the same protocol for a thread that blocks.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db_pool;
struct queue_sub;
struct waiter_hub;

struct waiter {
	/* Set by the caller before waiter_register. */
	int64_t id;	     /* the submission waited for */
	int64_t deadline_ms; /* clock_mono_ms() time after which it is woken anyway */
	/* Called by the hub's thread with the hub locked, once per park: it must
	 * not call back into the hub. */
	void (*resume)(struct waiter *w);
	void *arg; /* the caller's */
	/* The hub's own. */
	bool registered, parked, notified;
	struct waiter *next;
};

/* Called by the hub's thread, outside its lock, with each notification's
 * payload, and with NULL after each reconnect (anything may have been missed). */
typedef void (*waiter_notify_fn)(void *arg, const char *payload);

/* Starts the hub's thread, which connects to db_url (libpq connection
 * string) itself and keeps reconnecting while PostgreSQL is away. on_notify
 * (may be NULL) hears each judge_done notification and each reconnect (the
 * callback sender's kick). Returns 0 with *out, or -1 with err. */
int waiter_hub_start(struct waiter_hub **out, const char *db_url, waiter_notify_fn on_notify,
		     void *arg, char *err, size_t errlen);
/* A hub on another channel (e.g. outstream.h's judge_output): key maps a
 * notification's payload to the id of the waiters it wakes (0: none).
 * Returns 0 with *out, or -1 with err. */
int waiter_hub_start_on(struct waiter_hub **out, const char *db_url, const char *channel,
			int64_t (*key)(const char *payload), waiter_notify_fn on_notify, void *arg,
			char *err, size_t errlen);
/* A waiter id (> 0) for a text payload such as a stream id: a hash, so two
 * texts may share one (a waiter woken for nothing reads again and parks). */
int64_t waiter_text_key(const char *s);
/* Stops the thread and frees h (no waiter may be left registered). NULL is fine. */
void waiter_hub_stop(struct waiter_hub *h);
/* Times the hub's thread (re)connected and LISTENed since the start. */
long waiter_hub_connects(struct waiter_hub *h);

/* Wakes the waiters of id now, as a notification for it would (any thread). */
void waiter_hub_wake(struct waiter_hub *h, int64_t id);
/* Puts w in h's table (once; again after each resume) and forgets earlier
 * notifications: call it before reading the submission. */
void waiter_register(struct waiter_hub *h, struct waiter *w);
/* What the hub had heard at one moment: see waiter_register_since. */
struct waiter_mark {
	uint64_t heard; /* notifications heard */
	long connects;	/* (re)connections */
	bool listening;
};
struct waiter_mark waiter_mark(struct waiter_hub *h);
/* waiter_register for a submission queued after m was taken (take m before
 * the INSERT): returns true when the caller may park without reading the row,
 * as it is still queued — the hub has listened all along since m and heard no
 * notification for w->id (it keeps the last WAITER_RECENT ids it heard); false
 * when it cannot tell: read, as after waiter_register. Saves a read per wait. */
bool waiter_register_since(struct waiter_hub *h, struct waiter *w, const struct waiter_mark *m);
/* Takes w out of h's table (no-op when it is not in). */
void waiter_unregister(struct waiter_hub *h, struct waiter *w);
/* After a read that found w->id not final: returns false when a notification
 * for it came since waiter_register (read again), else marks w parked, calls
 * suspend(w) with the hub locked (so resume cannot run before it) and returns
 * true. */
bool waiter_park(struct waiter_hub *h, struct waiter *w, void (*suspend)(struct waiter *w));

/* Blocks the calling thread up to timeout_ms until submission id is final,
 * then reads it into *out (initialised with queue_sub_init; queue_sub_release
 * it after). Connections come from pool,
 * held only while reading. With api_key_id > 0 only that key's submission is
 * found. Returns 1 when final, 0 on timeout (*out holds the state read last),
 * 2 when there is no such submission, -1 with err. */
int waiter_wait(struct waiter_hub *h, struct db_pool *pool, int64_t id, int64_t api_key_id,
		int timeout_ms, struct queue_sub *out, char *err, size_t errlen);
