/* nzygote: the native backend's zygotes (docs/warm-start.md, "Native"; Python's
 * python_zygote.py, Node's node_zygote.js, both served by runner/zygote/zcore.c).
 *
 * How it works. A zygote is languages/drivers/python_zygote.py started by the
 * worker (root, host namespaces, stdio /dev/null, cwd /, fd 3 one end of a
 * SOCK_SEQPACKET socket) with the env of the runs it serves; it runs no user
 * code, ever. One per (tenant key, zygote argv, env): keys never share one.
 * A run that may be warm is started as always (native.c: clone, uid maps,
 * cgroup, ns_init building the root), except that ns_init, once the root is
 * ready, reports NSINIT_READY and forks nothing. The worker then sends the
 * zygote one job (struct nz_job, then argv, env, the seccomp filter) with the
 * run's stdin, stdout, stderr, the report pipe, init's pidfd and (cgroup v1)
 * the cgroup join fds. The zygote enters init's pid namespace for its children
 * (setns: it stays in its own) and forks the program: pid 2 of the run, as fresh.
 * The program joins the run's cgroup, then init's user, mount, ipc, uts, net and
 * cgroup namespaces, and does what ns_init and its program_main do before
 * execve, in the same order (zcore.c); then it becomes `python3 main.py`
 * (python_zygote.py). The zygote, outside the run, reaps it (pidfds: it takes
 * other jobs meanwhile), writes its end on the report pipe as ns_init would, and
 * kills init, which ends every process of the namespace as a fresh run's init
 * does when it exits. A zygote serves NZ_FORKS runs; its successor starts
 * NZ_AHEAD runs before that, so the runs of a busy key keep finding one ready.
 *
 * Privileges. The zygote keeps uid 0 and of its capabilities CAP_SYS_ADMIN
 * only (the bounding set is emptied of the rest before its exec): entering a
 * run's pid namespace takes CAP_SYS_ADMIN in its own namespace; everything
 * else it and its children do before they are in the run's user namespace
 * (enter it, kill init) is allowed to the namespaces' owner, uid 0, without a
 * capability. No CAP_DAC_OVERRIDE, CAP_SYS_PTRACE, CAP_SYS_MODULE, CAP_NET_*,
 * CAP_SETUID ... (tests/test_native_zygote.c checks its sets).
 */
#define _GNU_SOURCE
#include "runner/native/nzygote.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "runner/cg.h"
#include "runner/native/init/clone_run.h"
#include "runner/native/nz_job.h"

#define NZ_MAX	 8  /* zygotes kept; the least recently used goes first */
#define NZ_FORKS 50 /* a zygote is replaced after this many runs */
/* its successor starts this many runs before: ready when it is needed, so the
 * runs meanwhile are not started fresh (a fresh run costs ~5 warm ones) */
#define NZ_AHEAD    15
#define NZ_JOB_MAX  65536 /* larger jobs (argv + env + filter) start fresh */
#define NZ_REPLY_MS 5000
#define NZ_SOCK_FD  3
#define NZ_MAX_FDS  (5 + CG_MAX_CTL)
#define NZ_REAP_MAX 64
/* another key's zygote used this recently is not replaced (the run starts
 * fresh): more keys at once than NZ_MAX would start a zygote per run */
#define NZ_EVICT_US (5 * 1000000LL)

struct nz {
	int refs; /* the table's, and one per nz_get */
	char key[64];
	char **argv, **env;
	pid_t pid;
	int sock;
	bool ready, dead;
	int forks;
	int64_t last_use;
	struct nz *next;    /* the successor started NZ_AHEAD runs early, or NULL */
	pthread_mutex_t io; /* one job and its reply at a time */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct nz *table[NZ_MAX];
/* ended zygotes not yet reaped: they exit once their runs in flight are over */
static pid_t reap[NZ_REAP_MAX];

static bool vec_eq(char *const *a, const char *const *b)
{
	for (; *a && *b; a++, b++)
		if (strcmp(*a, *b))
			return false;
	return !*a && !*b;
}

static void reap_some(void)
{
	for (int i = 0; i < NZ_REAP_MAX; i++)
		if (reap[i] > 0 && waitpid(reap[i], NULL, WNOHANG) != 0)
			reap[i] = 0;
}

/* Drops a reference (lock held); the last one ends the zygote: its socket's
 * end makes it exit once it has reported the ends of its runs in flight (never
 * killed while they run: they would not be reported). */
static void unref(struct nz *z)
{
	if (--z->refs > 0)
		return;
	if (z->next)
		unref(z->next);
	if (z->sock >= 0)
		close(z->sock);
	if (z->pid > 0) {
		int i = 0;
		while (i < NZ_REAP_MAX && reap[i] > 0)
			i++;
		if (i < NZ_REAP_MAX)
			reap[i] = z->pid;
		else
			waitpid(z->pid, NULL, 0);
	}
	xstrvfree(z->argv);
	xstrvfree(z->env);
	pthread_mutex_destroy(&z->io);
	free(z);
}

/* What the zygote's clone child needs (in the starting thread's frame). */
struct nz_spawn {
	const char *path;
	char *const *argv, *const *envp;
	int sock;     /* becomes fd 3 */
	int last_cap; /* the kernel's highest capability */
	int err;      /* the child's errno when it could not exec */
};

#define NZ_SPAWN_STACK (16 * 1024)

/* The kernel's struct sigaction for rt_sigaction, set to SIG_DFL */
struct nz_ksigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

/* The clone child, from clone3 to the zygote's exec: on the worker's memory
 * (CLONE_VM) while the starting thread waits (CLONE_VFORK), with every signal
 * blocked, so system calls only (as native.c's spawn_child). It gets the signal
 * state a fresh interpreter gets from ns_init, /dev/null on 0..2, the socket on
 * 3 and nothing else, its own session, and a bounding set of CAP_SYS_ADMIN
 * alone: as root, the exec leaves it those capabilities and no others. */
__attribute__((no_sanitize("address", "undefined"))) static int spawn_zygote(void *arg)
{
	struct nz_spawn *s = arg;
	struct nz_ksigaction dfl = {.handler = SIG_DFL};
	for (int sig = 1; sig <= 64; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof dfl.mask);
	int null = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || syscall(SYS_dup3, null, 0, 0) < 0 || syscall(SYS_dup3, null, 1, 0) < 0 ||
	    syscall(SYS_dup3, null, 2, 0) < 0 || syscall(SYS_dup3, s->sock, NZ_SOCK_FD, 0) < 0 ||
	    syscall(SYS_close_range, NZ_SOCK_FD + 1, ~0U, 0) < 0 || syscall(SYS_chdir, "/") < 0 ||
	    syscall(SYS_setsid) < 0)
		goto fail;
	for (int c = 0; c <= s->last_cap; c++)
		if (c != CAP_SYS_ADMIN && syscall(SYS_prctl, PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
			goto fail;
	syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	uint64_t none = 0;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof none);
	syscall(SYS_execve, s->path, s->argv, s->envp);
fail:
	s->err = errno;
	return 127;
}

/* The highest capability this kernel knows. */
static int cap_last(void)
{
	static int last;
	if (!last) {
		FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
		if (!f || fscanf(f, "%d", &last) != 1)
			last = CAP_LAST_CAP;
		if (f)
			fclose(f);
	}
	return last;
}

/* Starts a zygote of key for spec (lock held). NULL when it could not start. */
static struct nz *start(const char *key, const struct run_spec *spec)
{
	int sv[2] = {-1, -1}, child = -1;
	struct nz *z = NULL;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return NULL;
	/* never fd 3 itself: a dup onto the same fd would keep its CLOEXEC */
	child = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
	close(sv[1]);
	if (child < 0) {
		close(sv[0]);
		return NULL;
	}
	struct nz_spawn sp = {
	    .path = spec->zygote_argv[0],
	    .argv = (char *const *)spec->zygote_argv,
	    .envp = (char *const *)spec->env,
	    .sock = child,
	    .last_cap = cap_last(),
	};
	char stack[NZ_SPAWN_STACK] __attribute__((aligned(16)));
	struct clone_args_v2 ca = {
	    .flags = CLONE_VM | CLONE_VFORK,
	    .exit_signal = SIGCHLD,
	    .stack = (uint64_t)(uintptr_t)stack,
	    .stack_size = sizeof stack,
	};
	/* no handler of the worker may run in the child before its exec */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	long rc = clone_run(&ca, spawn_zygote, &sp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(child);
	pid_t pid = rc > 0 ? (pid_t)rc : -1;
	int err = rc < 0 ? (int)-rc : sp.err;
	if (pid > 0 && sp.err) {
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	if (pid < 0) {
		log_warn("native: cannot start the zygote '%s': %s", spec->zygote_argv[0],
			 strerror(err));
		close(sv[0]);
		return NULL;
	}
	z = xcalloc(1, sizeof *z);
	z->refs = 1;
	snprintf(z->key, sizeof z->key, "%s", key);
	z->argv = xstrvdup(spec->zygote_argv);
	z->env = xstrvdup(spec->env);
	z->pid = pid;
	z->sock = sv[0];
	z->last_use = clock_mono_us();
	pthread_mutex_init(&z->io, NULL);
	log_debug("native: zygote %d started for key '%s'", (int)pid, key);
	return z;
}

/* Whether z said it is ready ("R"), without waiting (lock held). */
static bool check_ready(struct nz *z)
{
	if (z->ready || z->dead)
		return z->ready;
	char c;
	ssize_t n = recv(z->sock, &c, 1, MSG_DONTWAIT);
	if (n == 1 && c == 'R')
		z->ready = true;
	else if (n >= 0 || (errno != EAGAIN && errno != EINTR))
		z->dead = true;
	return z->ready;
}

bool nz_eligible(const char *key, const struct run_spec *spec)
{
	const struct sandbox_options *o = sandbox_options();
	if (!key || !o || !o->warm_start || !spec->zygote_argv || !spec->zygote_argv[0] ||
	    spec->net_ns_fd > 0 || spec->box_subdir || spec->trusted_tool)
		return false;
	const char *const *a = spec->argv;
	return a && a[0] && a[1] && !strcmp(a[0], spec->zygote_argv[0]) && a[1][0] &&
	       a[1][0] != '-';
}

struct nz *nz_get(const char *key, const struct run_spec *spec)
{
	struct nz *got = NULL;
	pthread_mutex_lock(&lock);
	reap_some();
	int slot = -1, lru = -1;
	for (int i = 0; i < NZ_MAX; i++) {
		struct nz *z = table[i];
		if (!z) {
			if (slot < 0)
				slot = i;
			continue;
		}
		if (!strcmp(z->key, key) && vec_eq(z->argv, spec->zygote_argv) &&
		    vec_eq(z->env, spec->env)) {
			slot = i;
			break;
		}
		if (lru < 0 || z->last_use < table[lru]->last_use)
			lru = i;
	}
	if (slot < 0)
		slot = lru;
	struct nz *z = table[slot];
	bool same = z && !strcmp(z->key, key) && vec_eq(z->argv, spec->zygote_argv) &&
		    vec_eq(z->env, spec->env);
	if (same && !z->dead && z->forks >= NZ_FORKS && z->next && !z->next->dead) {
		/* worn out: its successor (same key, argv and env) takes the slot */
		struct nz *n = z->next;
		z->next = NULL;
		unref(z);
		table[slot] = z = n;
	}
	if (same && !z->dead && z->forks < NZ_FORKS) {
		z->last_use = clock_mono_us();
		if (check_ready(z)) {
			z->forks++;
			z->refs++;
			got = z;
		}
		if (z->forks >= NZ_FORKS - NZ_AHEAD && !z->next)
			z->next = start(key, spec);
	} else if (z && !same && !z->dead && clock_mono_us() - z->last_use < NZ_EVICT_US) {
		/* every zygote is another key's and was used lately: none for this run */
	} else {
		/* another key's least recently used, a dead or a worn-out one: replaced */
		if (z)
			unref(z);
		table[slot] = start(key, spec);
	}
	pthread_mutex_unlock(&lock);
	return got;
}

void nz_put(struct nz *z)
{
	pthread_mutex_lock(&lock);
	unref(z);
	pthread_mutex_unlock(&lock);
}

/* Appends the n strings of p's pool from off to buf at *len (NUL-terminated). */
static bool put_strs(char *buf, size_t *len, const struct nsinit_plan *p, uint32_t off, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		const char *s = nsinit_str(p, off);
		size_t l = strlen(s) + 1;
		if (*len + l > NZ_JOB_MAX)
			return false;
		memcpy(buf + *len, s, l);
		*len += l;
		off += (uint32_t)l;
	}
	return true;
}

int nz_fork(struct nz *z, const struct nsinit_plan *p, const int fds[4], int pidfd,
	    const int *cg_fds, int ncg)
{
	char *buf = xmalloc(NZ_JOB_MAX);
	struct nz_job job = {
	    .magic = NZ_MAGIC,
	    .argc = p->argc,
	    .envc = p->envc,
	    .filter_len = p->filter_len,
	    .last_cap = p->last_cap,
	    .rl = {p->rl_fsize.rlim_cur, p->rl_fsize.rlim_max, p->rl_nofile.rlim_cur,
		   p->rl_nofile.rlim_max, p->rl_stack.rlim_cur, p->rl_stack.rlim_max,
		   p->rl_cpu.rlim_cur, p->rl_cpu.rlim_max},
	};
	size_t len = sizeof job, flen = (size_t)p->filter_len * 8;
	int ret = 0;
	memcpy(buf, &job, sizeof job);
	if (!put_strs(buf, &len, p, p->argv, p->argc) || !put_strs(buf, &len, p, p->env, p->envc))
		goto out;
	while (len % 8)
		buf[len++] = 0;
	if (len + flen > NZ_JOB_MAX)
		goto out;
	memcpy(buf + len, p->pool + p->filter, flen);
	len += flen;

	int all[NZ_MAX_FDS], n = 0;
	for (int i = 0; i < 4; i++)
		all[n++] = fds[i];
	all[n++] = pidfd;
	for (int i = 0; i < ncg && n < NZ_MAX_FDS; i++)
		all[n++] = cg_fds[i];
	char cbuf[CMSG_SPACE(sizeof all)];
	memset(cbuf, 0, sizeof cbuf);
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	memcpy(CMSG_DATA(cm), all, sizeof(int) * (size_t)n);

	pthread_mutex_lock(&z->io);
	int32_t reply = 0;
	if (sendmsg(z->sock, &mh, MSG_NOSIGNAL) != (ssize_t)len) {
		ret = errno == EMSGSIZE ? 0 : -(errno ? errno : EIO);
	} else {
		struct pollfd pfd = {.fd = z->sock, .events = POLLIN};
		int pr;
		while ((pr = poll(&pfd, 1, NZ_REPLY_MS)) < 0 && errno == EINTR)
			;
		if (pr != 1 || recv(z->sock, &reply, sizeof reply, 0) != (ssize_t)sizeof reply)
			ret = pr == 0 ? -ETIMEDOUT : -EPIPE;
		else
			ret = reply > 0 ? reply : 0;
	}
	pthread_mutex_unlock(&z->io);
	if (ret < 0) {
		log_warn("native: zygote %d failed (%s): retired", (int)z->pid, strerror(-ret));
		pthread_mutex_lock(&lock);
		z->dead = true;
		pthread_mutex_unlock(&lock);
	}
out:
	free(buf);
	return ret;
}

void nz_shutdown(void)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < NZ_MAX; i++) {
		if (table[i])
			unref(table[i]);
		table[i] = NULL;
	}
	/* no run is left: a zygote still there is stuck */
	for (int i = 0; i < NZ_REAP_MAX; i++) {
		if (reap[i] > 0 && waitpid(reap[i], NULL, WNOHANG) == 0) {
			usleep(50 * 1000);
			if (waitpid(reap[i], NULL, WNOHANG) == 0) {
				kill(reap[i], SIGKILL);
				waitpid(reap[i], NULL, 0);
			}
		}
		reap[i] = 0;
	}
	pthread_mutex_unlock(&lock);
}
