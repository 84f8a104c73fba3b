/* interact (interact_): one test of an interactive problem: the submission and
 * the package's output validator run at the same time as live processes
 * (runner/sandbox.h, sandbox_start), each in its own sandbox (the submission
 * in its backend, the validator where trusted tools run), and the judge relays
 * the submission's stdout to the validator's stdin and back.
 *
 * The submission keeps its own CPU, wall and memory limits; the validator gets
 * the submission's wall limit plus 3 s (its own CPU and memory limits), so
 * neither can hang the judge: when one side ends, the other reads EOF (or a
 * write fails), and both wall limits bound the rest. The verdict
 * (interact_verdict) follows the format: the validator's exit code decides
 * (42 accepted, 43 wrong answer) unless the submission failed first. A
 * validator that rejects first ends the talk: the submission is stopped then.
 */
#pragma once
#include <stdbool.h>

#include "judge/grading/checker.h"
#include "judge/grading/status.h"
#include "runner/sandbox.h"

struct interact_result {
	struct run_result
	    sub; /* the submission's run (out stays empty: it went to the validator) */
	struct checker_verdict val;
	bool validator_first; /* the validator ended before the submission */
};

/* Runs spec (the submission, in sb; its stdin and stdout are the relay's)
 * against c for the test of call. Fills r (release r->sub with
 * run_result_release). Returns 0, or -1 with a message in err when a side could
 * not be started (the judge's fault: internal_error). */
int interact_run(struct sandbox *sb, const struct run_spec *spec, struct checker *c,
		 const struct checker_call *call, struct interact_result *r, char *err,
		 size_t errlen);

/* The verdict of a pair that ran, first match wins: internal_error when the
 * submission's sandbox failed; wrong_answer when the validator rejected before
 * the submission ended (whatever the submission did next: ran out of time
 * waiting for an answer, crashed on the closed pipe); the submission's timeout,
 * memory_limit or output_limit (the judge stopped it: a program that stops
 * reading or writing ends here); the submission's runtime_error; the
 * validator's word (accepted, wrong_answer), or internal_error (message in err)
 * when it failed (an exit code other than 42 or 43). Pure. */
enum sub_status interact_verdict(const struct interact_result *r, char *err, size_t errlen);
