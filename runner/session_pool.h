/* session_pool: sessions started ahead of need (driver running, ready reply
 * read), one pool per (backend, box size, driver spec), and the deep copy of a
 * session_spec that sessions and pools keep. Internal to runner/ (session.c);
 * the public calls are session_prepare() and session_pool_size() in session.h. */
#pragma once
#include <stdbool.h>

#include "runner/session.h"

/* Deep copy of src into dst (argv, env, ro_paths, warm_argv, preload, limits). */
void session_spec_copy(struct session_spec *dst, const struct session_spec *src);
void session_spec_release(struct session_spec *s);
/* Hands the caller a started session from the pool matching sb and spec: the
 * pooled session's box and sandbox state become sb's (sb's own, empty box is
 * dropped). True with *out, false when none is ready (start one then). */
bool session_pool_take(struct sandbox *sb, const struct session_spec *spec, struct session **out);
/* session_start without the pool (session.c): what the pool itself calls. */
int session_start_new(struct sandbox *sb, const struct session_spec *spec, struct session **out,
		      char *err, size_t errlen);
/* Points s at the workspace sb (the pool moved its box there). */
void session_rebind(struct session *s, struct sandbox *sb);
/* Waits until the pool of (backend, box_bytes, spec) holds a started session,
 * at most timeout_ms (tests and benchmarks: a worker that is not saturated).
 * True when it does. */
bool session_pool_wait(enum sandbox_backend backend, long box_bytes,
		       const struct session_spec *spec, long timeout_ms);
/* Stops the refill thread and every pooled session (sandbox_global_shutdown). */
void session_pool_stop(void);
