/* base64: the standard alphabet (RFC 4648), padded, for APIs that carry bytes in JSON. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"

/* Appends the padded base64 of n bytes at s to out. */
void base64_encode(struct strbuf *out, const void *s, size_t n);
/* Appends the bytes that base64 text s (n bytes) stands for to out. White space
 * is skipped and the final padding may be missing (as MIME decoders read it).
 * Returns false, leaving out with what was decoded so far, when s holds another
 * character or an impossible length. */
bool base64_decode(struct strbuf *out, const char *s, size_t n);
