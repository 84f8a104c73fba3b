/* test_native_zygote: Python runs forked from the native backend's zygote of their
 * key (warm_start on, docs/warm-start.md "Native"). A program run warm sees what a
 * fresh `python3 main.py` sees (the same fingerprint, stderr, exit codes, signals,
 * limits, stdin, namespaces, cgroup, seccomp), nothing a program did reaches the
 * next one, and keys never share a zygote. A workspace without a key runs fresh:
 * that is the reference. Needs root and Python. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/zygote_runs.h"

static void start(void)
{
	start_python(SANDBOX_NATIVE);
}

TestSuite(native_zygote, .init = start, .fini = stop, .timeout = 180);

Test(native_zygote, nothing_of_a_run_reaches_the_next)
{
	struct sandbox *a = open_ws(1);
	warm_up(a);
	check_nothing_reaches_the_next(a);
}

Test(native_zygote, random_differs_between_runs)
{
	check_random_differs("import random\nprint(random.random(), random.getrandbits(64))\n");
}

/* Keys never share a zygote: the hash secret is one per interpreter, so two runs
 * of one zygote hash a string alike, and another key's runs differently. */
Test(native_zygote, keys_never_share_a_zygote)
{
	char a1[128], a2[128], b1[128];
	const char *src = WARM_MARK "print(hash('judge'))\n";
	struct sandbox *a = open_key(1, "key-a"), *b = open_key(2, "key-b");
	warm_up(a);
	warm_up(b);
	run_ok(a, src, a1, sizeof(a1));
	run_ok(a, src, a2, sizeof(a2));
	run_ok(b, src, b1, sizeof(b1));
	cr_assert_str_eq(a1, a2, "one zygote per key");
	cr_assert_str_neq(a1, b1, "keys do not share one");
	sandbox_close(a);
	sandbox_close(b);
}

/* What a program sees of its start, but its parent (outside the namespaces when
 * warm: 0, not init's 1) and how it was started. */
static const char *const fingerprint =
    "import os, resource, signal, sys, threading\n"
    "print(os.getpid(), sys.argv, sys.orig_argv, __name__, __file__, __spec__, __package__,\n"
    "      __cached__)\n"
    "print(type(__loader__).__name__, __loader__.name, __loader__.path, __doc__, __annotations__)\n"
    "print(sorted(globals()), __builtins__ is __import__('builtins'))\n"
    "print(sys.path, os.getcwd())\n"
    "print(sys.flags, sys.executable, sys.prefix, sys.getrecursionlimit())\n"
    "print(sorted(os.environ.items()))\n"
    "print(os.getuid(), os.geteuid(), os.getgid(), os.getgroups(), os.getsid(0) == os.getpid(),\n"
    "      os.getpgrp() == os.getpid(), os.uname().nodename, os.stat('/proc/self').st_uid)\n"
    "print([(s.name, str(signal.getsignal(s))) for s in signal.valid_signals()\n"
    "       if isinstance(s, signal.Signals) and s not in (signal.SIGKILL, signal.SIGSTOP)])\n"
    "print(signal.pthread_sigmask(signal.SIG_BLOCK, []))\n"
    "print([(n, resource.getrlimit(getattr(resource, n))) for n in dir(resource)\n"
    "       if n.startswith('RLIMIT_')])\n"
    "print(sorted(os.listdir('/proc/self/fd')), os.listdir('/tmp'))\n"
    "print(sorted(p for p in os.listdir('/proc') if p.isdigit()))\n"
    "print(open('/proc/self/cgroup').read(), open('/proc/self/uid_map').read(),\n"
    "      open('/proc/self/gid_map').read(), open('/proc/self/setgroups').read())\n"
    "print([l.split()[3:] for l in open('/proc/self/mountinfo')])\n"
    "print(sorted(os.listdir('/proc/self/ns')), os.umask(0o22))\n"
    "for f in (sys.stdin, sys.stdout, sys.stderr):\n"
    "    print(f.fileno(), f.encoding, f.errors, f.line_buffering, f.isatty(), f.mode)\n"
    "st = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines()\n"
    "          if ':\\t' in l)\n"
    "print([st.get(k) for k in ('Uid', 'Gid', 'Groups', 'CapInh', 'CapPrm', 'CapEff', 'CapBnd',\n"
    "                           'CapAmb', 'NoNewPrivs', 'Seccomp', 'Seccomp_filters', 'Threads',\n"
    "                           'NSpid', 'NStgid')])\n"
    "print(threading.active_count(), repr(sys.stdin.read()))\n"
    "print(hash('a') == hash('a'), (lambda: 0).__code__.co_filename)\n"
    "print(os.getppid())\n"
    "print(sorted(sys.modules))\n";

/* Cuts the last line of r's stdout off into last. */
static void cut_line(struct run_result *r, char *last, size_t len)
{
	char *nl = r->out.len > 1 ? memrchr(r->out.buf, '\n', r->out.len - 1) : NULL;
	cr_assert(nl);
	snprintf(last, len, "%s", nl + 1);
	r->out.len = (size_t)(nl + 1 - r->out.buf);
	r->out.buf[r->out.len] = 0;
}

Test(native_zygote, a_warm_run_sees_what_a_fresh_one_does)
{
	/* one slot for both: its host uid shows in uid_map and the mounts */
	struct sandbox *w = open_ws(1);
	struct run_result fresh, warm;
	warm_up(w);
	run_py(w, fingerprint, "line one\nline two\n", 0, 0, &warm);
	sandbox_close(w);
	struct sandbox *f = open_key(1, NULL);
	run_py(f, fingerprint, "line one\nline two\n", 0, 0, &fresh);
	cr_assert_eq(fresh.status, RUN_OK, "%s", fresh.err.buf);
	cr_assert_eq(warm.status, RUN_OK, "%s", warm.err.buf);
	static char fresh_mods[16384], warm_mods[16384];
	char fresh_ppid[32], warm_ppid[32];
	cut_line(&fresh, fresh_mods, sizeof(fresh_mods));
	cut_line(&warm, warm_mods, sizeof(warm_mods));
	cut_line(&fresh, fresh_ppid, sizeof(fresh_ppid));
	cut_line(&warm, warm_ppid, sizeof(warm_ppid));
	cr_assert_str_eq(warm.out.buf, fresh.out.buf);
	cr_assert_str_eq(warm.err.buf, "");
	cr_assert_str_eq(fresh_ppid, "1\n");
	cr_assert_str_eq(warm_ppid, "0\n", "the reaper is outside the run's pid namespace");
	/* sys.modules: what a fresh start has after importing the zygote's modules
	 * (python.ini, after its script) too */
	struct strbuf src = STRBUF_INIT;
	strbuf_addstr(&src, "import os, resource, signal, sys, threading\n");
	for (char **m = zlang->zygote_argv + 2; *m; m++)
		strbuf_addf(&src, "import %s\n", *m);
	strbuf_addstr(&src, "print(sorted(sys.modules))\n");
	struct run_result pre;
	run_py(f, src.buf, NULL, 0, 0, &pre);
	cr_assert_eq(pre.status, RUN_OK, "%s", pre.err.buf);
	cr_assert_str_eq(warm_mods, pre.out.buf);
	cr_assert_str_neq(fresh_mods, pre.out.buf, "the zygote's modules are more");
	run_result_release(&pre);
	strbuf_release(&src);
	run_result_release(&fresh);
	run_result_release(&warm);
	sandbox_close(f);
}

Test(native_zygote, exit_codes_tracebacks_output_at_exit_signals)
{
	check_same_ends();
	same_end("import os\nos.setuid(0)\n", RUN_RUNTIME_ERROR);
	same_end("import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=1)\n",
		 RUN_RUNTIME_ERROR);
}

Test(native_zygote, a_file_left_open_is_written)
{
	struct sandbox *w = open_ws(1);
	warm_up(w);
	check_files_left_open(w);
	sandbox_close(w);
}

Test(native_zygote, limits_hold_and_the_next_run_is_fine)
{
	/* init and the program */
	check_limits(false, 2);
}

Test(native_zygote, stdin_reaches_the_program)
{
	check_stdin();
}

/* The zygote and the program's reaper are outside the run's namespaces and
 * root's on the host: a program cannot name, signal or trace them, and what it
 * leaves running dies with its run. */
Test(native_zygote, a_program_cannot_reach_the_zygote)
{
	char out[512];
	struct sandbox *a = open_ws(1);
	warm_up(a);
	run_ok(a,
	       WARM_MARK
	       "import os, signal\n"
	       "def tryit(f):\n"
	       "    try:\n"
	       "        f(); return 'reached'\n"
	       "    except OSError as e:\n"
	       "        return type(e).__name__\n"
	       "print(os.getppid(), sorted(p for p in os.listdir('/proc') if p.isdigit()))\n"
	       "print(tryit(lambda: open('/proc/1/mem', 'rb').read(1)),\n"
	       "      tryit(lambda: os.kill(-1, signal.SIGKILL)))\n",
	       out, sizeof(out));
	cr_assert_str_eq(out, "warm\n0 ['1', '2']\nPermissionError ProcessLookupError\n");
	check_survivor_dies(a, 2);
	sandbox_close(a);
}

/* The zygote's capability sets (hex, as /proc/PID/status prints them) when
 * this process started one: CapPrm, CapEff, CapBnd, CapInh, CapAmb, Uid. */
static bool zygote_status(char *caps, size_t len)
{
	char path[300], line[256], buf[4096];
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool found = false;
	while (d && !found && (e = readdir(d))) {
		snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		for (size_t i = 0; i < n; i++)
			buf[i] = buf[i] ? buf[i] : ' ';
		buf[n] = 0;
		if (!strstr(buf, "python_zygote.py"))
			continue;
		snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		int ppid = -1;
		caps[0] = 0;
		while (fgets(line, sizeof line, f)) {
			if (!strncmp(line, "PPid:", 5))
				ppid = atoi(line + 5);
			if (!strncmp(line, "Cap", 3) || !strncmp(line, "Uid:", 4))
				snprintf(caps + strlen(caps), len - strlen(caps), "%s", line);
		}
		fclose(f);
		found = ppid == getpid(); /* not another suite's */
	}
	if (d)
		closedir(d);
	return found;
}

/* The zygote runs as uid 0 with CAP_SYS_ADMIN alone (nzygote.c, "Privileges"),
 * and its runs are as they were. */
Test(native_zygote, the_zygote_holds_cap_sys_admin_only)
{
	char out[64], caps[1024];
	struct sandbox *a = open_ws(1);
	warm_up(a);
	run_ok(a, WARM_MARK "print(1)\n", out, sizeof(out));
	cr_assert_str_eq(out, "warm\n1\n");
	cr_assert(zygote_status(caps, sizeof caps), "a zygote of this process is running");
	cr_assert(strstr(caps, "CapPrm:\t0000000000200000\n"), "%s", caps);
	cr_assert(strstr(caps, "CapEff:\t0000000000200000\n"), "%s", caps);
	cr_assert(strstr(caps, "CapBnd:\t0000000000200000\n"), "%s", caps);
	cr_assert(strstr(caps, "CapInh:\t0000000000000000\n"), "%s", caps);
	cr_assert(strstr(caps, "CapAmb:\t0000000000000000\n"), "%s", caps);
	cr_assert(strstr(caps, "Uid:\t0\t0\t0\t0\n"), "%s", caps);
	sandbox_close(a);
}

Test(native_zygote, the_box_shadows_the_zygote_modules)
{
	check_box_shadows_zygote_modules();
}

/* Runs of one key at once on two slots: one zygote forks both, and neither
 * sees the other's processes or descriptors, nor outlives its run. */
struct par {
	struct sandbox *sb;
	char out[512];
	int status;
};

static void *par_run(void *arg)
{
	struct par *p = arg;
	const char *src = WARM_MARK "import os, time\n"
				    "time.sleep(0.5)\n"
				    "print(sorted(p for p in os.listdir('/proc') if p.isdigit()),\n"
				    "      sorted(os.listdir('/proc/self/fd')))\n";
	struct run_result res;
	run_result_init(&res);
	struct run_spec s;
	zygote_spec(&s, NULL, 0, 0);
	if (sandbox_write_file(p->sb, "main.py", src, strlen(src), 0644) == 0 &&
	    sandbox_run(p->sb, &s, &res) == 0)
		p->status = res.status;
	else
		p->status = -1;
	snprintf(p->out, sizeof p->out, "%s", res.out.buf ? res.out.buf : "");
	run_result_release(&res);
	return NULL;
}

Test(native_zygote, runs_of_one_key_at_once_stay_apart)
{
	struct par a = {.sb = open_ws(1)}, b = {.sb = open_ws(2)};
	warm_up(a.sb);
	for (int round = 0; round < 3; round++) {
		pthread_t ta, tb;
		pthread_create(&ta, NULL, par_run, &a);
		pthread_create(&tb, NULL, par_run, &b);
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		const char *want = "warm\n['1', '2'] ['0', '1', '2', '3']\n";
		cr_assert_eq(a.status, RUN_OK, "%d", a.status);
		cr_assert_eq(b.status, RUN_OK, "%d", b.status);
		cr_assert_str_eq(a.out, want);
		cr_assert_str_eq(b.out, want);
	}
	sandbox_close(a.sb);
	sandbox_close(b.sb);
}

/* warm_start off: no zygote, every run fresh. */
Test(native_zygote, warm_start_off_runs_fresh)
{
	char err[512], out[64];
	struct sandbox_options opts;
	sandbox_global_shutdown();
	free(cfg.warm_start);
	cfg.warm_start = strdup("off");
	cr_assert_eq(limits_sandbox_options(&cfg, &opts, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sandbox_global_init(&opts, err, sizeof(err)), 0, "init: %s", err);
	struct sandbox *a = open_ws(1);
	for (int i = 0; i < 5; i++) {
		run_ok(a, WARM_MARK, out, sizeof(out));
		cr_assert_str_eq(out, "fresh\n");
		usleep(100 * 1000);
	}
	sandbox_close(a);
}
