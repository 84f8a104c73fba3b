/* box_init: the first process of a gVisor sandbox; runs the programs of one
 * workspace at a time, one job at a time, and reports on each.
 *
 * How it works. The host starts a sandbox (runsc create + start) ahead of need
 * with this static binary as its process, running as root *inside* the
 * sandbox (gVisor's root is an unprivileged guest of the sentry on the host).
 * It may first read some runtime files (arguments "-r FILE") so that the
 * sentry's caches are warm, or run the runtime once ("-x PROGRAM ARGS --"),
 * writes one byte 'R' (ready) on stdout, then blocks on stdin for a job
 * (box_proto.h). Before it sends a job the host has bind-mounted the job's box
 * at /.b/box-N on its side; when N is not the box init has at /box (the first
 * job, the first job of another workspace of the same reuse key, the same box
 * after a host write), init detaches the old /box and binds /.b/box-N there.
 * For every job it mounts a fresh /tmp, opens the job's stdin file (/.b/in-N,
 * which only root can reach), starts the program (clone with CLONE_VM |
 * CLONE_VFORK, see spawn) with rlimits, the box uid and
 * no capabilities, and hands it that file as fd 0 and its own fds 1/2, which
 * go straight to the host's pipes: nothing is copied by init. It then reaps
 * everything, polls the tree's CPU time and memory (and wall time) from /proc,
 * and when the program is gone kills whatever is left (init is pid 1 of the
 * sandbox, so kill(-1) reaches setsid and double-fork survivors too), reaps
 * it, and writes a bx_status trailer and the job's secret token on stdout.
 * Usage is measured here, inside: gVisor's own processes never count. Then it
 * detaches that run's /tmp (nothing of it stays while the sandbox idles) and
 * waits for the next job, blocked on stdin (no CPU); EOF on stdin ends it.
 *
 * What one run can leave for the next, which may be another workspace's (same
 * reuse key): nothing but what the host keeps. Every process is dead; /tmp and
 * /dev/shm are new tmpfs; System V IPC and POSIX message queues live in an IPC
 * namespace of the run's own; the root and the runtimes are read-only and /.b
 * is root's; /box is the job's box; env, uid, limits come from the job.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner/gvisor/init/box_enter.h"
#include "runner/gvisor/init/box_proto.h"

#define POLL_MS 20
/* A tree that used no CPU since the last poll is polled ever less often, up to
 * this: memory cannot grow without CPU, and an idle session's sandbox would
 * otherwise cost ~3 % of a core under ptrace (50 polls of /proc a second). */
#define POLL_IDLE_MAX_MS 250

/* Setup steps, reported in bx_status.setup_step. */
enum { STEP_READ = 1, STEP_PARSE, STEP_MOUNT, STEP_PIPE, STEP_FORK, STEP_STDIN };

static struct bx_status st;
/* the current job is live (BX_JOB_LIVE): its end goes to BX_STATUS_FILE */
static bool live;
/* the program of the current job (its process group), for forwarded signals */
static volatile pid_t prog_pid;

/* The zygote ("-z ARGV --", docs/warm-start.md): a runtime started up to just
 * before user code that forks each run's program. It is started after a job whose
 * argv[0] is its own, with that job's env, off the run's time; later jobs go to it
 * (it refuses those that are not `<runtime> <script> [args]` with its env, which
 * then start fresh). It is root here but runs no user code: its child enters the
 * run as child() below does. It is replaced after Z_MAX_FORKS runs so that what
 * it fixed at its start (Python's hash secret) does not serve long: as many as
 * judge.ini's gvisor_reuse_runs, whose end replaces the sandbox and with it the
 * zygote. A replacement costs an interpreter's start and the runs that start
 * fresh until it is up (~200 ms of CPU under ptrace: ~4 ms of each of 50 runs). */
#define Z_MAX_FORKS 200
static char **z_argv;	/* NULL: no zygote */
static pid_t z_pid;	/* 0: none running */
static int z_sock = -1; /* our end of its SOCK_SEQPACKET socket */
static char *z_env;	/* the env it was started with: envc strings */
static size_t z_env_len;
static int z_forks;
static bool z_ready;  /* it said 'R': it answers a job at once */
static bool z_broken; /* it failed: the sandbox runs every program fresh */

static long long now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	while (len > 0) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? -EPIPE : -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

/* Reads a runtime file once so the sentry caches its dentry and pages. */
static void warm(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

/* Ends a job: every process of it is dead, so the trailer and the token are the
 * last bytes the host reads for this job on stdout (and all its stderr is in
 * the host's pipe already). */
static void report(void)
{
	st.magic = BX_STATUS_MAGIC;
	int fd = 1;
	if (live)
		fd = open(BX_STATUS_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	write_full(fd, &st, sizeof(st));
	write_full(fd, st.token, BX_TOKEN_LEN);
	if (live) {
		close(fd);
		_exit(0); /* a live job ends the sandbox */
	}
}

/* The host signals init (runsc kill): the program's process group gets it. */
static void forward(int sig)
{
	if (prog_pid > 0)
		kill(-prog_pid, sig);
}

/* A fault of the sandbox itself: report it and end the sandbox. */
static void setup_failed(int step, int err)
{
	st.kind = BX_SETUP_FAILED;
	st.setup_step = (uint32_t)step;
	st.err = err;
	report();
	_exit(0);
}

/* The signals init forwards to the program (main installs forward for them). */
static const int fwd_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

/* In the child between clone and execve: only system calls, then exec. The child
 * shares init's memory (CLONE_VM | CLONE_VFORK, see spawn), so it writes nothing
 * of init's but errno, and it gets init's signal handlers back to the default
 * before it unblocks signals: no handler of init ever runs in it. */
static void child(const struct bx_job *job, char **argv, char **envp,
		  const struct sock_fprog *filter, int stdin_fd, int errfd)
{
	for (size_t i = 0; i < sizeof(fwd_sigs) / sizeof(fwd_sigs[0]); i++)
		signal(fwd_sigs[i], SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	/* fd 0 was the job pipe: the program gets its own input instead */
	if (dup2(stdin_fd, 0) < 0) {
		int err = errno;
		(void)!write(errfd, &err, sizeof(err));
		_exit(127);
	}
	int err = bx_enter(job, filter);
	if (!err) {
		execve(argv[0], argv, envp);
		err = errno;
	}
	(void)!write(errfd, &err, sizeof(err));
	_exit(127);
}

struct spawn_args {
	const struct bx_job *job;
	char **argv, **envp;
	const struct sock_fprog *filter;
	int stdin_fd, errfd;
};

static int spawn_child(void *arg)
{
	const struct spawn_args *a = arg;
	child(a->job, a->argv, a->envp, a->filter, a->stdin_fd, a->errfd);
	return 127; /* not reached: child execs or _exits */
}

/* Starts the program as posix_spawn does: a child that shares init's memory
 * (CLONE_VM) while init waits for its execve or _exit (CLONE_VFORK). Under
 * gVisor's ptrace platform a fork copies init's address space into a new host
 * stub process, which execve then throws away (measured: 18 -> 8 ms of sandbox
 * CPU per start of /bin/true; through the API, ~3 ms less per Python hello, of
 * ~36). All signals are blocked around the clone (the child unblocks them).
 * Returns the pid or -1 (errno). */
static pid_t spawn(struct spawn_args *a)
{
	static char stack[256 * 1024] __attribute__((aligned(16)));
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid_t pid = clone(spawn_child, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, a);
	int err = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return pid;
}

/* Ends the zygote (if any) and reaps it. */
static void z_stop(void)
{
	if (z_sock >= 0)
		close(z_sock);
	z_sock = -1;
	if (z_pid > 0) {
		kill(z_pid, SIGKILL);
		waitpid(z_pid, NULL, 0);
	}
	z_pid = 0;
}

/* Starts the zygote with env (envc strings, env_len bytes from env[0]): root, no
 * job's limits, stdio /dev/null, its socket as fd 3, cwd /. It is ready when it
 * answers its first job. */
static void z_start(char **env, const char *env_blob, size_t env_len)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		for (size_t i = 0; i < sizeof(fwd_sigs) / sizeof(fwd_sigs[0]); i++)
			signal(fwd_sigs[i], SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setsid();
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 ||
		    dup2(sv[1], 3) < 0 || chdir("/") < 0)
			_exit(126);
		execve(z_argv[0], z_argv, env);
		_exit(127);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return;
	}
	z_pid = pid;
	z_sock = sv[0];
	z_forks = 0;
	z_ready = false;
	free(z_env);
	z_env = malloc(env_len ? env_len : 1);
	if (!z_env) {
		z_stop();
		return;
	}
	memcpy(z_env, env_blob, env_len);
	z_env_len = env_len;
}

/* Whether the zygote has said it is ready (one message "R"); a run never waits
 * for a zygote still starting: it starts fresh instead. */
static bool z_is_ready(void)
{
	if (!z_ready && z_sock >= 0) {
		char c;
		ssize_t n = recv(z_sock, &c, 1, MSG_DONTWAIT);
		if (n == 1 && c == 'R')
			z_ready = true;
		else if (n >= 0 || (errno != EAGAIN && errno != EINTR)) {
			z_stop(); /* it ended or spoke out of turn */
			z_broken = true;
		}
	}
	return z_ready;
}

/* Hands a job to the zygote: its header (token zeroed: the program is a copy of
 * the zygote's memory) and rest (strings and filter), with the run's stdin, our
 * stdout and stderr and the error pipe. Returns the program's pid (our child),
 * 0 when the zygote declines the job, -1 when it failed (it is stopped). */
static pid_t z_spawn(const struct bx_job *job, const char *rest, int stdin_fd, int errfd)
{
	struct bx_job h = *job;
	memset(h.token, 0, sizeof(h.token));
	size_t rest_len = job->len - sizeof(*job);
	char *msg = malloc(sizeof(h) + rest_len);
	if (!msg)
		return 0;
	memcpy(msg, &h, sizeof(h));
	memcpy(msg + sizeof(h), rest, rest_len);
	int fds[4] = {stdin_fd, 1, 2, errfd};
	char cbuf[CMSG_SPACE(sizeof(fds))];
	memset(cbuf, 0, sizeof(cbuf));
	struct iovec iov = {msg, sizeof(h) + rest_len};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	ssize_t n;
	do
		n = sendmsg(z_sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	free(msg);
	if (n < 0 && errno == EMSGSIZE)
		return 0; /* a job larger than the socket takes: this one starts fresh */
	int32_t pid = -1;
	if (n == (ssize_t)iov.iov_len) {
		/* it is ready (z_is_ready): its answer is a fork away */
		struct pollfd p = {z_sock, POLLIN, 0};
		int r;
		do
			r = poll(&p, 1, 2000);
		while (r < 0 && errno == EINTR);
		if (r != 1 || recv(z_sock, &pid, sizeof(pid), 0) != sizeof(pid))
			pid = -1;
	}
	if (pid < 0) {
		z_stop();
		z_broken = true;
		return -1;
	}
	z_forks += pid > 0;
	return pid;
}

/* Kills every process of the run: all but init and the zygote. Without a
 * zygote, kill(-1) (setsid and double-fork survivors too); with one, each pid in
 * /proc. Returns how many processes of the run were still there. */
static int kill_run(void)
{
	if (z_pid <= 0) {
		kill(-1, SIGKILL);
		return 0;
	}
	int left = 0;
	DIR *d = opendir("/proc");
	if (!d) {
		kill(-1, SIGKILL); /* cannot tell them apart: the zygote goes too */
		return 0;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 1 || pid == z_pid)
			continue;
		kill((pid_t)pid, SIGKILL);
		left++;
	}
	closedir(d);
	return left;
}

/* Anonymous and file-backed resident memory (kB) of a process, from its smaps.
 * Returns false when it cannot be read (the process is gone). */
static bool read_smaps(long pid, long *anon_kb, long *file_kb)
{
	static char *buf;
	static size_t cap;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/smaps", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t len = 0;
	for (;;) {
		if (cap - len < 65536) {
			char *nb = realloc(buf, cap + 262144);
			if (!nb)
				break;
			buf = nb, cap += 262144;
		}
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!len)
		return false;
	buf[len] = 0;
	long rss = 0, anon = 0;
	for (char *line = buf; line && *line;) {
		if (!strncmp(line, "Rss:", 4))
			rss += strtol(line + 4, NULL, 10);
		else if (!strncmp(line, "Anonymous:", 10))
			anon += strtol(line + 10, NULL, 10);
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	*anon_kb = anon;
	*file_kb = rss > anon ? rss - anon : 0;
	return true;
}

/* The sandbox's CPUs (sysconf reads /sys at every call). */
static long cpus(void)
{
	static long n;
	if (!n)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n;
}

/* Whether a poll elapsed_us into the run may skip its walk of /proc (opening a new
 * process's /proc/PID/stat costs the sentry ~0.4 ms): while the tree cannot have
 * used its CPU limit (the CPUs give no more than the elapsed time each) and the
 * whole sandbox's memory (sysinfo: the sentry's memory file and mappings) is below
 * the memory limit. A warm run under load ends before the poll after. */
static bool walk_needless(const struct bx_job *job, long long elapsed_us)
{
	if (job->cpu_ms > 0 && job->cpu_ms * 1000 <= elapsed_us * cpus())
		return false;
	if (job->memory_kb > 0) {
		struct sysinfo si;
		if (sysinfo(&si) < 0 || si.totalram < si.freeram)
			return false;
		unsigned long long used = (unsigned long long)(si.totalram - si.freeram) *
					  (si.mem_unit ? si.mem_unit : 1);
		if (used / 1024 > (unsigned long long)job->memory_kb)
			return false;
	}
	return true;
}

/* Adds pid's anonymous memory to *anon_kb and keeps the largest file-backed one in
 * *file_max_kb (a process gone meanwhile adds nothing). */
static void add_smaps(long pid, long *anon_kb, long *file_max_kb)
{
	long a, f;
	if (!read_smaps(pid, &a, &f))
		return;
	*anon_kb += a;
	if (f > *file_max_kb)
		*file_max_kb = f;
}

/* Processes whose smaps a walk of /proc reads after the walk (any more: at once). */
#define POLL_PIDS 64

/* CPU (µs) of every live process but init, the sum of their anonymous memory
 * (kB), and the largest file-backed resident memory of one of them (kB); returns
 * how many processes it found.
 * Memory is what the program allocated: gVisor maps file pages in eagerly (a
 * Node.js hello shows 128 MB resident, 108 MB of it its own binary), so file
 * pages would charge a runtime's size to every program.
 * smaps_over_kb: smaps (the sentry writes ~50 kB of text for a Python, ~0.6 ms
 * of its CPU) is read only when the processes' resident memory, file pages
 * included (stat's rss, an upper bound of their anonymous memory), is above
 * this; below it *anon_kb is 0 (unknown, but no more than the bound).
 * LONG_MAX: never, -1: always. */
static int poll_tree(long long *cpu_us, long *anon_kb, long *file_kb, long smaps_over_kb)
{
	static long tick;
	int found = 0;
	if (!tick)
		tick = sysconf(_SC_CLK_TCK);
	long long ticks = 0, rss_pages = 0;
	long anon = 0, file_max = 0;
	long later[POLL_PIDS];
	int nlater = 0;
	DIR *d = opendir("/proc");
	if (!d)
		return -1;
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 1 || pid == z_pid)
			continue;
		char path[64], buf[1024];
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		found++;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		char *p = strrchr(buf, ')');
		unsigned long long ut = 0, stt = 0, cut = 0, cst = 0;
		long rss = 0;
		/* after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt
		 * cmajflt utime stime cutime cstime priority nice num_threads itrealvalue
		 * starttime vsize rss (pages) */
		int got =
		    p ? sscanf(p + 1,
			       " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu"
			       " %*d %*d %*d %*d %*u %*u %ld",
			       &ut, &stt, &cut, &cst, &rss)
		      : 0;
		if (got >= 4)
			ticks += (long long)(ut + stt + cut + cst);
		/* no rss read: as if above any bound */
		rss_pages += got == 5 ? rss : LONG_MAX / 8192;
		if (nlater < POLL_PIDS) {
			later[nlater++] = pid;
			continue;
		}
		smaps_over_kb = -1; /* too many to keep: this one's smaps now, and all */
		add_smaps(pid, &anon, &file_max);
	}
	closedir(d);
	if (smaps_over_kb < 0 || rss_pages * (getpagesize() / 1024) > smaps_over_kb)
		for (int i = 0; i < nlater; i++)
			add_smaps(later[i], &anon, &file_max);
	*cpu_us = ticks * 1000000LL / tick;
	*anon_kb = anon;
	if (file_kb && file_max > *file_kb)
		*file_kb = file_max;
	return found;
}

/* Runs a runtime once (e.g. python3 -c pass) as nobody, before any job exists, so
 * that the sentry has its files cached; never reads the job pipe (stdio is /dev/null). */
static void warm_exec(char **argv)
{
	static char *const envp[] = {"PATH=/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8", NULL};
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	pid_t pid = fork();
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		int fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
		}
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0 || chdir("/tmp") < 0)
			_exit(126);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	if (pid > 0) {
		struct timespec to = {10, 0};
		long long until = now_us() + 10000000LL;
		while (waitpid(pid, NULL, WNOHANG) == 0) {
			long long left = until - now_us();
			if (left <= 0) {
				kill(pid, SIGKILL);
				waitpid(pid, NULL, 0);
				break;
			}
			to.tv_sec = left / 1000000;
			to.tv_nsec = (left % 1000000) * 1000;
			sigtimedwait(&chld, NULL, &to);
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* A job as read from stdin: its header, its strings and its seccomp filter. */
struct job_in {
	struct bx_job job;
	char *strs;		   /* the strings, owned */
	char **vec;		   /* argv, NULL, env, NULL: pointers into strs, owned */
	char **argv, **env;	   /* into vec */
	struct sock_filter *insns; /* owned */
	struct sock_fprog filter;
};

/* Reads one job from stdin into in (the host closing stdin ends the sandbox). */
static void read_job(struct job_in *in)
{
	struct bx_job *job = &in->job;
	int r = read_full(0, job, sizeof(*job));
	if (r == -EPIPE) {
		z_stop(); /* reaped here, the sandbox ends at once */
		_exit(0); /* the host is done with this sandbox */
	}
	if (r < 0)
		setup_failed(STEP_READ, -r);
	memset(&st, 0, sizeof(st));
	memcpy(st.token, job->token, BX_TOKEN_LEN);
	live = job->job_flags & BX_JOB_LIVE;
	st.t_job = now_us();
	if (job->magic != BX_JOB_MAGIC || job->len < sizeof(*job) || job->len > BX_MAX_JOB ||
	    job->argc < 1 || job->argc > 65536 || job->envc > 65536)
		setup_failed(STEP_PARSE, EINVAL);
	size_t rest = job->len - sizeof(*job);
	in->strs = malloc(rest + 1);
	in->vec = calloc((size_t)job->argc + job->envc + 2, sizeof(char *));
	if (!in->strs || !in->vec)
		setup_failed(STEP_PARSE, ENOMEM);
	if ((r = read_full(0, in->strs, rest)) < 0)
		setup_failed(STEP_READ, -r);
	in->strs[rest] = 0;
	size_t flen = (size_t)job->filter_len * sizeof(struct sock_filter);
	if (flen > rest)
		setup_failed(STEP_PARSE, EINVAL);
	char *p = in->strs, *end = in->strs + rest - flen;
	for (uint32_t i = 0; i < job->argc + job->envc; i++) {
		char *z = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;
		if (!z)
			setup_failed(STEP_PARSE, EINVAL);
		in->vec[i < job->argc ? i : i + 1] = p;
		p = z + 1;
	}
	in->insns = malloc(flen ? flen : 1);
	if (!in->insns)
		setup_failed(STEP_PARSE, ENOMEM);
	memcpy(in->insns, end, flen);
	in->filter =
	    (struct sock_fprog){.len = (unsigned short)job->filter_len, .filter = in->insns};
	in->argv = in->vec;
	in->env = in->vec + job->argc + 1;
}

/* Bytes of a job's env strings (contiguous in strs, each with its NUL). */
static size_t env_len(const struct job_in *in)
{
	size_t n = 0;
	for (uint32_t i = 0; i < in->job.envc; i++)
		n += strlen(in->env[i]) + 1;
	return n;
}

static bool tmp_up = true; /* at start: whatever the spec put at /tmp goes too */

/* Detaches the run's /tmp and /dev/shm (what init mounted for it). */
static void drop_tmp(void)
{
	if (!tmp_up)
		return; /* each call is a trip through the sentry */
	umount2("/dev/shm", MNT_DETACH);
	umount2("/tmp", MNT_DETACH);
	tmp_up = false;
}

/* Binds the job's box at /box when it is not there yet, a fresh /tmp and
 * /dev/shm, and opens the job's stdin. Returns the stdin fd. */
static int prepare_job(const struct bx_job *job)
{
	/* the box of the job at /box: the host mounted it on its side at
	 * /.b/box-<box_seq> before sending the job. /.b stays (mode 0700, root's):
	 * the stdin of each job comes through it too. */
	static uint32_t box_seq;
	static bool home; /* the box is at /home/user too */
	bool want_home = job->job_flags & BX_JOB_HOME;
	if (home && (job->box_seq != box_seq || !want_home)) {
		umount2("/home/user", MNT_DETACH);
		home = false;
	}
	if (job->box_seq != box_seq) {
		if (box_seq)
			umount2("/box", MNT_DETACH);
		box_seq = 0;
		char box[64];
		snprintf(box, sizeof(box), "/.b/box-%u", job->box_seq);
		if (mount(box, "/box", NULL, MS_BIND, NULL) < 0)
			setup_failed(STEP_MOUNT, errno);
		box_seq = job->box_seq;
	}
	/* the same folder at E2B's home (sessions): a file written at either
	 * path is at both */
	if (want_home && !home) {
		if (mount("/box", "/home/user", NULL, MS_BIND, NULL) < 0)
			setup_failed(STEP_MOUNT, errno);
		home = true;
	}
	/* a fresh /tmp for every job: nothing a run left there reaches the next;
	 * /dev/shm (POSIX shared memory, semaphores) is the same folder, as natively */
	char opts[64];
	snprintf(opts, sizeof(opts), "size=%lld,mode=1777", (long long)job->tmp_bytes);
	drop_tmp();
	static bool shm_dir;
	if (!shm_dir)
		shm_dir = mkdir("/dev/shm", 0755) == 0 || errno == EEXIST;
	tmp_up = true;
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0 ||
	    mount("/tmp", "/dev/shm", NULL, MS_BIND, NULL) < 0)
		setup_failed(STEP_MOUNT, errno);
	int stdin_fd;
	if (job->job_flags & BX_JOB_LIVE) {
		/* the job pipe itself: init reads no more jobs from it */
		stdin_fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
	} else if (job->stdin_seq) {
		char in_path[64];
		snprintf(in_path, sizeof(in_path), "/.b/in-%u", job->stdin_seq);
		stdin_fd = open(in_path, O_RDONLY | O_CLOEXEC);
	} else {
		stdin_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	if (stdin_fd < 0)
		setup_failed(STEP_STDIN, errno);
	return stdin_fd;
}

/* What watching a run measured. */
struct watch {
	long long cpu_dead, cpu_live, cpu_polled, t_end;
	long maxrss;
	int main_status;
	bool killed;
	bool none_left; /* the look at /proc when the program ended found none of the run */
};

/* The program ended with wait status ws. */
static void main_ended(struct watch *w, int ws, bool *main_done)
{
	w->main_status = ws;
	*main_done = true;
	w->t_end = now_us();
	/* processes left (orphans are ours now): their CPU so far */
	siginfo_t si;
	if (!w->killed && (z_pid > 0 || waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0)) {
		long anon = 0;
		/* none found (a zygote's run, usually): none can appear, as nothing of
		 * the run is left to fork; no second walk of /proc to kill them */
		w->none_left = poll_tree(&w->cpu_live, &anon, &st.file_rss_kb, LONG_MAX) == 0;
	}
	/* the run is over: nothing of it may outlive the program */
	if (!w->none_left)
		kill_run();
}

/* Waits up to *to for a child's end (SIGCHLD) or, while the zygote holds the
 * program (zchild), for its report on the zygote's socket. */
static void wait_event(const sigset_t *chld, const struct timespec *to, bool zchild)
{
	static int sfd = -1;
	if (!zchild || z_sock < 0) {
		sigtimedwait(chld, NULL, to);
		return;
	}
	if (sfd < 0)
		sfd = signalfd(-1, chld, SFD_CLOEXEC | SFD_NONBLOCK);
	struct pollfd p[2] = {{z_sock, POLLIN, 0}, {sfd, POLLIN, 0}};
	int ms = (int)(to->tv_sec * 1000 + to->tv_nsec / 1000000);
	poll(p, sfd >= 0 ? 2 : 1, ms > 0 ? ms : 1);
	struct signalfd_siginfo si;
	while (sfd >= 0 && read(sfd, &si, sizeof(si)) > 0)
		;
}

/* Reaps the run's processes until none is left, polling the tree every POLL_MS
 * for CPU, memory and wall limits (a limit hit kills everything and flags st).
 *
 * CPU of the run = rusage of the program and of every process that ended while
 * it ran, plus, for those still alive when it ends, their CPU from /proc just
 * before they are killed (gVisor's rusage of a task SIGKILLed in that clean-up
 * is inflated: measured ~13 ms per paused process, growing with their number).
 * zchild: the zygote started the program (it is the zygote's child, not ours):
 * its end comes as a report on the zygote's socket. */
static void watch_run(const struct bx_job *job, pid_t pid, long long t0, const sigset_t *chld,
		      bool zchild, struct watch *w)
{
	long long next_poll = t0 + POLL_MS * 1000LL, last_cpu = -1;
	long interval_ms = POLL_MS;
	bool main_done = false, polled = false, walked = false;
	for (;;) {
		struct rusage ru;
		int ws;
		pid_t got;
		int wflags = main_done && z_pid <= 0 ? 0 : WNOHANG;
		while ((got = wait4(-1, &ws, wflags, &ru)) > 0) {
			if (got == z_pid) {
				/* the zygote died (it runs nothing of the run's) */
				z_pid = 0;
				z_broken = true;
				continue;
			}
			if (!main_done && !w->killed)
				w->cpu_dead += ru.ru_utime.tv_sec * 1000000LL +
					       ru.ru_utime.tv_usec +
					       ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec;
			if (ru.ru_maxrss > w->maxrss && !main_done)
				w->maxrss = ru.ru_maxrss;
			if (got == pid)
				main_ended(w, ws, &main_done);
		}
		if (got < 0 && errno == ECHILD)
			break;
		if (zchild && !main_done) {
			/* the zygote reaped the program: its wait status and rusage */
			char m[28];
			ssize_t n = recv(z_sock, m, sizeof(m), MSG_DONTWAIT);
			if (n == (ssize_t)sizeof(m)) {
				int32_t zs;
				int64_t ut, stt, rss;
				memcpy(&zs, m, 4), memcpy(&ut, m + 4, 8);
				memcpy(&stt, m + 12, 8), memcpy(&rss, m + 20, 8);
				if (!w->killed)
					w->cpu_dead += ut + stt;
				if (rss > w->maxrss)
					w->maxrss = rss;
				main_ended(w, zs, &main_done);
			} else if (n >= 0 || (errno != EAGAIN && errno != EINTR)) {
				/* the zygote is gone: the program is our child now */
				zchild = false;
			}
		}
		if (main_done && z_pid > 0) {
			/* only the zygote may be left: wait4 cannot tell, /proc can */
			if (w->none_left || !kill_run())
				break;
			struct timespec ms = {0, 1000000};
			sigtimedwait(chld, NULL, &ms);
			continue;
		}
		if (main_done)
			continue;
		long long now = now_us();
		if (now >= next_poll) {
			long long cpu = 0;
			long rss = 0;
			/* the first walk of a run reads no smaps while the tree's whole
			 * resident memory is below the limit, and the first poll walks
			 * only when it must: a short run (a warm hello under load) ends
			 * before the one after */
			if (polled || !walk_needless(job, now - t0)) {
				poll_tree(
				    &cpu, &rss, &st.file_rss_kb,
				    !walked ? (job->memory_kb > 0 ? (long)job->memory_kb : LONG_MAX)
					    : -1);
				walked = true;
			}
			polled = true;
			cpu += w->cpu_dead;
			w->cpu_polled = cpu;
			if (rss > st.peak_tree_kb)
				st.peak_tree_kb = rss;
			if (!w->killed && job->cpu_ms > 0 && cpu > job->cpu_ms * 1000)
				st.flags |= BX_CPU_LIMIT, w->killed = true;
			if (!w->killed && job->memory_kb > 0 && rss > job->memory_kb)
				st.flags |= BX_MEM_LIMIT, w->killed = true;
			if (!w->killed && job->wall_ms > 0 && now - t0 > job->wall_ms * 1000)
				st.flags |= BX_WALL_LIMIT, w->killed = true;
			if (w->killed)
				kill_run();
			interval_ms = cpu == last_cpu ? interval_ms * 2 : POLL_MS;
			if (interval_ms > POLL_IDLE_MAX_MS)
				interval_ms = POLL_IDLE_MAX_MS;
			last_cpu = cpu;
			now = now_us();
			next_poll = now + interval_ms * 1000LL;
			/* the wall limit is kept to the poll, idle or not */
			if (job->wall_ms > 0 && next_poll > t0 + job->wall_ms * 1000 + 1000)
				next_poll = t0 + job->wall_ms * 1000 + 1000;
		}
		struct timespec to = {0, (long)(next_poll > now ? next_poll - now : 0) * 1000};
		if (to.tv_nsec >= 1000000000L)
			to.tv_sec = to.tv_nsec / 1000000000L, to.tv_nsec %= 1000000000L;
		wait_event(chld, &to, zchild);
	}
}

/* Reads one job from stdin, runs it to the end and reports on it. */
static void run_job(void)
{
	struct job_in in;
	memset(&in, 0, sizeof(in));
	read_job(&in);
	int stdin_fd = prepare_job(&in.job);

	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int ep[2];
	if (pipe2(ep, O_CLOEXEC) < 0)
		setup_failed(STEP_PIPE, errno);

	long long t0 = now_us();
	st.t_fork = t0;
	pid_t pid = 0;
	bool zchild = false;
	if (z_pid > 0 && !live && in.job.envc > 0 && z_is_ready() && env_len(&in) == z_env_len &&
	    !memcmp(in.env[0], z_env, z_env_len))
		pid = z_spawn(&in.job, in.strs, stdin_fd, ep[1]);
	zchild = pid > 0;
	if (pid <= 0) {
		struct spawn_args sa = {&in.job, in.argv, in.env, &in.filter, stdin_fd, ep[1]};
		pid = spawn(&sa);
		if (pid < 0)
			setup_failed(STEP_FORK, errno);
	}
	prog_pid = pid;
	close(ep[1]);
	close(stdin_fd);
	if (live) {
		/* the program holds the pipes alone: their EOF is its end */
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		dup2(null, 0), dup2(null, 1), dup2(null, 2);
		close(null);
	}
	int exec_err = 0;
	if (read_full(ep[0], &exec_err, sizeof(exec_err)) < 0)
		exec_err = 0; /* EOF: execve succeeded */
	close(ep[0]);
	st.t_exec = now_us();

	struct watch w = {0};
	watch_run(&in.job, pid, t0, &chld, zchild, &w);
	st.wall_us = (w.t_end ? w.t_end : now_us()) - t0;
	st.t_main = w.t_end;
	st.t_end = now_us();
	st.cpu_us = w.killed ? (w.cpu_polled > w.cpu_dead ? w.cpu_polled : w.cpu_dead)
			     : w.cpu_dead + w.cpu_live;
	/* gVisor (ptrace) charges a task for time it waits to be scheduled back into the
	 * application; with many processes that sum exceeds what the CPUs could give */
	long ncpu = cpus();
	if (ncpu > 0 && st.cpu_us > st.wall_us * ncpu)
		st.cpu_us = st.wall_us * ncpu;
	st.maxrss_kb = w.maxrss;
	if (exec_err) {
		st.kind = BX_EXEC_FAILED;
		st.err = exec_err;
	} else if (WIFSIGNALED(w.main_status)) {
		st.kind = BX_SIGNALED;
		st.code = WTERMSIG(w.main_status);
	} else {
		st.kind = BX_EXITED;
		st.code = WEXITSTATUS(w.main_status);
	}
	prog_pid = 0;
	report();
	/* after the report (off the run's time): the sandbox may idle now */
	drop_tmp();
	/* a zygote for the next runs like this one: when there is none, it has
	 * another env, or it has served its runs */
	if (z_argv && !z_broken && !live && in.job.envc > 0 && !strcmp(in.argv[0], z_argv[0]) &&
	    (z_pid <= 0 || z_forks >= Z_MAX_FORKS || env_len(&in) != z_env_len ||
	     memcmp(in.env[0], z_env, z_env_len))) {
		z_stop();
		z_start(in.env, in.env[0], env_len(&in));
	}
	free(in.insns);
	free(in.vec);
	free(in.strs);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	/* a handler, not SIG_IGN: the program gets the default back at execve */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < sizeof(fwd_sigs) / sizeof(fwd_sigs[0]); i++)
		sigaction(fwd_sigs[i], &sa, NULL);
	/* arguments: -r FILE (read it), -x PROGRAM ARGS... -- (run it), in order;
	 * -z PROGRAM ARGS... -- (the zygote, started after the first job like it) */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-r") && i + 1 < argc) {
			warm(argv[++i]);
		} else if (!strcmp(argv[i], "-x") && i + 1 < argc) {
			int j = i + 1;
			while (j < argc && strcmp(argv[j], "--"))
				j++;
			char *saved = argv[j];
			argv[j] = NULL;
			warm_exec(argv + i + 1);
			argv[j] = saved;
			i = j;
		} else if (!strcmp(argv[i], "-z") && i + 1 < argc) {
			int j = i + 1;
			while (j < argc && strcmp(argv[j], "--"))
				j++;
			z_argv = calloc((size_t)(j - i), sizeof(char *));
			if (z_argv)
				memcpy(z_argv, argv + i + 1, (size_t)(j - i - 1) * sizeof(char *));
			i = j;
		}
	}

	/* ready: the host hands this sandbox a job only after this byte (it is not
	 * part of the program's stdout, which starts after it) */
	write_full(1, "R", 1);

	for (;;)
		run_job();
}
