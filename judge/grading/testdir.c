/* testdir: loads .in/.ans pairs of one folder. */
#include "judge/grading/testdir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

/* Each file of a test folder is capped; larger data belongs in a problem package. */
#define TESTDIR_FILE_MAX ((size_t)256 << 20)

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct testdir_case *)a)->name,
		      ((const struct testdir_case *)b)->name);
}

int testdir_load(struct testdir *td, const char *dir, char *err, size_t errlen)
{
	memset(td, 0, sizeof *td);
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "cannot open test folder '%s': %s", dir, strerror(errno));
		return -1;
	}
	int ret = -1, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 4 || strcmp(e->d_name + n - 3, ".in"))
			continue;
		if (td->count == cap) {
			cap = cap ? cap * 2 : 16;
			td->tests = xreallocarray(td->tests, (size_t)cap, sizeof *td->tests);
		}
		struct testdir_case *t = &td->tests[td->count++];
		memset(t, 0, sizeof *t);
		t->name = xstrndup(e->d_name, n - 3);
		strbuf_init(&t->input);
		strbuf_init(&t->answer);
	}
	if (!td->count) {
		snprintf(err, errlen, "no .in files in '%s'", dir);
		goto out;
	}
	qsort(td->tests, (size_t)td->count, sizeof *td->tests, by_name);
	for (int i = 0; i < td->count; i++) {
		struct testdir_case *t = &td->tests[i];
		char path[4096];
		snprintf(path, sizeof path, "%s/%s.in", dir, t->name);
		int rc = strbuf_read_file(&t->input, path, TESTDIR_FILE_MAX);
		if (rc < 0) {
			snprintf(err, errlen, "cannot read '%s': %s", path, strerror(-rc));
			goto out;
		}
		snprintf(path, sizeof path, "%s/%s.ans", dir, t->name);
		rc = strbuf_read_file(&t->answer, path, TESTDIR_FILE_MAX);
		if (rc == 0) {
			t->has_answer = true;
		} else if (rc != -ENOENT) {
			snprintf(err, errlen, "cannot read '%s': %s", path, strerror(-rc));
			goto out;
		}
	}
	ret = 0;
out:
	closedir(d);
	if (ret < 0)
		testdir_release(td);
	return ret;
}

void testdir_release(struct testdir *td)
{
	for (int i = 0; i < td->count; i++) {
		free(td->tests[i].name);
		strbuf_release(&td->tests[i].input);
		strbuf_release(&td->tests[i].answer);
	}
	free(td->tests);
	td->tests = NULL;
	td->count = 0;
}
