/* native: the namespace backend — one program in fresh Linux namespaces around the box.
 *
 * Theory of operation. The worker (root, multi-threaded) prepares everything in
 * memory first: the cgroup with its limits, pipes, the plan of the run's root and
 * program (nsplan.c; the seccomp BPF is built once). Then clone3() starts a child
 * in new user, mount, pid, ipc and uts namespaces (and the slot's network one)
 * that execs bin/ns_init, a small static binary (runner/native/init/ns_init.c).
 *
 *   worker                              child, then ns_init (pid 1 of the new pid namespace)
 *   ------                              -----
 *   clone3 (CLONE_VM | CLONE_VFORK;     join the cgroup (v1: itself, see cg_self_join_fds),
 *     v2: CLONE_INTO_CGROUP) ───────>    fds to 0..4, capabilities kept as ambient ones,
 *   (waits until the exec)               exec ns_init
 *   write uid_map/gid_map
 *   the plan, on a pipe ─────────────>  read the plan; unshare cgroup ns, become uid
 *                                        1000 (keeping caps of the user namespace),
 *                                        mount a tmpfs root: read-only binds, /etc,
 *                                        /dev, /proc, /tmp, /box; pivot_root; root
 *                                        read-only
 *                                        fork ──> program: drop caps, no_new_privs,
 *                                                 rlimits, chdir /box, seccomp, execve
 *   pump stdin/stdout/stderr,           wait for the program; report its status
 *   poll CPU of the cgroup (10 ms),     on the report pipe; exit — the kernel then
 *   wall deadline; kill init on limits  kills whatever is left in the namespace
 *   reap init, read report, cgroup
 *   peak/oom/cpu, remove the cgroup
 *
 * Why a child that shares the worker's memory until it execs, rather than a
 * fork that runs init's code itself: a fork copies the worker's address space
 * (page tables of every mapping, then copy-on-write faults in the worker and the
 * teardown at init's exit), which was a third of the judge's own CPU per run;
 * and init then held a copy of the worker's memory (database credentials, other
 * runs' data) in a process of the sandbox. ns_init holds only its plan.
 *
 * init is not the program, so the program keeps normal signal semantics, and when
 * init ends (or is killed) every process of the namespace dies with it: setsid and
 * double-fork survivors included.
 */
#define _GNU_SOURCE
#include "runner/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "runner/capture.h"
#include "runner/native/nsplan.h"
#include "runner/native/nzygote.h"
#include "runner/cg.h"
#include "runner/native/init/clone_run.h"
#include "runner/owner.h"
#include "runner/scmp.h"
#include "runner/verdict.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#define CPU_TICK_MS 10
/* slots below this keep their network namespace: the callers' slot numbers
 * (one-shot, grading and session ranges, judge/service/slots.h) stay below
 * it; made on first use only */
#define NETNS_SLOTS 8192

/* ---- global state (set once by native_global_init) ---- */

static struct cg_root cg_root;
static struct scmp_filter filter;
static bool ready;
static char init_error[512] = "native backend not initialised";
static int last_cap = 40;
static char newroot_dir[400]; /* where init mounts its root tmpfs */
static int ns_init_fd = -1;   /* bin/ns_init, O_PATH, executed by the clone child */

/* One empty network namespace per slot, made once and entered by every run of
 * that slot: creating and destroying a network namespace per run costs about a
 * millisecond. It is owned by the host's user namespace, so a program can change
 * nothing in it (lo stays down); runs of one slot never overlap, and sockets die
 * with their processes, so nothing passes from one run to the next. */
static pthread_mutex_t netns_lock = PTHREAD_MUTEX_INITIALIZER;
static int netns_fd[NETNS_SLOTS];
static int host_netns_fd = -1;

/* ---- the worker side ---- */

static int write_proc(pid_t pid, const char *file, const char *text)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = strlen(text);
	int ret = write(fd, text, len) == (ssize_t)len ? 0 : -errno;
	close(fd);
	return ret;
}

struct tick_state {
	struct cg *cg;
	long long cpu_limit_us;
	long long cpu_us;
	bool over;
};

static int cpu_tick(void *arg)
{
	struct tick_state *t = arg;
	if (cg_cpu_us(t->cg, &t->cpu_us) == 0 && t->cpu_us > t->cpu_limit_us) {
		t->over = true;
		return 1;
	}
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Per-sandbox state: the init of the previous run, still exiting, and its cgroup. */
struct native_state {
	int pidfd;
	struct cg cg;
	bool cg_made;
	struct cg spare; /* made ahead for the next run */
	bool spare_made;
};

/* Creates a new run cgroup "judge-<owner>-<sandbox>-<n>" (owner.h: whoever
 * reclaims a dead worker's things finds it by that owner). Returns 0 or -errno. */
static int make_cg(struct sandbox *sb, struct cg *cg, char *err, size_t errlen)
{
	char name[64];
	const char *owner = owner_id();
	if (!owner || sandbox_aborting()) {
		snprintf(err, errlen, "the sandbox is stopping");
		return -ECANCELED;
	}
	if (snprintf(name, sizeof name, "judge-%s-%lu-%lu", owner, sb->serial, sb->runs++) >=
	    (int)sizeof name) {
		snprintf(err, errlen, "cgroup name too long");
		return -ENAMETOOLONG;
	}
	return cg_create(&cg_root, name, cg, err, errlen);
}

/* cg_root_parents: tells the owner where its cgroups are. */
static void note_parent(const char *parent, void *arg)
{
	(void)arg;
	owner_note_cgroup_parent(parent);
}

static void read_reports(int fd, struct nsinit_report *exit_rep, struct nsinit_report *fail_rep)
{
	struct nsinit_report r;
	while (read(fd, &r, sizeof r) == (ssize_t)sizeof r) {
		if (r.type == NSINIT_FAIL && !fail_rep->type)
			*fail_rep = r;
		else if (r.type == NSINIT_EXIT)
			*exit_rep = r;
	}
}

/* Waits for the init of the previous run (its namespace is empty after). */
static void reap_previous(struct native_state *st)
{
	if (st->pidfd < 0)
		return;
	siginfo_t si;
	while (waitid((idtype_t)P_PIDFD, (id_t)st->pidfd, &si, WEXITED) < 0 && errno == EINTR)
		;
	close(st->pidfd);
	st->pidfd = -1;
}

static void remove_previous_cg(struct native_state *st)
{
	int rc;
	if (st->pidfd >= 0 || !st->cg_made)
		return;
	if ((rc = cg_remove(&st->cg)) < 0)
		log_warn("native: cannot remove cgroup %s: %s", st->cg.name, strerror(-rc));
	st->cg_made = false;
}

static void native_close(struct sandbox *sb)
{
	struct native_state *st = sb->state[SANDBOX_NATIVE];
	if (!st)
		return;
	reap_previous(st);
	remove_previous_cg(st);
	if (st->spare_made)
		cg_remove(&st->spare);
	free(st);
	sb->state[SANDBOX_NATIVE] = NULL;
}

static struct native_state *native_state(struct sandbox *sb)
{
	if (!sb->state[SANDBOX_NATIVE]) {
		struct native_state *st = xcalloc(1, sizeof *st);
		st->pidfd = -1;
		sb->state[SANDBOX_NATIVE] = st;
	}
	return sb->state[SANDBOX_NATIVE];
}

/* Returns the slot's network namespace (made on first use), or -1 when the
 * run must make its own (slot out of range, or it could not be made). */
static int slot_netns(int slot)
{
	if (slot < 0 || slot >= NETNS_SLOTS || host_netns_fd < 0)
		return -1;
	pthread_mutex_lock(&netns_lock);
	int fd = netns_fd[slot];
	if (fd < 0 && unshare(CLONE_NEWNET) == 0) {
		/* network namespaces are per thread: this thread is in the new one */
		fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (setns(host_netns_fd, CLONE_NEWNET) < 0) {
			log_error("native: cannot return to the host network namespace: %s",
				  strerror(errno));
			abort(); /* a worker thread without its network is beyond repair */
		}
		netns_fd[slot] = fd;
	}
	pthread_mutex_unlock(&netns_lock);
	return fd;
}

/* What the clone child needs; it reads it from the waiting thread's memory. */
struct init_spawn {
	int fds[5];		/* stdin r, stdout w, stderr w, plan r, report w (child ends) */
	int fd_floor;		/* above every fd the child moves */
	int cg_fds[CG_MAX_CTL]; /* the child joins the run cgroup through these itself */
	int ncg_fds;
	int exe_fd; /* ns_init */
	int last_cap;
};

/* What the clone child of a run in cg gets: the child's ends of the pipes, the
 * lowest fd above them all (and above ns_init's), where the child moves them
 * before it dups them to 0..4, and cg's fds it joins through (v1). */
static void spawn_prepare(struct init_spawn *s, const int fds[5], const struct cg *cg)
{
	s->ncg_fds = cg_self_join_fds(cg, s->cg_fds);
	s->exe_fd = ns_init_fd;
	s->last_cap = last_cap;
	s->fd_floor = (ns_init_fd > 5 ? ns_init_fd : 5) + 1;
	for (int i = 0; i < 5; i++) {
		s->fds[i] = fds[i];
		if (fds[i] >= s->fd_floor)
			s->fd_floor = fds[i] + 1;
	}
}

#define SPAWN_STACK (16 * 1024)

/* The clone child's end: a report on fd rep, then exit. */
__attribute__((no_sanitize("address", "undefined"), noreturn)) static void
spawn_fail(int rep, int step, int err)
{
	struct nsinit_report r = {.type = NSINIT_FAIL, .step = step, .op = -1, .err = err};
	syscall(SYS_write, rep, &r, sizeof r);
	for (;;)
		syscall(SYS_exit, 127);
}

/* The clone child, from clone3 to its exec of ns_init. It runs on the worker's
 * memory (CLONE_VM: nothing is copied) while the cloning thread waits
 * (CLONE_VFORK) and with every signal blocked, so it only makes system calls: no
 * locks, no allocation, nothing written but its stack and, on a failure, errno
 * (the waiting thread's; that thread reads it only when clone3 failed). */
__attribute__((no_sanitize("address", "undefined"))) static int spawn_child(void *arg)
{
	const struct init_spawn *s = arg;
	syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	/* into the run cgroup before anything else */
	for (int i = 0; i < s->ncg_fds; i++)
		if (syscall(SYS_write, s->cg_fds[i], "0", 1) != 1)
			spawn_fail(s->fds[4], S_CGJOIN, errno);
	/* stdin, stdout, stderr, plan, report at 0..4, ns_init at 5 (closed by the
	 * exec), nothing else */
	int tmp[6];
	for (int i = 0; i < 6; i++) {
		tmp[i] = (int)syscall(SYS_fcntl, i < 5 ? s->fds[i] : s->exe_fd, F_DUPFD_CLOEXEC,
				      s->fd_floor);
		if (tmp[i] < 0)
			spawn_fail(s->fds[4], S_FDS, errno);
	}
	for (int i = 0; i < 6; i++)
		if (syscall(SYS_dup3, tmp[i], i, i < 5 ? 0 : O_CLOEXEC) < 0)
			spawn_fail(s->fds[4], S_FDS, errno);
	if (syscall(SYS_close_range, 6, ~0U, 0) < 0)
		spawn_fail(NSINIT_REPORT_FD, S_FDS, errno);
	/* our capabilities in the new user namespace survive the exec as ambient
	 * ones (our uid has no mapping there, so the exec would drop them) */
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		spawn_fail(NSINIT_REPORT_FD, S_AMBIENT, errno);
	d[0].inheritable = d[0].permitted;
	d[1].inheritable = d[1].permitted;
	if (syscall(SYS_capset, &h, d) < 0)
		spawn_fail(NSINIT_REPORT_FD, S_AMBIENT, errno);
	for (int c = 0; c <= s->last_cap; c++)
		if (syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) < 0)
			spawn_fail(NSINIT_REPORT_FD, S_AMBIENT, errno);
	char *const argv[] = {"ns_init", NULL}, *const envp[] = {NULL};
	syscall(SYS_execveat, 5, "", argv, envp, AT_EMPTY_PATH);
	spawn_fail(NSINIT_REPORT_FD, S_INIT_EXEC, errno);
}

/* Starts the run's init (the clone child, which execs ns_init) in new
 * namespaces, in the network namespace net_fd (> 0) or else the slot's and, on
 * v2, straight in cg. Returns once the child has exec'd (or failed, which its
 * report then tells): its pid, or -1 with *clone_errno; *in_cg says whether it
 * is in cg already (clone3 started it there, or it joins itself), else it is to
 * be joined by pid. */
static pid_t start_init(struct sandbox *sb, const struct init_spawn *spawn, struct cg *cg,
			int net_fd, int *pidfd, bool *in_cg, int *clone_errno)
{
	/* the child's stack, in this frame, which waits until the child's exec */
	char stack[SPAWN_STACK] __attribute__((aligned(16)));
	struct clone_args_v2 ca = {
	    .flags = CLONE_VM | CLONE_VFORK | CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
		     CLONE_NEWIPC | CLONE_NEWUTS | CLONE_PIDFD,
	    .pidfd = (uint64_t)(uintptr_t)pidfd,
	    .exit_signal = SIGCHLD,
	    .stack = (uint64_t)(uintptr_t)stack,
	    .stack_size = sizeof stack,
	};
	if (net_fd > 0 && setns(net_fd, CLONE_NEWNET) < 0) {
		/* never an empty namespace instead: the caller wants that one */
		*clone_errno = errno;
		return -1;
	}
	int netfd = net_fd > 0 ? net_fd : slot_netns(sb->slot);
	if (netfd < 0 || (net_fd <= 0 && setns(netfd, CLONE_NEWNET) < 0)) {
		ca.flags |= CLONE_NEWNET;
		netfd = -1;
	}
	int into_fd = cg_clone_into_fd(cg);
	if (into_fd >= 0) {
		ca.flags |= CLONE_INTO_CGROUP;
		ca.cgroup = (uint64_t)into_fd;
	}
	/* no handler of the worker may run in the child before its exec */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	long pid = clone_run(&ca, spawn_child, (void *)spawn);
	if (pid < 0 && into_fd >= 0 && (pid == -EINVAL || pid == -E2BIG)) {
		/* a kernel before 5.7: start outside, join by pid after */
		ca.flags &= ~(uint64_t)CLONE_INTO_CGROUP;
		ca.cgroup = 0;
		into_fd = -1;
		pid = clone_run(&ca, spawn_child, (void *)spawn);
	}
	*in_cg = spawn->ncg_fds > 0 || into_fd >= 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	*clone_errno = pid < 0 ? (int)-pid : 0;
	if (netfd >= 0 && setns(host_netns_fd, CLONE_NEWNET) < 0) {
		log_error("native: cannot return to the host network namespace: %s",
			  strerror(errno));
		abort(); /* a worker thread without its network is beyond repair */
	}
	return pid < 0 ? -1 : (pid_t)pid;
}

/* What the run showed, for verdict_decide: the cgroup's counters, how the capture
 * ended, init's reports and init's own end (si). */
static void end_facts(struct run_facts *f, const struct nsinit_plan *p, struct cg *cg,
		      enum capture_end end, const struct capture *cap, bool cpu_over,
		      const struct nsinit_report *exit_rep, const struct nsinit_report *fail_rep,
		      const siginfo_t *si)
{
	char msg[256];
	verdict_facts_init(f);
	long peak = 0, ooms = 0;
	cg_cpu_us(cg, &f->cpu_us);
	if (cg_memory_peak_kb(cg, &peak) < 0)
		peak = exit_rep->maxrss_kb;
	f->peak_kb = peak;
	cg_oom_kills(cg, &ooms);
	f->oom_kill = ooms > 0;
	f->cpu_limit_hit = cpu_over || end == CAPTURE_STOPPED;
	f->deadline_hit = end == CAPTURE_DEADLINE;
	f->output_over = end == CAPTURE_OUTPUT_LIMIT;
	f->capture_failed = end == CAPTURE_FAILED;
	f->capture_errno = cap->error;
	if (fail_rep->type) {
		nsplan_explain(p, fail_rep, msg, sizeof msg);
		verdict_fault(f, "%s", msg);
	}
	if (exit_rep->type == NSINIT_EXIT && WIFSIGNALED(exit_rep->status)) {
		f->end = RUN_END_SIGNALED;
		f->code = WTERMSIG(exit_rep->status);
	} else if (exit_rep->type == NSINIT_EXIT) {
		f->end = RUN_END_EXITED;
		f->code = WEXITSTATUS(exit_rep->status);
	} else if (fail_rep->type) {
		/* init's own set-up failed: its report above is the message */
	} else if (si->si_code == CLD_EXITED && si->si_status == 125) {
		snprintf(f->message, sizeof f->message, "sandbox init lost the worker");
	} else {
		snprintf(f->message, sizeof f->message,
			 "sandbox init ended without a status (code %d, status %d)", si->si_code,
			 si->si_status);
	}
}

/* After the pump: init's reports, and init itself — handed to st when the run
 * ended cleanly (it is exiting, the next run or sandbox_close reaps it), else
 * killed and reaped now (its end in si). Takes *pidfd. */
static void collect_init(struct native_state *st, enum capture_end end, int rep_fd, int *pidfd,
			 struct nsinit_report *exit_rep, struct nsinit_report *fail_rep,
			 siginfo_t *si)
{
	fcntl(rep_fd, F_SETFL, O_NONBLOCK);
	if (end == CAPTURE_DONE)
		read_reports(rep_fd, exit_rep, fail_rep);
	if (end == CAPTURE_DONE && exit_rep->type && !fail_rep->type) {
		/* The program is reaped and init is exiting, which kills whatever is
		 * left: the namespaces are torn down while we go on. */
		st->pidfd = *pidfd;
		*pidfd = -1;
		return;
	}
	if (end != CAPTURE_DONE)
		syscall(SYS_pidfd_send_signal, *pidfd, SIGKILL, NULL, 0);
	/* init's exit waits until every process of its namespace is gone */
	while (waitid((idtype_t)P_PIDFD, (id_t)*pidfd, si, WEXITED) < 0 && errno == EINTR)
		;
	read_reports(rep_fd, exit_rep, fail_rep);
}

/* Maps the program's uid and gid inside to the slot's on the host. 0 or -1 with err. */
static int map_ids(pid_t pid, const struct sandbox *sb, char *err, size_t errlen)
{
	char map[64];
	int rc;
	snprintf(map, sizeof map, "%d %u 1\n", NSINIT_INSIDE_ID, (unsigned)sb->host_uid);
	if ((rc = write_proc(pid, "uid_map", map)) < 0) {
		snprintf(err, errlen, "writing uid_map: %s", strerror(-rc));
		return -1;
	}
	snprintf(map, sizeof map, "%d %u 1\n", NSINIT_INSIDE_ID, (unsigned)sb->host_gid);
	if ((rc = write_proc(pid, "gid_map", map)) < 0) {
		snprintf(err, errlen, "writing gid_map: %s", strerror(-rc));
		return -1;
	}
	return 0;
}

/* When init already failed (its clone child or ns_init could not start), the
 * reason from its report on rep_fd, in err; else false. Does not block. */
static bool early_failure(int rep_fd, const struct nsinit_plan *p, char *err, size_t errlen)
{
	struct pollfd pfd = {.fd = rep_fd, .events = POLLIN};
	struct nsinit_report r;
	if (poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLIN) ||
	    read(rep_fd, &r, sizeof r) != (ssize_t)sizeof r || r.type != NSINIT_FAIL)
		return false;
	nsplan_explain(p, &r, err, errlen);
	return true;
}

/* Releases a started init: its uid and gid maps, its cgroup when it is not in
 * it yet (no clone3 cgroup, no self-join), then the plan on plan_fd, which it
 * reads once the maps are there. 0, or -1 with err (init is then to be killed):
 * init's own report when it failed to start, which rep_fd carries. */
static int release_init(pid_t pid, const struct sandbox *sb, struct cg *cg, bool in_cg,
			const struct nsinit_plan *p, int plan_fd, int rep_fd, char *err,
			size_t errlen)
{
	int rc;
	if (map_ids(pid, sb, err, errlen) < 0)
		goto failed;
	if (!in_cg && (rc = cg_join(cg, pid)) < 0) {
		snprintf(err, errlen, "joining cgroup %s: %s", cg->name, strerror(-rc));
		goto failed;
	}
	/* init reads it at once; a dead init is EPIPE */
	if ((rc = capture_write_all(plan_fd, p, nsinit_plan_size(p),
				    clock_mono_us() + 10 * 1000000LL)) < 0) {
		snprintf(err, errlen, "sending the sandbox its plan: %s", strerror(-rc));
		goto failed;
	}
	return 0;
failed:
	early_failure(rep_fd, p, err, errlen);
	return -1;
}

/* An empty plan: its head zeroed; the pool (large, for long argument lists) is
 * written as it fills and only its used part is ever read or sent. */
static struct nsinit_plan *plan_new(void)
{
	struct nsinit_plan *p = xmalloc(sizeof *p);
	memset(p, 0, offsetof(struct nsinit_plan, pool));
	return p;
}

/* The plan of spec's run in sb, with the backend's global parts. 0 or -1 with err. */
static int make_plan(struct nsinit_plan *p, const struct sandbox *sb, const struct run_spec *spec,
		     char *err, size_t errlen)
{
	const struct nsplan_host host = {
	    .box_root = sandbox_options() ? sandbox_options()->box_root : "/run/judge",
	    .newroot = newroot_dir,
	    .filter = &filter,
	    .last_cap = last_cap,
	};
	return nsplan_build(p, sb, spec, &host, err, errlen);
}

/* The run's cgroup (the one made ahead by the previous run, or a new one) with
 * the run's limits. 0, or -1 with err and nothing made. */
static int run_cgroup(struct native_state *st, struct sandbox *sb, const struct run_limits *l,
		      struct cg *cg, char *err, size_t errlen)
{
	if (st->spare_made) {
		*cg = st->spare;
		st->spare_made = false;
	} else if (make_cg(sb, cg, err, errlen) < 0) {
		return -1;
	}
	/* the program's processes plus init */
	if (cg_set_limits(cg, l->memory_kb, l->processes + 1, err, errlen) < 0) {
		cg_remove(cg);
		return -1;
	}
	return 0;
}

/* The pump of one run: stdin (data, a file, or empty), stdout and stderr with
 * their caps, the report pipe (init writes the program's end there, then exits),
 * the wall deadline from t0 and the CPU check of ts every CPU_TICK_MS. ends: our
 * ends of stdin, stdout, stderr, report. */
static void pump_setup(struct capture *cap, const struct run_spec *spec, struct run_result *res,
		       const int ends[4], int in_file, int64_t t0, struct tick_state *ts)
{
	const struct run_limits *l = &spec->limits;
	cap->in_fd = ends[0];
	cap->in_file = in_file;
	/* no stdin at all: an empty one, closed at once */
	cap->in_data = spec->stdin_data || in_file >= 0 ? spec->stdin_data : "";
	cap->in_len = spec->stdin_data ? spec->stdin_len : 0;
	cap->out_fd = ends[1];
	cap->err_fd = ends[2];
	cap->wait_fd = ends[3];
	cap->out_max = (size_t)l->stdout_bytes;
	cap->err_max = (size_t)l->stderr_bytes;
	cap->out = &res->out;
	cap->err = &res->err;
	cap->deadline_us = t0 + l->wall_ms * 1000LL;
	cap->tick_ms = CPU_TICK_MS;
	cap->tick = cpu_tick;
	cap->tick_arg = ts;
	cap->on_output = spec->on_output;
	cap->output_arg = spec->output_arg;
}

/* A warm run's start (docs/warm-start.md, "Native"): init's NSINIT_READY on
 * rep_fd (it builds the root meanwhile), then z forks the program into init's
 * namespaces and cg with the run's descriptors (fds: stdin, stdout, stderr and
 * report; the worker's copies, which the caller closes after). 0, or -1: the
 * run is to start fresh (the caller kills init). */
static int warm_start(struct nz *z, const struct nsinit_plan *p, int rep_fd, const int fds[4],
		      int pidfd, const struct init_spawn *spawn, const struct cg *cg)
{
	struct pollfd pfd = {.fd = rep_fd, .events = POLLIN};
	struct nsinit_report r;
	int pr;
	while ((pr = poll(&pfd, 1, 10000)) < 0 && errno == EINTR)
		;
	if (pr != 1 || !(pfd.revents & POLLIN) || read(rep_fd, &r, sizeof r) != (ssize_t)sizeof r ||
	    r.type != NSINIT_READY)
		return -1;
	/* v1: the tasks files the clone child joins through; v2: cgroup.procs */
	int v2_fd = cg->procs_fd[0];
	const int *cg_fds = spawn->ncg_fds ? spawn->cg_fds : &v2_fd;
	int ncg = spawn->ncg_fds ? spawn->ncg_fds : v2_fd >= 0;
	return nz_fork(z, p, fds, pidfd, cg_fds, ncg) > 0 ? 0 : -1;
}

static int native_run_once(struct sandbox *sb, const struct run_spec *spec, struct run_result *res,
			   bool try_warm, bool *again)
{
	int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1};
	int psync[2] = {-1, -1}, prep[2] = {-1, -1}, pidfd = -1, in_file = -1;
	struct nsinit_plan *p = NULL;
	struct cg cg = {0};
	bool cg_made = false;
	pid_t pid = -1;
	char err[512];
	const struct run_limits *l = &spec->limits;
	struct capture cap;
	struct nz *z = NULL;
	capture_init(&cap);

	if (!ready)
		return sandbox_fail(res, "native sandbox unavailable: %s", init_error);
	/* the program may change the box behind a gVisor session's caches */
	sb->box_changes++;
	struct native_state *st = native_state(sb);
	/* the previous run's processes must be gone before this one starts: runs
	 * of one sandbox never overlap */
	reap_previous(st);

	p = plan_new();
	if (make_plan(p, sb, spec, err, sizeof err) < 0) {
		sandbox_fail(res, "%s", err);
		goto out;
	}
	if (try_warm && nz_eligible(sb->tenant_key, spec) && (z = nz_get(sb->tenant_key, spec)))
		p->zygote = 1;

	int rc;
	if (run_cgroup(st, sb, l, &cg, err, sizeof err) < 0) {
		sandbox_fail(res, "%s", err);
		goto out;
	}
	cg_made = true;
	if (spec->stdin_path) {
		in_file = open(spec->stdin_path, O_RDONLY | O_CLOEXEC);
		if (in_file < 0) {
			sandbox_fail(res, "cannot open stdin file '%s': %s", spec->stdin_path,
				     strerror(errno));
			goto out;
		}
	}
	if (pipe2(pin, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0 ||
	    pipe2(psync, O_CLOEXEC) < 0 || pipe2(prep, O_CLOEXEC) < 0) {
		sandbox_fail(res, "pipe: %s", strerror(errno));
		goto out;
	}
	const int child_fds[5] = {pin[0], pout[1], perr[1], psync[0], prep[1]};
	struct init_spawn spawn;
	spawn_prepare(&spawn, child_fds, &cg);

	int64_t t0 = clock_mono_us();
	int clone_errno = 0;
	bool in_cg = false;
	pid = start_init(sb, &spawn, &cg, spec->net_ns_fd, &pidfd, &in_cg, &clone_errno);
	if (pid < 0) {
		sandbox_fail(res, "clone3: %s", strerror(clone_errno));
		goto out;
	}
	close_fd(&psync[0]);
	if (!z) {
		close_fd(&pin[0]);
		close_fd(&pout[1]);
		close_fd(&perr[1]);
		close_fd(&prep[1]);
	}

	if (release_init(pid, sb, &cg, in_cg, p, psync[1], prep[0], err, sizeof err) < 0) {
		sandbox_fail(res, "%s", err);
		goto kill;
	}
	close_fd(&psync[1]);
	if (z) {
		const int fds[4] = {pin[0], pout[1], perr[1], prep[1]};
		if (warm_start(z, p, prep[0], fds, pidfd, &spawn, &cg) < 0) {
			*again = true;
			goto kill;
		}
		close_fd(&pin[0]);
		close_fd(&pout[1]);
		close_fd(&perr[1]);
		close_fd(&prep[1]);
	}
	/* while the child builds its root: the previous run's cgroup goes, the
	 * next run's is made */
	remove_previous_cg(st);
	if (spec->more_runs && !st->spare_made && make_cg(sb, &st->spare, err, sizeof err) == 0)
		st->spare_made = true;

	struct tick_state ts = {.cg = &cg, .cpu_limit_us = l->cpu_ms * 1000LL};
	const int ends[4] = {pin[1], pout[0], perr[0], prep[0]};
	pin[1] = -1; /* the pump closes it */
	pump_setup(&cap, spec, res, ends, in_file, t0, &ts);
	enum capture_end end = capture_pump(&cap);
	res->out_truncated = cap.out_truncated;
	res->err_truncated = cap.err_truncated;

	struct nsinit_report exit_rep = {0}, fail_rep = {0};
	siginfo_t si = {0};
	collect_init(st, end, prep[0], &pidfd, &exit_rep, &fail_rep, &si);
	pid = -1;
	struct run_facts f;
	end_facts(&f, p, &cg, end, &cap, ts.over, &exit_rep, &fail_rep, &si);
	f.wall_us = clock_mono_us() - t0;
	verdict_decide(&f, l, res);
	goto out;

kill:
	if (pidfd >= 0)
		syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	if (pid > 0)
		while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
			;
out:
	capture_release(&cap);
	int *const pipes[] = {pin, pout, perr, psync, prep};
	for (size_t i = 0; i < sizeof pipes / sizeof pipes[0]; i++)
		close_fd(&pipes[i][0]), close_fd(&pipes[i][1]);
	close_fd(&pidfd);
	close_fd(&in_file);
	if (cg_made && st && st->pidfd >= 0 && !st->cg_made) {
		/* init may still be in it: removed with the next run or at close */
		st->cg = cg;
		st->cg_made = true;
	} else if (cg_made && (rc = cg_remove(&cg)) < 0) {
		log_warn("native: cannot remove cgroup %s: %s", cg.name, strerror(-rc));
	}
	if (z)
		nz_put(z);
	free(p);
	return 0;
}

/* A run; a warm one that could not start (docs/warm-start.md) starts fresh. */
static int native_run(struct sandbox *sb, const struct run_spec *spec, struct run_result *res)
{
	bool again = false;
	int rc = native_run_once(sb, spec, res, true, &again);
	if (!again)
		return rc;
	run_result_release(res);
	run_result_init(res);
	return native_run_once(sb, spec, res, false, &again);
}

static int native_global_init(const struct sandbox_options *opts, char *err, size_t errlen)
{
	int ret = -1;
	ready = false;
	if (geteuid() != 0) {
		snprintf(init_error, sizeof init_error, "the native sandbox needs root");
		goto out;
	}
	if (cg_detect(&cg_root, opts->cgroup_root, opts->cgroup_parent, init_error,
		      sizeof init_error) < 0)
		goto out;
	cg_root_parents(&cg_root, note_parent, NULL);
	scmp_release(&filter);
	if (scmp_build(&filter, init_error, sizeof init_error) < 0)
		goto out;
	char init_path[400];
	if (sandbox_helper_path("ns_init", "JUDGE_NS_INIT", init_path, sizeof init_path) < 0) {
		snprintf(init_error, sizeof init_error, "%s not found (run make)", init_path);
		goto out;
	}
	close_fd(&ns_init_fd);
	if ((ns_init_fd = open(init_path, O_PATH | O_CLOEXEC)) < 0) {
		snprintf(init_error, sizeof init_error, "cannot open '%s': %m", init_path);
		goto out;
	}
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	if (f) {
		if (fscanf(f, "%d", &last_cap) != 1)
			last_cap = 63;
		fclose(f);
	} else {
		last_cap = 63;
	}
	if (host_netns_fd < 0) {
		for (int i = 0; i < NETNS_SLOTS; i++)
			netns_fd[i] = -1;
		host_netns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	}
	if (snprintf(newroot_dir, sizeof newroot_dir, "%s/.root", opts->box_root) >=
	    (int)sizeof newroot_dir) {
		snprintf(init_error, sizeof init_error, "box_root is too long");
		goto out;
	}
	if (mkdir(newroot_dir, 0755) < 0 && errno != EEXIST) {
		snprintf(init_error, sizeof init_error, "cannot create '%s': %s", newroot_dir,
			 strerror(errno));
		goto out;
	}
	ready = true;
	init_error[0] = 0;
	ret = 0;
out:
	if (ret < 0)
		snprintf(err, errlen, "%s", init_error);
	return ret;
}

static void native_global_shutdown(void)
{
	pthread_mutex_lock(&netns_lock);
	for (int i = 0; i < NETNS_SLOTS && host_netns_fd >= 0; i++) {
		if (netns_fd[i] >= 0)
			close(netns_fd[i]);
		netns_fd[i] = -1;
	}
	pthread_mutex_unlock(&netns_lock);
	nz_shutdown();
	scmp_release(&filter);
	close_fd(&ns_init_fd);
	ready = false;
	snprintf(init_error, sizeof init_error, "native backend shut down");
}

static bool native_works(char *why, size_t whylen)
{
	if (!ready)
		snprintf(why, whylen, "%s", init_error);
	return ready;
}

/* ---- live processes (sandbox_start) ---- */

/* A live process's own state: its init, report pipe, cgroup and plan. */
struct native_proc {
	pid_t pid; /* init's host pid */
	int pidfd, rep_fd;
	struct cg cg;
	struct nsinit_plan *plan;
	int net_fd;  /* > 0: the network namespace it joins (not owned) */
	bool killed; /* SIGKILLed through init before the program showed */
};

static void native_proc_end(struct native_proc *np)
{
	if (np->pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, np->pidfd, SIGKILL, NULL, 0);
		siginfo_t si;
		while (waitid((idtype_t)P_PIDFD, (id_t)np->pidfd, &si, WEXITED) < 0 &&
		       errno == EINTR)
			;
		close_fd(&np->pidfd);
	}
	close_fd(&np->rep_fd);
	int rc;
	if (np->cg.root && (rc = cg_remove(&np->cg)) < 0)
		log_warn("native: cannot remove cgroup %s: %s", np->cg.name, strerror(-rc));
	np->cg.root = NULL;
}

/* Clones init with the pipes and releases it; fills np and p's fds. 0 or -1 with err. */
static int native_launch(struct sandbox *sb, struct native_proc *np, struct sandbox_proc *p,
			 char *err, size_t errlen)
{
	int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1};
	int psync[2] = {-1, -1}, prep[2] = {-1, -1}, clone_errno = 0, ret = -1;
	bool in_cg = false;
	if (pipe2(pin, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0 ||
	    pipe2(psync, O_CLOEXEC) < 0 || pipe2(prep, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto out;
	}
	const int child_fds[5] = {pin[0], pout[1], perr[1], psync[0], prep[1]};
	struct init_spawn spawn;
	spawn_prepare(&spawn, child_fds, &np->cg);
	np->pid = start_init(sb, &spawn, &np->cg, np->net_fd, &np->pidfd, &in_cg, &clone_errno);
	if (np->pid < 0) {
		np->pidfd = -1;
		snprintf(err, errlen, "clone3: %s", strerror(clone_errno));
		goto out;
	}
	close_fd(&pin[0]), close_fd(&pout[1]), close_fd(&perr[1]);
	close_fd(&psync[0]), close_fd(&prep[1]);
	if (release_init(np->pid, sb, &np->cg, in_cg, np->plan, psync[1], prep[0], err, errlen) < 0)
		goto out;
	p->in_fd = pin[1], p->out_fd = pout[0], p->err_fd = perr[0];
	pin[1] = pout[0] = perr[0] = -1;
	np->rep_fd = prep[0];
	prep[0] = -1;
	ret = 0;
out:;
	int *const pipes[] = {pin, pout, perr, psync, prep};
	for (size_t i = 0; i < sizeof pipes / sizeof pipes[0]; i++)
		close_fd(&pipes[i][0]), close_fd(&pipes[i][1]);
	return ret;
}

/* Live processes are cloned by one long-lived thread: init dies with the thread
 * that cloned it (PR_SET_PDEATHSIG is per thread), and a live program must
 * outlive the (maybe short-lived) thread that asked for it. */
struct launch_req {
	struct sandbox *sb;
	struct native_proc *np;
	struct sandbox_proc *p;
	char *err;
	size_t errlen;
	int ret;
	bool done;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_once_t once;
	bool running;
	struct launch_req *req;
} launcher = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_ONCE_INIT, false, NULL};

static void *launcher_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&launcher.lock);
	for (;;) {
		while (!launcher.req || launcher.req->done)
			pthread_cond_wait(&launcher.cond, &launcher.lock);
		struct launch_req *r = launcher.req;
		pthread_mutex_unlock(&launcher.lock);
		r->ret = native_launch(r->sb, r->np, r->p, r->err, r->errlen);
		pthread_mutex_lock(&launcher.lock);
		r->done = true;
		pthread_cond_broadcast(&launcher.cond);
	}
	return NULL;
}

static void launcher_start(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, launcher_main, NULL) == 0) {
		pthread_detach(t);
		launcher.running = true;
	}
}

/* native_launch in the launcher thread (or here when it could not start). */
static int launch(struct sandbox *sb, struct native_proc *np, struct sandbox_proc *p, char *err,
		  size_t errlen)
{
	pthread_once(&launcher.once, launcher_start);
	if (!launcher.running)
		return native_launch(sb, np, p, err, errlen);
	struct launch_req r = {.sb = sb, .np = np, .p = p, .err = err, .errlen = errlen};
	pthread_mutex_lock(&launcher.lock);
	while (launcher.req)
		pthread_cond_wait(&launcher.cond, &launcher.lock);
	launcher.req = &r;
	pthread_cond_broadcast(&launcher.cond);
	while (!r.done)
		pthread_cond_wait(&launcher.cond, &launcher.lock);
	launcher.req = NULL;
	pthread_cond_broadcast(&launcher.cond);
	pthread_mutex_unlock(&launcher.lock);
	return r.ret;
}

static int native_start(struct sandbox *sb, const struct run_spec *spec, struct sandbox_proc *p,
			char *err, size_t errlen)
{
	if (!ready) {
		snprintf(err, errlen, "native sandbox unavailable: %s", init_error);
		return -1;
	}
	sb->box_changes++;
	struct native_proc *np = xcalloc(1, sizeof *np);
	np->pidfd = np->rep_fd = -1;
	np->net_fd = spec->net_ns_fd;
	np->plan = plan_new();
	if (make_plan(np->plan, sb, spec, err, errlen) < 0)
		goto fail;
	struct native_state *st = native_state(sb);
	if (run_cgroup(st, sb, &spec->limits, &np->cg, err, errlen) < 0) {
		np->cg.root = NULL;
		goto fail;
	}
	long weight = spec->cpu_weight != CG_CPU_WEIGHT_DEFAULT ? spec->cpu_weight : 0;
	if ((spec->cpu_millis > 0 || weight > 0) &&
	    (cg_add_cpu(&np->cg, err, errlen) < 0 ||
	     (spec->cpu_millis > 0 && cg_set_cpu(&np->cg, spec->cpu_millis, err, errlen) < 0) ||
	     (weight > 0 && cg_set_cpu_weight(&np->cg, weight, err, errlen) < 0)))
		goto fail;
	if (launch(sb, np, p, err, errlen) < 0)
		goto fail;
	p->impl = np;
	return 0;
fail:
	native_proc_end(np);
	free(np->plan);
	free(np);
	return -1;
}

/* Every process of the run but init (which then reports how the program ended). */
static int native_proc_signal(struct sandbox_proc *p, int sig)
{
	struct native_proc *np = p->impl;
	pid_t pids[512];
	int n = cg_list(&np->cg, false, pids, 512), sent = 0;
	for (int i = 0; i < n; i++)
		if (pids[i] != np->pid && kill(pids[i], sig) == 0)
			sent++;
	if (!sent && sig == SIGKILL && np->pidfd >= 0) {
		/* the program is not there yet: its init goes, and it with it */
		np->killed = true;
		return syscall(SYS_pidfd_send_signal, np->pidfd, SIGKILL, NULL, 0) < 0 ? -errno : 0;
	}
	return n < 0 ? n : sent ? 0 : -ESRCH;
}

static int native_proc_usage(struct sandbox_proc *p, long long *cpu_us, long *memory_kb)
{
	struct native_proc *np = p->impl;
	int rc = cg_cpu_us(&np->cg, cpu_us);
	return rc < 0 ? rc : cg_memory_current_kb(&np->cg, memory_kb);
}

static struct cg *native_proc_cg(struct sandbox_proc *p)
{
	struct native_proc *np = p->impl;
	return np->cg.root ? &np->cg : NULL;
}

static int native_proc_ooms(struct sandbox_proc *p, long *count)
{
	struct native_proc *np = p->impl;
	return cg_oom_kills(&np->cg, count);
}

/* Polls init's pidfd (init exits once the program did) and the CPU of the cgroup. */
static void native_proc_wait(struct sandbox_proc *p, int64_t deadline_us, struct run_result *res)
{
	struct native_proc *np = p->impl;
	long long cpu_us = 0, cpu_limit = p->limits.cpu_ms * 1000LL;
	bool over = false, late = false;
	for (;;) {
		struct pollfd pfd = {.fd = np->pidfd, .events = POLLIN};
		int64_t left = deadline_us - clock_mono_us();
		if (left <= 0) {
			late = true;
			break;
		}
		int r =
		    poll(&pfd, 1, left / 1000 < CPU_TICK_MS ? (int)(left / 1000) + 1 : CPU_TICK_MS);
		if (r > 0)
			break;
		if (cg_cpu_us(&np->cg, &cpu_us) == 0 && cpu_us > cpu_limit) {
			over = true;
			break;
		}
	}
	enum capture_end end = over ? CAPTURE_STOPPED : late ? CAPTURE_DEADLINE : CAPTURE_DONE;
	struct nsinit_report exit_rep = {0}, fail_rep = {0};
	siginfo_t si = {0};
	if (end != CAPTURE_DONE)
		syscall(SYS_pidfd_send_signal, np->pidfd, SIGKILL, NULL, 0);
	while (waitid((idtype_t)P_PIDFD, (id_t)np->pidfd, &si, WEXITED) < 0 && errno == EINTR)
		;
	close_fd(&np->pidfd);
	fcntl(np->rep_fd, F_SETFL, O_NONBLOCK);
	read_reports(np->rep_fd, &exit_rep, &fail_rep);
	struct capture cap;
	capture_init(&cap);
	struct run_facts f;
	end_facts(&f, np->plan, &np->cg, end, &cap, over, &exit_rep, &fail_rep, &si);
	if (np->killed && !exit_rep.type && !fail_rep.type) {
		f.end = RUN_END_SIGNALED;
		f.code = SIGKILL;
	}
	f.wall_us = clock_mono_us() - p->t0_us;
	verdict_decide(&f, &p->limits, res);
	native_proc_end(np);
}

static void native_proc_free(struct sandbox_proc *p)
{
	struct native_proc *np = p->impl;
	if (!np)
		return;
	native_proc_end(np);
	free(np->plan);
	free(np);
	p->impl = NULL;
}

const struct sandbox_ops native_ops = {
    .name = "native",
    .joins_netns = true,
    .global_init = native_global_init,
    .global_shutdown = native_global_shutdown,
    .works = native_works,
    .run = native_run,
    .close = native_close,
    .start = native_start,
    .proc_signal = native_proc_signal,
    .proc_usage = native_proc_usage,
    .proc_ooms = native_proc_ooms,
    .proc_cg = native_proc_cg,
    .proc_wait = native_proc_wait,
    .proc_free = native_proc_free,
};
