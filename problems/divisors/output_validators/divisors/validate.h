/* validate.h: reading numbers and reporting a judgement (ICPC output validator contract). */
#pragma once
#include <stdio.h>

#define EXIT_AC 42
#define EXIT_WA 43

/* Opens feedback_dir/judgemessage.txt (NULL when it cannot). */
FILE *judgemessage_open(const char *feedback_dir);

/* Writes a message to judgemessage.txt and exits 43 (wrong answer). */
void wrong_answer(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Reads whitespace-separated positive integers up to 10^12 from f into a
 * growing array. Returns the count; on a token that is not such a number,
 * calls on_bad (wrong_answer for the team's output, abort for the answer file). */
size_t read_numbers(FILE *f, unsigned long long **out, const char *who);
