/* sesspool: how a worker starts a session's sandbox and driver, and asks the
 * runner to keep some started ahead of need.
 *
 * A create should not wait for a sandbox and an interpreter to start (the
 * target is 60 ms): at start the worker names, for each language with a
 * driver, the session its creates get without limits of their own
 * (sesspool_prepare: the default limits of judge.ini's [sessions]), and the
 * runner keeps [sandbox] session_pool of each started (runner/session/session.h,
 * prestart_prepare). A session opened with exactly that spec is handed one
 * over by session_start; any other starts its own. Both sides build the spec
 * here, so they match.
 */
#pragma once
#include <stddef.h>

#include "judge/service/sessreq.h"
#include "runner/sandbox.h"

struct judge_config;
struct lang;
struct lang_registry;
struct session;

/* Opens a sandbox of backend in slot with limits (disk_mb its box) and starts
 * lang's driver in it. Returns 0 with *sb and *s set, or -1 with err (*sb may
 * be set then: close it). */
int sesspool_open(const struct judge_config *cfg, enum sandbox_backend backend,
		  const struct lang *lang, const struct sess_limits *limits, int slot,
		  struct sandbox **sb, struct session **s, char *err, size_t errlen);
/* Names each language's default session to the runner's pool (a no-op when
 * [sandbox] session_pool is 0). */
void sesspool_prepare(const struct judge_config *cfg, const struct lang_registry *langs,
		      enum sandbox_backend backend);
