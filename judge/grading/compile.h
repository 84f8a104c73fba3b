/* compile (compile_): the compile command of a program of several source
 * files, and which files are sources of a language. Shared by the stdin
 * pipeline (grade.c), function problems (funcgrade.c) and output validators
 * (checker.c). */
#pragma once
#include <stdbool.h>

struct lang;

/* The compile argv of lang for a program of several source files: lang's argv
 * with every other source file inserted after the argument naming
 * lang->source_file (the main file takes that name in the box), and the
 * request's compiler options (NULL-terminated, may be NULL) where the compile
 * command said {options} (lang->compile_options_at). Returns a NULL-terminated
 * malloc'd array of malloc'd strings (free with compile_argv_free), NULL when
 * lang compiles nothing. */
char **compile_command(const struct lang *lang, const char *const *extra_sources,
		       const char *const *options);
/* Frees what compile_command returned; argv may be NULL. */
void compile_argv_free(char **argv);

/* True when the file named is a source file of lang (its name ends with one of
 * lang's extensions), so it is compiled with the main one. */
bool compile_is_source(const struct lang *lang, const char *file);
