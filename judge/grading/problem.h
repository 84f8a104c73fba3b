/* problem (problem_): ICPC problem packages (Kattis problem package format, legacy
 * and 2023-07 / 2025-09 versions) loaded from a folder.
 *
 * A package is a folder holding problem.yaml, data/sample and data/secret (test
 * cases NAME.in / NAME.ans, possibly in nested groups with testdata.yaml or
 * test_group.yaml), an optional custom output validator (output_validators/ or
 * output_validator/) and example submissions under submissions/<verdict>/.
 * Loading reads only the YAML files and folder listings: test data stays on disk
 * and is named by host paths, so a package of gigabytes loads in milliseconds.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "judge/grading/compare.h"

struct lang;
struct lang_registry;

/* Most runs of one test in a multi-pass problem (limits.validation_passes). */
#define PROB_MAX_PASSES 100

enum problem_format {
	PROB_LEGACY,  /* no problem_format_version, "legacy" or "legacy-icpc" */
	PROB_2023_07, /* "2023-07", "2023-07-draft" */
	PROB_2025_09, /* "2025-09", "2025-09-draft", "draft" */
};

/* A program given as one file or a folder of files: an output validator or a
 * submission. Language detection follows the package format's languages table
 * (languages/problem/languages.ini: file globs, most evidence files wins, ties
 * by priority; a shebang rule may keep files from counting). */
struct problem_program {
	char *name;   /* base name of the file or folder */
	char *dir;    /* host folder that holds the files */
	char **files; /* file names relative to dir, sorted; NULL-terminated */
	int nfiles;
	char *main_file;   /* entry point among files (the single file, main.*, an
			      entry file of the language, else the smallest source file);
			      NULL when no source */
	char *lang_code;   /* package-format language code ("cpp", "python3", "java"), or NULL */
	char *lang;	   /* the judge language that runs lang_code (its problem_language),
			      or NULL when the judge has none */
	char *unsupported; /* why the judge cannot run it (build/run scripts...), or NULL */
};

/* How a test group's score follows from its children's (scoring problems):
 * 2025-09 score_aggregation, 2023-07 scoring.aggregation, legacy grader_flags. */
enum problem_agg { PROB_AGG_SUM, PROB_AGG_MIN, PROB_AGG_PASS_FAIL };

/* A test group: data/sample, data/secret and every folder below them, with the
 * scoring settings of its testdata.yaml / test_group.yaml (score.h aggregates). */
struct problem_group {
	char *name;	      /* "sample", "secret", "secret/subtask1" */
	int parent;	      /* index in problem.groups; -1 for sample and secret */
	enum problem_agg agg; /* inherited from the parent group unless given */
	double max_score;     /* 2025-09 max_score, 2023-07 scoring.score; < 0: not given
				 (never inherited) */
	bool has_accept;      /* legacy accept_score given (inherited) */
	double accept_score;  /* legacy: an accepted test's score (default 1) */
	double reject_score;  /* legacy: a rejected test's score (default 0) */
	bool has_range;	      /* legacy range "lo hi": the group's score is clamped */
	double range_lo, range_hi;
};

struct problem_test {
	char *name;	/* path under data/ without .in, e.g. "secret/group1/03-max" */
	char *in_path;	/* host paths */
	char *ans_path; /* NULL only in interactive problems */
	bool is_sample;
	struct compare_options
	    cmp;	       /* default validator options (mode CMP_CHECKER with a custom one) */
	char **validator_args; /* arguments for the output validator, NULL-terminated */
	int validator_argc;
	int group; /* index in problem.groups of the folder that holds it */
};

struct problem_limits {
	double time_limit_s;	 /* 0 when the package gives none: infer it */
	double ac_to_time_limit; /* 2025-09 time_multipliers, defaults 2.0 and 1.5 */
	double time_limit_to_tle;
	double time_resolution;	   /* default 1.0 s */
	double time_multiplier;	   /* legacy: default 5 */
	double time_safety_margin; /* legacy: default 2 */
	long memory_mb;		   /* 0 = the judge's default */
	long output_mb;
	long compilation_time_s;
	long compilation_memory_mb;
	long validation_time_s;
	long validation_memory_mb;
	long validation_output_mb;
	long validation_passes; /* multi-pass: runs of a test at most (2025-09; default 2) */
};

struct problem_submission {
	char *folder; /* expected-verdict folder as written: "accepted", "wrong_answer", "WA" ... */
	char *path;   /* "accepted/sol.py", relative to submissions/ */
	struct problem_program prog;
};

/* Most result names one submission may be expected to get. */
#define PROB_EXPECT_MAX 8

/* A submission's expected results in DOMjudge's names (CORRECT, WRONG-ANSWER,
 * TIMELIMIT, RUN-ERROR, COMPILER-ERROR, NO-OUTPUT, OUTPUT-LIMIT, or any other
 * word as written, upper case), read as DOMjudge's problem import reads them
 * (webapp SubmissionService::parseExpectedAnnotation, ImportProblemService):
 * the first file, in name order, with an `@EXPECTED_RESULTS@: ` line or an
 * `@EXPECTED_SCORE@: ` line (case-insensitive; the latter is a score when its
 * value is a number, else result names), its comma-separated words trimmed,
 * upper-cased and the package format's spellings mapped (ACCEPTED -> CORRECT,
 * WRONG_ANSWER -> WRONG-ANSWER, TIME_LIMIT_EXCEEDED -> TIMELIMIT,
 * RUN_TIME_ERROR -> RUN-ERROR, COMPILER_ERROR -> COMPILER-ERROR, NO_OUTPUT ->
 * NO-OUTPUT, OUTPUT_LIMIT -> OUTPUT-LIMIT). When the folder's name maps to one
 * of them, that one alone is expected (DOMjudge restricts the annotation to
 * the folder's verdict). */
struct problem_expect {
	bool annotated; /* a file holds the line; else n == 0 */
	int n;
	char names[PROB_EXPECT_MAX][32];
	bool has_score; /* `@EXPECTED_SCORE@: ` with a number: the judging's score */
	double score;
	char file[128]; /* the file that holds it */
};

/* Reads s's annotation into e. A file that holds the line twice makes DOMjudge
 * refuse it: that file's annotation is ignored (as DOMjudge's import falls back
 * to the folder). Returns 0 (e->annotated false when there is none), or -1 with
 * err when a file cannot be read. */
int problem_expect_read(const struct problem_submission *s, struct problem_expect *e, char *err,
			size_t errlen);

/* DOMjudge's name of a result word or a submissions/ folder name (trimmed,
 * upper case, the mapping above) into out. */
void problem_expect_name(const char *word, size_t len, char *out, size_t outlen);

struct problem {
	char *id;	      /* folder name */
	char *dir;	      /* host path of the package */
	char *name;	      /* problem name (English, or the first one given) */
	char *format_version; /* as written in problem.yaml, "legacy" when absent */
	enum problem_format format;
	bool scoring;
	bool interactive;
	bool multi_pass;
	bool submit_answer;
	char *unsupported; /* why the judge cannot grade this problem, or NULL */
	bool custom_validator;
	struct problem_program validator; /* when custom_validator */
	struct problem_test *tests; /* samples first, then secret, each in lexicographic order */
	int ntests;
	struct problem_group *groups; /* parents before children, in walk order */
	int ngroups;
	int nsamples;
	struct problem_submission *subs; /* sorted by path */
	int nsubs;
	struct problem_limits limits;
	char *statement_path; /* host path of the statement (English Markdown preferred), or NULL */
};

/* True when id can name a package under problems_dir: [a-z0-9][a-z0-9_-]*, at most
 * 64 bytes, so it never holds '/', '..' or anything a shell or path would read. */
bool problem_id_valid(const char *id);

/* Loads the package in folder dir (any path; its base name becomes the id);
 * langs tells its programs' languages (the format's table and the languages
 * that run them). Returns 0 and fills p (release with problem_release), or -1
 * with a message in err naming the file at fault; p is then left empty. */
int problem_load(struct problem *p, const char *dir, const struct lang_registry *langs, char *err,
		 size_t errlen);

/* Loads problems_dir/id after checking id with problem_id_valid. Returns 0, -1 on a
 * bad package (message in err), or -2 when the id is invalid or no such package
 * exists (for a 404). */
int problem_open(struct problem *p, const char *problems_dir, const char *id,
		 const struct lang_registry *langs, char *err, size_t errlen);

void problem_release(struct problem *p);

/* Lists the package ids under problems_dir (folders with a valid id that hold a
 * problem.yaml), sorted. *ids is NULL-terminated, caller frees with problem_ids_free.
 * Returns the count, or -1 with a message in err. */
int problem_list(const char *problems_dir, char ***ids, char *err, size_t errlen);
void problem_ids_free(char **ids);

/* Time limit of a package that gives none, by the 2025-09 rules: the smallest
 * multiple of time_resolution that is at least t_ac * ac_to_time_limit and at
 * most t_tle / time_limit_to_tle (t_tle < 0: no time_limit_exceeded submission).
 * Returns 0 with *out in seconds, or -1 when no multiple fits. */
int problem_infer_time_limit(const struct problem_limits *l, double t_ac, double t_tle,
			     double *out);

/* The same for legacy packages, as Kattis problemtools does it: the limit is
 * t_ac * time_multiplier rounded to whole seconds (at least 1), and a
 * time_limit_exceeded submission must still time out at the margin
 * max(limit + 1, round(t_ac * time_multiplier * time_safety_margin)). */
void problem_legacy_time_limit(const struct problem_limits *l, double t_ac, double *limit,
			       double *tle_margin);

/* Included files (include/) that go with a submission in the package-format
 * language code (a judge language's problem_language; NULL: none): the regular
 * files of include/<code>/, else of include/default/ (2025-09). Returns the
 * count (0 when none) with *dir (the host folder, malloc'd) and *names (sorted,
 * NULL-terminated; free with problem_names_free), or -1 on a listing error. */
int problem_include_files(const struct problem *p, const char *code, char **dir, char ***names);
/* Frees a NULL-terminated vector of malloc'd strings; names may be NULL. */
void problem_names_free(char **names);

/* Package-format language code of one file name by the table of langs (globs
 * and priority; a file a shebang rule would have to read never counts), or
 * NULL. */
const char *problem_file_lang_code(const struct lang_registry *langs, const char *file);
