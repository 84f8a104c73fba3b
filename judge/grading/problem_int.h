/* problem_int: helpers shared by the files of the problem module (problem_):
 * problem.c, problem_program.c and problem_data.c. Not a public API. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "judge/grading/problem.h"
#include "judge/grading/yaml.h"

/* printf into err (errlen bytes). */
void problem_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* a/b (one '/' between them), malloc'd. */
char *problem_path_join(const char *a, const char *b);
bool problem_is_dir(const char *path);
bool problem_is_file(const char *path);
bool problem_ends_with(const char *s, const char *suffix);
/* Sorted names in dir (names starting with '.' or '-' left out), NULL-terminated
 * (NULL when none; free with problem_strv_free). Returns count or -1 (errno set). */
int problem_list_dir(const char *dir, char ***out);
/* Frees a NULL-terminated vector of malloc'd strings; v may be NULL. */
void problem_strv_free(char **v);

/* A growable NULL-terminated string vector. */
struct problem_strv {
	char **v;
	int n, cap;
};

void problem_strv_push(struct problem_strv *s, const char *x);
/* Pushes the whitespace-separated words of text. */
void problem_strv_split(struct problem_strv *s, const char *text);
/* Pushes every string of the NULL-terminated src (which may be NULL). */
void problem_strv_copy(struct problem_strv *dst, char *const *src);
/* Makes s->v an allocated (possibly empty) NULL-terminated vector. */
void problem_strv_finish(struct problem_strv *s);
void problem_strv_release(struct problem_strv *s);

/* Appends the words of a validator-flags value n (named what in file): a string
 * of words, or (2023-07+) a sequence of strings. Returns 0, or -1 with a
 * message in err. */
int problem_yml_args(struct yaml_file *y, yaml_node_t *n, struct problem_strv *out,
		     const char *what, const char *file, char *err, size_t errlen);

/* The state of one problem_load. */
struct problem_loader {
	struct problem *p;
	const struct lang_registry *langs; /* the programs' languages */
	char **problem_args;		/* problem.yaml validator_flags / output_validator_args */
	struct problem_strv test_names; /* to catch a test and a group of one name */
	struct problem_group defaults;	/* legacy problem.yaml grading: every group's start */
	int cap;			/* allocated entries of p->tests */
	char *err;
	size_t errlen;
};

/* problem_program.c */

/* Fills prog from a file or a folder at path, its language by langs' table.
 * Returns 0, or -1 with a message in err (prog then needs problem_program_release). */
int problem_program_load(struct problem_program *prog, const char *path,
			 const struct lang_registry *langs, char *err, size_t errlen);
void problem_program_release(struct problem_program *prog);
/* Finds and loads the output validator program when the package has or asks
 * for one (custom_asked: legacy `validation: custom`). Returns 0 or -1. */
int problem_load_validator(struct problem_loader *L, bool custom_asked);
/* Loads submissions/<verdict>/<program>, sorted by path. Returns 0 or -1. */
int problem_load_submissions(struct problem_loader *L);

/* problem_data.c */

/* Loads the test cases of data/sample then data/secret into L->p. Returns 0,
 * or -1 with a message in L->err. */
int problem_load_data(struct problem_loader *L);

/* problem_group.c */

/* Reads the scoring settings of a group's configuration file (root of the YAML
 * y, read from path) into g, which holds the inherited ones. Returns 0, or -1
 * with a message in L->err; a setting the judge cannot honour sets
 * L->p->unsupported. */
int problem_group_settings(struct problem_loader *L, struct yaml_file *y, yaml_node_t *root,
			   const char *path, struct problem_group *g);
/* Appends a group named name (copying settings) and returns its index. */
int problem_group_add(struct problem_loader *L, const char *name, int parent,
		      const struct problem_group *settings);
