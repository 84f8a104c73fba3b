/* sessproc: the processes of a session a worker holds — their calls
 * (process_start, _input, _close_stdin, _signal, _wait, _list: sesscall.h) and
 * their live output.
 *
 * How it works. A process runs in the session's sandbox (runner/session/
 * session.h, session_proc_*). Its output goes to the stream
 * "proc:<session id>:<pid>" (outstream.h) as it is printed: a writer of its
 * own, begun when the process starts (a `start` event first), ended when it
 * ends (a `done` event holding its end as a stored reply: serve renders it,
 * judge/api/sessions_proc.c). The runner calls back from its reader thread, which
 * must not block: the writer of an ended process is closed by a short thread
 * of its own. Process calls run beside the session's cells (the host runs
 * each in a thread: sesshost.c), so a wait may block its caller up to the
 * call's wait.
 */
#pragma once
#include "judge/service/session/sesscall.h"

struct session;
struct sessproc;
struct db;
struct db_pool;

/* The processes of session session_id (the runner's s), whose output goes
 * through PostgreSQL with connections of out_pool (outstream_open_pooled;
 * it outlives p); base_env: what every process's
 * environment starts with ("K=V", NULL-terminated; kept, not copied). */
struct sessproc *sessproc_new(struct db_pool *out_pool, const char *session_id,
			      const char *const *base_env);
/* Runs process call c on the runner's session s: fills out (initialized
 * here). Any thread; a wait blocks up to c->proc.timeout_ms. */
void sessproc_call(struct sessproc *p, struct session *s, const struct sess_call *c,
		   struct sess_reply *out);
/* After the runner's session stopped (every process ended): waits for the
 * last writers to end, frees p. NULL is fine. */
void sessproc_free(struct sessproc *p);

/* A process's environment: base, then the call's env, a later K= replacing
 * an earlier one. A new NULL-terminated list (xstrvfree). Pure. */
char **sessproc_env(const char *const *base, const char *const *env);
/* The stream of process pid of session_id ("proc:<id>:<pid>"), in out. */
void sessproc_stream(const char *session_id, long pid, char *out, size_t len);
/* The highest pid of session_id whose output stream is still stored (0 when
 * none), or -1 with err. */
long sessproc_last_pid(struct db *db, const char *session_id, char *err, size_t errlen);
