/* harness (harness_): the programs the judge writes around a function or a
 * test-code submission (LeetCode and HumanEval styles).
 *
 * How it works: the harness is the language's main file; the user's code sits
 * beside it (Python, Node: solution.* or program.*) or is pasted into it under
 * a #line directive (C++, C#, which need static types: from the problem's
 * signature, else inferred from the args). The static parts are files of
 * languages_dir/harness/; the per-request parts are generated here. The
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

/* True when lang (a language name) has a harness for function problems
 * (test_code false) or test-code problems (test_code true). */
bool harness_supports(const char *lang, bool test_code);

/* True when lang's harness compiles the user's code itself (Python), so the
 * language's compile step is left out. */
bool harness_compiles_itself(const char *lang);

/* Builds the harness of req (req->func or req->test_code) in lang with nonce
 * (hex, no spaces). dir is languages_dir/harness. Returns 0, or -1 with a
 * message in err (unsupported language, unreadable template, a type that the
 * language cannot take). */
int harness_make(const char *dir, const struct lang *lang, const struct grade_request *req,
		 const char *nonce, struct harness *h, char *err, size_t errlen);

/* The C++ and C# parts (harness_typed.c): the user's code with the calls of
 * f's tests, arguments as literals of the signature's types. */
int harness_cpp(const char *prelude, const struct grade_request *req, struct strbuf *out, char *err,
		size_t errlen);
int harness_csharp(const char *prelude, const struct grade_request *req, struct strbuf *out,
		   char *err, size_t errlen);
