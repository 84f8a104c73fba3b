/* test_gvisor_zygote: Python runs forked from box_init's zygote (warm_start on,
 * docs/warm-start.md) through reused gVisor sandboxes of one key. A program run
 * warm sees what a fresh `python3 main.py` sees (the same fingerprint, stderr,
 * exit codes, signals, limits, stdin), and nothing a program did reaches the next
 * one, of the same workspace or of the key's next. Needs root, runsc and Python. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/zygote_runs.h"

static void start(void)
{
	start_python(SANDBOX_GVISOR);
}

TestSuite(gvisor_zygote, .init = start, .fini = stop, .timeout = 180);

Test(gvisor_zygote, nothing_of_a_run_reaches_the_next)
{
	char out[64];
	struct sandbox *a = open_ws(1);
	run_ok(a, WARM_MARK, out, sizeof(out));
	cr_assert_str_eq(out, "fresh\n", "a sandbox's first run starts fresh");
	warm_up(a);
	check_nothing_reaches_the_next(a);
}

Test(gvisor_zygote, random_differs_between_runs)
{
	check_random_differs("import random\nprint(random.random(), random.getrandbits(64))\n");
}

/* What a program sees of its start, but its pid and parent (the zygote's child
 * has the zygote as parent) and how it was started. */
static const char *const fingerprint =
    "import os, resource, signal, sys, threading\n"
    "print(sys.argv, sys.orig_argv, __name__, __file__, __spec__, __package__, __cached__)\n"
    "print(type(__loader__).__name__, __loader__.name, __loader__.path, __doc__, __annotations__)\n"
    "print(sorted(globals()), __builtins__ is __import__('builtins'))\n"
    "print(sys.path, os.getcwd())\n"
    "print(sys.flags, sys.executable, sys.prefix, sys.getrecursionlimit())\n"
    "print(sorted(os.environ.items()))\n"
    "print(os.getuid(), os.geteuid(), os.getgid(), os.getgroups(), os.getsid(0) == os.getpid(),\n"
    "      os.getpgrp() == os.getpid())\n"
    "print([(s.name, str(signal.getsignal(s))) for s in signal.valid_signals()\n"
    "       if isinstance(s, signal.Signals) and s not in (signal.SIGKILL, signal.SIGSTOP)])\n"
    "print(signal.pthread_sigmask(signal.SIG_BLOCK, []))\n"
    "print([(n, resource.getrlimit(getattr(resource, n))) for n in dir(resource)\n"
    "       if n.startswith('RLIMIT_')])\n"
    "print(sorted(os.listdir('/proc/self/fd')), os.listdir('/tmp'))\n"
    "for f in (sys.stdin, sys.stdout, sys.stderr):\n"
    "    print(f.fileno(), f.encoding, f.errors, f.line_buffering, f.isatty(), f.mode)\n"
    "st = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines()\n"
    "          if ':\\t' in l)\n"
    "print([st.get(k) for k in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb',\n"
    "                           'NoNewPrivs', 'Seccomp', 'Threads')])\n"
    "print(threading.active_count(), repr(sys.stdin.read()))\n"
    "print(hash('a') == hash('a'), (lambda: 0).__code__.co_filename)\n"
    "print(sorted(sys.modules))\n";

/* Cuts the last line (sys.modules) off out into mods. */
static void cut_modules(struct run_result *r, char *mods, size_t len)
{
	char *nl = r->out.len > 1 ? memrchr(r->out.buf, '\n', r->out.len - 1) : NULL;
	cr_assert(nl);
	snprintf(mods, len, "%s", nl + 1);
	r->out.len = (size_t)(nl + 1 - r->out.buf);
	r->out.buf[r->out.len] = 0;
}

Test(gvisor_zygote, a_warm_run_sees_what_a_fresh_one_does)
{
	struct sandbox *a = open_ws(1);
	struct run_result fresh, warm;
	run_py(a, fingerprint, "line one\nline two\n", 0, 0, &fresh);
	warm_up(a);
	run_py(a, fingerprint, "line one\nline two\n", 0, 0, &warm);
	cr_assert_eq(fresh.status, RUN_OK, "%s", fresh.err.buf);
	cr_assert_eq(warm.status, RUN_OK, "%s", warm.err.buf);
	static char fresh_mods[16384], warm_mods[16384];
	cut_modules(&fresh, fresh_mods, sizeof(fresh_mods));
	cut_modules(&warm, warm_mods, sizeof(warm_mods));
	cr_assert_str_eq(warm.out.buf, fresh.out.buf);
	cr_assert_str_eq(warm.err.buf, "");
	/* sys.modules: what a fresh start has after importing the zygote's modules
	 * (python.ini, after its script) too; another sandbox's first run tells */
	struct strbuf src = STRBUF_INIT;
	strbuf_addstr(&src, "import os, resource, signal, sys, threading\n");
	for (char **m = zlang->zygote_argv + 2; *m; m++)
		strbuf_addf(&src, "import %s\n", *m);
	strbuf_addstr(&src, "print(sorted(sys.modules))\n");
	struct sandbox *b = open_ws(2);
	struct run_result pre;
	run_py(b, src.buf, NULL, 0, 0, &pre);
	cr_assert_eq(pre.status, RUN_OK, "%s", pre.err.buf);
	cr_assert_str_eq(warm_mods, pre.out.buf);
	cr_assert_str_neq(fresh_mods, pre.out.buf, "the zygote's modules are more");
	run_result_release(&pre);
	strbuf_release(&src);
	sandbox_close(b);
	run_result_release(&fresh);
	run_result_release(&warm);
	sandbox_close(a);
}

Test(gvisor_zygote, exit_codes_tracebacks_output_at_exit_signals)
{
	check_same_ends();
}

Test(gvisor_zygote, a_file_left_open_is_written)
{
	struct sandbox *w = open_ws(1);
	warm_up(w);
	check_files_left_open(w);
	sandbox_close(w);
}

Test(gvisor_zygote, limits_hold_and_the_next_run_is_fine)
{
	/* box_init, the zygote and the program */
	check_limits(true, 3);
}

Test(gvisor_zygote, stdin_reaches_the_program)
{
	check_stdin();
}

/* The zygote is root's and the run's uid is not: a program cannot signal, read or
 * trace it, and what it leaves running dies before the next run, which is warm. */
Test(gvisor_zygote, a_program_cannot_reach_the_zygote)
{
	char out[512];
	struct sandbox *a = open_ws(1);
	warm_up(a);
	run_ok(a,
	       WARM_MARK
	       "import os, signal\n"
	       "z = os.getppid()\n"
	       "def tryit(f):\n"
	       "    try:\n"
	       "        f(); return 'reached'\n"
	       "    except OSError as e:\n"
	       "        return type(e).__name__\n"
	       "print(tryit(lambda: os.kill(z, signal.SIGKILL)),\n"
	       "      tryit(lambda: open('/proc/%d/mem' % z, 'rb').read(1)),\n"
	       "      tryit(lambda: os.setpgid(z, os.getpid())))\n"
	       "try:\n" /* gVisor lets anyone read it: it is the run's own env */
	       "    e = open('/proc/%d/environ' % z, 'rb').read().split(b'\\0')[:-1]\n"
	       "    print(sorted(e) == sorted(k + b'=' + v for k, v in os.environb.items()))\n"
	       "except OSError:\n"
	       "    print(True)\n"
	       "print(tryit(lambda: os.kill(-1, signal.SIGKILL)))\n",
	       out, sizeof(out));
	cr_assert_str_eq(out, "warm\nPermissionError PermissionError ProcessLookupError\nTrue\n"
			      "ProcessLookupError\n");
	check_survivor_dies(a, 3);
	sandbox_close(a);
}

Test(gvisor_zygote, the_box_shadows_the_zygote_modules)
{
	check_box_shadows_zygote_modules();
}
