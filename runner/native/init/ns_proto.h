/* ns_proto: what the worker (runner/native/native.c, nsplan.c) and bin/ns_init
 * (ns_init.c) exchange — the plan of one native run, its root and its program,
 * built in the worker, sent over a pipe and carried out by ns_init inside the new
 * namespaces; and the reports that come back. The plan is position independent
 * (strings are offsets into its pool), so the worker sends its first
 * nsinit_plan_size() bytes as they are. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#define NSINIT_INSIDE_ID  1000 /* uid and gid of the program inside */
#define NSINIT_MAX_OPS	  96
#define NSINIT_POOL_BYTES (1 << 20)  /* > 64 arguments of 4 KiB, 256 file names */
#define NSINIT_NONE	  UINT32_MAX /* an absent string */
/* changes with the layout of struct nsinit_plan: a worker and an ns_init of
 * different builds refuse each other */
#define NSINIT_VERSION 3

/* ns_init's descriptors at its start (set up by the worker's clone child) */
#define NSINIT_PLAN_FD	 3 /* the plan, and its end: the release */
#define NSINIT_REPORT_FD 4 /* struct nsinit_report, one write each */

enum op_kind {
	OP_MKDIR,   /* a */
	OP_MKFILE,  /* a: empty file, a mount point for a file bind */
	OP_SYMLINK, /* a -> data */
	OP_BIND_RO, /* data (host) -> a, then read-only, nosuid, nodev */
	OP_BIND,    /* data (host) -> a, flags of the source kept */
	OP_TMPFS,   /* a, options data */
	OP_PROC,    /* a */
	OP_WRITE,   /* a, contents data (len) */
	OP_BOXDIR,  /* folder data of the box (no symlink followed) -> a, writable */
};

/* One step of building the run's root, relative to it. */
struct op {
	enum op_kind kind;
	uint32_t a;    /* pool offset: path relative to the new root */
	uint32_t data; /* pool offset (see op_kind), or NSINIT_NONE */
	uint32_t len;  /* OP_WRITE: bytes of data */
};

/* Everything ns_init needs. pool holds the strings, NUL-terminated. */
struct nsinit_plan {
	uint32_t version; /* NSINIT_VERSION */
	uint32_t used;	  /* bytes of pool in use */
	struct op ops[NSINIT_MAX_OPS];
	int nops;
	bool overflow;
	/* program: argc strings in a row from argv, envc from env; the seccomp BPF
	 * (struct sock_filter[filter_len]) at filter, 8-aligned */
	uint32_t argv, argc, env, envc, filter, filter_len;
	struct rlimit rl_fsize, rl_nofile, rl_stack, rl_cpu;
	int last_cap;	   /* highest capability number of the kernel */
	uint32_t newroot;  /* host folder where init mounts its root tmpfs */
	uint32_t box_path; /* host path of the box (OP_BOXDIR's root), or NSINIT_NONE */
	/* 1: a warm run (docs/warm-start.md): init builds the root, reports
	 * NSINIT_READY and starts no program; the worker's zygote forks it into
	 * init's namespaces (runner/native/nzygote.h). init then only reaps orphans
	 * until it is killed (by the program's reaper, or the worker) */
	uint32_t zygote;
	char pool[NSINIT_POOL_BYTES] __attribute__((aligned(8)));
};

/* Set-up steps, in order: the worker's clone child (before ns_init), then ns_init. */
enum nsinit_step {
	S_FDS,
	S_CGJOIN,
	S_AMBIENT,
	S_INIT_EXEC,
	S_PLAN,
	S_CGROUPNS,
	S_SETGROUPS,
	S_SETGID,
	S_KEEPCAPS,
	S_SETUID,
	S_CAPSET,
	S_PRIVATE,
	S_ROOT,
	S_OP,
	S_HOSTNAME,
	S_PIVOT,
	S_UMOUNT_OLD,
	S_RO_ROOT,
	S_FORK,
	S_SECUREBITS,
	S_CAPBSET,
	S_NNP,
	S_RLIMIT,
	S_CHDIR_BOX,
	S_SECCOMP,
	S_EXEC,
	S_SETNS, /* a warm run's program joining init's namespaces */
};

enum nsinit_report_type { NSINIT_FAIL = 1, NSINIT_EXIT = 2, NSINIT_READY = 3 };

/* What the clone child, ns_init and the program tell the worker on the report
 * pipe; one write each (< PIPE_BUF). */
struct nsinit_report {
	int type;
	int step;	/* NSINIT_FAIL: the set-up step that failed (enum nsinit_step) */
	int op;		/* NSINIT_FAIL: index in plan.ops, or -1 */
	int err;	/* NSINIT_FAIL: errno */
	int status;	/* NSINIT_EXIT: wait status of the program */
	long maxrss_kb; /* NSINIT_EXIT: rusage of the program */
};

/* The string at offset off of p's pool ("" for NSINIT_NONE). */
static inline const char *nsinit_str(const struct nsinit_plan *p, uint32_t off)
{
	return off == NSINIT_NONE ? "" : p->pool + off;
}

/* Bytes of p that ns_init needs: everything up to the used part of the pool. */
static inline size_t nsinit_plan_size(const struct nsinit_plan *p)
{
	return offsetof(struct nsinit_plan, pool) + p->used;
}
