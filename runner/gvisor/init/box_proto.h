/* box_proto: the wire format between gvisor.c (host) and box_init (inside the sandbox).
 *
 * A sandbox serves runs of one runtime, one at a time: those of one workspace,
 * then (reuse, see gvisor.c) those of further workspaces of the same reuse key.
 * Init -> host, on the container's stdout, once warm: one byte 'R' (ready).
 * Host -> init, on the container's stdin (a pipe), per run: one job:
 *     struct bx_job, then argc NUL-terminated argv strings, then envc env strings,
 *     then filter_len seccomp instructions (8 bytes each, the program's policy:
 *     scmp.c); bx_job.len counts all of it. The program's stdin is the host's
 *     file <control dir>/in-<stdin_seq> (seen inside as /.b/in-N), or empty.
 *     A new name for every run: the sentry may cache what it has seen.
 *     The box of the job is the host's <control dir>/box-<box_seq> (/.b/box-N):
 *     when it is not the one init has at /box, init detaches the old /box and
 *     binds the new one there. A new number for every box bound, never a name
 *     used before (a new workspace, or the same box after a host write).
 * Init -> host, on the container's stdout, after every process of the run is dead:
 *     struct bx_status (fixed size), then the job's token: the last bytes of
 *     the run's output. Only init has read the token, so the program cannot
 *     forge the end of its run: the host accepts a trailer only with it.
 * The host closes the job pipe to end the sandbox (init exits at EOF).
 *
 * A live job (BX_JOB_LIVE, sandbox_start): the program gets the job pipe itself
 * as its stdin and the container's stdout and stderr, which init closes on its
 * side, so their EOF means the program's processes are gone. Its end is not
 * written on stdout (the caller reads that stream) but into the control file
 * /.b/status (struct bx_status, then the token); then init exits and the
 * sandbox with it: the pipe's state is unknown, nothing may run after it.
 * SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to init (`runsc
 * kill <id> <sig>`) are passed on to the program's process group.
 */
#pragma once
#include <stdint.h>

#define BX_JOB_MAGIC	0x314a4258u /* "XBJ1" */
#define BX_STATUS_MAGIC 0x31534258u /* "XBS1" */
#define BX_TOKEN_LEN	16
#define BX_MAX_JOB	(1u << 20)

struct bx_job {
	uint32_t magic;
	uint32_t len; /* bytes of the whole job, this struct included */
	int64_t cpu_ms;
	int64_t wall_ms;   /* init kills the tree after this much real time too */
	int64_t memory_kb; /* tree RSS above this ends the run (memory_limit) */
	int64_t processes; /* RLIMIT_NPROC of the box uid */
	int64_t file_bytes;
	int64_t open_files;
	int64_t stack_kb;
	uint32_t uid, gid;
	uint32_t argc, envc;
	uint32_t filter_len; /* seccomp BPF instructions (struct sock_filter) after the env */
	uint32_t stdin_seq;  /* the program's stdin is /.b/in-<stdin_seq>; 0 = empty */
	int64_t tmp_bytes;   /* size of the run's fresh /tmp */
	uint32_t job_flags;  /* BX_JOB_* */
	uint32_t box_seq;    /* the box of the job is /.b/box-<box_seq> (>= 1) */
	uint8_t token[BX_TOKEN_LEN];
};

#define BX_JOB_LIVE    1u	    /* see above */
#define BX_JOB_HOME    2u	    /* the box at /home/user too (run_spec.box_home) */
#define BX_STATUS_FILE "/.b/status" /* a live job's end */

enum bx_kind {
	BX_EXITED = 1,	    /* code = exit status */
	BX_SIGNALED = 2,    /* code = signal */
	BX_EXEC_FAILED = 3, /* err = errno of execve */
	BX_SETUP_FAILED = 4 /* err = errno; init could not prepare the run (sandbox fault) */
};

/* flags */
#define BX_CPU_LIMIT  1u /* init killed the tree for CPU time */
#define BX_MEM_LIMIT  2u /* init killed the tree for memory */
#define BX_WALL_LIMIT 4u

struct bx_status {
	uint8_t token[BX_TOKEN_LEN];
	uint32_t magic;
	int32_t kind;
	int32_t code;
	int32_t err;
	uint32_t flags;
	uint32_t setup_step;  /* BX_SETUP_FAILED: which step (see box_init.c) */
	int64_t cpu_us;	      /* user+system of every process of the run */
	int64_t maxrss_kb;    /* largest peak RSS of a process of the run */
	int64_t wall_us;      /* fork of the program to the death of the last process */
	int64_t peak_tree_kb; /* largest sum of anonymous memory seen while polling */
	int64_t file_rss_kb;  /* largest file-backed RSS of a process seen while polling */
	int64_t t_job, t_fork, t_exec, t_main,
	    t_end; /* CLOCK_MONOTONIC µs inside, for timing logs */
};
