/* jsonval (jsonval_): comparing and showing JSON values, for function problems.
 *
 * Exact by default: same type and value (numbers as doubles, so 1 and 1.0
 * are equal, integers beyond 2^53 lose their last digits), objects by keys
 * in any order. With a tolerance, two numbers are equal when they differ by
 * at most abs_tol or by at most rel_tol of the expected one. unordered: a list
 * result may hold the expected elements in any order (top level only).
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"

struct jsonval_opts {
	double abs_tol; /* < 0: unset */
	double rel_tol; /* < 0: unset */
	bool unordered;
};

/* Exact comparison, no tolerance. */
void jsonval_opts_init(struct jsonval_opts *o);
/* True when got matches expected under o. Either may be NULL (no value). */
bool jsonval_equal(const cJSON *expected, const cJSON *got, const struct jsonval_opts *o);
/* Appends v as compact JSON, cut to about max bytes with "..." (a whole
 * UTF-8 character at the cut). */
void jsonval_show(struct strbuf *sb, const cJSON *v, size_t max);
/* Appends args (a JSON array) as a call's argument list without brackets:
 * "[2,7,11,15], 9", cut to about max bytes. */
void jsonval_show_args(struct strbuf *sb, const cJSON *args, size_t max);
