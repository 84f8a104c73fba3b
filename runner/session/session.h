/* session: a long-lived sandbox around a box, running a language driver that
 * keeps the user's state between cells (languages/drivers/PROTOCOL.md).
 *
 * The box is the session folder: sandbox_open() makes it, the files API reads
 * and writes it through sandbox.h's file calls while the session runs, and
 * what the host writes there is what the next cell sees. Limits are per cell
 * (CPU, wall, output) and for the driver's whole life (memory, processes,
 * files); a cell that breaks a limit ends as that status and, when the driver
 * did not survive it, a fresh driver is started (res->restarted: state lost).
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"
#include "runner/sandbox.h"

struct session_spec {
	const char *const *argv;     /* the driver, argv[0] absolute */
	const char *const *env;	     /* "K=V"; the runner adds JUDGE_TOKEN */
	const char *const *ro_paths; /* host folders bound read-only (runtime, drivers) */
	/* cpu_ms and wall_ms: the default of each cell; the rest hold for the
	 * driver's whole life (memory_kb, processes, file_bytes, open_files, tmp_bytes)
	 * or for each cell's output (stdout_bytes, stderr_bytes). All > 0. */
	struct run_limits limits;
	long start_timeout_ms;	      /* driver start to its ready reply; 0 = 20000 */
	const char *const *warm_argv; /* as in run_spec: a pool may start the runtime ahead */
	const char *const *preload;
};

/* Called from inside session_exec with each piece of output as it arrives
 * (fd 1 stdout, 2 stderr; never the driver's reply). */
typedef void (*session_output_fn)(void *arg, int fd, const char *data, size_t len);

struct cell_spec {
	const char *code;
	size_t code_len;
	const char *stdin_data; /* may be NULL */
	size_t stdin_len;
	long cpu_ms;		     /* 0 = the session's */
	long wall_ms;		     /* 0 = the session's */
	session_output_fn on_output; /* may be NULL */
	void *arg;
};

struct cell_result {
	/* RUN_OK: the cell ran to its end (the code may still have raised: see
	 * reply); RUN_TIMEOUT, RUN_MEMORY_LIMIT, RUN_OUTPUT_LIMIT; RUN_RUNTIME_ERROR:
	 * the driver died (exit(), crash); RUN_INTERNAL_ERROR with message. */
	enum run_status status;
	struct strbuf out, err;
	bool out_truncated, err_truncated;
	struct strbuf reply; /* the driver's JSON (PROTOCOL.md), empty when none came */
	long cpu_ms, wall_ms, memory_kb;
	bool restarted; /* the driver was started again after this cell: state lost */
	char message[256];
};

struct session;

/* Starts the driver in a long-lived sandbox of sb's backend around sb's box and
 * waits for its ready reply. 0 with *out, or -1 with err. One session per sb. */
int session_start(struct sandbox *sb, const struct session_spec *spec, struct session **out,
		  char *err, size_t errlen);
/* Runs one cell (one thread at a time per session). Always fills res (init it
 * with cell_result_init); returns 0, or -1 only on invalid arguments. */
int session_exec(struct session *s, const struct cell_spec *cell, struct cell_result *res);
/* Host memory of everything the session's sandbox holds (driver, and for
 * gVisor its sentry and gofer), in KiB; -1 when unknown. Not while another
 * thread is in session_exec (a restart frees what it reads). */
long session_memory_kb(struct session *s);
/* Ends the driver and its sandbox (not the box: sandbox_close does that). */
void session_stop(struct session *s);
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
