/* zygote_runs.h: what test_gvisor_zygote and test_native_zygote share beyond
 * zygote_setup.h: a Python run as grading makes it, the mark of a warm run,
 * the hostile program with its checker, and the checks whose logic is the
 * same under both backends (leftovers, exit ends, limits, stdin, survivors,
 * shadowed modules). Included after the file's zygote_start call is defined. */
#pragma once

/* A program that says whether it was forked from the zygote: its module's frame
 * has a caller there (the zygote's run()), none in a fresh interpreter. */
#define WARM_MARK "import sys as _s\nprint('warm' if _s._getframe().f_back else 'fresh')\n"

#include "tests/zygote_setup.h"

/* Python under the backend: 3 s of CPU and 256 MiB unless a test says. */
static void start_python(enum sandbox_backend b)
{
	zygote_start(b, "python", 3000, 256 * 1024);
}

/* Runs src as main.py the way grading does; res is the caller's to release. */
static void run_py(struct sandbox *sb, const char *src, const char *stdin_data, long cpu_ms,
		   long mem_kb, struct run_result *res)
{
	run_src(sb, NULL, src, stdin_data, cpu_ms, mem_kb, res);
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

/* Runs the hostile program in warm workspace a (closed here), then the checker
 * there and in the key's next workspace: both find nothing of it. */
static void check_nothing_reaches_the_next(struct sandbox *a)
{
	char out[4096];
	run_ok(a, hostile, out, sizeof(out));
	cr_assert_str_eq(out, "warm\nleft\natexit of the first\n",
			 "atexit handlers of a warm run run at its end");
	run_ok(a, checker, out, sizeof(out));
	cr_assert_str_eq(out, "warm\nclean\n", "same workspace");
	run_ok(a, hostile, out, sizeof(out));
	sandbox_close(a);
	struct sandbox *b = open_ws(2);
	run_ok(b, checker, out, sizeof(out));
	cr_assert_str_eq(out, "warm\nclean\n", "the key's next workspace");
	sandbox_close(b);
}

/* The programs whose end a warm run must share with a fresh one under both
 * backends (exit codes, tracebacks, output at exit, signals). */
static void check_same_ends(void)
{
	same_end("import sys\nsys.exit(3)\n", RUN_RUNTIME_ERROR);
	same_end("import sys\nsys.exit('bye')\n", RUN_RUNTIME_ERROR);
	same_end("def f():\n    return 1 / 0\nprint('before')\nf()\n", RUN_RUNTIME_ERROR);
	same_end("x = (\n", RUN_RUNTIME_ERROR); /* a syntax error: no Traceback header */
	same_end("raise KeyboardInterrupt\n", RUN_RUNTIME_ERROR);
	same_end("import sys\nsys.stdout.write('no newline')\nsys.stderr.write('err')\n", RUN_OK);
	same_end("import atexit\natexit.register(print, 'at exit')\nprint('body', end='')\n",
		 RUN_OK);
	same_end("import os\nprint('x', end='')\nos.kill(os.getpid(), 9)\n", RUN_RUNTIME_ERROR);
	same_end("import signal\nsignal.raise_signal(signal.SIGSEGV)\n", RUN_RUNTIME_ERROR);
	same_end("import os\nos.abort()\n", RUN_RUNTIME_ERROR);
	same_end("import sys\nsys.stdout.close()\nprint('x')\n", RUN_RUNTIME_ERROR);
	/* the end of a warm run skips the interpreter's teardown (python_zygote.py's
	 * end): what the program made is still finalized as a fresh run's is */
	same_end("class A:\n    def __del__(self):\n        print('del', self.n)\n"
		 "a = A()\na.n = 1\nb = A()\nb.n = 2\nb.self = b\nprint('body')\n",
		 RUN_OK);
	same_end("import threading, time\n"
		 "threading.Thread(target=lambda: (time.sleep(0.2), print('thread'))).start()\n"
		 "print('main', end='')\n",
		 RUN_OK);
	same_end("import sys\nprint('out', end='')\nsys.stderr.write('err')\nraise SystemExit\n",
		 RUN_OK);
	same_end("import sys\nsys.exit((1 << 40) + 3)\n", RUN_RUNTIME_ERROR);
	same_end("import sys\nsys.exit(1 << 70)\n", RUN_RUNTIME_ERROR);
	same_end("import io, os, sys\nr, w = os.pipe()\nf = os.fdopen(w, 'w')\nf.write('x')\n"
		 "os.close(w)\nt = io.TextIOWrapper(io.BytesIO())\nt.detach()\nprint('ok')\n",
		 RUN_OK);
	/* a program holding many objects ends through the interpreter's teardown */
	same_end("import sys\nx = [[i] for i in range(300000)]\nprint('big', end='')\n"
		 "sys.exit('bye')\n",
		 RUN_RUNTIME_ERROR);
	same_end("x = [[i] for i in range(300000)]\nprint(len(x))\n", RUN_OK);
	same_end("import os, gc, io, sys\nos._exit = print\ngc.collect = None\n"
		 "io.IOBase = int\nprint('x')\nsys.exit(3)\n",
		 RUN_RUNTIME_ERROR);
	same_end("import sys, io\nsys.stdout = io.TextIOWrapper(open(1, 'wb', closefd=False))\n"
		 "print('replaced', end='')\n",
		 RUN_OK);
	/* reported as the interpreter reports them, without a frame of the end's */
	same_end("import atexit, sys\natexit.register(sys.exit, 3)\nprint('body')\n", RUN_OK);
	same_end("import threading\nthreading._register_atexit(lambda: 1 / 0)\nprint('body')\n",
		 RUN_OK);
}

/* A file a warm run leaves open (unflushed) is written at its end, as a fresh
 * run's teardown closes it: the next run reads it. */
static void check_files_left_open(struct sandbox *a)
{
	char out[256];
	run_ok(a, WARM_MARK "f = open('left.txt', 'w')\nf.write('left open')\n"
		  "class Keep:\n    pass\nk = Keep()\nk.f = open('cycle.txt', 'w')\n"
		  "k.f.write('in a cycle')\nk.self = k\n",
	       out, sizeof(out));
	cr_assert_str_eq(out, "warm\n");
	run_ok(a, "print(open('left.txt').read(), open('cycle.txt').read())\n", out, sizeof(out));
	cr_assert_str_eq(out, "left open in a cycle\n");
}

/* Asserts that a warm run in a sees procs processes (with itself). */
static void assert_procs_left(struct sandbox *a, int procs)
{
	char out[64], want[32];
	run_ok(a, WARM_MARK "import os\nprint(len([p for p in os.listdir('/proc') if p.isdigit()]))\n",
	       out, sizeof(out));
	snprintf(want, sizeof(want), "warm\n%d\n", procs);
	cr_assert_str_eq(out, want);
}

/* A new warm workspace on a's slot 1 in place of a (closed). */
static struct sandbox *reopen_warm(struct sandbox *a)
{
	sandbox_close(a);
	a = open_ws(1);
	warm_up(a);
	return a;
}

/* CPU time, memory and process limits hold in warm runs, and a fork bomb
 * leaves nothing: the next run sees procs processes. With new_sandbox_each,
 * each limit gets a new warm workspace (gVisor: a limit may cost the sandbox,
 * and then the new one warms up first). */
static void check_limits(bool new_sandbox_each, int procs)
{
	struct sandbox *a = open_ws(1);
	warm_up(a);
	struct run_result res;
	run_py(a, WARM_MARK "_s.stdout.flush()\nwhile True: pass\n", NULL, 500, 0, &res);
	cr_assert_eq(res.status, RUN_TIMEOUT, "%s", run_status_name(res.status));
	cr_assert_str_eq(res.out.buf, "warm\n");
	run_result_release(&res);
	if (new_sandbox_each)
		a = reopen_warm(a);
	run_py(a, WARM_MARK "_s.stdout.flush()\nx = bytearray(300 << 20)\n", NULL, 0, 64 * 1024,
	       &res);
	cr_assert_eq(res.status, RUN_MEMORY_LIMIT, "%s", run_status_name(res.status));
	cr_assert_str_eq(res.out.buf, "warm\n");
	run_result_release(&res);
	if (new_sandbox_each)
		a = reopen_warm(a);
	run_py(a, WARM_MARK "import os\nfor i in range(100): os.fork()\n", NULL, 0, 0, &res);
	cr_assert_neq(res.status, RUN_OK);
	run_result_release(&res);
	if (new_sandbox_each)
		warm_up(a);
	assert_procs_left(a, procs);
	sandbox_close(a);
}

/* A warm run reads its stdin whole and line by line. */
static void check_stdin(void)
{
	struct sandbox *a = open_ws(1);
	warm_up(a);
	struct run_result res;
	run_py(a, WARM_MARK "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n",
	       "1 2 3\n4\n", 0, 0, &res);
	cr_assert_eq(res.status, RUN_OK);
	cr_assert_str_eq(res.out.buf, "warm\n10\n");
	run_result_release(&res);
	run_py(a, WARM_MARK "print(input(), input())\n", "a\nb\n", 0, 0, &res);
	cr_assert_str_eq(res.out.buf, "warm\na b\n");
	run_result_release(&res);
	sandbox_close(a);
}

/* A setsid double-fork survivor of a warm run in a dies with its run: the
 * next run sees procs processes. */
static void check_survivor_dies(struct sandbox *a, int procs)
{
	char out[64];
	run_ok(a,
	       WARM_MARK "import os, time\n"
			 "if os.fork() == 0:\n"
			 "    os.setsid()\n"
			 "    if os.fork() == 0:\n"
			 "        time.sleep(100)\n"
			 "    os._exit(0)\n"
			 "time.sleep(0.2)\n",
	       out, sizeof(out));
	assert_procs_left(a, procs);
}

/* A module of the box shadows the standard one of the same name, as in a fresh
 * start, even when the zygote imported the standard one (json: python.ini). */
static void check_box_shadows_zygote_modules(void)
{
	char out[256];
	struct sandbox *a = open_ws(1);
	warm_up(a);
	const char *mine = "def dumps(x):\n    return 'mine'\n";
	cr_assert_eq(sandbox_write_file(a, "json.py", mine, strlen(mine), 0644), 0);
	run_ok(a, WARM_MARK "import json\nprint(json.dumps(1))\n", out, sizeof(out));
	cr_assert_str_eq(out, "warm\nmine\n");
	sandbox_close(a);
	a = open_ws(1);
	run_ok(a, WARM_MARK "import json, sys\nprint(json.dumps(1), 'json' in sys.modules)\n", out,
	       sizeof(out));
	cr_assert_str_eq(out, "warm\n1 True\n");
	sandbox_close(a);
}
