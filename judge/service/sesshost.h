/* sesshost: the sessions a worker holds (inside `judge worker`, and so `judge up`).
 *
 * How it works: one host thread with its own connection registers the worker
 * (sessdb_worker_register), LISTENs on judge_session_new and on its own
 * channel judge_w<id>, and once a second beats, expires idle sessions and
 * drops the ones that ended elsewhere. With room (sessions_per_worker) it
 * claims new sessions; each gets a thread of its own that opens a sandbox,
 * starts the language's driver (runner/session/session.h), marks the session ready,
 * and then runs its calls one at a time, in the order serve stored them.
 * Calls reach it through the host thread, which claims the pending calls of
 * its sessions on each NOTIFY and queues them on their session's thread.
 * Answers go back through sessdb_call_finish (NOTIFY judge_session_reply).
 * Session threads share a small connection pool: they hold one only while
 * storing. On stop the worker says it is gone (its sessions are lost at once
 * for every reader) and ends every sandbox.
 */
#pragma once
#include "runner/sandbox.h"

struct judge_config;
struct lang_registry;
struct sesshost;

/* Starts the host thread. cfg and langs must outlive it; url is copied.
 * Returns 0 with *out, or -1 with err. */
int sesshost_start(struct sesshost **out, const struct judge_config *cfg,
		   const struct lang_registry *langs, enum sandbox_backend backend, const char *url,
		   char *err, size_t errlen);
/* Says the worker is gone, ends every session's sandbox, stops the threads and
 * frees h. NULL is fine. */
void sesshost_stop(struct sesshost *h);
