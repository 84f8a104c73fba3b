/* harness (harness_): the programs the judge writes around a function or a
 * test-code submission (LeetCode and HumanEval styles).
 *
 * How it works: the harness is the language's main file; the user's code sits
 * beside it (function_harness script: the language's function_file or
 * testcode_file) or is pasted into it under a #line directive naming
 * function_file (stl, clr: statically typed, types from the problem's
 * signature, else inferred from the args). The static parts are the
 * language's templates in languages_dir/harness/ (lang.h's harness keys); the
 * per-request parts are generated here. The
 * harness gets the arguments (never the expected values) and a nonce on
 * stdin, and writes one record per call, "\x1ejudge:NONCE {json}\n", on
 * stdout; the host (funcgrade.h) reads and compares them. Code that tampers
 * with the harness can only hurt its own verdict.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"
#include "judge/grading/model.h"

struct lang;

/* The files and stdin of one harnessed run. */
struct harness {
	struct strbuf main_source; /* goes in as the language's source_file */
	char *user_file;	   /* a second source beside it, or NULL */
	struct strbuf user_source;
	struct strbuf stdin_data;
};

void harness_init(struct harness *h);
void harness_release(struct harness *h);

/* True when lang has a harness for function problems (test_code false) or
 * test-code problems (test_code true). */
bool harness_supports(const struct lang *lang, bool test_code);

/* True when lang's harness compiles the user's code itself (harness_compiles),
 * so the language's compile step is left out. */
bool harness_compiles_itself(const struct lang *lang);

/* A template's line "#judge:include NAME" (at its start, the whole line) stands
 * for the file NAME beside the template: a part that several harnesses share
 * (languages/harness/ending.py) is written once, and each harness still goes
 * into the box as one file. */
#define HARNESS_INCLUDE "#judge:include "

/* Reads the template name in dir (languages_dir/harness) into out (appending),
 * its include lines replaced by the files they name. Every reader of a harness
 * template reads it so. Returns 0, or -1 with a message in err. */
int harness_read_template(const char *dir, const char *name, struct strbuf *out, char *err,
			  size_t errlen);

/* Builds the harness of req (req->func or req->test_code) in lang with nonce
 * (hex, no spaces). dir is languages_dir/harness. Returns 0, or -1 with a
 * message in err (unsupported language, unreadable template, a type that the
 * language cannot take). */
int harness_make(const char *dir, const struct lang *lang, const struct grade_request *req,
		 const char *nonce, struct harness *h, char *err, size_t errlen);

/* The typed kinds (harness_typed.c): the user's code, under a #line naming
 * user_file, with the calls of req's tests, arguments as literals of the
 * signature's types: stl, C++ standard-library literals in a generated main()
 * after the prelude; clr, a table of .NET literals after the prelude, which
 * holds Main. */
int harness_stl(const char *prelude, const char *user_file, const struct grade_request *req,
		struct strbuf *out, char *err, size_t errlen);
int harness_clr(const char *prelude, const char *user_file, const struct grade_request *req,
		struct strbuf *out, char *err, size_t errlen);
