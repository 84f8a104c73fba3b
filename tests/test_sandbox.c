/* test_sandbox: sandbox_run through the native backend with real programs —
 * statuses, limits, measurements, file access rules and leftovers. Needs root. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "common/strbuf.h"
#include "judge/grading/limits.h"
#include "runner/sandbox.h"
#include "tests/fixture.h"

static struct judge_config cfg;
static struct sandbox *sb;
static const char *env[] = {"PATH=/usr/bin:/bin", "LANG=C", NULL};

static void setup(void)
{
	char err[512];
	/* a secret in the worker's environment must never reach a program */
	setenv("JUDGE_TEST_SECRET", "s3cr3t-worker-env", 1);
	fixture_native_start(&cfg);
	cr_assert_eq(sandbox_open(SANDBOX_NATIVE, 3, 16 << 20, &sb, err, sizeof err), 0, "%s", err);
}

static void teardown(void)
{
	if (sb)
		sandbox_close(sb);
	sb = NULL;
	sandbox_global_shutdown();
}

TestSuite(sandbox, .init = setup, .fini = teardown);

/* judge.ini's default limits of a run, with these four. */
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

/* Runs argv (NULL-terminated list) with stdin; res must be released. */
static void run(struct run_result *res, struct run_limits l, const char *in,
		const char *const *argv)
{
	struct run_spec spec = {.argv = argv, .env = env, .limits = l};
	if (in) {
		spec.stdin_data = in;
		spec.stdin_len = strlen(in);
	}
	run_result_init(res);
	cr_assert_eq(sandbox_run(sb, &spec, res), 0);
}

static void sh(struct run_result *res, struct run_limits l, const char *script)
{
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	run(res, l, NULL, argv);
}

Test(sandbox, true_is_ok)
{
	struct run_result r;
	const char *argv[] = {"/bin/true", NULL};
	run(&r, lim(1000, 3000), NULL, argv);
	cr_assert_eq(r.status, RUN_OK, "%s %s", run_status_name(r.status), r.message);
	cr_assert_eq(r.exit_code, 0);
	cr_assert_eq(r.signal, 0);
	cr_assert(r.wall_ms < 1000);
	run_result_release(&r);
}

static void live_hook(void *arg, int fd, const char *data, size_t len)
{
	strbuf_add(&((struct strbuf *)arg)[fd == 1 ? 0 : 1], data, len);
}

/* run_spec.on_output gets what the result gets, as it comes */
Test(sandbox, live_output_hook)
{
	struct strbuf live[2] = {STRBUF_INIT, STRBUF_INIT};
	const char *argv[] = {"/bin/sh", "-c", "echo one; echo e >&2; printf two", NULL};
	struct run_spec spec = {.argv = argv, .env = env, .limits = lim(1000, 3000)};
	spec.on_output = live_hook;
	spec.output_arg = live;
	struct run_result r;
	run_result_init(&r);
	cr_assert_eq(sandbox_run(sb, &spec, &r), 0);
	cr_assert_eq(r.status, RUN_OK, "%s %s", run_status_name(r.status), r.message);
	cr_assert_str_eq(live[0].buf, "one\ntwo");
	cr_assert_str_eq(live[1].buf, "e\n");
	run_result_release(&r);
	strbuf_release(&live[0]);
	strbuf_release(&live[1]);
}

Test(sandbox, exit_code_is_runtime_error)
{
	struct run_result r;
	sh(&r, lim(1000, 3000), "echo out; echo err >&2; exit 3");
	cr_assert_eq(r.status, RUN_RUNTIME_ERROR, "%s %s", run_status_name(r.status), r.message);
	cr_assert_eq(r.exit_code, 3);
	cr_assert_str_eq(r.out.buf, "out\n");
	cr_assert_str_eq(r.err.buf, "err\n");
	run_result_release(&r);
}

Test(sandbox, signal_is_runtime_error)
{
	struct run_result r;
	sh(&r, lim(1000, 3000), "kill -SEGV $$");
	cr_assert_eq(r.status, RUN_RUNTIME_ERROR, "%s %s", run_status_name(r.status), r.message);
	cr_assert_eq(r.signal, SIGSEGV);
	run_result_release(&r);
}

Test(sandbox, stdin_is_fed)
{
	struct run_result r;
	const char *argv[] = {"/bin/cat", NULL};
	run(&r, lim(1000, 3000), "line one\nline two\n", argv);
	cr_assert_eq(r.status, RUN_OK, "%s", r.message);
	cr_assert_str_eq(r.out.buf, "line one\nline two\n");
	run_result_release(&r);
}

Test(sandbox, big_stdin_from_file_and_a_program_that_never_reads)
{
	char path[] = "/tmp/judge-test-stdin-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	static char block[1 << 16];
	memset(block, 'x', sizeof block);
	for (int i = 0; i < 64; i++) /* 4 MB: more than a pipe holds */
		cr_assert_eq(write(fd, block, sizeof block), (ssize_t)sizeof block);
	close(fd);
	struct run_spec spec = {.argv = (const char *const[]){"/usr/bin/wc", "-c", NULL},
				.env = env,
				.stdin_path = path,
				.limits = lim(2000, 5000)};
	struct run_result r;
	run_result_init(&r);
	cr_assert_eq(sandbox_run(sb, &spec, &r), 0);
	cr_assert_eq(r.status, RUN_OK, "%s", r.message);
	cr_assert_str_eq(r.out.buf, "4194304\n");
	run_result_release(&r);

	spec.argv = (const char *const[]){"/bin/true", NULL};
	run_result_init(&r);
	cr_assert_eq(sandbox_run(sb, &spec, &r), 0);
	cr_assert_eq(r.status, RUN_OK, "%s %s", run_status_name(r.status), r.message);
	run_result_release(&r);
	unlink(path);
}

Test(sandbox, cpu_loop_is_a_prompt_timeout)
{
	struct run_result r;
	sh(&r, lim(300, 5000), "while :; do :; done");
	cr_assert_eq(r.status, RUN_TIMEOUT, "%s %s", run_status_name(r.status), r.message);
	/* small overshoot of CPU; wall depends on what else runs on the cores */
	cr_assert(r.cpu_ms >= 300 && r.cpu_ms < 450, "cpu %ld ms", r.cpu_ms);
	cr_assert(r.wall_ms < 4000, "wall %ld ms", r.wall_ms);
	run_result_release(&r);
}

Test(sandbox, sleep_is_a_wall_timeout)
{
	struct run_result r;
	sh(&r, lim(1000, 400), "sleep 30");
	cr_assert_eq(r.status, RUN_TIMEOUT, "%s %s", run_status_name(r.status), r.message);
	cr_assert(r.wall_ms >= 400 && r.wall_ms < 2000, "wall %ld ms", r.wall_ms);
	run_result_release(&r);
}

Test(sandbox, stdout_flood_is_output_limit_at_once)
{
	struct run_result r;
	struct run_limits l = lim(10000, 20000);
	l.stdout_bytes = 1 << 20;
	const char *argv[] = {"/usr/bin/yes", NULL};
	run(&r, l, NULL, argv);
	cr_assert_eq(r.status, RUN_OUTPUT_LIMIT, "%s %s", run_status_name(r.status), r.message);
	cr_assert_eq(r.out.len, (size_t)1 << 20);
	cr_assert(r.out_truncated);
	cr_assert(r.wall_ms < 5000, "wall %ld ms", r.wall_ms);
	run_result_release(&r);
}

Test(sandbox, exact_cap_is_not_over)
{
	struct run_result r;
	struct run_limits l = lim(2000, 5000);
	l.stdout_bytes = 1000;
	sh(&r, l, "head -c 1000 /dev/zero");
	cr_assert_eq(r.status, RUN_OK, "%s %s", run_status_name(r.status), r.message);
	cr_assert_eq(r.out.len, 1000);
	cr_assert(!r.out_truncated);
	run_result_release(&r);
}

Test(sandbox, stderr_flood_is_truncated_not_fatal)
{
	struct run_result r;
	struct run_limits l = lim(5000, 10000);
	l.stderr_bytes = 1000;
	sh(&r, l, "head -c 3000000 /dev/zero >&2; echo done");
	cr_assert_eq(r.status, RUN_OK, "%s %s", run_status_name(r.status), r.message);
	cr_assert_eq(r.err.len, 1000);
	cr_assert(r.err_truncated);
	cr_assert_str_eq(r.out.buf, "done\n");
	run_result_release(&r);
}

/* Compiles src on the host into the box as name. */
static void compile_into_box(const char *src, const char *name)
{
	char cpath[] = "/tmp/judge-test-src-XXXXXX.c", bin[64], cmd[256];
	int fd = mkstemps(cpath, 2);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, src, strlen(src)), (ssize_t)strlen(src));
	close(fd);
	snprintf(bin, sizeof bin, "%.*s.bin", (int)strlen(cpath) - 2, cpath);
	snprintf(cmd, sizeof cmd, "gcc -O1 -o %s %s", bin, cpath);
	cr_assert_eq(system(cmd), 0, "gcc failed");
	struct strbuf b = STRBUF_INIT;
	cr_assert_eq(strbuf_read_file(&b, bin, 1 << 24), 0);
	cr_assert_eq(sandbox_write_file(sb, name, b.buf, b.len, 0755), 0);
	strbuf_release(&b);
	unlink(cpath);
	unlink(bin);
}

Test(sandbox, memory_hog_is_memory_limit)
{
	compile_into_box("#include <stdlib.h>\n#include <string.h>\n"
			 "int main(void){for(int i=0;i<1024;i++){char*p=malloc(1<<20);"
			 "if(!p)return 2;memset(p,1,1<<20);}return 0;}\n",
			 "hog");
	struct run_result r;
	struct run_limits l = lim(5000, 10000);
	l.memory_kb = 64 * 1024;
	const char *argv[] = {"/box/hog", NULL};
	run(&r, l, NULL, argv);
	cr_assert_eq(r.status, RUN_MEMORY_LIMIT, "%s %s", run_status_name(r.status), r.message);
	cr_assert(r.memory_kb >= 32 * 1024 && r.memory_kb <= 65 * 1024, "peak %ld kB", r.memory_kb);
	run_result_release(&r);
}

Test(sandbox, cpu_and_memory_are_measured)
{
	compile_into_box("#include <stdlib.h>\n#include <string.h>\n#include <time.h>\n"
			 "int main(void){char*p=malloc(40<<20);memset(p,1,40<<20);"
			 "while(clock()<CLOCKS_PER_SEC/5);return p[7]-1;}\n",
			 "work");
	struct run_result r;
	const char *argv[] = {"/box/work", NULL};
	run(&r, lim(3000, 6000), NULL, argv);
	cr_assert_eq(r.status, RUN_OK, "%s %s", run_status_name(r.status), r.message);
	cr_assert(r.cpu_ms >= 190 && r.cpu_ms < 400, "cpu %ld", r.cpu_ms);
	cr_assert(r.memory_kb >= 40 * 1024 && r.memory_kb < 60 * 1024, "mem %ld", r.memory_kb);
	cr_assert(r.wall_ms >= r.cpu_ms - 20);
	run_result_release(&r);
}

Test(sandbox, identity_env_and_filesystem)
{
	struct run_result r;
	sh(&r, lim(2000, 5000),
	   "id -u; id -g; env | sort; test -w / && echo root-writable; "
	   "touch /usr/x 2>/dev/null && echo usr-writable; "
	   "test -e /etc/shadow && echo shadow-visible; test -e /root && echo root-visible; "
	   "echo hi > /box/f && cat /box/f; echo t > /tmp/t && cat /tmp/t; pwd");
	cr_assert_eq(r.status, RUN_OK, "%s %s %s", run_status_name(r.status), r.message, r.err.buf);
	cr_assert(strstr(r.out.buf, "1000\n1000\n"), "%s", r.out.buf);
	cr_assert(!strstr(r.out.buf, "JUDGE_TEST_SECRET"), "%s", r.out.buf);
	cr_assert(strstr(r.out.buf, "PATH=/usr/bin:/bin"), "%s", r.out.buf);
	cr_assert(!strstr(r.out.buf, "writable"), "%s", r.out.buf);
	cr_assert(!strstr(r.out.buf, "visible"), "%s", r.out.buf);
	cr_assert(strstr(r.out.buf, "hi\nt\n/box\n"), "%s", r.out.buf);
	run_result_release(&r);
}

Test(sandbox, files_in_and_out)
{
	struct strbuf b = STRBUF_INIT;
	cr_assert_eq(sandbox_write_file(sb, "in.txt", "abc", 3, 0644), 0);
	cr_assert_eq(sandbox_write_file(sb, "sub/dir/in2.txt", "def", 3, 0644), 0);
	struct run_result r;
	sh(&r, lim(2000, 5000), "cat in.txt sub/dir/in2.txt > out.txt; echo more >> out.txt");
	cr_assert_eq(r.status, RUN_OK, "%s", r.message);
	cr_assert_eq(sandbox_read_file(sb, "out.txt", &b, 100), 0);
	cr_assert_str_eq(b.buf, "abcdefmore\n");
	strbuf_reset(&b);
	cr_assert_eq(sandbox_read_file(sb, "out.txt", &b, 4), -EFBIG);
	cr_assert_eq(sandbox_read_file(sb, "missing", &b, 4), -ENOENT);
	strbuf_release(&b);
	run_result_release(&r);
}

Test(sandbox, bad_names_are_refused)
{
	struct strbuf b = STRBUF_INIT;
	const char *bad[] = {"", "/etc/passwd", "../x", "a/../b", "a/..", "./x", "a//b", "a/"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(sandbox_write_file(sb, bad[i], "x", 1, 0644), -EINVAL, "%s", bad[i]);
		cr_assert_eq(sandbox_read_file(sb, bad[i], &b, 10), -EINVAL, "%s", bad[i]);
	}
	strbuf_release(&b);
}

Test(sandbox, planted_links_are_not_followed)
{
	/* a host file the program's links point at */
	const char *victim = "/tmp/judge-test-victim";
	FILE *f = fopen(victim, "w");
	cr_assert(f);
	fputs("original\n", f);
	fclose(f);
	mkdir("/tmp/judge-test-victim-dir", 0755);
	f = fopen("/tmp/judge-test-victim-dir/keep", "w");
	cr_assert(f);
	fclose(f);
	struct run_result r;
	sh(&r, lim(2000, 5000),
	   "ln -s /tmp/judge-test-victim x; ln -s /etc/passwd p; mkdir -p d; "
	   "ln -s /tmp/judge-test-victim-dir d/dir; ln -s /tmp/judge-test-victim-dir top; "
	   "mkfifo fifo; ls -l");
	cr_assert_eq(r.status, RUN_OK, "%s %s", r.message, r.err.buf);
	struct strbuf b = STRBUF_INIT;
	cr_assert_eq(sandbox_read_file(sb, "x", &b, 100), -ELOOP);
	cr_assert_eq(sandbox_read_file(sb, "p", &b, 100), -ELOOP);
	cr_assert_eq(sandbox_read_file(sb, "top/keep", &b, 100), -ENOTDIR);
	cr_assert_eq(sandbox_write_file(sb, "x", "pwned\n", 6, 0644), -ELOOP);
	cr_assert_eq(sandbox_write_file(sb, "top/new", "pwned\n", 6, 0644), -ENOTDIR);
	cr_assert_eq(sandbox_read_file(sb, "fifo", &b, 100), -EINVAL);
	cr_assert_eq(sandbox_write_file(sb, "fifo", "x", 1, 0644), -ENXIO);
	cr_assert_eq(b.len, 0);
	strbuf_release(&b);
	run_result_release(&r);
	sandbox_close(sb);
	sb = NULL;
	b = (struct strbuf)STRBUF_INIT;
	cr_assert_eq(strbuf_read_file(&b, victim, 100), 0);
	cr_assert_str_eq(b.buf, "original\n");
	strbuf_release(&b);
	cr_assert_eq(access("/tmp/judge-test-victim-dir/keep", F_OK), 0);
	cr_assert_eq(access("/tmp/judge-test-victim-dir/new", F_OK), -1);
	unlink("/tmp/judge-test-victim-dir/keep");
	rmdir("/tmp/judge-test-victim-dir");
	unlink(victim);
}

Test(sandbox, survivors_die_with_the_run)
{
	struct run_result r;
	char err[512];
	/* a slot of its own: other tests run at the same time under slot 3 */
	sandbox_close(sb);
	cr_assert_eq(sandbox_open(SANDBOX_NATIVE, 9, 16 << 20, &sb, err, sizeof err), 0, "%s", err);
	/* a setsid'ed double-fork child that would outlive the program */
	sh(&r, lim(2000, 5000),
	   "setsid sh -c 'sleep 100 & echo $! > /box/pid' </dev/null >/dev/null 2>&1 & "
	   "sleep 0.2; cat /box/pid");
	cr_assert_eq(r.status, RUN_OK, "%s %s", r.message, r.err.buf);
	cr_assert(r.wall_ms < 2000, "the run waited for the survivor: %ld ms", r.wall_ms);
	/* nothing of the slot's uid may be left on the host once the sandbox is closed */
	sandbox_close(sb);
	sb = NULL;
	DIR *d = opendir("/proc");
	struct dirent *e;
	while ((e = readdir(d))) {
		char path[300];
		struct stat st;
		snprintf(path, sizeof path, "/proc/%s", e->d_name);
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && stat(path, &st) == 0)
			cr_assert_neq(st.st_uid, (uid_t)(cfg.box_uid + 9), "process %s survived",
				      e->d_name);
	}
	closedir(d);
	run_result_release(&r);
}

Test(sandbox, missing_program_is_internal_error)
{
	struct run_result r;
	const char *argv[] = {"/usr/bin/definitely-not-here", NULL};
	run(&r, lim(1000, 3000), NULL, argv);
	cr_assert_eq(r.status, RUN_INTERNAL_ERROR);
	cr_assert(strstr(r.message, "definitely-not-here"), "%s", r.message);
	run_result_release(&r);
}

/* pid 1 of a run is ns_init, a small static binary started by exec: not a copy
 * of this process (whose memory holds the worker's secrets), and it keeps no
 * capability once the program runs. */
Test(sandbox, init_holds_no_copy_of_the_worker)
{
	struct run_result r;
	sh(&r, lim(2000, 5000),
	   "cat /proc/1/comm; grep -E '^(VmSize|CapPrm|CapEff):' /proc/1/status");
	cr_assert_eq(r.status, RUN_OK, "%s %s %s", run_status_name(r.status), r.message, r.err.buf);
	/* its name: "ns_init" (or, on older kernels, "5": the descriptor it was
	 * started from), never this process's */
	char self[64] = "";
	FILE *f = fopen("/proc/self/comm", "r");
	cr_assert(f && fgets(self, sizeof self, f));
	fclose(f);
	cr_assert(strncmp(r.out.buf, self, strlen(self)), "%s", r.out.buf);
	cr_assert(!strncmp(r.out.buf, "ns_init\n", 8) || !strncmp(r.out.buf, "5\n", 2), "%s",
		  r.out.buf);
	const char *vm = strstr(r.out.buf, "VmSize:");
	cr_assert(vm, "%s", r.out.buf);
	long kb = strtol(vm + 7, NULL, 10);
	/* the static binary, its 1 MiB plan buffer and a stack; this test process
	 * maps far more (libraries, thread stacks) */
	cr_assert(kb > 0 && kb < 8192, "init maps %ld kB", kb);
	cr_assert(strstr(r.out.buf, "CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n"), "%s",
		  r.out.buf);
	run_result_release(&r);
}

/* Arguments travel in the plan: 64 of 4 KiB (what a request may send) arrive
 * whole; a list over the plan's capacity is a clear internal error. */
Test(sandbox, long_argument_lists)
{
	enum { N = 300, LEN = 4000 };
	static char words[N][LEN + 1];
	const char *argv[N + 5] = {"/bin/sh", "-c", "echo $# ${#1} ${#64}", "sh"};
	for (int i = 0; i < N; i++) {
		memset(words[i], 'a' + i % 26, LEN);
		argv[4 + i] = words[i];
	}
	struct run_result r;
	argv[4 + 64] = NULL;
	run(&r, lim(2000, 5000), NULL, argv);
	cr_assert_eq(r.status, RUN_OK, "%s %s %s", run_status_name(r.status), r.message, r.err.buf);
	cr_assert_str_eq(r.out.buf, "64 4000 4000\n");
	run_result_release(&r);

	argv[4 + 64] = words[64];
	run(&r, lim(2000, 5000), NULL, argv);
	cr_assert_eq(r.status, RUN_INTERNAL_ERROR, "%s", run_status_name(r.status));
	cr_assert(strstr(r.message, "plan too large"), "%s", r.message);
	run_result_release(&r);
}

Test(sandbox, nothing_left_behind)
{
	struct run_result r;
	const char *argv[] = {"/bin/true", NULL};
	run(&r, lim(1000, 3000), NULL, argv);
	run_result_release(&r);
	char box[4096];
	snprintf(box, sizeof box, "%s", sandbox_box_path(sb));
	sandbox_close(sb);
	sb = NULL;
	cr_assert_eq(access(box, F_OK), -1, "box %s left behind", box);
	const char *ctl[] = {"memory", "pids", "cpuacct"};
	char prefix[64];
	snprintf(prefix, sizeof prefix, "judge-%d-", (int)getpid());
	for (int i = 0; i < 3; i++) {
		char dir[128];
		snprintf(dir, sizeof dir, "/sys/fs/cgroup/%s/judge", ctl[i]);
		DIR *d = opendir(dir);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d)))
			cr_assert(strncmp(e->d_name, prefix, strlen(prefix)), "cgroup %s/%s left",
				  dir, e->d_name);
		closedir(d);
	}
	FILE *m = fopen("/proc/self/mountinfo", "r");
	char line[1024];
	while (fgets(line, sizeof line, m))
		cr_assert(!strstr(line, box), "mount left: %s", line);
	fclose(m);
}

/* The runner fills in no limit: its caller's policy decides every one. */
Test(sandbox, incomplete_limits_are_internal_error)
{
	const char *argv[] = {"/bin/true", NULL};
	struct run_limits l = lim(1000, 3000);
	l.tmp_bytes = 0;
	struct run_result r;
	run(&r, l, NULL, argv);
	cr_assert_eq(r.status, RUN_INTERNAL_ERROR);
	cr_assert_str_eq(r.message, "incomplete limits: tmp_bytes");
	run_result_release(&r);

	l = lim(1000, 3000);
	l.open_files = -1;
	run(&r, l, NULL, argv);
	cr_assert_eq(r.status, RUN_INTERNAL_ERROR);
	cr_assert_str_eq(r.message, "incomplete limits: open_files");
	run_result_release(&r);
}

Test(sandbox, gvisor_platform_is_checked)
{
	char err[512] = "";
	struct sandbox_options opts;
	cr_assert_eq(limits_sandbox_options(&cfg, &opts, err, sizeof err), 0, "%s", err);
	snprintf(opts.gvisor_platform, sizeof opts.gvisor_platform, "xen");
	sandbox_close(sb);
	sb = NULL;
	sandbox_global_shutdown();
	cr_assert_eq(sandbox_global_init(&opts, err, sizeof err), -1);
	cr_assert(strstr(err, "gvisor_platform"), "%s", err);
}
