/* sessd: the program of a session's sandbox — starts the session's code contexts
 * (a language driver each) and processes as its children, and relays their
 * standard streams to the host (sessd_proto.h).
 *
 * How it works. The host starts sessd as a live process of the sandbox
 * (sandbox_start), so everything sessd starts is inside that sandbox: its
 * namespaces, its cgroup and limits, its seccomp policy, its uid. sessd holds
 * no privilege of its own: what a cell or a process could do to it, the user
 * could do to their own session anyway. One thread, one poll loop: the host's
 * frames on stdin; each child's stdout and stderr (read, framed, written to
 * sessd's stdout, which the host drains all the time); each child's stdin,
 * written without blocking from what the host gave; a signalfd for SIGCHLD.
 * A child that ended is reaped, what its pipes hold now is sent, its pipes are
 * closed (a grandchild that keeps them open writes into nothing) and X goes
 * last. At EOF on stdin (the host is gone) or Q, every child's process group
 * is killed and sessd exits; the sandbox's init then kills what is left.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner/session/init/sessd_proto.h"
#include "runner/session/init/shell_shortcut.h"

#define READ_CHUNK (64 * 1024)

struct child {
	bool used;
	unsigned long id;
	pid_t pid;
	int in, out, err; /* our ends; -1 when closed */
	char *buf;	  /* stdin bytes not yet written: buf[off..len) */
	size_t len, off, cap;
	bool close_in; /* close stdin once buf is written */
	bool fed;      /* buf held bytes since the last D */
	bool mute;     /* read and drop its output */
	long long deadline_ms;
	bool timed_out;
	unsigned long long mark; /* when its last cell began, in clock ticks since boot */
};

static struct child kids[SESSD_MAX_CHILDREN];
static char *in_buf; /* the host's frames read so far */
static size_t in_len, in_cap;

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void *grow(void *p, size_t n)
{
	void *q = realloc(p, n);
	if (!q) {
		fprintf(stderr, "sessd: out of memory (%zu bytes)\n", n);
		_exit(111);
	}
	return q;
}

/* Writes all of data to the host; a host that is gone ends sessd. */
static void write_all(const char *data, size_t len)
{
	while (len > 0) {
		ssize_t w = write(1, data, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(0); /* the host is gone: so are we */
		data += w;
		len -= (size_t)w;
	}
}

/* Writes a frame to the host. */
static void frame(char op, unsigned long id, const void *data, size_t len)
{
	char head[SESSD_MAX_HEAD];
	int hl = snprintf(head, sizeof head, "%c %lu %zu\n", op, id, len);
	write_all(head, (size_t)hl);
	if (len)
		write_all(data, len);
}

static void framef(char op, unsigned long id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void framef(char op, unsigned long id, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	frame(op, id, buf, n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static struct child *find(unsigned long id)
{
	for (int i = 0; i < SESSD_MAX_CHILDREN; i++)
		if (kids[i].used && kids[i].id == id)
			return &kids[i];
	return NULL;
}

/* ---- spawning ---- */

/* The value of name in env ("K=V" strings), or NULL. */
static const char *env_get(char **env, const char *name)
{
	size_t n = strlen(name);
	for (char **e = env; *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* prog as a path: itself when it has a '/', else the first executable of that
 * name in PATH (of the child's env). out holds at least PATH_MAX. */
static int resolve(const char *prog, char **env, char *out, size_t outlen)
{
	if (strchr(prog, '/')) {
		snprintf(out, outlen, "%s", prog);
		return 0;
	}
	const char *path = env_get(env, "PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		if (n && snprintf(out, outlen, "%.*s/%s", (int)n, p, prog) < (int)outlen &&
		    access(out, X_OK) == 0)
			return 0;
		p += n + (p[n] == ':');
	}
	return -ENOENT;
}

/* Splits a spawn payload (see sessd_proto.h) into its parts, in place. */
static int parse_spawn(char *p, size_t len, char **flags, char **cwd, long long *timeout,
		       char ***argv, char ***env)
{
	char *end = p + len;
	char *field[4];
	for (int i = 0; i < 4; i++) {
		char *z = memchr(p, 0, (size_t)(end - p));
		if (!z)
			return -1;
		field[i] = p;
		p = z + 1;
	}
	*flags = field[0];
	*cwd = field[1];
	*timeout = atoll(field[2]);
	long argc = atol(field[3]);
	if (argc < 1 || argc > 100000)
		return -1;
	size_t nstr = 0;
	for (char *q = p; q < end; q += strlen(q) + 1) {
		if (!memchr(q, 0, (size_t)(end - q)))
			return -1;
		nstr++;
	}
	if (nstr < (size_t)argc)
		return -1;
	char **v = calloc(nstr + 2, sizeof *v);
	if (!v)
		return -1;
	size_t k = 0;
	for (char *q = p; q < end; q += strlen(q) + 1)
		v[k++] = q;
	/* argv: v[0..argc), NULL; env: the rest, NULL */
	memmove(v + argc + 1, v + argc, (nstr - (size_t)argc) * sizeof *v);
	v[argc] = NULL;
	v[nstr + 1] = NULL;
	*argv = v;
	*env = v + argc + 1;
	return 0;
}

static void reap(void);
static void sweep(pid_t pgrp, pid_t spare, unsigned long long since);

static void spawn(unsigned long id, char *payload, size_t len)
{
	char *flags, *cwd, **argv = NULL, **env;
	long long timeout;
	struct child *c = NULL;
	int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1}, devnull = -1;
	char path[4096];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	bool fa_made = false, at_made = false;
	if (find(id)) {
		framef(SESSD_FAILED, id, "%d child %lu exists", EEXIST, id);
		return;
	}
	for (int i = 0; i < SESSD_MAX_CHILDREN && !c; i++)
		if (!kids[i].used)
			c = &kids[i];
	if (!c) {
		framef(SESSD_FAILED, id, "%d too many children", EAGAIN);
		return;
	}
	if (parse_spawn(payload, len, &flags, &cwd, &timeout, &argv, &env) < 0) {
		framef(SESSD_FAILED, id, "%d malformed spawn", EINVAL);
		return;
	}
	/* a simple command under bash -c starts without bash (shell_shortcut.h) */
	struct shell_shortcut quick;
	bool shortcut = shell_shortcut(argv, env, cwd, &quick) == 1;
	int rc = resolve(argv[0], env, path, sizeof path);
	if (rc < 0) {
		framef(SESSD_FAILED, id, "%d no program '%.200s' in PATH", -rc, argv[0]);
		goto out;
	}
	bool with_stdin = strchr(flags, 'i') != NULL;
	if ((with_stdin						       ? pipe2(pin, O_CLOEXEC)
	     : (devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0 ? -1
								       : 0) < 0 ||
	    pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0) {
		framef(SESSD_FAILED, id, "%d pipe: %s", errno, strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	fa_made = true;
	posix_spawn_file_actions_adddup2(&fa, with_stdin ? pin[0] : devnull, 0);
	posix_spawn_file_actions_adddup2(&fa, pout[1], 1);
	posix_spawn_file_actions_adddup2(&fa, perr[1], 2);
	posix_spawn_file_actions_addchdir_np(&fa, cwd);
	posix_spawnattr_init(&at);
	at_made = true;
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
					  POSIX_SPAWN_SETPGROUP);
	pid_t pid;
	/* the shortcut's program would not start (a script without #!, ...):
	 * bash, which knows what to do or say */
	rc = shortcut ? posix_spawn(&pid, quick.path, &fa, &at, quick.argv, quick.env) : -1;
	if (rc)
		rc = posix_spawn(&pid, path, &fa, &at, argv, env);
	/* EAGAIN: the process limit is full, often of a killed fork bomb's
	 * processes still dying: reap them and try again, 5 s at most */
	for (int i = 0; rc == EAGAIN && i < 50; i++) {
		reap();
		usleep(100 * 1000);
		rc = posix_spawn(&pid, path, &fa, &at, argv, env);
	}
	if (rc) {
		framef(SESSD_FAILED, id, "%d cannot start '%.200s' in '%.200s': %s", rc, argv[0],
		       cwd, strerror(rc));
		goto out;
	}
	memset(c, 0, sizeof *c);
	c->used = true;
	c->id = id;
	c->pid = pid;
	c->in = pin[1], c->out = pout[0], c->err = perr[0];
	pin[1] = pout[0] = perr[0] = -1;
	if (c->in >= 0)
		fcntl(c->in, F_SETFL, O_NONBLOCK);
	fcntl(c->out, F_SETFL, O_NONBLOCK);
	fcntl(c->err, F_SETFL, O_NONBLOCK);
	c->deadline_ms = timeout > 0 ? now_ms() + timeout : 0;
	framef(SESSD_STARTED, id, "%d", (int)pid);
out:
	if (shortcut)
		shell_shortcut_release(&quick);
	if (fa_made)
		posix_spawn_file_actions_destroy(&fa);
	if (at_made)
		posix_spawnattr_destroy(&at);
	int *const fds[] = {&pin[0], &pin[1], &pout[0], &pout[1], &perr[0], &perr[1], &devnull};
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		close_fd(fds[i]);
	free(argv);
}

/* ---- the children's streams ---- */

/* Reads what fd holds now and sends it as op of c (dropped when muted).
 * Returns false at EOF or on an error (then fd is closed). */
static bool relay(struct child *c, int *fd, char op)
{
	static char buf[READ_CHUNK];
	for (int rounds = 0; rounds < 16; rounds++) {
		ssize_t n = read(*fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n <= 0) {
			close_fd(fd);
			return false;
		}
		if (!c->mute)
			frame(op, c->id, buf, (size_t)n);
		if ((size_t)n < sizeof buf)
			return true;
	}
	return true;
}

static void feed(struct child *c)
{
	while (c->in >= 0 && c->off < c->len) {
		ssize_t w = write(c->in, c->buf + c->off, c->len - c->off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w < 0) {
			/* the child closed its stdin: what is left is dropped */
			close_fd(&c->in);
			c->off = c->len;
			break;
		}
		c->off += (size_t)w;
	}
	if (c->off == c->len) {
		c->off = c->len = 0;
		if (c->fed) {
			c->fed = false;
			frame(SESSD_DRAINED, c->id, NULL, 0);
		}
		if (c->close_in)
			close_fd(&c->in);
	}
}

static void give(struct child *c, const char *data, size_t len)
{
	if (c->in < 0 || c->close_in) {
		frame(SESSD_DRAINED, c->id, NULL, 0);
		return;
	}
	if (c->len + len > c->cap) {
		c->cap = (c->len + len) * 2;
		c->buf = grow(c->buf, c->cap);
	}
	memcpy(c->buf + c->len, data, len);
	c->len += len;
	c->fed = true;
	feed(c);
}

/* The end of a reaped child: its pipes' last bytes, then X. */
static void ended(struct child *c, int status, const struct rusage *ru)
{
	if (c->err >= 0)
		relay(c, &c->err, SESSD_STDERR);
	if (c->out >= 0)
		relay(c, &c->out, SESSD_STDOUT);
	close_fd(&c->in);
	close_fd(&c->out);
	close_fd(&c->err);
	long long cpu = (ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000LL +
			ru->ru_utime.tv_usec + ru->ru_stime.tv_usec;
	framef(SESSD_EXITED, c->id, "%d %lld %ld %d", status, cpu, ru->ru_maxrss,
	       c->timed_out ? 1 : 0);
	pid_t pgrp = c->pid;
	free(c->buf);
	memset(c, 0, sizeof *c);
	c->in = c->out = c->err = -1;
	/* a child killed (by the host, a limit or the OOM killer) takes its
	 * group along: a fork bomb's processes outlive its driver otherwise */
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		sweep(pgrp, 0, 0);
}

static void reap(void)
{
	for (;;) {
		int status;
		struct rusage ru;
		pid_t pid = wait4(-1, &status, WNOHANG, &ru);
		if (pid <= 0)
			return;
		for (int i = 0; i < SESSD_MAX_CHILDREN; i++)
			if (kids[i].used && kids[i].pid == pid)
				ended(&kids[i], status, &ru);
	}
}

static void kill_all(void)
{
	for (int i = 0; i < SESSD_MAX_CHILDREN; i++)
		if (kids[i].used)
			kill(-kids[i].pid, SIGKILL);
}

/* The clock /proc/<pid>/stat's start times count in: ticks since boot. */
static unsigned long long uptime_ticks(void)
{
	double up = 0;
	FILE *f = fopen("/proc/uptime", "r");
	if (f) {
		if (fscanf(f, "%lf", &up) != 1)
			up = 0;
		fclose(f);
	}
	return (unsigned long long)(up * (double)sysconf(_SC_CLK_TCK));
}

/* Kills, by SIGKILL, the processes of group pgrp that started since the
 * tick since, but spare: what an interrupted cell left behind, or all a
 * killed child's group. A fork bomb's children made after the signal never
 * got it (a group kill under gVisor can miss a child being forked) and would
 * fork on, filling the session's memory; so rounds go on until a scan finds
 * none (each killed one forks no more). On a loaded host killed processes
 * can take long to be scheduled and die, so the bound is time (10 s), not a
 * count of rounds. Zombies are reaped as they come. */
static void sweep(pid_t pgrp, pid_t spare, unsigned long long since)
{
	static bool sweeping; /* reap() below may end a child, whose end sweeps */
	if (sweeping)
		return;
	sweeping = true;
	long long until = now_ms() + 10000;
	for (;;) {
		DIR *d = opendir("/proc");
		if (!d)
			break;
		int found = 0;
		struct dirent *de;
		while ((de = readdir(d))) {
			char *end;
			long pid = strtol(de->d_name, &end, 10);
			if (*end || pid <= 0 || pid == spare || pid == getpid())
				continue;
			char path[64], buf[512];
			snprintf(path, sizeof path, "/proc/%ld/stat", pid);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			ssize_t n = read(fd, buf, sizeof buf - 1);
			close(fd);
			if (n <= 0)
				continue;
			buf[n] = 0;
			/* after the name's closing parenthesis: state (3), ppid, pgrp (5),
			 * ..., starttime (22) */
			char *p = strrchr(buf, ')');
			char state;
			long group;
			unsigned long long start;
			if (!p ||
			    sscanf(p + 1,
				   " %c %*d %ld %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
				   "%*d %*d %*d %*d %llu",
				   &state, &group, &start) != 3)
				continue;
			if (group != pgrp || state == 'Z' || start < since)
				continue;
			kill((pid_t)pid, SIGKILL);
			found++;
		}
		closedir(d);
		if (!found || now_ms() >= until)
			break;
		struct timespec pause = {0, 5 * 1000 * 1000};
		nanosleep(&pause, NULL);
		reap();
	}
	sweeping = false;
	reap();
}

/* ---- the host's frames ---- */

static void command(char op, unsigned long id, char *payload, size_t len)
{
	struct child *c = find(id);
	switch (op) {
	case SESSD_SPAWN:
		spawn(id, payload, len);
		return;
	case SESSD_QUIT:
		kill_all();
		_exit(0);
	}
	if (!c)
		return; /* ended meanwhile: the host has its X */
	switch (op) {
	case SESSD_INPUT:
		give(c, payload, len);
		break;
	case SESSD_CLOSE:
		c->close_in = true;
		feed(c);
		break;
	case SESSD_KILL: {
		char num[16];
		snprintf(num, sizeof num, "%.*s", (int)(len < 15 ? len : 15), payload);
		int sig = atoi(num);
		if (sig > 0 && sig < 65)
			kill(-c->pid, sig);
		/* all of it, also what was being forked (c may end in the sweep) */
		if (sig == SIGKILL)
			sweep(c->pid, 0, 0);
		break;
	}
	case SESSD_MUTE:
		c->mute = true;
		break;
	case SESSD_MARK:
		/* a tick early: a process started in the same tick is the cell's */
		c->mark = uptime_ticks();
		c->mark = c->mark ? c->mark - 1 : 0;
		break;
	case SESSD_SWEEP:
		sweep(c->pid, c->pid, c->mark);
		break;
	default:
		break;
	}
}

/* Runs every whole frame of in_buf; false when the host broke the protocol. */
static bool commands(void)
{
	size_t at = 0;
	for (;;) {
		char *nl = memchr(in_buf + at, '\n', in_len - at);
		if (!nl)
			break;
		char op;
		unsigned long id;
		size_t len;
		int used = 0;
		*nl = 0;
		if (sscanf(in_buf + at, "%c %lu %zu%n", &op, &id, &len, &used) != 3 ||
		    in_buf + at + used != nl || len > SESSD_MAX_FRAME)
			return false;
		size_t head = (size_t)(nl + 1 - (in_buf + at));
		if (in_len - at - head < len) {
			*nl = '\n';
			break;
		}
		command(op, id, nl + 1, len);
		at += head + len;
	}
	memmove(in_buf, in_buf + at, in_len - at);
	in_len -= at;
	if (in_len > SESSD_MAX_HEAD && !memchr(in_buf, '\n', SESSD_MAX_HEAD))
		return false;
	return true;
}

/* Reads the host's frames; false at EOF. */
static bool host_input(void)
{
	if (in_cap - in_len < READ_CHUNK) {
		in_cap = in_cap * 2 + READ_CHUNK;
		in_buf = grow(in_buf, in_cap);
	}
	ssize_t n = read(0, in_buf + in_len, in_cap - in_len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	in_len += (size_t)n;
	if (!commands()) {
		fprintf(stderr, "sessd: malformed frame from the host\n");
		return false;
	}
	return true;
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	/* other processes of the session (same uid) may not open our fds through /proc */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* orphans of a killed group (a fork bomb's children) come to us to be
	 * reaped: a zombie still counts against the session's process limit */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		fprintf(stderr, "sessd: signalfd: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < SESSD_MAX_CHILDREN; i++)
		kids[i].in = kids[i].out = kids[i].err = -1;
	framef(SESSD_READY, 0, "sessd %d", SESSD_VERSION);
	struct pollfd pfd[2 + 3 * SESSD_MAX_CHILDREN];
	struct child *owner[2 + 3 * SESSD_MAX_CHILDREN];
	for (;;) {
		int n = 0;
		pfd[n++] = (struct pollfd){.fd = 0, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = sfd, .events = POLLIN};
		long long next = -1, now = now_ms();
		for (int i = 0; i < SESSD_MAX_CHILDREN; i++) {
			struct child *c = &kids[i];
			if (!c->used)
				continue;
			if (c->deadline_ms && !c->timed_out) {
				if (now >= c->deadline_ms) {
					c->timed_out = true;
					kill(-c->pid, SIGKILL);
				} else if (next < 0 || c->deadline_ms < next) {
					next = c->deadline_ms;
				}
			}
			/* stderr before stdout: what a child wrote there first is sent first */
			if (c->err >= 0)
				owner[n] = c,
				pfd[n++] = (struct pollfd){.fd = c->err, .events = POLLIN};
			if (c->out >= 0)
				owner[n] = c,
				pfd[n++] = (struct pollfd){.fd = c->out, .events = POLLIN};
			if (c->in >= 0 && c->len > c->off)
				owner[n] = c,
				pfd[n++] = (struct pollfd){.fd = c->in, .events = POLLOUT};
		}
		int timeout = next < 0 ? -1 : (int)(next - now + 1);
		if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR) {
			fprintf(stderr, "sessd: poll: %s\n", strerror(errno));
			break;
		}
		for (int i = 2; i < n; i++) {
			struct child *c = owner[i];
			if (!pfd[i].revents || !c->used)
				continue;
			if (pfd[i].fd == c->err) {
				relay(c, &c->err, SESSD_STDERR);
			} else if (pfd[i].fd == c->out) {
				/* what stderr holds now went out before this stdout */
				if (c->err >= 0)
					relay(c, &c->err, SESSD_STDERR);
				relay(c, &c->out, SESSD_STDOUT);
			} else if (pfd[i].fd == c->in) {
				if (pfd[i].revents & (POLLERR | POLLHUP)) {
					close_fd(&c->in);
					c->off = c->len = 0;
				}
				feed(c);
			}
		}
		if (pfd[1].revents) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof si) > 0)
				;
			reap();
		}
		if (pfd[0].revents && !host_input())
			break;
	}
	kill_all();
	return 0;
}
