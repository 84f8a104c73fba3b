/* prestart: sessions started ahead of need (driver running, ready reply
 * read), one pool per (backend, box size, driver spec). session_start takes
 * from it; a worker names what to keep started with prestart_prepare. */
#pragma once
#include <stdbool.h>

#include "runner/session/session.h"

/* Keeps sandbox_options' session_pool sessions like spec started ahead of need
 * in backend, with boxes of box_bytes (a worker calls it at start for each
 * language with a driver). session_start (session.h) then hands one over when its sb (of that
 * backend and box size, nothing run in it yet) and spec match: the pooled box
 * becomes sb's. A pooled session serves one session only. No-op when the
 * option is 0. */
void prestart_prepare(enum sandbox_backend backend, long box_bytes,
		      const struct session_spec *spec);
/* Hands the caller a started session from the pool matching sb and spec: the
 * pooled session's box and sandbox state become sb's (sb's own, empty box is
 * dropped). True with *out, false when none is ready (start one then). */
bool prestart_take(struct sandbox *sb, const struct session_spec *spec, struct session **out);
/* Waits until the pool of (backend, box_bytes, spec) holds at least count
 * started sessions, at most timeout_ms (tests and benchmarks: a worker that is
 * not saturated). True when it does. */
bool prestart_wait(enum sandbox_backend backend, long box_bytes, const struct session_spec *spec,
		   int count, long timeout_ms);
/* Stops the refill thread and every pooled session; registered with
 * sandbox_on_shutdown when the thread starts, so sandbox_global_shutdown
 * stops the pooled sessions' sandboxes before the backends. */
void prestart_stop(void);
