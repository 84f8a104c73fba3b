/* test_compare: golden comparison cases (tests/cmp/<case>/), feedback and large-input checks. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "judge/grading/compare.h"
#include "common/strbuf.h"
#include "common/utf8.h"

#define CASE_MAX (64u << 20)

static const char *cases_dir(void)
{
	const char *d = getenv("JUDGE_CMP_CASES");
	return d && *d ? d : "tests/cmp";
}

static bool fb_strings_valid(const struct compare_feedback *fb)
{
	const char *s[] = {fb->expected, fb->got, fb->message};
	for (size_t i = 0; i < 3; i++) {
		if (!memchr(s[i], 0, 128) && i < 2)
			return false;
		if (!utf8_valid_text(s[i], strlen(s[i])))
			return false;
	}
	return !strchr(fb->message, '\n');
}

/* Reads dir/name; returns 0, or -errno (-ENOENT when absent). */
static int read_part(const char *dir, const char *name, struct strbuf *sb)
{
	char path[4200]; /* dir is at most 4096 bytes, name a short literal */
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return strbuf_read_file(sb, path, CASE_MAX);
}

/* Splits args into mode and flags; fills o. Returns 0 or -1. */
static int parse_args(char *args, struct compare_options *o, char *err, size_t errlen)
{
	const char *argv[64];
	int argc = 0;
	for (char *save = NULL, *t = strtok_r(args, " \t\r\n", &save); t && argc < 64;
	     t = strtok_r(NULL, " \t\r\n", &save))
		argv[argc++] = t;
	enum compare_mode m;
	if (argc < 1 || compare_mode_parse(argv[0], &m)) {
		snprintf(err, errlen, "bad mode");
		return -1;
	}
	compare_options_init(o, m);
	return compare_parse_flags(o, argc - 1, argv + 1, err, errlen);
}

static const char *outcome_name(enum compare_outcome r)
{
	return r == CMP_MATCH ? "accepted" : r == CMP_DIFFER ? "wrong_answer" : "error";
}

/* Runs one case folder; returns true when it passes (reporting why not). */
static bool run_case(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	struct strbuf args = STRBUF_INIT, exp = STRBUF_INIT, got = STRBUF_INIT,
		      verdict = STRBUF_INIT, msg = STRBUF_INIT, pos = STRBUF_INIT;
	bool ok = false;
	char err[256];
	struct compare_options o;
	struct compare_feedback fb;
	if (read_part(path, "args", &args) || read_part(path, "expected", &exp) ||
	    read_part(path, "got", &got) || read_part(path, "verdict", &verdict)) {
		cr_log_error("%s: missing args, expected, got or verdict", name);
		goto out;
	}
	int rm = read_part(path, "message", &msg), rp = read_part(path, "position", &pos);
	if (parse_args(args.buf, &o, err, sizeof(err))) {
		cr_log_error("%s: bad args: %s", name, err);
		goto out;
	}
	enum compare_outcome r = compare_outputs(&o, exp.buf, exp.len, got.buf, got.len, &fb);
	while (verdict.len && strchr(" \n\r\t", verdict.buf[verdict.len - 1]))
		verdict.buf[--verdict.len] = 0;
	if (strcmp(outcome_name(r), verdict.buf)) {
		cr_log_error("%s: got %s, want %s (message: %s)", name, outcome_name(r),
			     verdict.buf, fb.message);
		goto out;
	}
	if (!fb_strings_valid(&fb)) {
		cr_log_error("%s: feedback is not valid one-line UTF-8", name);
		goto out;
	}
	if (r != CMP_MATCH && !fb.message[0]) {
		cr_log_error("%s: no feedback message", name);
		goto out;
	}
	if (!rm) {
		while (msg.len && msg.buf[msg.len - 1] == '\n')
			msg.buf[--msg.len] = 0;
		if (!strstr(fb.message, msg.buf)) {
			cr_log_error("%s: message '%s' lacks '%s'", name, fb.message, msg.buf);
			goto out;
		}
	}
	if (!rp) {
		long l, c;
		if (sscanf(pos.buf, "%ld %ld", &l, &c) != 2 || l != fb.line || c != fb.column) {
			cr_log_error("%s: position %ld %ld, want %s", name, fb.line, fb.column,
				     pos.buf);
			goto out;
		}
	}
	ok = true;
out:
	strbuf_release(&args);
	strbuf_release(&exp);
	strbuf_release(&got);
	strbuf_release(&verdict);
	strbuf_release(&msg);
	strbuf_release(&pos);
	return ok;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

Test(compare, golden_cases, .timeout = 120)
{
	const char *dir = cases_dir();
	DIR *d = opendir(dir);
	cr_assert(d, "cannot open %s (run from the repository root)", dir);
	char *names[1024];
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < 1024) {
		if (de->d_name[0] == '.')
			continue;
		char p[4096];
		snprintf(p, sizeof(p), "%s/%s/verdict", dir, de->d_name);
		if (access(p, F_OK) == 0)
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), name_cmp);
	size_t failed = 0;
	for (size_t i = 0; i < n; i++) {
		if (!run_case(dir, names[i]))
			failed++;
		free(names[i]);
	}
	cr_log_info("%zu comparison cases, %zu failed", n, failed);
	cr_expect_geq(n, 60, "only %zu cases in %s", n, dir);
	cr_expect_eq(failed, 0, "%zu of %zu comparison cases failed", failed, n);
}

/* ---- direct checks ---- */

static enum compare_outcome cmp_str(const char *mode_and_flags, const char *e, const char *g,
				    struct compare_feedback *fb)
{
	char buf[256], err[256];
	struct compare_options o;
	snprintf(buf, sizeof(buf), "%s", mode_and_flags);
	cr_assert_eq(parse_args(buf, &o, err, sizeof(err)), 0, "%s", err);
	enum compare_outcome r = compare_outputs(&o, e, strlen(e), g, strlen(g), fb);
	cr_assert(fb_strings_valid(fb));
	return r;
}

Test(compare, mode_names)
{
	static const char *names[] = {"exact", "lines", "tokens", "unordered", "regex", "checker"};
	for (size_t i = 0; i < 6; i++) {
		enum compare_mode m;
		cr_assert_eq(compare_mode_parse(names[i], &m), 0);
		cr_assert_str_eq(compare_mode_name(m), names[i]);
	}
	enum compare_mode m;
	cr_assert_eq(compare_mode_parse("Tokens", &m), -1);
	cr_assert_eq(compare_mode_parse("", &m), -1);
}

Test(compare, flag_errors)
{
	struct compare_options o;
	char err[128];
	compare_options_init(&o, CMP_TOKENS);
	cr_assert(o.float_abs_tol < 0 && o.float_rel_tol < 0 && !o.case_sensitive);
	const char *a1[] = {"float_tolerance"};
	cr_assert_eq(compare_parse_flags(&o, 1, a1, err, sizeof(err)), -1);
	cr_assert(strstr(err, "needs a value"), "%s", err);
	const char *a2[] = {"float_absolute_tolerance", "-1"};
	cr_assert_eq(compare_parse_flags(&o, 2, a2, err, sizeof(err)), -1);
	const char *a3[] = {"float_relative_tolerance", "nan"};
	cr_assert_eq(compare_parse_flags(&o, 2, a3, err, sizeof(err)), -1);
	const char *a4[] = {"casesensitive"};
	cr_assert_eq(compare_parse_flags(&o, 1, a4, err, sizeof(err)), -1);
	cr_assert(strstr(err, "unknown comparison flag 'casesensitive'"), "%s", err);
	const char *a5[] = {"regex_match_limit", "0"};
	cr_assert_eq(compare_parse_flags(&o, 2, a5, err, sizeof(err)), -1);
	const char *a7[] = {"regex_match_limit", "50000001"};
	cr_assert_eq(compare_parse_flags(&o, 2, a7, err, sizeof(err)), -1);
	cr_assert(strstr(err, "from 1 to 50000000"), "%s", err);
	const char *a8[] = {"regex_heap_limit_kib", "99999999999999999999999"};
	cr_assert_eq(compare_parse_flags(&o, 2, a8, err, sizeof(err)), -1);
	const char *a6[] = {"bad\xff\x01"};
	cr_assert_eq(compare_parse_flags(&o, 1, a6, err, sizeof(err)), -1);
	cr_assert(utf8_valid_text(err, strlen(err)), "%s", err);
	const char *ok[] = {"case_sensitive",
			    "space_change_sensitive",
			    "float_tolerance",
			    "1e-6",
			    "float_absolute_tolerance",
			    "0.5",
			    "unordered_tokens",
			    "regex_match_limit",
			    "1000"};
	cr_assert_eq(compare_parse_flags(&o, 9, ok, err, sizeof(err)), 0, "%s", err);
	cr_assert(o.case_sensitive && o.space_change_sensitive && o.unordered_tokens);
	cr_assert_float_eq(o.float_rel_tol, 1e-6, 1e-12);
	cr_assert_float_eq(o.float_abs_tol, 0.5, 1e-12);
	cr_assert_eq(o.regex_match_limit, 1000);
}

Test(compare, checker_is_error)
{
	struct compare_feedback fb;
	cr_assert_eq(cmp_str("checker", "a", "a", &fb), CMP_ERROR);
	cr_assert(fb.message[0]);
}

Test(compare, feedback_positions)
{
	struct compare_feedback fb;
	cr_assert_eq(cmp_str("lines", "1 2 3\n4 5 6\n", "1 2 3\n4 5 7\n", &fb), CMP_DIFFER);
	cr_assert_eq(fb.line, 2);
	cr_assert_eq(fb.column, 5);
	cr_assert_str_eq(fb.message, "line 2, column 5: expected '6', got '7'");
	cr_assert_str_eq(fb.expected, "4 5 6");
	cr_assert_str_eq(fb.got, "4 5 7");

	cr_assert_eq(cmp_str("lines", "a\nb\nc\n", "a\n", &fb), CMP_DIFFER);
	cr_assert_eq(fb.line, 2);
	cr_assert(strstr(fb.message, "output ended early: expected 2 more lines"), "%s",
		  fb.message);

	cr_assert_eq(cmp_str("tokens", "10 20\n30 40\n", "10 20\n30\n41\n", &fb), CMP_DIFFER);
	cr_assert_eq(fb.token, 4);
	cr_assert_eq(fb.line, 3);
	cr_assert_eq(fb.expected_line, 2);
	cr_assert_eq(fb.column, 1);
	cr_assert_str_eq(fb.expected, "40");
	cr_assert_str_eq(fb.got, "41");

	cr_assert_eq(cmp_str("tokens float_absolute_tolerance 0.01", "3.14159", "3.2", &fb),
		     CMP_DIFFER);
	cr_assert(strstr(fb.message, "difference 0.0584 is above the tolerance (absolute 0.01"),
		  "%s", fb.message);

	cr_assert_eq(cmp_str("exact", "ab\r\n", "ab\n", &fb), CMP_DIFFER);
	cr_assert_eq(fb.line, 1);
	cr_assert_eq(fb.column, 3);
	cr_assert_str_eq(fb.expected, "ab\\r\\n");
	cr_assert_str_eq(fb.got, "ab\\n");

	cr_assert_eq(cmp_str("regex", "\\d+ \\d+\n", "12 x\n", &fb), CMP_DIFFER);
	cr_assert_eq(fb.line, 1);
	cr_assert_eq(fb.column, 4);
}

/* A difference deep inside a long line of two-byte characters: the snippets
 * are cut with "..." but never through a character. */
Test(compare, snippets_keep_utf8_whole)
{
	struct strbuf e = STRBUF_INIT, g = STRBUF_INIT;
	for (int i = 0; i < 500; i++) {
		strbuf_addstr(&e, "\xc3\xa9");
		strbuf_addstr(&g, "\xc3\xa9");
	}
	strbuf_addstr(&e, "x");
	strbuf_addstr(&g, "\xe2\x9c\x93"); /* check mark */
	for (int i = 0; i < 500; i++) {
		strbuf_addstr(&e, "\x01\xff\xc3\xa9");
		strbuf_addstr(&g, "\x01\xff\xc3\xa9");
	}
	static const enum compare_mode modes[] = {CMP_EXACT, CMP_LINES, CMP_TOKENS, CMP_UNORDERED};
	for (size_t m = 0; m < 4; m++) {
		for (size_t cut = 0; cut < 4; cut++) {
			struct compare_options o;
			struct compare_feedback fb;
			compare_options_init(&o, modes[m]);
			/* shift the alignment so every cut position gets tried */
			enum compare_outcome r = compare_outputs(&o, e.buf + cut, e.len - cut,
								 g.buf + cut, g.len - cut, &fb);
			cr_assert_eq(r, CMP_DIFFER);
			cr_assert(fb_strings_valid(&fb), "mode %zu cut %zu", m, cut);
			if (modes[m] == CMP_EXACT || modes[m] == CMP_LINES) {
				cr_assert(strstr(fb.expected, "...\xc3\xa9"), "%s", fb.expected);
				cr_assert(strstr(fb.got, "\xe2\x9c\x93\\x01\\xff"), "%s", fb.got);
				cr_assert_eq(fb.column, 1001 - (long)cut);
			}
		}
	}
	strbuf_release(&e);
	strbuf_release(&g);
}

/* A pathological pattern must stop at the match limit quickly, as a difference. */
Test(compare, regex_catastrophic_is_bounded, .timeout = 30)
{
	struct compare_feedback fb;
	char got[4096];
	memset(got, 'a', sizeof(got) - 2);
	got[sizeof(got) - 2] = '!';
	got[sizeof(got) - 1] = 0;
	const char *pats[] = {"(\\w+\\s?)+", "(a|aa)+", "(.*a){20}", "((a+)+)+(b|c)"};
	for (size_t i = 0; i < 4; i++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		enum compare_outcome r = cmp_str("regex", pats[i], got, &fb);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		cr_log_info("regex '%s': %s in %.2f s: %s", pats[i], outcome_name(r), s,
			    fb.message);
		/* a limit hit is a difference (a verdict), never CMP_ERROR */
		cr_assert_eq(r, CMP_DIFFER, "%s", fb.message);
	}
	/* and a tight user limit is honoured, and named */
	cr_assert_eq(cmp_str("regex regex_match_limit 1000", "(a|aa)+", got, &fb), CMP_DIFFER);
	cr_assert(strstr(fb.message, "match limit exceeded"), "%s", fb.message);
}

Test(compare, regex_bad_pattern_is_error)
{
	struct compare_feedback fb;
	const char *bad[] = {"(abc", "a{2,1}", "[z-a]", "\\", "(?<n>a)(?<n>b)", "*a"};
	for (size_t i = 0; i < 6; i++) {
		cr_assert_eq(cmp_str("regex", bad[i], "abc", &fb), CMP_ERROR, "%s", bad[i]);
		cr_assert(!strncmp(fb.message, "bad regex: ", 11), "%s", fb.message);
	}
}

/* ---- large inputs ---- */

/* ASan keeps freed memory in quarantine and adds shadow memory: peak RSS says
 * nothing about the comparator there, so the memory checks are skipped. */
#if defined(__SANITIZE_ADDRESS__)
#define CHECK_RSS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHECK_RSS 0
#endif
#endif
#ifndef CHECK_RSS
#define CHECK_RSS 1
#endif

static long max_rss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static char *put_ulong(char *p, unsigned long v)
{
	char tmp[24];
	int n = 0;
	do
		tmp[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* Builds "i j.kk" lines, nlines of them (or until size bytes when nlines is 0),
 * then a last line "0" -- or "0.001" when variant is 1; variant 2 ends lines with
 * CRLF. Formats by hand: printf would take longer than the comparisons.
 * Returns the number of lines. */
static unsigned long gen(struct strbuf *sb, size_t size, unsigned long nlines, int variant)
{
	strbuf_grow(sb, size + size / 8 + 64);
	unsigned long i = 0;
	for (; nlines ? i < nlines : sb->len < size; i++) {
		strbuf_grow(sb, 64);
		char *p = sb->buf + sb->len;
		p = put_ulong(p, i);
		*p++ = ' ';
		p = put_ulong(p, i * 7 % 1000);
		*p++ = '.';
		*p++ = (char)('0' + i % 100 / 10);
		*p++ = (char)('0' + i % 10);
		if (variant == 2)
			*p++ = '\r';
		*p++ = '\n';
		sb->len = (size_t)(p - sb->buf);
		sb->buf[sb->len] = 0;
	}
	strbuf_addstr(sb, variant == 1 ? "0.001\n" : "0\n");
	return i;
}

/* Copies src with each pair of neighbouring lines swapped. */
static void swap_pairs(struct strbuf *dst, const struct strbuf *src)
{
	strbuf_grow(dst, src->len + 1);
	for (size_t i = 0; i < src->len;) {
		const char *a = src->buf + i, *nl = memchr(a, '\n', src->len - i);
		size_t al = nl ? (size_t)(nl - a) + 1 : src->len - i;
		if (i + al >= src->len) {
			strbuf_add(dst, a, al);
			break;
		}
		const char *b = a + al, *nl2 = memchr(b, '\n', src->len - i - al);
		size_t bl = nl2 ? (size_t)(nl2 - b) + 1 : src->len - i - al;
		strbuf_add(dst, b, bl);
		strbuf_add(dst, a, al);
		i += al + bl;
	}
}

Test(compare, large_inputs_all_modes, .timeout = 600)
{
	size_t size = (size_t)(getenv("JUDGE_CMP_BIG_MIB") ? atol(getenv("JUDGE_CMP_BIG_MIB")) : 50)
		      << 20;
	struct strbuf e = STRBUF_INIT, same = STRBUF_INIT, off = STRBUF_INIT, crlf = STRBUF_INIT,
		      perm = STRBUF_INIT;
	unsigned long n = gen(&e, size, 0, 0);
	gen(&same, 0, n, 0);
	gen(&off, 0, n, 1);
	gen(&crlf, 0, n, 2);
	long rss0 = max_rss_kib();
	struct compare_feedback fb;
	struct compare_options o;

	/* streaming modes: no allocation beyond the inputs */
	compare_options_init(&o, CMP_EXACT);
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, same.buf, same.len, &fb), CMP_MATCH);
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, crlf.buf, crlf.len, &fb), CMP_DIFFER);
	cr_assert_eq(fb.line, 1);
	compare_options_init(&o, CMP_LINES);
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, crlf.buf, crlf.len, &fb), CMP_MATCH);
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, off.buf, off.len, &fb), CMP_DIFFER);
	compare_options_init(&o, CMP_TOKENS);
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, crlf.buf, crlf.len, &fb), CMP_MATCH);
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, off.buf, off.len, &fb), CMP_DIFFER);
	long lines = fb.line;
	cr_assert_gt(lines, (long)(size / 32));
	o.float_abs_tol = 0.01;
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, off.buf, off.len, &fb), CMP_MATCH);
	o.float_abs_tol = 0.0001;
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, off.buf, off.len, &fb), CMP_DIFFER);
	cr_assert_eq(fb.line, lines);
	o.space_change_sensitive = true;
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, crlf.buf, crlf.len, &fb), CMP_DIFFER);
	long grown = max_rss_kib() - rss0;
	cr_assert_lt(CHECK_RSS ? grown : 0, 8 * 1024,
		     "streaming modes grew the peak RSS by %ld KiB", grown);

	/* regex: a pattern that does not backtrack per line, bounded by the heap limit */
	compare_options_init(&o, CMP_REGEX);
	const char *pat = "[0-9 .\\n]*+";
	cr_assert_eq(compare_outputs(&o, pat, strlen(pat), e.buf, e.len, &fb), CMP_MATCH, "%s",
		     fb.message);
	cr_assert_eq(compare_outputs(&o, pat, strlen(pat), crlf.buf, crlf.len, &fb), CMP_DIFFER);
	cr_assert_eq(fb.line, 1);
	cr_assert_eq(fb.column, (long)strcspn(crlf.buf, "\r") + 1);
	grown = max_rss_kib() - rss0;
	cr_assert_lt(CHECK_RSS ? grown : 0, 80 * 1024, "regex grew the peak RSS by %ld KiB", grown);
	strbuf_release(&crlf);
	strbuf_release(&same);

	/* unordered: O(lines) memory, checked against 16 bytes a line */
	swap_pairs(&perm, &e);
	rss0 = max_rss_kib();
	compare_options_init(&o, CMP_UNORDERED);
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, perm.buf, perm.len, &fb), CMP_MATCH, "%s",
		     fb.message);
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, off.buf, off.len, &fb), CMP_DIFFER);
	cr_assert_eq(fb.expected_line, lines);
	grown = max_rss_kib() - rss0;
	/* two item arrays and the temporary of glibc's merge sort */
	cr_assert_lt(CHECK_RSS ? grown : 0, 3 * 16 * lines / 1024 + 8 * 1024,
		     "unordered grew RSS by %ld KiB", grown);
	o.unordered_tokens = true;
	o.float_abs_tol = 0.01;
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, off.buf, off.len, &fb), CMP_MATCH, "%s",
		     fb.message);
	strbuf_release(&e);
	strbuf_release(&off);
	strbuf_release(&perm);
}

/* Enough items for the radix sort path (more than 50000 a side), with
 * duplicates, case differences and a shuffled order. */
Test(compare, unordered_radix_path, .timeout = 120)
{
	struct strbuf e = STRBUF_INIT, g = STRBUF_INIT;
	enum { N = 120000 };
	unsigned *perm = malloc(N * sizeof(*perm));
	cr_assert(perm);
	for (unsigned i = 0; i < N; i++)
		perm[i] = i;
	unsigned long x = 12345;
	for (unsigned i = N - 1; i > 0; i--) { /* Fisher-Yates with a fixed LCG */
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		unsigned j = (unsigned)((x >> 33) % (i + 1)), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (unsigned i = 0; i < N; i++) /* i / 3: every word three times */
		strbuf_addf(&e, "Word%u%s", i / 3, i % 10 == 9 ? "\n" : " ");
	for (unsigned i = 0; i < N; i++)
		strbuf_addf(&g, "wORD%u\n", perm[i] / 3);
	struct compare_options o;
	struct compare_feedback fb;
	compare_options_init(&o, CMP_UNORDERED);
	o.unordered_tokens = true;
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, g.buf, g.len, &fb), CMP_MATCH, "%s",
		     fb.message);
	o.case_sensitive = true;
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, g.buf, g.len, &fb), CMP_DIFFER);
	o.case_sensitive = false;
	/* one word of the output replaced: one missing, one unexpected */
	char *w = strstr(g.buf, "wORD7\n");
	cr_assert(w);
	memcpy(w, "wORD8", 5);
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, g.buf, g.len, &fb), CMP_DIFFER);
	cr_assert(strstr(fb.message, "1 expected token missing, 1 unexpected; e.g. 'Word7'"), "%s",
		  fb.message);
	cr_assert_str_eq(fb.got, "wORD8");
	cr_assert_eq(fb.expected_line, 3); /* the third Word7 is token 24, on line 3 */
	/* numbers under a tolerance take the radix path for doubles */
	strbuf_reset(&e);
	strbuf_reset(&g);
	for (unsigned i = 0; i < N; i++) {
		strbuf_addf(&e, "%d.5\n", (int)i - N / 2);
		strbuf_addf(&g, "%d.5000001\n", (int)perm[i] - N / 2);
	}
	o.float_abs_tol = 1e-6;
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, g.buf, g.len, &fb), CMP_MATCH, "%s",
		     fb.message);
	o.float_abs_tol = 1e-8;
	cr_assert_eq(compare_outputs(&o, e.buf, e.len, g.buf, g.len, &fb), CMP_DIFFER);
	cr_assert(strstr(fb.message, "number 1 of 120000 in sorted order: expected -60000"), "%s",
		  fb.message);
	free(perm);
	strbuf_release(&e);
	strbuf_release(&g);
}
