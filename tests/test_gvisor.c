/* test_gvisor: ordinary runs through sandbox_run() with the gvisor backend (real runsc):
 * statuses, limits, measurement, isolation basics, and that nothing is left behind
 * (runsc state, cgroups, mounts, bundles, zombies). Needs root and runsc. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"
#include "judge/grading/limits.h"
#include "runner/gvisor/gvpool.h"
#include "runner/owner.h"
#include "runner/sandbox.h"

#define PY "/usr/bin/python3"

static struct judge_config cfg;
static struct sandbox *sb;

/* sandbox_global_init with cfg's options. */
static int init_sandbox(char *err, size_t errlen)
{
	struct sandbox_options opts;
	if (limits_sandbox_options(&cfg, &opts, err, errlen) < 0)
		return -1;
	return sandbox_global_init(&opts, err, errlen);
}

static void setup_pool(long pool)
{
	char err[512];
	config_defaults(&cfg);
	free(cfg.sandbox);
	cfg.sandbox = strdup("gvisor");
	cfg.gvisor_pool = pool;
	if (access("bin/box_init", X_OK) == 0)
		setenv("JUDGE_BOX_INIT", "bin/box_init", 0);
	cr_assert_eq(init_sandbox(err, sizeof(err)), 0, "init: %s", err);
	cr_assert_eq(sandbox_open(SANDBOX_GVISOR, 3, 16 << 20, &sb, err, sizeof(err)), 0,
		     "open: %s", err);
}

static void setup(void)
{
	setup_pool(0);
}

static void setup_pooled(void)
{
	setup_pool(1);
}

static void teardown(void)
{
	if (sb)
		sandbox_close(sb);
	sb = NULL;
	sandbox_global_shutdown();
	config_release(&cfg);
}

static struct run_spec spec_of(const char *const *argv)
{
	static const char *const env[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL};
	struct run_spec s = {.argv = argv, .env = env};
	struct limits_policy pol;
	limits_policy_from_config(&cfg, &pol);
	limits_run(&pol, NULL, NULL, NULL, &s.limits);
	s.limits.cpu_ms = 2000;
	s.limits.wall_ms = 6000;
	s.limits.memory_kb = 256 * 1024;
	s.limits.processes = 64;
	s.limits.stdout_bytes = 1 << 20;
	s.limits.stderr_bytes = 64 << 10;
	s.limits.file_bytes = 16 << 20;
	s.limits.open_files = 256;
	return s;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void run(const struct run_spec *s, struct run_result *res)
{
	run_result_init(res);
	cr_assert_eq(sandbox_run(sb, s, res), 0);
}

TestSuite(gvisor, .init = setup, .fini = teardown, .timeout = 120);

Test(gvisor, exit_code_stdin_stdout_stderr)
{
	const char *argv[] = {"/bin/sh", "-c", "cat; echo out; echo err >&2; exit 3", NULL};
	struct run_spec s = spec_of(argv);
	s.stdin_data = "in\n";
	s.stdin_len = 3;
	struct run_result res;
	run(&s, &res);
	cr_assert_eq(res.status, RUN_RUNTIME_ERROR, "status %s: %s", run_status_name(res.status),
		     res.message);
	cr_assert_eq(res.exit_code, 3);
	cr_assert_eq(res.signal, 0);
	cr_assert_str_eq(res.out.buf, "in\nout\n");
	cr_assert_str_eq(res.err.buf, "err\n");
	run_result_release(&res);
}

Test(gvisor, ok_and_identity)
{
	/* non-root uid, no capabilities, /box is the cwd, the root is read-only */
	const char *argv[] = {"/bin/sh", "-c",
			      "id -u; grep CapEff /proc/self/status; pwd; "
			      "touch /usr/x 2>/dev/null && echo rw-usr; "
			      "echo data > /box/f && echo box-ok",
			      NULL};
	struct run_spec s = spec_of(argv);
	struct run_result res;
	run(&s, &res);
	cr_assert_eq(res.status, RUN_OK, "status %s: %s / %s", run_status_name(res.status),
		     res.message, res.err.buf);
	char want[128];
	snprintf(want, sizeof(want), "%ld\nCapEff:\t0000000000000000\n/box\nbox-ok\n",
		 cfg.box_uid + 3);
	cr_assert_str_eq(res.out.buf, want);
	struct strbuf f = STRBUF_INIT;
	cr_assert_eq(sandbox_read_file(sb, "f", &f, 100), 0);
	cr_assert_str_eq(f.buf, "data\n");
	strbuf_release(&f);
	run_result_release(&res);
}

Test(gvisor, box_is_shared_between_runs)
{
	cr_assert_eq(sandbox_write_file(sb, "prog.sh", "echo from-host\n", 15, 0644), 0);
	const char *a1[] = {"/bin/sh", "-c", "sh prog.sh > made.txt", NULL};
	struct run_spec s = spec_of(a1);
	struct run_result res;
	run(&s, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.message);
	run_result_release(&res);
	const char *a2[] = {"/bin/cat", "/box/made.txt", NULL};
	s = spec_of(a2);
	run(&s, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.message);
	cr_assert_str_eq(res.out.buf, "from-host\n");
	run_result_release(&res);
}

/* "native" or "gvisor": which kernel answered a run, from its /proc/version */
static const char *kernel_of(const struct run_result *res)
{
	return strstr(res->out.buf, "4.4.0") ? "gvisor" : "native";
}

static void check_compiler_backend(const char *tool_sandbox, const char *want)
{
	free(cfg.tool_sandbox);
	cfg.tool_sandbox = strdup(tool_sandbox);
	sandbox_close(sb);
	sandbox_global_shutdown();
	char err[512];
	cr_assert_eq(init_sandbox(err, sizeof(err)), 0, "init: %s", err);
	cr_assert_eq(sandbox_open(SANDBOX_GVISOR, 3, 16 << 20, &sb, err, sizeof(err)), 0,
		     "open: %s", err);
	cr_assert_eq(sandbox_tool_backend(SANDBOX_GVISOR),
		     !strcmp(want, "gvisor") ? SANDBOX_GVISOR : SANDBOX_NATIVE);

	/* the compiler writes an executable into the box; the program, always in
	 * gVisor, runs it */
	const char *a1[] = {"/bin/sh", "-c",
			    "cat /proc/version; printf '#!/bin/sh\\necho built\\n' > prog; "
			    "chmod 755 prog",
			    NULL};
	struct run_spec s = spec_of(a1);
	s.trusted_tool = true;
	struct run_result res;
	run(&s, &res);
	cr_assert_eq(res.status, RUN_OK, "%s / %s", res.message, res.err.buf);
	cr_assert_str_eq(kernel_of(&res), want, "compiler saw %s", res.out.buf);
	/* a gVisor run names its sandbox, a native one none */
	cr_assert_eq(res.sandbox_id[0] != 0, !strcmp(want, "gvisor"), "sandbox id '%s'",
		     res.sandbox_id);
	run_result_release(&res);

	const char *a2[] = {"/bin/sh", "-c", "cat /proc/version; ./prog", NULL};
	s = spec_of(a2);
	run(&s, &res);
	cr_assert_eq(res.status, RUN_OK, "%s / %s", res.message, res.err.buf);
	cr_assert_str_eq(kernel_of(&res), "gvisor", "program saw %s", res.out.buf);
	cr_assert(strstr(res.out.buf, "built\n"), "%s", res.out.buf);
	cr_assert(!strncmp(res.sandbox_id, "jgv-", 4), "sandbox id '%s'", res.sandbox_id);
	run_result_release(&res);
}

Test(gvisor, compilers_run_natively_by_default)
{
	check_compiler_backend("native", "native");
}

Test(gvisor, compilers_run_in_gvisor_on_request)
{
	check_compiler_backend("gvisor", "gvisor");
}

Test(gvisor, tool_sandbox_is_checked)
{
	free(cfg.tool_sandbox);
	cfg.tool_sandbox = strdup("docker");
	sandbox_close(sb);
	sb = NULL;
	sandbox_global_shutdown();
	char err[512] = "";
	cr_assert_eq(init_sandbox(err, sizeof(err)), -1);
	cr_assert(strstr(err, "tool_sandbox"), "%s", err);
}

/* Runs argv (a shell line) with stdin; returns its stdout as a long, checking status. */
static long run_line(const char *line, const char *in, enum run_status want, struct strbuf *err)
{
	const char *argv[] = {"/bin/sh", "-c", line, NULL};
	struct run_spec s = spec_of(argv);
	s.stdin_data = in;
	s.stdin_len = in ? strlen(in) : 0;
	s.limits.stdout_bytes = 4096;
	s.limits.stderr_bytes = 1 << 20;
	struct run_result res;
	run(&s, &res);
	cr_assert_eq(res.status, want, "'%s': status %s: %s / %s", line,
		     run_status_name(res.status), res.message, res.err.buf);
	long v = strtol(res.out.buf, NULL, 10);
	if (err)
		strbuf_addstr(err, res.err.buf);
	run_result_release(&res);
	return v;
}

Test(gvisor, runs_of_one_workspace_share_a_sandbox_not_its_tmp)
{
	/* pids grow within one sandbox; a fresh one starts them over */
	long p1 = run_line("echo $$; echo left > /tmp/t; echo keep > /box/k", NULL, RUN_OK, NULL);
	long p2 = run_line("echo $$; test -e /tmp/t && echo tmp-leaked >&2; cat /box/k >&2", NULL,
			   RUN_OK, NULL);
	cr_assert_gt(p2, p1, "second run in another sandbox (pids %ld, %ld)", p1, p2);
	struct strbuf e = STRBUF_INIT;
	run_line("echo $$; cat /box/k >&2; test -e /tmp/t && echo tmp-leaked >&2; true", NULL,
		 RUN_OK, &e);
	cr_assert_str_eq(e.buf, "keep\n");
	strbuf_release(&e);
}

Test(gvisor, each_run_of_a_session_gets_its_own_stdin_and_output)
{
	struct strbuf e1 = STRBUF_INIT, e2 = STRBUF_INIT;
	/* lots of stderr, more than a pipe holds, must all be this run's */
	cr_assert_eq(run_line("read x; echo $x; head -c 200000 /dev/zero | tr '\\0' e >&2", "17\n",
			      RUN_OK, &e1),
		     17);
	cr_assert_eq(e1.len, 200000);
	cr_assert_eq(run_line("cat; echo done >&2", "42\n", RUN_OK, &e2), 42);
	cr_assert_str_eq(e2.buf, "done\n");
	/* no stdin: empty, not the previous run's */
	cr_assert_eq(run_line("wc -c", NULL, RUN_OK, NULL), 0);
	strbuf_release(&e1);
	strbuf_release(&e2);
}

Test(gvisor, nothing_of_a_run_reaches_the_next_runs_output)
{
	/* survivors that would write into the shared pipes later: killed at the end */
	run_line("(sleep 0.5; echo injected; echo injected >&2) & "
		 "setsid sh -c 'sleep 0.5; echo setsid-injected' & echo 1",
		 NULL, RUN_OK, NULL);
	const char *argv[] = {"/bin/sh", "-c", "sleep 1; echo clean", NULL};
	struct run_spec s = spec_of(argv);
	struct run_result res;
	run(&s, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.message);
	cr_assert_str_eq(res.out.buf, "clean\n");
	cr_assert_str_eq(res.err.buf, "");
	run_result_release(&res);
}

Test(gvisor, a_host_write_rebinds_the_box_a_bad_end_ends_the_session)
{
	cr_assert_eq(sandbox_write_file(sb, "old.txt", "one", 3, 0644), 0);
	struct strbuf e = STRBUF_INIT;
	long p1 = run_line("echo $$; cat old.txt >&2; ls >&2", NULL, RUN_OK, &e);
	cr_assert_str_eq(e.buf, "oneold.txt\n");
	/* the sentry has seen old.txt: a host write (a changed file, a new one) is
	 * seen by the next run all the same, in the same sandbox (the box is bound
	 * again under a name the sentry never saw) */
	cr_assert_eq(sandbox_write_file(sb, "old.txt", "two!", 4, 0644), 0);
	cr_assert_eq(sandbox_write_file(sb, "new.txt", "x", 1, 0644), 0);
	strbuf_reset(&e);
	long p2 = run_line("echo $$; cat old.txt new.txt >&2; ls >&2", NULL, RUN_OK, &e);
	cr_assert_str_eq(e.buf, "two!xnew.txt\nold.txt\n");
	cr_assert_gt(p2, p1, "the same sandbox serves on after a host write (pids %ld, %ld)", p1,
		     p2);
	strbuf_release(&e);
	/* output over the cap kills the sandbox; the next run gets a working one */
	run_line("yes", NULL, RUN_OUTPUT_LIMIT, NULL);
	long p3 = run_line("echo $$", NULL, RUN_OK, NULL);
	cr_assert_lt(p3, p2, "a fresh sandbox after the output limit (pids %ld, %ld)", p2, p3);
	/* a program killed for CPU ends its run cleanly: the sandbox serves on */
	const char *spin[] = {"/bin/sh", "-c", "while :; do :; done", NULL};
	struct run_spec s = spec_of(spin);
	s.limits.cpu_ms = 300;
	struct run_result res;
	run(&s, &res);
	cr_assert_eq(res.status, RUN_TIMEOUT, "%s", run_status_name(res.status));
	run_result_release(&res);
	cr_assert_gt(run_line("echo $$", NULL, RUN_OK, NULL), p3);
}

Test(gvisor, ipc_objects_do_not_outlive_their_run)
{
	static const char src[] =
	    "#include <stdio.h>\n#include <stdlib.h>\n#include <sys/shm.h>\n"
	    "int main(int c, char **v) {\n"
	    "  int id = shmget(0x4a55, 4096, c > 1 ? IPC_CREAT | 0600 : 0600);\n"
	    "  printf(\"%d\\n\", id >= 0); return 0; }\n";
	cr_assert_eq(sandbox_write_file(sb, "shm.c", src, strlen(src), 0644), 0);
	const char *cc[] = {"/usr/bin/gcc", "-o", "shm", "shm.c", NULL};
	struct run_spec s = spec_of(cc);
	s.limits.cpu_ms = 10000;
	s.limits.wall_ms = 30000;
	struct run_result res;
	run(&s, &res);
	cr_assert_eq(res.status, RUN_OK, "gcc: %s %s", res.message, res.err.buf);
	run_result_release(&res);
	/* the segment exists within the run that made it, not in the next one */
	cr_assert_eq(run_line("./shm create && ./shm", NULL, RUN_OK, NULL), 1);
	cr_assert_eq(run_line("./shm", NULL, RUN_OK, NULL), 0);
}

Test(gvisor, signal)
{
	const char *argv[] = {"/bin/sh", "-c", "kill -SEGV $$", NULL};
	struct run_spec s = spec_of(argv);
	struct run_result res;
	run(&s, &res);
	cr_assert_eq(res.status, RUN_RUNTIME_ERROR);
	cr_assert_eq(res.signal, 11);
	run_result_release(&res);
}

Test(gvisor, cpu_timeout_ends_promptly)
{
	const char *argv[] = {"/bin/sh", "-c", "while :; do :; done", NULL};
	struct run_spec s = spec_of(argv);
	s.limits.cpu_ms = 500;
	s.limits.wall_ms = 30000;
	struct run_result res;
	long long t0 = now_ms();
	run(&s, &res);
	long long took = now_ms() - t0;
	cr_assert_eq(res.status, RUN_TIMEOUT, "status %s", run_status_name(res.status));
	cr_assert_geq(res.cpu_ms, 450);
	/* the CPU limit ended it, not the wall limit: a bound far from any
	 * machine's speed (a loaded 2-core machine took 3 s for 0.5 s of CPU) */
	cr_assert_lt(took, 20000, "took %lld ms", took);
	run_result_release(&res);
}

Test(gvisor, wall_timeout_ends_promptly)
{
	/* sleeping uses no CPU: only the wall limit ends it; setsid children too */
	const char *argv[] = {"/bin/sh", "-c", "(setsid sleep 100 &); sleep 100", NULL};
	struct run_spec s = spec_of(argv);
	s.limits.wall_ms = 700;
	struct run_result res;
	long long t0 = now_ms();
	run(&s, &res);
	long long took = now_ms() - t0;
	cr_assert_eq(res.status, RUN_TIMEOUT, "status %s", run_status_name(res.status));
	cr_assert_lt(took, 10000, "took %lld ms", took);
	run_result_release(&res);
}

Test(gvisor, output_limit)
{
	const char *argv[] = {"/usr/bin/yes", NULL};
	struct run_spec s = spec_of(argv);
	s.limits.stdout_bytes = 64 << 10;
	struct run_result res;
	long long t0 = now_ms();
	run(&s, &res);
	cr_assert_eq(res.status, RUN_OUTPUT_LIMIT, "status %s", run_status_name(res.status));
	cr_assert_leq(res.out.len, (size_t)(64 << 10));
	cr_assert(res.out_truncated);
	cr_assert_lt(now_ms() - t0, 20000, "yes was not stopped at its output limit");
	run_result_release(&res);
}

Test(gvisor, memory_limit)
{
	const char *argv[] = {PY, "-c", "x = bytearray(400 << 20); print(len(x))", NULL};
	struct run_spec s = spec_of(argv);
	s.limits.memory_kb = 64 * 1024;
	/* wide time limits: the 2 s CPU (gVisor's own included) and 6 s wall ran
	 * out at load 10 before the program had touched its 64 MB under ptrace,
	 * and this checks the memory limit, not the time */
	s.limits.cpu_ms = 20000;
	s.limits.wall_ms = 60000;
	struct run_result res;
	run(&s, &res);
	cr_assert_eq(res.status, RUN_MEMORY_LIMIT, "status %s: %s", run_status_name(res.status),
		     res.message);
	cr_assert_str_eq(res.out.buf, "");
	run_result_release(&res);
}

Test(gvisor, cpu_and_memory_measured)
{
	/* ~80 MB touched and ~0.3 s of CPU: the program's own numbers, not gVisor's */
	const char *argv[] = {PY, "-c",
			      "import time\n"
			      "x = bytearray(80 << 20)\n"
			      "t = time.process_time()\n"
			      "while time.process_time() - t < 0.3: pass\n"
			      "print('done')",
			      NULL};
	struct run_spec s = spec_of(argv);
	/* wide limits: this checks what is measured, and under ptrace the sandbox's
	 * CPU (gVisor's own included) passed 2 s at load in a sanitizer run */
	s.limits.cpu_ms = 10000;
	s.limits.wall_ms = 30000;
	struct run_result res;
	run(&s, &res);
	cr_assert_eq(res.status, RUN_OK, "status %s: %s %s", run_status_name(res.status),
		     res.message, res.err.buf);
	cr_assert_str_eq(res.out.buf, "done\n");
	cr_assert(res.cpu_ms >= 250 && res.cpu_ms < 3000, "cpu %ld ms", res.cpu_ms);
	cr_assert(res.memory_kb >= 80 * 1024 && res.memory_kb < 200 * 1024, "memory %ld kB",
		  res.memory_kb);
	cr_assert(res.wall_ms >= res.cpu_ms / 2, "wall %ld ms", res.wall_ms);
	run_result_release(&res);
}

Test(gvisor, status_trailer_cannot_be_forged)
{
	/* a program that ends its output with bytes shaped like init's status: they are
	 * its output, and the real status still comes through */
	const char *argv[] = {PY, "-c",
			      "import sys, struct\n"
			      "sys.stdout.buffer.write(b'\\0' * 16 + struct.pack('<IiiiIIqqqq', "
			      "0x31534258, 1, 0, 0, 0, 0, 0, 0, 0, 0) + b'\\0' * 40)\n"
			      "sys.exit(5)",
			      NULL};
	struct run_spec s = spec_of(argv);
	struct run_result res;
	run(&s, &res);
	cr_assert_eq(res.status, RUN_RUNTIME_ERROR, "status %s: %s", run_status_name(res.status),
		     res.message);
	cr_assert_eq(res.exit_code, 5);
	cr_assert_eq(res.out.len, 16 + 56 + 40);
	run_result_release(&res);
}

Test(gvisor, missing_program_is_internal_error)
{
	const char *argv[] = {"/usr/bin/no-such-program", NULL};
	struct run_spec s = spec_of(argv);
	struct run_result res;
	run(&s, &res);
	cr_assert_eq(res.status, RUN_INTERNAL_ERROR);
	cr_assert(strstr(res.message, "no-such-program"), "%s", res.message);
	run_result_release(&res);
}

TestSuite(gvisor_pool, .init = setup_pooled, .fini = teardown, .timeout = 120);

Test(gvisor_pool, fresh_sandbox_per_run)
{
	/* two pooled runs: the second must not see what the first left in /tmp */
	const char *a1[] = {"/bin/sh", "-c", "echo secret > /tmp/left; echo one", NULL};
	struct run_spec s = spec_of(a1);
	gvpool_prepare(&s);
	cr_assert(gvpool_wait(&s, 30000), "pool did not fill");
	struct run_result res;
	run(&s, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.message);
	cr_assert_str_eq(res.out.buf, "one\n");
	run_result_release(&res);
	const char *a2[] = {"/bin/sh", "-c", "cat /tmp/left 2>/dev/null || echo fresh", NULL};
	s = spec_of(a2);
	cr_assert(gvpool_wait(&s, 30000), "pool did not refill");
	run(&s, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.message);
	cr_assert_str_eq(res.out.buf, "fresh\n");
	run_result_release(&res);
}

Test(gvisor_pool, warm_up_and_preload_from_the_spec)
{
	/* the language's warm-up (warm_up, preload in languages/<name>.ini) reaches box_init:
	 * the pooled sandbox runs it before any job, skips a missing preload file and
	 * still serves the run; a run of the same program with another warm-up is
	 * another runtime and takes a sandbox of its own pool */
	const char *argv[] = {"/bin/sh", "-c", "echo warm", NULL};
	const char *warm[] = {"/bin/sh", "-c", "exit 0", NULL};
	const char *preload[] = {"/bin/sh", "/nonexistent/lib.so", NULL};
	struct run_spec s = spec_of(argv);
	s.warm_argv = warm;
	s.preload = preload;
	gvpool_prepare(&s);
	cr_assert(gvpool_wait(&s, 30000), "pool with a warm-up did not fill");
	struct run_result res;
	run(&s, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.message);
	cr_assert_str_eq(res.out.buf, "warm\n");
	run_result_release(&res);
	struct run_spec cold = spec_of(argv);
	cr_assert(gvpool_wait(&s, 30000), "pool did not refill");
	cr_assert_not(gvpool_wait(&cold, 10), "a spec without the warm-up shares the pool");
}

/* Runs in its own process (Criterion forks per test): after shutdown, nothing of
 * this pid may remain. */
Test(gvisor_leftovers, nothing_left_behind, .timeout = 120)
{
	setup_pool(1);
	const char *argv[] = {"/bin/sh", "-c", "(setsid sh -c 'sleep 100' &); echo x", NULL};
	struct run_spec s = spec_of(argv);
	struct run_result res;
	for (int i = 0; i < 3; i++) {
		run(&s, &res);
		cr_assert_eq(res.status, RUN_OK, "%s", res.message);
		run_result_release(&res);
	}
	/* everything of this process is found from its owner (runner/owner.h) */
	char own[PATH_MAX], prefix[64], path[PATH_MAX];
	snprintf(own, sizeof(own), "%s", owner_dir());
	snprintf(prefix, sizeof(prefix), "jgv-%s-", owner_id());
	teardown();

	cr_assert(access(own, F_OK) < 0, "the owner folder %s (runsc state, bundles) stayed", own);
	DIR *d;
	struct dirent *e;
	static const char *const ctls[] = {"memory",  "pids",	 "cpu",	  "cpuacct", "cpuset",
					   "devices", "freezer", "blkio", "systemd", NULL};
	for (const char *const *c = ctls; *c; c++) {
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/judge-gvisor", *c);
		d = opendir(path);
		while (d && (e = readdir(d)))
			cr_assert(strncmp(e->d_name, prefix, strlen(prefix)), "cgroup %s/%s", path,
				  e->d_name);
		if (d)
			closedir(d);
	}
	FILE *m = fopen("/proc/self/mountinfo", "r");
	char line[4096];
	while (m && fgets(line, sizeof(line), m))
		cr_assert(!strstr(line, own), "mount left: %s", line);
	if (m)
		fclose(m);
	/* no child of ours (killed sandbox processes are reaped, not zombies) */
	d = opendir("/proc");
	while (d && (e = readdir(d))) {
		char stat[512];
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t n = fread(stat, 1, sizeof(stat) - 1, f);
		fclose(f);
		stat[n] = 0;
		char *p = strrchr(stat, ')');
		long ppid = 0;
		char st = 0;
		if (p && sscanf(p + 2, "%c %ld", &st, &ppid) == 2)
			cr_assert(ppid != getpid(), "process %s is still our child: %s", e->d_name,
				  stat);
	}
	if (d)
		closedir(d);
}

/* A runsc whose `run` never returns (as with gvisor_platform = kvm where KVM
 * hangs): the run ends as internal_error within the start bound, and nothing the
 * fake started (the hung runsc, a child it forked) stays; after two such starts
 * in a row, the next run fails at once and says why. */
Test(gvisor_start, hung_runsc_run_is_bounded_and_killed, .timeout = 60)
{
	char dir[] = "/tmp/judge-fake-runsc-XXXXXX", fake[PATH_MAX], real[PATH_MAX] = "";
	cr_assert(mkdtemp(dir));
	FILE *w = popen("command -v runsc", "r");
	cr_assert(w && fgets(real, sizeof(real), w), "runsc not in PATH");
	pclose(w);
	real[strcspn(real, "\n")] = 0;
	snprintf(fake, sizeof(fake), "%s/runsc", dir);
	FILE *f = fopen(fake, "w");
	cr_assert(f);
	fprintf(f,
		"#!/bin/sh\n"
		"for a in \"$@\"; do\n"
		"  if [ \"$a\" = run ]; then\n"
		"    sleep 1000 & echo $! > %s/child\n"
		"    echo $$ > %s/self; exec sleep 1000\n"
		"  fi\n"
		"done\n"
		"exec %s \"$@\"\n",
		dir, dir, real);
	fclose(f);
	chmod(fake, 0755);

	char err[512];
	config_defaults(&cfg);
	free(cfg.sandbox);
	cfg.sandbox = strdup("gvisor");
	free(cfg.runsc);
	cfg.runsc = strdup(fake);
	cfg.gvisor_pool = 0;
	cfg.gvisor_start_timeout_ms = 2000;
	if (access("bin/box_init", X_OK) == 0)
		setenv("JUDGE_BOX_INIT", "bin/box_init", 0);
	cr_assert_eq(init_sandbox(err, sizeof(err)), 0, "init: %s", err);
	cr_assert_eq(sandbox_open(SANDBOX_GVISOR, 3, 16 << 20, &sb, err, sizeof(err)), 0,
		     "open: %s", err);
	const char *argv[] = {"/bin/true", NULL};
	struct run_spec s = spec_of(argv);
	struct run_result res;
	long long t0 = now_ms();
	run(&s, &res);
	long long took = now_ms() - t0;
	cr_assert_eq(res.status, RUN_INTERNAL_ERROR, "status %d: %s", res.status, res.message);
	cr_assert(strstr(res.message, "gvisor sandbox did not start within 2 s"), "%s",
		  res.message);
	cr_assert_lt(took, 15000, "took %lld ms", took);
	run_result_release(&res);
	run(&s, &res);
	cr_assert(strstr(res.message, "gvisor sandbox did not start within 2 s"), "%s",
		  res.message);
	run_result_release(&res);
	run(&s, &res);
	cr_assert_eq(res.status, RUN_INTERNAL_ERROR, "status %d: %s", res.status, res.message);
	cr_assert(strstr(res.message, "do not start here: 2 starts in a row hung"), "%s",
		  res.message);
	run_result_release(&res);

	static const char *const names[] = {"self", "child"};
	for (int i = 0; i < 2; i++) {
		char path[PATH_MAX], buf[32] = "";
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		f = fopen(path, "r");
		cr_assert(f && fgets(buf, sizeof(buf), f), "the fake runsc wrote no %s", path);
		fclose(f);
		long pid = atol(buf);
		cr_assert_gt(pid, 0);
		/* not running any more (exited, or a zombie left to the reapers) */
		bool gone = false;
		for (int k = 0; k < 100 && !gone; k++) {
			snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
			char cmd[64] = "";
			FILE *c = fopen(path, "r");
			gone = !c || !fgets(cmd, sizeof(cmd), c) || strcmp(cmd, "sleep");
			if (c)
				fclose(c);
			if (!gone)
				usleep(20000);
		}
		cr_assert(gone, "process %ld (%s) of the fake runsc is still running", pid,
			  names[i]);
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	teardown();
	unlink(fake);
	rmdir(dir);
}

struct live {
	struct strbuf out, err;
	long long first_ms;
};

static void live_hook(void *arg, int fd, const char *data, size_t len)
{
	struct live *l = arg;
	if (fd == 1 && !l->out.len)
		l->first_ms = now_ms();
	strbuf_add(fd == 1 ? &l->out : &l->err, data, len);
}

/* run_spec.on_output: bytes arrive while the program runs, and exactly the
 * result's, never the trailer by which init ends the run */
Test(gvisor, live_output_while_it_runs_without_the_trailer)
{
	const char *argv[] = {"/bin/sh", "-c", "echo one; echo e >&2; sleep 1; printf two", NULL};
	struct run_spec s = spec_of(argv);
	struct live l = {STRBUF_INIT, STRBUF_INIT, 0};
	s.on_output = live_hook;
	s.output_arg = &l;
	struct run_result res;
	run(&s, &res);
	long long end = now_ms();
	cr_assert_eq(res.status, RUN_OK, "%s: %s", run_status_name(res.status), res.message);
	cr_assert_str_eq(res.out.buf, "one\ntwo");
	cr_assert_str_eq(l.out.buf, "one\ntwo");
	cr_assert_str_eq(l.err.buf, "e\n");
	cr_assert(end - l.first_ms > 700, "first output only %lld ms before the end",
		  end - l.first_ms);
	run_result_release(&res);
	strbuf_release(&l.out);
	strbuf_release(&l.err);
}
