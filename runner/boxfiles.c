/* boxfiles: the session folder's file calls (sandbox.h: sandbox_file_put, _get,
 * _list, _remove, _readlink, _symlink, _stat, _move) — the host reading and writing a box that
 * sandboxed code changes at the same time.
 *
 * Every path is resolved with openat2() relative to the box's fd with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS: the kernel
 * refuses "..", absolute paths and any symlink on the way, so a link planted by
 * the code (a race included: the check and the use are one call) never takes
 * the host outside the box. Folders are made one step at a time under the same
 * rules; removal walks with fds (unlinkat on what fstatat saw, never following).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "common/xalloc.h"
#include "runner/backend.h"

#define RESOLVE_SAFE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
#define MAX_DEPTH    64

/* 0 when path is a box-relative path: no leading '/', no empty, "." or ".."
 * part, no NUL (C strings have none), at most PATH_MAX; "" only when allow_root. */
static int check_path(const char *path, bool allow_root)
{
	size_t len = strlen(path);
	if (len >= PATH_MAX || (!len && !allow_root) || path[0] == '/')
		return -EINVAL;
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		if (!n || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		p += n;
		if (*p == '/' && !*++p)
			return -EINVAL; /* a trailing slash */
	}
	return 0;
}

/* openat2 beneath dirfd; a symlink on the way gives -ELOOP. Returns the fd or -errno. */
static int open_beneath(int dirfd, const char *path, int flags, mode_t mode)
{
	struct open_how how = {.flags = (unsigned)flags | O_CLOEXEC, .resolve = RESOLVE_SAFE};
	if (flags & O_CREAT)
		how.mode = mode;
	int fd;
	do
		fd = (int)syscall(SYS_openat2, dirfd, *path ? path : ".", &how, sizeof how);
	while (fd < 0 && errno == EAGAIN);
	if (fd < 0 && errno == EXDEV)
		return -ELOOP; /* a ".." or absolute link: it escapes, so it is a link */
	return fd < 0 ? -errno : fd;
}

/* Opens path (checked with check_path) beneath the box. Returns the fd or -errno. */
static int open_in_box(struct sandbox *sb, const char *path, bool allow_root, int flags)
{
	int rc = check_path(path, allow_root);
	return rc < 0 ? rc : open_beneath(sb->box_fd, path, flags, 0);
}

/* Checks path (not the root) with check_path, opens the folder holding its last
 * part (making folders when create), and points *last at that part. Returns
 * the folder's fd or -errno. */
static int open_parent(struct sandbox *sb, const char *path, bool create, const char **last)
{
	int rc = check_path(path, false);
	if (rc < 0)
		return rc;
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", path);
	char *slash = strrchr(buf, '/');
	*last = path + (slash ? slash - buf + 1 : 0);
	if (!slash)
		return open_beneath(sb->box_fd, "", O_PATH | O_DIRECTORY, 0);
	*slash = 0;
	int fd = open_beneath(sb->box_fd, buf, O_PATH | O_DIRECTORY, 0);
	if (fd != -ENOENT || !create)
		return fd;
	/* make the folders one part at a time, each resolved under the same rules */
	int dir = open_beneath(sb->box_fd, "", O_PATH | O_DIRECTORY, 0);
	for (char *part = buf; dir >= 0 && part;) {
		char *next = strchr(part, '/');
		if (next)
			*next++ = 0;
		if (mkdirat(dir, part, 0755) == 0) {
			/* the box's owner may write in it, as in the folders it makes */
			if (fchownat(dir, part, sb->host_uid, sb->host_gid, AT_SYMLINK_NOFOLLOW) <
			    0)
				log_warn("box: cannot chown '%s': %s", part, strerror(errno));
		} else if (errno != EEXIST) {
			int e = -errno;
			close(dir);
			return e;
		}
		int sub = open_beneath(dir, part, O_PATH | O_DIRECTORY, 0);
		close(dir);
		dir = sub;
		part = next;
	}
	return dir;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EDQUOT ? -ENOSPC : -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int sandbox_file_mkdir(struct sandbox *sb, const char *path)
{
	const char *last;
	int dir = open_parent(sb, path, true, &last);
	if (dir < 0)
		return dir;
	int rc = 0;
	if (mkdirat(dir, last, 0755) == 0) {
		if (fchownat(dir, last, sb->host_uid, sb->host_gid, AT_SYMLINK_NOFOLLOW) < 0)
			rc = -errno;
	} else if (errno != EEXIST) {
		rc = -errno;
	}
	if (rc == 0) {
		/* what stands there must be a folder, reached without a link */
		int fd = open_beneath(dir, last, O_PATH | O_DIRECTORY, 0);
		rc = fd < 0 ? fd : 0;
		if (fd >= 0)
			close(fd);
	}
	close(dir);
	sb->box_changes++;
	return rc;
}

int sandbox_file_put(struct sandbox *sb, const char *path, const void *data, size_t len)
{
	const char *last;
	int dir = open_parent(sb, path, true, &last);
	if (dir < 0)
		return dir;
	/* a new file beside the old one, renamed over it: readers see old or new */
	char tmp[64];
	snprintf(tmp, sizeof tmp, BOXFILES_PUT_PREFIX "%d-%lu", (int)getpid(), sb->serial);
	int fd = open_beneath(dir, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		close(dir);
		return fd;
	}
	int rc = fchown(fd, sb->host_uid, sb->host_gid) < 0 ? -errno : 0;
	if (rc == 0)
		rc = fchmod(fd, 0644) < 0 ? -errno : 0;
	if (rc == 0)
		rc = write_all(fd, data, len);
	close(fd);
	struct stat st;
	if (rc == 0 && fstatat(dir, last, &st, AT_SYMLINK_NOFOLLOW) == 0)
		rc = S_ISDIR(st.st_mode) ? -EISDIR : S_ISLNK(st.st_mode) ? -ELOOP : 0;
	if (rc == 0 && renameat(dir, tmp, dir, last) < 0)
		rc = -errno;
	if (rc < 0)
		unlinkat(dir, tmp, 0);
	close(dir);
	sb->box_changes++;
	return rc;
}

int sandbox_file_get(struct sandbox *sb, const char *path, struct strbuf *out, size_t max)
{
	int rc;
	int fd = open_in_box(sb, path, false, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}
	if ((size_t)st.st_size > max) {
		rc = -EFBIG;
		goto out;
	}
	strbuf_reset(out);
	char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (!n)
			break;
		if (out->len + (size_t)n > max) {
			rc = -EFBIG; /* it grew while we read */
			goto out;
		}
		strbuf_add(out, buf, (size_t)n);
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

int sandbox_file_readlink(struct sandbox *sb, const char *path, struct strbuf *out)
{
	const char *last;
	int dir = open_parent(sb, path, false, &last);
	if (dir < 0)
		return dir;
	char buf[PATH_MAX];
	ssize_t n = readlinkat(dir, last, buf, sizeof buf);
	int rc = n < 0 ? -errno : n == (ssize_t)sizeof buf ? -ENAMETOOLONG : 0;
	close(dir);
	if (rc == 0) {
		strbuf_reset(out);
		strbuf_add(out, buf, (size_t)n);
	}
	return rc;
}

int sandbox_file_symlink(struct sandbox *sb, const char *path, const char *target)
{
	if (!*target || strlen(target) >= PATH_MAX)
		return -EINVAL;
	const char *last;
	int dir = open_parent(sb, path, true, &last);
	if (dir < 0)
		return dir;
	/* the link is the box's own: its owner may replace it, as the code's links */
	int rc = symlinkat(target, dir, last) < 0 ? -errno : 0;
	if (rc == 0 && fchownat(dir, last, sb->host_uid, sb->host_gid, AT_SYMLINK_NOFOLLOW) < 0)
		rc = -errno;
	close(dir);
	sb->box_changes++;
	return rc;
}

static int cmp_dirent(const void *a, const void *b)
{
	return strcmp(((const struct sandbox_dirent *)a)->name,
		      ((const struct sandbox_dirent *)b)->name);
}

/* The entry of st named name into de. */
static void dirent_of(const char *name, const struct stat *st, struct sandbox_dirent *de)
{
	snprintf(de->name, sizeof de->name, "%s", name);
	de->type = S_ISREG(st->st_mode)	  ? 'f'
		   : S_ISDIR(st->st_mode) ? 'd'
		   : S_ISLNK(st->st_mode) ? 'l'
					  : 'o';
	de->size = st->st_size;
	de->mtime = st->st_mtime;
	de->mtime_ns = st->st_mtim.tv_nsec;
	de->ino = st->st_ino;
	de->mode = (int)(st->st_mode & 07777);
}

int sandbox_file_stat(struct sandbox *sb, const char *path, struct sandbox_dirent *out)
{
	struct stat st;
	if (!*path) {
		if (fstat(sb->box_fd, &st) < 0)
			return -errno;
		dirent_of("", &st, out);
		return 0;
	}
	const char *last;
	int dir = open_parent(sb, path, false, &last);
	if (dir < 0)
		return dir;
	int rc = fstatat(dir, last, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	close(dir);
	if (rc == 0)
		dirent_of(last, &st, out);
	return rc;
}

int sandbox_file_move(struct sandbox *sb, const char *from, const char *to)
{
	const char *a, *b;
	int src = open_parent(sb, from, false, &a);
	if (src < 0)
		return src;
	int dst = open_parent(sb, to, true, &b);
	if (dst < 0) {
		close(src);
		return dst;
	}
	/* the link itself moves, never what it points to */
	int rc = renameat(src, a, dst, b) < 0 ? -errno : 0;
	close(src);
	close(dst);
	sb->box_changes++;
	return rc;
}

int sandbox_file_list(struct sandbox *sb, const char *dir, struct sandbox_dirent **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	int fd = open_in_box(sb, dir, true, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	struct sandbox_dirent *v = NULL;
	size_t count = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* removed meanwhile */
		if (count == cap) {
			cap = cap ? cap * 2 : 32;
			v = xreallocarray(v, cap, sizeof *v);
		}
		dirent_of(e->d_name, &st, &v[count++]);
	}
	closedir(d);
	if (count)
		qsort(v, count, sizeof *v, cmp_dirent);
	*out = v;
	*n = count;
	return 0;
}

/* Empties a regular file name of dir (never following a link, never blocking on
 * a FIFO): the data of a file that another process holds open stays allocated
 * after its unlink, not after this. */
static void truncate_at(int dir, const char *name)
{
	int fd = openat(dir, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		(void)!ftruncate(fd, 0);
	close(fd);
}

/* What walk_children does to each entry of a folder: visit(dir, name, st,
 * false) first; for a folder, when that returned 0, its entries, then
 * visit(..., true). Returns 0 or -errno. */
struct walk {
	int (*visit)(int dir, const char *name, const struct stat *st, bool after, void *arg);
	void *arg;
};

/* Walks the folder fd (which it closes) down to MAX_DEPTH, never following
 * links. What is gone already is no error: a program of the session may
 * change the tree meanwhile. Returns 0, or the first error. */
static int walk_children(int fd, int depth, const struct walk *w)
{
	if (depth > MAX_DEPTH) {
		close(fd);
		return -ELOOP;
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		int r = w->visit(dirfd(d), e->d_name, &st, false, w->arg);
		if (r == 0 && S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), e->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0)
				r = errno == ENOENT ? 0 : -errno;
			else
				r = walk_children(sub, depth + 1, w);
			if (r == 0)
				r = w->visit(dirfd(d), e->d_name, &st, true, w->arg);
		}
		if (r < 0 && r != -ENOENT && !rc)
			rc = r;
	}
	closedir(d);
	return rc;
}

/* remove_children's visit: a folder unlinked after its entries, anything else
 * at once (a regular file emptied first when *arg, the truncate flag). */
static int remove_entry(int dir, const char *name, const struct stat *st, bool after, void *arg)
{
	if (S_ISDIR(st->st_mode))
		return after && unlinkat(dir, name, AT_REMOVEDIR) < 0 ? -errno : 0;
	if (*(const bool *)arg && S_ISREG(st->st_mode))
		truncate_at(dir, name);
	return unlinkat(dir, name, 0) < 0 ? -errno : 0;
}

/* Removes everything in the folder fd (which it closes), never following
 * links; when truncate, empties each regular file first. What is gone
 * already counts as removed: a program of the session may remove or rewrite
 * the tree meanwhile, and then the caller tries again (remove_tree). */
static int remove_children(int fd, bool truncate)
{
	struct walk w = {remove_entry, &truncate};
	return walk_children(fd, 0, &w);
}

/* Whether rc may come from the tree changing under a removal: a folder
 * filled again (ENOTEMPTY), a file turned folder (EISDIR) or the reverse
 * (ENOTDIR, ELOOP for a new link). */
static bool raced(int rc)
{
	return rc == -ENOTEMPTY || rc == -EISDIR || rc == -ENOTDIR || rc == -ELOOP || rc == -EEXIST;
}

/* Removes last (a name in dir) and, when a folder, all it holds; once it was
 * seen, its being gone is success. */
static int remove_tree(int dir, const char *last)
{
	struct stat st;
	if (fstatat(dir, last, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	int rc = 0;
	/* a program that keeps writing there can win a few rounds; past these
	 * the caller gets a conflict (409), never a server error */
	for (int round = 0; round < 8; round++) {
		if (round && fstatat(dir, last, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOENT ? 0 : -errno;
		if (S_ISDIR(st.st_mode)) {
			int sub =
			    openat(dir, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			rc = sub < 0 ? -errno : remove_children(sub, false);
			if (rc == 0 && unlinkat(dir, last, AT_REMOVEDIR) < 0)
				rc = -errno;
		} else {
			rc = unlinkat(dir, last, 0) < 0 ? -errno : 0;
		}
		if (rc == -ENOENT)
			return 0;
		if (!raced(rc))
			return rc;
	}
	return rc == -ENOTDIR || rc == -EISDIR || rc == -ELOOP ? -ENOTEMPTY : rc;
}

int sandbox_file_remove(struct sandbox *sb, const char *path)
{
	const char *last;
	int dir = open_parent(sb, path, false, &last);
	if (dir < 0)
		return dir;
	int rc = remove_tree(dir, last);
	close(dir);
	sb->box_changes++;
	return rc;
}

struct owner_ids {
	uid_t uid;
	gid_t gid;
};

/* chown_children's visit: each entry chowned before a folder's entries. */
static int chown_entry(int dir, const char *name, const struct stat *st, bool after, void *arg)
{
	const struct owner_ids *o = arg;
	(void)st;
	if (after)
		return 0;
	return fchownat(dir, name, o->uid, o->gid, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

/* Chowns everything in the folder fd (which it closes), never following links. */
static int chown_children(int fd, uid_t uid, gid_t gid)
{
	struct owner_ids o = {uid, gid};
	struct walk w = {chown_entry, &o};
	return walk_children(fd, 0, &w);
}

int sandbox_box_adopt_owner(struct sandbox *sb, uid_t uid, gid_t gid)
{
	if (sb->box_fd < 0)
		return -EINVAL;
	int fd = openat(sb->box_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchown(fd, uid, gid) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	int rc = chown_children(fd, uid, gid);
	if (rc == 0) {
		sb->host_uid = uid;
		sb->host_gid = gid;
		sb->box_changes++;
	}
	return rc;
}

int sandbox_box_empty(struct sandbox *sb)
{
	if (sb->box_fd < 0)
		return -EINVAL;
	int fd = openat(sb->box_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	sb->box_changes++;
	return remove_children(fd, true);
}
