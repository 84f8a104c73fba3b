/* checker (checker_): custom output validators of problem packages, built and run
 * in the sandbox with the ICPC contract:
 *     validator input answer feedback_dir [args] < team_output
 * exit 42 = accept, 43 = reject (judgemessage.txt in feedback_dir says why).
 *
 * A validator is trusted to judge but not trusted with the machine: it is
 * compiled and run in a sandbox workspace of its own, never the submission's box
 * (so a submission can neither read the answers nor plant files for the
 * validator). Another exit code or a signal is a fault of the package:
 * CHECKER_FAIL, which the grader reports as internal_error. A validator that
 * hits its own time, memory or output limit on this output is CHECKER_LIMIT:
 * the output was not accepted, and the grader gives the submission
 * wrong_answer with that reason, since what a submission writes can drive
 * a validator past its limits and internal_error would count it as the
 * judge's fault (docs/security.md, "Blame").
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "runner/sandbox.h"

struct judge_config;
struct lang_registry;
struct problem;
struct checker;

enum checker_outcome { CHECKER_ACCEPT, CHECKER_REJECT, CHECKER_FAIL, CHECKER_LIMIT };

struct checker_verdict {
	enum checker_outcome outcome;
	char message[512]; /* judgemessage.txt (accept/reject), or why the validator failed
			      or which limit it hit;
			      valid UTF-8, may be empty */
	long cpu_ms;
	long wall_ms;
	/* accept: the score the validator wrote (scoring problems): score.txt, or
	 * score_multiplier.txt when multiplier */
	bool has_score;
	bool multiplier;
	double score;
	bool nextpass; /* accept: it wrote nextpass.in (multi-pass; read into the call's) */
};

/* One run of the validator beyond checker_run's: multi-pass problems keep the
 * feedback folder between the passes of a test and take its nextpass.in. */
struct checker_call {
	const char *in_path; /* host file of the test's input */
	const char *in_data; /* when set: the input instead (a later pass's) */
	size_t in_len;
	const char *ans_path; /* host file of the answer, or NULL: an empty one */
	const char *output;   /* the submission's output */
	size_t output_len;
	const char *const *args; /* NULL-terminated, may be NULL */
	bool keep_feedback;	 /* a later pass of the same test: keep feedback/ */
	struct strbuf *nextpass; /* when set: receives nextpass.in (v->nextpass) */
};

/* Builds p's output validator (p->custom_validator must be set): opens a
 * sandbox workspace of its own on backend/slot, writes the program's files
 * (the main file under its language's source_file name, the others, headers
 * included, under their own names) and compiles every source file of the
 * language. Returns 0 with *out (free with checker_close), or -1 with a message
 * in err (unsupported language, compile error with the compiler's output,
 * sandbox fault): all faults of the judge or the package, never of a submission. */
int checker_build(const struct problem *p, const struct lang_registry *langs,
		  const struct judge_config *cfg, enum sandbox_backend backend, int slot,
		  struct checker **out, char *err, size_t errlen);

/* Runs the validator on one test case: the host files in_path and ans_path (the
 * answer may be NULL: an empty file is given), the submission's output, and
 * args (NULL-terminated, may be NULL). Always fills v; returns 0, or -1 only on
 * invalid arguments. */
int checker_run(struct checker *c, const char *in_path, const char *ans_path, const char *output,
		size_t output_len, const char *const *args, struct checker_verdict *v);

/* checker_run with the options of call (multi-pass). Same returns. */
int checker_run_call(struct checker *c, const struct checker_call *call, struct checker_verdict *v);

/* Starts the validator of an interactive problem on the test of call as a live
 * process (runner/sandbox.h, sandbox_start) in the validator's own box, where
 * trusted tools run: its stdin and stdout are pipes the caller relays to and
 * from the submission (interact.h). SIGPIPE is ignored in it, so a write to a
 * submission that is gone fails instead of killing it. wall_ms is its wall
 * limit. 0 with *out, or -1 with err (the judge's or the package's fault). */
int checker_start(struct checker *c, const struct checker_call *call, long wall_ms,
		  struct sandbox_proc **out, char *err, size_t errlen);
/* Waits for a started validator at most timeout_ms (then kills it) and fills
 * v as checker_run_call does; err_text is what it wrote on stderr (may be
 * NULL). proc is still the caller's to free. */
void checker_finish(struct checker *c, const struct checker_call *call, struct sandbox_proc *proc,
		    long timeout_ms, const struct strbuf *err_text, struct checker_verdict *v);

/* Kills what still runs and removes the validator's workspace. NULL is fine. */
void checker_close(struct checker *c);
