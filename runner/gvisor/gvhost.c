/* gvhost: host-side plumbing of the gVisor backend (gvisor.c) — processes, files,
 * mounts and the cgroups runsc makes for a container, and the sweep of what dead
 * owners left. Nothing here knows about pools or runs. */
#define _GNU_SOURCE
#include "runner/gvisor/gvhost.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/strbuf.h"

extern char **environ;

void gvhost_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

int gvhost_write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, s, strlen(s));
	int ret = n < 0 ? -errno : 0;
	close(fd);
	return ret;
}

int gvhost_write_file(const char *path, const void *data, size_t len, int mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return -errno;
	const char *p = data;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			close(fd);
			return -e;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fchmod(fd, (mode_t)mode) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return close(fd) < 0 ? -errno : 0;
}

int gvhost_copy_file(const char *from, const char *to, int mode)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	int r = gvhost_write_file(to, NULL, 0, mode);
	int out = r < 0 ? -1 : open(to, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (r == 0 && out < 0)
		r = -errno;
	char buf[65536];
	while (r == 0) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		for (ssize_t off = 0; off < n && r == 0;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w > 0)
				off += w;
			else if (!(w < 0 && errno == EINTR))
				r = w < 0 ? -errno : -EIO;
		}
	}
	close(in);
	if (out >= 0 && close(out) < 0 && r == 0)
		r = -errno;
	return r;
}

int gvhost_mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* Removes a tree we built; FTW_MOUNT keeps it from entering anything mounted in it. */
void gvhost_rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

bool gvhost_pid_alive(long pid)
{
	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* The owner pid of "jgv-<pid>-<n>" names, or -1. */
long gvhost_owner_pid(const char *name)
{
	if (strncmp(name, GVHOST_ID_PREFIX, strlen(GVHOST_ID_PREFIX)))
		return -1;
	char *end;
	long pid = strtol(name + strlen(GVHOST_ID_PREFIX), &end, 10);
	return *end == '-' ? pid : -1;
}

/* Spawns argv with the given stdio (-1 = /dev/null). posix_spawn is safe in a
 * threaded process; every fd of ours is O_CLOEXEC, so the child gets only these. */
static int spawn(const char *const *argv, int in, int out, int err, bool group, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	int fds[3] = {in, out, err};
	for (int i = 0; i < 3; i++) {
		if (fds[i] >= 0)
			posix_spawn_file_actions_adddup2(&fa, fds[i], i);
		else
			posix_spawn_file_actions_addopen(&fa, i, "/dev/null",
							 i ? O_WRONLY : O_RDONLY, 0);
	}
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
					  (group ? POSIX_SPAWN_SETPGROUP : 0));
	int r = posix_spawnp(pid, argv[0], &fa, &at, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return -r;
}

int gvhost_spawn(const char *const *argv, int in, int out, int err, pid_t *pid)
{
	return spawn(argv, in, out, err, false, pid);
}

int gvhost_spawn_group(const char *const *argv, int in, int out, int err, pid_t *pid)
{
	return spawn(argv, in, out, err, true, pid);
}

int gvhost_wait_exit_ms(pid_t pid, int timeout_ms)
{
	int64_t deadline = clock_mono_us() + (int64_t)timeout_ms * 1000;
	for (int nap_us = 1000;; nap_us = nap_us < 20000 ? nap_us * 2 : 20000) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (r < 0 && errno == ECHILD)
			return 0; /* SIGCHLD ignored: as in gvhost_wait_exit */
		if (r < 0 && errno != EINTR)
			return -1;
		int64_t left = deadline - clock_mono_us();
		if (left <= 0) {
			/* the whole process group: runsc and whatever it forked that stayed in it
			 */
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			/* SIGKILL'd: it goes at once (bounded anyway: a process stuck in the
			 * kernel is left to the reapers) */
			for (int i = 0; i < 200 && waitpid(pid, &st, WNOHANG) == 0; i++)
				usleep(5000);
			return GVHOST_WAIT_TIMEOUT;
		}
		usleep((useconds_t)(left < nap_us ? left : nap_us));
	}
}

int gvhost_wait_exit(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno == ECHILD)
			return 0; /* SIGCHLD ignored by the process: the status is lost, and
				   * the callers check the outcome another way */
		if (errno != EINTR)
			return -1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Unmounts every mount at or below dir (deepest first). */
void gvhost_umount_below(const char *dir)
{
	for (int round = 0; round < 8; round++) {
		FILE *f = fopen("/proc/self/mountinfo", "re");
		if (!f)
			return;
		char line[4096], mp[PATH_MAX], best[PATH_MAX] = "";
		size_t dl = strlen(dir);
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1)
				continue;
			if (strncmp(mp, dir, dl) || (mp[dl] && mp[dl] != '/'))
				continue;
			if (strlen(mp) > strlen(best))
				gvhost_fmt(best, sizeof(best), "%s", mp);
		}
		fclose(f);
		if (!best[0])
			return;
		if (umount2(best, MNT_DETACH) < 0)
			return;
	}
}

bool gvhost_find_program(const char *r, char *why, size_t whylen)
{
	if (strchr(r, '/')) {
		if (access(r, X_OK) == 0)
			return true;
		gvhost_fmt(why, whylen, "'%s' is not executable", r);
		return false;
	}
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		gvhost_fmt(buf, sizeof(buf), "%.*s/%s", (int)n, p, r);
		if (access(buf, X_OK) == 0)
			return true;
		p += n + (p[n] == ':');
	}
	gvhost_fmt(why, whylen, "%s not found in PATH", r);
	return false;
}

/* Reaps zombie children that runsc orphaned to us (its short-lived re-executions of
 * itself, named "exe" or "runsc*"); other children (the native backend's) are left
 * alone, whatever their state. */
void gvhost_reap_orphans(void)
{
	DIR *d = opendir("/proc");
	if (!d)
		return;
	struct dirent *e;
	pid_t self = getpid();
	while ((e = readdir(d))) {
		char path[64], buf[512];
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		gvhost_fmt(path, sizeof(path), "/proc/%ld/stat", pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		char *open_p = strchr(buf, '('), *close_p = strrchr(buf, ')');
		char state = 0;
		long ppid = 0;
		if (!open_p || !close_p || sscanf(close_p + 1, " %c %ld", &state, &ppid) != 2)
			continue;
		*close_p = 0;
		const char *comm = open_p + 1;
		if (state == 'Z' && ppid == self &&
		    (!strcmp(comm, "exe") || !strncmp(comm, "runsc", 5)))
			waitpid((pid_t)pid, NULL, WNOHANG | __WALL);
	}
	closedir(d);
}
