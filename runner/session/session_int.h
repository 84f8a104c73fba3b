/* session_int: what session.c (the session, its contexts and cells) and
 * session_proc.c (its processes) share; nothing else includes it. */
#pragma once
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/clock.h"
#include "common/strbuf.h"
#include "runner/session/session.h"

#define POLL_MS		   10
#define INTERRUPT_GRACE_MS 1000
#define START_TIMEOUT_MS   20000
#define SEND_TIMEOUT_MS	   10000
#define TOKEN_HEX	   32
/* sessd's own life: CPU and wall limits of its sandbox (cells have their own) */
#define SANDBOX_LIFE_MS (7L * 24 * 3600 * 1000)
#define REPLY_MAX	(8 << 20)
#define PENDING_MAX	(1 << 20) /* a context's stdout kept between cells */
#define ERROUT_MAX	4096	  /* a starting driver's stderr kept for its error */

enum ctx_state { CTX_FREE, CTX_STARTING, CTX_READY, CTX_DEAD };

struct cell_run;

struct context {
	enum ctx_state state;
	unsigned long sid; /* sessd's id of its current driver */
	char **argv, **env, *cwd;
	char token[TOKEN_HEX + 2]; /* the hex token and a blank: what starts a reply */
	struct strbuf pending;	   /* stdout read but not yet handed out */
	struct strbuf errout;	   /* stderr while it starts */
	struct strbuf reply;	   /* its ready reply */
	bool got_reply, failed, ended, drained;
	int status;	 /* wait status, when ended */
	char fail[256];	 /* why its spawn failed */
	bool state_lost; /* restarted with no cell to say so: the next one does */
	struct cell_run *cell;
};

struct proc {
	bool used;
	long pid;
	unsigned long sid;
	pid_t os_pid;
	char **argv, *cwd, tag[64];
	bool started, failed, running, exited, timed_out, truncated;
	bool stdin_open, stdin_closed, mute_sent;
	int exit_code, signal;
	long cpu_ms, output_bytes, out_n, err_n;
	char message[256];
	session_proc_exit_fn on_start;
	session_proc_output_fn on_output;
	session_proc_exit_fn on_exit;
	void *arg;
};

struct session {
	struct sandbox *sb;
	struct session_spec spec; /* deep copy */
	struct sandbox_proc *proc;
	int in_fd, out_fd, err_fd, wake[2];
	pthread_t reader;
	bool reader_on;
	/* lock: the state below and the contexts' and processes'; wlock: writing
	 * to sessd (in_fd); plock: held while proc is used or replaced (a cell's
	 * whole run, a restart of the sandbox), never taken under lock */
	pthread_mutex_t lock, wlock, plock;
	pthread_cond_t cond;
	bool ready, gone; /* sessd said R; its stdout ended */
	bool pooled;	  /* handed over by prestart_take, started ahead */
	bool halted;	  /* session_halt: no restart, no more calls */
	/* CPU of the sandboxes that ended (ms), and the last CPU read of the one
	 * now (under wlock, like proc) */
	long cpu_before_ms, cpu_now_ms;
	unsigned long next_sid;
	long next_pid;
	struct context ctx[SESSION_MAX_CONTEXTS];
	struct proc procs[SESSION_MAX_PROCS];
	struct strbuf rbuf; /* the reader's frames read so far */
};

static inline void session_lock(struct session *s)
{
	pthread_mutex_lock(&s->lock);
}

static inline void session_unlock(struct session *s)
{
	pthread_mutex_unlock(&s->lock);
}

/* Waits on the session's condition until deadline (clock_mono_ms), at most
 * POLL_MS; lock held. */
static inline void session_wait_until(struct session *s, int64_t deadline_ms)
{
	int64_t left = deadline_ms - clock_mono_ms();
	struct timespec ts = clock_mono_after(left < 0 ? 0 : left > POLL_MS ? POLL_MS : left);
	pthread_cond_timedwait(&s->cond, &s->lock, &ts);
}

/* Frames to sessd (init/sessd_proto.h), under the write lock, never under
 * lock: 0 or -errno (-ETIMEDOUT: sessd did not take it by deadline
 * (clock_mono_ms); -EPIPE: it is gone). The payload is the parts' bytes. */
int session_send_frame(struct session *s, char op, unsigned long id, const char *const *parts,
		       const size_t *lens, int nparts, int64_t deadline);
/* A frame with a text payload (or none), by SEND_TIMEOUT_MS. */
int session_send_simple(struct session *s, char op, unsigned long id, const char *payload);
/* sig to child id's process group. */
void session_send_signal(struct session *s, unsigned long id, int sig);
/* Starts child id: argv with env, in cwd (absolute inside; NULL: /box), its
 * stdin a pipe when with_stdin, killed after timeout_ms (0: never). */
int session_send_spawn(struct session *s, unsigned long id, bool with_stdin, const char *cwd,
		       long timeout_ms, const char *const *argv, const char *const *env);
/* The sandbox again after it ended (sessd gone), every context with a fresh
 * driver (their state lost, but keep's: its cell says so itself). Under
 * plock. 0, or -1 with err (also once halted). */
int session_restart(struct session *s, struct context *keep, char *err, size_t errlen);

/* A new session around sb with spec (copied) and context 0 set, no sandbox
 * yet; NULL with err. Free it with session_stop. */
struct session *session_alloc(struct sandbox *sb, const struct session_spec *spec, char *err,
			      size_t errlen);
/* Starts sessd's sandbox (restored from restore_dir when not NULL: sessd and
 * its children as they were) and the reader. 0, or -1 with err. */
int session_sandbox_begin(struct session *s, const char *restore_dir, char *err, size_t errlen);
/* Stops the reader and the sandbox; running processes end with why, contexts
 * are dead (their specs kept). */
void session_sandbox_end(struct session *s, const char *why);
/* Sets c's driver spec (copies); c is dead until launched. */
void session_ctx_set(struct context *c, const char *const *argv, const char *const *env,
		     const char *cwd);
/* Starts c's driver with a new token and waits for its ready reply. 0, or -1 with err. */
int session_ctx_launch(struct session *s, struct context *c, char *err, size_t errlen);

/* session_proc.c: a frame of process p (lock held; from the reader); p's end
 * (status a wait status, or -1 with why when the session ended it; lock
 * held); p's slot emptied. */
void session_proc_frame(struct session *s, struct proc *p, char op, const char *data, size_t len);
void session_proc_ended(struct proc *p, int status, long cpu_ms, bool timed_out, const char *why);
void session_proc_clear(struct proc *p);
