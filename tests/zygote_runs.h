/* zygote_runs.h: what test_gvisor_zygote and test_native_zygote share: a
 * Python run as grading makes it, the mark of a warm run, and the hostile
 * program with its checker. Included after the file's cfg and py. */
#pragma once

/* Runs src as main.py the way grading does (python.ini's run, env, folders,
 * zygote); res is the caller's to release. */
static void run_py(struct sandbox *sb, const char *src, const char *stdin_data, long cpu_ms,
		   long mem_kb, struct run_result *res)
{
	cr_assert_eq(sandbox_write_file(sb, "main.py", src, strlen(src), 0644), 0);
	struct run_spec s = {.argv = (const char *const *)py->run_argv,
			     .env = (const char *const *)py->env,
			     .ro_paths = (const char *const *)py->ro_paths,
			     .warm_argv = (const char *const *)py->warm_argv,
			     .zygote_argv = (const char *const *)py->zygote_argv,
			     .stdin_data = stdin_data,
			     .stdin_len = stdin_data ? strlen(stdin_data) : 0};
	struct limits_policy pol;
	limits_policy_from_config(&cfg, &pol);
	limits_run(&pol, NULL, NULL, NULL, &s.limits);
	s.limits.cpu_ms = cpu_ms ? cpu_ms : 3000;
	s.limits.wall_ms = 10000;
	s.limits.memory_kb = mem_kb ? mem_kb : 256 * 1024;
	s.limits.processes = 64;
	s.limits.stdout_bytes = 1 << 20;
	s.limits.stderr_bytes = 64 << 10;
	run_result_init(res);
	cr_assert_eq(sandbox_run(sb, &s, res), 0);
	cr_assert_neq(res->status, RUN_INTERNAL_ERROR, "%s", res->message);
}

/* A program that says whether it was forked from the zygote: its module's frame
 * has a caller there (the zygote's run()), none in a fresh interpreter. */
#define WARM_MARK "import sys as _s\nprint('warm' if _s._getframe().f_back else 'fresh')\n"

/* Runs src, expecting status OK; its stdout in out. */
static void run_ok(struct sandbox *sb, const char *src, char *out, size_t outlen)
{
	struct run_result res;
	run_py(sb, src, NULL, 0, 0, &res);
	cr_assert_eq(res.status, RUN_OK, "%s: %s", run_status_name(res.status), res.err.buf);
	snprintf(out, outlen, "%s", res.out.buf);
	run_result_release(&res);
}

/* Runs WARM_MARK until a run is forked from the zygote (it starts after a
 * first Python run; runs start fresh until it is ready). */
static void warm_up(struct sandbox *sb)
{
	char out[64] = "";
	for (int i = 0; i < 50 && strcmp(out, "warm\n"); i++) {
		if (i)
			usleep(100 * 1000);
		run_ok(sb, WARM_MARK, out, sizeof(out));
	}
	cr_assert_str_eq(out, "warm\n", "the zygote serves runs within 5 s");
}

/* Everything a program can leave in its interpreter, then the next program (same
 * workspace, then the key's next workspace on another slot) looks for it. */
static const char *const hostile =
    WARM_MARK "import builtins, atexit, json, os, random, signal, sys, threading, time\n"
	      "json.dumps = None\n"
	      "sys.modules['os'].LEAK = 1\n"
	      "sys.modules['leaked_module'] = sys\n"
	      "sys.path.insert(0, '/leak')\n"
	      "sys.setrecursionlimit(77)\n"
	      "os.environ['LEAK'] = '1'\n"
	      "random.seed(1)\n"
	      "threading.Thread(target=lambda: time.sleep(60), daemon=True).start()\n"
	      "atexit.register(lambda: print('atexit of the first'))\n"
	      "signal.signal(signal.SIGTERM, lambda *a: None)\n"
	      "signal.signal(signal.SIGUSR1, signal.SIG_IGN)\n"
	      "open('/tmp/leak', 'w').write('x')\n"
	      "os.umask(0)\n"
	      "print('left', flush=True)\n"
	      "builtins.len = lambda x: 42\n"
	      "builtins.LEAK = 1\n";

static const char *const checker = WARM_MARK
    "import builtins, os, random, signal, sys, threading\n"
    "bad = []\n"
    "if len('ab') != 2 or hasattr(builtins, 'LEAK'): bad.append('builtins')\n"
    "import json\n"
    "if json.dumps is None: bad.append('json')\n"
    "if hasattr(os, 'LEAK') or 'leaked_module' in sys.modules: bad.append('sys.modules')\n"
    "if '/leak' in sys.path or sys.path[0] != '/box': bad.append('sys.path')\n"
    "if sys.getrecursionlimit() != 1000: bad.append('recursionlimit')\n"
    "if 'LEAK' in os.environ: bad.append('environ')\n"
    "random.seed(1); seeded = random.random(); random.seed()\n"
    "if threading.active_count() != 1: bad.append('thread')\n"
    "if signal.getsignal(signal.SIGTERM) != signal.SIG_DFL: bad.append('SIGTERM')\n"
    "if signal.getsignal(signal.SIGUSR1) != signal.SIG_DFL: bad.append('SIGUSR1')\n"
    "if os.path.exists('/tmp/leak'): bad.append('/tmp')\n"
    "u = os.umask(0o22)\n"
    "if u != 0o22: bad.append('umask %o' % u)\n"
    "print('clean' if not bad else 'LEAKED ' + ' '.join(bad))\n";
