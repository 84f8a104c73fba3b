/* native: the namespace backend — one program in fresh Linux namespaces around the box.
 *
 * Theory of operation. The worker (root, multi-threaded) prepares everything in
 * memory first: the cgroup with its limits, pipes, the list of mount steps, the
 * seccomp BPF (built once). Then clone3() starts "init" in new user, mount, pid,
 * net, ipc and uts namespaces. From there on the child only makes system calls
 * (no malloc, no locks: another worker thread may have held them at clone time).
 *
 *   worker                              init (pid 1 of the new pid namespace)
 *   ------                              ----
 *   clone3 (v2: CLONE_INTO_CGROUP) ──>  join the cgroup (v1: itself, see
 *   write uid_map/gid_map               cg_self_join_fds), dup fds to 0..4,
 *                                        close the rest, wait
 *   sync byte ───────────────────────>  unshare cgroup ns, become uid 1000 (keeping
 *                                        caps of the user namespace), mount a tmpfs
 *                                        root: read-only binds, /etc, /dev, /proc,
 *                                        /tmp, /box; pivot_root; root read-only
 *                                        fork ──> program: drop caps, no_new_privs,
 *                                                 rlimits, chdir /box, seccomp, execve
 *   pump stdin/stdout/stderr,           wait for the program; report its status
 *   poll CPU of the cgroup (10 ms),     on the report pipe; exit — the kernel then
 *   wall deadline; kill init on limits  kills whatever is left in the namespace
 *   reap init, read report, cgroup
 *   peak/oom/cpu, remove the cgroup
 *
 * init is not the program, so the program keeps normal signal semantics, and when
 * init ends (or is killed) every process of the namespace dies with it: setsid and
 * double-fork survivors included. init is not dumpable: its memory is a copy of the
 * worker's, and the program (same uid) must not read it through /proc/1.
 */
#define _GNU_SOURCE
#include "runner/backend.h"

#include <errno.h>
#include <fcntl.h>
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

#include "common/config.h"
#include "common/log.h"
#include "runner/capture.h"
#include "runner/cg.h"
#include "runner/scmp.h"
#include "runner/verdict.h"

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT		      (1 << 0)
#define SECBIT_NOROOT_LOCKED	      (1 << 1)
#define SECBIT_NO_SETUID_FIXUP	      (1 << 2)
#define SECBIT_NO_SETUID_FIXUP_LOCKED (1 << 3)
#define SECBIT_KEEP_CAPS_LOCKED	      (1 << 5)
#endif

#define INSIDE_ID   1000 /* uid and gid of the program inside */
#define REPORT_FD   4
#define SYNC_FD	    3
#define MAX_OPS	    96
#define POOL_BYTES  32768
#define CPU_TICK_MS 10
#define PROG_STACK  (64 * 1024)
#define NETNS_SLOTS 256

/* ---- global state (set once by native_global_init) ---- */

static struct cg_root cg_root;
static struct scmp_filter filter;
static bool ready;
static char init_error[512] = "native backend not initialised";
static int last_cap = 40;
static char newroot_dir[400]; /* where init mounts its root tmpfs */

/* One empty network namespace per slot, made once and entered by every run of
 * that slot: creating and destroying a network namespace per run costs about a
 * millisecond. It is owned by the host's user namespace, so a program can change
 * nothing in it (lo stays down); runs of one slot never overlap, and sockets die
 * with their processes, so nothing passes from one run to the next. */
static pthread_mutex_t netns_lock = PTHREAD_MUTEX_INITIALIZER;
static int netns_fd[NETNS_SLOTS];
static int host_netns_fd = -1;

/* ---- the plan: everything the child needs, built before clone ---- */

enum op_kind {
	OP_MKDIR,   /* a */
	OP_MKFILE,  /* a: empty file, a mount point for a file bind */
	OP_SYMLINK, /* a -> data */
	OP_BIND_RO, /* data (host) -> a, then read-only, nosuid, nodev */
	OP_BIND,    /* data (host) -> a, flags of the source kept */
	OP_TMPFS,   /* a, options data */
	OP_PROC,    /* a */
	OP_WRITE,   /* a, contents data (len) */
};

struct op {
	enum op_kind kind;
	const char *a;	  /* path relative to the new root */
	const char *data; /* see op_kind */
	size_t len;
};

struct plan {
	/* stack of the program between its clone and execve (it shares init's memory) */
	char prog_stack[PROG_STACK] __attribute__((aligned(64)));
	struct op ops[MAX_OPS];
	int nops;
	char pool[POOL_BYTES];
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
};

enum report_type { REP_FAIL = 1, REP_EXIT = 2 };

/* What init and the program tell the worker; one write each (< PIPE_BUF). */
struct report {
	int type;
	int step;	/* REP_FAIL: enum step */
	int op;		/* REP_FAIL: index in plan.ops, or -1 */
	int err;	/* REP_FAIL: errno */
	int status;	/* REP_EXIT: wait status of the program */
	long maxrss_kb; /* REP_EXIT: rusage of the program */
};

enum step {
	S_SYNC,
	S_FDS,
	S_CGJOIN,
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
};

static const char *const step_names[] = {
    [S_SYNC] = "waiting for the worker",
    [S_FDS] = "setting up descriptors",
    [S_CGJOIN] = "joining the run's cgroup",
    [S_CGROUPNS] = "unsharing the cgroup namespace",
    [S_SETGROUPS] = "setgroups",
    [S_SETGID] = "setresgid",
    [S_KEEPCAPS] = "PR_SET_KEEPCAPS",
    [S_SETUID] = "setresuid",
    [S_CAPSET] = "capset",
    [S_PRIVATE] = "making mounts private",
    [S_ROOT] = "mounting the root tmpfs",
    [S_OP] = "building the root",
    [S_HOSTNAME] = "sethostname",
    [S_PIVOT] = "pivot_root",
    [S_UMOUNT_OLD] = "unmounting the old root",
    [S_RO_ROOT] = "making the root read-only",
    [S_FORK] = "forking the program",
    [S_SECUREBITS] = "PR_SET_SECUREBITS",
    [S_CAPBSET] = "dropping the bounding set",
    [S_NNP] = "PR_SET_NO_NEW_PRIVS",
    [S_RLIMIT] = "setrlimit",
    [S_CHDIR_BOX] = "chdir /box",
    [S_SECCOMP] = "installing the seccomp filter",
    [S_EXEC] = "execve",
};

static const char *op_names[] = {
    [OP_MKDIR] = "mkdir",     [OP_MKFILE] = "create", [OP_SYMLINK] = "symlink",
    [OP_BIND_RO] = "bind ro", [OP_BIND] = "bind",     [OP_TMPFS] = "mount tmpfs",
    [OP_PROC] = "mount proc", [OP_WRITE] = "write",
};

/* Copies s into the plan's pool; the copy survives clone (plain memory). */
static const char *pool_str(struct plan *p, const char *s)
{
	size_t n = strlen(s) + 1;
	if (p->used + n > sizeof p->pool) {
		p->overflow = true;
		return "";
	}
	char *d = p->pool + p->used;
	memcpy(d, s, n);
	p->used += n;
	return d;
}

static void add_op(struct plan *p, enum op_kind k, const char *a, const char *data)
{
	if (p->nops >= MAX_OPS) {
		p->overflow = true;
		return;
	}
	struct op *o = &p->ops[p->nops++];
	o->kind = k;
	o->a = pool_str(p, a[0] == '/' ? a + 1 : a);
	o->data = data ? pool_str(p, data) : NULL;
	o->len = data ? strlen(data) : 0;
}

/* mkdir of every parent of rel (relative path), then of rel itself. */
static void add_mkdirs(struct plan *p, const char *rel)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", rel[0] == '/' ? rel + 1 : rel);
	for (char *s = strchr(buf, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		add_op(p, OP_MKDIR, buf, NULL);
		*s = '/';
	}
	add_op(p, OP_MKDIR, buf, NULL);
}

/* The host's top folders: a real folder is bound read-only, a symlink (usrmerge:
 * /bin -> usr/bin) is recreated as the same symlink. */
static const char *const top_dirs[] = {"/usr",	  "/lib", "/lib64", "/lib32",
				       "/libx32", "/bin", "/sbin"};

static void add_host_path(struct plan *p, const char *path, bool must)
{
	struct stat st;
	if (lstat(path, &st) < 0) {
		if (must)
			p->overflow = true;
		return;
	}
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(path, target, sizeof target - 1);
		if (n <= 0)
			return;
		target[n] = 0;
		add_op(p, OP_SYMLINK, path, target);
	} else if (S_ISDIR(st.st_mode)) {
		add_mkdirs(p, path);
		add_op(p, OP_BIND_RO, path, path);
	} else if (S_ISREG(st.st_mode)) {
		add_op(p, OP_MKFILE, path, NULL);
		add_op(p, OP_BIND_RO, path, path);
	}
}

static const char etc_passwd[] = "root:x:0:0:root:/root:/usr/sbin/nologin\n"
				 "box:x:1000:1000:box:/box:/bin/sh\n"
				 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char etc_group[] = "root:x:0:\nbox:x:1000:\nnogroup:x:65534:\n";
static const char etc_hosts[] = "127.0.0.1\tlocalhost box\n::1\tlocalhost\n";
static const char etc_nsswitch[] = "passwd: files\ngroup: files\nhosts: files\n";

/* True when path is one of the top folders or below one (already visible). */
static bool under_top(const char *path)
{
	for (size_t i = 0; i < sizeof top_dirs / sizeof top_dirs[0]; i++) {
		size_t n = strlen(top_dirs[i]);
		if (!strncmp(path, top_dirs[i], n) && (path[n] == '/' || !path[n]))
			return true;
	}
	return false;
}

static bool path_ok(const char *path)
{
	if (path[0] != '/' || !path[1] || strlen(path) >= 512)
		return false;
	for (const char *s = path; (s = strstr(s, "..")); s += 2)
		if ((s == path || s[-1] == '/') && (s[2] == '/' || !s[2]))
			return false;
	return true;
}

/* True when path is dir or below it. */
static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* Folders a language may not bind: the kernel's views, the host's secrets and
 * configuration as a whole (single entries of /etc are fine), and the boxes. */
static bool forbidden_ro_path(const char *path)
{
	static const char *const under[] = {"/proc", "/sys", "/dev", "/root", "/home", "/run"};
	for (size_t i = 0; i < sizeof under / sizeof under[0]; i++)
		if (path_under(path, under[i]))
			return true;
	const char *root = sandbox_config() ? sandbox_config()->box_root : "/run/judge";
	return !strcmp(path, "/etc") || path_under(path, root);
}

/* Builds the whole plan of one run. Returns 0 or -1 with the reason in err. */
static int plan_build(struct plan *p, const struct sandbox *sb, const struct run_spec *spec,
		      char *err, size_t errlen)
{
	const struct run_limits *l = &spec->limits;
	char opts[160];

	for (size_t i = 0; i < sizeof top_dirs / sizeof top_dirs[0]; i++)
		add_host_path(p, top_dirs[i], false);

	add_op(p, OP_MKDIR, "etc", NULL);
	add_op(p, OP_WRITE, "etc/passwd", etc_passwd);
	add_op(p, OP_WRITE, "etc/group", etc_group);
	add_op(p, OP_WRITE, "etc/hosts", etc_hosts);
	add_op(p, OP_WRITE, "etc/nsswitch.conf", etc_nsswitch);
	add_op(p, OP_WRITE, "etc/hostname", "box\n");
	add_host_path(p, "/etc/ld.so.cache", false);
	add_host_path(p, "/etc/alternatives", false);

	for (const char *const *rp = spec->ro_paths; rp && *rp; rp++) {
		if (!path_ok(*rp)) {
			snprintf(err, errlen, "bad read-only path '%s'", *rp);
			return -1;
		}
		if (under_top(*rp))
			continue;
		struct stat st;
		if (stat(*rp, &st) < 0) {
			snprintf(err, errlen, "read-only path '%s': %s", *rp, strerror(errno));
			return -1;
		}
		if (forbidden_ro_path(*rp)) {
			snprintf(err, errlen, "read-only path '%s' is not allowed", *rp);
			return -1;
		}
		char parent[PATH_MAX];
		snprintf(parent, sizeof parent, "%s", *rp);
		char *slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = 0;
			add_mkdirs(p, parent);
		}
		add_op(p, S_ISDIR(st.st_mode) ? OP_MKDIR : OP_MKFILE, *rp, NULL);
		add_op(p, OP_BIND_RO, *rp, *rp);
	}

	long long tmp = l->tmp_bytes;
	long long inodes = tmp / 8192;
	if (inodes < 1024)
		inodes = 1024;
	if (inodes > 65536)
		inodes = 65536;
	add_op(p, OP_MKDIR, "tmp", NULL);
	snprintf(opts, sizeof opts, "size=%lld,nr_inodes=%lld,mode=1777", tmp, inodes);
	add_op(p, OP_TMPFS, "tmp", opts);

	add_op(p, OP_MKDIR, "box", NULL);
	add_op(p, OP_BIND, "box", sb->box_path);

	add_op(p, OP_MKDIR, "dev", NULL);
	static const char *const devs[] = {"null", "zero", "full", "random", "urandom"};
	for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++) {
		char rel[32], host[32];
		snprintf(rel, sizeof rel, "dev/%s", devs[i]);
		snprintf(host, sizeof host, "/dev/%s", devs[i]);
		add_op(p, OP_MKFILE, rel, NULL);
		add_op(p, OP_BIND, rel, host);
	}
	add_op(p, OP_SYMLINK, "dev/fd", "/proc/self/fd");
	add_op(p, OP_SYMLINK, "dev/stdin", "/proc/self/fd/0");
	add_op(p, OP_SYMLINK, "dev/stdout", "/proc/self/fd/1");
	add_op(p, OP_SYMLINK, "dev/stderr", "/proc/self/fd/2");
	add_op(p, OP_MKDIR, "dev/shm", NULL);
	/* /dev/shm is the run's /tmp: one cap for both */
	add_op(p, OP_BIND, "dev/shm", "tmp");
	add_op(p, OP_MKDIR, "proc", NULL);
	add_op(p, OP_PROC, "proc", NULL);

	if (p->overflow) {
		snprintf(err, errlen, "sandbox plan too large (too many read-only paths)");
		return -1;
	}

	p->argv = spec->argv;
	p->env = spec->env;
	rlim_t fsize = (rlim_t)l->file_bytes;
	p->rl_fsize = (struct rlimit){fsize, fsize};
	p->rl_nofile = (struct rlimit){(rlim_t)l->open_files, (rlim_t)l->open_files};
	/* the stack may use all the memory the cgroup allows (as on most judges) */
	rlim_t stack = (rlim_t)l->memory_kb * 1024;
	p->rl_stack = (struct rlimit){stack, stack};
	/* a backstop only: the cgroup check (every 10 ms, whole tree) is the limit */
	rlim_t cpu_s = (rlim_t)(l->cpu_ms + 999) / 1000 + 1;
	p->rl_cpu = (struct rlimit){cpu_s, cpu_s + 1};
	/* no RLIMIT_NPROC: it counts every process of the host uid, and separate judge
	 * processes (a worker, a `judge run`) may use the same slot uid at once;
	 * pids.max of the run's own cgroup is the limit */
	p->host_uid = sb->host_uid;
	p->host_gid = sb->host_gid;
	return 0;
}

/* ---- the child side: system calls only ---- */

static __attribute__((noreturn)) void child_fail(int step, int op, int err)
{
	struct report r = {.type = REP_FAIL, .step = step, .op = op, .err = err};
	ssize_t n = write(REPORT_FD, &r, sizeof r);
	(void)n;
	_exit(127);
}

#define TRY(step, expr)                                                                            \
	do {                                                                                       \
		if ((expr) < 0)                                                                    \
			child_fail((step), -1, errno);                                             \
	} while (0)

static void reset_signals(void)
{
	struct {
		void *handler;
		unsigned long flags;
		void *restorer;
		uint64_t mask;
	} dfl = {SIG_DFL, 0, NULL, 0};
	for (int s = 1; s <= 64; s++)
		if (s != SIGKILL && s != SIGSTOP)
			syscall(SYS_rt_sigaction, s, &dfl, NULL, 8);
	uint64_t none = 0;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, 8);
}

static int caps_set(bool all)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		d[i].effective = all ? d[i].permitted : 0;
		if (!all)
			d[i].permitted = d[i].inheritable = 0;
	}
	return (int)syscall(SYS_capset, &h, d);
}

/* Mount flags that a bind in a user namespace must keep (locked), from statfs. */
static unsigned long locked_flags(const char *path)
{
	struct statfs s;
	unsigned long f = 0;
	if (statfs(path, &s) < 0)
		return 0;
	if (s.f_flags & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (s.f_flags & ST_NOATIME)
		f |= MS_NOATIME;
	if (s.f_flags & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	if (s.f_flags & ST_RELATIME)
		f |= MS_RELATIME;
	return f;
}

static int do_op(const struct op *o)
{
	int fd;
	switch (o->kind) {
	case OP_MKDIR:
		if (mkdir(o->a, 0755) < 0 && errno != EEXIST)
			return -1;
		return 0;
	case OP_MKFILE:
		fd = open(o->a, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return -1;
		close(fd);
		return 0;
	case OP_SYMLINK:
		return symlink(o->data, o->a);
	case OP_BIND_RO:
		if (mount(o->data, o->a, NULL, MS_BIND | MS_REC, NULL) < 0)
			return -1;
		return mount(NULL, o->a, NULL,
			     MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV |
				 locked_flags(o->a),
			     NULL);
	case OP_BIND:
		return mount(o->data, o->a, NULL, MS_BIND | MS_REC, NULL);
	case OP_TMPFS:
		return mount("tmpfs", o->a, "tmpfs", MS_NOSUID | MS_NODEV, o->data);
	case OP_PROC:
		return mount("proc", o->a, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	case OP_WRITE:
		fd = open(o->a, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return -1;
		if (write(fd, o->data, o->len) != (ssize_t)o->len) {
			close(fd);
			errno = EIO;
			return -1;
		}
		close(fd);
		return 0;
	}
	errno = EINVAL;
	return -1;
}

static int program_main(void *arg)
{
	const struct plan *p = arg;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	TRY(S_SECUREBITS,
	    prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
					 SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED));
	for (int c = 0; c <= last_cap; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			child_fail(S_CAPBSET, -1, errno);
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	TRY(S_CAPSET, caps_set(false));
	TRY(S_NNP, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
	TRY(S_RLIMIT, setrlimit(RLIMIT_FSIZE, &p->rl_fsize));
	TRY(S_RLIMIT, setrlimit(RLIMIT_NOFILE, &p->rl_nofile));
	TRY(S_RLIMIT, setrlimit(RLIMIT_STACK, &p->rl_stack));
	TRY(S_RLIMIT, setrlimit(RLIMIT_CPU, &p->rl_cpu));
	struct rlimit zero = {0, 0};
	TRY(S_RLIMIT, setrlimit(RLIMIT_CORE, &zero));
	TRY(S_CHDIR_BOX, chdir("/box"));
	int rc = scmp_apply(&filter);
	if (rc < 0)
		child_fail(S_SECCOMP, -1, -rc);
	execve(p->argv[0], (char *const *)p->argv, (char *const *)p->env);
	child_fail(S_EXEC, -1, errno);
}

static __attribute__((noreturn)) void init_main(const struct plan *p)
{
	/* first: a killed worker takes the run with it; our memory is the worker's */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	reset_signals();

	/* into the run cgroup before anything else (still on the worker's fd numbers:
	 * the report goes to its original descriptor) */
	for (int i = 0; i < p->ncg_fds; i++) {
		if (write(p->cg_fds[i], "0", 1) != 1) {
			struct report r = {
			    .type = REP_FAIL, .step = S_CGJOIN, .op = -1, .err = errno};
			ssize_t w = write(p->fds[4], &r, sizeof r);
			(void)w;
			_exit(127);
		}
	}

	/* fds: stdin, stdout, stderr, sync, report at 0..4; nothing else survives */
	int tmp[5];
	for (int i = 0; i < 5; i++) {
		tmp[i] = fcntl(p->fds[i], F_DUPFD_CLOEXEC, p->fd_floor);
		if (tmp[i] < 0)
			_exit(126);
	}
	for (int i = 0; i < 5; i++)
		if (dup2(tmp[i], i) < 0)
			_exit(126);
	if (syscall(SYS_close_range, 5, ~0U, 0) < 0)
		_exit(126);
	fcntl(SYNC_FD, F_SETFD, FD_CLOEXEC);
	fcntl(REPORT_FD, F_SETFD, FD_CLOEXEC);

	char c;
	ssize_t n;
	while ((n = read(SYNC_FD, &c, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		_exit(125); /* the worker is gone */
	close(SYNC_FD);

	TRY(S_CGROUPNS, unshare(CLONE_NEWCGROUP));
	/* raw system calls: glibc's set*id() broadcast the change to every thread
	 * it knows of, i.e. the worker's threads, which do not exist here: it would
	 * wait for them forever */
	TRY(S_SETGROUPS, syscall(SYS_setgroups, 0, NULL));
	TRY(S_SETGID, syscall(SYS_setresgid, INSIDE_ID, INSIDE_ID, INSIDE_ID));
	TRY(S_KEEPCAPS, prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
	/* files we create must belong to a mapped uid: become 1000 now, keep caps */
	TRY(S_SETUID, syscall(SYS_setresuid, INSIDE_ID, INSIDE_ID, INSIDE_ID));
	TRY(S_CAPSET, caps_set(true));
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

	TRY(S_PRIVATE, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	TRY(S_ROOT, mount("judge-root", newroot_dir, "tmpfs", MS_NOSUID | MS_NODEV,
			  "size=1m,nr_inodes=512,mode=0755"));
	TRY(S_ROOT, chdir(newroot_dir));
	for (int i = 0; i < p->nops; i++)
		if (do_op(&p->ops[i]) < 0)
			child_fail(S_OP, i, errno);
	TRY(S_HOSTNAME, sethostname("box", 3));
	TRY(S_PIVOT, syscall(SYS_pivot_root, ".", "."));
	TRY(S_UMOUNT_OLD, umount2(".", MNT_DETACH));
	TRY(S_PIVOT, chdir("/"));
	TRY(S_RO_ROOT,
	    mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL));

	/* vfork-like: the program borrows init's memory (its own stack) until execve,
	 * so nothing is copied; no atfork handlers of the worker's libraries run */
	pid_t prog = clone(program_main, (char *)p->prog_stack + PROG_STACK,
			   CLONE_VM | CLONE_VFORK | SIGCHLD, (void *)p);
	if (prog < 0)
		child_fail(S_FORK, -1, errno);

	/* init keeps nothing the program could use */
	close(0);
	close(1);
	close(2);
	caps_set(false);
	for (;;) {
		int st;
		struct rusage ru;
		pid_t w = wait4(-1, &st, __WALL, &ru);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			_exit(124);
		}
		if (w == prog) {
			struct report r = {
			    .type = REP_EXIT, .status = st, .maxrss_kb = ru.ru_maxrss};
			n = write(REPORT_FD, &r, sizeof r);
			(void)n;
			_exit(0);
		}
	}
}

/* ---- the worker side ---- */

/* clone3's arguments up to cgroup (version 2, Linux 5.7); an older kernel takes
 * them as long as the fields it does not know are zero */
struct clone_args_v2 {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	uint64_t set_tid, set_tid_size, cgroup;
};

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
	pid_t pid;
	int pidfd;
	struct cg cg;
	bool cg_made;
	struct cg spare; /* made ahead for the next run */
	bool spare_made;
};

/* Creates a new run cgroup "judge-<pid>-<sandbox>-<n>". Returns 0 or -errno. */
static int make_cg(struct sandbox *sb, struct cg *cg, char *err, size_t errlen)
{
	char name[64];
	snprintf(name, sizeof name, "judge-%d-%lu-%lu", (int)getpid(), sb->serial, sb->runs++);
	return cg_create(&cg_root, name, cg, err, errlen);
}

static void read_reports(int fd, struct report *exit_rep, struct report *fail_rep)
{
	struct report r;
	while (read(fd, &r, sizeof r) == (ssize_t)sizeof r) {
		if (r.type == REP_FAIL && !fail_rep->type)
			*fail_rep = r;
		else if (r.type == REP_EXIT)
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
	st->pid = -1;
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
		struct native_state *st = calloc(1, sizeof *st);
		if (!st)
			return NULL;
		st->pid = -1;
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

/* The facts of a set-up failure that init reported: which step, on which path. */
static void report_fault(struct run_facts *f, const struct report *r, const struct plan *p,
			 const struct run_spec *spec)
{
	const char *what = r->step >= 0 && r->step <= S_EXEC ? step_names[r->step] : "?";
	if (r->step == S_OP && r->op >= 0 && r->op < p->nops) {
		const struct op *o = &p->ops[r->op];
		run_facts_fault(f, "sandbox set-up failed: %s '/%s'%s%s: %s", op_names[o->kind],
				o->a, o->data ? " from " : "",
				o->data && o->kind != OP_WRITE ? o->data : "", strerror(r->err));
	} else if (r->step == S_EXEC) {
		run_facts_fault(f, "cannot execute '%s': %s", spec->argv[0], strerror(r->err));
	} else {
		run_facts_fault(f, "sandbox set-up failed: %s: %s", what, strerror(r->err));
	}
}

static int native_run(struct sandbox *sb, const struct run_spec *spec, struct run_result *res)
{
	int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1};
	int psync[2] = {-1, -1}, prep[2] = {-1, -1}, pidfd = -1, in_file = -1;
	struct plan *p = NULL;
	struct cg cg = {0};
	bool cg_made = false;
	pid_t pid = -1;
	char err[512];
	const struct run_limits *l = &spec->limits;
	struct capture cap;
	capture_init(&cap);

	if (!ready)
		return sandbox_fail(res, "native sandbox unavailable: %s", init_error);
	/* the program may change the box behind a gVisor session's caches */
	sb->box_changes++;
	struct native_state *st = native_state(sb);
	if (!st)
		return sandbox_fail(res, "out of memory");
	/* the previous run's processes must be gone before this one starts: runs
	 * of one sandbox never overlap */
	reap_previous(st);

	p = calloc(1, sizeof *p);
	if (!p)
		return sandbox_fail(res, "out of memory");
	if (plan_build(p, sb, spec, err, sizeof err) < 0) {
		sandbox_fail(res, "%s", err);
		goto out;
	}

	int rc;
	if (st->spare_made) {
		cg = st->spare;
		st->spare_made = false;
	} else if ((rc = make_cg(sb, &cg, err, sizeof err)) < 0) {
		sandbox_fail(res, "%s", err);
		goto out;
	}
	cg_made = true;
	const char *name = cg.name;
	p->ncg_fds = cg_self_join_fds(&cg, p->cg_fds);
	if (cg_set_limits(&cg, l->memory_kb, l->processes + 1, err, sizeof err) < 0) {
		sandbox_fail(res, "%s", err);
		goto out;
	}

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
	p->fds[0] = pin[0];
	p->fds[1] = pout[1];
	p->fds[2] = perr[1];
	p->fds[3] = psync[0];
	p->fds[4] = prep[1];
	p->fd_floor = 5;
	for (int i = 0; i < 5; i++)
		if (p->fds[i] >= p->fd_floor)
			p->fd_floor = p->fds[i] + 1;

	long long t0 = sandbox_now_us();
	struct clone_args_v2 ca = {
	    .flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
		     CLONE_PIDFD,
	    .pidfd = (uint64_t)(uintptr_t)&pidfd,
	    .exit_signal = SIGCHLD,
	};
	int netfd = slot_netns(sb->slot);
	if (netfd < 0 || setns(netfd, CLONE_NEWNET) < 0) {
		ca.flags |= CLONE_NEWNET;
		netfd = -1;
	}
	int into_fd = cg_clone_into_fd(&cg);
	if (into_fd >= 0) {
		ca.flags |= CLONE_INTO_CGROUP;
		ca.cgroup = (uint64_t)into_fd;
	}
	pid = (pid_t)syscall(SYS_clone3, &ca, sizeof ca);
	if (pid < 0 && into_fd >= 0 && (errno == EINVAL || errno == E2BIG)) {
		/* a kernel before 5.7: start outside, join by pid below */
		ca.flags &= ~(uint64_t)CLONE_INTO_CGROUP;
		ca.cgroup = 0;
		into_fd = -1;
		pid = (pid_t)syscall(SYS_clone3, &ca, sizeof ca);
	}
	if (pid == 0)
		init_main(p);
	int clone_errno = errno;
	if (netfd >= 0 && setns(host_netns_fd, CLONE_NEWNET) < 0) {
		log_error("native: cannot return to the host network namespace: %s",
			  strerror(errno));
		abort(); /* a worker thread without its network is beyond repair */
	}
	if (pid < 0) {
		sandbox_fail(res, "clone3: %s", strerror(clone_errno));
		goto out;
	}
	close_fd(&pin[0]);
	close_fd(&pout[1]);
	close_fd(&perr[1]);
	close_fd(&psync[0]);
	close_fd(&prep[1]);

	char map[64];
	snprintf(map, sizeof map, "%d %u 1\n", INSIDE_ID, (unsigned)sb->host_uid);
	if ((rc = write_proc(pid, "uid_map", map)) < 0) {
		sandbox_fail(res, "writing uid_map: %s", strerror(-rc));
		goto kill;
	}
	snprintf(map, sizeof map, "%d %u 1\n", INSIDE_ID, (unsigned)sb->host_gid);
	if ((rc = write_proc(pid, "gid_map", map)) < 0) {
		sandbox_fail(res, "writing gid_map: %s", strerror(-rc));
		goto kill;
	}
	if (!p->ncg_fds && into_fd < 0 && (rc = cg_join(&cg, pid)) < 0) {
		sandbox_fail(res, "joining cgroup %s: %s", name, strerror(-rc));
		goto kill;
	}
	if (write(psync[1], "g", 1) != 1) {
		sandbox_fail(res, "releasing the sandbox: %s", strerror(errno));
		goto kill;
	}
	close_fd(&psync[1]);
	/* while the child builds its root: the previous run's cgroup goes, the
	 * next run's is made */
	remove_previous_cg(st);
	if (spec->more_runs && !st->spare_made && make_cg(sb, &st->spare, err, sizeof err) == 0)
		st->spare_made = true;

	struct tick_state ts = {.cg = &cg, .cpu_limit_us = l->cpu_ms * 1000LL};
	cap.in_fd = pin[1];
	pin[1] = -1;
	cap.in_data = spec->stdin_data;
	cap.in_len = spec->stdin_data ? spec->stdin_len : 0;
	cap.in_file = in_file;
	if (!spec->stdin_data && in_file < 0)
		cap.in_data = "", cap.in_len = 0;
	cap.out_fd = pout[0];
	cap.err_fd = perr[0];
	cap.wait_fd = prep[0]; /* init reports the program's end, then exits */
	cap.out_max = (size_t)l->stdout_bytes;
	cap.err_max = (size_t)l->stderr_bytes;
	cap.out = &res->out;
	cap.err = &res->err;
	cap.deadline_us = t0 + l->wall_ms * 1000LL;
	cap.tick_ms = CPU_TICK_MS;
	cap.tick = cpu_tick;
	cap.tick_arg = &ts;
	enum capture_end end = capture_pump(&cap);
	res->out_truncated = cap.out_truncated;
	res->err_truncated = cap.err_truncated;

	struct report exit_rep = {0}, fail_rep = {0};
	siginfo_t si = {0};
	fcntl(prep[0], F_SETFL, O_NONBLOCK);
	if (end == CAPTURE_DONE)
		read_reports(prep[0], &exit_rep, &fail_rep);
	if (end == CAPTURE_DONE && exit_rep.type && !fail_rep.type) {
		/* The program is reaped and init is exiting, which kills whatever is
		 * left: the namespaces are torn down while we go on. The next run of
		 * this sandbox (before its clone) or sandbox_close reaps init. */
		st->pid = pid;
		st->pidfd = pidfd;
		pid = -1;
		pidfd = -1;
	} else {
		if (end != CAPTURE_DONE)
			syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
		/* init's exit waits until every process of its namespace is gone */
		while (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0 && errno == EINTR)
			;
		pid = -1;
		read_reports(prep[0], &exit_rep, &fail_rep);
	}
	struct run_facts f;
	run_facts_init(&f);
	f.wall_us = sandbox_now_us() - t0;
	long peak = 0, ooms = 0;
	cg_cpu_us(&cg, &f.cpu_us);
	if (cg_memory_peak_kb(&cg, &peak) < 0)
		peak = exit_rep.maxrss_kb;
	f.peak_kb = peak;
	cg_oom_kills(&cg, &ooms);
	f.oom_kill = ooms > 0;
	f.cpu_limit_hit = ts.over || end == CAPTURE_STOPPED;
	f.deadline_hit = end == CAPTURE_DEADLINE;
	f.output_over = end == CAPTURE_OUTPUT_LIMIT;
	f.capture_failed = end == CAPTURE_FAILED;
	f.capture_errno = cap.error;
	if (fail_rep.type)
		report_fault(&f, &fail_rep, p, spec);
	if (exit_rep.type == REP_EXIT && WIFSIGNALED(exit_rep.status)) {
		f.end = RUN_END_SIGNALED;
		f.code = WTERMSIG(exit_rep.status);
	} else if (exit_rep.type == REP_EXIT) {
		f.end = RUN_END_EXITED;
		f.code = WEXITSTATUS(exit_rep.status);
	} else if (si.si_code == CLD_EXITED && si.si_status == 125) {
		snprintf(f.message, sizeof f.message, "sandbox init lost the worker");
	} else {
		snprintf(f.message, sizeof f.message,
			 "sandbox init ended without a status (code %d, status %d)", si.si_code,
			 si.si_status);
	}
	run_verdict(&f, l, res);
	goto out;

kill:
	if (pidfd >= 0)
		syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	if (pid > 0)
		while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
			;
out:
	capture_release(&cap);
	close_fd(&pin[0]);
	close_fd(&pin[1]);
	close_fd(&pout[0]);
	close_fd(&pout[1]);
	close_fd(&perr[0]);
	close_fd(&perr[1]);
	close_fd(&psync[0]);
	close_fd(&psync[1]);
	close_fd(&prep[0]);
	close_fd(&prep[1]);
	close_fd(&pidfd);
	close_fd(&in_file);
	if (cg_made && st && st->pidfd >= 0 && !st->cg_made) {
		/* init may still be in it: removed with the next run or at close */
		st->cg = cg;
		st->cg_made = true;
	} else if (cg_made && (rc = cg_remove(&cg)) < 0) {
		log_warn("native: cannot remove cgroup %s: %s", cg.name, strerror(-rc));
	}
	free(p);
	return 0;
}

static int native_global_init(const struct judge_config *cfg, char *err, size_t errlen)
{
	int ret = -1;
	ready = false;
	if (geteuid() != 0) {
		snprintf(init_error, sizeof init_error, "the native sandbox needs root");
		goto out;
	}
	if (cg_detect(&cg_root, cfg->cgroup_root, init_error, sizeof init_error) < 0)
		goto out;
	int n = cg_sweep(&cg_root, "judge");
	if (n > 0)
		log_info("native: removed %d stale cgroup(s)", n);
	scmp_release(&filter);
	if (scmp_build(&filter, init_error, sizeof init_error) < 0)
		goto out;
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
	snprintf(newroot_dir, sizeof newroot_dir, "%s/.root", cfg->box_root);
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
	scmp_release(&filter);
	ready = false;
	snprintf(init_error, sizeof init_error, "native backend shut down");
}

static bool native_works(char *why, size_t whylen)
{
	if (!ready)
		snprintf(why, whylen, "%s", init_error);
	return ready;
}

const struct sandbox_ops native_ops = {
    .name = "native",
    .global_init = native_global_init,
    .global_shutdown = native_global_shutdown,
    .works = native_works,
    .run = native_run,
    .close = native_close,
};
