/* interact: runs a submission and an interactive validator at once, wired by two pipes.
 *
 * How it works: two pipes (validator → submission, submission → validator),
 * created close-on-exec so no other sandbox started meanwhile inherits them.
 * The submission runs in a thread of its own (sandbox_run blocks), the
 * validator in the caller's; each run takes its two pipe ends (runner/sandbox.h,
 * stdio_fds), so once a process is gone its ends are closed and its peer sees
 * EOF. Who finished first decides between a crash and a rejection: a watcher
 * thread holds a copy of each pipe's read end and polls it for POLLHUP (all
 * writers gone), which comes the moment a side's process ends, before the
 * sandbox's own clean-up. It reads nothing. Once one side has ended, the
 * watcher drops its copy towards that side's peer, so a write into the dead
 * side's pipe raises SIGPIPE as it would without the watcher.
 */
#define _GNU_SOURCE
#include "judge/grading/interact.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"

/* The validator's wall limit beyond the submission's: time to judge what it
 * read once the submission is gone, and no more. */
#define INTERACT_GRACE_MS 3000

/* The watcher: read-end copies of both pipes, and a wake-up pipe. */
struct watch {
	int sub_out; /* copy of the read end of the submission's stdout pipe */
	int val_out; /* copy of the read end of the validator's stdout pipe */
	int wake;    /* read end: written once both runs are over */
	int first;   /* 1 submission, 2 validator, 0 unknown */
};

static void *watch_ends(void *arg)
{
	struct watch *w = arg;
	while (!w->first) {
		struct pollfd pf[3] = {
		    {.fd = w->sub_out}, {.fd = w->val_out}, {.fd = w->wake, .events = POLLIN}};
		if (poll(pf, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[0].revents & (POLLHUP | POLLERR))
			w->first = 1; /* a tie counts as the submission's: its own verdict */
		else if (pf[1].revents & (POLLHUP | POLLERR))
			w->first = 2;
		else if (pf[2].revents)
			break;
	}
	/* from now on a write towards the side that ended must break its pipe */
	int *peer = w->first == 1 ? &w->val_out : w->first == 2 ? &w->sub_out : NULL;
	if (peer) {
		close(*peer);
		*peer = -1;
	}
	return NULL;
}

struct sub_thread {
	struct sandbox *sb;
	struct run_spec spec;
	struct run_result *rr;
	int64_t end_us;
};

static void *run_submission(void *arg)
{
	struct sub_thread *t = arg;
	if (sandbox_run(t->sb, &t->spec, t->rr) < 0)
		t->rr->status = RUN_INTERNAL_ERROR;
	t->end_us = clock_mono_us();
	return NULL;
}

static void close_all(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* Pipes: [0,1] to the submission, [2,3] from it, [4] [5] the watcher's copies
 * of the read ends, [6,7] the watcher's wake-up. 0 or -1 (all closed). */
static int make_pipes(int p[8])
{
	for (int i = 0; i < 8; i++)
		p[i] = -1;
	if (pipe2(p, O_CLOEXEC) < 0 || pipe2(p + 2, O_CLOEXEC) < 0 || pipe2(p + 6, O_CLOEXEC) < 0 ||
	    (p[4] = fcntl(p[2], F_DUPFD_CLOEXEC, 0)) < 0 ||
	    (p[5] = fcntl(p[0], F_DUPFD_CLOEXEC, 0)) < 0) {
		int e = errno;
		close_all(p, 8);
		errno = e;
		return -1;
	}
	return 0;
}

int interact_run(struct sandbox *sb, const struct run_spec *spec, struct checker *c,
		 const struct checker_call *call, struct interact_result *r, char *err,
		 size_t errlen)
{
	int p[8];
	memset(r, 0, sizeof *r);
	run_result_init(&r->sub);
	if (make_pipes(p) < 0) {
		snprintf(err, errlen, "interactive run: pipe: %s", strerror(errno));
		return -1;
	}
	struct watch w = {.sub_out = p[4], .val_out = p[5], .wake = p[6]};
	struct sub_thread t = {.sb = sb, .spec = *spec, .rr = &r->sub};
	t.spec.stdio_fds = true;
	t.spec.stdin_fd = p[0];
	t.spec.stdout_fd = p[3];
	t.spec.stdin_data = NULL;
	t.spec.stdin_path = NULL;
	pthread_t tid, wid;
	int rc = pthread_create(&wid, NULL, watch_ends, &w);
	if (rc == 0 && (rc = pthread_create(&tid, NULL, run_submission, &t)) != 0) {
		(void)!write(p[7], "x", 1);
		pthread_join(wid, NULL);
	}
	if (rc != 0) {
		snprintf(err, errlen, "interactive run: cannot start a thread: %s", strerror(rc));
		close_all(p, 8);
		return -1;
	}
	/* the validator outlives the submission: it must see its end to judge it */
	checker_interact(c, call, p[2], p[1], spec->limits.wall_ms + INTERACT_GRACE_MS, &r->val);
	int64_t val_end = clock_mono_us();
	pthread_join(tid, NULL);
	(void)!write(p[7], "x", 1);
	pthread_join(wid, NULL);
	r->validator_first = w.first ? w.first == 2 : val_end < t.end_us;
	p[4] = w.sub_out;
	p[5] = w.val_out;
	close_all(p + 4, 4);
	return 0;
}

static enum sub_status run_failure(enum run_status s)
{
	switch (s) {
	case RUN_RUNTIME_ERROR:
		return SUB_RUNTIME_ERROR;
	case RUN_TIMEOUT:
		return SUB_TIMEOUT;
	case RUN_MEMORY_LIMIT:
		return SUB_MEMORY_LIMIT;
	case RUN_OUTPUT_LIMIT:
		return SUB_OUTPUT_LIMIT;
	default:
		return SUB_INTERNAL_ERROR;
	}
}

enum sub_status interact_verdict(const struct interact_result *r, char *err, size_t errlen)
{
	const struct run_result *rr = &r->sub;
	if (rr->status == RUN_INTERNAL_ERROR) {
		snprintf(err, errlen, "sandbox failed: %s",
			 rr->message[0] ? rr->message : "invalid run specification");
		return SUB_INTERNAL_ERROR;
	}
	/* the judge stopped the submission for a limit: its verdict, whatever the
	 * validator made of the silence that followed */
	if (rr->status == RUN_TIMEOUT || rr->status == RUN_MEMORY_LIMIT ||
	    rr->status == RUN_OUTPUT_LIMIT)
		return run_failure(rr->status);
	/* a validator that rejected first ended the talk: the submission's crash on
	 * the closed pipe or on the end of its input follows from that */
	if (r->val.outcome == CHECKER_REJECT && r->validator_first)
		return SUB_WRONG_ANSWER;
	if (rr->status != RUN_OK)
		return run_failure(rr->status);
	if (r->val.outcome == CHECKER_FAIL) {
		snprintf(err, errlen, "%s", r->val.message);
		return SUB_INTERNAL_ERROR;
	}
	return r->val.outcome == CHECKER_ACCEPT ? SUB_ACCEPTED : SUB_WRONG_ANSWER;
}
