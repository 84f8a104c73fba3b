/* test_verdict: the status of a run from facts alone (runner/verdict.c), no sandbox. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "runner/verdict.h"

static const struct run_limits lim = {
    .cpu_ms = 1000,
    .wall_ms = 3000,
    .memory_kb = 65536,
    .processes = 16,
    .stdout_bytes = 1 << 20,
    .stderr_bytes = 1 << 16,
};

static struct run_result res;

static void setup(void)
{
	run_result_init(&res);
}

static void teardown(void)
{
	run_result_release(&res);
}

TestSuite(verdict, .init = setup, .fini = teardown);

/* A clean run: exited with code, well within every limit. */
static struct run_facts exited(int code)
{
	struct run_facts f;
	verdict_facts_init(&f);
	f.end = RUN_END_EXITED;
	f.code = code;
	f.cpu_us = 12000;
	f.wall_us = 20000;
	f.peak_kb = 2048;
	return f;
}

static struct run_facts signalled(int sig)
{
	struct run_facts f = exited(0);
	f.end = RUN_END_SIGNALED;
	f.code = sig;
	return f;
}

static enum run_status verdict(const struct run_facts *f)
{
	return verdict_decide(f, &lim, &res);
}

/* ---- one rule each ---- */

Test(verdict, clean_exit_is_ok_and_fills_the_numbers)
{
	struct run_facts f = exited(0);
	cr_assert_eq(verdict(&f), RUN_OK);
	cr_assert_eq(res.status, RUN_OK);
	cr_assert_eq(res.exit_code, 0);
	cr_assert_eq(res.signal, 0);
	cr_assert_eq(res.cpu_ms, 12);
	cr_assert_eq(res.wall_ms, 20);
	cr_assert_eq(res.memory_kb, 2048);
	cr_assert_str_empty(res.message);
}

Test(verdict, nonzero_exit_is_runtime_error)
{
	struct run_facts f = exited(3);
	cr_assert_eq(verdict(&f), RUN_RUNTIME_ERROR);
	cr_assert_eq(res.exit_code, 3);
	cr_assert_eq(res.signal, 0);
}

Test(verdict, signal_is_runtime_error)
{
	struct run_facts f = signalled(SIGSEGV);
	cr_assert_eq(verdict(&f), RUN_RUNTIME_ERROR);
	cr_assert_eq(res.signal, SIGSEGV);
	cr_assert_eq(res.exit_code, 0);
}

Test(verdict, fault_is_internal_error_with_its_message)
{
	struct run_facts f = exited(0);
	verdict_fault(&f, "cannot execute '%s': %s", "/box/a", strerror(ENOENT));
	cr_assert_eq(verdict(&f), RUN_INTERNAL_ERROR);
	cr_assert_str_eq(res.message, "cannot execute '/box/a': No such file or directory");
}

Test(verdict, capture_failure_is_internal_error)
{
	struct run_facts f = exited(0);
	f.capture_failed = true;
	f.capture_errno = EIO;
	cr_assert_eq(verdict(&f), RUN_INTERNAL_ERROR);
	cr_assert(strstr(res.message, "output"), "message: %s", res.message);
}

Test(verdict, output_over_cap_is_output_limit)
{
	struct run_facts f = exited(0);
	f.output_over = true;
	cr_assert_eq(verdict(&f), RUN_OUTPUT_LIMIT);
}

Test(verdict, oom_kill_is_memory_limit)
{
	struct run_facts f = exited(0);
	f.oom_kill = true;
	cr_assert_eq(verdict(&f), RUN_MEMORY_LIMIT);
	cr_assert_eq(res.memory_kb, 2048, "a measured peak is kept");
}

Test(verdict, peak_over_limit_is_memory_limit)
{
	struct run_facts f = exited(0);
	f.peak_kb = lim.memory_kb + 1;
	cr_assert_eq(verdict(&f), RUN_MEMORY_LIMIT);
	f.peak_kb = lim.memory_kb;
	cr_assert_eq(verdict(&f), RUN_OK, "at the limit is still within it");
}

Test(verdict, host_oom_with_sigkill_is_memory_limit)
{
	struct run_facts f = signalled(SIGKILL);
	f.host_oom = true;
	cr_assert_eq(verdict(&f), RUN_MEMORY_LIMIT);
}

Test(verdict, host_oom_without_status_is_memory_limit_at_the_limit)
{
	struct run_facts f;
	verdict_facts_init(&f);
	f.host_oom = true;
	cr_assert_eq(verdict(&f), RUN_MEMORY_LIMIT);
	cr_assert_eq(res.memory_kb, lim.memory_kb, "no peak measured: the limit is reported");
}

Test(verdict, host_oom_alone_is_not_blamed_on_a_program_that_exited)
{
	struct run_facts f = exited(0);
	f.host_oom = true;
	cr_assert_eq(verdict(&f), RUN_OK);
	f = signalled(SIGSEGV);
	f.host_oom = true;
	cr_assert_eq(verdict(&f), RUN_RUNTIME_ERROR);
}

Test(verdict, cpu_limit_hit_is_timeout)
{
	struct run_facts f = signalled(SIGKILL);
	f.cpu_limit_hit = true;
	cr_assert_eq(verdict(&f), RUN_TIMEOUT);
}

Test(verdict, cpu_used_over_limit_is_timeout)
{
	struct run_facts f = exited(0);
	f.cpu_us = lim.cpu_ms * 1000LL + 1;
	cr_assert_eq(verdict(&f), RUN_TIMEOUT);
	f.cpu_us = lim.cpu_ms * 1000LL;
	cr_assert_eq(verdict(&f), RUN_OK, "at the limit is still within it");
}

Test(verdict, sigxcpu_is_timeout)
{
	struct run_facts f = signalled(SIGXCPU);
	cr_assert_eq(verdict(&f), RUN_TIMEOUT);
	cr_assert_eq(res.signal, SIGXCPU);
}

Test(verdict, deadline_sigkill_is_timeout_not_runtime_error)
{
	struct run_facts f = signalled(SIGKILL);
	f.deadline_hit = true;
	cr_assert_eq(verdict(&f), RUN_TIMEOUT);
}

Test(verdict, deadline_without_status_is_timeout)
{
	struct run_facts f;
	verdict_facts_init(&f);
	f.deadline_hit = true;
	f.wall_us = 3500000;
	cr_assert_eq(verdict(&f), RUN_TIMEOUT);
	cr_assert_eq(res.wall_ms, 3500);
}

Test(verdict, no_status_is_internal_error_with_the_backend_message)
{
	struct run_facts f;
	verdict_facts_init(&f);
	snprintf(f.message, sizeof(f.message), "sandbox init lost the worker");
	cr_assert_eq(verdict(&f), RUN_INTERNAL_ERROR);
	cr_assert_str_eq(res.message, "sandbox init lost the worker");
	verdict_facts_init(&f);
	cr_assert_eq(verdict(&f), RUN_INTERNAL_ERROR);
	cr_assert_str_not_empty(res.message, "a default message");
}

Test(verdict, unlimited_cpu_never_times_out_on_usage)
{
	struct run_limits l = lim;
	l.cpu_ms = 0;
	l.memory_kb = 0;
	struct run_facts f = exited(0);
	f.cpu_us = 1LL << 40;
	f.peak_kb = 1L << 30;
	cr_assert_eq(verdict_decide(&f, &l, &res), RUN_OK);
}

/* ---- ties: which rule wins ---- */

Test(verdict, fault_beats_everything)
{
	struct run_facts f = signalled(SIGKILL);
	f.output_over = f.oom_kill = f.deadline_hit = f.capture_failed = true;
	verdict_fault(&f, "sandbox set-up failed: mount: EPERM");
	cr_assert_eq(verdict(&f), RUN_INTERNAL_ERROR);
	cr_assert_str_eq(res.message, "sandbox set-up failed: mount: EPERM");
}

Test(verdict, capture_failure_beats_output_and_limits)
{
	struct run_facts f = signalled(SIGKILL);
	f.output_over = f.oom_kill = f.deadline_hit = true;
	f.capture_failed = true;
	f.capture_errno = EIO;
	cr_assert_eq(verdict(&f), RUN_INTERNAL_ERROR);
}

Test(verdict, output_beats_signal)
{
	struct run_facts f = signalled(SIGKILL);
	f.output_over = true;
	cr_assert_eq(verdict(&f), RUN_OUTPUT_LIMIT);
	f = signalled(SIGPIPE);
	f.output_over = true;
	cr_assert_eq(verdict(&f), RUN_OUTPUT_LIMIT);
}

Test(verdict, output_beats_memory_and_time)
{
	struct run_facts f = signalled(SIGKILL);
	f.output_over = f.oom_kill = f.deadline_hit = f.cpu_limit_hit = true;
	cr_assert_eq(verdict(&f), RUN_OUTPUT_LIMIT);
}

Test(verdict, output_beats_missing_status)
{
	struct run_facts f;
	verdict_facts_init(&f);
	f.output_over = true;
	cr_assert_eq(verdict(&f), RUN_OUTPUT_LIMIT);
	cr_assert_str_empty(res.message);
}

Test(verdict, oom_beats_deadline)
{
	struct run_facts f = signalled(SIGKILL);
	f.oom_kill = f.deadline_hit = true;
	cr_assert_eq(verdict(&f), RUN_MEMORY_LIMIT);
}

Test(verdict, host_oom_beats_deadline_without_status)
{
	struct run_facts f;
	verdict_facts_init(&f);
	f.host_oom = f.deadline_hit = true;
	cr_assert_eq(verdict(&f), RUN_MEMORY_LIMIT);
}

Test(verdict, peak_over_beats_cpu_over)
{
	struct run_facts f = exited(0);
	f.peak_kb = lim.memory_kb * 2;
	f.cpu_us = lim.cpu_ms * 2000LL;
	cr_assert_eq(verdict(&f), RUN_MEMORY_LIMIT);
}

Test(verdict, timeout_beats_nonzero_exit)
{
	struct run_facts f = exited(1);
	f.cpu_limit_hit = true;
	cr_assert_eq(verdict(&f), RUN_TIMEOUT);
	cr_assert_eq(res.exit_code, 1, "the exit code is still reported");
}

Test(verdict, timeout_beats_missing_status)
{
	struct run_facts f;
	verdict_facts_init(&f);
	f.cpu_limit_hit = true;
	snprintf(f.message, sizeof(f.message), "init killed");
	cr_assert_eq(verdict(&f), RUN_TIMEOUT);
	cr_assert_str_empty(res.message, "no internal_error message on a timeout");
}

Test(verdict, a_decision_clears_the_previous_message)
{
	struct run_facts f = exited(0);
	snprintf(res.message, sizeof(res.message), "stale");
	res.signal = 9;
	cr_assert_eq(verdict(&f), RUN_OK);
	cr_assert_str_empty(res.message);
	cr_assert_eq(res.signal, 0);
}
