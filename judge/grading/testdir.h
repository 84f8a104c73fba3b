/* testdir: a folder of NAME.in / NAME.ans pairs, read in lexicographic order. */
#pragma once
#include <stdbool.h>

#include "common/strbuf.h"

struct testdir_case {
	char *name; /* NAME, without .in */
	struct strbuf input;
	struct strbuf answer;
	bool has_answer; /* NAME.ans exists */
};

struct testdir {
	struct testdir_case *tests;
	int count;
};

/* Reads every regular NAME.in of dir (and NAME.ans beside it), sorted by name.
 * Returns 0, or -1 with a message in err (no .in files is an error). */
int testdir_load(struct testdir *td, const char *dir, char *err, size_t errlen);
void testdir_release(struct testdir *td);
