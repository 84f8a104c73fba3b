/* cg: control groups for runs — v1 (memory, pids, cpuacct, and cpu where it is a
 * hierarchy of its own) and v2.
 *
 * A `struct cg_root` says where run cgroups go: one cgroup2 folder (v2), or one
 * parent folder per v1 controller. The root is a parameter everywhere, so tests
 * can point the v2 code at any cgroup2 mount (e.g. /sys/fs/cgroup/unified on a
 * hybrid host, where only the core files exist: create, join, populated, kill,
 * remove work there; limits report -ENOENT cleanly).
 *
 * Run cgroups are named "<word>-<owner>-<n>", owner being the owner id of the
 * creating process (runner/owner.h), so that what a dead process left is found
 * by its owner (cg_owner_kill, cg_owner_remove), never by a pid.
 */
#pragma once
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum cg_version { CG_NONE, CG_V1, CG_V2 };

/* The most hierarchies one cgroup spans (v1: memory, pids, cpuacct, cpu). */
#define CG_MAX_CTL 4

struct cg_root {
	enum cg_version version;
	char v2[512];	  /* v2: parent folder of run cgroups */
	char memory[512]; /* v1: parent folders, one per controller ("" = absent) */
	char pids[512];
	char cpuacct[512];
	/* v1: the cpu controller's parent folder when it is mounted apart from
	 * cpuacct ("" = co-mounted with cpuacct, whose folder then has its files,
	 * or absent). Only cgroups given cg_add_cpu join it. */
	char cpu[512];
	bool memsw; /* v1: memory.memsw.* exist (swap accounting) */
	/* v1, cgroups made by runsc (cg_root_oci): they also exist in every other
	 * mounted hierarchy (cpu, devices, freezer...) as <base>/<h>/<sub>/<name>;
	 * cg_remove and cg_sweep cover those too. */
	bool every_v1;
	char base[256];
	char sub[64];
};

struct cg {
	const struct cg_root *root;
	char name[64];
	/* open fds for the hot path: -1 when absent */
	int cpu_fd;		  /* v1 cpuacct.usage (ns) or v2 cpu.stat */
	int procs_fd[CG_MAX_CTL]; /* cgroup.procs of each controller (v2: only [0]) */
	int tasks_fd[CG_MAX_CTL]; /* v1: tasks of each controller, for cg_self_join_fds */
	int dir_fd;		  /* v2: the cgroup's folder, for cg_clone_into_fd */
	bool created[CG_MAX_CTL];
};

/* Detects the host's cgroups and prepares the parent folders under base (sub,
 * e.g. "judge", inside each hierarchy). spec is "auto" (pure v2 when
 * /sys/fs/cgroup/cgroup.controllers exists, else v1 when /sys/fs/cgroup/memory
 * exists) or a path: a cgroup2 folder, or a folder holding v1 controller
 * folders. Returns 0, or -1 with one clear message in err. */
int cg_detect(struct cg_root *root, const char *spec, const char *sub, char *err, size_t errlen);
/* Uses the cgroup2 folder dir (created when missing) as a v2 root. 0 or -1 with err. */
int cg_root_v2(struct cg_root *root, const char *dir, char *err, size_t errlen);
/* Uses the v1 controllers under base (base/memory, base/pids, base/cpuacct), with run
 * cgroups in a sub-folder sub of each (created when missing). 0 or -1 with err. */
int cg_root_v1(struct cg_root *root, const char *base, const char *sub, char *err, size_t errlen);

/* The parents of the cgroups that runsc makes from an OCI spec whose
 * linux.cgroupsPath is "/<sub>/<id>": <base>/<sub> on a pure v2 host, else
 * <base>/<memory|pids|cpuacct>/<sub> (read and limited here) plus every other
 * mounted v1 hierarchy (killed and removed here: every_v1). base NULL or "auto" =
 * /sys/fs/cgroup. Creates the parents when missing. 0, or -1 with err. */
int cg_root_oci(struct cg_root *root, const char *base, const char *sub, char *err, size_t errlen);

/* Attaches cg to the existing cgroup name under root (made by someone else, e.g.
 * runsc): every cg_* call below then works on it, cg_remove included. Returns 0
 * when it exists in at least one controller, else -ENOENT, and then cg is still
 * set up for cg_remove (which, with every_v1, removes what other hierarchies hold). */
int cg_open(const struct cg_root *root, const char *name, struct cg *cg);

/* Creates the run cgroup name under root (in every v1 controller). On failure
 * removes what it made. Returns 0 or -errno with err. */
int cg_create(const struct cg_root *root, const char *name, struct cg *cg, char *err,
	      size_t errlen);
/* Sets the memory limit (swap off) and the pids limit; 0 = leave unlimited. On
 * v1 a limit may go up or down from one call to the next (memory and memsw are
 * written in the order the kernel accepts).
 * Returns 0, or -errno with err (-ENOENT when the hierarchy has no such file,
 * e.g. memory.max on a cgroup2 tree without the memory controller). */
int cg_set_limits(struct cg *cg, long memory_kb, long pids, char *err, size_t errlen);
/* v1 with a cpu hierarchy of its own: makes cg (created, nobody in it yet) in
 * it too, so that cg_join and cg_self_join_fds put processes there and
 * cg_set_cpu can limit them. A no-op (0) on v2 and where cpu is co-mounted with
 * cpuacct. 0, or -errno with err (nothing made). */
int cg_add_cpu(struct cg *cg, char *err, size_t errlen);
/* Limits the CPU bandwidth of the tree to millis thousandths of a CPU (1000 =
 * one CPU) over a 100 ms period: v2 cpu.max, v1 cpu.cfs_quota_us and
 * cpu.cfs_period_us; millis <= 0 = unlimited. Returns 0, or -errno with err
 * (-ENOENT: no cpu controller for this cgroup). */
int cg_set_cpu(struct cg *cg, long millis, char *err, size_t errlen);
/* Sets cg's share of contended CPU against its siblings: weight on v2's
 * cpu.weight scale (1..10000, default 100), v1 cpu.shares = weight × 1024 /
 * 100 (at least 2). Returns 0, or -errno with err (-ENOENT: no cpu controller). */
int cg_set_cpu_weight(struct cg *cg, long weight, char *err, size_t errlen);
/* The kernel's own CPU weight (v1: 1024 shares). */
#define CG_CPU_WEIGHT_DEFAULT 100L
/* Time the tree was held back by its CPU limit so far, in microseconds (v2
 * cpu.stat throttled_usec, v1 cpu.stat throttled_time). 0 or -errno. */
int cg_cpu_throttled_us(struct cg *cg, long long *us);
/* Moves pid into the cgroup (every controller). Returns 0 or -errno. */
int cg_join(struct cg *cg, pid_t pid);
/* The fds through which a single-threaded process joins the cgroup itself by
 * writing "0" to each (v1 "tasks"): the kernel then skips the global
 * cgroup_threadgroup_rwsem, whose write side waits for an RCU grace period
 * (~10 ms on an idle VM) on every join by pid. Fills fds (owned by cg) and
 * returns how many; 0 when the hierarchy has none (v2): use cg_clone_into_fd,
 * or cg_join where the kernel lacks it. */
int cg_self_join_fds(const struct cg *cg, int fds[CG_MAX_CTL]);
/* v2: a folder fd for clone3's CLONE_INTO_CGROUP, which starts the child in the
 * cgroup and so skips that lock too; -1 on v1 (use cg_self_join_fds). */
int cg_clone_into_fd(const struct cg *cg);
/* CPU time used by the tree in microseconds. Returns 0 or -errno. */
int cg_cpu_us(struct cg *cg, long long *us);
/* Peak memory in kB (v1 max_usage_in_bytes, v2 memory.peak). 0 or -errno. */
int cg_memory_peak_kb(struct cg *cg, long *kb);
/* Memory the cgroup holds now (v2 memory.current, v1 memory.usage_in_bytes), in KiB. 0 or -errno.
 */
int cg_memory_current_kb(struct cg *cg, long *kb);
/* Number of OOM kills inside (v1 memory.oom_control, v2 memory.events). 0 or -errno. */
int cg_oom_kills(struct cg *cg, long *count);
/* Allocations that hit the memory limit so far (v1 memory.failcnt, v2
 * memory.events "max"); they grow also when reclaim then succeeded. 0 or -errno. */
int cg_memory_failcnt(struct cg *cg, long *count);
/* Processes plus threads inside now (pids.current). 0 or -errno. */
int cg_pids_current(struct cg *cg, long *count);
/* Forks refused by the pids limit so far (pids.events "max"). 0 or -errno. */
int cg_pids_limit_hits(struct cg *cg, long *count);
/* Lists up to max ids inside: processes, or every thread when threads (v1 tasks,
 * v2 cgroup.threads). Returns how many, or -errno. */
int cg_list(struct cg *cg, bool threads, pid_t *ids, int max);
/* 1 when processes are inside, 0 when empty, -errno on failure. */
int cg_populated(struct cg *cg);
/* SIGKILLs every process inside (v2 cgroup.kill when present, else by pid). 0 or -errno. */
int cg_kill(struct cg *cg);
/* Closes cg's fds and leaves the cgroup as it is (one cg_open'ed to look at). */
void cg_close(struct cg *cg);
/* Kills what is left, removes the cgroup(s) and closes the fds. Returns 0 or -errno. */
int cg_remove(struct cg *cg);

/* Calls fn(parent, arg) for every folder in which root's cgroups are made: one
 * per controller, or with every_v1 <base>/<h>/<sub> of every mounted hierarchy
 * h, whether that folder exists yet or not. */
void cg_root_parents(const struct cg_root *root, void (*fn)(const char *parent, void *arg),
		     void *arg);
/* SIGKILLs the processes in every cgroup of the folder parent named
 * "<word>-<owner>-..." and in their child cgroups (v2: cgroup.kill), without
 * waiting. Returns how many cgroups matched. */
int cg_owner_kill(const char *parent, const char *owner);
/* Removes those cgroups, children first, killing what is still inside and
 * waiting a little for it to go. Returns how many were removed. */
int cg_owner_remove(const char *parent, const char *owner);
