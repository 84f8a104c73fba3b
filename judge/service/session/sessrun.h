/* sessrun: runs one call (sesscall.h) in a session the worker holds, and answers
 * it typed: a struct sess_reply, or a domain error (enum sess_err), never an
 * HTTP status.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>

#include "judge/grading/limits.h"
#include "judge/service/session/sesscall.h"

struct judge_config;
struct lang;
struct lang_registry;
struct sandbox;
struct session;
struct install_options;

/* A code context of the session: its id, language and working directory
 * (relative to the session folder), and the runner's number of it. */
struct sessrun_context {
	char id[SESS_ID_MAX]; /* "" = a free slot */
	const struct lang *lang;
	char *cwd;
	int rctx;
	bool lang_default; /* its language's default context (execute's language) */
};

/* What a call may use of its session (owned by the session's thread). */
struct sessrun_env {
	const struct judge_config *cfg;
	const struct lang_registry *langs;
	const struct lang *lang; /* the session's: its default context's */
	/* what every driver starts with besides its language's ("K=V"; NULL:
	 * nothing): the session's own variables and its proxy's */
	const char *const *drv_env;
	struct sandbox *sb;
	struct session *s;
	struct sessrun_context contexts[SESS_MAX_CONTEXTS]; /* [0]: the default */
	struct limits_session limits;
	long execution_count; /* cells run so far; execute adds one */
	/* restored from an image (sessimage.h): the next cell says restarted,
	 * since its variables did not come back */
	bool restored;
	/* why its memory did not come back with it ("" = no reason known) */
	char restored_why[200];
	/* moved here from its periodic checkpoint, this old (the next cell says so) */
	bool from_checkpoint;
	double checkpoint_age_s;
	const struct install_options *install;
	/* Optional: each piece of a cell's output as it is printed (fd 1 or 2). */
	void (*on_output)(void *arg, int fd, const char *data, size_t len);
	/* Optional: a cell's context was found and its code starts now, as
	 * execution n (a live stream's first event: serve answers a refused
	 * cell, e.g. no such context, with a status instead of a stream) */
	void (*on_start)(void *arg, long n);
	void *output_arg;
};

/* Runs call c (execute, install, files, contexts: the serial kinds but close,
 * which the session's host answers itself) and fills out (initialized here;
 * the caller releases it). */
void sessrun_call(struct sessrun_env *env, const struct sess_call *c, struct sess_reply *out);
/* Sets env's default context (the session's language, runner context 0);
 * release frees what the contexts hold. */
void sessrun_env_init(struct sessrun_env *env);
void sessrun_env_release(struct sessrun_env *env);
/* The contexts but the default one, as an image keeps them: [{"id", "language",
 * "cwd", "lang_default"}] (caller owns it). */
cJSON *sessrun_contexts_json(const struct sessrun_env *env);
/* Starts again the contexts of arr (sessrun_contexts_json) with their ids, in a
 * session just restored. Returns 0, or -1 with err (the first that failed). */
int sessrun_contexts_restore(struct sessrun_env *env, const cJSON *arr, char *err, size_t errlen);
/* Takes the contexts of arr back as they are, in a session restored with its
 * memory (session_restore: the runner's contexts are there, same numbers).
 * Returns 0, or -1 with err. */
int sessrun_contexts_adopt(struct sessrun_env *env, const cJSON *arr, char *err, size_t errlen);
