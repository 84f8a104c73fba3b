/* package: a problem package's files as a checked tree, from a zip or a folder (see package.h). */
#define _GNU_SOURCE
#include "judge/grading/package.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "common/zipfiles.h"

#define SEGMENT_MAX 255

bool package_path_valid(const char *path, char *why, size_t whylen)
{
	size_t n = strlen(path);
	if (n == 0 || n > PACKAGE_PATH_MAX) {
		snprintf(why, whylen, "a name must have 1 to %d bytes", PACKAGE_PATH_MAX);
		return false;
	}
	if (!utf8_valid_text(path, n)) {
		snprintf(why, whylen, "a name must be UTF-8 text");
		return false;
	}
	for (const unsigned char *c = (const unsigned char *)path; *c; c++)
		if (*c < 0x20 || *c == 0x7f) {
			snprintf(why, whylen, "a name may not hold a control character");
			return false;
		}
	if (path[0] == '/') {
		snprintf(why, whylen, "an absolute path is not allowed");
		return false;
	}
	for (const char *s = path;;) {
		size_t len = strcspn(s, "/");
		if (len == 0 || len > SEGMENT_MAX) {
			snprintf(why, whylen, "each part of a path must have 1 to %d bytes",
				 SEGMENT_MAX);
			return false;
		}
		if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.')) {
			snprintf(why, whylen, "'.' and '..' are not allowed in a path");
			return false;
		}
		if (!s[len])
			break;
		s += len + 1;
	}
	return true;
}

/* Names that are not part of the package: a segment starting with '.', and a
 * zip's __MACOSX/ folder (macOS's resource forks). */
static bool ignored(const char *path)
{
	if (!strncmp(path, "__MACOSX/", 9))
		return true;
	for (const char *s = path; s; s = strchr(s, '/')) {
		if (*s == '/')
			s++;
		if (*s == '.')
			return true;
	}
	return false;
}

static int cmp_files(const void *a, const void *b)
{
	return strcmp(((const struct package_file *)a)->path,
		      ((const struct package_file *)b)->path);
}

void package_hash(const struct package_file *files, int n, char hash[65])
{
	struct sha256 s;
	sha256_init(&s);
	for (int i = 0; i < n; i++) {
		char line[128];
		int len = snprintf(line, sizeof line, "%s %lld ", files[i].hash,
				   (long long)files[i].size);
		sha256_update(&s, line, (size_t)len);
		sha256_update(&s, files[i].path, strlen(files[i].path));
		sha256_update(&s, "\n", 1);
	}
	unsigned char d[32];
	sha256_final(&s, d);
	sha256_hex(d, hash);
}

void package_files_free(struct package_file *files, int n)
{
	for (int i = 0; files && i < n; i++)
		free(files[i].path);
	free(files);
}

int package_rmtree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) < 0 ? -errno : 0;
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	int ret = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *sub = xasprintf("%s/%s", path, e->d_name);
		int rc = package_rmtree(sub);
		if (rc < 0 && !ret)
			ret = rc;
		free(sub);
	}
	closedir(d);
	if (rmdir(path) < 0 && !ret)
		ret = -errno;
	return ret;
}

void package_release(struct package *pk)
{
	if (!pk)
		return;
	if (pk->tmp)
		package_rmtree(pk->tmp);
	free(pk->tmp);
	free(pk->dir);
	package_files_free(pk->files, pk->nfiles);
	memset(pk, 0, sizeof *pk);
}

static void add_file(struct package *pk, int *cap, const char *path, const char *hash, int64_t size)
{
	if (pk->nfiles == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		pk->files = xreallocarray(pk->files, (size_t)*cap, sizeof *pk->files);
	}
	struct package_file *f = &pk->files[pk->nfiles++];
	f->path = xstrdup(path);
	snprintf(f->hash, sizeof f->hash, "%s", hash);
	f->size = size;
	pk->bytes += size;
}

/* Sorts the files and computes the hash. (A name given twice, or a file and
 * a folder of one name, cannot reach here: the file system refused them.) */
static int finish(struct package *pk, char *err, size_t errlen)
{
	if (pk->nfiles == 0) {
		snprintf(err, errlen, "the package holds no files");
		return -1;
	}
	qsort(pk->files, (size_t)pk->nfiles, sizeof *pk->files, cmp_files);
	package_hash(pk->files, pk->nfiles, pk->hash);
	return 0;
}

/* ---- from a zip ---- */

struct unzip {
	struct package *pk;
	int cap;
	int dirfd; /* the temporary folder */
};

/* Creates the folders of path's parents under dirfd (never through a link).
 * Returns an fd of the parent (close it) and sets *base to the last segment,
 * or -1 with err. */
static int open_parent(int dirfd, const char *path, const char **base, char *err, size_t errlen)
{
	int fd = dup(dirfd);
	const char *s = path;
	for (;;) {
		size_t len = strcspn(s, "/");
		if (!s[len]) {
			*base = s;
			return fd;
		}
		char seg[SEGMENT_MAX + 1];
		memcpy(seg, s, len);
		seg[len] = 0;
		if (mkdirat(fd, seg, 0755) < 0 && errno != EEXIST) {
			snprintf(err, errlen, "cannot create the folder of '%s': %s", path,
				 strerror(errno));
			close(fd);
			return -1;
		}
		int next = openat(fd, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0) {
			snprintf(err, errlen, "'%.*s' of '%s' is both a file and a folder",
				 (int)(s - path + (long)len), path, path);
			return -1;
		}
		fd = next;
		s += len + 1;
	}
}

int package_create_file(int dirfd, const char *path, char *err, size_t errlen)
{
	char why[160];
	if (!package_path_valid(path, why, sizeof why)) {
		snprintf(err, errlen, "'%.200s': %s", path, why);
		return -1;
	}
	const char *base;
	int pfd = open_parent(dirfd, path, &base, err, errlen);
	if (pfd < 0)
		return -1;
	int fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	int e = errno;
	close(pfd);
	if (fd < 0) {
		if (e == EEXIST)
			snprintf(err, errlen, "'%s' is in the package twice (or also a folder)",
				 path);
		else
			snprintf(err, errlen, "cannot write '%s': %s", path, strerror(e));
		return -1;
	}
	return fd;
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t w = write(fd, data, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		data += w;
		len -= (size_t)w;
	}
	return 0;
}

static int unzip_file(void *arg, const char *name, const char *data, size_t len, char *err,
		      size_t errlen)
{
	struct unzip *u = arg;
	char why[160];
	if (!package_path_valid(name, why, sizeof why)) {
		snprintf(err, errlen, "'%.200s' in the zip: %s", name, why);
		return -1;
	}
	if (ignored(name))
		return 0;
	int fd = package_create_file(u->dirfd, name, err, errlen);
	if (fd < 0)
		return -1;
	int rc = write_all(fd, data, len);
	int e = errno;
	if (close(fd) < 0 && rc == 0) {
		rc = -1;
		e = errno;
	}
	if (rc < 0) {
		snprintf(err, errlen, "cannot write '%s': %s", name, strerror(e));
		return -1;
	}
	unsigned char d[32];
	char hex[65];
	sha256_buf(data, len, d);
	sha256_hex(d, hex);
	add_file(u->pk, &u->cap, name, hex, (int64_t)len);
	return 0;
}

/* Where problem.yaml is: "" (the top) or the one top-level folder's name
 * (malloc'd in *prefix). Returns 0 or -1 with err. */
static int find_root(const struct package *pk, char **prefix, char *err, size_t errlen)
{
	*prefix = NULL;
	const char *top = NULL;
	size_t toplen = 0;
	bool one_top = true, yaml_top = false, yaml_in = false;
	for (int i = 0; i < pk->nfiles; i++) {
		const char *p = pk->files[i].path;
		if (!strcmp(p, "problem.yaml"))
			yaml_top = true;
		size_t n = strcspn(p, "/");
		if (!p[n]) {
			one_top = false;
			continue;
		}
		if (!top) {
			top = p;
			toplen = n;
		} else if (n != toplen || strncmp(p, top, n)) {
			one_top = false;
		}
		if (!strcmp(p + n, "/problem.yaml"))
			yaml_in = true;
	}
	if (yaml_top)
		return 0;
	if (one_top && top && yaml_in) {
		*prefix = xstrndup(top, toplen);
		return 0;
	}
	snprintf(err, errlen,
		 "no problem.yaml at the top of the zip, nor in its one top-level folder");
	return -1;
}

int package_from_zip(struct package *pk, const void *zip, size_t len, const char *tmp_root,
		     const struct package_caps *caps, char *err, size_t errlen)
{
	memset(pk, 0, sizeof *pk);
	struct unzip u = {.pk = pk, .dirfd = -1};
	char *prefix = NULL;
	int ret = -1;
	pk->tmp = xasprintf("%s/judge-package-XXXXXX", tmp_root);
	if (!mkdtemp(pk->tmp)) {
		snprintf(err, errlen, "cannot create a folder under '%s': %s", tmp_root,
			 strerror(errno));
		free(pk->tmp);
		pk->tmp = NULL;
		goto out;
	}
	u.dirfd = open(pk->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (u.dirfd < 0) {
		snprintf(err, errlen, "cannot open '%s': %s", pk->tmp, strerror(errno));
		goto out;
	}
	if (zipfiles_read(zip, len, caps->max_files, (size_t)caps->max_bytes, unzip_file, &u, err,
			  errlen) < 0)
		goto out;
	if (pk->nfiles == 0) {
		snprintf(err, errlen, "the zip holds no files");
		goto out;
	}
	if (find_root(pk, &prefix, err, errlen) < 0)
		goto out;
	if (prefix) {
		/* the one top-level folder is the package: its files only */
		size_t pl = strlen(prefix);
		for (int i = 0; i < pk->nfiles; i++) {
			char *p = pk->files[i].path;
			memmove(p, p + pl + 1, strlen(p + pl + 1) + 1);
		}
		pk->dir = xasprintf("%s/%s", pk->tmp, prefix);
	} else {
		pk->dir = xstrdup(pk->tmp);
	}
	ret = finish(pk, err, errlen);
out:
	if (u.dirfd >= 0)
		close(u.dirfd);
	free(prefix);
	if (ret < 0)
		package_release(pk);
	return ret;
}

/* ---- from a folder ---- */

struct walk {
	struct package *pk;
	const struct package_caps *caps;
	int cap;
	char *err;
	size_t errlen;
};

/* Hashes the regular file fd (size bytes). Returns 0 or -errno. */
static int hash_fd(int fd, int64_t size, char hex[65])
{
	struct sha256 s;
	sha256_init(&s);
	char buf[65536];
	int64_t left = size;
	while (left > 0) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* shrank while read */
		sha256_update(&s, buf, (size_t)n);
		left -= n;
	}
	unsigned char d[32];
	sha256_final(&s, d);
	sha256_hex(d, hex);
	return 0;
}

/* Adds the files under the folder fd (rel: its path in the package, "" at
 * the top); fd is closed. */
static int walk_dir(struct walk *w, int fd, const char *rel)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		snprintf(w->err, w->errlen, "cannot list '%s': %s", *rel ? rel : ".",
			 strerror(errno));
		close(fd);
		return -1;
	}
	int ret = -1;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue; /* ".", "..", and names left out (package.h) */
		char *path = *rel ? xasprintf("%s/%s", rel, e->d_name) : xstrdup(e->d_name);
		char why[160];
		struct stat st;
		int rc = -1;
		if (!package_path_valid(path, why, sizeof why))
			snprintf(w->err, w->errlen, "'%.200s': %s", path, why);
		else if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			snprintf(w->err, w->errlen, "cannot read '%s': %s", path, strerror(errno));
		else if (S_ISLNK(st.st_mode))
			snprintf(w->err, w->errlen, "'%s' is a symbolic link (not allowed)", path);
		else if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), e->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0)
				snprintf(w->err, w->errlen, "cannot open '%s': %s", path,
					 strerror(errno));
			else
				rc = walk_dir(w, sub, path);
		} else if (!S_ISREG(st.st_mode)) {
			snprintf(w->err, w->errlen, "'%s' is not a regular file", path);
		} else if (w->pk->nfiles >= w->caps->max_files) {
			snprintf(w->err, w->errlen, "the package holds more than %d files",
				 w->caps->max_files);
		} else if (st.st_size > w->caps->max_bytes - w->pk->bytes) {
			/* by its size, before reading: a sparse file is not read */
			snprintf(w->err, w->errlen,
				 "'%s' (%lld bytes) passes the cap: the package's files are "
				 "larger than %lld bytes in all",
				 path, (long long)st.st_size, (long long)w->caps->max_bytes);
		} else {
			int f = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			char hex[65];
			int hr = f < 0 ? -errno : hash_fd(f, st.st_size, hex);
			if (f >= 0)
				close(f);
			if (hr < 0)
				snprintf(w->err, w->errlen, "cannot read '%s': %s", path,
					 strerror(-hr));
			else {
				add_file(w->pk, &w->cap, path, hex, st.st_size);
				rc = 0;
			}
		}
		free(path);
		if (rc < 0)
			goto out;
	}
	ret = 0;
out:
	closedir(d);
	return ret;
}

int package_from_dir(struct package *pk, const char *dir, const struct package_caps *caps,
		     char *err, size_t errlen)
{
	memset(pk, 0, sizeof *pk);
	struct walk w = {.pk = pk, .caps = caps, .err = err, .errlen = errlen};
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open the folder '%s': %s", dir, strerror(errno));
		return -1;
	}
	pk->dir = xstrdup(dir);
	if (walk_dir(&w, fd, "") < 0 || finish(pk, err, errlen) < 0) {
		package_release(pk);
		return -1;
	}
	return 0;
}

/* ---- the manifest ---- */

cJSON *package_manifest_json(const struct package_file *files, int n)
{
	cJSON *arr = cJSON_CreateArray();
	for (int i = 0; i < n; i++) {
		cJSON *f = cJSON_CreateArray();
		cJSON_AddItemToArray(f, cJSON_CreateString(files[i].path));
		cJSON_AddItemToArray(f, cJSON_CreateString(files[i].hash));
		cJSON_AddItemToArray(f, cJSON_CreateNumber((double)files[i].size));
		cJSON_AddItemToArray(arr, f);
	}
	return arr;
}

static bool hex64(const char *s)
{
	if (strlen(s) != 64)
		return false;
	for (int i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int package_manifest_parse(const cJSON *j, struct package_file **files, char *err, size_t errlen)
{
	*files = NULL;
	if (!cJSON_IsArray(j)) {
		snprintf(err, errlen, "a package's manifest is not an array");
		return -1;
	}
	int n = cJSON_GetArraySize(j), i = 0;
	struct package_file *f = xcalloc((size_t)n + 1, sizeof *f);
	const cJSON *it;
	cJSON_ArrayForEach(it, j)
	{
		const cJSON *p = cJSON_GetArrayItem(it, 0), *h = cJSON_GetArrayItem(it, 1),
			    *s = cJSON_GetArrayItem(it, 2);
		char why[160];
		if (!cJSON_IsString(p) || !cJSON_IsString(h) || !cJSON_IsNumber(s) ||
		    !hex64(h->valuestring) || s->valuedouble < 0 ||
		    !package_path_valid(p->valuestring, why, sizeof why)) {
			snprintf(err, errlen, "entry %d of a package's manifest is not valid", i);
			package_files_free(f, i);
			return -1;
		}
		f[i].path = xstrdup(p->valuestring);
		snprintf(f[i].hash, sizeof f[i].hash, "%s", h->valuestring);
		f[i].size = (int64_t)s->valuedouble;
		i++;
	}
	*files = f;
	return n;
}
