/* archive_shim: libarchive (and its compression libraries), loaded when a zip
 * is first read or written (common/dynlib.h): Judge0's additional_files,
 * problem uploads and `judge problems add DIR` need it. */
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
DYNLIB_SHIM(arch, struct archive *, archive_write_new, (void), ())
DYNLIB_SHIM(arch, int, archive_write_set_format_zip, (struct archive * a), (a))
DYNLIB_SHIM(arch, int, archive_write_open,
	    (struct archive * a, void *client, archive_open_callback *open,
	     archive_write_callback *write, archive_close_callback *close),
	    (a, client, open, write, close))
DYNLIB_SHIM(arch, int, archive_write_header, (struct archive * a, struct archive_entry *e), (a, e))
DYNLIB_SHIM(arch, la_ssize_t, archive_write_data,
	    (struct archive * a, const void *buf, size_t size), (a, buf, size))
DYNLIB_SHIM(arch, int, archive_write_close, (struct archive * a), (a))
DYNLIB_SHIM(arch, int, archive_write_free, (struct archive * a), (a))
DYNLIB_SHIM(arch, struct archive_entry *, archive_entry_new, (void), ())
DYNLIB_SHIM_VOID(arch, archive_entry_free, (struct archive_entry * e), (e))
DYNLIB_SHIM_VOID(arch, archive_entry_set_pathname, (struct archive_entry * e, const char *name),
		 (e, name))
DYNLIB_SHIM_VOID(arch, archive_entry_set_size, (struct archive_entry * e, la_int64_t size),
		 (e, size))
DYNLIB_SHIM_VOID(arch, archive_entry_set_filetype, (struct archive_entry * e, unsigned int type),
		 (e, type))
DYNLIB_SHIM_VOID(arch, archive_entry_set_perm, (struct archive_entry * e, __LA_MODE_T perm),
		 (e, perm))
