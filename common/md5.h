/* md5: MD5 (RFC 1321) of a buffer, in hex. Not for security: EvalPlus names
 * its data set by the MD5 of its file, and its results file carries it. */
#pragma once
#include <stddef.h>

/* The lower-case hex MD5 of len bytes at data into hex (33 bytes with the NUL). */
void md5_hex(const void *data, size_t len, char hex[33]);
