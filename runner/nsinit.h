/* nsinit: the child side of the native backend (native.c) — the plan of one run,
 * built in the worker before clone3, and the init that carries it out inside the
 * new namespaces, then starts the program. Not for judge/. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "runner/sandbox.h"
#include "runner/scmp.h"

#define NSINIT_INSIDE_ID  1000 /* uid and gid of the program inside */
#define NSINIT_MAX_OPS	  96
#define NSINIT_POOL_BYTES 32768
#define NSINIT_PROG_STACK (64 * 1024)

struct sandbox;

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
	const char *a;	  /* path relative to the new root */
	const char *data; /* see op_kind */
	size_t len;
};

/* Everything the child needs, in plain memory that survives clone. */
struct nsinit_plan {
	/* stack of the program between its clone and execve (it shares init's memory) */
	char prog_stack[NSINIT_PROG_STACK] __attribute__((aligned(64)));
	struct op ops[NSINIT_MAX_OPS];
	int nops;
	char pool[NSINIT_POOL_BYTES]; /* the strings of ops */
	size_t used;
	bool overflow;
	/* program */
	const char *const *argv;
	const char *const *env;
	struct rlimit rl_fsize, rl_nofile, rl_stack, rl_cpu;
	int fds[5]; /* stdin r, stdout w, stderr w, sync r, report w (child ends) */
	int fd_floor;
	int cg_fds[3]; /* init joins the run cgroup through these itself (cg_self_join_fds) */
	int ncg_fds;
	uid_t host_uid;
	gid_t host_gid;
	/* set by native.c from its global set-up */
	const struct scmp_filter *filter; /* installed by the program before execve */
	int last_cap;			  /* highest capability number of the kernel */
	const char *newroot;		  /* host folder where init mounts its root tmpfs */
	const char *box_path;		  /* host path of the box (OP_BOXDIR's root) */
};

enum nsinit_report_type { NSINIT_FAIL = 1, NSINIT_EXIT = 2 };

/* What init and the program tell the worker on the report pipe; one write each
 * (< PIPE_BUF). */
struct nsinit_report {
	int type;
	int step;	/* NSINIT_FAIL: the set-up step that failed */
	int op;		/* NSINIT_FAIL: index in plan.ops, or -1 */
	int err;	/* NSINIT_FAIL: errno */
	int status;	/* NSINIT_EXIT: wait status of the program */
	long maxrss_kb; /* NSINIT_EXIT: rusage of the program */
};

/* Builds the root and the program of one run of spec in sb into p (zeroed by the
 * caller; the caller then sets fds, cgroup fds, filter, last_cap, newroot).
 * Read-only paths under box_root, /proc, /sys, /dev, /root, /home, /run or /etc
 * itself are refused. Returns 0 or -1 with the reason in err. */
int nsinit_plan(struct nsinit_plan *p, const struct sandbox *sb, const struct run_spec *spec,
		const char *box_root, char *err, size_t errlen);
/* The child of clone3: joins the cgroup, takes fds 0..4, waits for the sync byte,
 * becomes uid NSINIT_INSIDE_ID, builds the root, pivots, starts the program and
 * reports its end (or the failing step) on fd 4. Never returns. */
__attribute__((noreturn)) void nsinit_main(const struct nsinit_plan *p);
/* Writes what failed, from a NSINIT_FAIL report, into buf. */
void nsinit_explain(const struct nsinit_plan *p, const struct nsinit_report *r, char *buf,
		    size_t len);
