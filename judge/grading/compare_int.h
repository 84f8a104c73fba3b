/* compare_int: helpers shared by the files of the compare module (compare_), not a
 * public API. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "judge/grading/compare.h"

/* Snippet window: bytes shown before and after the difference. */
#define SNIP_BEFORE 24
#define SNIP_AFTER  48

/* The ICPC validator's isspace() in the C locale. */
static inline bool compare_is_ws(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* ASCII case folding, as strcasecmp in the C locale. */
static inline unsigned char compare_fold(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* True when s[i] exists and is a UTF-8 continuation byte. */
static inline bool compare_is_cont(const char *s, size_t n, size_t i)
{
	return i < n && ((unsigned char)s[i] & 0xc0) == 0x80;
}

static inline bool compare_use_floats(const struct compare_options *o)
{
	return o->float_abs_tol >= 0 || o->float_rel_tol >= 0;
}

/* Writes into dst (cap bytes) an escaped window of s (len bytes): from up to
 * `before` bytes ahead of pos (not before lo) to at most hi, "..." marking
 * cuts; valid UTF-8, never splitting a character. */
void compare_snippet(char *dst, size_t cap, const char *s, size_t len, size_t lo, size_t pos,
		     size_t hi, size_t before);
/* Escaped copy of a whole piece (a token, a line), cut with "..." when long. */
void compare_piece(char *dst, size_t cap, const char *s, size_t n);
/* printf into fb->message, cut on a UTF-8 boundary when too long. */
void compare_fb_msg(struct compare_feedback *fb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* 1-based line and byte column of offset pos in s. */
void compare_line_col(const char *s, size_t pos, long *line, long *col);
/* Offset of the first byte of the line holding pos. */
size_t compare_line_start(const char *s, size_t pos);
/* End of the line holding pos, its newline included, capped at pos +
 * SNIP_AFTER. */
size_t compare_window_end(const char *s, size_t len, size_t pos);
/* The same with the newline excluded. */
size_t compare_line_window_end(const char *s, size_t len, size_t pos);
/* Length of s without its trailing whitespace (newlines included). */
size_t compare_rstrip_all(const char *s, size_t n);
/* Length of a line without its trailing whitespace (space, \t, \r, \v, \f). */
size_t compare_rstrip_line(const char *s, size_t n);
/* True when s[0..n) is a decimal float whose value is finite as a double
 * (stored in *out); see compare.h for the syntax. */
bool compare_parse_float(const char *s, size_t n, double *out);
/* The ICPC rule: within the absolute OR the relative tolerance of j. */
bool compare_within_tol(const struct compare_options *o, double j, double t);

enum compare_outcome compare_unordered(const struct compare_options *o, const char *e, size_t en,
				       const char *g, size_t gn, struct compare_feedback *fb);
enum compare_outcome compare_regex(const struct compare_options *o, const char *pat, size_t plen,
				   const char *g, size_t gn, struct compare_feedback *fb);
