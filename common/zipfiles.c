/* zipfiles: the regular files of a .zip in memory (see zipfiles.h). */
#include "common/zipfiles.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/strbuf.h"

/* Inflates the current entry into out, stopping once the archive's total would
 * pass *left bytes. Returns 0, or -1 with err. */
static int read_entry(struct archive *a, const char *name, struct strbuf *out, size_t *left,
		      size_t max, char *err, size_t errlen)
{
	char buf[16384];
	for (;;) {
		la_ssize_t n = archive_read_data(a, buf, sizeof buf);
		if (n == 0)
			return 0;
		if (n < 0) {
			snprintf(err, errlen, "cannot read '%s' from the zip: %s", name,
				 archive_error_string(a));
			return -1;
		}
		if ((size_t)n > *left) {
			snprintf(err, errlen,
				 "'%s': the zip's files are larger than %zu bytes in all", name,
				 max);
			return -1;
		}
		*left -= (size_t)n;
		strbuf_add(out, buf, (size_t)n);
	}
}

int zipfiles_read(const void *data, size_t len, int max_files, size_t max_bytes, zipfiles_fn fn,
		  void *arg, char *err, size_t errlen)
{
	struct archive *a = archive_read_new();
	struct strbuf content = STRBUF_INIT;
	int ret = -1, nfiles = 0;
	size_t left = max_bytes;
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	archive_read_support_format_zip(a);
	if (archive_read_open_memory(a, data, len) != ARCHIVE_OK) {
		snprintf(err, errlen, "not a zip archive: %s", archive_error_string(a));
		goto out;
	}
	for (;;) {
		struct archive_entry *e;
		int r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK) {
			snprintf(err, errlen, "not a valid zip archive: %s",
				 archive_error_string(a));
			goto out;
		}
		const char *name = archive_entry_pathname(e);
		mode_t type = archive_entry_filetype(e);
		if (type == AE_IFDIR)
			continue;
		if (type != AE_IFREG) {
			snprintf(err, errlen, "'%s' in the zip is not a regular file",
				 name ? name : "?");
			goto out;
		}
		if (++nfiles > max_files) {
			snprintf(err, errlen, "the zip holds more than %d files", max_files);
			goto out;
		}
		strbuf_reset(&content);
		/* the size in the header is the archive's word: only what inflates counts */
		if (read_entry(a, name ? name : "?", &content, &left, max_bytes, err, errlen) < 0 ||
		    fn(arg, name ? name : "", content.buf ? content.buf : "", content.len, err,
		       errlen) < 0)
			goto out;
	}
	ret = 0;
out:
	strbuf_release(&content);
	archive_read_free(a);
	return ret;
}

static la_ssize_t append(struct archive *a, void *client, const void *buf, size_t len)
{
	(void)a;
	strbuf_add(client, buf, len);
	return (la_ssize_t)len;
}

/* Reads the regular file dir/name (at most max bytes) into sb. Returns 0 or
 * -1 with err. */
static int read_regular(const char *dir, const char *name, size_t max, struct strbuf *sb, char *err,
			size_t errlen)
{
	struct strbuf path = STRBUF_INIT;
	strbuf_addf(&path, "%s/%s", dir, name);
	int ret = -1, fd = open(path.buf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", name, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "'%s' is not a regular file", name);
		goto out;
	}
	if ((size_t)st.st_size > max) {
		snprintf(err, errlen, "'%s' (%lld bytes) is larger than %zu bytes", name,
			 (long long)st.st_size, max);
		goto out;
	}
	strbuf_reset(sb);
	strbuf_grow(sb, (size_t)st.st_size);
	char buf[65536];
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "cannot read '%s': %s", name, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		if (sb->len + (size_t)r > max) {
			snprintf(err, errlen, "'%s' grew past %zu bytes", name, max);
			goto out;
		}
		strbuf_add(sb, buf, (size_t)r);
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	strbuf_release(&path);
	return ret;
}

int zipfiles_write(struct strbuf *out, const char *dir, char *const *names, int n, size_t max_file,
		   char *err, size_t errlen)
{
	struct archive *a = archive_write_new();
	struct strbuf content = STRBUF_INIT;
	int ret = -1;
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (archive_write_set_format_zip(a) != ARCHIVE_OK ||
	    archive_write_open(a, out, NULL, append, NULL) != ARCHIVE_OK) {
		snprintf(err, errlen, "cannot write a zip: %s", archive_error_string(a));
		goto out;
	}
	for (int i = 0; i < n; i++) {
		if (read_regular(dir, names[i], max_file, &content, err, errlen) < 0)
			goto out;
		struct archive_entry *e = archive_entry_new();
		if (!e) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		archive_entry_set_pathname(e, names[i]);
		archive_entry_set_size(e, (la_int64_t)content.len);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		int rc = archive_write_header(a, e);
		archive_entry_free(e);
		if (rc != ARCHIVE_OK ||
		    (content.len &&
		     archive_write_data(a, content.buf, content.len) != (la_ssize_t)content.len)) {
			snprintf(err, errlen, "cannot add '%s' to the zip: %s", names[i],
				 archive_error_string(a));
			goto out;
		}
	}
	if (archive_write_close(a) != ARCHIVE_OK) {
		snprintf(err, errlen, "cannot write a zip: %s", archive_error_string(a));
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&content);
	archive_write_free(a);
	return ret;
}
