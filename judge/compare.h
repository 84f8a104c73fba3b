/* compare (cmp_): decides whether a program's output matches the expected output.
 * Modes as DESIGN.md: exact, lines, tokens (ICPC default validator), unordered,
 * regex (PCRE2, whole output), checker (run by grade, not here). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

enum cmp_mode { CMP_EXACT, CMP_LINES, CMP_TOKENS, CMP_UNORDERED, CMP_REGEX, CMP_CHECKER };

struct cmp_opts {
	enum cmp_mode mode;
	bool case_sensitive;         /* tokens: default false, as the ICPC validator */
	bool space_change_sensitive; /* tokens */
	double float_abs_tol;        /* < 0 when unset */
	double float_rel_tol;        /* < 0 when unset */
	bool unordered_tokens;       /* unordered: compare tokens (true) or lines (false) */
};

enum cmp_outcome { CMP_MATCH, CMP_DIFFER, CMP_ERROR };

struct cmp_feedback {
	long line;   /* 1-based line of the first difference, 0 when unknown */
	long column; /* 1-based column (bytes) */
	char expected[128]; /* short snippet around the difference */
	char got[128];
	char message[256]; /* one line; on CMP_ERROR, what is wrong (e.g. bad regex) */
};

/* Defaults for mode (tolerances unset, case-insensitive tokens). */
void cmp_opts_init(struct cmp_opts *o, enum cmp_mode mode);
/* Parses a mode name ("exact", "lines", ...). Returns 0 or -1. */
int cmp_mode_parse(const char *s, enum cmp_mode *out);
const char *cmp_mode_name(enum cmp_mode m);
/* Applies ICPC validator flags (e.g. "case_sensitive float_tolerance 1e-6"),
 * argv-style. Returns 0, or -1 with a message in err. */
int cmp_parse_flags(struct cmp_opts *o, int argc, const char *const *argv, char *err,
		    size_t errlen);
/* Compares got against expected. Linear time, memory bounded apart from the
 * inputs. Fills fb on CMP_DIFFER and CMP_ERROR. CMP_CHECKER is CMP_ERROR here. */
enum cmp_outcome cmp_compare(const struct cmp_opts *o, const char *expected, size_t expected_len,
			     const char *got, size_t got_len, struct cmp_feedback *fb);
