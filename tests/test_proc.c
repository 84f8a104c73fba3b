/* test_proc: live processes (sandbox_start, sandbox_proc_*) on both backends with
 * real programs: pipes both ways while it runs, signals, usage, the end's status,
 * limits, and the box shared with the host at once in both directions. gVisor
 * tests are skipped (and counted) when runsc does not work here. Needs root. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "judge/grading/limits.h"
#include "runner/sandbox.h"
#include "tests/fixture.h"

static struct judge_config cfg;
static struct sandbox *sb;
static const char *env[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL};

static void init_backend(enum sandbox_backend b)
{
	char err[512];
	signal(SIGPIPE, SIG_IGN); /* a write to a dead program fails its assertion */
	config_defaults(&cfg);
	free(cfg.sandbox);
	cfg.sandbox = strdup(b == SANDBOX_GVISOR ? "auto" : "native");
	cfg.gvisor_pool = 0;
	if (access("bin/box_init", X_OK) == 0)
		setenv("JUDGE_BOX_INIT", "bin/box_init", 0);
	fixture_sandbox_start(&cfg);
	if (!sandbox_backend_works(b, err, sizeof err)) {
		sandbox_global_shutdown();
		cr_skip_test("%s does not work here: %s", sandbox_backend_name(b), err);
	}
	cr_assert_eq(sandbox_open(b, 5, 16 << 20, &sb, err, sizeof err), 0, "%s", err);
}

static void setup_native(void)
{
	init_backend(SANDBOX_NATIVE);
}

static void setup_gvisor(void)
{
	init_backend(SANDBOX_GVISOR);
}

static void teardown(void)
{
	if (sb)
		sandbox_close(sb);
	sb = NULL;
	sandbox_global_shutdown();
	config_release(&cfg);
}

static struct run_limits lim(long cpu_ms, long wall_ms)
{
	struct limits_policy pol;
	struct run_limits l;
	limits_policy_from_config(&cfg, &pol);
	limits_run(&pol, NULL, NULL, NULL, &l);
	l.cpu_ms = cpu_ms;
	l.wall_ms = wall_ms;
	l.memory_kb = 128 * 1024;
	l.processes = 32;
	return l;
}

/* A shell that runs each line of its stdin (so the test drives it as it runs). */
static struct sandbox_proc *start_sh(struct run_limits l)
{
	/* a read cut short by a trapped signal (status > 128) is not the end */
	static const char *const argv[] = {"/bin/sh", "-c",
					   "while :; do if IFS= read -r l; then eval \"$l\"; "
					   "elif [ $? -le 128 ]; then break; fi; done; exit 7",
					   NULL};
	struct run_spec spec = {.argv = argv, .env = env, .limits = l};
	struct sandbox_proc *p;
	char err[512];
	cr_assert_eq(sandbox_start(sb, &spec, &p, err, sizeof err), 0, "%s", err);
	return p;
}

static void say(struct sandbox_proc *p, const char *line)
{
	int in;
	sandbox_proc_fds(p, &in, NULL, NULL);
	cr_assert_eq(write(in, line, strlen(line)), (ssize_t)strlen(line));
}

/* Reads fd until the text read so far ends with want, at most 10 s. */
static void expect_out(int fd, const char *want)
{
	char buf[4096];
	size_t len = 0, wl = strlen(want);
	int64_t until = clock_mono_ms() + 10000;
	while (len < wl || memcmp(buf + len - wl, want, wl)) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		cr_assert_gt(poll(&pfd, 1, (int)(until - clock_mono_ms())), 0, "waiting for '%s'",
			     want);
		ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
		cr_assert_gt(n, 0, "EOF waiting for '%s'", want);
		len += (size_t)n;
		cr_assert_lt(len, sizeof buf - 1);
	}
}

static void talks_while_running(void)
{
	struct sandbox_proc *p = start_sh(lim(5000, 20000));
	int out, err;
	sandbox_proc_fds(p, NULL, &out, &err);
	say(p, "echo one\n");
	expect_out(out, "one\n");
	say(p, "echo two >&2; echo three\n");
	expect_out(err, "two\n");
	expect_out(out, "three\n");
	sandbox_proc_close_stdin(p);
	struct run_result r;
	run_result_init(&r);
	cr_assert_eq(sandbox_proc_wait(p, 10000, &r), 0);
	cr_assert_eq(r.status, RUN_RUNTIME_ERROR, "%s %s", run_status_name(r.status), r.message);
	cr_assert_eq(r.exit_code, 7, "the exit code after stdin's EOF");
	cr_assert_eq(sandbox_proc_wait(p, 10000, &r), -1, "waited for once only");
	run_result_release(&r);
	sandbox_proc_free(p);
}

static void signals_and_usage(void)
{
	struct sandbox_proc *p = start_sh(lim(20000, 30000));
	int out;
	sandbox_proc_fds(p, NULL, &out, NULL);
	long cpu0 = -1, cpu1 = -1, mem = -1;
	cr_assert_eq(sandbox_proc_usage(p, &cpu0, &mem), 0);
	say(p, "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo spun\n");
	expect_out(out, "spun\n");
	cr_assert_eq(sandbox_proc_usage(p, &cpu1, &mem), 0);
	cr_assert_gt(cpu1 - cpu0, 50, "the loop's CPU shows: %ld -> %ld ms", cpu0, cpu1);
	cr_assert(mem > 100 && mem < 1024 * 1024, "memory %ld KiB", mem);
	/* the trap runs once the foreground sleep (signalled too) is gone */
	say(p, "trap 'echo got-int; exit 3' INT; echo armed; while :; do sleep 0.05; done\n");
	expect_out(out, "armed\n");
	cr_assert_eq(sandbox_proc_signal(p, SIGINT), 0);
	expect_out(out, "got-int\n");
	struct run_result r;
	run_result_init(&r);
	sandbox_proc_wait(p, 10000, &r);
	cr_assert_eq(r.status, RUN_RUNTIME_ERROR, "%s %s", run_status_name(r.status), r.message);
	cr_assert_eq(r.exit_code, 3);
	cr_assert_eq(sandbox_proc_signal(p, SIGINT), -ESRCH, "over: nothing to signal");
	sandbox_proc_free(p);

	p = start_sh(lim(20000, 30000));
	cr_assert_eq(sandbox_proc_signal(p, SIGKILL), 0);
	sandbox_proc_wait(p, 10000, &r);
	cr_assert_eq(r.status, RUN_RUNTIME_ERROR, "%s %s", run_status_name(r.status), r.message);
	cr_assert_eq(r.signal, SIGKILL);
	run_result_release(&r);
	sandbox_proc_free(p);
}

static void timeout_kills(void)
{
	struct sandbox_proc *p = start_sh(lim(5000, 20000));
	struct run_result r;
	run_result_init(&r);
	int64_t t0 = clock_mono_ms();
	sandbox_proc_wait(p, 300, &r);
	cr_assert_eq(r.status, RUN_TIMEOUT, "%s %s", run_status_name(r.status), r.message);
	cr_assert_lt(clock_mono_ms() - t0, 3000);
	run_result_release(&r);
	sandbox_proc_free(p);

	/* CPU over cpu_ms while waited for */
	p = start_sh(lim(300, 20000));
	say(p, "while :; do :; done\n");
	run_result_init(&r);
	sandbox_proc_wait(p, 8000, &r);
	cr_assert_eq(r.status, RUN_TIMEOUT, "%s %s", run_status_name(r.status), r.message);
	run_result_release(&r);
	sandbox_proc_free(p);
}

static void memory_limit(void)
{
	struct run_limits l = lim(10000, 20000);
	l.memory_kb = 64 * 1024;
	static const char *const argv[] = {
	    "/usr/bin/python3", "-c", "x = []\nwhile True: x.append(bytearray(1 << 20))", NULL};
	struct run_spec spec = {.argv = argv, .env = env, .limits = l};
	struct sandbox_proc *p;
	char err[512];
	cr_assert_eq(sandbox_start(sb, &spec, &p, err, sizeof err), 0, "%s", err);
	struct run_result r;
	run_result_init(&r);
	sandbox_proc_wait(p, 15000, &r);
	cr_assert_eq(r.status, RUN_MEMORY_LIMIT, "%s %s", run_status_name(r.status), r.message);
	run_result_release(&r);
	sandbox_proc_free(p);
}

/* The host writes a file while the program runs: it reads it at once; it writes
 * one: the host reads it at once. */
static void box_is_shared(void)
{
	struct sandbox_proc *p = start_sh(lim(5000, 30000));
	int out;
	sandbox_proc_fds(p, NULL, &out, NULL);
	say(p, "ls -a >/dev/null; echo listed\n"); /* the box seen (cached) before the write */
	expect_out(out, "listed\n");
	cr_assert_eq(sandbox_file_put(sb, "d/from-host.txt", "hello in\n", 9), 0);
	say(p, "cat d/from-host.txt\n");
	expect_out(out, "hello in\n");
	cr_assert_eq(sandbox_file_put(sb, "d/from-host.txt", "changed\n", 8), 0);
	say(p, "cat d/from-host.txt\n");
	expect_out(out, "changed\n");
	say(p, "echo out-of-box > made.txt; echo written\n");
	expect_out(out, "written\n");
	struct strbuf got = STRBUF_INIT;
	cr_assert_eq(sandbox_file_get(sb, "made.txt", &got, 1024), 0);
	cr_assert_str_eq(got.buf, "out-of-box\n");
	cr_assert_eq(sandbox_file_remove(sb, "d"), 0);
	say(p, "test -e d/from-host.txt || echo gone\n");
	expect_out(out, "gone\n");
	strbuf_release(&got);
	sandbox_proc_free(p);
}

static void free_while_running(void)
{
	struct sandbox_proc *p = start_sh(lim(5000, 30000));
	sandbox_proc_free(p); /* kills it; sandbox_close below must not hang */
	cr_assert_eq(sandbox_start(sb,
				   &(struct run_spec){.argv = (const char *const[]){"x", NULL},
						      .env = env,
						      .limits = lim(1000, 1000)},
				   &p, (char[64]){0}, 64),
		     -1, "a relative argv[0] is refused");
}

static void *start_in_thread(void *arg)
{
	*(struct sandbox_proc **)arg = start_sh(lim(5000, 30000));
	return NULL;
}

/* A program outlives the thread that started it (a worker's short-lived thread). */
static void outlives_its_thread(void)
{
	struct sandbox_proc *p = NULL;
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, start_in_thread, &p), 0);
	pthread_join(t, NULL);
	cr_assert_not_null(p);
	clock_sleep_ms(200);
	int out;
	sandbox_proc_fds(p, NULL, &out, NULL);
	say(p, "echo still here\n");
	expect_out(out, "still here\n");
	sandbox_proc_free(p);
}

TestSuite(proc_native, .init = setup_native, .fini = teardown, .timeout = 60);
TestSuite(proc_gvisor, .init = setup_gvisor, .fini = teardown, .timeout = 90);

Test(proc_native, talks_while_running)
{
	talks_while_running();
}
Test(proc_native, signals_and_usage)
{
	signals_and_usage();
}
Test(proc_native, timeout_kills)
{
	timeout_kills();
}
Test(proc_native, memory_limit)
{
	memory_limit();
}
Test(proc_native, box_is_shared)
{
	box_is_shared();
}
Test(proc_native, outlives_its_thread)
{
	outlives_its_thread();
}
Test(proc_gvisor, outlives_its_thread)
{
	outlives_its_thread();
}
Test(proc_native, free_while_running)
{
	free_while_running();
}
Test(proc_gvisor, talks_while_running)
{
	talks_while_running();
}
Test(proc_gvisor, signals_and_usage)
{
	signals_and_usage();
}
Test(proc_gvisor, timeout_kills)
{
	timeout_kills();
}
Test(proc_gvisor, memory_limit)
{
	memory_limit();
}
Test(proc_gvisor, box_is_shared)
{
	box_is_shared();
}
Test(proc_gvisor, free_while_running)
{
	free_while_running();
}
