/* nsinit: the child side of the native backend — the plan of a run's root and
 * process, built in the worker before clone3, and init and the program, which
 * carry it out in the new namespaces (see the "theory of operation" atop
 * native.c). After clone3 the child only makes system calls: no malloc, no
 * locks (another worker thread may have held them at clone time), everything it
 * needs is in the plan's own memory.
 */
#define _GNU_SOURCE
#include "runner/nsinit.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
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

#include "runner/backend.h"

#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT		      (1 << 0)
#define SECBIT_NOROOT_LOCKED	      (1 << 1)
#define SECBIT_NO_SETUID_FIXUP	      (1 << 2)
#define SECBIT_NO_SETUID_FIXUP_LOCKED (1 << 3)
#define SECBIT_KEEP_CAPS_LOCKED	      (1 << 5)
#endif

#define REPORT_FD 4
#define SYNC_FD	  3

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

static const char *const op_names[] = {
    [OP_MKDIR] = "mkdir",     [OP_MKFILE] = "create", [OP_SYMLINK] = "symlink",
    [OP_BIND_RO] = "bind ro", [OP_BIND] = "bind",     [OP_TMPFS] = "mount tmpfs",
    [OP_PROC] = "mount proc", [OP_WRITE] = "write",   [OP_BOXDIR] = "bind box folder",
};

/* Copies s into the plan's pool; the copy survives clone (plain memory). */
static const char *pool_str(struct nsinit_plan *p, const char *s)
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

static void add_op(struct nsinit_plan *p, enum op_kind k, const char *a, const char *data)
{
	if (p->nops >= NSINIT_MAX_OPS) {
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
static void add_mkdirs(struct nsinit_plan *p, const char *rel)
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

static void add_host_path(struct nsinit_plan *p, const char *path, bool must)
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

/* A box-relative folder: not empty, no leading '/', no empty, "." or ".." part. */
static bool subdir_ok(const char *sub)
{
	if (strlen(sub) >= 256)
		return false;
	for (const char *s = sub;;) {
		size_t n = strcspn(s, "/");
		if (!n || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		if (!s[n])
			return true;
		s += n + 1;
	}
}

/* True when path is dir or below it. */
static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* Folders a language may not bind: the kernel's views, the host's secrets and
 * configuration as a whole (single entries of /etc are fine), and the boxes. */
static bool forbidden_ro_path(const char *path, const char *box_root)
{
	static const char *const under[] = {"/proc", "/sys", "/dev", "/root", "/home", "/run"};
	for (size_t i = 0; i < sizeof under / sizeof under[0]; i++)
		if (path_under(path, under[i]))
			return true;
	return !strcmp(path, "/etc") || path_under(path, box_root);
}

/* /box: the whole box, or only its folder sub (writable) on an empty /box. */
static int add_box(struct nsinit_plan *p, const struct sandbox *sb, const char *sub, char *err,
		   size_t errlen)
{
	char rel[PATH_MAX];
	add_op(p, OP_MKDIR, "box", NULL);
	if (!sub) {
		add_op(p, OP_BIND, "box", sb->box_path);
		return 0;
	}
	if (!subdir_ok(sub) || snprintf(rel, sizeof rel, "box/%s", sub) >= (int)sizeof rel) {
		snprintf(err, errlen, "bad box folder '%s'", sub);
		return -1;
	}
	add_mkdirs(p, rel);
	add_op(p, OP_BOXDIR, rel, sub);
	p->box_path = pool_str(p, sb->box_path);
	return 0;
}

int nsinit_plan(struct nsinit_plan *p, const struct sandbox *sb, const struct run_spec *spec,
		const char *box_root, char *err, size_t errlen)
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
		if (forbidden_ro_path(*rp, box_root)) {
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

	if (add_box(p, sb, spec->box_subdir, err, errlen) < 0)
		return -1;

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
	struct nsinit_report r = {.type = NSINIT_FAIL, .step = step, .op = op, .err = err};
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

/* Binds folder o->data of the box at root onto o->a, writable: resolved beneath
 * the box without following any symlink or crossing a mount (a program of the
 * session may have planted links in its box), then cloned as a mount from the
 * resolved fd, so no path is looked up twice. */
static int bind_sub(const char *root, const struct op *o)
{
	int rfd = open(root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rfd < 0)
		return -1;
	struct open_how how = {
	    .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
	    .resolve =
		RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	int fd = (int)syscall(SYS_openat2, rfd, o->data, &how, sizeof how);
	int e = errno;
	close(rfd);
	if (fd < 0) {
		errno = e;
		return -1;
	}
	int mfd = (int)syscall(SYS_open_tree, fd, "",
			       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	e = errno;
	close(fd);
	if (mfd < 0) {
		errno = e;
		return -1;
	}
	int rc = (int)syscall(SYS_move_mount, mfd, "", AT_FDCWD, o->a, MOVE_MOUNT_F_EMPTY_PATH);
	e = errno;
	close(mfd);
	errno = e;
	return rc;
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
	case OP_BOXDIR:
		break; /* needs the plan: nsinit_main calls bind_sub */
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
	const struct nsinit_plan *p = arg;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	TRY(S_SECUREBITS,
	    prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
					 SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED));
	for (int c = 0; c <= p->last_cap; c++)
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
	int rc = scmp_apply(p->filter);
	if (rc < 0)
		child_fail(S_SECCOMP, -1, -rc);
	execve(p->argv[0], (char *const *)p->argv, (char *const *)p->env);
	child_fail(S_EXEC, -1, errno);
}

void nsinit_main(const struct nsinit_plan *p)
{
	/* first: a killed worker takes the run with it; our memory is the worker's */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	reset_signals();

	/* into the run cgroup before anything else (still on the worker's fd numbers:
	 * the report goes to its original descriptor) */
	for (int i = 0; i < p->ncg_fds; i++) {
		if (write(p->cg_fds[i], "0", 1) != 1) {
			struct nsinit_report r = {
			    .type = NSINIT_FAIL, .step = S_CGJOIN, .op = -1, .err = errno};
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
	TRY(S_SETGID, syscall(SYS_setresgid, NSINIT_INSIDE_ID, NSINIT_INSIDE_ID, NSINIT_INSIDE_ID));
	TRY(S_KEEPCAPS, prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
	/* files we create must belong to a mapped uid: become 1000 now, keep caps */
	TRY(S_SETUID, syscall(SYS_setresuid, NSINIT_INSIDE_ID, NSINIT_INSIDE_ID, NSINIT_INSIDE_ID));
	TRY(S_CAPSET, caps_set(true));
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* the uid change cleared the parent-death signal: set it again (else a killed
	 * worker leaves init waiting on its program forever), then make sure the
	 * worker did not die in between. getppid() is 0 in our pid namespace, so ask
	 * the report pipe: no reader left (the worker holds it for the run) is POLLERR */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct pollfd alive = {.fd = REPORT_FD, .events = 0};
	if (poll(&alive, 1, 0) == 1 && (alive.revents & POLLERR))
		_exit(125);

	TRY(S_PRIVATE, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	TRY(S_ROOT, mount("judge-root", p->newroot, "tmpfs", MS_NOSUID | MS_NODEV,
			  "size=1m,nr_inodes=512,mode=0755"));
	TRY(S_ROOT, chdir(p->newroot));
	for (int i = 0; i < p->nops; i++) {
		const struct op *o = &p->ops[i];
		if ((o->kind == OP_BOXDIR ? bind_sub(p->box_path, o) : do_op(o)) < 0)
			child_fail(S_OP, i, errno);
	}
	TRY(S_HOSTNAME, sethostname("box", 3));
	TRY(S_PIVOT, syscall(SYS_pivot_root, ".", "."));
	TRY(S_UMOUNT_OLD, umount2(".", MNT_DETACH));
	TRY(S_PIVOT, chdir("/"));
	TRY(S_RO_ROOT,
	    mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL));

	/* vfork-like: the program borrows init's memory (its own stack) until execve,
	 * so nothing is copied; no atfork handlers of the worker's libraries run */
	pid_t prog = clone(program_main, (char *)p->prog_stack + NSINIT_PROG_STACK,
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
			struct nsinit_report r = {
			    .type = NSINIT_EXIT, .status = st, .maxrss_kb = ru.ru_maxrss};
			n = write(REPORT_FD, &r, sizeof r);
			(void)n;
			_exit(0);
		}
	}
}

void nsinit_explain(const struct nsinit_plan *p, const struct nsinit_report *r, char *buf,
		    size_t len)
{
	const char *what = r->step >= 0 && r->step <= S_EXEC ? step_names[r->step] : "?";
	if (r->step == S_OP && r->op >= 0 && r->op < p->nops) {
		const struct op *o = &p->ops[r->op];
		snprintf(buf, len, "sandbox set-up failed: %s '/%s'%s%s: %s", op_names[o->kind],
			 o->a, o->data ? " from " : "",
			 o->data && o->kind != OP_WRITE ? o->data : "", strerror(r->err));
	} else if (r->step == S_EXEC) {
		snprintf(buf, len, "cannot execute '%s': %s", p->argv[0], strerror(r->err));
	} else {
		snprintf(buf, len, "sandbox set-up failed: %s: %s", what, strerror(r->err));
	}
}
