/* sesspool: a worker's Python sessions started ahead of need, and the one way a
 * session's sandbox and driver are started.
 *
 * A create should not wait for a sandbox and an interpreter to start (the
 * target is 60 ms): the pool's thread keeps `size` spare sandboxes, each with
 * its driver ready, of the default language (python) and the default limits
 * of judge.ini's [sessions]. A claimed session with exactly those takes a
 * spare (sesspool_take) and the thread starts the next one; any other starts
 * its own (sesspool_open). A spare holds its slot number and an empty box.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "judge/service/sessreq.h"
#include "runner/sandbox.h"

struct judge_config;
struct lang;
struct lang_registry;
struct session;
struct sesspool;

/* A started session sandbox: the caller owns all of it. */
struct sesspool_item {
	struct sandbox *sb;
	struct session *s;
	int slot, slot_fd; /* slot_fd: the flock of the slot number (slots.h) */
};

/* Opens a sandbox of backend in slot with limits (disk_mb its box) and starts
 * lang's driver in it. Returns 0 with sb and s set, or -1 with err (*sb may
 * be set: close it). */
int sesspool_open(const struct judge_config *cfg, enum sandbox_backend backend,
		  const struct lang *lang, const struct sess_limits *limits, int slot,
		  struct sandbox **sb, struct session **s, char *err, size_t errlen);
/* Stops the session and closes sandbox and slot of it (any part may be unset). */
void sesspool_item_close(struct sesspool_item *it);

/* Starts the pool's thread (size 0: no thread, sesspool_take finds nothing).
 * cfg and langs must outlive it. Never NULL. */
struct sesspool *sesspool_start(const struct judge_config *cfg, const struct lang_registry *langs,
				enum sandbox_backend backend, int size);
/* Takes a spare for a session of lang with limits when one fits and is ready:
 * true with *out (the caller's now). */
bool sesspool_take(struct sesspool *p, const struct lang *lang, const struct sess_limits *limits,
		   struct sesspool_item *out);
/* Stops the thread and closes the spares. NULL is fine. */
void sesspool_stop(struct sesspool *p);
