/* compare (compare_): decides whether a program's output matches the expected output.
 * Modes: exact, lines, tokens (ICPC default validator), unordered,
 * regex (PCRE2, whole output), checker (run by grade, not here).
 *
 * Rules, in short (the comments in compare.c give the reasons):
 *  - exact: byte for byte.
 *  - lines: lines split at LF; each line's trailing whitespace (space, tab, CR, VT,
 *    FF) is ignored, so CRLF equals LF; trailing blank lines are ignored, so a
 *    missing final newline does not matter. Everything else, case included, counts.
 *  - tokens: as the ICPC default output validator (Kattis problemtools):
 *    tokens are runs of non-whitespace (whitespace = space \t \n \v \f \r);
 *    case-insensitive (ASCII only) unless case_sensitive; with
 *    space_change_sensitive every whitespace run, leading and trailing ones
 *    included, must be byte-identical. With a tolerance set, an expected token
 *    that is a float ([+-]digits[.digits][e[+-]digits], finite as a double)
 *    accepts any float token within the absolute OR the relative tolerance
 *    (relative to the expected value). Not floats, so compared as strings:
 *    nan, inf, infinity, hex floats (0x1p3), and numbers beyond the double
 *    range (1e400) -- as the ICPC validator, which rejects nan and inf; hex is
 *    refused so that hexadecimal answers like 0x10 stay exact strings.
 *    Byte-identical tokens always match. NUL bytes are ordinary token bytes.
 *  - unordered: the output's lines (lines normalisation, trailing blank lines
 *    dropped, case-sensitive) or, with unordered_tokens, its tokens (tokens
 *    rules: case flag, tolerances) as a multiset. Float tokens under a
 *    tolerance are paired in sorted order. Needs O(items) memory: 16 bytes per
 *    line or token (8 per float token) on each side, plus a temporary as large
 *    as one side while sorting. Linear time (radix sort by hash); only crafted
 *    hash collisions fall back to n log n.
 *  - regex: the expected output is a PCRE2 pattern that must match the whole
 *    output, anchored at both ends. Trailing whitespace of the output and
 *    trailing CR/LF of the pattern are dropped first, so a final newline never
 *    matters. UTF mode (. is one character) when the pattern and the output
 *    are both valid UTF-8, byte mode otherwise (. is one byte), so invalid
 *    output bytes behave predictably. NUL bytes are allowed on both sides.
 *    Default flags: no (?s), (?m), (?i) -- write them in the pattern. Match,
 *    depth and heap limits bound time and memory. A bad pattern is CMP_ERROR
 *    (the problem setter's fault; a request's own pattern is refused 422
 *    before it runs); a limit hit is CMP_DIFFER with the limit named in the
 *    feedback: the output was not shown to match, and whoever wrote the
 *    pattern (often the submitter) gets a verdict, not an internal error
 *    (which would count as the judge's fault). Big outputs need patterns that do not backtrack per
 *    repetition, e.g. (?s).*, [0-9\s]*+ or (?:\d+\n)*+ rather than (\d+\n)*.
 *  - checker: CMP_ERROR here; grade runs checkers.
 * Memory: no allocation in exact, lines and tokens modes (streaming over the
 * inputs); unordered as above; regex bounded by the heap limit.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

enum compare_mode { CMP_EXACT, CMP_LINES, CMP_TOKENS, CMP_UNORDERED, CMP_REGEX, CMP_CHECKER };

struct compare_options {
	enum compare_mode mode;
	bool case_sensitive;	     /* tokens: default false, as the ICPC validator */
	bool space_change_sensitive; /* tokens */
	double float_abs_tol;	     /* < 0 when unset */
	double float_rel_tol;	     /* < 0 when unset */
	bool unordered_tokens;	     /* unordered: compare tokens (true) or lines (false) */
	/* regex limits; 0 means the default (CMP_REGEX_DEFAULT_*) */
	unsigned long regex_match_limit;    /* pcre2_set_match_limit */
	unsigned long regex_depth_limit;    /* pcre2_set_depth_limit */
	unsigned long regex_heap_limit_kib; /* pcre2_set_heap_limit, KiB */
};

#define CMP_REGEX_DEFAULT_MATCH_LIMIT	 5000000UL
#define CMP_REGEX_DEFAULT_DEPTH_LIMIT	 100000UL
#define CMP_REGEX_DEFAULT_HEAP_LIMIT_KIB 65536UL
/* Ceilings for the limits above, so a request cannot make a worker spin or
 * swell: larger values are refused by compare_parse_flags and clamped by compare_outputs. */
#define CMP_REGEX_MAX_MATCH_LIMIT    50000000UL
#define CMP_REGEX_MAX_DEPTH_LIMIT    1000000UL
#define CMP_REGEX_MAX_HEAP_LIMIT_KIB 262144UL

enum compare_outcome { CMP_MATCH, CMP_DIFFER, CMP_ERROR };

/* All strings are NUL-terminated valid UTF-8 (control characters, backslash and
 * invalid bytes escaped as \n, \\, \xNN ...), so they can go into JSON as is. */
struct compare_feedback {
	long line;	    /* 1-based line of the first difference in the output, 0 when unknown */
	long column;	    /* 1-based column (bytes) */
	char expected[128]; /* short snippet around the difference */
	char got[128];
	char message[256];  /* one line; on CMP_ERROR, what is wrong (e.g. bad regex) */
	long expected_line; /* 1-based line in the expected output, 0 when unknown */
	long token;	    /* tokens modes: 1-based number of the differing token, else 0 */
};

/* Defaults for mode (tolerances unset, case-insensitive tokens). */
void compare_options_init(struct compare_options *o, enum compare_mode mode);
/* Parses a mode name ("exact", "lines", ...). Returns 0 or -1. */
int compare_mode_parse(const char *s, enum compare_mode *out);
const char *compare_mode_name(enum compare_mode m);
/* Applies ICPC validator flags (e.g. "case_sensitive float_tolerance 1e-6"),
 * argv-style. Also accepts "unordered_tokens", and "regex_match_limit N",
 * "regex_depth_limit N", "regex_heap_limit_kib N" (1..CMP_REGEX_MAX_*).
 * Tolerances must be finite and >= 0. Returns 0, or -1 with a message in err. */
int compare_parse_flags(struct compare_options *o, int argc, const char *const *argv, char *err,
			size_t errlen);
/* Compares got against expected. Linear time, memory bounded apart from the
 * inputs (see above for unordered). Fills fb on CMP_DIFFER and CMP_ERROR (zeroes it on
 * CMP_MATCH). CMP_CHECKER is CMP_ERROR here. Thread-safe. */
enum compare_outcome compare_outputs(const struct compare_options *o, const char *expected,
				     size_t expected_len, const char *got, size_t got_len,
				     struct compare_feedback *fb);
