/* problem_expect: what a package's example submission is expected to get when
 * the package states it in DOMjudge's way, a `@EXPECTED_RESULTS@: ` (or
 * `@EXPECTED_SCORE@: `) line in a source file (DOMjudge's own
 * example_problems/ do). Part of the problem module
 * (problem_); `judge verify` turns the names into verdicts. */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/strbuf.h"
#include "judge/grading/problem.h"
#include "judge/grading/problem_int.h"

/* DOMjudge's two tags (SubmissionService::PROBLEM_RESULT_MATCHSTRING): the
 * second holds a score, or result names when its value is not a number. */
static const char *const tags[] = {"@EXPECTED_RESULTS@: ", "@EXPECTED_SCORE@: "};
/* Source files bigger than this are not searched (nor submitted: DOMjudge's
 * source size limit is 256 KiB by default). */
#define FILE_MAX ((size_t)4 << 20)

/* The package format's result spellings in DOMjudge's names
 * (webapp SubmissionService::PROBLEM_RESULT_REMAP). */
static const char *const remap[][2] = {
    {"ACCEPTED", "CORRECT"},
    {"WRONG_ANSWER", "WRONG-ANSWER"},
    {"TIME_LIMIT_EXCEEDED", "TIMELIMIT"},
    {"RUN_TIME_ERROR", "RUN-ERROR"},
    {"COMPILER_ERROR", "COMPILER-ERROR"},
    {"NO_OUTPUT", "NO-OUTPUT"},
    {"OUTPUT_LIMIT", "OUTPUT-LIMIT"},
};

void problem_expect_name(const char *word, size_t len, char *out, size_t outlen)
{
	while (len && isspace((unsigned char)*word))
		word++, len--;
	while (len && isspace((unsigned char)word[len - 1]))
		len--;
	size_t n = 0;
	for (; n < len && n + 1 < outlen; n++)
		out[n] = (char)toupper((unsigned char)word[n]);
	if (outlen)
		out[n] = 0;
	for (size_t i = 0; i < sizeof remap / sizeof remap[0]; i++)
		if (!strcmp(out, remap[i][0])) {
			snprintf(out, outlen, "%s", remap[i][1]);
			break;
		}
}

/* Where tag starts in text from `from` on, case-insensitively, or NULL. */
static const char *find_tag(const char *tag, const char *text, size_t len, size_t from)
{
	size_t tl = strlen(tag);
	for (size_t i = from; i + tl <= len; i++)
		if (!strncasecmp(text + i, tag, tl))
			return text + i;
	return NULL;
}

/* True when [p, end) is a number as PHP's is_numeric reads one (optional
 * blanks before, a sign, digits with one dot, an exponent). */
static bool is_number(const char *p, const char *end, double *out)
{
	char buf[64];
	size_t n = (size_t)(end - p);
	if (n == 0 || n >= sizeof buf)
		return false;
	memcpy(buf, p, n);
	buf[n] = 0;
	char *stop;
	errno = 0;
	double d = strtod(buf, &stop);
	if (stop == buf || *stop || errno || strpbrk(buf, "xXnN"))
		return false; /* "0x10", "nan", "inf" are not PHP numbers */
	*out = d;
	return true;
}

/* Parses the annotation of one file's text into e. Returns 1 when found, 0 when
 * absent, -1 when a tag is given twice or both give result names (DOMjudge then
 * refuses the annotation and goes by the folder). */
static int parse(const char *text, size_t len, struct problem_expect *e)
{
	bool found = false, names = false;
	e->n = 0;
	e->has_score = false;
	for (size_t k = 0; k < sizeof tags / sizeof tags[0]; k++) {
		size_t tl = strlen(tags[k]);
		const char *at = find_tag(tags[k], text, len, 0);
		if (!at)
			continue;
		if (find_tag(tags[k], text, len, (size_t)(at - text) + tl))
			return -1;
		found = true;
		const char *p = at + tl, *end = memchr(p, '\n', len - (size_t)(p - text));
		if (!end)
			end = text + len;
		const char *b = p, *q = end;
		while (b < q && isspace((unsigned char)*b))
			b++;
		while (q > b && isspace((unsigned char)q[-1]))
			q--;
		if (k == 1 && is_number(b, q, &e->score)) {
			e->has_score = true;
			continue;
		}
		if (names)
			return -1;
		names = true;
		while (p <= end && e->n < PROB_EXPECT_MAX) {
			const char *comma = memchr(p, ',', (size_t)(end - p));
			const char *stop = comma ? comma : end;
			problem_expect_name(p, (size_t)(stop - p), e->names[e->n],
					    sizeof e->names[0]);
			if (e->names[e->n][0])
				e->n++;
			p = stop + 1;
		}
	}
	return found ? 1 : 0;
}

int problem_expect_read(const struct problem_submission *s, struct problem_expect *e, char *err,
			size_t errlen)
{
	memset(e, 0, sizeof *e);
	const struct problem_program *prog = &s->prog;
	for (int i = 0; i < prog->nfiles; i++) {
		char *path = problem_path_join(prog->dir, prog->files[i]);
		struct strbuf text = STRBUF_INIT;
		int rc = strbuf_read_file(&text, path, FILE_MAX);
		if (rc < 0 && rc != -EFBIG) {
			problem_fail(err, errlen, "cannot read '%s': %s", path, strerror(-rc));
			strbuf_release(&text);
			free(path);
			return -1;
		}
		int found = rc < 0 ? 0 : parse(text.buf, text.len, e);
		strbuf_release(&text);
		free(path);
		if (found < 0) {
			e->n = 0;
			e->has_score = false;
			return 0;
		}
		if (found) {
			e->annotated = true;
			snprintf(e->file, sizeof e->file, "%s", prog->files[i]);
			break;
		}
	}
	if (!e->annotated)
		return 0;
	char folder[32];
	problem_expect_name(s->folder, strlen(s->folder), folder, sizeof folder);
	for (int i = 0; i < e->n; i++)
		if (!strcmp(e->names[i], folder)) {
			snprintf(e->names[0], sizeof e->names[0], "%s", folder);
			e->n = 1;
			break;
		}
	return 0;
}
