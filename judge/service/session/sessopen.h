/* sessopen: how a worker starts a session's sandbox and driver, and asks the
 * runner to keep some started ahead of need.
 *
 * A create should not wait for a sandbox and an interpreter to start (the
 * target is 60 ms): at start the worker names, for each language with a
 * driver, the session its creates get without limits of their own
 * (sessopen_prepare: the default limits of judge.ini's [sessions]), and the
 * runner keeps [sandbox] session_pool of each started (runner/session/session.h,
 * prestart_prepare). A session opened with exactly that spec is handed one
 * over by session_start; any other starts its own. Both sides build the spec
 * here, so they match.
 */
#pragma once
#include <stddef.h>

#include "judge/grading/limits.h"
#include "runner/sandbox.h"

struct install_options;
struct judge_config;
struct lang;
struct lang_registry;
struct session;

/* What every session of a worker shares, from its languages. */
struct sessopen_common {
	/* the read-only folders of every language with a session driver: a
	 * session's sandbox binds them all, so that a context of any of them
	 * may start in it later */
	char **ro_paths;
	/* what a process's environment starts with: PATH with the folders of
	 * those languages' programs first, HOME (the session folder), TMPDIR,
	 * the locale, and where installed packages are found */
	char **proc_env;
	/* the package folders (install_folders), made in every session's box
	 * before its driver starts */
	char **box_dirs;
};
void sessopen_common_init(struct sessopen_common *c, const struct lang_registry *langs,
			  const struct install_options *inst);
void sessopen_common_release(struct sessopen_common *c);

/* A session's way out: the network namespace of its egress proxy
 * (sessegress.h) and what its driver's environment gets besides its
 * language's (the proxy variables). */
struct sessopen_net {
	int netns_fd;
	const char *const *env; /* "K=V", NULL-terminated */
};

/* Opens a sandbox of backend in slot with limits (disk_mb its box), makes the
 * package folders of inst's managers and starts lang's driver in it (the
 * session's default context); net NULL: no network at all, else its sandbox
 * joins net's namespace. Returns 0 with *sb and *s set, or -1 with err (*sb
 * may be set then: close it). */
int sessopen_open(const struct judge_config *cfg, const struct sessopen_common *common,
		  enum sandbox_backend backend, const struct lang *lang,
		  const struct limits_session *limits, int slot, const struct sessopen_net *net,
		  struct sandbox **sb, struct session **s, char *err, size_t errlen);
/* The first half of sessopen_open: the sandbox, nothing started (the caller
 * may fill the box first). 0, or -1 with err (*sb may be set then: close it). */
int sessopen_sandbox(enum sandbox_backend backend, const struct limits_session *limits, int slot,
		     struct sandbox **sb, char *err, size_t errlen);
/* The second half: lang's driver started in sb (the package folders made
 * first), or, with restore_dir (a session checkpoint,
 * runner/session/session.h), the checkpointed session restored there with
 * every context's state. 0 with *s, or -1 with err. */
int sessopen_start(const struct judge_config *cfg, const struct sessopen_common *common,
		   const struct lang *lang, const struct limits_session *limits,
		   const struct sessopen_net *net, struct sandbox *sb, const char *restore_dir,
		   struct session **s, char *err, size_t errlen);
/* Names each language's default session to the runner's pool (a no-op when
 * [sandbox] session_pool is 0). */
void sessopen_prepare(const struct judge_config *cfg, const struct sessopen_common *common,
		      const struct lang_registry *langs, enum sandbox_backend backend);
