/* session: a long-lived sandbox around a box, holding code contexts (a
 * language driver each, keeping the user's state between cells:
 * languages/drivers/PROTOCOL.md) and processes (commands with argv, cwd and
 * env, their output streamed, stdin fed and closed, signalled, waited).
 *
 * Everything runs inside one live sandbox (sandbox_start): its program is
 * sessd (init/sessd.c), which starts contexts' drivers and processes as its
 * children and relays their streams (init/sessd_proto.h). So every process of
 * a session is in the session's namespaces, cgroup and limits, under its
 * seccomp policy and uid, on both backends.
 *
 * The box is the session folder: sandbox_open() makes it, the files API reads
 * and writes it through sandbox.h's file calls while the session runs, and
 * what the host writes there is what the next cell sees. Limits are per cell
 * (CPU, wall, output) and for the sandbox's whole life (memory, processes,
 * files, shared by every context and process); a cell that breaks a limit ends
 * as that status and, when its driver did not survive it, a fresh driver is
 * started in that context (res->restarted: its state lost). When the sandbox
 * itself ends (gVisor's memory limit), it is started again with a fresh
 * driver in every context, and every process ends.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/strbuf.h"
#include "runner/sandbox.h"

/* What a session may hold at once. */
#define SESSION_MAX_CONTEXTS 8
#define SESSION_MAX_PROCS    32

/* A language driver (PROTOCOL.md). */
struct session_driver {
	const char *const *argv; /* argv[0] absolute */
	const char *const *env;	 /* "K=V"; the runner adds JUDGE_TOKEN */
};

struct session_spec {
	/* The default context's driver (context 0, started with the session). */
	const char *const *argv;
	const char *const *env;
	/* Host folders bound read-only: the runtimes and drivers of every
	 * context the session may start (the sandbox's mounts are fixed at its
	 * start). The runner adds sessd's own. */
	const char *const *ro_paths;
	/* cpu_ms and wall_ms: the default of each cell; the rest hold for the
	 * sandbox's whole life, for every context and process together (memory_kb,
	 * processes, file_bytes, open_files, tmp_bytes), or for each cell's output
	 * (stdout_bytes, stderr_bytes). All > 0. */
	struct run_limits limits;
	/* The CPU bandwidth of the whole session (run_spec.cpu_millis): every
	 * context and process, background ones included; 0 = unlimited. */
	long cpu_millis;
	/* Its CPU weight against other sandboxes (run_spec.cpu_weight); 0 = the kernel's. */
	long cpu_weight;
	long start_timeout_ms;	      /* a driver's start to its ready reply; 0 = 20000 */
	const char *const *warm_argv; /* as in run_spec: a pool may start the runtime ahead */
	const char *const *preload;
	/* Folders made in the box (sandbox_file_mkdir) before the driver starts:
	 * the package folders, which a driver started without them may never
	 * look at again. Part of the spec, not done by the caller, so that a
	 * pooled session (prestart.h) is made with them too. */
	const char *const *box_dirs;
	/* > 0: the sandbox joins this network namespace (run_spec.net_ns_fd: a
	 * session's egress proxy), not an empty one; the caller keeps it open
	 * while the session lives. Such a session never comes from a pool. Only a
	 * backend that joins namespaces (native) can start it. */
	int net_ns_fd;
};

/* Called with each piece of a cell's output as it arrives (fd 1 stdout, 2
 * stderr; never the driver's reply), from the session's reader thread: it
 * must not block nor call back into the session. */
typedef void (*session_output_fn)(void *arg, int fd, const char *data, size_t len);

struct cell_spec {
	int context; /* 0: the default */
	const char *code;
	size_t code_len;
	const char *stdin_data; /* may be NULL */
	size_t stdin_len;
	const char *const *env;	     /* the cell's own variables, "K=V" (may be NULL) */
	long cpu_ms;		     /* 0 = the session's */
	long wall_ms;		     /* 0 = the session's */
	session_output_fn on_output; /* may be NULL */
	void *arg;
};

/* How a cell ended: the runner decides it once (cell_decide in session.c),
 * from the facts of the cell and the driver's reply; every front shows it as
 * it is. The names are the API's. */
enum cell_status {
	CELL_OK,	     /* the cell ran to its end and its code raised nothing */
	CELL_ERROR,	     /* the code raised (see error), or ended the driver (exit(), crash) */
	CELL_TIMEOUT,	     /* over its CPU or wall limit */
	CELL_MEMORY_LIMIT,   /* the session's memory ran out */
	CELL_OUTPUT_LIMIT,   /* stdout over its cap */
	CELL_INTERNAL_ERROR, /* the session's own fault (no driver, a broken reply): message */
	CELL_STATUS_COUNT
};
/* "ok", "error", "timeout", "memory_limit", "output_limit", "internal_error". */
const char *cell_status_name(enum cell_status s);

struct cell_result {
	enum cell_status status;
	struct strbuf out, err;
	bool out_truncated, err_truncated;
	struct strbuf reply; /* the driver's JSON (PROTOCOL.md), empty when none came */
	/* The reply, read: the last expression's value (NULL: none), and what the
	 * code raised (has_error: name, value, traceback; "" when the driver gave
	 * none). Owned. */
	char *result;
	bool has_error;
	char *error_name, *error_value, *error_traceback;
	/* The cell's rich results (PROTOCOL.md "results"): the reply's JSON array
	 * as text, NULL when none; results_dropped: those the driver left out. */
	char *results;
	long results_dropped;
	long cpu_ms, wall_ms, memory_kb;
	/* The context's driver was started again: its state is lost (after this
	 * cell, or before it when the sandbox had to start again meanwhile). */
	bool restarted;
	char message[256];
};

struct session;

/* Starts a session around sb's box: sessd, then the default context's driver,
 * and waits for its ready reply. 0 with *out, or -1 with err. One session per
 * sb. Takes a started one from prestart's pools when one matches. */
int session_start(struct sandbox *sb, const struct session_spec *spec, struct session **out,
		  char *err, size_t errlen);
/* Runs one cell in cell->context (one cell at a time per context). Always
 * fills res (init it with cell_result_init); returns 0, or -1 only on invalid
 * arguments (no such context). */
int session_exec(struct session *s, const struct cell_spec *cell, struct cell_result *res);
/* Interrupts the cells running now (any thread): their drivers get SIGINT as
 * at a limit, but the cell ends as the driver answers it (Python: a
 * KeyboardInterrupt error; its state kept), or, not answering within the
 * grace, as a runtime error with the driver started again. Returns how many
 * cells it interrupted (0: none was running). */
int session_interrupt(struct session *s);
/* Host memory of everything the session's sandbox holds (every driver and
 * process, and for gVisor its sentry and gofer), in KiB; -1 when unknown. */
long session_memory_kb(struct session *s);
/* What the session used: its sandbox's cgroup, summed over the sandboxes it
 * had (one more after each restart), background processes included. */
struct session_usage {
	long cpu_ms;	   /* CPU time of everything it ran, since its start */
	long memory_kb;	   /* memory its sandbox holds now */
	long tasks;	   /* processes plus threads now (sandbox_proc_tasks) */
	long pids_refused; /* forks its pids limit refused */
	long throttled_ms; /* time its CPU limit held it back */
	long disk_kb;	   /* what its folder (the box) holds now; -1 unknown */
};
/* Process ids of s start after pid from now on (never lower than they
 * are): a resumed session's new processes must not take the ids of the
 * processes before its pause, whose output streams are still stored. */
void session_pids_after(struct session *s, long pid);
/* Whether s was started ahead and handed over by the pool (prestart.h). */
bool session_pooled(const struct session *s);
/* Reads s's usage now; never waits for a cell (any thread). 0, or -errno
 * (-ESRCH: no sandbox now; cpu_ms still holds what the ended ones used). */
int session_usage(struct session *s, struct session_usage *out);
/* Kills the session's sandbox now, from any thread, even while a cell runs:
 * that cell ends at once, and no restart follows (as after session_halt); the
 * caller then ends the session with session_halt or session_stop. */
void session_kill(struct session *s);
/* Ends every context and process and the sandbox at once: whoever waits in a
 * call of another thread returns, and calls from now on fail (no restart).
 * The struct stays valid until session_stop. */
void session_halt(struct session *s);
/* session_halt, then frees s (not the box: sandbox_close does that). No other
 * thread may be in a call of s. NULL is fine. */
void session_stop(struct session *s);

/* ---- checkpoints (session_ckpt.c) ---- */

/* Saves the whole session into the empty folder dir: its sandbox's memory and
 * processes (sandbox_proc_checkpoint: gVisor only, not with a network
 * namespace) and the host's side of its contexts (session.json). Processes of
 * session_proc_start end first (their callers' streams do not survive a
 * move). The sandbox ends: the session is halted (free it with session_stop).
 * Not the box's files: the caller keeps them. 0, or -1 with err; on -1 the
 * session runs on when the sandbox did (*alive), else it is halted. */
int session_checkpoint(struct session *s, const char *dir, bool *alive, char *err, size_t errlen);
/* A session restored from dir (session_checkpoint's) around sb's box, which
 * holds the files it had: every context's driver with its state, same
 * numbers. spec must be the checkpointed session's. 0 with *out, or -1 with
 * err (nothing left running). */
int session_restore(struct sandbox *sb, const struct session_spec *spec, const char *dir,
		    struct session **out, char *err, size_t errlen);

/* ---- code contexts ---- */

/* Starts a context running driver d with its working directory at cwd (an
 * absolute path inside, e.g. "/box/work"; NULL = /box) and waits for its
 * ready reply. 0 with *ctx (1 ..), or -1 with err (-1 and "too many" when the
 * session holds SESSION_MAX_CONTEXTS). */
int session_context_start(struct session *s, const struct session_driver *d, const char *cwd,
			  int *ctx, char *err, size_t errlen);
/* A fresh driver in context ctx (its state lost, its number kept). 0, or -1 with err. */
int session_context_restart(struct session *s, int ctx, char *err, size_t errlen);
/* Stops context ctx's driver and forgets it (not the default: -1). 0 or -1. */
int session_context_stop(struct session *s, int ctx);

/* ---- processes ---- */

/* A process's state. */
struct session_proc_info {
	long pid;     /* the session's number of it (1, 2 ...), never reused */
	pid_t os_pid; /* its pid inside the sandbox (0 before its start) */
	char **argv;  /* owned (session_proc_info_release) */
	char *cwd;
	char tag[64];
	bool running;
	bool exited; /* ended: exited with exit_code, else killed by signal */
	int exit_code, signal;
	bool timed_out;	   /* killed at its lifetime */
	bool truncated;	   /* its output passed output_bytes: the rest was dropped */
	long cpu_ms;	   /* when ended */
	char message[256]; /* why the session ended it, "" = it ended by itself */
};
void session_proc_info_release(struct session_proc_info *p);

typedef void (*session_proc_output_fn)(void *arg, long pid, int fd, const char *data, size_t len);
typedef void (*session_proc_exit_fn)(void *arg, const struct session_proc_info *info);

struct session_proc_spec {
	const char *const *argv; /* argv[0] a path, or a name looked up in env's PATH */
	const char *const *env;	 /* "K=V": all of it */
	const char *cwd;	 /* absolute inside; NULL = /box */
	bool stdin_open;	 /* a pipe on its stdin (else /dev/null) */
	long timeout_ms;	 /* its lifetime; 0 = the session's */
	long output_bytes;	 /* of stdout and of stderr relayed, each (> 0) */
	const char *tag;	 /* the caller's name for it; may be NULL */
	/* From the session's reader thread: must not block nor call back into
	 * the session. Any may be NULL. on_start comes first (before any output
	 * and before session_proc_start returns), on_exit last, once each. */
	session_proc_exit_fn on_start;
	session_proc_output_fn on_output;
	session_proc_exit_fn on_exit;
	void *arg;
};

/* Starts a process and waits for it to start. 0 with *pid, or -1 with err
 * (no such program, a cwd that is not a folder, too many processes). */
int session_proc_start(struct session *s, const struct session_proc_spec *spec, long *pid,
		       char *err, size_t errlen);
/* Bytes for its stdin (written in the background, in order). 0, -ESRCH (no
 * such running process), -EPIPE (no stdin, or closed). */
int session_proc_input(struct session *s, long pid, const void *data, size_t len);
/* EOF on its stdin once what it was given is written. 0, -ESRCH, -EPIPE. */
int session_proc_close_stdin(struct session *s, long pid);
/* sig to its process group. 0, -ESRCH (none running of that pid). */
int session_proc_signal(struct session *s, long pid, int sig);
/* Its state, after waiting at most timeout_ms for its end (0: now). 0 with
 * *out (release it), -ESRCH when the session has none of that pid. */
int session_proc_get(struct session *s, long pid, long timeout_ms, struct session_proc_info *out);
/* Every process, running and ended (the last SESSION_MAX_PROCS), by pid.
 * *out is malloc'd: release each, then free it. */
int session_proc_list(struct session *s, struct session_proc_info **out, size_t *n);

/* ---- for prestart (prestart.h) ---- */

/* Deep copy of src into dst (argv, env, ro_paths, warm_argv, preload, limits);
 * release frees it. Sessions and prestart's pools keep such copies. */
void session_spec_copy(struct session_spec *dst, const struct session_spec *src);
void session_spec_release(struct session_spec *s);
/* session_start without prestart's pools: what the pools themselves call. */
int session_start_new(struct sandbox *sb, const struct session_spec *spec, struct session **out,
		      char *err, size_t errlen);
/* Points s at the workspace sb (prestart moved its box there, sandbox_swap). */
void session_rebind(struct session *s, struct sandbox *sb);

void cell_result_init(struct cell_result *res);
void cell_result_release(struct cell_result *res);
