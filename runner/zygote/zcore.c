/* zcore: the zygotes' serving loop in C (docs/warm-start.md), for Python
 * (python_zygote.py loads it as zcore.so through ctypes) and Node (node_zygote.c
 * binds it). It speaks both protocols: box_init's (gVisor: struct bx_job and
 * four fds; the zygote waits for the child and sends its wait status and
 * rusage) and the native backend's (nzygote.c: struct nz_job and the run's fds;
 * the child enters the run's namespaces; the zygote reports the child's end on
 * the run's report pipe as ns_init would and kills the run's init). zc_serve
 * returns only in a forked child, which has entered its run as a fresh program
 * would have before its execve.
 *
 * Built into languages/drivers/zcore.so and node_zygote.node by
 * languages/deps.sh, never into bin/judge (the Makefile leaves runner/zygote
 * out). */
#define _GNU_SOURCE
#include "runner/zygote/zcore.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <dirent.h>
#include <grp.h>
#include <unistd.h>

#include "runner/gvisor/init/box_enter.h"
#include "runner/gvisor/init/box_proto.h"
#include "runner/native/init/ns_proto.h"
#include "runner/native/nz_job.h"

extern char **environ;

#define ZC_SOCK_FD  3
#define ZC_MAX_FDS  16
#define ZC_MSG_MAX  (1 << 20)
#define ZC_MAX_RUNS 64
#define SECUREBITS  (0x01 | 0x02 | 0x04 | 0x08 | 0x20)

/* a native run in flight: the program's pidfd, pid, the run's report pipe, its init's pidfd */
struct zc_run {
	int pidfd, rep_fd, init_fd;
	pid_t pid;
};

static struct zc_run runs[ZC_MAX_RUNS];
/* the zygote's descriptors when it forked, by number and file: the program
 * closes those (not what the runtime's own at-fork handlers opened in the child
 * under a number the zygote used, such as libuv's signal lock pipe) */
static struct {
	dev_t dev;
	ino_t ino;
	bool open;
} zfds[1024];

static bool same_file(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && st.st_dev == zfds[fd].dev && st.st_ino == zfds[fd].ino;
}

static void note_fd(int fd)
{
	struct stat st;
	if (fd >= 0 && fd < (int)(sizeof zfds / sizeof *zfds) && fstat(fd, &st) == 0)
		zfds[fd].dev = st.st_dev, zfds[fd].ino = st.st_ino, zfds[fd].open = true;
}

/* /proc/self/fd's list (a few dozen), each fd's file noted: a fork's hot path,
 * where every possible number would be a thousand system calls */
static void note_fds(void)
{
	memset(zfds, 0, sizeof zfds);
	DIR *d = opendir("/proc/self/fd");
	if (!d) {
		for (int fd = 0; fd < (int)(sizeof zfds / sizeof *zfds); fd++)
			note_fd(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
			note_fd(atoi(e->d_name));
	closedir(d);
}

static int nruns;
static const char *self_exe;	/* argv[0] the zygote was started with */
static const char *self_script; /* the script its children run, or NULL: any */

static long sys_pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

static long sys_pidfd_send_signal(int fd, int sig)
{
	return syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
}

/* argv and env of a job: argc + envc strings from p (len bytes); NULL when malformed */
static char **split_strs(char *p, size_t len, uint32_t n)
{
	char **v = calloc((size_t)n + 2, sizeof(char *));
	char *end = p + len;
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		char *z = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;
		if (!z) {
			free(v);
			return NULL;
		}
		v[i] = p;
		p = z + 1;
	}
	return v;
}

/* `<this runtime> <script> [args]` with exactly the env the zygote started with */
static bool job_fits(char **argv, uint32_t argc, char **env, uint32_t envc)
{
	if (argc < 2 || strcmp(argv[0], self_exe) || !argv[1][0] || argv[1][0] == '-')
		return false;
	/* a run's cwd is /box: its script as an absolute path */
	if (self_script && strcmp(argv[1], self_script) &&
	    (argv[1][0] == '/' || strncmp(self_script, "/box/", 5) ||
	     strcmp(argv[1], self_script + 5)))
		return false;
	uint32_t i = 0;
	for (; environ[i]; i++)
		if (i >= envc || strcmp(environ[i], env[i]))
			return false;
	return i == envc;
}

/* A job's argv and env (after its head of head bytes), when they are well formed
 * and fit this zygote (job_fits), with its seccomp filter (its last bytes) in
 * *filter; NULL otherwise. */
static char **job_args(char *msg, size_t len, size_t head, uint32_t argc, uint32_t envc,
		       uint32_t filter_len, struct sock_fprog *filter)
{
	size_t flen = (size_t)filter_len * sizeof(struct sock_filter);
	if (flen > len - head)
		return NULL;
	char **v = split_strs(msg + head, len - head - flen, argc + envc);
	if (v && !job_fits(v, argc, v + argc, envc)) {
		free(v);
		return NULL;
	}
	*filter = (struct sock_fprog){.len = (unsigned short)filter_len,
				      .filter = (struct sock_filter *)(msg + len - flen)};
	return v;
}

static void send_int(int v)
{
	(void)!send(ZC_SOCK_FD, &v, sizeof v, 0);
}

static __attribute__((noreturn)) void box_fail(int errfd, int err)
{
	if (!err)
		err = EINVAL;
	(void)!write(errfd, &err, sizeof err);
	_exit(127);
}

/* In the child of a gVisor job: box_init's child() before its execve */
static void box_enter(const struct bx_job *job, const struct sock_fprog *filter, int fds[4])
{
	int errfd = fds[3];
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	if (dup2(fds[0], 0) < 0 || dup2(fds[1], 1) < 0 || dup2(fds[2], 2) < 0)
		box_fail(errfd, errno);
	for (int i = 0; i < 3; i++)
		if (fds[i] > 2 && fds[i] != errfd)
			close(fds[i]);
	close(ZC_SOCK_FD);
	int err = bx_enter(job, filter);
	if (err)
		box_fail(errfd, err);
}

/* The seccomp filter this zygote runs under (gVisor), from the first job that
 * brings one: its children inherit it instead of installing it. gVisor checks a
 * filter against every syscall number when a task installs it (to learn which
 * answers it may cache), about 2 ms of the sentry per run, measured; a forked
 * task shares its parent's checked filter. A job whose filter is another one
 * is declined (a filter cannot be taken back): box_init starts it fresh. */
static struct sock_filter *held; /* NULL: none held */
static unsigned short held_len;

enum { FILTER_HELD, FILTER_CHILD, FILTER_DECLINE };

static int hold_filter(const struct sock_fprog *f)
{
	size_t bytes = (size_t)f->len * sizeof(struct sock_filter);
	if (held)
		return f->len == held_len && !memcmp(f->filter, held, bytes) ? FILTER_HELD
									     : FILTER_DECLINE;
	if (f->len == 0)
		return FILTER_CHILD;
	held = malloc(bytes);
	/* the zygote's own steps (fork, wait4, send) and its children's entry
	 * (bx_enter: unshare(CLONE_NEWIPC), setresuid, capset) pass the filter;
	 * no_new_privs is each run's anyway */
	if (!held || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, f) < 0) {
		free(held);
		held = NULL;
		return FILTER_CHILD; /* as before: each child installs it */
	}
	memcpy(held, f->filter, bytes);
	held_len = f->len;
	return FILTER_HELD;
}

/* A gVisor job: fork, answer the pid, wait for the child, send its end. Returns
 * 0 in the child (out filled), 1 in the zygote. */
static int box_job(char *msg, size_t len, int *fds, int nfds, void (*before_fork)(void),
		   struct zc_child *out)
{
	struct bx_job job;
	struct sock_fprog filter;
	char **v = NULL;
	if (len >= sizeof job && nfds == 4) {
		memcpy(&job, msg, sizeof job);
		if (job.magic == BX_JOB_MAGIC)
			v = job_args(msg, len, sizeof job, job.argc, job.envc, job.filter_len,
				     &filter);
	}
	int how = v ? hold_filter(&filter) : FILTER_DECLINE;
	if (how == FILTER_DECLINE) {
		free(v);
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		send_int(0);
		return 1;
	}
	if (how == FILTER_HELD)
		filter.len = 0;
	if (before_fork)
		before_fork();
	pid_t pid = fork();
	if (pid == 0) {
		box_enter(&job, &filter, fds);
		v[job.argc] = NULL;
		out->argv = v;
		out->errfd = fds[3];
		return 0;
	}
	for (int i = 0; i < 4; i++)
		close(fds[i]);
	free(v);
	send_int(pid > 0 ? pid : 0);
	if (pid <= 0)
		return 1;
	int st = 0;
	struct rusage ru;
	while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR)
		;
	char m[28];
	int32_t s32 = st;
	int64_t ut = ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec;
	int64_t stt = ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec;
	int64_t rss = ru.ru_maxrss;
	memcpy(m, &s32, 4), memcpy(m + 4, &ut, 8), memcpy(m + 12, &stt, 8), memcpy(m + 20, &rss, 8);
	(void)!send(ZC_SOCK_FD, m, sizeof m, 0);
	return 1;
}

static __attribute__((noreturn)) void native_fail(int rep_fd, int step, int err)
{
	struct nsinit_report r = {
	    .type = NSINIT_FAIL, .step = step, .op = -1, .err = err ? err : EINVAL};
	(void)!write(rep_fd, &r, sizeof r);
	_exit(127);
}

static int caps_set(bool effective)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return errno;
	for (int i = 0; i < 2; i++) {
		d[i].effective = effective ? d[i].permitted : 0;
		if (!effective)
			d[i].permitted = d[i].inheritable = 0;
	}
	return syscall(SYS_capset, &h, d) < 0 ? errno : 0;
}

/* In the program of a native job (pid 2 of the run): its cgroup, init's
 * namespaces, then what ns_init's program_main does before execve, in order. */
static void native_enter(const struct nz_job *job, const struct sock_fprog *filter, int *fds,
			 int nfds)
{
	int rep_fd = fds[3], step = S_CGJOIN, err;
#define MUST(call)                                                                                 \
	do {                                                                                       \
		if ((call) < 0)                                                                    \
			native_fail(rep_fd, step, errno);                                          \
	} while (0)
	for (int i = 5; i < nfds; i++)
		MUST(write(fds[i], "0", 1));
	step = S_SETNS;
	MUST(setns(fds[4], CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS |
			       CLONE_NEWNET | CLONE_NEWCGROUP));
	step = S_SETGROUPS;
	MUST(setgroups(0, NULL));
	step = S_SETGID;
	MUST(setresgid(NSINIT_INSIDE_ID, NSINIT_INSIDE_ID, NSINIT_INSIDE_ID));
	step = S_KEEPCAPS;
	MUST(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
	step = S_SETUID;
	MUST(setresuid(NSINIT_INSIDE_ID, NSINIT_INSIDE_ID, NSINIT_INSIDE_ID));
	step = S_CAPSET;
	if ((err = caps_set(true)))
		native_fail(rep_fd, step, err);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	step = S_SECUREBITS;
	MUST(prctl(PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0));
	step = S_CAPBSET;
	for (int cap = 0; cap <= job->last_cap; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			native_fail(rep_fd, step, errno);
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	step = S_CAPSET;
	if ((err = caps_set(false)))
		native_fail(rep_fd, step, err);
	step = S_NNP;
	MUST(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
	step = S_RLIMIT;
	static const int res[] = {RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_STACK, RLIMIT_CPU};
	for (int i = 0; i < 4; i++) {
		struct rlimit rl = {(rlim_t)job->rl[2 * i], (rlim_t)job->rl[2 * i + 1]};
		MUST(setrlimit(res[i], &rl));
	}
	struct rlimit no_core = {0, 0};
	MUST(setrlimit(RLIMIT_CORE, &no_core));
	step = S_FDS;
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	MUST(dup2(fds[0], 0));
	MUST(dup2(fds[1], 1));
	MUST(dup2(fds[2], 2));
	int keep = rep_fd > 2 ? dup(rep_fd) : rep_fd;
	MUST(keep);
	for (int fd = 3; fd < (int)(sizeof zfds / sizeof *zfds); fd++)
		if (fd != keep && zfds[fd].open && same_file(fd))
			close(fd);
	syscall(SYS_close_range, 1024, ~0U, 0);
	fcntl(keep, F_SETFD, FD_CLOEXEC);
	rep_fd = keep;
	step = S_CHDIR_BOX;
	MUST(chdir("/box"));
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	step = S_SECCOMP;
	if (filter->len > 0)
		MUST(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, filter));
	close(rep_fd);
#undef MUST
}

/* A native job: fork the program into the run's pid namespace. Returns 0 in the
 * program (out filled), 1 in the zygote. */
static int native_job(char *msg, size_t len, int *fds, int nfds, void (*before_fork)(void),
		      struct zc_child *out)
{
	struct nz_job job;
	struct sock_fprog filter;
	char **v = NULL;
	if (len >= sizeof job && nfds >= 5 && nruns < ZC_MAX_RUNS) {
		memcpy(&job, msg, sizeof job);
		v = job_args(msg, len, sizeof job, job.argc, job.envc, job.filter_len, &filter);
	}
	pid_t pid = -1;
	if (v && setns(fds[4], CLONE_NEWPID) == 0) {
		if (before_fork)
			before_fork();
		note_fds();
		pid = fork();
	}
	if (pid == 0) {
		for (int i = 0; i < nruns; i++)
			close(runs[i].pidfd), close(runs[i].rep_fd), close(runs[i].init_fd);
		nruns = 0;
		close(ZC_SOCK_FD);
		native_enter(&job, &filter, fds, nfds);
		v[job.argc] = NULL;
		out->argv = v;
		out->errfd = -1;
		return 0;
	}
	free(v);
	if (pid > 0) {
		int pfd = (int)sys_pidfd_open(pid);
		if (pfd < 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			pid = 0;
		} else {
			runs[nruns++] = (struct zc_run){pfd, fds[3], fds[4], pid};
			fds[3] = fds[4] = -1;
		}
	}
	for (int i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	send_int(pid > 0 ? pid : 0);
	return 1;
}

/* A native program ended: its end on the report pipe as ns_init writes it, then
 * its init killed (which ends the run's other processes) */
static void native_end(int i)
{
	struct zc_run r = runs[i];
	runs[i] = runs[--nruns];
	int st = 0;
	struct rusage ru = {0};
	if (wait4(r.pid, &st, 0, &ru) == r.pid) {
		struct nsinit_report rep = {
		    .type = NSINIT_EXIT, .status = st, .maxrss_kb = ru.ru_maxrss};
		(void)!write(r.rep_fd, &rep, sizeof rep);
	}
	sys_pidfd_send_signal(r.init_fd, SIGKILL);
	close(r.pidfd), close(r.rep_fd), close(r.init_fd);
}

/* Reports the native programs that ended; true when a job waits on the socket.
 * block: until every program has ended (the socket is not read). */
static bool native_wait(bool block)
{
	while (nruns) {
		struct pollfd p[ZC_MAX_RUNS + 1];
		int n = 0;
		if (!block)
			p[n++] = (struct pollfd){ZC_SOCK_FD, POLLIN, 0};
		for (int i = 0; i < nruns; i++)
			p[n++] = (struct pollfd){runs[i].pidfd, POLLIN, 0};
		if (poll(p, (nfds_t)n, -1) < 0)
			continue;
		for (int i = n - 1; i >= (block ? 0 : 1); i--)
			if (p[i].revents)
				native_end(i - (block ? 0 : 1));
		if (!block)
			return p[0].revents != 0;
	}
	return true;
}

int zc_serve(const char *exe, const char *script, void (*before_fork)(void), struct zc_child *out)
{
	static char msg[ZC_MSG_MAX];
	self_exe = exe;
	self_script = script;
	signal(SIGPIPE, SIG_IGN);
	if (send(ZC_SOCK_FD, "R", 1, 0) != 1)
		return -1;
	for (;;) {
		if (nruns && !native_wait(false))
			continue;
		char cbuf[CMSG_SPACE(sizeof(int) * ZC_MAX_FDS)];
		struct iovec iov = {msg, sizeof msg};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof cbuf};
		ssize_t len = recvmsg(ZC_SOCK_FD, &mh, MSG_CMSG_CLOEXEC);
		if (len < 0 && errno == EINTR)
			continue;
		int fds[ZC_MAX_FDS], nfds = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
				int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
				for (int i = 0; i < k && nfds < ZC_MAX_FDS; i++)
					memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int),
					       sizeof(int));
			}
		if (len <= 0) {
			/* the other end closed: the runs in flight are ours until they end */
			native_wait(true);
			_exit(0);
		}
		uint32_t magic = 0;
		if ((size_t)len >= sizeof magic)
			memcpy(&magic, msg, sizeof magic);
		int rc = magic == NZ_MAGIC
			     ? native_job(msg, (size_t)len, fds, nfds, before_fork, out)
			     : box_job(msg, (size_t)len, fds, nfds, before_fork, out);
		if (rc == 0)
			return 0;
	}
}
