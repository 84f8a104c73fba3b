/* ns_init: the first process of every native run (runner/native/native.c), pid 1 of the
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
 *
 * On x86-64 it uses no libc at all, only system calls (sys() below): glibc's
 * static start-up alone (its CPU feature probe runs cpuid, which traps to the
 * hypervisor in a VM) cost as much as the rest of init. Elsewhere sys() is
 * glibc's syscall().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "runner/native/init/clone_run.h"
#include "runner/native/init/ns_proto.h"

#if defined(__x86_64__)
/* A system call: its result, or -errno. */
static long sys(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/* what the compiler may call on its own (struct copies and zeroing) */
void *memset(void *d, int c, size_t n);
void *memcpy(void *restrict d, const void *restrict s, size_t n);
void *memset(void *d, int c, size_t n)
{
	unsigned char *p = d;
	while (n--)
		*p++ = (unsigned char)c;
	return d;
}
void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
	unsigned char *p = d;
	const unsigned char *q = s;
	while (n--)
		*p++ = *q++;
	return d;
}

void ns_main(void) __attribute__((noreturn, used));
/* the entry: a 16-aligned stack, no arguments needed */
__asm__(".globl _start\n"
	"_start:\n\t"
	"xor %ebp, %ebp\n\t"
	"and $-16, %rsp\n\t"
	"call ns_main\n\t"
	"ud2");
#else
#include <unistd.h>
static long sys(long n, long a, long b, long c, long d, long e, long f)
{
	long r = syscall(n, a, b, c, d, e, f);
	return r < 0 ? -errno : r;
}
void ns_main(void) __attribute__((noreturn));
int main(void)
{
	ns_main();
}
#endif

#define SYS0(n)		       sys((n), 0, 0, 0, 0, 0, 0)
#define SYS1(n, a)	       sys((n), (long)(a), 0, 0, 0, 0, 0)
#define SYS2(n, a, b)	       sys((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define SYS3(n, a, b, c)       sys((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define SYS4(n, a, b, c, d)    sys((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define SYS5(n, a, b, c, d, e) sys((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)

static __attribute__((noreturn)) void sys_exit(int code)
{
	for (;;)
		SYS1(SYS_exit_group, code);
}

static size_t str_len(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT		      (1 << 0)
#define SECBIT_NOROOT_LOCKED	      (1 << 1)
#define SECBIT_NO_SETUID_FIXUP	      (1 << 2)
#define SECBIT_NO_SETUID_FIXUP_LOCKED (1 << 3)
#define SECBIT_KEEP_CAPS_LOCKED	      (1 << 5)
#endif

#define PROG_STACK (64 * 1024)

static struct nsinit_plan plan;
/* argv and env of the program: pointers into the pool (at most one per 2 bytes) */
static char *prog_vec[NSINIT_POOL_BYTES / 2 + 2];
static char **prog_argv, **prog_env;
/* the program's stack between its clone and execve (it shares our memory) */
static char prog_stack[PROG_STACK] __attribute__((aligned(64)));

static __attribute__((noreturn)) void fail(int step, int op, long err)
{
	struct nsinit_report r = {.type = NSINIT_FAIL, .step = step, .op = op, .err = (int)-err};
	SYS3(SYS_write, NSINIT_REPORT_FD, &r, sizeof r);
	sys_exit(127);
}

/* A step that must succeed: a negative result is its -errno. */
static void must(int step, long rc)
{
	if (rc < 0)
		fail(step, -1, rc);
}

/* struct sigaction of the kernel (rt_sigaction) */
struct k_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

/* Every signal to its default (the worker ignores some, which exec keeps), none
 * blocked (the worker's clone child blocked them all). */
static void reset_signals(void)
{
	struct k_sigaction dfl = {.handler = SIG_DFL};
	for (int sig = 1; sig <= 64; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			SYS4(SYS_rt_sigaction, sig, &dfl, NULL, 8);
	uint64_t none = 0;
	SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, 8);
}

static long caps_set(bool all)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	long rc = SYS2(SYS_capget, &h, d);
	if (rc < 0)
		return rc;
	for (int i = 0; i < 2; i++) {
		d[i].effective = all ? d[i].permitted : 0;
		if (!all)
			d[i].permitted = d[i].inheritable = 0;
	}
	return SYS2(SYS_capset, &h, d);
}

/* Reads exactly len bytes; 0 or -errno (EOF is -EPIPE). */
static long read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	while (len > 0) {
		long n = SYS3(SYS_read, fd, p, len);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			return n ? n : -EPIPE;
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

/* Fills prog_vec from *next with pointers to the n strings in a row from off
 * and a NULL; the list, or NULL when it leaves the pool. */
static char **str_list(uint32_t off, uint32_t n, size_t *next)
{
	if (n > plan.used || *next + n + 1 > sizeof prog_vec / sizeof prog_vec[0])
		return NULL;
	char **v = prog_vec + *next;
	for (uint32_t i = 0; i < n; i++) {
		if (!str_ok(off))
			return NULL;
		v[i] = plan.pool + off;
		off += (uint32_t)str_len(v[i]) + 1;
	}
	v[n] = NULL;
	*next += n + 1;
	return v;
}

/* The plan from the worker, checked (it is the worker's, but a mismatched build
 * must not make us read out of bounds). 0 or -errno. */
static long read_plan(void)
{
	long rc = read_full(NSINIT_PLAN_FD, &plan, offsetof(struct nsinit_plan, pool));
	if (rc < 0)
		return rc;
	if (plan.version != NSINIT_VERSION || plan.used > sizeof plan.pool || !plan.used ||
	    plan.nops < 0 || plan.nops > NSINIT_MAX_OPS)
		return -EPROTO;
	if ((rc = read_full(NSINIT_PLAN_FD, plan.pool, plan.used)) < 0)
		return rc;
	bool ok = plan.pool[plan.used - 1] == 0 && str_ok(plan.newroot) &&
		  (plan.box_path == NSINIT_NONE || str_ok(plan.box_path)) && plan.filter % 8 == 0 &&
		  (uint64_t)plan.filter + (uint64_t)plan.filter_len * sizeof(struct sock_filter) <=
		      plan.used;
	for (int i = 0; ok && i < plan.nops; i++) {
		const struct op *o = &plan.ops[i];
		ok = str_ok(o->a) && (o->data == NSINIT_NONE || str_ok(o->data)) &&
		     (o->data == NSINIT_NONE || o->len <= plan.used - o->data);
	}
	size_t next = 0;
	if (ok) {
		prog_argv = str_list(plan.argv, plan.argc, &next);
		prog_env = str_list(plan.env, plan.envc, &next);
		ok = prog_argv && prog_env && prog_argv[0];
	}
	return ok ? 0 : -EPROTO;
}

static const char *str(uint32_t off)
{
	return nsinit_str(&plan, off);
}

static long mount_at(const char *src, const char *dst, const char *type, unsigned long flags,
		     const void *data)
{
	return SYS5(SYS_mount, src, dst, type, flags, data);
}

/* Mount flags that a bind in a user namespace must keep (locked), from statfs. */
static unsigned long locked_flags(const char *path)
{
	struct statfs st;
	unsigned long f = 0;
	if (SYS2(SYS_statfs, path, &st) < 0)
		return 0;
	if (st.f_flags & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (st.f_flags & ST_NOATIME)
		f |= MS_NOATIME;
	if (st.f_flags & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	if (st.f_flags & ST_RELATIME)
		f |= MS_RELATIME;
	return f;
}

/* Binds folder o->data of the box at root onto o->a, writable: resolved beneath
 * the box without following any symlink or crossing a mount (a program of the
 * session may have planted links in its box), then cloned as a mount from the
 * resolved fd, so no path is looked up twice. 0 or -errno. */
static long bind_sub(const char *root, const struct op *o)
{
	long rfd =
	    SYS4(SYS_openat, AT_FDCWD, root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (rfd < 0)
		return rfd;
	struct open_how how = {
	    .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
	    .resolve =
		RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	long fd = SYS4(SYS_openat2, rfd, str(o->data), &how, sizeof how);
	SYS1(SYS_close, rfd);
	if (fd < 0)
		return fd;
	long mfd = SYS3(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	SYS1(SYS_close, fd);
	if (mfd < 0)
		return mfd;
	long rc = SYS5(SYS_move_mount, mfd, "", AT_FDCWD, str(o->a), MOVE_MOUNT_F_EMPTY_PATH);
	SYS1(SYS_close, mfd);
	return rc;
}

/* Creates (or truncates) the file a and writes len bytes of data. 0 or -errno. */
static long write_file(const char *a, const char *data, size_t len)
{
	long fd = SYS4(SYS_openat, AT_FDCWD, a,
		       O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return fd;
	long n = len ? SYS3(SYS_write, fd, data, len) : 0;
	SYS1(SYS_close, fd);
	return n < 0 ? n : (size_t)n != len ? -EIO : 0;
}

/* One step of the root. 0 or -errno. */
static long do_op(const struct op *o)
{
	const char *a = str(o->a), *data = str(o->data);
	long rc;
	switch (o->kind) {
	case OP_MKDIR:
		rc = SYS3(SYS_mkdirat, AT_FDCWD, a, 0755);
		return rc == -EEXIST ? 0 : rc;
	case OP_MKFILE:
		return write_file(a, NULL, 0);
	case OP_SYMLINK:
		return SYS3(SYS_symlinkat, data, AT_FDCWD, a);
	case OP_BIND_RO:
		if ((rc = mount_at(data, a, NULL, MS_BIND | MS_REC, NULL)) < 0)
			return rc;
		return mount_at(NULL, a, NULL,
				MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV |
				    locked_flags(a),
				NULL);
	case OP_BIND:
		return mount_at(data, a, NULL, MS_BIND | MS_REC, NULL);
	case OP_TMPFS:
		return mount_at("tmpfs", a, "tmpfs", MS_NOSUID | MS_NODEV, data);
	case OP_PROC:
		return mount_at("proc", a, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	case OP_BOXDIR:
		return plan.box_path == NSINIT_NONE ? -EINVAL : bind_sub(str(plan.box_path), o);
	case OP_WRITE:
		return write_file(a, data, o->len);
	}
	return -EINVAL;
}

static long set_limit(int resource, const struct rlimit *rl)
{
	return SYS4(SYS_prlimit64, 0, resource, rl, NULL);
}

/* The program, between its clone and execve: on our memory, system calls only. */
static int program_main(void *arg)
{
	(void)arg;
	SYS2(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
	must(S_SECUREBITS, SYS2(SYS_prctl, PR_SET_SECUREBITS,
				SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
				    SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED));
	for (int c = 0; c <= plan.last_cap; c++) {
		long rc = SYS2(SYS_prctl, PR_CAPBSET_DROP, c);
		if (rc < 0 && rc != -EINVAL)
			fail(S_CAPBSET, -1, rc);
	}
	SYS2(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL);
	must(S_CAPSET, caps_set(false));
	must(S_NNP, SYS2(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1));
	must(S_RLIMIT, set_limit(RLIMIT_FSIZE, &plan.rl_fsize));
	must(S_RLIMIT, set_limit(RLIMIT_NOFILE, &plan.rl_nofile));
	must(S_RLIMIT, set_limit(RLIMIT_STACK, &plan.rl_stack));
	must(S_RLIMIT, set_limit(RLIMIT_CPU, &plan.rl_cpu));
	struct rlimit zero = {0, 0};
	must(S_RLIMIT, set_limit(RLIMIT_CORE, &zero));
	must(S_CHDIR_BOX, SYS1(SYS_chdir, "/box"));
	struct sock_fprog prog = {.len = (unsigned short)plan.filter_len,
				  .filter = (struct sock_filter *)(plan.pool + plan.filter)};
	must(S_SECCOMP, SYS3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog));
	fail(S_EXEC, -1, SYS3(SYS_execve, prog_argv[0], prog_argv, prog_env));
}

/* A warm run (plan.zygote): the root is ready and the worker's zygote forks the
 * program into our namespaces (it joins them by our pidfd: it is not our child,
 * and getppid() is 0 for it). We only reap what is reparented to us, as the
 * fresh path's wait loop does, until the program's reaper (outside) or the
 * worker kills us, which ends every process of the namespace. */
static __attribute__((noreturn)) void zygote_wait(void)
{
	struct nsinit_report r = {.type = NSINIT_READY};
	for (int fd = 0; fd < 3; fd++)
		SYS1(SYS_close, fd);
	caps_set(false);
	/* a blocked SIGCHLD stays pending (the default action would discard it) */
	uint64_t chld = 1ULL << (SIGCHLD - 1);
	SYS4(SYS_rt_sigprocmask, SIG_BLOCK, &chld, NULL, 8);
	SYS3(SYS_write, NSINIT_REPORT_FD, &r, sizeof r);
	for (;;) {
		int st;
		while (SYS4(SYS_wait4, -1, &st, __WALL | WNOHANG, NULL) > 0)
			;
		SYS4(SYS_rt_sigtimedwait, &chld, NULL, NULL, 8);
	}
}

void ns_main(void)
{
	/* first: a killed worker takes the run with it; nobody reads our memory */
	SYS2(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
	SYS2(SYS_prctl, PR_SET_DUMPABLE, 0);
	reset_signals();

	/* the plan arrives once the worker wrote our uid and gid maps */
	must(S_PLAN, read_plan());
	SYS1(SYS_close, NSINIT_PLAN_FD);
	/* the program may report a failure before its execve, never after (it could
	 * forge ns_init's reports) */
	must(S_FDS, SYS3(SYS_fcntl, NSINIT_REPORT_FD, F_SETFD, FD_CLOEXEC));

	must(S_CGROUPNS, SYS1(SYS_unshare, CLONE_NEWCGROUP));
	must(S_SETGROUPS, SYS2(SYS_setgroups, 0, NULL));
	must(S_SETGID, SYS3(SYS_setresgid, NSINIT_INSIDE_ID, NSINIT_INSIDE_ID, NSINIT_INSIDE_ID));
	must(S_KEEPCAPS, SYS2(SYS_prctl, PR_SET_KEEPCAPS, 1));
	/* files we create must belong to a mapped uid: become 1000 now, keep caps */
	must(S_SETUID, SYS3(SYS_setresuid, NSINIT_INSIDE_ID, NSINIT_INSIDE_ID, NSINIT_INSIDE_ID));
	must(S_CAPSET, caps_set(true));
	SYS2(SYS_prctl, PR_SET_DUMPABLE, 0);
	/* the uid change cleared the parent-death signal: set it again (else a killed
	 * worker leaves init waiting on its program forever), then make sure the
	 * worker did not die in between. getppid() is 0 in our pid namespace, so ask
	 * the report pipe: no reader left (the worker holds it for the run) is POLLERR */
	SYS2(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
	struct pollfd alive = {.fd = NSINIT_REPORT_FD, .events = 0};
	struct timespec now = {0, 0};
	if (SYS5(SYS_ppoll, &alive, 1, &now, NULL, 0) == 1 && (alive.revents & POLLERR))
		sys_exit(125);

	must(S_PRIVATE, mount_at(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	must(S_ROOT, mount_at("judge-root", str(plan.newroot), "tmpfs", MS_NOSUID | MS_NODEV,
			      "size=1m,nr_inodes=512,mode=0755"));
	must(S_ROOT, SYS1(SYS_chdir, str(plan.newroot)));
	for (int i = 0; i < plan.nops; i++) {
		long rc = do_op(&plan.ops[i]);
		if (rc < 0)
			fail(S_OP, i, rc);
	}
	must(S_HOSTNAME, SYS2(SYS_sethostname, "box", 3));
	must(S_PIVOT, SYS2(SYS_pivot_root, ".", "."));
	must(S_UMOUNT_OLD, SYS2(SYS_umount2, ".", MNT_DETACH));
	must(S_PIVOT, SYS1(SYS_chdir, "/"));
	must(S_RO_ROOT, mount_at(NULL, "/", NULL,
				 MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL));

	if (plan.zygote)
		zygote_wait();

	/* vfork-like: the program borrows our memory (its own stack) until execve */
	struct clone_args_v2 ca = {
	    .flags = CLONE_VM | CLONE_VFORK,
	    .exit_signal = SIGCHLD,
	    .stack = (uint64_t)(uintptr_t)prog_stack,
	    .stack_size = sizeof prog_stack,
	};
	long prog = clone_run(&ca, program_main, NULL);
	if (prog < 0)
		fail(S_FORK, -1, prog);

	/* init keeps nothing the program could use */
	for (int fd = 0; fd < 3; fd++)
		SYS1(SYS_close, fd);
	caps_set(false);
	for (;;) {
		int st;
		struct rusage ru;
		long w = SYS4(SYS_wait4, -1, &st, __WALL, &ru);
		if (w == -EINTR)
			continue;
		if (w < 0)
			sys_exit(124);
		if (w == prog) {
			struct nsinit_report r = {
			    .type = NSINIT_EXIT, .status = st, .maxrss_kb = ru.ru_maxrss};
			SYS3(SYS_write, NSINIT_REPORT_FD, &r, sizeof r);
			sys_exit(0);
		}
	}
}
