/* interact: runs a submission and an interactive validator at once and relays their talk.
 *
 * How it works: both are live processes (runner/sandbox.h, sandbox_start): the
 * submission in its own box and backend, the validator in its box where trusted
 * tools run. One loop on the judge's side polls their pipes and copies the
 * submission's stdout to the validator's stdin and back, each direction through
 * a 64 KiB buffer (a side that does not read stops the other one's output, as a
 * pipe would), and collects both stderr. Every 10 ms it checks the submission's
 * CPU and wall time and stops it at its limit; its output limit holds for what
 * it sends the validator. The end of a side's stdout (EOF,
 * or POLLHUP seen before the buffered bytes are read) is the end of that side:
 * the first one seen tells a crash from a rejection; its peer's stdin is then
 * closed once the bytes in flight are delivered, so the peer reads EOF. The loop
 * ends when both sides have ended or at the submission's wall limit plus
 * INTERACT_GRACE_MS; what is still running then is killed.
 */
#define _GNU_SOURCE
#include "judge/grading/interact.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "judge/grading/grade.h"

/* The validator's wall limit beyond the submission's: time to judge what it
 * read once the submission is gone, and no more. */
#define INTERACT_GRACE_MS 3000
#define TICK_MS		  10
/* The validator's stderr kept for its failure message. */
#define VAL_ERR_MAX 4096

/* One direction of the talk: from a read end to a process's stdin. */
struct relay {
	int from;		 /* read end, -1 once at its end (owned by the proc) */
	struct sandbox_proc *to; /* whose stdin receives the bytes */
	bool to_open;
	char buf[65536];
	size_t len, off;
	size_t total; /* bytes read from the source */
};

struct pair {
	struct sandbox_proc *sub, *val;
	struct relay up;   /* submission → validator */
	struct relay down; /* validator → submission */
	int sub_err, val_err;
	struct strbuf sub_errs, val_errs;
	size_t sub_err_max;
	bool sub_err_cut;
	int first;     /* whose stdout ended first: 1 submission, 2 validator */
	bool val_done; /* the validator was waited for (checker_finish) */
};

static int stdin_fd(struct sandbox_proc *p)
{
	int fd = -1;
	sandbox_proc_fds(p, &fd, NULL, NULL);
	return fd;
}

/* Reads what fd has into sb (at most max bytes kept). Returns false at its end. */
static bool drain(int fd, struct strbuf *sb, size_t max, bool *cut)
{
	char tmp[4096];
	ssize_t n = read(fd, tmp, sizeof tmp);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0)
		return false;
	size_t keep = sb->len < max ? max - sb->len : 0;
	strbuf_add(sb, tmp, (size_t)n < keep ? (size_t)n : keep);
	if ((size_t)n > keep && cut)
		*cut = true;
	return true;
}

/* The relay's source ended (side 1 or 2): the first such end is noted. */
static void source_ended(struct pair *pr, struct relay *r, int side)
{
	r->from = -1;
	if (!pr->first)
		pr->first = side;
}

/* Moves bytes along r as far as fds allow; revents of its source and sink. */
static void relay_step(struct pair *pr, struct relay *r, int side, short in_ev, short out_ev)
{
	if (r->len == 0 && r->from >= 0 && (in_ev & (POLLIN | POLLHUP | POLLERR))) {
		ssize_t n = read(r->from, r->buf, sizeof r->buf);
		if (n > 0) {
			r->len = (size_t)n;
			r->off = 0;
			r->total += (size_t)n;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			source_ended(pr, r, side);
		}
	} else if (r->from >= 0 && (in_ev & (POLLHUP | POLLERR)) && !pr->first) {
		pr->first = side; /* ended with bytes still to read */
	}
	if (r->len > 0 && r->to_open && (out_ev & (POLLOUT | POLLERR | POLLHUP))) {
		ssize_t n = write(stdin_fd(r->to), r->buf + r->off, r->len - r->off);
		if (n > 0 && (r->off += (size_t)n) == r->len)
			r->len = 0;
		else if (n < 0 && errno != EAGAIN && errno != EINTR)
			r->len = 0, r->to_open = false; /* the reader is gone */
	}
	if (!r->to_open)
		r->len = 0;
	/* all delivered and nothing more to come: the reader gets EOF */
	if (r->from < 0 && r->len == 0 && stdin_fd(r->to) >= 0)
		sandbox_proc_close_stdin(r->to);
}

static void set_nonblock(int fd)
{
	if (fd >= 0)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Polls once (at most TICK_MS) and moves what is ready. */
static void pump_once(struct pair *pr)
{
	struct pollfd pf[6];
	struct relay *rs[2] = {&pr->up, &pr->down};
	for (int i = 0; i < 2; i++) {
		struct relay *r = rs[i];
		pf[2 * i] = (struct pollfd){.fd = r->len == 0 ? r->from : -1, .events = POLLIN};
		int out = r->len > 0 && r->to_open ? stdin_fd(r->to) : -1;
		pf[2 * i + 1] = (struct pollfd){.fd = out, .events = POLLOUT};
		if (r->len > 0 && r->from >= 0 && pf[2 * i].fd < 0)
			pf[2 * i] = (struct pollfd){.fd = r->from, .events = 0}; /* HUP only */
	}
	pf[4] = (struct pollfd){.fd = pr->sub_err, .events = POLLIN};
	pf[5] = (struct pollfd){.fd = pr->val_err, .events = POLLIN};
	if (poll(pf, 6, TICK_MS) < 0)
		return;
	relay_step(pr, &pr->up, 1, pf[0].revents, pf[1].revents);
	relay_step(pr, &pr->down, 2, pf[2].revents, pf[3].revents);
	if (pf[4].revents && !drain(pr->sub_err, &pr->sub_errs, pr->sub_err_max, &pr->sub_err_cut))
		pr->sub_err = -1;
	if (pf[5].revents && !drain(pr->val_err, &pr->val_errs, VAL_ERR_MAX, NULL))
		pr->val_err = -1;
}

/* True once the submission is past its CPU or wall limit. */
static bool over_limits(struct pair *pr, const struct run_limits *l, int64_t deadline_us)
{
	long cpu_ms = 0;
	return clock_mono_us() >= deadline_us ||
	       (sandbox_proc_usage(pr->sub, &cpu_ms, NULL) == 0 && cpu_ms > l->cpu_ms);
}

/* The validator's verdict once its stdout and stderr have both ended first:
 * it has exited (or is about to). A rejection ends the talk: whatever the
 * submission does next cannot change the verdict (interact_verdict), so it is
 * stopped now rather than at its limit, as the format's reference runner ends
 * it by closing its output pipe (problemtools support/interactive). */
static void validator_done(struct pair *pr, struct checker *c, const struct checker_call *call,
			   int64_t end_us, struct interact_result *r, bool *sub_waited)
{
	int64_t now = clock_mono_us();
	checker_finish(c, call, pr->val, now < end_us ? (end_us - now) / 1000 : 0, &pr->val_errs,
		       &r->val);
	pr->val_done = true;
	if (r->val.outcome == CHECKER_REJECT && !*sub_waited) {
		sandbox_proc_signal(pr->sub, SIGKILL);
		sandbox_proc_wait(pr->sub, 0, &r->sub);
		*sub_waited = true;
	}
}

/* Relays until both sides ended, the submission is stopped at a limit (then
 * waited into r->sub), or end_us. */
static void talk(struct pair *pr, struct checker *c, const struct checker_call *call,
		 const struct run_limits *l, int64_t sub_deadline_us, int64_t end_us,
		 struct interact_result *r, bool *sub_waited)
{
	while (clock_mono_us() < end_us) {
		bool open = pr->up.from >= 0 || pr->down.from >= 0 || pr->sub_err >= 0 ||
			    pr->val_err >= 0 || pr->up.len || pr->down.len;
		if (!open)
			break;
		if (!pr->val_done && pr->first == 2 && pr->down.from < 0 && pr->val_err < 0) {
			validator_done(pr, c, call, end_us, r, sub_waited);
		} else if (!*sub_waited && pr->up.total > (size_t)l->stdout_bytes) {
			/* the output cap holds for what the validator is sent too */
			sandbox_proc_signal(pr->sub, SIGKILL);
			sandbox_proc_wait(pr->sub, 0, &r->sub);
			if (r->sub.status != RUN_INTERNAL_ERROR) {
				r->sub.status = RUN_OUTPUT_LIMIT;
				r->sub.out_truncated = true;
			}
			*sub_waited = true;
		} else if (!*sub_waited && over_limits(pr, l, sub_deadline_us)) {
			/* killed at its limit: timeout by the runner's rule */
			sandbox_proc_wait(pr->sub, 0, &r->sub);
			*sub_waited = true;
		}
		pump_once(pr);
	}
}

int interact_run(struct sandbox *sb, const struct run_spec *spec, struct checker *c,
		 const struct checker_call *call, struct interact_result *r, char *err,
		 size_t errlen)
{
	memset(r, 0, sizeof *r);
	run_result_init(&r->sub);
	struct pair pr = {.sub_errs = STRBUF_INIT, .val_errs = STRBUF_INIT};
	pr.sub_err_max = (size_t)spec->limits.stderr_bytes;
	int64_t t0 = clock_mono_us();
	int64_t sub_deadline = t0 + spec->limits.wall_ms * 1000LL;
	int64_t end = sub_deadline + INTERACT_GRACE_MS * 1000LL;
	if (checker_start(c, call, spec->limits.wall_ms + INTERACT_GRACE_MS, &pr.val, err, errlen) <
	    0)
		return -1;
	if (sandbox_start(sb, spec, &pr.sub, err, errlen) < 0) {
		sandbox_proc_free(pr.val);
		return -1;
	}
	int sub_out, val_out;
	sandbox_proc_fds(pr.sub, NULL, &sub_out, &pr.sub_err);
	sandbox_proc_fds(pr.val, NULL, &val_out, &pr.val_err);
	pr.up = (struct relay){.from = sub_out, .to = pr.val, .to_open = true};
	pr.down = (struct relay){.from = val_out, .to = pr.sub, .to_open = true};
	int fds[6] = {sub_out, val_out, pr.sub_err, pr.val_err, stdin_fd(pr.sub), stdin_fd(pr.val)};
	for (int i = 0; i < 6; i++)
		set_nonblock(fds[i]);
	/* a write to a side that is gone fails with EPIPE here, never kills the judge */
	sigset_t pipe_set, old;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	bool sub_waited = false;
	talk(&pr, c, call, &spec->limits, sub_deadline, end, r, &sub_waited);
	struct timespec zero = {0, 0};
	while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	int64_t now = clock_mono_us();
	if (!sub_waited)
		sandbox_proc_wait(pr.sub, now < sub_deadline ? (sub_deadline - now) / 1000 : 0,
				  &r->sub);
	now = clock_mono_us();
	if (!pr.val_done)
		checker_finish(c, call, pr.val, now < end ? (end - now) / 1000 : 0, &pr.val_errs,
			       &r->val);
	strbuf_add(&r->sub.err, pr.sub_errs.buf, pr.sub_errs.len);
	r->sub.err_truncated = pr.sub_err_cut;
	r->validator_first = pr.first == 2;
	sandbox_proc_free(pr.sub);
	sandbox_proc_free(pr.val);
	strbuf_release(&pr.sub_errs);
	strbuf_release(&pr.val_errs);
	return 0;
}

enum sub_status interact_verdict(const struct interact_result *r, char *err, size_t errlen)
{
	const struct run_result *rr = &r->sub;
	if (rr->status == RUN_INTERNAL_ERROR) {
		snprintf(err, errlen, "sandbox failed: %s",
			 rr->message[0] ? rr->message : "invalid run specification");
		return SUB_INTERNAL_ERROR;
	}
	/* a validator that rejected first ended the talk: what the submission did
	 * after that (ran out of time waiting for an answer, crashed on the closed
	 * pipe or on the end of its input) follows from that. Kattis' rule, stated
	 * in problemtools' examples/guess/submissions/wrong_answer/guess_tle.cc
	 * and applied in problemtools/judge/execute.py (_run_interactive); DOMjudge
	 * judgedaemon determineVerdict() has the same */
	if (r->val.outcome == CHECKER_REJECT && r->validator_first)
		return SUB_WRONG_ANSWER;
	/* the judge stopped the submission for a limit: its verdict, whatever the
	 * validator made of the silence that followed */
	if (rr->status == RUN_TIMEOUT || rr->status == RUN_MEMORY_LIMIT ||
	    rr->status == RUN_OUTPUT_LIMIT)
		return grade_run_verdict(rr->status);
	if (rr->status != RUN_OK)
		return grade_run_verdict(rr->status);
	if (r->val.outcome == CHECKER_FAIL) {
		snprintf(err, errlen, "%s", r->val.message);
		return SUB_INTERNAL_ERROR;
	}
	return r->val.outcome == CHECKER_ACCEPT ? SUB_ACCEPTED : SUB_WRONG_ANSWER;
}
