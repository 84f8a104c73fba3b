/* sessimage: a session's image — its folder packed, and its settings — for pause, resume and
 * snapshots. */
#include "judge/service/session/sessimage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/xalloc.h"
#include "judge/service/blobstore.h"
#include "judge/store/db.h"
#include "runner/sandbox.h"

#define MAGIC "JSI1"

static void put_u32(struct strbuf *b, uint32_t v)
{
	unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
			      (unsigned char)(v >> 24)};
	strbuf_add(b, x, 4);
}

static void put_u64(struct strbuf *b, uint64_t v)
{
	put_u32(b, (uint32_t)v);
	put_u32(b, (uint32_t)(v >> 32));
}

static void put_entry(struct strbuf *b, char type, int mode, const char *path)
{
	strbuf_add(b, &type, 1);
	put_u32(b, (uint32_t)mode);
	put_u32(b, (uint32_t)strlen(path));
	strbuf_addstr(b, path);
}

/* Packs folder dir ("" = the box) and what it holds. */
static int pack_dir(struct sandbox *sb, const char *dir, struct strbuf *out, long *files,
		    long *skipped, char *err, size_t errlen)
{
	struct sandbox_dirent *ents = NULL;
	size_t n = 0;
	int rc = sandbox_file_list(sb, dir, &ents, &n);
	if (rc < 0) {
		snprintf(err, errlen, "cannot list '%s': %s", dir, strerror(-rc));
		return -1;
	}
	int ret = -1;
	struct strbuf bytes = STRBUF_INIT;
	for (size_t i = 0; i < n; i++) {
		char *path = *dir ? xasprintf("%s/%s", dir, ents[i].name) : xstrdup(ents[i].name);
		if (ents[i].type == 'd') {
			put_entry(out, 'd', ents[i].mode, path);
			(*files)++;
			rc = pack_dir(sb, path, out, files, skipped, err, errlen);
		} else if (ents[i].type == 'f') {
			strbuf_reset(&bytes);
			rc = sandbox_file_get(sb, path, &bytes, (size_t)sandbox_box_bytes(sb));
			if (rc == -ENOENT || rc == -ELOOP || rc == -EINVAL) {
				(*skipped)++; /* changed meanwhile: the session's own programs */
				rc = 0;
			} else if (rc < 0) {
				snprintf(err, errlen, "cannot read '%s': %s", path, strerror(-rc));
			} else {
				put_entry(out, 'f', ents[i].mode, path);
				put_u64(out, bytes.len);
				strbuf_add(out, bytes.buf ? bytes.buf : "", bytes.len);
				(*files)++;
			}
		} else if (ents[i].type == 'l') {
			/* the link as the code made it: its target is the code's to resolve */
			strbuf_reset(&bytes);
			rc = sandbox_file_readlink(sb, path, &bytes);
			if (rc == -ENOENT || rc == -EINVAL || rc == -ELOOP) {
				(*skipped)++; /* changed meanwhile */
				rc = 0;
			} else if (rc < 0) {
				snprintf(err, errlen, "cannot read the link '%s': %s", path,
					 strerror(-rc));
			} else {
				put_entry(out, 'l', 0, path);
				put_u32(out, (uint32_t)bytes.len);
				strbuf_add(out, bytes.buf, bytes.len);
				(*files)++;
			}
		} else {
			(*skipped)++;
			rc = 0;
		}
		free(path);
		if (rc < 0)
			goto out;
	}
	ret = 0;
out:
	strbuf_release(&bytes);
	free(ents);
	return ret;
}

int sessimage_pack(struct sandbox *sb, struct strbuf *out, long *files, long *skipped, char *err,
		   size_t errlen)
{
	*files = *skipped = 0;
	strbuf_addstr(out, MAGIC);
	if (pack_dir(sb, "", out, files, skipped, err, errlen) < 0)
		return -1;
	strbuf_add(out, "E", 1);
	return 0;
}

/* A memory file's name: what runsc and session_ckpt.c write, nothing that
 * leaves the folder. */
static bool memory_name_ok(const char *name, size_t len)
{
	if (len == 0 || len > 64 || name[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* Appends exactly size bytes of file path to out. 0, or -1 with err. */
static int read_into(const char *path, size_t size, struct strbuf *out, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	strbuf_grow(out, size + 1);
	/* a memory file is ~100 MiB: faulted in 2 MiB pages, not 4 KiB ones */
	uintptr_t from =
	    ((uintptr_t)(out->buf + out->len) + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
	uintptr_t to = (uintptr_t)(out->buf + out->len + size) & ~(uintptr_t)((2u << 20) - 1);
	if (to > from)
		madvise((void *)from, to - from, MADV_HUGEPAGE);
	size_t done = 0;
	while (done < size) {
		ssize_t n = read(fd, out->buf + out->len + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "cannot read '%s': %s", path,
				 n < 0 ? strerror(errno) : "it shrank while read");
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	close(fd);
	out->len += size;
	out->buf[out->len] = 0;
	return 0;
}

int sessimage_pack_memory(const char *dir, struct strbuf *out, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "cannot open '%s': %s", dir, strerror(errno));
		return -1;
	}
	int ret = -1;
	strbuf_add(out, "M", 1);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (!memory_name_ok(e->d_name, strlen(e->d_name))) {
			snprintf(err, errlen, "unexpected file '%s' in the checkpoint", e->d_name);
			goto out;
		}
		/* straight into the image: a memory file is most of its bytes */
		put_entry(out, 'c', 0600, e->d_name);
		put_u64(out, (uint64_t)st.st_size);
		if (read_into(path, (size_t)st.st_size, out, err, errlen) < 0)
			goto out;
	}
	strbuf_add(out, "E", 1);
	ret = 0;
out:
	closedir(d);
	return ret;
}

/* A reader of the packed bytes: every take checks what is left. */
struct rd {
	const unsigned char *p;
	size_t left;
};

static bool take(struct rd *r, void *dst, size_t n)
{
	if (r->left < n)
		return false;
	if (dst)
		memcpy(dst, r->p, n);
	r->p += n;
	r->left -= n;
	return true;
}

static bool take_u32(struct rd *r, uint32_t *v)
{
	unsigned char x[4];
	if (!take(r, x, 4))
		return false;
	*v = (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 | (uint32_t)x[3] << 24;
	return true;
}

/* The memory section after the files (sessimage_pack_memory's): its files
 * into dir, or skipped when dir is NULL. 0, or -1 with err. */
static int unpack_memory(struct rd *r, const char *dir, bool beside, size_t len, char *err,
			 size_t errlen)
{
	char name[80];
	for (;;) {
		char type;
		uint32_t mode, nlen, lo, hi;
		if (!take(r, &type, 1))
			goto truncated;
		if (type == 'E')
			return 0;
		if (type != 'c' || !take_u32(r, &mode) || !take_u32(r, &nlen) ||
		    nlen >= sizeof name || !take(r, name, nlen) || !memory_name_ok(name, nlen))
			goto malformed;
		name[nlen] = 0;
		if (!take_u32(r, &lo) || !take_u32(r, &hi))
			goto truncated;
		uint64_t size = (uint64_t)hi << 32 | lo;
		if (beside) {
			/* its bytes are the file dir/name already, checked by the load */
			char path[PATH_MAX];
			struct stat st;
			snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", name);
			if (dir && (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) ||
				    (uint64_t)st.st_size != size)) {
				snprintf(err, errlen, "the memory file '%s' is missing", path);
				return -1;
			}
			continue;
		}
		if (size > r->left)
			goto truncated;
		if (dir) {
			char path[PATH_MAX];
			snprintf(path, sizeof path, "%s/%s", dir, name);
			int fd =
			    open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			size_t done = 0;
			while (fd >= 0 && done < size) {
				ssize_t n = write(fd, r->p + done, (size_t)size - done);
				if (n < 0 && errno == EINTR)
					continue;
				if (n <= 0)
					break;
				done += (size_t)n;
			}
			int e = errno;
			if (fd >= 0)
				close(fd);
			if (done < size) {
				snprintf(err, errlen, "cannot write '%s': %s", path, strerror(e));
				return -1;
			}
		}
		take(r, NULL, (size_t)size);
	}
truncated:
	snprintf(err, errlen, "the image is truncated");
	return -1;
malformed:
	snprintf(err, errlen, "the image's memory is malformed at byte %zu", len - r->left);
	return -1;
}

int sessimage_unpack(struct sandbox *sb, const void *data, size_t len, const char *memory_dir,
		     bool beside, bool *memory, long *files, char *err, size_t errlen)
{
	struct rd r = {data, len};
	*files = 0;
	*memory = false;
	char magic[4];
	if (!take(&r, magic, 4) || memcmp(magic, MAGIC, 4)) {
		snprintf(err, errlen, "the image is not a session image");
		return -1;
	}
	char path[4096];
	for (;;) {
		char type;
		uint32_t mode, plen, lo, hi;
		if (!take(&r, &type, 1))
			goto truncated;
		if (type == 'E')
			break;
		if ((type != 'd' && type != 'f' && type != 'l') || !take_u32(&r, &mode) ||
		    !take_u32(&r, &plen))
			goto malformed;
		if (plen == 0 || plen >= sizeof path || !take(&r, path, plen))
			goto malformed;
		path[plen] = 0;
		if (memchr(path, 0, plen))
			goto malformed;
		int rc;
		if (type == 'd') {
			rc = sandbox_file_mkdir(sb, path);
		} else if (type == 'l') {
			char target[4096];
			if (!take_u32(&r, &lo))
				goto truncated;
			if (lo == 0 || lo >= sizeof target || !take(&r, target, lo))
				goto malformed;
			target[lo] = 0;
			if (memchr(target, 0, lo))
				goto malformed;
			rc = sandbox_file_symlink(sb, path, target);
		} else {
			if (!take_u32(&r, &lo) || !take_u32(&r, &hi))
				goto truncated;
			uint64_t size = (uint64_t)hi << 32 | lo;
			if (size > r.left)
				goto truncated;
			rc = sandbox_write_file(sb, path, r.p, (size_t)size, (int)(mode & 0777));
			take(&r, NULL, (size_t)size);
		}
		if (rc < 0) {
			snprintf(err, errlen, "cannot restore '%s': %s", path,
				 rc == -ENOSPC ? "the session's disk is full (disk_mb)"
					       : strerror(-rc));
			return -1;
		}
		(*files)++;
	}
	if (r.left && *r.p == 'M') {
		take(&r, NULL, 1);
		if (unpack_memory(&r, memory_dir, beside, len, err, errlen) < 0)
			return -1;
		*memory = memory_dir != NULL;
	}
	if (r.left) {
		snprintf(err, errlen, "the image has %zu bytes after its end", r.left);
		return -1;
	}
	return 0;
truncated:
	snprintf(err, errlen, "the image is truncated");
	return -1;
malformed:
	snprintf(err, errlen, "the image is malformed at byte %zu", len - r.left);
	return -1;
}

/* Moves r past the files section (to its 'E'), checking only lengths. */
static bool skip_files(struct rd *r)
{
	char magic[4];
	if (!take(r, magic, 4) || memcmp(magic, MAGIC, 4))
		return false;
	for (;;) {
		char type;
		uint32_t mode, plen, lo, hi;
		if (!take(r, &type, 1))
			return false;
		if (type == 'E')
			return true;
		if (!take_u32(r, &mode) || !take_u32(r, &plen) || !take(r, NULL, plen))
			return false;
		if (type == 'l') {
			if (!take_u32(r, &lo) || !take(r, NULL, lo))
				return false;
		} else if (type == 'f') {
			if (!take_u32(r, &lo) || !take_u32(r, &hi) ||
			    !take(r, NULL, (size_t)((uint64_t)hi << 32 | lo)))
				return false;
		} else if (type != 'd') {
			return false;
		}
	}
}

/* A memory entry's header at r ('c' taken): its name (NUL-ended) and size.
 * False when malformed. */
static bool memory_header(struct rd *r, char name[80], uint64_t *size)
{
	uint32_t mode, nlen, lo, hi;
	if (!take_u32(r, &mode) || !take_u32(r, &nlen) || nlen >= 80 || !take(r, name, nlen) ||
	    !memory_name_ok(name, nlen) || !take_u32(r, &lo) || !take_u32(r, &hi))
		return false;
	name[nlen] = 0;
	*size = (uint64_t)hi << 32 | lo;
	return true;
}

static int write_all(int fd, const void *p, size_t n)
{
	size_t done = 0;
	while (done < n) {
		ssize_t w = write(fd, (const char *)p + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		done += (size_t)w;
	}
	return 0;
}

int sessimage_copy_write(const struct strbuf *packed, const char *from_dir, const char *to_dir,
			 const char *head, char *err, size_t errlen)
{
	struct rd r = {(const unsigned char *)packed->buf, packed->len};
	struct strbuf h = STRBUF_INIT;
	char path[PATH_MAX], from[PATH_MAX], name[80];
	int ret = -1;
	if (!packed->buf || !skip_files(&r))
		goto malformed;
	strbuf_add(&h, packed->buf, packed->len - r.left);
	if (r.left && *r.p == 'M') {
		take(&r, NULL, 1);
		strbuf_add(&h, "M", 1);
		for (;;) {
			const unsigned char *at = r.p;
			char type;
			uint64_t size;
			if (!take(&r, &type, 1))
				goto malformed;
			if (type == 'E') {
				strbuf_add(&h, "E", 1);
				break;
			}
			if (type != 'c' || !memory_header(&r, name, &size) || size > r.left)
				goto malformed;
			strbuf_add(&h, at, (size_t)(r.p - at));
			snprintf(path, sizeof path, "%s/%s", to_dir, name);
			snprintf(from, sizeof from, "%s/%s", from_dir ? from_dir : ".", name);
			struct stat st;
			/* the checkpoint's own file when it is the one packed: no copy */
			if (!(from_dir && lstat(from, &st) == 0 && S_ISREG(st.st_mode) &&
			      (uint64_t)st.st_size == size && link(from, path) == 0)) {
				int fd =
				    open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
					 0600);
				bool ok = fd >= 0 && write_all(fd, r.p, (size_t)size) == 0;
				if (fd >= 0 && close(fd) < 0)
					ok = false;
				if (!ok) {
					snprintf(err, errlen, "cannot write '%s': %s", path,
						 strerror(errno));
					goto out;
				}
			}
			take(&r, NULL, (size_t)size);
		}
	}
	if (r.left)
		goto malformed;
	/* the head last: a copy without it is not one */
	snprintf(path, sizeof path, "%s/%s.tmp", to_dir, head);
	snprintf(from, sizeof from, "%s/%s", to_dir, head);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	bool ok = fd >= 0 && write_all(fd, h.buf, h.len) == 0;
	if (fd >= 0 && close(fd) < 0)
		ok = false;
	if (!ok || rename(path, from) < 0) {
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	ret = 0;
	goto out;
malformed:
	snprintf(err, errlen, "the image is malformed");
out:
	strbuf_release(&h);
	return ret;
}

/* The memory files of a copy, mapped where they lie. */
struct copy_maps {
	struct blob_part *parts;
	size_t n, cap;
	void **maps;
	size_t *lens;
	size_t nmaps;
};

static void copy_maps_add(struct copy_maps *m, const void *p, size_t len)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 16;
		m->parts = xrealloc(m->parts, m->cap * sizeof *m->parts);
	}
	m->parts[m->n].p = p;
	m->parts[m->n].len = len;
	m->n++;
}

static void copy_maps_release(struct copy_maps *m)
{
	for (size_t i = 0; i < m->nmaps; i++)
		munmap(m->maps[i], m->lens[i]);
	free(m->maps);
	free(m->lens);
	free(m->parts);
}

/* sessimage_copy_write's copy in dir, head its head file, checked against
 * blob: the head into packed (at its end). 1 when it is the stored image, 0
 * when not (err says why), -1 with err. */
static int load_copy(struct db *db, int64_t blob, const char *dir, const char *head,
		     struct strbuf *packed, char *err, size_t errlen)
{
	char path[PATH_MAX], name[80];
	struct stat st;
	struct copy_maps m = {0};
	size_t start = packed->len;
	int ret = 0;
	snprintf(path, sizeof path, "%s/%s", dir, head);
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) ||
	    read_into(path, (size_t)st.st_size, packed, err, errlen) < 0) {
		snprintf(err, errlen, "there is no copy");
		goto out;
	}
	const unsigned char *base = (const unsigned char *)packed->buf + start;
	struct rd r = {base, packed->len - start};
	if (!skip_files(&r))
		goto malformed;
	const unsigned char *from = base;
	if (r.left && *r.p == 'M') {
		take(&r, NULL, 1);
		for (;;) {
			char type;
			uint64_t size;
			if (!take(&r, &type, 1))
				goto malformed;
			if (type == 'E')
				break;
			if (type != 'c' || !memory_header(&r, name, &size))
				goto malformed;
			copy_maps_add(&m, from, (size_t)(r.p - from));
			from = r.p;
			snprintf(path, sizeof path, "%s/%s", dir, name);
			int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			void *map = MAP_FAILED;
			bool ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
				  (uint64_t)st.st_size == size;
			if (ok && size > 0) {
				/* read where it lies: the page cache holds it since the pause */
				map = mmap(NULL, (size_t)size, PROT_READ,
					   MAP_PRIVATE | MAP_POPULATE, fd, 0);
				ok = map != MAP_FAILED;
			}
			if (fd >= 0)
				close(fd);
			if (!ok) {
				snprintf(err, errlen, "its memory file '%s' is missing or changed",
					 name);
				goto out;
			}
			if (size > 0) {
				m.maps = xrealloc(m.maps, (m.nmaps + 1) * sizeof *m.maps);
				m.lens = xrealloc(m.lens, (m.nmaps + 1) * sizeof *m.lens);
				m.maps[m.nmaps] = map;
				m.lens[m.nmaps++] = (size_t)size;
				copy_maps_add(&m, map, (size_t)size);
			}
		}
	}
	if (r.left)
		goto malformed;
	copy_maps_add(&m, from, (size_t)(r.p - from));
	ret = blobstore_verify_parts(db, blob, m.parts, m.n, err, errlen);
	goto out;
malformed:
	snprintf(err, errlen, "its head is malformed");
out:
	copy_maps_release(&m);
	if (ret != 1) {
		packed->len = start;
		if (packed->buf)
			packed->buf[start] = 0;
	}
	return ret;
}

static int fail(struct db *db, char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "cannot %s: %s", what, db_error(db));
	return -1;
}

int sessimage_save(struct db *db, struct db *const *more, int nmore, const char *session_id,
		   const char *kind, const char *name, const cJSON *contexts,
		   const struct strbuf *packed, long files, long long cap_bytes, long taken_ms,
		   char image_id[37], long long *stored, char *err, size_t errlen)
{
	const char *p1[] = {session_id};
	PGresult *res =
	    db_query(db, "SELECT coalesce(api_key_id, 0) FROM sessions WHERE id = $1::uuid", 1, p1);
	if (!res)
		return fail(db, err, errlen, "read the session");
	if (PQntuples(res) != 1) {
		PQclear(res);
		snprintf(err, errlen, "no session '%s'", session_id);
		return -1;
	}
	int64_t key = db_value_ll(res, 0, 0), blob = 0;
	PQclear(res);
	bool checkpoint = !strcmp(kind, "checkpoint");
	if (checkpoint && cap_bytes > 0) {
		/* the earlier checkpoint stays until this one replaces it (the
		 * session moves from it if its worker dies meanwhile), but its
		 * bytes do not count against this one's cap */
		const char *q[] = {session_id};
		res = db_query(db,
			       "SELECT coalesce(sum(b.stored), 0) FROM session_images i JOIN "
			       "blobs b ON b.id = i.blob_id WHERE i.session_id = $1::uuid AND "
			       "i.kind = 'checkpoint'",
			       1, q);
		if (!res)
			return fail(db, err, errlen, "read the earlier checkpoint");
		cap_bytes += db_value_ll(res, 0, 0);
		PQclear(res);
	}
	if (!strcmp(kind, "pause")) {
		/* the session's earlier pause image: it runs, so it needs it no
		 * more, and its bytes must not count against the cap of this one */
		const char *q[] = {session_id, kind};
		if (db_exec(
			db,
			"WITH old AS (SELECT id, blob_id FROM session_images WHERE session_id = "
			"$1::uuid AND kind = $2), "
			"u AS (UPDATE sessions SET image_id = NULL WHERE id = $1::uuid AND "
			"image_id IN (SELECT id FROM old)), "
			"d AS (DELETE FROM session_images WHERE id IN (SELECT id FROM old) "
			"RETURNING blob_id) "
			"DELETE FROM blobs WHERE id IN (SELECT blob_id FROM d)",
			2, q) < 0)
			return fail(db, err, errlen, "drop the earlier image");
	}
	int rc = blobstore_store(db, more, nmore, key, packed->buf ? packed->buf : "", packed->len,
				 cap_bytes, &blob, stored, err, errlen);
	if (rc != 0)
		return rc;
	char b[24], nf[24];
	snprintf(b, sizeof b, "%" PRId64, blob);
	snprintf(nf, sizeof nf, "%ld", files);
	char *ctx = contexts ? cJSON_PrintUnformatted(contexts) : xstrdup("[]");
	const char *p[] = {session_id, kind, name ? name : "", ctx, nf, b};
	res = db_query(db,
		       "INSERT INTO session_images (api_key_id, session_id, kind, name, language, "
		       "limits, network, env, contexts, files, blob_id) SELECT s.api_key_id, s.id, "
		       "$2, $3, s.language, s.limits, s.network, s.env, $4::jsonb, $5::int, "
		       "$6::bigint FROM "
		       "sessions s WHERE s.id = $1::uuid RETURNING id",
		       6, p);
	free(ctx);
	if (!res || PQntuples(res) != 1) {
		if (res)
			PQclear(res);
		fail(db, err, errlen, "store the image");
		char derr[256];
		blobstore_delete(db, blob, derr, sizeof derr);
		return -1;
	}
	snprintf(image_id, 37, "%s", db_value(res, 0, 0));
	PQclear(res);
	char ago[24];
	snprintf(ago, sizeof ago, "%.3f", taken_ms > 0 ? taken_ms / 1000.0 : 0.0);
	const char *q[] = {session_id, image_id, ago};
	/* the session names the new checkpoint and the earlier one goes, in one
	 * statement (one update of the session's row): a reaper never finds the
	 * session without one */
	if (checkpoint &&
	    db_exec(db,
		    "WITH img AS (SELECT id, blob_id FROM session_images WHERE session_id = "
		    "$1::uuid AND kind = 'checkpoint' AND id <> $2::uuid), "
		    "n AS (UPDATE sessions SET checkpoint_image_id = $2::uuid, checkpoint_at = "
		    "now() - make_interval(secs => $3::float8), image_id = CASE WHEN image_id IN "
		    "(SELECT id FROM img) THEN NULL ELSE "
		    "image_id END WHERE id = $1::uuid), "
		    "d AS (DELETE FROM session_images WHERE id IN (SELECT id FROM img) RETURNING "
		    "blob_id) "
		    "DELETE FROM blobs WHERE id IN (SELECT blob_id FROM d)",
		    3, q) < 0)
		return fail(db, err, errlen, "note the checkpoint");
	return 0;
}

int sessimage_load(struct db *db, const char *image_id, const char *cached, struct strbuf *packed,
		   cJSON **contexts, bool *from_cache, char *err, size_t errlen)
{
	*from_cache = false;
	const char *p[] = {image_id};
	PGresult *res =
	    db_query(db, "SELECT blob_id, contexts FROM session_images WHERE id = $1::uuid", 1, p);
	if (!res)
		return fail(db, err, errlen, "read the image");
	if (PQntuples(res) != 1) {
		PQclear(res);
		return 0;
	}
	int64_t blob = db_value_ll(res, 0, 0);
	*contexts = cJSON_Parse(db_value(res, 0, 1));
	PQclear(res);
	char berr[400], head[64];
	if (cached) {
		/* the worker's own copy, when it is still the stored image */
		snprintf(head, sizeof head, "head-%s", image_id);
		int cr = load_copy(db, blob, cached, head, packed, berr, sizeof berr);
		if (cr == 1) {
			*from_cache = true;
			return 1;
		}
		if (cr < 0 || strcmp(berr, "there is no copy"))
			log_warn("sessions: image %s: its copy in '%s' is not used: %s", image_id,
				 cached, berr);
	}
	int rc = blobstore_load(db, blob, packed, berr, sizeof berr);
	if (rc == 1)
		return 1;
	snprintf(err, errlen, "the stored image is damaged: %s",
		 rc == 0 ? "its blob is missing" : berr);
	cJSON_Delete(*contexts);
	*contexts = NULL;
	return -1;
}

int sessimage_snapshot_get(struct db *db, const char *image_id, int64_t key, char *language,
			   cJSON **limits, cJSON **network, cJSON **env, char *err, size_t errlen)
{
	char k[24];
	snprintf(k, sizeof k, "%" PRId64, key);
	const char *p[] = {image_id, k};
	PGresult *res =
	    db_query(db,
		     "SELECT language, limits, network, env FROM session_images WHERE id = "
		     "$1::uuid AND coalesce(api_key_id, 0) = $2::bigint AND kind = "
		     "'snapshot'",
		     2, p);
	if (!res)
		return fail(db, err, errlen, "read the snapshot");
	int n = PQntuples(res);
	if (n) {
		snprintf(language, 32, "%s", db_value(res, 0, 0));
		*limits = cJSON_Parse(db_value(res, 0, 1));
		*network = PQgetisnull(res, 0, 2) ? NULL : cJSON_Parse(db_value(res, 0, 2));
		*env = PQgetisnull(res, 0, 3) ? NULL : cJSON_Parse(db_value(res, 0, 3));
	}
	PQclear(res);
	return n ? 1 : 0;
}

int sessimage_snapshot_list(struct db *db, int64_t key, const char *image_id, cJSON **out,
			    char *err, size_t errlen)
{
	char k[24];
	snprintf(k, sizeof k, "%" PRId64, key);
	const char *p[] = {k, image_id};
	PGresult *res = db_query(
	    db,
	    "SELECT i.id, i.name, coalesce(i.session_id::text, ''), i.language, i.files, b.size, "
	    "b.stored, " DB_ISO_TIME("i.created") " FROM session_images i JOIN blobs b ON b.id = "
						  "i.blob_id WHERE coalesce(i.api_key_id, 0) = "
						  "$1::bigint AND i.kind = 'snapshot' "
						  "AND ($2::uuid IS NULL OR i.id = $2::uuid) ORDER "
						  "BY i.created DESC, i.id LIMIT 1000",
	    2, p);
	if (!res)
		return fail(db, err, errlen, "list the snapshots");
	*out = cJSON_CreateArray();
	for (int i = 0; i < PQntuples(res); i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "id", db_value(res, i, 0));
		cJSON_AddStringToObject(o, "name", db_value(res, i, 1));
		const char *sid = db_value(res, i, 2);
		if (*sid)
			cJSON_AddStringToObject(o, "session_id", sid);
		else
			cJSON_AddNullToObject(o, "session_id");
		cJSON_AddStringToObject(o, "language", db_value(res, i, 3));
		cJSON_AddNumberToObject(o, "files", (double)db_value_ll(res, i, 4));
		cJSON_AddNumberToObject(o, "size", (double)db_value_ll(res, i, 5));
		cJSON_AddNumberToObject(o, "stored", (double)db_value_ll(res, i, 6));
		cJSON_AddStringToObject(o, "created_at", db_value(res, i, 7));
		cJSON_AddItemToArray(*out, o);
	}
	PQclear(res);
	return 0;
}

/* After a CTE img (id, blob_id) of images to delete: the sessions that name
 * them forget them, the images and their blobs go; d holds one row each. */
#define DROP_IMAGES                                                                                \
	"u AS (UPDATE sessions SET image_id = NULL WHERE image_id IN (SELECT id FROM img)), "      \
	"d AS (DELETE FROM session_images WHERE id IN (SELECT id FROM img) RETURNING blob_id), "   \
	"b AS (DELETE FROM blobs WHERE id IN (SELECT blob_id FROM d)) "

int sessimage_snapshot_delete(struct db *db, const char *image_id, int64_t key, char *err,
			      size_t errlen)
{
	char k[24];
	snprintf(k, sizeof k, "%" PRId64, key);
	const char *p[] = {image_id, k};
	/* one statement: the sessions made from it forget it (their files are
	 * their own), the image and its blob go; a session still starting from it
	 * keeps it (the second column says it is there) */
	PGresult *res = db_query(
	    db,
	    "WITH img AS (SELECT i.id, i.blob_id FROM session_images i WHERE i.id = $1::uuid "
	    "AND coalesce(i.api_key_id, 0) = $2::bigint AND i.kind = 'snapshot' AND NOT EXISTS "
	    "(SELECT 1 FROM sessions s WHERE s.image_id = i.id AND s.status = 'starting') FOR "
	    "UPDATE OF i), " DROP_IMAGES
	    "SELECT (SELECT count(*) FROM d), EXISTS (SELECT 1 FROM session_images i WHERE i.id = "
	    "$1::uuid AND coalesce(i.api_key_id, 0) = $2::bigint AND i.kind = 'snapshot')",
	    2, p);
	if (!res)
		return fail(db, err, errlen, "delete the snapshot");
	int rc = db_value_ll(res, 0, 0) > 0 ? 1 : !strcmp(db_value(res, 0, 1), "t") ? 2 : 0;
	PQclear(res);
	return rc;
}

int sessimage_sweep(struct db *db, char *err, size_t errlen)
{
	/* in rounds of 100, locked rows skipped (another worker sweeps them);
	 * the ended session forgets the image first (its image_id) */
	PGresult *res = db_query(
	    db,
	    "WITH img AS (SELECT i.id, i.blob_id FROM session_images i LEFT JOIN sessions s ON "
	    "s.id = i.session_id WHERE i.kind IN ('pause', 'checkpoint') AND (s.id IS NULL OR "
	    "s.status NOT IN "
	    "('starting', 'ready', 'paused')) LIMIT 100 FOR UPDATE OF i SKIP LOCKED), " DROP_IMAGES
	    "SELECT count(*) FROM d",
	    0, NULL);
	if (!res)
		return fail(db, err, errlen, "delete the images of ended sessions");
	int n = (int)db_value_ll(res, 0, 0);
	PQclear(res);
	int b = blobstore_sweep(db, err, errlen);
	return b < 0 ? -1 : n + b;
}
