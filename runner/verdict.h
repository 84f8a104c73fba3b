/* verdict: the one place that turns what a backend saw of a run into its status.
 *
 * A backend (native.c, gvisor.c) never decides a status itself: it fills a
 * `struct run_facts` with what it observed and calls verdict_decide(), which
 * applies the rules below, first match wins:
 *
 *  1. fault: the sandbox itself failed (set-up, exec of the program, a
 *     lost init) -> internal_error with the backend's message. Whatever the
 *     program did after that is not its own doing, and a fault is never
 *     blamed on the program.
 *  2. capture failed: reading the program's output failed on the host ->
 *     internal_error. Same reason: our failure, not the program's.
 *  3. output over its cap -> output_limit. We ended the run because of it:
 *     a SIGKILL, a timeout or a missing status that follow are our doing.
 *  4. memory -> memory_limit, when any of: an OOM kill in the program's
 *     cgroup, init's memory flag (gVisor), a peak above the limit, or the
 *     host-side cgroup of the sandbox hit its limit *and* the program died
 *     of SIGKILL or left no status (a host failcnt alone, with a program
 *     that exited on its own, is the sandbox's overhead, not the program).
 *     Memory comes before time: a program thrashing at its memory limit
 *     runs slowly and may also hit the deadline, but memory is the cause.
 *  5. time -> timeout, when any of: the CPU limit was hit (a watcher, init's
 *     flag, or CPU used > limit), the wall deadline was hit, or the program
 *     died of SIGXCPU (RLIMIT_CPU). So a SIGKILL sent at the deadline is a
 *     timeout, never a runtime_error.
 *  6. no status: the program's end was not reported and none of the above
 *     explains it -> internal_error with the backend's message.
 *  7. signalled, or exited with a code other than 0 -> runtime_error.
 *  8. otherwise ok.
 *
 * Pure: no sandbox, no clock, no file; unit-tested in tests/test_verdict.c.
 */
#pragma once
#include <stdbool.h>

#include "runner/sandbox.h"

/* How the program ended, as far as the backend knows. */
enum run_end {
	RUN_END_UNKNOWN, /* no status reached us (init killed, sandbox died) */
	RUN_END_EXITED,	 /* code is the exit code */
	RUN_END_SIGNALED /* code is the signal */
};

/* What a backend observed of one run. Zero (verdict_facts_init) means "not seen". */
struct run_facts {
	/* the sandbox's own failure (rule 1): message says what failed */
	bool fault;
	/* reading the output failed (rule 2): capture_errno says why */
	bool capture_failed;
	int capture_errno;
	enum run_end end;
	int code;
	long long cpu_us;  /* CPU time of the program's tree */
	long long wall_us; /* real time of the run */
	long peak_kb;	   /* peak memory of the program; 0 = not measured */
	bool oom_kill;	   /* OOM kill in the program's cgroup, or init's memory flag */
	bool host_oom;	   /* the sandbox's own (host) cgroup failed an allocation or killed */
	bool cpu_limit_hit;
	bool deadline_hit;
	bool output_over; /* stdout went over limits.stdout_bytes */
	/* fault: what failed; RUN_END_UNKNOWN: what the backend knows of it */
	char message[256];
};

/* Clears f: nothing seen, end unknown. */
void verdict_facts_init(struct run_facts *f);
/* Sets f->fault and formats f->message (printf-style). */
void verdict_fault(struct run_facts *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Decides the status of a run from facts f and the run's complete limits l
 * (in the order documented above), and fills res's status, exit_code,
 * signal, cpu_ms, wall_ms, memory_kb and message (internal_error only). It
 * leaves res's output alone. A memory_limit without a measured peak reports
 * the limit as the peak. Returns the status. */
enum run_status verdict_decide(const struct run_facts *f, const struct run_limits *l,
			       struct run_result *res);
