/* compile: compile commands of several sources, and the sources of a language. */
#include "judge/grading/compile.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "judge/grading/lang.h"

static void push(char ***v, size_t *n, const char *s)
{
	char **p = xreallocarray(*v, *n + 2, sizeof *p);
	p[(*n)++] = xstrdup(s);
	p[*n] = NULL;
	*v = p;
}

char **compile_command(const struct lang *lang, const char *const *extra_sources,
		       const char *const *options)
{
	if (!lang->compile_argv)
		return NULL;
	char **out = xcalloc(1, sizeof *out);
	size_t n = 0, slen = strlen(lang->source_file);
	bool inserted = false;
	for (char **a = lang->compile_argv;; a++) {
		if (a - lang->compile_argv == lang->compile_options_at)
			for (int i = 0; options && options[i]; i++)
				push(&out, &n, options[i]);
		if (!*a)
			break;
		push(&out, &n, *a);
		size_t len = strlen(*a);
		bool names_source = !strcmp(*a, lang->source_file) || !strcmp(*a, "{source}") ||
				    (len > slen && (*a)[len - slen - 1] == '/' &&
				     !strcmp(*a + len - slen, lang->source_file));
		if (names_source && !inserted) {
			for (int i = 0; extra_sources && extra_sources[i]; i++)
				push(&out, &n, extra_sources[i]);
			inserted = true;
		}
	}
	if (!inserted)
		for (int i = 0; extra_sources && extra_sources[i]; i++)
			push(&out, &n, extra_sources[i]);
	return out;
}

void compile_argv_free(char **argv)
{
	if (!argv)
		return;
	for (char **p = argv; *p; p++)
		free(*p);
	free(argv);
}

bool compile_is_source(const struct lang *lang, const char *file)
{
	size_t n = strlen(file);
	for (char **e = lang->extensions; e && *e; e++) {
		size_t k = strlen(*e);
		/* a name that is only an ending (".py") is a hidden file, no source */
		if (n > k && !strcmp(file + n - k, *e))
			return true;
	}
	return false;
}
