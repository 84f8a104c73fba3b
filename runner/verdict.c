/* verdict: facts of a run -> its status, in one order for every backend (see verdict.h). */
#include "runner/verdict.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void verdict_facts_init(struct run_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->end = RUN_END_UNKNOWN;
}

void verdict_fault(struct run_facts *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->message, sizeof(f->message), fmt, ap);
	va_end(ap);
	f->fault = true;
}

static bool memory_over(const struct run_facts *f, const struct run_limits *l)
{
	if (f->oom_kill)
		return true;
	if (l->memory_kb > 0 && f->peak_kb > l->memory_kb)
		return true;
	/* the host cgroup also holds gVisor's own processes: blame the program only
	 * when it (or the whole sandbox) was killed */
	return f->host_oom &&
	       (f->end == RUN_END_UNKNOWN || (f->end == RUN_END_SIGNALED && f->code == SIGKILL));
}

static bool time_over(const struct run_facts *f, const struct run_limits *l)
{
	return f->cpu_limit_hit || f->deadline_hit ||
	       (l->cpu_ms > 0 && f->cpu_us > l->cpu_ms * 1000LL) ||
	       (f->end == RUN_END_SIGNALED && f->code == SIGXCPU);
}

static enum run_status decide(const struct run_facts *f, const struct run_limits *l,
			      struct run_result *res)
{
	if (f->fault) {
		snprintf(res->message, sizeof(res->message), "%s",
			 f->message[0] ? f->message : "sandbox failure");
		return RUN_INTERNAL_ERROR;
	}
	if (f->capture_failed) {
		snprintf(res->message, sizeof(res->message), "reading the program's output: %s",
			 strerror(f->capture_errno));
		return RUN_INTERNAL_ERROR;
	}
	if (f->output_over)
		return RUN_OUTPUT_LIMIT;
	if (memory_over(f, l))
		return RUN_MEMORY_LIMIT;
	if (time_over(f, l))
		return RUN_TIMEOUT;
	if (f->end == RUN_END_UNKNOWN) {
		snprintf(res->message, sizeof(res->message), "%s",
			 f->message[0] ? f->message : "the sandbox ended without a status");
		return RUN_INTERNAL_ERROR;
	}
	if (f->end == RUN_END_SIGNALED || f->code != 0)
		return RUN_RUNTIME_ERROR;
	return RUN_OK;
}

enum run_status verdict_decide(const struct run_facts *f, const struct run_limits *l,
			       struct run_result *res)
{
	res->message[0] = 0;
	res->exit_code = f->end == RUN_END_EXITED ? f->code : 0;
	res->signal = f->end == RUN_END_SIGNALED ? f->code : 0;
	res->cpu_ms = (long)(f->cpu_us / 1000);
	res->wall_ms = (long)(f->wall_us / 1000);
	res->memory_kb = f->peak_kb;
	res->status = decide(f, l, res);
	if (res->status == RUN_MEMORY_LIMIT && f->peak_kb <= 0)
		res->memory_kb = l->memory_kb;
	return res->status;
}
