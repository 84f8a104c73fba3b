/* owner: this process's folder of host resources, locked while it lives, and the reclaim of dead
 * owners' (owner.h). */
#define _GNU_SOURCE
#include "runner/owner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "runner/cg.h"

#define OWNERS_DIR   "owners"
#define CGROUPS_FILE "cgroups"
/* A ".<id>" folder this old whose lock is free was left by a process that
 * died while making it. */
#define MAKING_STALE_S 60

static struct {
	pthread_mutex_t lock;
	pid_t pid; /* the process the owner belongs to (a fork child has none) */
	int fd;	   /* the folder, flock'ed */
	char id[32];
	char dir[PATH_MAX];
	struct strbuf noted; /* cgroup parents written to CGROUPS_FILE, one a line */
} own = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .noted = STRBUF_INIT};

static bool mine(void)
{
	return own.fd >= 0 && own.pid == getpid();
}

const char *owner_id(void)
{
	return mine() ? own.id : NULL;
}

const char *owner_dir(void)
{
	return mine() ? own.dir : NULL;
}

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return -ENAMETOOLONG;
	for (char *s = strchr(buf + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Opens dir (no symlink followed) and takes its lock without waiting: the fd,
 * -EWOULDBLOCK when a live process holds it, or another -errno. */
static int lock_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int owner_open(const char *box_root, char *err, size_t errlen)
{
	int ret = -1;
	pthread_mutex_lock(&own.lock);
	if (mine()) {
		ret = 0;
		goto out;
	}
	/* a fork child keeps its parent's fd (and so the lock, which is fine): it is
	 * not the parent's to use or remove */
	own.fd = -1;
	own.pid = 0;
	strbuf_reset(&own.noted);
	char owners[PATH_MAX - 64], making[PATH_MAX];
	if (snprintf(owners, sizeof owners, "%s/" OWNERS_DIR, box_root) >= (int)sizeof owners) {
		snprintf(err, errlen, "box_root '%s' is too long", box_root);
		goto out;
	}
	int rc = mkdir_p(owners, 0755);
	if (rc < 0) {
		snprintf(err, errlen, "cannot create '%s': %s", owners, strerror(-rc));
		goto out;
	}
	for (int tries = 0; tries < 8; tries++) {
		unsigned int r = 0;
		if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
			r = (unsigned int)time(NULL) ^ ((unsigned int)getpid() << 16) ^
			    (unsigned int)tries;
		snprintf(own.id, sizeof own.id, "o%dx%08x", (int)getpid(), r);
		/* made under a hidden name and locked before it takes its real name:
		 * a reclaimer never sees it unlocked */
		snprintf(making, sizeof making, "%s/.%s", owners, own.id);
		if (snprintf(own.dir, sizeof own.dir, "%s/%s", owners, own.id) >=
		    (int)sizeof own.dir - 64) {
			snprintf(err, errlen, "box_root '%s' is too long", box_root);
			goto out;
		}
		if (mkdir(making, 0755) < 0) {
			if (errno == EEXIST)
				continue;
			snprintf(err, errlen, "cannot create '%s': %s", making, strerror(errno));
			goto out;
		}
		int fd = lock_dir(making);
		if (fd < 0) {
			snprintf(err, errlen, "cannot lock '%s': %s", making, strerror(-fd));
			rmdir(making);
			goto out;
		}
		if (renameat2(AT_FDCWD, making, AT_FDCWD, own.dir, RENAME_NOREPLACE) < 0) {
			int e = errno;
			close(fd);
			rmdir(making);
			if (e == EEXIST)
				continue;
			snprintf(err, errlen, "cannot rename '%s': %s", making, strerror(e));
			goto out;
		}
		own.fd = fd;
		own.pid = getpid();
		ret = 0;
		goto out;
	}
	snprintf(err, errlen, "cannot make an owner folder under '%s'", owners);
out:
	pthread_mutex_unlock(&own.lock);
	return ret;
}

int owner_note_cgroup_parent(const char *parent)
{
	int ret = 0;
	pthread_mutex_lock(&own.lock);
	if (!mine()) {
		ret = -EINVAL;
		goto out;
	}
	struct strbuf line = STRBUF_INIT;
	strbuf_addf(&line, "%s\n", parent);
	/* already noted? (whole lines only) */
	for (const char *p = own.noted.buf; p && *p; p = strchr(p, '\n') + 1)
		if (!strncmp(p, line.buf, line.len)) {
			strbuf_release(&line);
			goto out;
		}
	int fd = openat(own.fd, CGROUPS_FILE,
			O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || write(fd, line.buf, line.len) != (ssize_t)line.len)
		ret = -errno;
	else
		strbuf_add(&own.noted, line.buf, line.len);
	if (fd >= 0)
		close(fd);
	strbuf_release(&line);
out:
	pthread_mutex_unlock(&own.lock);
	return ret;
}

/* ---- reclaim ---- */

/* SIGKILLs every process (but this one) with the argument arg: runsc calls in
 * flight (`runsc run` before its sandbox is in a cgroup) name their owner's
 * --root. Returns how many. */
static int kill_by_arg(const char *arg)
{
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	int n = 0;
	size_t alen = strlen(arg);
	char *buf = xmalloc(32768);
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end, path[64];
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == (long)getpid())
			continue;
		snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t len = read(fd, buf, 32767);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = 0;
		for (ssize_t off = 0; off < len; off += (ssize_t)strlen(buf + off) + 1)
			if (strlen(buf + off) == alen && !memcmp(buf + off, arg, alen)) {
				if (kill((pid_t)pid, SIGKILL) == 0)
					n++;
				break;
			}
	}
	free(buf);
	closedir(d);
	return n;
}

/* Decodes mountinfo's octal escapes (\040 for a space ...) in place. */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
}

static int by_length_desc(const void *a, const void *b)
{
	size_t la = strlen(*(char *const *)a), lb = strlen(*(char *const *)b);
	return la < lb ? 1 : la > lb ? -1 : 0;
}

/* Unmounts every mount at or below dir, deepest first, until none is left or
 * nothing more comes off. Returns how many came off. */
static int umount_all_below(const char *dir)
{
	size_t dl = strlen(dir);
	int total = 0;
	for (int round = 0; round < 16; round++) {
		FILE *f = fopen("/proc/self/mountinfo", "re");
		if (!f)
			break;
		char line[8192];
		char **mps = NULL;
		size_t n = 0, cap = 0;
		while (fgets(line, sizeof line, f)) {
			char mp[PATH_MAX];
			if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1)
				continue;
			unescape(mp);
			if (strncmp(mp, dir, dl) || (mp[dl] && mp[dl] != '/'))
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				mps = xreallocarray(mps, cap, sizeof *mps);
			}
			mps[n++] = xstrdup(mp);
		}
		fclose(f);
		if (n) /* qsort takes no NULL, even for nothing */
			qsort(mps, n, sizeof *mps, by_length_desc);
		int off = 0;
		for (size_t i = 0; i < n; i++) {
			if (umount2(mps[i], MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
				off++;
			free(mps[i]);
		}
		free(mps);
		total += off;
		if (!n || !off)
			break;
	}
	return total;
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

/* The cgroup parents noted in dir's CGROUPS_FILE, one a line (caller frees). */
static void read_parents(const char *dir, struct strbuf *out)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/" CGROUPS_FILE, dir);
	if (strbuf_read_file(out, path, 1 << 20) < 0)
		strbuf_reset(out);
}

/* Reclaims what owner id holds in dir: its runsc processes, the processes of
 * its cgroups, its mounts, its cgroups, its files; the folder itself too
 * unless keep. */
static void reclaim(const char *dir, const char *id, bool keep, struct owner_counts *c)
{
	char arg[PATH_MAX + 16];
	snprintf(arg, sizeof arg, "--root=%s/runsc", dir);
	c->processes += kill_by_arg(arg);
	struct strbuf parents = STRBUF_INIT;
	read_parents(dir, &parents);
	/* every process first, in every cgroup: they die while we unmount */
	for (char *p = parents.buf; p && *p;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		cg_owner_kill(p, id);
		if (nl)
			*nl = '\n';
		p = nl ? nl + 1 : p + strlen(p);
	}
	c->mounts += umount_all_below(dir);
	for (char *p = parents.buf; p && *p;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		int n = cg_owner_remove(p, id);
		if (n > 0)
			c->cgroups += n;
		p = nl ? nl + 1 : p + strlen(p);
	}
	strbuf_release(&parents);
	if (keep) {
		/* the contents, not the folder: its cgroups file stays, for a reclaim
		 * after this one */
		DIR *d = opendir(dir);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			char path[PATH_MAX];
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
			    !strcmp(e->d_name, CGROUPS_FILE) ||
			    snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >=
				(int)sizeof path)
				continue;
			/* FTW_MOUNT: never into a mount that would not come off */
			nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
		}
		if (d)
			closedir(d);
		return;
	}
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	if (rmdir(dir) < 0 && errno != ENOENT)
		log_warn("sandbox: cannot remove '%s': %s", dir, strerror(errno));
}

int owner_reclaim_dead(const char *box_root)
{
	char owners[PATH_MAX];
	if (snprintf(owners, sizeof owners, "%s/" OWNERS_DIR, box_root) >= (int)sizeof owners)
		return 0;
	DIR *d = opendir(owners);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *name = e->d_name;
		bool making = name[0] == '.';
		const char *id = making ? name + 1 : name;
		char dir[PATH_MAX];
		if (!*id || !strcmp(name, "..") ||
		    snprintf(dir, sizeof dir, "%s/%s", owners, name) >= (int)sizeof dir - 64)
			continue;
		if (mine() && !strcmp(id, own.id))
			continue;
		struct stat st;
		if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (making && time(NULL) - st.st_mtime < MAKING_STALE_S)
			continue; /* being made right now, perhaps */
		int fd = lock_dir(dir);
		if (fd < 0)
			continue; /* alive (or gone meanwhile) */
		struct owner_counts c = {0};
		reclaim(dir, id, false, &c);
		close(fd);
		log_info("sandbox: reclaimed what dead owner %s left: %d cgroups, %d mounts, "
			 "%d processes",
			 id, c.cgroups, c.mounts, c.processes);
		n++;
	}
	closedir(d);
	return n;
}

void owner_reclaim_self(struct owner_counts *c)
{
	struct owner_counts mine_c = {0};
	if (!mine())
		return;
	reclaim(own.dir, own.id, true, &mine_c);
	if (c) {
		c->processes += mine_c.processes;
		c->cgroups += mine_c.cgroups;
		c->mounts += mine_c.mounts;
	}
}

int owner_close(void)
{
	pthread_mutex_lock(&own.lock);
	if (!mine()) {
		pthread_mutex_unlock(&own.lock);
		return 0;
	}
	struct owner_counts c = {0};
	reclaim(own.dir, own.id, false, &c);
	close(own.fd);
	own.fd = -1;
	own.pid = 0;
	strbuf_reset(&own.noted);
	pthread_mutex_unlock(&own.lock);
	int left = c.cgroups + c.mounts + c.processes;
	if (left)
		log_warn("sandbox: %d cgroups, %d mounts and %d processes were left at the end; "
			 "removed",
			 c.cgroups, c.mounts, c.processes);
	return left;
}
