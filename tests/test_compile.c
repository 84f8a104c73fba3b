/* test_compile: compile commands of several sources, and the sources of a language. */
#include <criterion/criterion.h>
#include <string.h>

#include "judge/grading/compile.h"
#include "judge/grading/lang.h"

Test(compile, command_with_more_sources)
{
	char *compile[] = {"/usr/bin/g++", "-O2", "-o", "main", "main.cpp", "-lm", NULL};
	char *exts[] = {".cc", ".cpp", NULL};
	struct lang l = {.name = "cpp",
			 .source_file = "main.cpp",
			 .extensions = exts,
			 .compile_argv = compile,
			 .compile_options_at = -1};
	const char *extra[] = {"util.cpp", "more.cc", NULL};
	char **argv = compile_command(&l, extra, NULL);
	const char *want[] = {"/usr/bin/g++", "-O2",	 "-o",	"main", "main.cpp",
			      "util.cpp",     "more.cc", "-lm", NULL};
	for (int i = 0; want[i]; i++)
		cr_assert_str_eq(argv[i], want[i], "argv[%d]", i);
	cr_assert_null(argv[8]);
	compile_argv_free(argv);
	cr_assert(compile_is_source(&l, "x.cc"));
	cr_assert(compile_is_source(&l, "dir.d/x.cpp"));
	cr_assert_not(compile_is_source(&l, "x.h"));
	cr_assert_not(compile_is_source(&l, "x.c"));
	cr_assert_not(compile_is_source(&l, ".cc"), "a hidden file is no source");
	cr_assert_not(compile_is_source(&l, "x.CC"), "endings are case-sensitive");
	struct lang py = {.name = "python", .source_file = "main.py"};
	cr_assert_null(compile_command(&py, extra, NULL), "interpreted: nothing to compile");
	cr_assert_not(compile_is_source(&py, "x.py"), "no extensions: no sources");
}

Test(compile, command_with_options)
{
	/* the language file said "-o main {options} main.cpp -lm" */
	char *compile[] = {"/usr/bin/g++", "-o", "main", "main.cpp", "-lm", NULL};
	struct lang l = {.name = "cpp",
			 .source_file = "main.cpp",
			 .compile_argv = compile,
			 .compile_options_at = 3};
	const char *extra[] = {"util.cpp", NULL}, *opts[] = {"-DN=5", "-O3", NULL};
	char **argv = compile_command(&l, extra, opts);
	const char *want[] = {"/usr/bin/g++", "-o",	  "main", "-DN=5", "-O3",
			      "main.cpp",     "util.cpp", "-lm",  NULL};
	for (int i = 0; want[i]; i++)
		cr_assert_str_eq(argv[i], want[i], "argv[%d]", i);
	cr_assert_null(argv[8]);
	compile_argv_free(argv);
	/* at the end of the command */
	l.compile_options_at = 5;
	argv = compile_command(&l, NULL, opts);
	cr_assert_str_eq(argv[5], "-DN=5");
	cr_assert_str_eq(argv[6], "-O3");
	cr_assert_null(argv[7]);
	compile_argv_free(argv);
}

/* The shipped languages' sources: what the package format's table said before
 * the extensions key (a file is a source when its format language is the main
 * file's). */
Test(compile, shipped_extensions)
{
	struct lang_registry reg;
	char err[512];
	cr_assert_eq(lang_load_dir(&reg, "languages", err, sizeof err), 0, "%s", err);
	static const struct {
		const char *lang, *file;
		bool source;
	} cases[] = {
	    {"c", "a.c", true},	      {"c", "a.h", false},	 {"c", "a.cc", false},
	    {"cpp", "a.cc", true},    {"cpp", "a.C", true},	 {"cpp", "a.c++", true},
	    {"cpp", "a.cxx", true},   {"cpp", "a.c", false},	 {"cpp", "a.hpp", false},
	    {"python", "a.py", true}, {"python", "a.py3", true}, {"python", "a.py2", false},
	    {"node", "a.js", true},   {"node", "a.mjs", true},	 {"node", "a.cjs", true},
	    {"node", "a.ts", false},  {"csharp", "a.cs", true},	 {"csharp", "a.fs", false},
	    {"bash", "a.sh", true},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		cr_expect_eq(compile_is_source(lang_find(&reg, cases[i].lang), cases[i].file),
			     cases[i].source, "%s %s", cases[i].lang, cases[i].file);
	lang_registry_release(&reg);
}
