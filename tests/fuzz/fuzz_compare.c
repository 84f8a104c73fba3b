/* fuzz_compare: libFuzzer target for compare_outputs (all modes, flags from the input).
 *
 * Input: [mode][flags][len lo][len hi] expected (len bytes, or what there is) got (the rest).
 * Besides "no crash, no sanitizer report", it checks invariants and aborts when
 * one breaks: feedback is valid one-line UTF-8; every mode but regex accepts an
 * output equal to the expected one; lines-equal implies tokens-equal and
 * unordered-lines-equal; tokens-equal implies unordered-tokens-equal.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/grading/compare.h"
#include "common/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_fb(const struct compare_feedback *fb, enum compare_outcome r)
{
	const char *s[] = {fb->expected, fb->got, fb->message};
	size_t caps[] = {sizeof(fb->expected), sizeof(fb->got), sizeof(fb->message)};
	for (size_t i = 0; i < 3; i++) {
		size_t n = strnlen(s[i], caps[i]);
		if (n == caps[i] || !utf8_valid_text(s[i], n)) {
			fprintf(stderr, "feedback field %zu is not valid UTF-8\n", i);
			abort();
		}
	}
	if (strchr(fb->message, '\n') || (r != CMP_MATCH && !fb->message[0])) {
		fprintf(stderr, "bad message '%s'\n", fb->message);
		abort();
	}
	if (r == CMP_DIFFER && fb->line < 0) {
		fprintf(stderr, "negative line\n");
		abort();
	}
}

static enum compare_outcome run(const struct compare_options *o, const char *e, size_t en, const char *g,
			    size_t gn)
{
	struct compare_feedback fb;
	enum compare_outcome r = compare_outputs(o, e, en, g, gn, &fb);
	check_fb(&fb, r);
	if (r == CMP_ERROR && o->mode != CMP_REGEX) {
		fprintf(stderr, "error in mode %s: %s\n", compare_mode_name(o->mode), fb.message);
		abort();
	}
	return r;
}

static void must(bool cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "invariant broken: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	static const enum compare_mode modes[] = {CMP_EXACT, CMP_LINES, CMP_TOKENS, CMP_UNORDERED,
					      CMP_REGEX};
	enum compare_mode mode = modes[data[0] % 5];
	uint8_t fl = data[1];
	size_t len = (size_t)data[2] | (size_t)data[3] << 8;
	data += 4, size -= 4;
	if (len > size)
		len = size;
	/* copies, so ASan sees reads past either buffer */
	char *e = malloc(len ? len : 1), *g = malloc(size - len ? size - len : 1);
	if (!e || !g)
		abort();
	memcpy(e, data, len);
	memcpy(g, data + len, size - len);
	size_t en = len, gn = size - len;

	struct compare_options o;
	compare_options_init(&o, mode);
	o.case_sensitive = fl & 1;
	o.space_change_sensitive = fl & 2;
	o.unordered_tokens = fl & 4;
	switch ((fl >> 3) & 3) {
	case 1:
		o.float_abs_tol = 1e-6;
		break;
	case 2:
		o.float_rel_tol = 1e-3;
		break;
	case 3:
		o.float_abs_tol = o.float_rel_tol = 0;
		break;
	}
	o.regex_match_limit = 20000; /* keeps runs fast; the limit path gets fuzzed too */
	o.regex_heap_limit_kib = 4096;

	enum compare_outcome r = run(&o, e, en, g, gn);
	if (mode != CMP_REGEX) {
		must(run(&o, e, en, e, en) == CMP_MATCH, "expected compared with itself");
		must(run(&o, g, gn, g, gn) == CMP_MATCH, "output compared with itself");
	}
	if (mode == CMP_EXACT)
		must((r == CMP_MATCH) == (en == gn && !memcmp(e, g, en)), "exact is memcmp");
	if (mode == CMP_LINES && r == CMP_MATCH) {
		struct compare_options t;
		compare_options_init(&t, CMP_TOKENS);
		t.case_sensitive = true;
		must(run(&t, e, en, g, gn) == CMP_MATCH, "lines-equal implies tokens-equal");
		compare_options_init(&t, CMP_UNORDERED);
		must(run(&t, e, en, g, gn) == CMP_MATCH, "lines-equal implies unordered-equal");
	}
	if (mode == CMP_TOKENS && r == CMP_MATCH && !o.space_change_sensitive) {
		struct compare_options t = o;
		t.mode = CMP_UNORDERED;
		t.unordered_tokens = true;
		must(run(&t, e, en, g, gn) == CMP_MATCH,
		     "tokens-equal implies unordered-tokens-equal");
	}
	free(e);
	free(g);
	return 0;
}
