/* ini: a small parser for judge.ini and the language files. */
#pragma once
#include <stddef.h>

/* Called for each "key = value" line. section is "" before any [section].
 * Returns 0 to go on, or -1 after writing a message into err (errlen bytes). */
typedef int (*ini_handler)(void *ctx, const char *section, const char *key, const char *value,
			   char *err, size_t errlen);

/* Parses the file at path. Blank lines and lines starting with '#' or ';' are
 * skipped; values are trimmed; a value may be empty. Returns 0, or -1 with
 * "path:line: message" in err. */
int ini_parse_file(const char *path, ini_handler cb, void *ctx, char *err, size_t errlen);
