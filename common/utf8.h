/* utf8: validation and lossless-looking repair of program output for JSON. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"

/* Returns the length of the valid UTF-8 sequence at s (1..4), or 0 when the
 * bytes at s (n available) do not start one (overlongs, surrogates and code
 * points above U+10FFFF are invalid). */
size_t utf8_seq_len(const unsigned char *s, size_t n);
/* True when all n bytes are valid UTF-8 and none is NUL. */
bool utf8_valid_text(const char *s, size_t n);
/* Appends s to out with every invalid byte and every NUL replaced by U+FFFD,
 * so the result is a valid C string of UTF-8. Returns the number of bytes replaced. */
size_t utf8_sanitize(struct strbuf *out, const char *s, size_t n);
