/* test_session: stateful sessions (runner/session/session.h) with the real drivers
 * (languages/drivers) and runtimes, on both backends: state across cells,
 * results and errors, stdin, streaming, limits that keep or lose the state,
 * the files API on a running session (links never followed), isolation, the
 * start pool. gVisor tests are skipped (and counted) when runsc does not work
 * here. Needs root. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "runner/session/session.h"
#include "runner/session/prestart.h"
#include "tests/fixture.h"

static struct judge_config cfg;
static struct lang_registry langs;
static struct sandbox *sb;
static struct session *ses;
static enum sandbox_backend backend;

static void init_backend(enum sandbox_backend b, int pool)
{
	char err[512];
	signal(SIGPIPE, SIG_IGN);
	backend = b;
	config_defaults(&cfg);
	free(cfg.sandbox);
	cfg.sandbox = strdup(b == SANDBOX_GVISOR ? "auto" : "native");
	cfg.gvisor_pool = 0;
	cfg.session_pool = pool;
	if (access("bin/box_init", X_OK) == 0)
		setenv("JUDGE_BOX_INIT", "bin/box_init", 0);
	fixture_sandbox_start(&cfg);
	if (!sandbox_backend_works(b, err, sizeof err)) {
		sandbox_global_shutdown();
		cr_skip_test("%s does not work here: %s", sandbox_backend_name(b), err);
	}
	cr_assert_eq(lang_load_dir(&langs, "languages", err, sizeof err), 0, "%s", err);
	cr_assert_eq(sandbox_open(b, 6, 32 << 20, &sb, err, sizeof err), 0, "%s", err);
}

static void setup_native(void)
{
	init_backend(SANDBOX_NATIVE, 0);
}

static void setup_gvisor(void)
{
	init_backend(SANDBOX_GVISOR, 0);
}

static void teardown(void)
{
	session_stop(ses);
	ses = NULL;
	if (sb)
		sandbox_close(sb);
	sb = NULL;
	lang_registry_release(&langs);
	sandbox_global_shutdown();
	config_release(&cfg);
}

/* The session spec of language name, with the test's limits. */
static struct session_spec spec_of(const char *name)
{
	const struct lang *l = lang_find(&langs, name);
	cr_assert(l && l->session_argv, "%s has no session driver", name);
	struct session_spec s = {.argv = (const char *const *)l->session_argv,
				 .env = (const char *const *)l->session_env,
				 .ro_paths = (const char *const *)l->session_ro_paths};
	struct limits_policy pol;
	limits_policy_from_config(&cfg, &pol);
	limits_run(&pol, NULL, NULL, NULL, &s.limits);
	s.limits.cpu_ms = 3000;
	s.limits.wall_ms = 6000;
	s.limits.memory_kb = 256 * 1024;
	s.limits.processes = 64;
	s.limits.stdout_bytes = 64 << 10;
	s.limits.stderr_bytes = 64 << 10;
	return s;
}

static struct session *start(struct sandbox *box, const char *lang)
{
	struct session_spec spec = spec_of(lang);
	struct session *s;
	char err[512];
	cr_assert_eq(session_start(box, &spec, &s, err, sizeof err), 0, "%s", err);
	return s;
}

/* Runs code in s; res must be released. */
static void cell_in(struct session *s, struct cell_result *res, const char *code, const char *in,
		    long cpu_ms, long wall_ms)
{
	struct cell_spec c = {.code = code,
			      .code_len = strlen(code),
			      .stdin_data = in,
			      .stdin_len = in ? strlen(in) : 0,
			      .cpu_ms = cpu_ms,
			      .wall_ms = wall_ms};
	cell_result_init(res);
	cr_assert_eq(session_exec(s, &c, res), 0);
}

static void cell(struct cell_result *res, const char *code)
{
	cell_in(ses, res, code, NULL, 0, 0);
}

/* The cell ran and replied ok with result (NULL: null). */
static void expect_ok(const char *code, const char *result, const char *out)
{
	struct cell_result r;
	cell(&r, code);
	cr_assert_eq(r.status, CELL_OK, "%s: %s %s", code, cell_status_name(r.status), r.message);
	char want[256];
	if (result)
		snprintf(want, sizeof want, "\"result\": \"%s\"", result);
	else
		snprintf(want, sizeof want, "\"result\": null");
	cr_assert(strstr(r.reply.buf, "\"status\": \"ok\""), "%s: %s", code, r.reply.buf);
	cr_assert(strstr(r.reply.buf, want), "%s: %s lacks %s", code, r.reply.buf, want);
	if (result && !strchr(result, '\\'))
		cr_assert(r.result && !strcmp(r.result, result), "%s: the typed result", code);
	else if (!result)
		cr_assert_null(r.result, "%s: no result", code);
	cr_assert_not(r.has_error);
	if (out)
		cr_assert_str_eq(r.out.buf, out, "%s", code);
	cr_assert(!r.restarted);
	cell_result_release(&r);
}

static void py_state_result_and_errors(void)
{
	ses = start(sb, "python");
	expect_ok("x = 41", NULL, "");
	expect_ok("print('hi')\nx + 1", "42", "hi\n");
	struct cell_result r;
	cell(&r, "def f():\n    return 1 / 0\n\nf()");
	cr_assert_eq(r.status, CELL_ERROR, "the code raised: %s", r.message);
	cr_assert(r.has_error, "%s", r.reply.buf);
	cr_assert_str_eq(r.error_name, "ZeroDivisionError");
	cr_assert(strstr(r.error_traceback, "<cell-3>"), "cell file names: %s", r.error_traceback);
	cr_assert(strstr(r.reply.buf, "\"name\": \"ZeroDivisionError\""), "%s", r.reply.buf);
	cr_assert(strstr(r.reply.buf, "<cell-3>"), "cell file names: %s", r.reply.buf);
	cr_assert(strstr(r.reply.buf, "return 1 / 0"), "the source line: %s", r.reply.buf);
	cr_assert(!strstr(r.reply.buf, "python_driver"), "the driver's frames: %s", r.reply.buf);
	cell_result_release(&r);
	cell(&r, "import no_such_module_here");
	cr_assert(strstr(r.reply.buf, "ModuleNotFoundError"), "%s", r.reply.buf);
	cell_result_release(&r);
	cell_in(ses, &r, "print(input()[::-1]); import sys; print(sys.stdin.read())", "abc\nrest\n",
		0, 0);
	cr_assert_str_eq(r.out.buf, "cba\nrest\n\n", "the cell's stdin");
	cell_result_release(&r);
	expect_ok("x", "41", "");
}

/* 8 MiB of stdin (more than any pipe holds): written while the driver reads it. */
static void py_big_stdin(void)
{
	ses = start(sb, "python");
	size_t n = 8 << 20;
	char *big = malloc(n + 1);
	memset(big, 'a', n);
	big[n] = 0;
	struct cell_result r;
	/* generous limits: the sandbox's CPU (gVisor's sentry copying 8 MiB
	 * through pipes) is not what this tests, and a loaded machine inflates it */
	cell_in(ses, &r, "import sys\nprint(len(sys.stdin.buffer.read()))", big, 30000, 60000);
	cr_assert_eq(r.status, CELL_OK, "%s", r.message);
	cr_assert_str_eq(r.out.buf, "8388608\n");
	cell_result_release(&r);
	free(big);
}

/* A reply whose token comes split across writes (and reads), after output that
 * starts like the token but is not it: the output is the cell's, the reply is
 * found. A fake driver in bash speaks the protocol. */
static void split_token_and_lookalikes(void)
{
	static const char *const fake[] = {
	    "/bin/bash", "-c",
	    "t=$JUDGE_TOKEN; j='{\"ready\": true}'; printf %s \"${t:0:7}\"; sleep 0.2; "
	    "printf '%s %d\\n%s' \"${t:7}\" ${#j} \"$j\"; "
	    "j='{\"status\": \"ok\", \"result\": \"7\", \"error\": null}'; "
	    "while read -r w c n; do head -c $c >/dev/null; printf '%sZout%s' \"${t:0:5}\" "
	    "\"${t:0:9}\"; sleep 0.2; printf '%s %d\\n%s' \"${t:9}\" ${#j} \"$j\"; done",
	    NULL};
	struct session_spec spec = spec_of("python");
	spec.argv = fake;
	char err[512];
	cr_assert_eq(session_start(sb, &spec, &ses, err, sizeof err), 0, "%s", err);
	struct cell_result r;
	cell(&r, "anything");
	cr_assert_eq(r.status, CELL_OK, "%s", r.message);
	cr_assert_eq(r.out.len, 9, "'%s'", r.out.buf);
	cr_assert(!memcmp(r.out.buf + 5, "Zout", 4), "'%s'", r.out.buf);
	cr_assert(strstr(r.reply.buf, "\"result\": \"7\""), "%s", r.reply.buf);
	cell_result_release(&r);
}

struct chunks {
	int64_t first_ms;
	int n;
};

static void on_chunk(void *arg, int fd, const char *data, size_t len)
{
	struct chunks *c = arg;
	(void)fd, (void)data, (void)len;
	if (!c->n++)
		c->first_ms = clock_mono_ms();
}

static void py_streams_output(void)
{
	ses = start(sb, "python");
	struct chunks ch = {0};
	const char *code = "import time\nprint('first')\ntime.sleep(1.5)\nprint('second')";
	struct cell_spec c = {
	    .code = code, .code_len = strlen(code), .on_output = on_chunk, .arg = &ch};
	struct cell_result r;
	cell_result_init(&r);
	cr_assert_eq(session_exec(ses, &c, &r), 0);
	int64_t end = clock_mono_ms();
	cr_assert_eq(r.status, CELL_OK, "%s", r.message);
	cr_assert_str_eq(r.out.buf, "first\nsecond\n");
	cr_assert_geq(ch.n, 2);
	cr_assert_gt(end - ch.first_ms, 1000, "the first chunk came %lld ms before the end",
		     (long long)(end - ch.first_ms));
	cell_result_release(&r);
}

static void py_timeouts_keep_state(void)
{
	ses = start(sb, "python");
	expect_ok("y = 5", NULL, "");
	struct cell_result r;
	cell_in(ses, &r, "while True: pass", NULL, 500, 0);
	cr_assert_eq(r.status, CELL_TIMEOUT, "%s %s", cell_status_name(r.status), r.message);
	cr_assert(!r.restarted, "the driver stopped the cell: %s", r.message);
	cr_assert(strstr(r.reply.buf, "KeyboardInterrupt"), "%s", r.reply.buf);
	cr_assert_geq(r.cpu_ms, 400);
	cell_result_release(&r);
	cell_in(ses, &r, "import time\ntime.sleep(30)", NULL, 0, 800);
	cr_assert_eq(r.status, CELL_TIMEOUT, "%s %s", cell_status_name(r.status), r.message);
	cr_assert(!r.restarted);
	cr_assert_lt(r.wall_ms, 15000, "the sleep(30) cell was not stopped at its wall limit");
	cell_result_release(&r);
	expect_ok("y", "5", "");
}

static void py_memory_and_exit_restart(void)
{
	ses = start(sb, "python");
	expect_ok("z = 1", NULL, "");
	struct cell_result r;
	cell(&r, "b = b'\\x01' * (400 << 20)");
	cr_assert_eq(r.status, CELL_MEMORY_LIMIT, "%s %s", cell_status_name(r.status), r.message);
	cr_assert(r.restarted);
	cell_result_release(&r);
	cell(&r, "z");
	cr_assert(strstr(r.reply.buf, "NameError"), "state lost: %s", r.reply.buf);
	cell_result_release(&r);
	expect_ok("z = 2", NULL, "");
	cell(&r, "print('bye', flush=True)\nexit(3)");
	cr_assert_eq(r.status, CELL_ERROR, "%s %s", cell_status_name(r.status), r.message);
	cr_assert(r.restarted);
	cr_assert_str_eq(r.out.buf, "bye\n");
	cell_result_release(&r);
	cell(&r, "z");
	cr_assert(strstr(r.reply.buf, "NameError"), "state lost: %s", r.reply.buf);
	cell_result_release(&r);
	long kb = session_memory_kb(ses);
	cr_assert(kb > 1000 && kb < 1024 * 1024, "session memory %ld KiB", kb);
}

static void py_output_flood(void)
{
	ses = start(sb, "python");
	struct cell_result r;
	cell(&r, "while True: print('x' * 1000)");
	cr_assert_eq(r.status, CELL_OUTPUT_LIMIT, "%s %s", cell_status_name(r.status), r.message);
	cr_assert(r.out_truncated);
	cr_assert_leq(r.out.len, 64 << 10);
	cell_result_release(&r);
	expect_ok("1 + 1", "2", "");
}

static void files_both_ways(void)
{
	ses = start(sb, "python");
	cr_assert_eq(sandbox_file_put(sb, "in/data.csv", "a,b\n1,2\n", 8), 0);
	expect_ok("open('in/data.csv').read()", "'a,b\\\\n1,2\\\\n'", "");
	/* the folders the host made are the box owner's: code writes in them */
	expect_ok("open('in/data.csv', 'a').write('3,4\\n')\nopen('in/new.txt', 'w').write('n')",
		  "1", "");
	struct strbuf csv = STRBUF_INIT;
	cr_assert_eq(sandbox_file_get(sb, "in/data.csv", &csv, 1024), 0);
	cr_assert_str_eq(csv.buf, "a,b\n1,2\n3,4\n");
	strbuf_release(&csv);
	expect_ok("open('chart.svg', 'w').write('<svg/>')", "6", "");
	struct strbuf got = STRBUF_INIT;
	cr_assert_eq(sandbox_file_get(sb, "chart.svg", &got, 1024), 0);
	cr_assert_str_eq(got.buf, "<svg/>");
	cr_assert_eq(sandbox_file_get(sb, "chart.svg", &got, 3), -EFBIG);
	struct sandbox_dirent *d;
	size_t n;
	cr_assert_eq(sandbox_file_list(sb, "", &d, &n), 0);
	bool chart = false, in = false;
	for (size_t i = 0; i < n; i++) {
		chart |= !strcmp(d[i].name, "chart.svg") && d[i].type == 'f' && d[i].size == 6;
		in |= !strcmp(d[i].name, "in") && d[i].type == 'd';
	}
	cr_assert(chart && in);
	free(d);
	cr_assert_eq(sandbox_file_remove(sb, "in"), 0);
	expect_ok("import os\nos.path.exists('in')", "False", "");
	strbuf_release(&got);
}

static void links_never_followed(void)
{
	ses = start(sb, "python");
	expect_ok("import os\nos.symlink('/etc/passwd', 'pw')\nos.makedirs('d')\n"
		  "os.symlink('/etc', 'd/up')\nos.symlink('..', 'd/dots')",
		  NULL, "");
	struct strbuf got = STRBUF_INIT;
	cr_assert_eq(sandbox_file_get(sb, "pw", &got, 1 << 20), -ELOOP);
	cr_assert_eq(sandbox_file_get(sb, "d/up/passwd", &got, 1 << 20), -ELOOP);
	cr_assert_eq(sandbox_file_put(sb, "d/up/judge-test-x", "x", 1), -ELOOP);
	cr_assert_eq(access("/etc/judge-test-x", F_OK), -1);
	cr_assert_eq(sandbox_file_put(sb, "pw", "x", 1), -ELOOP);
	cr_assert_eq(sandbox_file_put(sb, "d/dots/x", "x", 1), -ELOOP);
	struct sandbox_dirent *d;
	size_t n;
	cr_assert_eq(sandbox_file_list(sb, "d/up", &d, &n), -ELOOP);
	cr_assert_eq(sandbox_file_list(sb, "d", &d, &n), 0);
	cr_assert_eq(n, 2);
	cr_assert(d[0].type == 'l' && d[1].type == 'l', "links listed as links");
	free(d);
	/* links read and made as links (a session image keeps them), never through one */
	cr_assert_eq(sandbox_file_readlink(sb, "d/up", &got), 0);
	cr_assert(got.len == 4 && !memcmp(got.buf, "/etc", 4));
	cr_assert_eq(sandbox_file_readlink(sb, "d/up/passwd", &got), -ELOOP);
	cr_assert_eq(sandbox_file_readlink(sb, "d", &got), -EINVAL, "a folder is no link");
	cr_assert_eq(sandbox_file_symlink(sb, "d/up/judge-test-l", "x"), -ELOOP);
	cr_assert_eq(access("/etc/judge-test-l", F_OK), -1);
	cr_assert_eq(sandbox_file_symlink(sb, "d/up", "/tmp"), -EEXIST);
	cr_assert_eq(sandbox_file_symlink(sb, "new/latest", "../pw"), 0);
	expect_ok("os.readlink('new/latest'), os.lstat('new/latest').st_uid == os.getuid()",
		  "('../pw', True)", "");
	/* stat and move: links seen as links, never gone through */
	struct sandbox_dirent st;
	cr_assert_eq(sandbox_file_stat(sb, "d/up", &st), 0);
	cr_assert(st.type == 'l' && !strcmp(st.name, "up"));
	cr_assert_eq(sandbox_file_stat(sb, "d/up/passwd", &st), -ELOOP);
	cr_assert_eq(sandbox_file_stat(sb, "", &st), 0);
	cr_assert_eq(st.type, 'd', "the box itself");
	cr_assert_eq(sandbox_file_move(sb, "d/up/passwd", "stolen"), -ELOOP);
	cr_assert_eq(sandbox_file_move(sb, "pw", "d/up/judge-test-m"), -ELOOP);
	cr_assert_eq(access("/etc/judge-test-m", F_OK), -1);
	cr_assert_eq(sandbox_file_move(sb, "d/up", "moved/up"), 0, "the link moves, not /etc");
	cr_assert_eq(sandbox_file_readlink(sb, "moved/up", &got), 0);
	cr_assert(got.len == 4 && !memcmp(got.buf, "/etc", 4));
	cr_assert_eq(access("/etc/passwd", F_OK), 0);
	cr_assert_eq(sandbox_file_move(sb, "moved/up", "d/up"), 0);
	cr_assert_eq(sandbox_file_move(sb, "missing", "x"), -ENOENT);
	cr_assert_eq(sandbox_file_move(sb, "../x", "y"), -EINVAL);
	cr_assert_eq(sandbox_file_move(sb, "pw", "/tmp/x"), -EINVAL);
	cr_assert_eq(sandbox_file_remove(sb, "moved"), 0);
	cr_assert_eq(sandbox_file_remove(sb, "new"), 0);
	cr_assert_eq(sandbox_file_remove(sb, "d"), 0, "removes the links, not /etc");
	cr_assert_eq(access("/etc/passwd", F_OK), 0);
	cr_assert_eq(sandbox_file_remove(sb, "pw"), 0);
	/* path tricks */
	const char *bad[] = {"../x", "/etc/passwd", "a/./b", "a//b", "", "a/", ".", "..", "a/.."};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(sandbox_file_put(sb, bad[i], "x", 1), -EINVAL, "'%s'", bad[i]);
		cr_assert_eq(sandbox_file_get(sb, bad[i], &got, 10), -EINVAL, "'%s'", bad[i]);
	}
	cr_assert_eq(sandbox_file_get(sb, "missing", &got, 10), -ENOENT);
	strbuf_release(&got);
}

static void two_sessions_isolated(void)
{
	struct sandbox *sb2;
	char err[512];
	cr_assert_eq(sandbox_open(backend, 7, 32 << 20, &sb2, err, sizeof err), 0, "%s", err);
	ses = start(sb, "python");
	struct session *other = start(sb2, "python");
	cr_assert_eq(sandbox_file_put(sb, "mine.txt", "a", 1), 0);
	expect_ok("import subprocess\np = subprocess.Popen(['/bin/sleep', '30'])", NULL, "");
	struct cell_result r;
	cell_in(other, &r,
		"import os\nprint(os.path.exists('mine.txt'))\n"
		"print(any(b'sleep' in open(f'/proc/{p}/cmdline', 'rb').read() "
		"for p in os.listdir('/proc') if p.isdigit()))",
		NULL, 0, 0);
	cr_assert_eq(r.status, CELL_OK, "%s", r.message);
	cr_assert_str_eq(r.out.buf, "False\nFalse\n", "%s", r.reply.buf);
	cell_result_release(&r);
	session_stop(other);
	sandbox_close(sb2);
}

static void bash_shell_state(void)
{
	ses = start(sb, "bash");
	expect_ok("mkdir -p sub && cd sub; export V=one; w=two; declare -A m; m[k]=three", NULL,
		  "");
	expect_ok("pwd; echo $V $w ${m[k]}; sh -c 'echo $V'", NULL,
		  "/home/user/sub\none two three\none\n");
	struct cell_result r;
	cell_in(ses, &r, "read a; echo got $a; false", "line\n", 0, 0);
	cr_assert_eq(r.status, CELL_ERROR, "%s", r.message);
	cr_assert(r.has_error && !strcmp(r.error_name, "ExitStatus") &&
		  !strcmp(r.error_value, "1"));
	cr_assert_str_eq(r.out.buf, "got line\n");
	cr_assert(strstr(r.reply.buf, "\"ExitStatus\"") && strstr(r.reply.buf, "\"value\": \"1\""),
		  "%s", r.reply.buf);
	cell_result_release(&r);
	cell_in(ses, &r, "sleep 30", NULL, 0, 700);
	cr_assert_eq(r.status, CELL_TIMEOUT, "%s %s", cell_status_name(r.status), r.message);
	cr_assert(!r.restarted, "%s", r.message);
	cell_result_release(&r);
	cell(&r, "exit 4");
	cr_assert_eq(r.status, CELL_ERROR, "the driver ended: the code's error");
	cr_assert(r.restarted);
	cell_result_release(&r);
	expect_ok("pwd; echo \"[$w]\"", NULL, "/home/user\n[]\n");
}

/* A package installed while the session runs (what an install writes into the
 * box's package folder) is found by the next cell, as is a module beside it. */
static void py_finds_new_packages(void)
{
	ses = start(sb, "python");
	struct cell_result r;
	cell(&r, "import judge_test_pkg");
	cr_assert(strstr(r.reply.buf, "ModuleNotFoundError"), "%s", r.reply.buf);
	cell_result_release(&r);
	cr_assert_eq(
	    sandbox_file_put(sb, ".packages/python/judge_test_pkg/__init__.py", "X = 7\n", 6), 0);
	const char *helper = "def f():\n    return 'h'\n";
	cr_assert_eq(sandbox_file_put(sb, "helper.py", helper, strlen(helper)), 0);
	expect_ok("import judge_test_pkg, helper\njudge_test_pkg.X, helper.f()", "(7, 'h')", "");
}

/* A driver that is not there, ends at once, or never says it is ready: a clear
 * error, no session. */
static void bad_drivers_fail_clearly(void)
{
	struct session_spec spec = spec_of("python");
	struct session *s = NULL;
	char err[512] = "";
	const char *const missing[] = {"/nonexistent/driver", NULL};
	spec.argv = missing;
	cr_assert_eq(session_start(sb, &spec, &s, err, sizeof err), -1);
	cr_assert(strstr(err, "ended before it was ready") || strstr(err, "nonexistent"), "%s",
		  err);
	const char *const mute[] = {"/bin/sleep", "30", NULL};
	spec.argv = mute;
	spec.start_timeout_ms = 500;
	int64_t t0 = clock_mono_ms();
	cr_assert_eq(session_start(sb, &spec, &s, err, sizeof err), -1);
	cr_assert(strstr(err, "did not get ready within 500 ms"), "%s", err);
	cr_assert_lt(clock_mono_ms() - t0, 5000);
	const char *const liar[] = {"/bin/sh", "-c", "echo \"$JUDGE_TOKEN 5\"; echo nope", NULL};
	spec.argv = liar;
	cr_assert_eq(session_start(sb, &spec, &s, err, sizeof err), -1);
	cr_assert(strstr(err, "not ready"), "%s", err);
	cr_assert_null(s);
	struct cell_result r;
	cell_result_init(&r);
	cr_assert_eq(session_exec(NULL, &(struct cell_spec){0}, &r), -1);
	cell_result_release(&r);
	/* ready, then deaf: a cell bigger than the pipe is a timeout, not a hang */
	const char *const deaf[] = {
	    "/bin/sh", "-c", "printf '%s 15\\n{\"ready\": true}' $JUDGE_TOKEN; sleep 60", NULL};
	spec.argv = deaf;
	cr_assert_eq(session_start(sb, &spec, &s, err, sizeof err), 0, "%s", err);
	size_t n = 1 << 20;
	char *big = malloc(n + 1);
	memset(big, '#', n);
	big[n] = 0;
	t0 = clock_mono_ms();
	cell_in(s, &r, big, NULL, 0, 500);
	cr_assert_eq(r.status, CELL_TIMEOUT, "%s %s", cell_status_name(r.status), r.message);
	cr_assert(strstr(r.message, "did not read the cell"), "%s", r.message);
	cr_assert(r.restarted);
	cr_assert_lt(clock_mono_ms() - t0, 5000);
	cell_result_release(&r);
	free(big);
	session_stop(s);
}

/* Contexts: drivers of their own in the one sandbox, each with its own state,
 * restarted and stopped alone. */
static void contexts_keep_their_own_state(void)
{
	ses = start(sb, "python");
	expect_ok("x = 1", NULL, "");
	const struct lang *b = lang_find(&langs, "bash"), *py = lang_find(&langs, "python");
	struct session_driver db = {.argv = (const char *const *)b->session_argv,
				    .env = (const char *const *)b->session_env};
	struct session_driver dp = {.argv = (const char *const *)py->session_argv,
				    .env = (const char *const *)py->session_env};
	char err[512];
	int sh, p2;
	cr_assert_eq(session_context_start(ses, &db, "/tmp", &sh, err, sizeof err), 0, "%s", err);
	cr_assert_eq(session_context_start(ses, &dp, NULL, &p2, err, sizeof err), 0, "%s", err);
	cr_assert(sh > 0 && p2 > 0 && sh != p2);
	struct cell_result r;
	struct cell_spec c = {.context = p2, .code = "x", .code_len = 1};
	cell_result_init(&r);
	cr_assert_eq(session_exec(ses, &c, &r), 0);
	cr_assert(r.status == CELL_ERROR && r.has_error && !strcmp(r.error_name, "NameError"),
		  "a context of its own: %s", r.reply.buf);
	c = (struct cell_spec){.context = sh, .code = "pwd; Y=3", .code_len = 8};
	cr_assert_eq(session_exec(ses, &c, &r), 0);
	cr_assert_str_eq(r.out.buf, "/tmp\n", "started in its cwd");
	c = (struct cell_spec){.context = sh, .code = "echo $Y", .code_len = 7};
	cr_assert_eq(session_exec(ses, &c, &r), 0);
	cr_assert_str_eq(r.out.buf, "3\n");
	expect_ok("x", "1", "");
	/* a driver that dies restarts in its context alone */
	c = (struct cell_spec){.context = p2, .code = "import os; os._exit(1)", .code_len = 22};
	cr_assert_eq(session_exec(ses, &c, &r), 0);
	cr_assert(r.status == CELL_ERROR && r.restarted, "%s", r.message);
	expect_ok("x", "1", "");
	c = (struct cell_spec){.context = sh, .code = "echo $Y", .code_len = 7};
	cr_assert_eq(session_exec(ses, &c, &r), 0);
	cr_assert_str_eq(r.out.buf, "3\n", "the others keep their state");
	cr_assert_eq(session_context_restart(ses, sh, err, sizeof err), 0, "%s", err);
	cr_assert_eq(session_exec(ses, &c, &r), 0);
	cr_assert_str_eq(r.out.buf, "\n", "a restarted context starts afresh");
	cr_assert_eq(session_context_stop(ses, sh), 0);
	cr_assert_eq(session_exec(ses, &c, &r), -1, "a stopped context takes no cell");
	cr_assert_eq(session_context_stop(ses, 0), -1, "the default context stays");
	cell_result_release(&r);
	expect_ok("x", "1", "");
}

/* What a process's callbacks saw (from the session's reader thread). */
struct plog {
	pthread_mutex_t lock;
	struct strbuf out, err;
	int starts, exits;
	struct session_proc_info end;
};

static void plog_start(void *arg, const struct session_proc_info *info)
{
	struct plog *l = arg;
	(void)info;
	pthread_mutex_lock(&l->lock);
	l->starts++;
	pthread_mutex_unlock(&l->lock);
}

static void plog_output(void *arg, long pid, int fd, const char *data, size_t len)
{
	struct plog *l = arg;
	(void)pid;
	pthread_mutex_lock(&l->lock);
	strbuf_add(fd == 1 ? &l->out : &l->err, data, len);
	pthread_mutex_unlock(&l->lock);
}

static void plog_exit(void *arg, const struct session_proc_info *info)
{
	struct plog *l = arg;
	pthread_mutex_lock(&l->lock);
	l->exits++;
	l->end.exited = info->exited;
	l->end.exit_code = info->exit_code;
	l->end.signal = info->signal;
	snprintf(l->end.message, sizeof l->end.message, "%s", info->message);
	pthread_mutex_unlock(&l->lock);
}

static long proc_start(const char *const *argv, bool with_stdin, long timeout_ms, long output,
		       struct plog *l)
{
	const char *const env[] = {"PATH=/usr/bin:/bin", NULL};
	struct session_proc_spec spec = {.argv = argv,
					 .env = env,
					 .stdin_open = with_stdin,
					 .timeout_ms = timeout_ms,
					 .output_bytes = output,
					 .on_start = plog_start,
					 .on_output = plog_output,
					 .on_exit = plog_exit,
					 .arg = l};
	long pid = 0;
	char err[512];
	cr_assert_eq(session_proc_start(ses, &spec, &pid, err, sizeof err), 0, "%s", err);
	return pid;
}

/* Processes: commands in the session's sandbox, their output streamed, stdin
 * fed and closed, signalled, waited for, killed at their lifetime. */
static void processes_in_the_session(void)
{
	ses = start(sb, "python");
	struct plog l = {.lock = PTHREAD_MUTEX_INITIALIZER};
	strbuf_init(&l.out), strbuf_init(&l.err);
	const char *const sh[] = {"sh", "-c", "echo out; echo err >&2; read a; echo got $a; exit 5",
				  NULL};
	long pid = proc_start(sh, true, 0, 1 << 20, &l);
	cr_assert_eq(session_proc_input(ses, pid, "line\n", 5), 0);
	cr_assert_eq(session_proc_close_stdin(ses, pid), 0);
	cr_assert_eq(session_proc_input(ses, pid, "more", 4), -EPIPE, "stdin closed");
	struct session_proc_info info;
	cr_assert_eq(session_proc_get(ses, pid, 20000, &info), 0);
	cr_assert(!info.running && info.exited && info.exit_code == 5);
	session_proc_info_release(&info);
	pthread_mutex_lock(&l.lock);
	cr_assert_str_eq(l.out.buf, "out\ngot line\n");
	cr_assert_str_eq(l.err.buf, "err\n");
	cr_assert(l.starts == 1 && l.exits == 1);
	pthread_mutex_unlock(&l.lock);
	cr_assert_eq(session_proc_input(ses, pid, "x", 1), -ESRCH, "ended");
	cr_assert_eq(session_proc_signal(ses, 9999, SIGTERM), -ESRCH);
	/* a signal to its group; a lifetime */
	const char *const sleeper[] = {"sleep", "30", NULL};
	long s1 = proc_start(sleeper, false, 0, 1 << 20, &l);
	long s2 = proc_start(sleeper, false, 300, 1 << 20, &l);
	cr_assert_eq(session_proc_input(ses, s1, "x", 1), -EPIPE, "no stdin");
	/* the session's cells see its processes: one sandbox (looked for up to
	 * 5 s: on a loaded machine a first look once found none) */
	expect_ok(
	    "import os, time\n"
	    "def seen():\n"
	    "    for p in os.listdir('/proc'):\n"
	    "        try:\n"
	    "            if p.isdigit() and b'sleep' in open(f'/proc/{p}/cmdline', 'rb').read():\n"
	    "                return True\n"
	    "        except OSError:\n"
	    "            pass\n"
	    "    return False\n"
	    "t = time.time()\n"
	    "while not seen() and time.time() < t + 5:\n"
	    "    time.sleep(0.05)\n"
	    "seen()",
	    "True", "");
	cr_assert_eq(session_proc_signal(ses, s1, SIGTERM), 0);
	cr_assert_eq(session_proc_get(ses, s1, 20000, &info), 0);
	cr_assert(!info.running && !info.exited && info.signal == SIGTERM);
	session_proc_info_release(&info);
	cr_assert_eq(session_proc_get(ses, s2, 20000, &info), 0);
	cr_assert(!info.running && info.signal == SIGKILL && info.timed_out, "its lifetime");
	session_proc_info_release(&info);
	/* output past its cap is dropped, the process goes on */
	const char *const yes[] = {"yes", NULL};
	long y = proc_start(yes, false, 0, 1000, &l);
	/* yes fills the cap within a moment; a busy host (gVisor, sanitizers) may
	 * need more than one 300 ms look */
	for (int i = 0; i < 60; i++) {
		cr_assert_eq(session_proc_get(ses, y, 300, &info), 0);
		if (info.truncated)
			break;
		session_proc_info_release(&info);
	}
	cr_assert(info.running && info.truncated, "truncated, still running");
	session_proc_info_release(&info);
	cr_assert_eq(session_proc_signal(ses, y, SIGKILL), 0);
	cr_assert_eq(session_proc_get(ses, y, 20000, &info), 0);
	cr_assert(!info.running);
	session_proc_info_release(&info);
	const char *const nope[] = {"no-such-program", NULL};
	const char *const env[] = {"PATH=/usr/bin:/bin", NULL};
	struct session_proc_spec bad = {.argv = nope, .env = env, .output_bytes = 10};
	char err[512];
	long p;
	cr_assert_eq(session_proc_start(ses, &bad, &p, err, sizeof err), -1);
	cr_assert(strstr(err, "no-such-program"), "%s", err);
	struct session_proc_info *all;
	size_t n;
	session_proc_list(ses, &all, &n);
	cr_assert_eq(n, 4, "the four that started");
	cr_assert(all[0].pid == pid && all[3].pid == y, "by pid");
	for (size_t i = 0; i < n; i++)
		session_proc_info_release(&all[i]);
	free(all);
	/* the session's end ends what still runs, and says so */
	proc_start(sleeper, false, 0, 1 << 20, &l);
	session_stop(ses);
	ses = NULL;
	pthread_mutex_lock(&l.lock);
	cr_assert(l.end.signal == SIGKILL && strstr(l.end.message, "session"), "%s", l.end.message);
	pthread_mutex_unlock(&l.lock);
	strbuf_release(&l.out), strbuf_release(&l.err);
}

TestSuite(session_native, .init = setup_native, .fini = teardown, .timeout = 120);
TestSuite(session_gvisor, .init = setup_gvisor, .fini = teardown, .timeout = 180);

#define BOTH(name)                                                                                 \
	Test(session_native, name)                                                                 \
	{                                                                                          \
		name();                                                                            \
	}                                                                                          \
	Test(session_gvisor, name)                                                                 \
	{                                                                                          \
		name();                                                                            \
	}

BOTH(py_state_result_and_errors)
BOTH(py_streams_output)
BOTH(py_timeouts_keep_state)
BOTH(py_memory_and_exit_restart)
BOTH(py_output_flood)
BOTH(files_both_ways)
BOTH(links_never_followed)
BOTH(two_sessions_isolated)
BOTH(bash_shell_state)
BOTH(py_finds_new_packages)
BOTH(py_big_stdin)
BOTH(split_token_and_lookalikes)
BOTH(bad_drivers_fail_clearly)
BOTH(contexts_keep_their_own_state)
BOTH(processes_in_the_session)

/* The start pool: a session started ahead of need is handed over at once, in
 * the caller's workspace, and serves that session only. */
static void pool_hands_over(void)
{
	struct session_spec spec = spec_of("python");
	prestart_prepare(backend, 32 << 20, &spec);
	cr_assert(prestart_wait(backend, 32 << 20, &spec, 1, 60000), "the pool filled");
	/* a hit hands over the pooled sandbox's box, so the workspace's box path
	 * changes (a cold start would use the one it has); speed is bench-session's */
	char *before = strdup(sandbox_box_path(sb));
	ses = start(sb, "python");
	cr_assert_str_neq(sandbox_box_path(sb), before, "the start came from the pool");
	free(before);
	cr_assert_eq(sandbox_file_put(sb, "here.txt", "yes", 3), 0);
	expect_ok("open('here.txt').read()", "'yes'", "");
	/* another workspace gets another session (the pool refills; it may be cold) */
	struct sandbox *sb2;
	char err[512];
	cr_assert_eq(sandbox_open(backend, 8, 32 << 20, &sb2, err, sizeof err), 0, "%s", err);
	struct session *s2 = start(sb2, "python");
	struct cell_result r;
	cell_in(s2, &r, "import os\nprint(os.path.exists('here.txt'))", NULL, 0, 0);
	cr_assert_str_eq(r.out.buf, "False\n", "a pooled session is never shared");
	cell_result_release(&r);
	session_stop(s2);
	sandbox_close(sb2);
}

/* A burst of creates: one that finds the pool empty grows it (up to
 * session_pool_max), so the next creates back to back find sessions ready. */
static void pool_grows_under_a_burst(void)
{
	struct session_spec spec = spec_of("python");
	prestart_prepare(backend, 32 << 20, &spec);
	cr_assert(prestart_wait(backend, 32 << 20, &spec, 1, 60000), "the pool filled");
	enum { N = 2 };
	struct sandbox *boxes[N] = {0};
	struct session *started[N] = {0};
	char err[512];
	/* two creates back to back: the second finds none ready (or waits for
	 * the one under way); either way it is a miss and the pool grows */
	for (int i = 0; i < N; i++) {
		cr_assert_eq(sandbox_open(backend, 20 + i, 32 << 20, &boxes[i], err, sizeof err), 0,
			     "%s", err);
		started[i] = start(boxes[i], "python");
	}
	cr_assert(prestart_wait(backend, 32 << 20, &spec, 2, 60000),
		  "after a miss the pool holds two sessions (session_pool = 1)");
	/* and the next two creates back to back are both handed over */
	for (int i = 0; i < 2; i++) {
		struct sandbox *b;
		cr_assert_eq(sandbox_open(backend, 30 + i, 32 << 20, &b, err, sizeof err), 0, "%s",
			     err);
		char *before = strdup(sandbox_box_path(b));
		struct session *s = start(b, "python");
		cr_assert_str_neq(sandbox_box_path(b), before, "create %d came from the pool",
				  i + 1);
		free(before);
		session_stop(s);
		sandbox_close(b);
	}
	for (int i = 0; i < N; i++) {
		if (started[i])
			session_stop(started[i]);
		if (boxes[i])
			sandbox_close(boxes[i]);
	}
}

static void setup_native_pool(void)
{
	init_backend(SANDBOX_NATIVE, 1);
}

static void setup_gvisor_pool(void)
{
	init_backend(SANDBOX_GVISOR, 1);
}

Test(session_native, pool_hands_over, .init = setup_native_pool)
{
	pool_hands_over();
}

Test(session_native, pool_grows_under_a_burst, .init = setup_native_pool)
{
	pool_grows_under_a_burst();
}

Test(session_gvisor, pool_hands_over, .init = setup_gvisor_pool)
{
	pool_hands_over();
}
