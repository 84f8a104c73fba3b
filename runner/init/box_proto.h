/* box_proto: the wire format between gvisor.c (host) and box_init (inside the sandbox).
 *
 * Init -> host, on the container's stdout, once warm: one byte 'R' (ready).
 * Host -> init, on the container's stdin (a pipe): one job, then the program's
 * stdin bytes up to EOF (the program reads them from the same pipe, so they are
 * never copied by init):
 *     struct bx_job, then argc NUL-terminated argv strings, then envc env strings,
 *     then filter_len seccomp instructions (8 bytes each, the program's policy:
 *     scmp.c); bx_job.len counts all of it.
 * Init -> host, on the container's stdout, after every process of the run is dead:
 *     struct bx_status (fixed size), the last bytes of the stream. It carries the
 *     token of the job, which only init has read, so the program cannot forge it:
 *     the host accepts a trailer only with the right token.
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
	uint32_t pad;
	uint8_t token[BX_TOKEN_LEN];
};

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
	int64_t peak_tree_kb; /* largest RSS sum seen while polling */
	int64_t t_job, t_fork, t_exec, t_main,
	    t_end; /* CLOCK_MONOTONIC µs inside, for timing logs */
};
