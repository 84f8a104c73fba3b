/* compare: exact, lines, tokens (ICPC default validator), unordered and regex comparison.
 *
 * How it works: exact, lines and tokens walk both buffers once, side by side,
 * and stop at the first difference, so they need no memory beyond the inputs
 * and a few hundred bytes of stack. Unordered collects (pointer, length, hash)
 * per line or token and sorts both sides. Regex hands the whole output to
 * PCRE2 with match, depth and heap limits; on a mismatch a binary search with
 * partial matching finds how far the output could still have matched.
 * Feedback strings are escaped (control bytes, backslash, invalid UTF-8) so
 * they are always valid UTF-8 and never split a character.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "compare.h"

#include <math.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* Snippet window: bytes shown before and after the difference. */
#define SNIP_BEFORE 24
#define SNIP_AFTER  48
/* Significant digits kept when converting a float token: 767 are enough for a
 * correctly rounded double, the rest only needs a sticky digit. */
#define FLOAT_MAX_DIGITS 780
/* Below this many items a comparison sort beats two passes over 64 Ki counters. */
#define RADIX_MIN 50000

static const char *const mode_names[] = {
    [CMP_EXACT] = "exact",	   [CMP_LINES] = "lines", [CMP_TOKENS] = "tokens",
    [CMP_UNORDERED] = "unordered", [CMP_REGEX] = "regex", [CMP_CHECKER] = "checker",
};

void cmp_opts_init(struct cmp_opts *o, enum cmp_mode mode)
{
	memset(o, 0, sizeof(*o));
	o->mode = mode;
	o->float_abs_tol = -1;
	o->float_rel_tol = -1;
}

int cmp_mode_parse(const char *s, enum cmp_mode *out)
{
	for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
		if (!strcmp(s, mode_names[i])) {
			*out = (enum cmp_mode)i;
			return 0;
		}
	}
	return -1;
}

const char *cmp_mode_name(enum cmp_mode m)
{
	if ((unsigned)m >= sizeof(mode_names) / sizeof(mode_names[0]))
		return "unknown";
	return mode_names[m];
}

/* The ICPC validator's isspace() in the C locale. */
static inline bool is_ws(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline unsigned char fold(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* ---- escaping and feedback ---- */

/* Appends the escaped form of s[0..n) to dst (capacity cap, kept NUL-terminated,
 * *pos its length). avail >= n is how many bytes follow s in its buffer, so a
 * UTF-8 sequence that starts inside the window is kept whole. Stops before a
 * piece that does not fit. Returns the number of input bytes consumed. */
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
static void snippet(char *dst, size_t cap, const char *s, size_t len, size_t lo, size_t pos,
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
static void piece(char *dst, size_t cap, const char *s, size_t n)
{
	snippet(dst, cap, s, n, 0, 0, n, 0);
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

static void fb_msg(struct cmp_feedback *fb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void fb_msg(struct cmp_feedback *fb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(fb->message, sizeof(fb->message), fmt, ap);
	va_end(ap);
	utf8_trim(fb->message);
}

static void line_col(const char *s, size_t pos, long *line, long *col)
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

static size_t line_start(const char *s, size_t pos)
{
	while (pos > 0 && s[pos - 1] != '\n')
		pos--;
	return pos;
}

/* End of the line holding pos, plus its newline, capped at pos + SNIP_AFTER. */
static size_t window_end(const char *s, size_t len, size_t pos)
{
	size_t cap = len - pos > SNIP_AFTER ? pos + SNIP_AFTER : len;
	const char *nl = memchr(s + pos, '\n', cap - pos);
	return nl ? (size_t)(nl - s) + 1 : cap;
}

/* End of the line holding pos (its newline excluded), capped at pos + SNIP_AFTER. */
static size_t line_window_end(const char *s, size_t len, size_t pos)
{
	size_t end = window_end(s, len, pos);
	return end > pos && s[end - 1] == '\n' ? end - 1 : end;
}

static inline bool is_cont(const char *s, size_t n, size_t i)
{
	return i < n && ((unsigned char)s[i] & 0xc0) == 0x80;
}

/* Moves the offset j of a first difference (a[0..j) == b[0..j)) back to the
 * first byte of the character it falls in, so columns and snippets point at
 * whole characters: for é vs è the difference is at the C3, not at A9/A8. */
static size_t char_start(const char *a, size_t an, const char *b, size_t bn, size_t j)
{
	for (int k = 0; k < 3 && j > 0 && (is_cont(a, an, j) || is_cont(b, bn, j)); k++)
		j--;
	return j;
}

/* Strips trailing whitespace (newlines included) from a buffer length. */
static size_t rstrip_all(const char *s, size_t n)
{
	while (n && is_ws((unsigned char)s[n - 1]))
		n--;
	return n;
}

/* Strips trailing line whitespace: everything is_ws but LF. */
static size_t rstrip_line(const char *s, size_t n)
{
	while (n && s[n - 1] != '\n' && is_ws((unsigned char)s[n - 1]))
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
 * value is finite as a double (stored in *out). nan, inf and hex are not floats.
 * Does its own digit handling so tokens need not be NUL-terminated, long tokens
 * cost linear time, and the locale's decimal point does not matter. */
static bool parse_float(const char *s, size_t n, double *out)
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

static bool use_floats(const struct cmp_opts *o)
{
	return o->float_abs_tol >= 0 || o->float_rel_tol >= 0;
}

static bool within_tol(const struct cmp_opts *o, double j, double t)
{
	double d = fabs(j - t);
	return d <= o->float_abs_tol || d <= o->float_rel_tol * fabs(j);
}

static bool bytes_equal_fold(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (fold((unsigned char)a[i]) != fold((unsigned char)b[i]))
			return false;
	}
	return true;
}

/* ---- flags ---- */

static bool parse_ulong(const char *s, unsigned long *out)
{
	char *end;
	if (!is_digit(*s))
		return false;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || v == 0)
		return false;
	*out = v;
	return true;
}

int cmp_parse_flags(struct cmp_opts *o, int argc, const char *const *argv, char *err, size_t errlen)
{
	char q[64];
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool tol_abs = !strcmp(a, "float_absolute_tolerance");
		bool tol_rel = !strcmp(a, "float_relative_tolerance");
		bool tol_both = !strcmp(a, "float_tolerance");
		unsigned long *lim = !strcmp(a, "regex_match_limit")	  ? &o->regex_match_limit
				     : !strcmp(a, "regex_depth_limit")	  ? &o->regex_depth_limit
				     : !strcmp(a, "regex_heap_limit_kib") ? &o->regex_heap_limit_kib
									  : NULL;
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
			bool ok =
			    lim ? parse_ulong(v, &u) : parse_float(v, strlen(v), &d) && d >= 0;
			if (!ok) {
				piece(q, sizeof(q), v, strlen(v));
				snprintf(err, errlen, "bad value '%s' for '%s' (%s)", q, a,
					 lim ? "a positive integer" : "a finite number >= 0");
				return -1;
			}
			if (lim)
				*lim = u;
			if (tol_abs || tol_both)
				o->float_abs_tol = d;
			if (tol_rel || tol_both)
				o->float_rel_tol = d;
		} else {
			piece(q, sizeof(q), a, strlen(a));
			snprintf(err, errlen, "unknown comparison flag '%s'", q);
			return -1;
		}
	}
	return 0;
}

/* ---- exact ---- */

static enum cmp_outcome cmp_exact(const char *e, size_t en, const char *g, size_t gn,
				  struct cmp_feedback *fb)
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
	line_col(g, i, &fb->line, &fb->column);
	long ecol;
	line_col(e, i, &fb->expected_line, &ecol);
	snippet(fb->expected, sizeof(fb->expected), e, en, line_start(e, i), i,
		i < en ? window_end(e, en, i) : en, SNIP_BEFORE);
	snippet(fb->got, sizeof(fb->got), g, gn, line_start(g, i), i,
		i < gn ? window_end(g, gn, i) : gn, SNIP_BEFORE);
	char es[48], gs[48];
	if (i == gn) {
		snippet(es, sizeof(es), e, en, i, i, en, 0);
		fb_msg(fb,
		       "line %ld, column %ld: output ended early: expected %zu more bytes ('%s')",
		       fb->line, fb->column, en - i, es);
	} else if (i == en) {
		snippet(gs, sizeof(gs), g, gn, i, i, gn, 0);
		fb_msg(fb, "line %ld, column %ld: extra output after the expected end: '%s'",
		       fb->line, fb->column, gs);
	} else {
		snippet(es, sizeof(es), e, en, i, i, window_end(e, en, i), 0);
		snippet(gs, sizeof(gs), g, gn, i, i, window_end(g, gn, i), 0);
		fb_msg(fb, "line %ld, column %ld: expected '%s', got '%s'", fb->line, fb->column,
		       es, gs);
	}
	return CMP_DIFFER;
}

/* ---- lines ---- */

static enum cmp_outcome cmp_lines(const char *e, size_t en, const char *g, size_t gn,
				  struct cmp_feedback *fb)
{
	size_t eend = rstrip_all(e, en), gend = rstrip_all(g, gn);
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
			snippet(fb->expected, sizeof(fb->expected), e, en, ei, ei,
				line_window_end(e, en, ei), 0);
			snippet(es, sizeof(es), e, en, ei, ei, line_window_end(e, en, ei), 0);
			fb_msg(fb,
			       "output ended early: expected %ld more line%s, from line %ld: '%s'",
			       more, more == 1 ? "" : "s", line, es);
			return CMP_DIFFER;
		}
		if (edone) {
			long more = count_lines(g + gi, gend - gi);
			snippet(fb->got, sizeof(fb->got), g, gn, gi, gi, line_window_end(g, gn, gi),
				0);
			snippet(gs, sizeof(gs), g, gn, gi, gi, line_window_end(g, gn, gi), 0);
			fb_msg(fb,
			       "extra output after the expected end: %ld more line%s, from line "
			       "%ld: '%s'",
			       more, more == 1 ? "" : "s", line, gs);
			return CMP_DIFFER;
		}
		const char *enl = memchr(e + ei, '\n', eend - ei);
		const char *gnl = memchr(g + gi, '\n', gend - gi);
		size_t eeol = enl ? (size_t)(enl - e) : eend, geol = gnl ? (size_t)(gnl - g) : gend;
		size_t el = rstrip_line(e + ei, eeol - ei), gl = rstrip_line(g + gi, geol - gi);
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
		snippet(fb->expected, sizeof(fb->expected), e, en, ei, ei + j, ehi, SNIP_BEFORE);
		snippet(fb->got, sizeof(fb->got), g, gn, gi, gi + j, ghi, SNIP_BEFORE);
		snippet(es, sizeof(es), e, en, ei + j, ei + j, ei + el, 0);
		snippet(gs, sizeof(gs), g, gn, gi + j, gi + j, gi + gl, 0);
		if (j == gl)
			fb_msg(fb, "line %ld, column %ld: expected '%s', got the end of the line",
			       line, fb->column, es);
		else if (j == el)
			fb_msg(fb, "line %ld, column %ld: expected the end of the line, got '%s'",
			       line, fb->column, gs);
		else
			fb_msg(fb, "line %ld, column %ld: expected '%s', got '%s'", line,
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
	while (t->i < t->n && is_ws((unsigned char)t->s[t->i]))
		tp_advance_ws(t);
}

static size_t tp_token_end(const struct tokpos *t)
{
	size_t j = t->i;
	while (j < t->n && !is_ws((unsigned char)t->s[j]))
		j++;
	return j;
}

enum tok_result { TOK_OK, TOK_STRING, TOK_NOT_FLOAT, TOK_FAR };

static enum tok_result tok_check(const struct cmp_opts *o, const char *a, size_t an, const char *b,
				 size_t bn, double *jv, double *tv)
{
	if (an == bn && !memcmp(a, b, an))
		return TOK_OK;
	if (use_floats(o) && parse_float(a, an, jv)) {
		if (!parse_float(b, bn, tv))
			return TOK_NOT_FLOAT;
		return within_tol(o, *jv, *tv) ? TOK_OK : TOK_FAR;
	}
	if (o->case_sensitive || an != bn)
		return TOK_STRING;
	return bytes_equal_fold(a, b, an) ? TOK_OK : TOK_STRING;
}

static void tok_where(struct cmp_feedback *fb, const struct tokpos *e, const struct tokpos *g,
		      long tok)
{
	fb->line = g->line;
	fb->column = (long)(g->i - g->line_start) + 1;
	fb->expected_line = e->line;
	fb->token = tok;
}

static enum cmp_outcome tok_space_differ(const struct tokpos *e, const struct tokpos *g, long tok,
					 struct cmp_feedback *fb)
{
	char es[48], gs[48];
	tok_where(fb, e, g, tok);
	snippet(fb->expected, sizeof(fb->expected), e->s, e->n, e->line_start, e->i,
		window_end(e->s, e->n, e->i), SNIP_BEFORE);
	snippet(fb->got, sizeof(fb->got), g->s, g->n, g->line_start, g->i,
		window_end(g->s, g->n, g->i), SNIP_BEFORE);
	if (e->i < e->n)
		snippet(es, sizeof(es), e->s, e->n, e->i, e->i, e->i + 1, 0);
	if (g->i < g->n)
		snippet(gs, sizeof(gs), g->s, g->n, g->i, g->i, g->i + 1, 0);
	bool e_ws = e->i < e->n && is_ws((unsigned char)e->s[e->i]);
	fb_msg(fb,
	       "line %ld, column %ld: whitespace differs (space_change_sensitive): expected "
	       "%s%s%s, got %s%s%s",
	       fb->line, fb->column, e_ws ? "'" : "", e_ws ? es : "no whitespace", e_ws ? "'" : "",
	       g->i < g->n ? "'" : "", g->i < g->n ? gs : "the end of the output",
	       g->i < g->n ? "'" : "");
	return CMP_DIFFER;
}

static enum cmp_outcome cmp_tokens(const struct cmp_opts *o, const char *es_, size_t en,
				   const char *gs_, size_t gn, struct cmp_feedback *fb)
{
	struct tokpos e = {es_, en, 0, 1, 0}, g = {gs_, gn, 0, 1, 0};
	char es[48], gs[48];
	long tok = 0;
	for (;;) {
		if (o->space_change_sensitive) {
			while (e.i < e.n && is_ws((unsigned char)e.s[e.i])) {
				if (g.i >= g.n || g.s[g.i] != e.s[e.i])
					return tok_space_differ(&e, &g, tok + 1, fb);
				tp_advance_ws(&e);
				tp_advance_ws(&g);
			}
			if (g.i < g.n && is_ws((unsigned char)g.s[g.i]))
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
			piece(fb->expected, sizeof(fb->expected), e.s + e.i, ee - e.i);
			piece(es, sizeof(es), e.s + e.i, ee - e.i);
			fb_msg(fb,
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
			piece(fb->expected, sizeof(fb->expected), e.s + e.i, ee - e.i);
			piece(fb->got, sizeof(fb->got), g.s + g.i, ge - g.i);
			piece(es, sizeof(es), e.s + e.i, ee - e.i);
			piece(gs, sizeof(gs), g.s + g.i, ge - g.i);
			if (r == TOK_STRING)
				fb_msg(fb,
				       "line %ld, column %ld, token %ld: expected '%s', got '%s'",
				       fb->line, fb->column, tok, es, gs);
			else if (r == TOK_NOT_FLOAT)
				fb_msg(fb,
				       "line %ld, column %ld, token %ld: expected a number near "
				       "'%s', got '%s'",
				       fb->line, fb->column, tok, es, gs);
			else
				fb_msg(fb,
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
		piece(fb->got, sizeof(fb->got), g.s + g.i, ge - g.i);
		piece(gs, sizeof(gs), g.s + g.i, ge - g.i);
		fb_msg(fb,
		       "line %ld, column %ld: extra output after the expected end: token %ld '%s'",
		       fb->line, fb->column, tok + 1, gs);
		return CMP_DIFFER;
	}
	return CMP_MATCH;
}

/* ---- unordered ---- */

struct item {
	const char *p;
	uint32_t len;
	uint32_t hash;
};

struct uside {
	const char *s;
	size_t n;
	struct item *items;
	size_t nitems;
	double *floats;
	size_t nfloats;
};

static uint32_t item_hash(const char *p, size_t n, bool ci)
{
	uint32_t h = 2166136261u; /* FNV-1a: only orders the sort, equality is checked in full */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (ci ? fold((unsigned char)p[i]) : (unsigned char)p[i])) * 16777619u;
	return h;
}

static int item_cmp_cs(const void *a_, const void *b_)
{
	const struct item *a = a_, *b = b_;
	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return memcmp(a->p, b->p, a->len);
}

static int item_cmp_ci(const void *a_, const void *b_)
{
	const struct item *a = a_, *b = b_;
	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	for (uint32_t i = 0; i < a->len; i++) {
		unsigned char x = fold((unsigned char)a->p[i]), y = fold((unsigned char)b->p[i]);
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/* Stable LSD radix sort of items by hash, two 16-bit passes; tmp holds n items
 * and count 65537 counters. Linear time, whatever the input. */
static void radix_items(struct item *items, struct item *tmp, size_t *count, size_t n)
{
	for (int sh = 0; sh <= 16; sh += 16) {
		memset(count, 0, 65537 * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[((items[i].hash >> sh) & 0xffff) + 1]++;
		for (size_t k = 1; k <= 65536; k++)
			count[k] += count[k - 1];
		for (size_t i = 0; i < n; i++)
			tmp[count[(items[i].hash >> sh) & 0xffff]++] = items[i];
		memcpy(items, tmp, n * sizeof(*items));
	}
}

static int item_sort_cs(const void *a, const void *b);
static int item_sort_ci(const void *a, const void *b);

/* Sorts items by hash, content, position. After the radix sort by hash (stable,
 * so positions stay in order) only runs of equal hashes need a comparison
 * sort, and only when their contents are out of order: rare unless someone
 * crafts FNV collisions, and then it is qsort's n log n. Returns -1 when out
 * of memory. */
static int sort_items(struct item *items, size_t n, bool ci)
{
	int (*sortcmp)(const void *, const void *) = ci ? item_sort_ci : item_sort_cs;
	if (n < RADIX_MIN) {
		qsort(items, n, sizeof(*items), sortcmp);
		return 0;
	}
	struct item *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	size_t *count = malloc(65537 * sizeof(*count));
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return -1;
	}
	radix_items(items, tmp, count, n);
	free(tmp);
	free(count);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		bool sorted = true;
		for (; j < n && items[j].hash == items[i].hash; j++)
			sorted &= sortcmp(&items[j - 1], &items[j]) < 0;
		if (!sorted)
			qsort(items + i, j - i, sizeof(*items), sortcmp);
		i = j;
	}
	return 0;
}

/* Sort order: content, then position, so equal items keep file order and the
 * reported missing or extra item is the later occurrence. */
static int item_sort_cs(const void *a, const void *b)
{
	int c = item_cmp_cs(a, b);
	const char *pa = ((const struct item *)a)->p, *pb = ((const struct item *)b)->p;
	return c ? c : (pa > pb) - (pa < pb);
}

static int item_sort_ci(const void *a, const void *b)
{
	int c = item_cmp_ci(a, b);
	const char *pa = ((const struct item *)a)->p, *pb = ((const struct item *)b)->p;
	return c ? c : (pa > pb) - (pa < pb);
}

static int double_cmp(const void *a_, const void *b_)
{
	double a = *(const double *)a_, b = *(const double *)b_;
	return (a > b) - (a < b);
}

/* Sorts finite doubles ascending: qsort when few, else an LSD radix sort on
 * their bits mapped to unsigned order (four 16-bit passes). Returns -1 when
 * out of memory. */

static int sort_doubles(double *v, size_t n)
{
	if (n < RADIX_MIN) {
		qsort(v, n, sizeof(*v), double_cmp);
		return 0;
	}
	uint64_t *key = malloc((n ? n : 1) * sizeof(*key)),
		 *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	size_t *count = malloc(65537 * sizeof(*count));
	int ret = -1;
	if (!key || !tmp || !count)
		goto out;
	for (size_t i = 0; i < n; i++) {
		uint64_t b;
		memcpy(&b, &v[i], sizeof(b));
		key[i] = b >> 63 ? ~b : b | (1ULL << 63);
	}
	for (int sh = 0; sh < 64; sh += 16) {
		memset(count, 0, 65537 * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[((key[i] >> sh) & 0xffff) + 1]++;
		for (size_t k = 1; k <= 65536; k++)
			count[k] += count[k - 1];
		for (size_t i = 0; i < n; i++)
			tmp[count[(key[i] >> sh) & 0xffff]++] = key[i];
		memcpy(key, tmp, n * sizeof(*key));
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t b = key[i] >> 63 ? key[i] & ~(1ULL << 63) : ~key[i];
		memcpy(&v[i], &b, sizeof(b));
	}
	ret = 0;
out:
	free(key);
	free(tmp);
	free(count);
	return ret;
}

/* Splits one side into items (lines or tokens), counting first so each array
 * is allocated once. Returns 0, or -1 when out of memory or an item is >= 4 GiB. */
static int uside_collect(const struct cmp_opts *o, struct uside *u, bool fill)
{
	bool tokens = o->unordered_tokens, floats = tokens && use_floats(o);
	bool ci = tokens && !o->case_sensitive;
	size_t ni = 0, nf = 0;
	if (tokens) {
		for (size_t i = 0; i < u->n;) {
			while (i < u->n && is_ws((unsigned char)u->s[i]))
				i++;
			if (i >= u->n)
				break;
			size_t j = i;
			while (j < u->n && !is_ws((unsigned char)u->s[j]))
				j++;
			double v;
			if (j - i > UINT32_MAX)
				return -1;
			if (floats && parse_float(u->s + i, j - i, &v)) {
				if (fill)
					u->floats[nf] = v;
				nf++;
			} else {
				if (fill)
					u->items[ni] =
					    (struct item){u->s + i, (uint32_t)(j - i),
							  item_hash(u->s + i, j - i, ci)};
				ni++;
			}
			i = j;
		}
	} else {
		size_t end = rstrip_all(u->s, u->n);
		for (size_t i = 0; i < end;) {
			const char *nl = memchr(u->s + i, '\n', end - i);
			size_t eol = nl ? (size_t)(nl - u->s) : end;
			size_t l = rstrip_line(u->s + i, eol - i);
			if (l > UINT32_MAX)
				return -1;
			if (fill)
				u->items[ni] = (struct item){u->s + i, (uint32_t)l,
							     item_hash(u->s + i, l, false)};
			ni++;
			i = eol + 1;
		}
	}
	if (!fill) {
		u->items = malloc((ni ? ni : 1) * sizeof(*u->items));
		u->floats = malloc((nf ? nf : 1) * sizeof(*u->floats));
		if (!u->items || !u->floats)
			return -1;
	}
	u->nitems = ni;
	u->nfloats = nf;
	return 0;
}

static enum cmp_outcome cmp_unordered(const struct cmp_opts *o, const char *e, size_t en,
				      const char *g, size_t gn, struct cmp_feedback *fb)
{
	enum cmp_outcome ret = CMP_ERROR;
	struct uside a = {.s = e, .n = en}, b = {.s = g, .n = gn};
	const char *what = o->unordered_tokens ? "token" : "line";
	if (uside_collect(o, &a, false) || uside_collect(o, &a, true) ||
	    uside_collect(o, &b, false) || uside_collect(o, &b, true)) {
		fb_msg(fb, "unordered comparison: out of memory or a %s of 4 GiB or more", what);
		goto out;
	}
	bool ci = o->unordered_tokens && !o->case_sensitive;
	int (*cmp)(const void *, const void *) = ci ? item_cmp_ci : item_cmp_cs;
	if (sort_items(a.items, a.nitems, ci) || sort_items(b.items, b.nitems, ci)) {
		fb_msg(fb, "unordered comparison: out of memory");
		goto out;
	}
	const struct item *miss = NULL, *extra = NULL;
	size_t nmiss = 0, nextra = 0;
	for (size_t i = 0, j = 0; i < a.nitems || j < b.nitems;) {
		int c = i == a.nitems ? 1 : j == b.nitems ? -1 : cmp(&a.items[i], &b.items[j]);
		if (!c) {
			i++, j++;
		} else if (c < 0) {
			if (!miss || a.items[i].p < miss->p)
				miss = &a.items[i];
			nmiss++, i++;
		} else {
			if (!extra || b.items[j].p < extra->p)
				extra = &b.items[j];
			nextra++, j++;
		}
	}
	ret = CMP_DIFFER;
	char ms[48], xs[48];
	if (miss || extra) {
		long col;
		if (miss) {
			line_col(e, (size_t)(miss->p - e), &fb->expected_line, &col);
			piece(fb->expected, sizeof(fb->expected), miss->p, miss->len);
			piece(ms, sizeof(ms), miss->p, miss->len);
		}
		if (extra) {
			line_col(g, (size_t)(extra->p - g), &fb->line, &fb->column);
			piece(fb->got, sizeof(fb->got), extra->p, extra->len);
			piece(xs, sizeof(xs), extra->p, extra->len);
		}
		if (miss && extra)
			fb_msg(fb,
			       "%zu expected %s%s missing, %zu unexpected; e.g. '%s' (expected "
			       "line %ld) is missing, '%s' (line %ld) is unexpected",
			       nmiss, what, nmiss == 1 ? "" : "s", nextra, ms, fb->expected_line,
			       xs, fb->line);
		else if (miss)
			fb_msg(fb,
			       "output ended early: %zu expected %s%s missing, e.g. '%s' (expected "
			       "line %ld)",
			       nmiss, what, nmiss == 1 ? "" : "s", ms, fb->expected_line);
		else
			fb_msg(fb, "extra output: %zu unexpected %s%s, e.g. '%s' (line %ld)",
			       nextra, what, nextra == 1 ? "" : "s", xs, fb->line);
		goto out;
	}
	if (a.nfloats != b.nfloats) {
		fb_msg(fb, "expected %zu numbers, got %zu", a.nfloats, b.nfloats);
		goto out;
	}
	if (sort_doubles(a.floats, a.nfloats) || sort_doubles(b.floats, b.nfloats)) {
		fb_msg(fb, "unordered comparison: out of memory");
		goto out;
	}
	for (size_t i = 0; i < a.nfloats; i++) {
		if (!within_tol(o, a.floats[i], b.floats[i])) {
			snprintf(fb->expected, sizeof(fb->expected), "%.15g", a.floats[i]);
			snprintf(fb->got, sizeof(fb->got), "%.15g", b.floats[i]);
			fb_msg(
			    fb,
			    "number %zu of %zu in sorted order: expected %.10g, got %.10g: "
			    "difference %.3g is above the tolerance (absolute %.3g, relative %.3g)",
			    i + 1, a.nfloats, a.floats[i], b.floats[i],
			    fabs(a.floats[i] - b.floats[i]),
			    o->float_abs_tol < 0 ? 0 : o->float_abs_tol,
			    o->float_rel_tol < 0 ? 0 : o->float_rel_tol);
			goto out;
		}
	}
	ret = CMP_MATCH;
out:
	free(a.items);
	free(a.floats);
	free(b.items);
	free(b.floats);
	return ret;
}

/* ---- regex ---- */

/* Valid UTF-8 where NUL is allowed (a pattern may hold one). */
static bool utf8_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t l = utf8_seq_len((const unsigned char *)s + i, n - i);
		if (!l)
			return false;
		i += l;
	}
	return true;
}

static const char *regex_limit_name(int rc)
{
	switch (rc) {
	case PCRE2_ERROR_MATCHLIMIT:
		return "match limit";
	case PCRE2_ERROR_DEPTHLIMIT:
		return "depth limit";
	case PCRE2_ERROR_HEAPLIMIT:
		return "heap limit";
	default:
		return NULL;
	}
}

static uint32_t limit32(unsigned long v, unsigned long dflt)
{
	if (!v)
		v = dflt;
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* -1 on a limit or error, else 1 when got[0..k) can still be the start of a
 * match of the \z-wrapped pattern (hard partial matching treats \z at the end
 * of the subject as "more could follow"). */
static int regex_viable(pcre2_code *re, const char *g, size_t k, pcre2_match_data *md,
			pcre2_match_context *mctx)
{
	if (!k)
		return 1;
	/* The verdict's match already checked the whole subject, and prefixes
	 * end on character boundaries: checking again would make the search
	 * O(n log n). */
	int rc =
	    pcre2_match(re, (PCRE2_SPTR)g, k, 0, PCRE2_PARTIAL_HARD | PCRE2_NO_UTF_CHECK, md, mctx);
	if (rc >= 0 || rc == PCRE2_ERROR_PARTIAL)
		return 1;
	return rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

/* Finds how far got[0..sl) fits the pattern: returns the byte offset of the
 * first byte that cannot be part of a match, sl when the output ended early,
 * or (size_t)-1 when unknown. PCRE2 refuses partial matching with
 * PCRE2_ENDANCHORED, so this compiles "(?:pattern)\z" instead, leading (*VERB)s
 * kept in front; a pattern that does not survive the wrapping just gets no
 * position. The match limit is a sixteenth of the verdict's, so the ~log2(n)
 * searches cost about as much as one full match. */
static size_t regex_fail_pos(const char *pat, size_t pl, uint32_t copts, const char *g, size_t sl,
			     uint32_t match_limit, uint32_t depth_limit, uint32_t heap_limit)
{
	size_t pos = (size_t)-1, verbs = 0;
	pcre2_code *re = NULL;
	pcre2_match_context *mctx = NULL;
	pcre2_match_data *md = NULL;
	while (verbs + 2 < pl && pat[verbs] == '(' && pat[verbs + 1] == '*') {
		const char *close = memchr(pat + verbs, ')', pl - verbs);
		if (!close)
			break;
		verbs = (size_t)(close - pat) + 1;
	}
	char *w = malloc(pl + 8);
	if (!w)
		return pos;
	memcpy(w, pat, verbs);
	memcpy(w + verbs, "(?:", 3);
	memcpy(w + verbs + 3, pat + verbs, pl - verbs);
	memcpy(w + pl + 3, ")\\z", 4);
	int errcode;
	PCRE2_SIZE erroff;
	re = pcre2_compile((PCRE2_SPTR)w, pl + 7, copts & ~(uint32_t)PCRE2_ENDANCHORED, &errcode,
			   &erroff, NULL);
	mctx = pcre2_match_context_create(NULL);
	md = pcre2_match_data_create(1, NULL);
	if (!re || !mctx || !md)
		goto out;
	pcre2_set_match_limit(mctx, match_limit / 16 > 1000 ? match_limit / 16 : 1000);
	pcre2_set_depth_limit(mctx, depth_limit);
	pcre2_set_heap_limit(mctx, heap_limit);
	int v = regex_viable(re, g, sl, md, mctx);
	if (v < 0)
		goto out;
	if (v > 0) {
		pos = sl;
		goto out;
	}
	size_t lo = 0, hi = sl; /* lo is viable, hi is not */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (copts & PCRE2_UTF) { /* PCRE2 rejects a subject ending inside a character */
			size_t m = mid;
			while (m > lo && is_cont(g, sl, m))
				m--;
			if (m == lo)
				for (m = mid; m < hi && is_cont(g, sl, m);)
					m++;
			if (m == lo || m == hi)
				break;
			mid = m;
		}
		v = regex_viable(re, g, mid, md, mctx);
		if (v < 0)
			goto out;
		if (v > 0)
			lo = mid;
		else
			hi = mid;
	}
	pos = lo;
out:
	pcre2_match_data_free(md);
	pcre2_match_context_free(mctx);
	pcre2_code_free(re);
	free(w);
	return pos;
}

static enum cmp_outcome cmp_regex(const struct cmp_opts *o, const char *pat, size_t plen,
				  const char *g, size_t gn, struct cmp_feedback *fb)
{
	enum cmp_outcome ret = CMP_ERROR;
	pcre2_code *re = NULL;
	pcre2_match_context *mctx = NULL;
	pcre2_match_data *md = NULL;
	char ps[48], gs[48];

	/* A final newline of the pattern file is not part of the pattern, unless
	 * escaped by a backslash. */
	size_t pl = plen;
	while (pl && (pat[pl - 1] == '\n' || pat[pl - 1] == '\r'))
		pl--;
	size_t bs = 0;
	while (bs < pl && pat[pl - 1 - bs] == '\\')
		bs++;
	if (pl < plen && bs % 2)
		pl++;
	size_t sl = rstrip_all(g, gn);
	piece(fb->expected, sizeof(fb->expected), pat, pl);

	/* UTF mode only when both sides are UTF-8: PCRE2's MATCH_INVALID_UTF lets
	 * .* run across invalid bytes but not . match one, so bytes are simpler. */
	uint32_t copts = PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_NEVER_BACKSLASH_C;
	if (utf8_ok(pat, pl) && utf8_ok(g, sl))
		copts |= PCRE2_UTF;
	int errcode;
	PCRE2_SIZE erroff;
	re = pcre2_compile((PCRE2_SPTR)pat, pl, copts, &errcode, &erroff, NULL);
	if (!re) {
		PCRE2_UCHAR msg[160];
		if (pcre2_get_error_message(errcode, msg, sizeof(msg)) < 0)
			snprintf((char *)msg, sizeof(msg), "error %d", errcode);
		snippet(ps, sizeof(ps), pat, pl, 0, erroff < pl ? erroff : pl, pl, 16);
		fb_msg(fb, "bad regex: %s at offset %zu: '%s'", (const char *)msg, (size_t)erroff,
		       ps);
		goto out;
	}
	mctx = pcre2_match_context_create(NULL);
	md = pcre2_match_data_create(1, NULL);
	if (!mctx || !md) {
		fb_msg(fb, "regex: out of memory");
		goto out;
	}
	uint32_t mlim = limit32(o->regex_match_limit, CMP_REGEX_DEFAULT_MATCH_LIMIT);
	uint32_t dlim = limit32(o->regex_depth_limit, CMP_REGEX_DEFAULT_DEPTH_LIMIT);
	uint32_t hlim = limit32(o->regex_heap_limit_kib, CMP_REGEX_DEFAULT_HEAP_LIMIT_KIB);
	pcre2_set_match_limit(mctx, mlim);
	pcre2_set_depth_limit(mctx, dlim);
	pcre2_set_heap_limit(mctx, hlim);
	int rc = pcre2_match(re, (PCRE2_SPTR)g, sl, 0, 0, md, mctx);
	if (rc >= 0) {
		ret = CMP_MATCH;
		goto out;
	}
	if (rc != PCRE2_ERROR_NOMATCH) {
		const char *lim = regex_limit_name(rc);
		PCRE2_UCHAR msg[160];
		if (pcre2_get_error_message(rc, msg, sizeof(msg)) < 0)
			snprintf((char *)msg, sizeof(msg), "error %d", rc);
		if (lim)
			fb_msg(fb,
			       "regex %s exceeded: the pattern backtracks too much for this output "
			       "(use atomic groups or possessive quantifiers)",
			       lim);
		else
			fb_msg(fb, "regex match failed: %s", (const char *)msg);
		goto out;
	}

	ret = CMP_DIFFER;
	size_t pos = regex_fail_pos(pat, pl, copts, g, sl, mlim, dlim, hlim);
	snippet(ps, sizeof(ps), pat, pl, 0, 0, pl, 0);
	if (pos == (size_t)-1) {
		snippet(fb->got, sizeof(fb->got), g, gn, 0, 0, window_end(g, gn, 0), 0);
		fb_msg(fb, "output does not match the pattern '%s'", ps);
		goto out;
	}
	line_col(g, pos, &fb->line, &fb->column);
	snippet(fb->got, sizeof(fb->got), g, gn, line_start(g, pos), pos, window_end(g, gn, pos),
		SNIP_BEFORE);
	if (pos >= sl) {
		fb_msg(fb,
		       "line %ld, column %ld: output ended before the pattern '%s' was complete",
		       fb->line, fb->column, ps);
	} else {
		snippet(gs, sizeof(gs), g, gn, pos, pos, line_window_end(g, gn, pos), 0);
		fb_msg(fb, "line %ld, column %ld: output stops matching the pattern '%s' at '%s'",
		       fb->line, fb->column, ps, gs);
	}
out:
	pcre2_match_data_free(md);
	pcre2_match_context_free(mctx);
	pcre2_code_free(re);
	return ret;
}

enum cmp_outcome cmp_compare(const struct cmp_opts *o, const char *expected, size_t expected_len,
			     const char *got, size_t got_len, struct cmp_feedback *fb)
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
		return cmp_unordered(o, expected, expected_len, got, got_len, fb);
	case CMP_REGEX:
		return cmp_regex(o, expected, expected_len, got, got_len, fb);
	case CMP_CHECKER:
		fb_msg(fb, "checker comparison is run by the grader, not by cmp_compare");
		return CMP_ERROR;
	}
	fb_msg(fb, "unknown comparison mode %d", (int)o->mode);
	return CMP_ERROR;
}
