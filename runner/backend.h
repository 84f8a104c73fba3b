/* backend: what the runner's core (sandbox.c, boxfiles.c) shares with its
 * backends (runner/native/, runner/gvisor/). Nothing else includes it. */
#pragma once
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runner/sandbox.h"

struct cg;

/* How many backends there are (enum sandbox_backend). */
#define SANDBOX_BACKENDS 2

/* One workspace (see sandbox.h). Created by sandbox_open, freed by sandbox_close. */
struct sandbox {
	enum sandbox_backend backend;
	int slot;	      /* 0.. : tells concurrent sandboxes of this process apart */
	unsigned long serial; /* unique within this process, part of every name */
	uid_t host_uid;	      /* host uid (and gid) owning the box: options' box_uid + slot */
	gid_t host_gid;
	long box_bytes;		 /* size cap of the box tmpfs */
	char box_path[PATH_MAX]; /* host path of the box mount: <owner folder>/box-<n> (owner.h) */
	int box_fd;		 /* O_PATH|O_DIRECTORY fd of the box root; -1 when closed */
	unsigned long runs;	 /* sandbox_run calls so far (for unique run names) */
	/* Each backend's private state for this workspace, owned by that backend's
	 * ops (NULL until its first run here). One slot per backend because the
	 * trusted tools of a gVisor workspace may run natively on the same box:
	 * sandbox_close calls the close op of every backend whose slot is set,
	 * before it unmounts the box. */
	void *state[SANDBOX_BACKENDS];
	/* Bumped whenever the box may change outside a gVisor sandbox (a host write,
	 * a native run): the sentry caches what it saw, so a gVisor session binds
	 * the box again under a new name when this moved since the last bind. */
	unsigned long box_changes;
	/* sandbox_set_reuse_key's copy, or NULL: which other workspaces may get the
	 * gVisor sandbox that served this one (gvisor.c). */
	char *reuse_key;
	/* sandbox_set_reuse_key's copy whatever gvisor_reuse says, or NULL: the
	 * native backend forks this key's runs from a zygote of its own
	 * (native/nzygote.h); NULL = every run starts fresh. */
	char *tenant_key;
};

/* One backend. sandbox.c calls a backend only through its table (backend_ops),
 * never by name.
 *
 * Live processes (sandbox_start and sandbox_proc_*, sandbox.h) are the
 * operations sessions (runner/session/session.c) and interactive problems build on:
 * start, signal, usage, wait, free. Their state lives in struct sandbox_proc,
 * not in the workspace's slot, so a workspace's sandbox_run calls (e.g. a
 * native install into a session's box) do not disturb them. */
struct sandbox_ops {
	const char *name;
	/* The backend honours run_spec.net_ns_fd and box_subdir (package installs):
	 * such runs go to the first backend of the table that does, which is then
	 * always started. */
	bool joins_netns;
	/* Its live processes (start) honour run_spec.net_ns_fd (a session's egress
	 * proxy); implied by joins_netns. */
	bool starts_in_netns;
	/* Process-wide set-up: 0, or -1 with err (then the backend is unavailable). */
	int (*global_init)(const struct sandbox_options *opts, char *err, size_t errlen);
	/* Stops threads and removes what the process created; safe when not inited. */
	void (*global_shutdown)(void);
	/* True when the backend can run here; else false with the reason. */
	bool (*works)(char *why, size_t whylen);
	/* Starts sandboxes for runs like spec (its runtime: ro_paths, argv[0], warm-up)
	 * ahead of need. NULL: the backend has nothing to start ahead. */
	void (*prepare)(const struct run_spec *spec);
	/* Runs spec: sandbox_run has checked spec (every limit > 0) and reset res.
	 * Fills res and returns 0 when a status was decided (internal_error
	 * included, with res->message set), by verdict_decide (verdict.h). */
	int (*run)(struct sandbox *sb, const struct run_spec *spec, struct run_result *res);
	/* Ends this backend's state in sb->state[] (kills, reaps, frees). */
	void (*close)(struct sandbox *sb);
	/* A live process (sandbox.h): start fills p's fds and impl (sandbox.c has
	 * set sb, backend, limits, t0 and fds to -1), or returns -1 with err and
	 * nothing left; wait gets a deadline (clock_mono_us) and a reset res; free
	 * kills what is left and frees impl (sandbox.c closes p's fds after). */
	int (*start)(struct sandbox *sb, const struct run_spec *spec, struct sandbox_proc *p,
		     char *err, size_t errlen);
	int (*proc_signal)(struct sandbox_proc *p, int sig);
	int (*proc_usage)(struct sandbox_proc *p, long long *cpu_us, long *memory_kb);
	int (*proc_ooms)(struct sandbox_proc *p, long *count);
	/* The live process's cgroup (for sandbox_proc_tasks), or NULL. */
	struct cg *(*proc_cg)(struct sandbox_proc *p);
	void (*proc_wait)(struct sandbox_proc *p, int64_t deadline_us, struct run_result *res);
	void (*proc_free)(struct sandbox_proc *p);
	/* sandbox_proc_checkpoint (sandbox.h); NULL: the backend cannot. */
	int (*proc_checkpoint)(struct sandbox_proc *p, const char *dir, char *err, size_t errlen);
};

/* A live process (sandbox.h); the backend's own part is impl. */
struct sandbox_proc {
	struct sandbox *sb;
	enum sandbox_backend backend;
	int in_fd, out_fd, err_fd; /* the caller's ends */
	struct run_limits limits;
	int64_t t0_us; /* clock_mono_us() at the start */
	bool waited;
	void *impl;
};

extern const struct sandbox_ops native_ops; /* native.c */
extern const struct sandbox_ops gvisor_ops; /* gvisor.c */

/* Helpers of sandbox.c for the backends. */
/* True once sandbox_global_abort began: a backend starts nothing more (no
 * sandbox, cgroup or mount), and fails the run instead. */
bool sandbox_aborting(void);
/* Formats the internal_error of res: status, and message (printf-style). Returns 0. */
int sandbox_fail(struct run_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Makes uid and gid the owners of sb's box and everything in it (never
 * following a link) and sb's own from now on: a gVisor sandbox restored from a
 * checkpoint runs its processes as the uid they had. 0, or -errno. */
int sandbox_box_adopt_owner(struct sandbox *sb, uid_t uid, gid_t gid);
/* Empties sb's box (boxfiles.c): every regular file truncated, then everything
 * removed, never following a link. Another process's open file of the box keeps
 * no data then (a reused gVisor sandbox's caches of a closed workspace's box).
 * 0, or -errno when something stays (-ELOOP: nested too deep). */
int sandbox_box_empty(struct sandbox *sb);
