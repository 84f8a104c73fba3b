/* compare: options, feedback helpers, float tokens, and the exact, lines and
 * tokens modes.
 *
 * How it works: exact, lines and tokens walk both buffers once, side by side,
 * and stop at the first difference, so they need no memory beyond the inputs
 * and a few hundred bytes of stack. Unordered (compare_unordered.c) collects
 * (pointer, length, hash) per line or token and sorts both sides. Regex
 * (compare_regex.c) hands the whole output to PCRE2 with match, depth and heap
 * limits. Feedback strings are escaped (control bytes, backslash, invalid
 * UTF-8) so they are always valid UTF-8 and never split a character.
 */
#include "judge/grading/compare.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/grading/compare_int.h"
#include "common/utf8.h"

/* Significant digits kept when converting a float token: 767 are enough for a
 * correctly rounded double, the rest only needs a sticky digit. */
#define FLOAT_MAX_DIGITS 780

static const char *const mode_names[] = {
    [CMP_EXACT] = "exact",	   [CMP_LINES] = "lines", [CMP_TOKENS] = "tokens",
    [CMP_UNORDERED] = "unordered", [CMP_REGEX] = "regex", [CMP_CHECKER] = "checker",
};

void compare_options_init(struct compare_options *o, enum compare_mode mode)
{
	memset(o, 0, sizeof(*o));
	o->mode = mode;
	o->float_abs_tol = -1;
	o->float_rel_tol = -1;
}

int compare_mode_parse(const char *s, enum compare_mode *out)
{
	for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
		if (!strcmp(s, mode_names[i])) {
			*out = (enum compare_mode)i;
			return 0;
		}
	}
	return -1;
}

const char *compare_mode_name(enum compare_mode m)
{
	if ((unsigned)m >= sizeof(mode_names) / sizeof(mode_names[0]))
		return "unknown";
	return mode_names[m];
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* ---- escaping and feedback ---- */

/* Appends the escaped form of s[0..n) to dst (capacity cap, kept
 * NUL-terminated, *pos its length). avail >= n is how many bytes follow s in
 * its buffer, so a UTF-8 sequence that starts inside the window is kept whole.
 * Stops before a piece that does not fit. Returns the number of input bytes
 * consumed. */
static size_t esc_append(char *dst, size_t cap, size_t *pos, const char *s, size_t n, size_t avail)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		char tmp[8];
		size_t tl, adv = 1;
		unsigned c = u[i];
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			tmp[0] = (char)c;
			tl = 1;
		} else if (c == '\\' || c == '\n' || c == '\t' || c == '\r') {
			tmp[0] = '\\';
			tmp[1] = c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
			tl = 2;
		} else if (c >= 0x80 && (adv = utf8_seq_len(u + i, avail - i))) {
			memcpy(tmp, u + i, adv);
			tl = adv;
		} else {
			adv = 1;
			tl = (size_t)snprintf(tmp, sizeof(tmp), "\\x%02x", c);
		}
		if (*pos + tl + 1 > cap)
			break;
		memcpy(dst + *pos, tmp, tl);
		*pos += tl;
		dst[*pos] = 0;
		i += adv;
	}
	return i;
}

/* Writes an escaped window of s (len bytes) into dst: from up to `before` bytes
 * ahead of pos (not before lo) to at most hi, "..." marking cuts. The start is
 * moved back onto the first byte of a UTF-8 sequence. */
void compare_snippet(char *dst, size_t cap, const char *s, size_t len, size_t lo, size_t pos,
		     size_t hi, size_t before)
{
	size_t start = pos > lo + before ? pos - before : lo;
	for (int k = 0; k < 3 && start > lo && ((unsigned char)s[start] & 0xc0) == 0x80; k++)
		start--;
	if (hi > len)
		hi = len;
	if (hi < start)
		hi = start;
	size_t p = 0;
	dst[0] = 0;
	if (cap < 8)
		return;
	if (start > lo) {
		memcpy(dst, "...", 4);
		p = 3;
	}
	size_t used = esc_append(dst, cap - 3, &p, s + start, hi - start, len - start);
	if (start + used < hi)
		memcpy(dst + p, "...", 4);
}

/* Short escaped copy of a whole piece (a token), cut with "..." when long. */
void compare_piece(char *dst, size_t cap, const char *s, size_t n)
{
	compare_snippet(dst, cap, s, n, 0, 0, n, 0);
}

/* Cuts s at the first byte that does not start a valid UTF-8 sequence; only
 * truncation by snprintf can leave one, everything else was escaped. */
static void utf8_trim(char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		size_t l = utf8_seq_len((const unsigned char *)s + i, n - i);
		if (!l) {
			s[i] = 0;
			return;
		}
		i += l;
	}
}

void compare_fb_msg(struct compare_feedback *fb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(fb->message, sizeof(fb->message), fmt, ap);
	va_end(ap);
	utf8_trim(fb->message);
}

void compare_line_col(const char *s, size_t pos, long *line, long *col)
{
	long ln = 1;
	const char *p = s, *end = s + pos, *q;
	while (p < end && (q = memchr(p, '\n', (size_t)(end - p)))) {
		ln++;
		p = q + 1;
	}
	*line = ln;
	*col = (long)(end - p) + 1;
}

size_t compare_line_start(const char *s, size_t pos)
{
	while (pos > 0 && s[pos - 1] != '\n')
		pos--;
	return pos;
}

/* End of the line holding pos, plus its newline, capped at pos + SNIP_AFTER. */
size_t compare_window_end(const char *s, size_t len, size_t pos)
{
	size_t cap = len - pos > SNIP_AFTER ? pos + SNIP_AFTER : len;
	const char *nl = memchr(s + pos, '\n', cap - pos);
	return nl ? (size_t)(nl - s) + 1 : cap;
}

/* End of the line holding pos (its newline excluded), capped at pos +
 * SNIP_AFTER. */
size_t compare_line_window_end(const char *s, size_t len, size_t pos)
{
	size_t end = compare_window_end(s, len, pos);
	return end > pos && s[end - 1] == '\n' ? end - 1 : end;
}

/* Moves the offset j of a first difference (a[0..j) == b[0..j)) back to the
 * first byte of the character it falls in, so columns and snippets point at
 * whole characters: for é vs è the difference is at the C3, not at A9/A8. */
static size_t char_start(const char *a, size_t an, const char *b, size_t bn, size_t j)
{
	for (int k = 0; k < 3 && j > 0 && (compare_is_cont(a, an, j) || compare_is_cont(b, bn, j));
	     k++)
		j--;
	return j;
}

/* Strips trailing whitespace (newlines included) from a buffer length. */
size_t compare_rstrip_all(const char *s, size_t n)
{
	while (n && compare_is_ws((unsigned char)s[n - 1]))
		n--;
	return n;
}

/* Strips trailing line whitespace: everything is_ws but LF. */
size_t compare_rstrip_line(const char *s, size_t n)
{
	while (n && s[n - 1] != '\n' && compare_is_ws((unsigned char)s[n - 1]))
		n--;
	return n;
}

static long count_lines(const char *s, size_t n)
{
	long c = n ? 1 : 0;
	for (const char *p = s, *end = s + n, *q;
	     p < end && (q = memchr(p, '\n', (size_t)(end - p))); p = q + 1)
		c++;
	return c;
}

/* ---- float tokens ---- */

/* True when s[0..n) is a decimal float, [+-](d+[.d*]|.d+)([eE][+-]?d+)?, whose
 * value is finite as a double (stored in *out). nan, inf and hex are not
 * floats. Does its own digit handling so tokens need not be NUL-terminated,
 * long tokens cost linear time, and the locale's decimal point does not matter.
 */
bool compare_parse_float(const char *s, size_t n, double *out)
{
	size_t i = 0;
	bool neg = false;
	if (i < n && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	size_t is = i;
	while (i < n && is_digit(s[i]))
		i++;
	size_t ie = i, fs = i, fe = i;
	if (i < n && s[i] == '.') {
		fs = ++i;
		while (i < n && is_digit(s[i]))
			i++;
		fe = i;
	}
	if (ie == is && fe == fs)
		return false;
	long long ex = 0;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		bool eneg = false;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			eneg = s[i++] == '-';
		size_t es = i;
		for (; i < n && is_digit(s[i]); i++) {
			if (ex < 1000000000LL)
				ex = ex * 10 + (s[i] - '0');
		}
		if (i == es)
			return false;
		if (eneg)
			ex = -ex;
	}
	if (i != n)
		return false;

	/* value = (integer and fraction digits as one integer) * 10^e10 */
	char buf[FLOAT_MAX_DIGITS + 32];
	size_t m = 0, ndig = 0;
	bool sticky = false;
	uint64_t mant = 0;
	long long e10 = ex - (long long)(fe - fs);
	buf[m++] = neg ? '-' : '+';
	for (int part = 0; part < 2; part++) {
		size_t a = part ? fs : is, b = part ? fe : ie;
		for (size_t k = a; k < b; k++) {
			if (!ndig && s[k] == '0')
				continue;
			if (ndig < FLOAT_MAX_DIGITS) {
				buf[m++] = s[k];
				if (ndig < 19)
					mant = mant * 10 + (uint64_t)(s[k] - '0');
				ndig++;
			} else {
				e10++;
				sticky |= s[k] != '0';
			}
		}
	}
	if (!ndig) {
		*out = neg ? -0.0 : 0.0;
		return true;
	}
	/* Clinger's fast path: both factors exact doubles, one rounding */
	static const double pow10[] = {1e0,  1e1,  1e2,	 1e3,  1e4,  1e5,  1e6,	 1e7,
				       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	if (ndig <= 15 && e10 >= -22 && e10 <= 22) {
		double v = (double)mant;
		v = e10 < 0 ? v / pow10[-e10] : v * pow10[e10];
		*out = neg ? -v : v;
		return true;
	}
	if (sticky) {
		buf[m++] = '1';
		e10--;
	}
	if (e10 > 100000)
		e10 = 100000;
	if (e10 < -100000)
		e10 = -100000;
	buf[m++] = 'e';
	if (e10 < 0) {
		buf[m++] = '-';
		e10 = -e10;
	}
	char digits[8];
	int nd = 0;
	do
		digits[nd++] = (char)('0' + e10 % 10);
	while (e10 /= 10);
	while (nd)
		buf[m++] = digits[--nd];
	buf[m] = 0;
	double v = strtod(buf, NULL);
	if (!isfinite(v))
		return false;
	*out = v;
	return true;
}

bool compare_within_tol(const struct compare_options *o, double j, double t)
{
	double d = fabs(j - t);
	return d <= o->float_abs_tol || d <= o->float_rel_tol * fabs(j);
}

static bool bytes_equal_fold(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (compare_fold((unsigned char)a[i]) != compare_fold((unsigned char)b[i]))
			return false;
	}
	return true;
}

/* ---- flags ---- */

static bool parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	if (!is_digit(*s))
		return false;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || errno || v == 0 || v > max)
		return false;
	*out = v;
	return true;
}

int compare_parse_flags(struct compare_options *o, int argc, const char *const *argv, char *err,
			size_t errlen)
{
	char q[64];
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool tol_abs = !strcmp(a, "float_absolute_tolerance");
		bool tol_rel = !strcmp(a, "float_relative_tolerance");
		bool tol_both = !strcmp(a, "float_tolerance");
		unsigned long *lim = NULL, max = 0;
		if (!strcmp(a, "regex_match_limit"))
			lim = &o->regex_match_limit, max = CMP_REGEX_MAX_MATCH_LIMIT;
		else if (!strcmp(a, "regex_depth_limit"))
			lim = &o->regex_depth_limit, max = CMP_REGEX_MAX_DEPTH_LIMIT;
		else if (!strcmp(a, "regex_heap_limit_kib"))
			lim = &o->regex_heap_limit_kib, max = CMP_REGEX_MAX_HEAP_LIMIT_KIB;
		if (!strcmp(a, "case_sensitive")) {
			o->case_sensitive = true;
		} else if (!strcmp(a, "space_change_sensitive")) {
			o->space_change_sensitive = true;
		} else if (!strcmp(a, "unordered_tokens")) {
			o->unordered_tokens = true;
		} else if (tol_abs || tol_rel || tol_both || lim) {
			if (i + 1 >= argc) {
				snprintf(err, errlen, "flag '%s' needs a value", a);
				return -1;
			}
			const char *v = argv[++i];
			double d = 0;
			unsigned long u = 0;
			bool ok = lim ? parse_ulong(v, max, &u)
				      : compare_parse_float(v, strlen(v), &d) && d >= 0;
			if (!ok) {
				compare_piece(q, sizeof(q), v, strlen(v));
				if (lim)
					snprintf(
					    err, errlen,
					    "bad value '%s' for '%s' (an integer from 1 to %lu)", q,
					    a, max);
				else
					snprintf(err, errlen,
						 "bad value '%s' for '%s' (a finite number >= 0)",
						 q, a);
				return -1;
			}
			if (lim)
				*lim = u;
			if (tol_abs || tol_both)
				o->float_abs_tol = d;
			if (tol_rel || tol_both)
				o->float_rel_tol = d;
		} else {
			compare_piece(q, sizeof(q), a, strlen(a));
			snprintf(err, errlen, "unknown comparison flag '%s'", q);
			return -1;
		}
	}
	return 0;
}

/* ---- exact ---- */

static enum compare_outcome cmp_exact(const char *e, size_t en, const char *g, size_t gn,
				      struct compare_feedback *fb)
{
	size_t n = en < gn ? en : gn, i = 0;
	/* memcmp by blocks finds the block quickly; then bytewise */
	while (i + 4096 <= n && !memcmp(e + i, g + i, 4096))
		i += 4096;
	while (i < n && e[i] == g[i])
		i++;
	if (i == en && i == gn)
		return CMP_MATCH;
	i = char_start(e, en, g, gn, i);
	compare_line_col(g, i, &fb->line, &fb->column);
	long ecol;
	compare_line_col(e, i, &fb->expected_line, &ecol);
	compare_snippet(fb->expected, sizeof(fb->expected), e, en, compare_line_start(e, i), i,
			i < en ? compare_window_end(e, en, i) : en, SNIP_BEFORE);
	compare_snippet(fb->got, sizeof(fb->got), g, gn, compare_line_start(g, i), i,
			i < gn ? compare_window_end(g, gn, i) : gn, SNIP_BEFORE);
	char es[48], gs[48];
	if (i == gn) {
		compare_snippet(es, sizeof(es), e, en, i, i, en, 0);
		compare_fb_msg(fb,
			       "line %ld, column %ld: output ended early: expected %zu more "
			       "bytes ('%s')",
			       fb->line, fb->column, en - i, es);
	} else if (i == en) {
		compare_snippet(gs, sizeof(gs), g, gn, i, i, gn, 0);
		compare_fb_msg(fb,
			       "line %ld, column %ld: extra output after the expected end: '%s'",
			       fb->line, fb->column, gs);
	} else {
		compare_snippet(es, sizeof(es), e, en, i, i, compare_window_end(e, en, i), 0);
		compare_snippet(gs, sizeof(gs), g, gn, i, i, compare_window_end(g, gn, i), 0);
		compare_fb_msg(fb, "line %ld, column %ld: expected '%s', got '%s'", fb->line,
			       fb->column, es, gs);
	}
	return CMP_DIFFER;
}

/* ---- lines ---- */

static enum compare_outcome cmp_lines(const char *e, size_t en, const char *g, size_t gn,
				      struct compare_feedback *fb)
{
	size_t eend = compare_rstrip_all(e, en), gend = compare_rstrip_all(g, gn);
	size_t ei = 0, gi = 0;
	char es[48], gs[48];
	for (long line = 1;; line++) {
		bool edone = ei >= eend, gdone = gi >= gend;
		if (edone && gdone)
			return CMP_MATCH;
		fb->line = fb->expected_line = line;
		fb->column = 1;
		if (gdone) {
			long more = count_lines(e + ei, eend - ei);
			compare_snippet(fb->expected, sizeof(fb->expected), e, en, ei, ei,
					compare_line_window_end(e, en, ei), 0);
			compare_snippet(es, sizeof(es), e, en, ei, ei,
					compare_line_window_end(e, en, ei), 0);
			compare_fb_msg(
			    fb, "output ended early: expected %ld more line%s, from line %ld: '%s'",
			    more, more == 1 ? "" : "s", line, es);
			return CMP_DIFFER;
		}
		if (edone) {
			long more = count_lines(g + gi, gend - gi);
			compare_snippet(fb->got, sizeof(fb->got), g, gn, gi, gi,
					compare_line_window_end(g, gn, gi), 0);
			compare_snippet(gs, sizeof(gs), g, gn, gi, gi,
					compare_line_window_end(g, gn, gi), 0);
			compare_fb_msg(
			    fb,
			    "extra output after the expected end: %ld more line%s, from line "
			    "%ld: '%s'",
			    more, more == 1 ? "" : "s", line, gs);
			return CMP_DIFFER;
		}
		const char *enl = memchr(e + ei, '\n', eend - ei);
		const char *gnl = memchr(g + gi, '\n', gend - gi);
		size_t eeol = enl ? (size_t)(enl - e) : eend, geol = gnl ? (size_t)(gnl - g) : gend;
		size_t el = compare_rstrip_line(e + ei, eeol - ei),
		       gl = compare_rstrip_line(g + gi, geol - gi);
		size_t n = el < gl ? el : gl, j = 0;
		while (j < n && e[ei + j] == g[gi + j])
			j++;
		if (j == el && j == gl) {
			ei = eeol + 1;
			gi = geol + 1;
			continue;
		}
		j = char_start(e + ei, el, g + gi, gl, j);
		fb->column = (long)j + 1;
		size_t ehi = ei + el - j > SNIP_AFTER ? ei + j + SNIP_AFTER : ei + el;
		size_t ghi = gi + gl - j > SNIP_AFTER ? gi + j + SNIP_AFTER : gi + gl;
		compare_snippet(fb->expected, sizeof(fb->expected), e, en, ei, ei + j, ehi,
				SNIP_BEFORE);
		compare_snippet(fb->got, sizeof(fb->got), g, gn, gi, gi + j, ghi, SNIP_BEFORE);
		compare_snippet(es, sizeof(es), e, en, ei + j, ei + j, ei + el, 0);
		compare_snippet(gs, sizeof(gs), g, gn, gi + j, gi + j, gi + gl, 0);
		if (j == gl)
			compare_fb_msg(
			    fb, "line %ld, column %ld: expected '%s', got the end of the line",
			    line, fb->column, es);
		else if (j == el)
			compare_fb_msg(
			    fb, "line %ld, column %ld: expected the end of the line, got '%s'",
			    line, fb->column, gs);
		else
			compare_fb_msg(fb, "line %ld, column %ld: expected '%s', got '%s'", line,
				       fb->column, es, gs);
		return CMP_DIFFER;
	}
}

/* ---- tokens ---- */

struct tokpos {
	const char *s;
	size_t n, i;
	long line;
	size_t line_start;
};

static void tp_advance_ws(struct tokpos *t)
{
	if (t->s[t->i] == '\n') {
		t->line++;
		t->line_start = t->i + 1;
	}
	t->i++;
}

static void tp_skip_ws(struct tokpos *t)
{
	while (t->i < t->n && compare_is_ws((unsigned char)t->s[t->i]))
		tp_advance_ws(t);
}

static size_t tp_token_end(const struct tokpos *t)
{
	size_t j = t->i;
	while (j < t->n && !compare_is_ws((unsigned char)t->s[j]))
		j++;
	return j;
}

enum tok_result { TOK_OK, TOK_STRING, TOK_NOT_FLOAT, TOK_FAR };

static enum tok_result tok_check(const struct compare_options *o, const char *a, size_t an,
				 const char *b, size_t bn, double *jv, double *tv)
{
	if (an == bn && !memcmp(a, b, an))
		return TOK_OK;
	if (compare_use_floats(o) && compare_parse_float(a, an, jv)) {
		if (!compare_parse_float(b, bn, tv))
			return TOK_NOT_FLOAT;
		return compare_within_tol(o, *jv, *tv) ? TOK_OK : TOK_FAR;
	}
	if (o->case_sensitive || an != bn)
		return TOK_STRING;
	return bytes_equal_fold(a, b, an) ? TOK_OK : TOK_STRING;
}

static void tok_where(struct compare_feedback *fb, const struct tokpos *e, const struct tokpos *g,
		      long tok)
{
	fb->line = g->line;
	fb->column = (long)(g->i - g->line_start) + 1;
	fb->expected_line = e->line;
	fb->token = tok;
}

static enum compare_outcome tok_space_differ(const struct tokpos *e, const struct tokpos *g,
					     long tok, struct compare_feedback *fb)
{
	char es[48], gs[48];
	tok_where(fb, e, g, tok);
	compare_snippet(fb->expected, sizeof(fb->expected), e->s, e->n, e->line_start, e->i,
			compare_window_end(e->s, e->n, e->i), SNIP_BEFORE);
	compare_snippet(fb->got, sizeof(fb->got), g->s, g->n, g->line_start, g->i,
			compare_window_end(g->s, g->n, g->i), SNIP_BEFORE);
	if (e->i < e->n)
		compare_snippet(es, sizeof(es), e->s, e->n, e->i, e->i, e->i + 1, 0);
	if (g->i < g->n)
		compare_snippet(gs, sizeof(gs), g->s, g->n, g->i, g->i, g->i + 1, 0);
	bool e_ws = e->i < e->n && compare_is_ws((unsigned char)e->s[e->i]);
	compare_fb_msg(fb,
		       "line %ld, column %ld: whitespace differs "
		       "(space_change_sensitive): expected "
		       "%s%s%s, got %s%s%s",
		       fb->line, fb->column, e_ws ? "'" : "", e_ws ? es : "no whitespace",
		       e_ws ? "'" : "", g->i < g->n ? "'" : "",
		       g->i < g->n ? gs : "the end of the output", g->i < g->n ? "'" : "");
	return CMP_DIFFER;
}

static enum compare_outcome cmp_tokens(const struct compare_options *o, const char *es_, size_t en,
				       const char *gs_, size_t gn, struct compare_feedback *fb)
{
	struct tokpos e = {es_, en, 0, 1, 0}, g = {gs_, gn, 0, 1, 0};
	char es[48], gs[48];
	long tok = 0;
	for (;;) {
		if (o->space_change_sensitive) {
			while (e.i < e.n && compare_is_ws((unsigned char)e.s[e.i])) {
				if (g.i >= g.n || g.s[g.i] != e.s[e.i])
					return tok_space_differ(&e, &g, tok + 1, fb);
				tp_advance_ws(&e);
				tp_advance_ws(&g);
			}
			if (g.i < g.n && compare_is_ws((unsigned char)g.s[g.i]))
				return tok_space_differ(&e, &g, tok + 1, fb);
		} else {
			tp_skip_ws(&e);
			tp_skip_ws(&g);
		}
		if (e.i >= e.n)
			break;
		tok++;
		size_t ee = tp_token_end(&e);
		if (g.i >= g.n) {
			tok_where(fb, &e, &g, tok);
			compare_piece(fb->expected, sizeof(fb->expected), e.s + e.i, ee - e.i);
			compare_piece(es, sizeof(es), e.s + e.i, ee - e.i);
			compare_fb_msg(
			    fb,
			    "output ended early: expected token %ld '%s' (line %ld of the "
			    "expected output)%s",
			    tok, es, e.line, tok == 1 ? "; the output has no tokens" : "");
			return CMP_DIFFER;
		}
		size_t ge = tp_token_end(&g);
		double jv = 0, tv = 0;
		enum tok_result r =
		    tok_check(o, e.s + e.i, ee - e.i, g.s + g.i, ge - g.i, &jv, &tv);
		if (r != TOK_OK) {
			tok_where(fb, &e, &g, tok);
			compare_piece(fb->expected, sizeof(fb->expected), e.s + e.i, ee - e.i);
			compare_piece(fb->got, sizeof(fb->got), g.s + g.i, ge - g.i);
			compare_piece(es, sizeof(es), e.s + e.i, ee - e.i);
			compare_piece(gs, sizeof(gs), g.s + g.i, ge - g.i);
			if (r == TOK_STRING)
				compare_fb_msg(
				    fb, "line %ld, column %ld, token %ld: expected '%s', got '%s'",
				    fb->line, fb->column, tok, es, gs);
			else if (r == TOK_NOT_FLOAT)
				compare_fb_msg(
				    fb,
				    "line %ld, column %ld, token %ld: expected a number near "
				    "'%s', got '%s'",
				    fb->line, fb->column, tok, es, gs);
			else
				compare_fb_msg(
				    fb,
				    "line %ld, column %ld, token %ld: expected '%s', got '%s': "
				    "difference %.3g is above the tolerance (absolute %.3g, "
				    "relative %.3g)",
				    fb->line, fb->column, tok, es, gs, fabs(jv - tv),
				    o->float_abs_tol < 0 ? 0 : o->float_abs_tol,
				    o->float_rel_tol < 0 ? 0 : o->float_rel_tol);
			return CMP_DIFFER;
		}
		e.i = ee;
		g.i = ge;
	}
	if (!o->space_change_sensitive)
		tp_skip_ws(&g);
	if (g.i < g.n) {
		size_t ge = tp_token_end(&g);
		fb->expected[0] = 0;
		tok_where(fb, &e, &g, tok + 1);
		compare_piece(fb->got, sizeof(fb->got), g.s + g.i, ge - g.i);
		compare_piece(gs, sizeof(gs), g.s + g.i, ge - g.i);
		compare_fb_msg(fb,
			       "line %ld, column %ld: extra output after the expected end: "
			       "token %ld '%s'",
			       fb->line, fb->column, tok + 1, gs);
		return CMP_DIFFER;
	}
	return CMP_MATCH;
}

enum compare_outcome compare_outputs(const struct compare_options *o, const char *expected,
				     size_t expected_len, const char *got, size_t got_len,
				     struct compare_feedback *fb)
{
	memset(fb, 0, sizeof(*fb));
	/* memchr and memcmp must not see NULL, even with a length of 0 */
	if (!expected)
		expected = "", expected_len = 0;
	if (!got)
		got = "", got_len = 0;
	switch (o->mode) {
	case CMP_EXACT:
		return cmp_exact(expected, expected_len, got, got_len, fb);
	case CMP_LINES:
		return cmp_lines(expected, expected_len, got, got_len, fb);
	case CMP_TOKENS:
		return cmp_tokens(o, expected, expected_len, got, got_len, fb);
	case CMP_UNORDERED:
		return compare_unordered(o, expected, expected_len, got, got_len, fb);
	case CMP_REGEX:
		return compare_regex(o, expected, expected_len, got, got_len, fb);
	case CMP_CHECKER:
		compare_fb_msg(fb,
			       "checker comparison is run by the grader, not by compare_outputs");
		return CMP_ERROR;
	}
	compare_fb_msg(fb, "unknown comparison mode %d", (int)o->mode);
	return CMP_ERROR;
}
