/* ns_init: the first process of every native run (runner/native.c), pid 1 of the
 * run's new pid namespace; a small static binary, so that starting it copies
 * nothing of the worker (see the "theory of operation" atop native.c).
 *
 * The worker's clone child has set it up before its exec: it is in the run's
 * cgroup and in new user, mount, pid, ipc and uts namespaces (and the slot's
 * network namespace), its descriptors are 0..2 (the program's stdin, stdout,
 * stderr), NSINIT_PLAN_FD and NSINIT_REPORT_FD, and it kept the capabilities of
 * its user namespace across exec as ambient ones. It reads the plan (the worker
 * sends it once the uid and gid maps are written: its arrival is the release),
 * becomes uid 1000 keeping those capabilities, builds the run's root on a tmpfs,
 * pivots into it, starts the program without capabilities, under its seccomp
 * filter and limits, and reports how it ended on NSINIT_REPORT_FD. When ns_init
 * exits the kernel kills whatever is left in the namespace.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
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

#include "runner/init/ns_proto.h"

#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT		      (1 << 0)
#define SECBIT_NOROOT_LOCKED	      (1 << 1)
#define SECBIT_NO_SETUID_FIXUP	      (1 << 2)
#define SECBIT_NO_SETUID_FIXUP_LOCKED (1 << 3)
#define SECBIT_KEEP_CAPS_LOCKED	      (1 << 5)
#endif

#define PROG_STACK (64 * 1024)

static struct nsinit_plan plan;
static char **prog_argv, **prog_env;
/* the program's stack between its clone and execve (it shares our memory) */
static char prog_stack[PROG_STACK] __attribute__((aligned(64)));

static __attribute__((noreturn)) void fail(int step, int op, int err)
{
	struct nsinit_report r = {.type = NSINIT_FAIL, .step = step, .op = op, .err = err};
	ssize_t n = write(NSINIT_REPORT_FD, &r, sizeof r);
	(void)n;
	_exit(127);
}

#define TRY(step, expr)                                                                            \
	do {                                                                                       \
		if ((expr) < 0)                                                                    \
			fail((step), -1, errno);                                                   \
	} while (0)

static void reset_signals(void)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &dfl, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
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

/* Reads exactly len bytes; 0, or -1 (EOF is EPIPE). */
static int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	while (len > 0) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EPIPE;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* True when off is the start of a string inside the used pool. */
static bool str_ok(uint32_t off)
{
	return off < plan.used;
}

/* NULL-terminated pointers to the n strings in a row from off, or NULL. */
static char **str_list(uint32_t off, uint32_t n)
{
	if (n > plan.used)
		return NULL;
	char **v = calloc((size_t)n + 1, sizeof *v);
	for (uint32_t i = 0; v && i < n; i++) {
		if (!str_ok(off)) {
			free(v);
			return NULL;
		}
		v[i] = plan.pool + off;
		off += (uint32_t)strlen(v[i]) + 1;
	}
	return v;
}

/* The plan from the worker, checked (it is the worker's, but a mismatched build
 * must not make us read out of bounds). Returns 0 or -1 with errno. */
static int read_plan(void)
{
	size_t head = offsetof(struct nsinit_plan, pool);
	if (read_full(NSINIT_PLAN_FD, &plan, head) < 0)
		return -1;
	if (plan.version != NSINIT_VERSION || plan.used > sizeof plan.pool || !plan.used ||
	    plan.nops < 0 || plan.nops > NSINIT_MAX_OPS) {
		errno = EPROTO;
		return -1;
	}
	if (read_full(NSINIT_PLAN_FD, plan.pool, plan.used) < 0)
		return -1;
	bool ok = plan.pool[plan.used - 1] == 0 && str_ok(plan.newroot) &&
		  (plan.box_path == NSINIT_NONE || str_ok(plan.box_path)) && plan.filter % 8 == 0 &&
		  (uint64_t)plan.filter + (uint64_t)plan.filter_len * sizeof(struct sock_filter) <=
		      plan.used;
	for (int i = 0; ok && i < plan.nops; i++) {
		const struct op *o = &plan.ops[i];
		ok = str_ok(o->a) && (o->data == NSINIT_NONE || str_ok(o->data)) &&
		     (o->data == NSINIT_NONE || o->len <= plan.used - o->data);
	}
	if (ok) {
		prog_argv = str_list(plan.argv, plan.argc);
		prog_env = str_list(plan.env, plan.envc);
		ok = prog_argv && prog_env && prog_argv[0];
	}
	if (!ok) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

static const char *str(uint32_t off)
{
	return nsinit_str(&plan, off);
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
	int fd = (int)syscall(SYS_openat2, rfd, str(o->data), &how, sizeof how);
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
	int rc =
	    (int)syscall(SYS_move_mount, mfd, "", AT_FDCWD, str(o->a), MOVE_MOUNT_F_EMPTY_PATH);
	e = errno;
	close(mfd);
	errno = e;
	return rc;
}

static int do_op(const struct op *o)
{
	const char *a = str(o->a), *data = str(o->data);
	int fd;
	switch (o->kind) {
	case OP_MKDIR:
		if (mkdir(a, 0755) < 0 && errno != EEXIST)
			return -1;
		return 0;
	case OP_MKFILE:
		fd = open(a, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return -1;
		close(fd);
		return 0;
	case OP_SYMLINK:
		return symlink(data, a);
	case OP_BIND_RO:
		if (mount(data, a, NULL, MS_BIND | MS_REC, NULL) < 0)
			return -1;
		return mount(NULL, a, NULL,
			     MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV |
				 locked_flags(a),
			     NULL);
	case OP_BIND:
		return mount(data, a, NULL, MS_BIND | MS_REC, NULL);
	case OP_TMPFS:
		return mount("tmpfs", a, "tmpfs", MS_NOSUID | MS_NODEV, data);
	case OP_PROC:
		return mount("proc", a, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	case OP_BOXDIR:
		return plan.box_path == NSINIT_NONE ? (errno = EINVAL, -1)
						    : bind_sub(str(plan.box_path), o);
	case OP_WRITE:
		fd = open(a, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return -1;
		if (write(fd, data, o->len) != (ssize_t)o->len) {
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

/* The program, between its clone and execve: on our memory, system calls only. */
static int program_main(void *arg)
{
	(void)arg;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	TRY(S_SECUREBITS,
	    prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
					 SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED));
	for (int c = 0; c <= plan.last_cap; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			fail(S_CAPBSET, -1, errno);
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	TRY(S_CAPSET, caps_set(false));
	TRY(S_NNP, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
	TRY(S_RLIMIT, setrlimit(RLIMIT_FSIZE, &plan.rl_fsize));
	TRY(S_RLIMIT, setrlimit(RLIMIT_NOFILE, &plan.rl_nofile));
	TRY(S_RLIMIT, setrlimit(RLIMIT_STACK, &plan.rl_stack));
	TRY(S_RLIMIT, setrlimit(RLIMIT_CPU, &plan.rl_cpu));
	struct rlimit zero = {0, 0};
	TRY(S_RLIMIT, setrlimit(RLIMIT_CORE, &zero));
	TRY(S_CHDIR_BOX, chdir("/box"));
	struct sock_fprog prog = {.len = (unsigned short)plan.filter_len,
				  .filter = (struct sock_filter *)(plan.pool + plan.filter)};
	TRY(S_SECCOMP, syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog));
	execve(prog_argv[0], prog_argv, prog_env);
	fail(S_EXEC, -1, errno);
}

int main(void)
{
	/* first: a killed worker takes the run with it; nobody reads our memory */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	reset_signals();

	/* the plan arrives once the worker wrote our uid and gid maps */
	TRY(S_PLAN, read_plan());
	close(NSINIT_PLAN_FD);

	TRY(S_CGROUPNS, unshare(CLONE_NEWCGROUP));
	TRY(S_SETGROUPS, setgroups(0, NULL));
	TRY(S_SETGID, setresgid(NSINIT_INSIDE_ID, NSINIT_INSIDE_ID, NSINIT_INSIDE_ID));
	TRY(S_KEEPCAPS, prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
	/* files we create must belong to a mapped uid: become 1000 now, keep caps */
	TRY(S_SETUID, setresuid(NSINIT_INSIDE_ID, NSINIT_INSIDE_ID, NSINIT_INSIDE_ID));
	TRY(S_CAPSET, caps_set(true));
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* the uid change cleared the parent-death signal: set it again (else a killed
	 * worker leaves init waiting on its program forever), then make sure the
	 * worker did not die in between. getppid() is 0 in our pid namespace, so ask
	 * the report pipe: no reader left (the worker holds it for the run) is POLLERR */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct pollfd alive = {.fd = NSINIT_REPORT_FD, .events = 0};
	if (poll(&alive, 1, 0) == 1 && (alive.revents & POLLERR))
		_exit(125);

	TRY(S_PRIVATE, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	TRY(S_ROOT, mount("judge-root", str(plan.newroot), "tmpfs", MS_NOSUID | MS_NODEV,
			  "size=1m,nr_inodes=512,mode=0755"));
	TRY(S_ROOT, chdir(str(plan.newroot)));
	for (int i = 0; i < plan.nops; i++)
		if (do_op(&plan.ops[i]) < 0)
			fail(S_OP, i, errno);
	TRY(S_HOSTNAME, sethostname("box", 3));
	TRY(S_PIVOT, syscall(SYS_pivot_root, ".", "."));
	TRY(S_UMOUNT_OLD, umount2(".", MNT_DETACH));
	TRY(S_PIVOT, chdir("/"));
	TRY(S_RO_ROOT,
	    mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL));

	/* vfork-like: the program borrows our memory (its own stack) until execve */
	pid_t prog =
	    clone(program_main, prog_stack + PROG_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
	if (prog < 0)
		fail(S_FORK, -1, errno);

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
			ssize_t n = write(NSINIT_REPORT_FD, &r, sizeof r);
			(void)n;
			_exit(0);
		}
	}
}
