/* zipfiles: the regular files of a .zip in memory (see zipfiles.h). */
#include "common/zipfiles.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

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
