/* problem_int: helpers shared by the files of the problem module (prob_):
 * problem.c, problem_program.c and problem_data.c. Not a public API. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "judge/grading/problem.h"
#include "judge/grading/yaml.h"

/* printf into err (errlen bytes). */
void prob_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* a/b (one '/' between them), malloc'd. */
char *prob_path_join(const char *a, const char *b);
bool prob_is_dir(const char *path);
bool prob_is_file(const char *path);
bool prob_ends_with(const char *s, const char *suffix);
/* Sorted names in dir (names starting with '.' or '-' left out), NULL-terminated
 * (NULL when none; free with prob_strv_free). Returns count or -1 (errno set). */
int prob_list_dir(const char *dir, char ***out);
/* Frees a NULL-terminated vector of malloc'd strings; v may be NULL. */
void prob_strv_free(char **v);

/* A growable NULL-terminated string vector. */
struct prob_strv {
	char **v;
	int n, cap;
};

void prob_strv_push(struct prob_strv *s, const char *x);
/* Pushes the whitespace-separated words of text. */
void prob_strv_split(struct prob_strv *s, const char *text);
/* Pushes every string of the NULL-terminated src (which may be NULL). */
void prob_strv_copy(struct prob_strv *dst, char *const *src);
/* Makes s->v an allocated (possibly empty) NULL-terminated vector. */
void prob_strv_finish(struct prob_strv *s);
void prob_strv_release(struct prob_strv *s);

/* Appends the words of a validator-flags value n (named what in file): a string
 * of words, or (2023-07+) a sequence of strings. Returns 0, or -1 with a
 * message in err. */
int prob_yml_args(struct yml *y, yaml_node_t *n, struct prob_strv *out, const char *what,
		  const char *file, char *err, size_t errlen);

/* The state of one prob_load. */
struct prob_loader {
	struct problem *p;
	const struct lang_registry *langs; /* the programs' languages */
	char **problem_args;	     /* problem.yaml validator_flags / output_validator_args */
	struct prob_strv test_names; /* to catch a test and a group of one name */
	struct prob_group defaults;  /* legacy problem.yaml grading: every group's start */
	int cap;		     /* allocated entries of p->tests */
	char *err;
	size_t errlen;
};

/* problem_program.c */

/* Fills prog from a file or a folder at path, its language by langs' table.
 * Returns 0, or -1 with a message in err (prog then needs prob_program_release). */
int prob_program_load(struct prob_program *prog, const char *path,
		      const struct lang_registry *langs, char *err, size_t errlen);
void prob_program_release(struct prob_program *prog);
/* Finds and loads the output validator program when the package has or asks
 * for one (custom_asked: legacy `validation: custom`). Returns 0 or -1. */
int prob_load_validator(struct prob_loader *L, bool custom_asked);
/* Loads submissions/<verdict>/<program>, sorted by path. Returns 0 or -1. */
int prob_load_submissions(struct prob_loader *L);

/* problem_data.c */

/* Loads the test cases of data/sample then data/secret into L->p. Returns 0,
 * or -1 with a message in L->err. */
int prob_load_data(struct prob_loader *L);

/* problem_group.c */

/* Reads the scoring settings of a group's configuration file (root of the YAML
 * y, read from path) into g, which holds the inherited ones. Returns 0, or -1
 * with a message in L->err; a setting the judge cannot honour sets
 * L->p->unsupported. */
int prob_group_settings(struct prob_loader *L, struct yml *y, yaml_node_t *root, const char *path,
			struct prob_group *g);
/* Appends a group named name (copying settings) and returns its index. */
int prob_group_add(struct prob_loader *L, const char *name, int parent,
		   const struct prob_group *settings);
