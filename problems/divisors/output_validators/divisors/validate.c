/* validate.c: accepts the divisors of n in any order, each exactly once. */
#include "validate.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static FILE *message;

FILE *judgemessage_open(const char *feedback_dir)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/judgemessage.txt", feedback_dir);
	return fopen(path, "w");
}

void wrong_answer(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (message) {
		vfprintf(message, fmt, ap);
		fputc('\n', message);
		fclose(message);
	}
	va_end(ap);
	exit(EXIT_WA);
}

size_t read_numbers(FILE *f, unsigned long long **out, const char *who)
{
	size_t n = 0, cap = 1024;
	unsigned long long *v = malloc(cap * sizeof *v);
	char tok[64];
	if (!v)
		abort();
	while (fscanf(f, "%63s", tok) == 1) {
		size_t len = strlen(tok);
		unsigned long long x = 0;
		if (len > 13)
			goto bad;
		for (size_t i = 0; i < len; i++) {
			if (!isdigit((unsigned char)tok[i]))
				goto bad;
			x = x * 10 + (unsigned long long)(tok[i] - '0');
		}
		if (x == 0 || x > 1000000000000ULL)
			goto bad;
		if (n == cap) {
			cap *= 2;
			v = realloc(v, cap * sizeof *v);
			if (!v)
				abort();
		}
		v[n++] = x;
		continue;
	bad:
		if (!strcmp(who, "answer"))
			abort(); /* a broken answer file is the package's fault, not the team's */
		wrong_answer("token %zu of the output, '%.20s', is not a number from 1 to 10^12",
			     n + 1, tok);
	}
	*out = v;
	return n;
}

static int by_value(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s input answer feedback_dir < output\n", argv[0]);
		return 1;
	}
	FILE *ans = fopen(argv[2], "r");
	if (!ans) {
		perror(argv[2]);
		return 1;
	}
	message = judgemessage_open(argv[3]);
	unsigned long long *want, *got;
	size_t nw = read_numbers(ans, &want, "answer");
	size_t ng = read_numbers(stdin, &got, "output");
	qsort(want, nw, sizeof *want, by_value);
	qsort(got, ng, sizeof *got, by_value);
	for (size_t i = 0; i + 1 < ng; i++)
		if (got[i] == got[i + 1])
			wrong_answer("divisor %llu printed more than once", got[i]);
	for (size_t i = 0, j = 0; i < nw || j < ng;) {
		if (j == ng || (i < nw && want[i] < got[j]))
			wrong_answer("divisor %llu is missing", want[i]);
		if (i == nw || got[j] < want[i])
			wrong_answer("%llu is not a divisor", got[j]);
		i++, j++;
	}
	if (message)
		fclose(message);
	return EXIT_AC;
}
