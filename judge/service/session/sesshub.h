/* sesshub: waiting for sessions' answers (serve's side of sessdb.h).
 *
 * A waiter hub (waiter.h) on judge_session_reply, whose payloads are
 * "s<session id>" (a session started or ended) and "c<call id>" (a call was
 * answered), keyed with waiter_text_key: a waiting HTTP request registers a
 * struct waiter whose id is sesshub_key() of its text, reads the row, and
 * parks when there is no answer yet, as waiter.h describes. Beside the hub, a
 * reaper thread runs sessdb_reap_lost once a second, so the calls of a dead
 * worker are answered (410 session_lost) even when no worker is left to do it.
 */
#pragma once
#include <stddef.h>
#include <stdint.h>

struct sesshub;
struct waiter_hub;

/* Starts the hub and the reaper (each connects to db_url itself and
 * reconnects); workers silent for timeout_s are reaped. Returns 0 with *out,
 * or -1 with err. */
int sesshub_start(struct sesshub **out, const char *db_url, long timeout_s, char *err,
		  size_t errlen);
/* Stops both threads and frees h (no waiter may be registered). NULL is fine. */
void sesshub_stop(struct sesshub *h);
/* The waiter hub to register, park and unregister waits with (owned by h). */
struct waiter_hub *sesshub_waiters(struct sesshub *h);
/* A waiter id for a notification's text: "s<uuid>" or "c<call id>". */
int64_t sesshub_key(const char *text);
