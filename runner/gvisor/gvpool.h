/* gvpool: gVisor sandboxes started ahead of need, one pool per runtime, and their
 * end (reaper threads). The half of the gVisor backend that is not one run:
 * gvisor.c runs jobs in the entries it takes from here. */
#pragma once
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/strbuf.h"
#include "runner/cg.h"
#include "runner/sandbox.h"

/* Where box_init sits inside every sandbox. */
#define GVPOOL_INIT_INSIDE "/.judge-init"
/* The bundle's memory limit covers the sentry and gofer too (~15 MB idle, more
 * for their page tables and caches while a program runs): the program's own
 * limit is enforced inside by box_init; the cgroup is the backstop. */
#define GVPOOL_HEADROOM_BYTES (160LL << 20)

/* Default bound of a sandbox's start (judge.ini gvisor_start_timeout_ms): from
 * spawning `runsc run --detach` to init's ready byte. Past it, runsc and the
 * container are killed and the run ends as internal_error. */
#define GVPOOL_START_TIMEOUT_MS 20000
/* Bound of any other runsc call (delete, kill): it is killed past it. */
#define GVPOOL_RUNSC_TIMEOUT_MS 30000

/* What every entry is made from (gvisor.c's set-up fills it). */
struct gvpool_env {
	char runsc[PATH_MAX];	  /* the runsc binary */
	char platform[32];	  /* "--platform=<gvisor_platform>": a global flag of every call */
	char owner[32];		  /* this process's owner id (runner/owner.h): names containers */
	char cg_sub[64];	  /* the cgroups' parent in each hierarchy ("<parent>-gvisor") */
	char root[PATH_MAX];	  /* runsc --root: <owner folder>/runsc */
	char work[PATH_MAX];	  /* <owner folder>/gvisor: a shared bind mount of itself */
	char rootfs[PATH_MAX];	  /* <work>/rootfs: the read-only root of every sandbox */
	const char *std_binds[8]; /* host folders bound read-only (static strings) */
	int pool_size;		  /* started sandboxes kept per runtime; 0 = no pool */
	int start_timeout_ms;	  /* bound of a sandbox's start (runsc run + init's ready) */
	long long max_memory_bytes; /* the largest memory limit a run may ask for */
	long long tmp_bytes;	    /* size of /tmp */
	struct cg_root cg_root;	    /* where runsc puts the containers' cgroups */
	bool cg_ready;
	/* reuse by later workspaces of one key (gvpool_park); reuse_runs 0 = never */
	int reuse_runs;	    /* runs an entry serves, at most */
	long long reuse_us; /* its life from its start, at most */
	int idle_max;	    /* parked entries kept, at most (the oldest go first) */
};

struct gv_pool;

/* One started sandbox: init waits for a job on in_fd. Held by one thread at a
 * time: a pool, the run that took it, then a reaper. */
struct gv_entry {
	struct gv_entry *next;
	struct gv_pool *pool;
	char id[64];
	char dir[PATH_MAX];
	int in_fd, out_fd, err_fd;
	pid_t sandbox_pid;
	pid_t pids[256]; /* processes of the container when it was killed, to reap */
	int npids;
	bool box_mounted; /* a box is bound at <dir>/b/box-<box_seq> */
	unsigned box_seq; /* boxes bound so far (names them: never a name seen before) */
	long long started_us;
	/* the session: the workspace it serves runs of (see gvisor.c) */
	char *sig;		   /* its pool's signature: runs of another runtime need another */
	unsigned long box_changes; /* sandbox.box_changes when the box was bound */
	unsigned runs;		   /* jobs sent so far (names the stdin files) */
	bool tainted;		   /* a run did not end cleanly: never parked */
	char *reuse_key;	   /* parked: the key of the workspaces it may serve */
	long ooms0, failcnt0;	   /* memory cgroup counters before the current run */
	struct cg cg;		   /* the cgroups runsc made for it (see gvpool_cg) */
	bool cg_open;
	bool host_net; /* runsc --network=host in a namespace the caller gave */
};

/* Runs "runsc <global flags> a1 a2 a3" of env with stdio on /dev/null; returns
 * its exit status, or -1. */
int gvpool_runsc(const struct gvpool_env *env, const char *a1, const char *a2, const char *a3);
/* The same for a subcommand on e's container, with the global flags it was
 * started with (runsc keeps them per container). */
int gvpool_runsc_on(const struct gvpool_env *env, const struct gv_entry *e, const char *a1,
		    const char *a2, const char *a3);
/* runsc checkpoint of e's container into the folder dir (uncompressed): its
 * exit status, or -1. The sandbox exits once its image is written. */
int gvpool_checkpoint(const struct gvpool_env *env, const struct gv_entry *e, const char *dir);
/* Starts the refill and reaper threads with a copy of env. 0, or -1 with err. */
int gvpool_start(const struct gvpool_env *env, char *err, size_t errlen);
/* Stops the threads and deletes every sandbox not handed out. */
void gvpool_stop(void);

/* The pool key of spec's runtime (ro_paths, warm-up) into sig (appended). */
void gvpool_sig(const struct run_spec *spec, struct strbuf *sig);
/* Takes a started sandbox for the runtime of spec: from its pool, or started now
 * (*cold) when none is ready. The caller owns *out (its sig set) and ends it
 * with gvpool_discard. 0, or -1 with err. */
int gvpool_take(const struct run_spec *spec, struct gv_entry **out, bool *cold, char *err,
		size_t errlen);
/* The same for a live sandbox (sandbox_start) when live: its own pools, whose
 * mounts the host shares (--file-access-mounts=shared). A live spec with a
 * net_ns_fd gets a sandbox of its own, never pooled (*cold), in that namespace. */
int gvpool_take_live(const struct run_spec *spec, bool live, struct gv_entry **out, bool *cold,
		     char *err, size_t errlen);
/* A live sandbox of spec's runtime restored from image (runsc checkpoint's
 * folder) with the host folder box bound where the checkpointed one had its
 * box (box_seq): runsc create with new pipes (e's fds: the restored program's
 * stdio), or the container gvpool_want_restore created, then runsc restore. Never pooled nor
 * parked. 0 with *out, or -1 with err (runsc's message). */
int gvpool_restore(const struct run_spec *spec, const char *image, const char *box,
		   unsigned box_seq, struct gv_entry **out, char *err, size_t errlen);
/* A restore of the runtime of signature sig (an entry's sig) may come: the
 * refill thread creates a container for it (`runsc create`, not started), which
 * the next gvpool_restore of that runtime takes, so it only runs `runsc
 * restore`. At most one per runtime, kept until taken or gvpool_stop; none
 * without a pool (pool_size 0) or before a live sandbox of sig was taken. */
void gvpool_want_restore(const char *sig);
/* SIGKILLs every process of e's container now, without waiting. */
void gvpool_kill(struct gv_entry *e);
/* Kills e, unmounts its box and hands it to the reapers, which free it. */
void gvpool_discard(struct gv_entry *e);
/* Binds the host folder box at <dir>/b/box-<n> of e, n a number e never used
 * (box_seq, which the job tells init), after unmounting the box bound before.
 * 0, or -1 with err (e is the caller's still). */
int gvpool_bind_box(struct gv_entry *e, const char *box, char *err, size_t errlen);
/* The end of e's workspace: e is idle (its last job reported) and may serve a
 * later workspace of key: its box is unmounted and e parked for
 * gvpool_take_idle. Discarded instead when key is NULL, reuse is off, e is
 * tainted, has served reuse_runs runs or lived reuse_us, or the pools stop.
 * Parked entries past their life are discarded by a reaper thread, and the
 * oldest when more than idle_max are parked. */
void gvpool_park(struct gv_entry *e, const char *key);
/* A parked entry of key and runtime signature sig (gvpool_sig), the most
 * recently parked, or NULL. The caller owns it as one from gvpool_take. */
struct gv_entry *gvpool_take_idle(const char *key, const char *sig);
/* The cgroups of e's container (attached on first use), or NULL when absent. */
struct cg *gvpool_cg(struct gv_entry *e);

/* Declares the runtime of runs like spec (its ro_paths, argv[0], warm_argv and
 * preload make the pool's key) so that its pool fills now rather than after its
 * first run. No-op without a pool. Only those fields of spec are read. */
void gvpool_prepare(const struct run_spec *spec);
/* The same for live sandboxes when live. */
void gvpool_prepare_live(const struct run_spec *spec, bool live);
/* Waits until the pool of spec's runtime holds pool_size started sandboxes, at
 * most timeout_ms. Returns true when it got there. */
bool gvpool_wait(const struct run_spec *spec, long timeout_ms);
