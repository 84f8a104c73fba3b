/* zipfiles: the regular files of a .zip archive held in memory (Judge0's
 * additional_files, problem packages), read and written with libarchive. */
#pragma once
#include <stddef.h>

#include "common/strbuf.h"

/* Called once per regular file, in archive order; name is the entry's path as
 * stored, data its uncompressed bytes (NUL-terminated after len). Returns 0 to
 * go on, or -1 to stop (zipfiles_read then returns -1 with err left as set). */
typedef int (*zipfiles_fn)(void *arg, const char *name, const char *data, size_t len, char *err,
			   size_t errlen);

/* Reads the zip of len bytes at data and hands each regular file to fn; folders
 * are skipped. Refuses (returns -1 with a message in err) what is not a zip, an
 * entry that is neither a file nor a folder (a link, a device), more than
 * max_files files, and more than max_bytes uncompressed bytes in all (checked
 * as it inflates, so a zip bomb stops at max_bytes). Returns 0. */
int zipfiles_read(const void *data, size_t len, int max_files, size_t max_bytes, zipfiles_fn fn,
		  void *arg, char *err, size_t errlen);

/* Appends to out a zip of the n regular files names (paths relative to the
 * folder dir, '/'-separated) read from dir, never through a link; a file
 * larger than max_file bytes is refused unread. Returns 0, or -1 with err
 * naming the file. */
int zipfiles_write(struct strbuf *out, const char *dir, char *const *names, int n, size_t max_file,
		   char *err, size_t errlen);
