/* compare_regex: the expected output is a PCRE2 pattern matching the whole
 * output.
 *
 * How it works: one anchored match (PCRE2_ANCHORED | PCRE2_ENDANCHORED) with
 * match, depth and heap limits decides. On a mismatch, a binary search with
 * hard partial matching finds the longest prefix of the output that could
 * still start a match, which gives the line and column for the feedback.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/grading/compare_int.h"
#include "common/xalloc.h"
#include "common/utf8.h"

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

/* The limit to use: the default when unset, never above the ceiling. */
static uint32_t limit32(unsigned long v, unsigned long dflt, unsigned long max)
{
	if (!v)
		v = dflt;
	return (uint32_t)(v > max ? max : v);
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
static size_t regex_fail_pos(const char *pat, size_t pl, uint32_t copts, bool utf, const char *g,
			     size_t sl, uint32_t match_limit, uint32_t depth_limit,
			     uint32_t heap_limit)
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
	char *w = xmalloc(pl + 8);
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
	if (!mctx || !md)
		xalloc_die(0); /* pcre2's only reason for NULL here */
	if (!re)
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
		if (utf) { /* a subject must not end inside a character */
			size_t m = mid;
			while (m > lo && compare_is_cont(g, sl, m))
				m--;
			if (m == lo)
				for (m = mid; m < hi && compare_is_cont(g, sl, m);)
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

enum compare_outcome compare_regex(const struct compare_options *o, const char *pat, size_t plen,
				   const char *g, size_t gn, struct compare_feedback *fb)
{
	enum compare_outcome ret = CMP_ERROR;
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
	size_t sl = compare_rstrip_all(g, gn);
	compare_piece(fb->expected, sizeof(fb->expected), pat, pl);

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
		compare_snippet(ps, sizeof(ps), pat, pl, 0, erroff < pl ? erroff : pl, pl, 16);
		compare_fb_msg(fb, "bad regex: %s at offset %zu: '%s'", (const char *)msg,
			       (size_t)erroff, ps);
		goto out;
	}
	mctx = pcre2_match_context_create(NULL);
	md = pcre2_match_data_create(1, NULL);
	if (!mctx || !md)
		xalloc_die(0); /* pcre2's only reason for NULL here */
	uint32_t mlim =
	    limit32(o->regex_match_limit, CMP_REGEX_DEFAULT_MATCH_LIMIT, CMP_REGEX_MAX_MATCH_LIMIT);
	uint32_t dlim =
	    limit32(o->regex_depth_limit, CMP_REGEX_DEFAULT_DEPTH_LIMIT, CMP_REGEX_MAX_DEPTH_LIMIT);
	uint32_t hlim = limit32(o->regex_heap_limit_kib, CMP_REGEX_DEFAULT_HEAP_LIMIT_KIB,
				CMP_REGEX_MAX_HEAP_LIMIT_KIB);
	pcre2_set_match_limit(mctx, mlim);
	pcre2_set_depth_limit(mctx, dlim);
	pcre2_set_heap_limit(mctx, hlim);
	int rc = pcre2_match(re, (PCRE2_SPTR)g, sl, 0, 0, md, mctx);
	if (rc >= 0) {
		ret = CMP_MATCH;
		goto out;
	}
	/* (*UTF) in the pattern turns UTF mode on whatever copts say */
	uint32_t allopts = 0;
	pcre2_pattern_info(re, PCRE2_INFO_ALLOPTIONS, &allopts);
	bool utf = allopts & PCRE2_UTF;
	if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21) {
		/* the program's fault: its output is not UTF-8 but the pattern is */
		ret = CMP_DIFFER;
		size_t bad = 0, l;
		while (bad < sl && (l = utf8_seq_len((const unsigned char *)g + bad, sl - bad)))
			bad += l;
		compare_line_col(g, bad, &fb->line, &fb->column);
		compare_snippet(fb->got, sizeof(fb->got), g, gn, compare_line_start(g, bad), bad,
				compare_window_end(g, gn, bad), SNIP_BEFORE);
		compare_fb_msg(fb,
			       "line %ld, column %ld: output is not valid UTF-8, which the (*UTF) "
			       "pattern needs",
			       fb->line, fb->column);
		goto out;
	}
	if (rc != PCRE2_ERROR_NOMATCH) {
		const char *lim = regex_limit_name(rc);
		PCRE2_UCHAR msg[160];
		if (pcre2_get_error_message(rc, msg, sizeof(msg)) < 0)
			snprintf((char *)msg, sizeof(msg), "error %d", rc);
		if (lim) {
			/* the pattern's own limit on this output: the output was not
			 * shown to match, which is a verdict, not the judge's fault */
			ret = CMP_DIFFER;
			compare_snippet(fb->got, sizeof(fb->got), g, gn, 0, 0,
					compare_window_end(g, gn, 0), 0);
			compare_fb_msg(
			    fb,
			    "regex %s exceeded: the pattern backtracks too much for this output "
			    "(use atomic groups or possessive quantifiers)",
			    lim);
		} else {
			compare_fb_msg(fb, "regex match failed: %s", (const char *)msg);
		}
		goto out;
	}

	ret = CMP_DIFFER;
	size_t pos = regex_fail_pos(pat, pl, copts, utf, g, sl, mlim, dlim, hlim);
	compare_snippet(ps, sizeof(ps), pat, pl, 0, 0, pl, 0);
	if (pos == (size_t)-1) {
		compare_snippet(fb->got, sizeof(fb->got), g, gn, 0, 0, compare_window_end(g, gn, 0),
				0);
		compare_fb_msg(fb, "output does not match the pattern '%s'", ps);
		goto out;
	}
	compare_line_col(g, pos, &fb->line, &fb->column);
	compare_snippet(fb->got, sizeof(fb->got), g, gn, compare_line_start(g, pos), pos,
			compare_window_end(g, gn, pos), SNIP_BEFORE);
	if (pos >= sl) {
		compare_fb_msg(fb,
			       "line %ld, column %ld: output ended before the pattern '%s' was "
			       "complete",
			       fb->line, fb->column, ps);
	} else {
		compare_snippet(gs, sizeof(gs), g, gn, pos, pos,
				compare_line_window_end(g, gn, pos), 0);
		compare_fb_msg(
		    fb, "line %ld, column %ld: output stops matching the pattern '%s' at '%s'",
		    fb->line, fb->column, ps, gs);
	}
out:
	pcre2_match_data_free(md);
	pcre2_match_context_free(mctx);
	pcre2_code_free(re);
	return ret;
}
