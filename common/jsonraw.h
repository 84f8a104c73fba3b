/* jsonraw: JSON text as it was written, beside cJSON's reading of it. cJSON
 * reads a number into a double and a string up to its first NUL, and refuses
 * the NaN and Infinity that Python's json writes; an eval set that holds them
 * (EvalPlus's MBPP+ inputs) must still reach its harness as published. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

struct jsonraw_span {
	size_t at, len;
};

/* The end of the JSON value that starts at or after s[i] (after white space),
 * or 0 when there is none. It follows strings and brackets only: run it on
 * text cJSON has read. */
size_t jsonraw_skip(const char *s, size_t n, size_t i);

/* The span of the value of member key (written without escapes) of the
 * object s[0..n), its top level only; false when it has none. */
bool jsonraw_member(const char *s, size_t n, const char *key, struct jsonraw_span *out);

/* The spans of the elements of the array s[0..n) into *out (malloc'ed): their
 * count, or -1 when s is no array. */
int jsonraw_elements(const char *s, size_t n, struct jsonraw_span **out);

/* A copy of s[0..n) in which each NaN, Infinity and -Infinity outside strings
 * is a 0 padded with spaces to its length, so that cJSON reads the text and
 * every offset in it stays; each \u0000 in a string within the span nul_in
 * of s (NULL: none) is a \u0001 too, and *nul (when given) tells whether
 * there was one. NULL when nothing changed. */
char *jsonraw_tame(const char *s, size_t n, const struct jsonraw_span *nul_in, bool *nul);
