/* archive_shim: libarchive (and its compression libraries), loaded when a zip
 * is first read (common/dynlib.h): only Judge0's additional_files need it. */
#include <archive.h>
#include <archive_entry.h>

#include "common/dynlib.h"

static struct dynlib arch = DYNLIB_INIT("libarchive.so.13");

DYNLIB_SHIM(arch, struct archive *, archive_read_new, (void), ())
DYNLIB_SHIM(arch, int, archive_read_support_format_zip, (struct archive * a), (a))
DYNLIB_SHIM(arch, int, archive_read_open_memory, (struct archive * a, const void *buf, size_t size),
	    (a, buf, size))
DYNLIB_SHIM(arch, int, archive_read_next_header, (struct archive * a, struct archive_entry **entry),
	    (a, entry))
DYNLIB_SHIM(arch, la_ssize_t, archive_read_data, (struct archive * a, void *buf, size_t size),
	    (a, buf, size))
DYNLIB_SHIM(arch, const char *, archive_error_string, (struct archive * a), (a))
DYNLIB_SHIM(arch, int, archive_read_free, (struct archive * a), (a))
DYNLIB_SHIM(arch, const char *, archive_entry_pathname, (struct archive_entry * e), (e))
DYNLIB_SHIM(arch, __LA_MODE_T, archive_entry_filetype, (struct archive_entry * e), (e))
