/* test_compsrv: warm compile servers through the native backend — the real C#
 * server (when installed) and misbehaving servers (fault injection: small
 * shell programs that break the wire, hang, spin or name a file outside the
 * box), each of which must end in "compile cold" with nothing left in the box.
 * Needs root. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/strbuf.h"
#include "judge/grading/compsrv.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "runner/sandbox.h"
#include "tests/fixture.h"

static struct judge_config cfg;
static struct sandbox *box;
static char *env[] = {"PATH=/usr/bin:/bin", "LANG=C", NULL};

static void setup(void)
{
	char err[512];
	fixture_native_start(&cfg);
	cr_assert_eq(sandbox_open(SANDBOX_NATIVE, 5, 16 << 20, &box, err, sizeof err), 0, "%s",
		     err);
	compsrv_enable();
}

static void teardown(void)
{
	if (box)
		sandbox_close(box);
	box = NULL;
	sandbox_global_shutdown();
}

TestSuite(compsrv, .init = setup, .fini = teardown);

/* A language whose compile server is `/bin/sh -c SCRIPT`. */
static struct lang fake(const char *script)
{
	static char *argv[4];
	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = (char *)script;
	argv[3] = NULL;
	struct lang l = {
	    .name = "fake", .source_file = "main.x", .compile_server_argv = argv, .env = env};
	return l;
}

/* Compiles src through l's server; returns compsrv_compile's value, err and rr filled. */
static int compile(const struct lang *l, const char *src, long cpu_ms, long wall_ms,
		   struct run_result *rr, char *err, size_t errlen)
{
	struct limits_policy pol;
	limits_policy_from_config(&cfg, &pol);
	struct compsrv_job job = {.lang = l, .backend = SANDBOX_NATIVE, .slot = 5, .box = box};
	limits_compile(&pol, l->compile_time_limit_ms ? l : NULL, &job.limits);
	if (cpu_ms)
		job.limits.cpu_ms = cpu_ms;
	if (wall_ms)
		job.limits.wall_ms = wall_ms;
	job.source = src;
	job.source_len = strlen(src);
	return compsrv_compile(&job, rr, err, errlen);
}

static bool in_box(const char *name)
{
	struct strbuf b = STRBUF_INIT;
	int rc = sandbox_read_file(box, name, &b, 1 << 20);
	strbuf_release(&b);
	return rc == 0;
}

/* The shipped C# server: a program compiles into main.dll and its runtimeconfig,
 * an error gives csc's message and exit status 1, and one server serves both. */
Test(compsrv, csharp_server)
{
	if (access("/opt/judge/runtimes/dotnet9/compsrv/compile_server.sh", R_OK) != 0)
		cr_skip_test("no C# compile server installed (make deps)");
	struct lang_registry reg;
	char err[512] = "";
	cr_assert_eq(lang_load_dir(&reg, "languages", err, sizeof err), 0, "%s", err);
	const struct lang *cs = lang_find(&reg, "csharp");
	cr_assert(cs && cs->compile_server_argv);
	struct run_result rr;
	run_result_init(&rr);
	cr_assert_eq(compile(cs, "Console.WriteLine(1);\n", 0, 0, &rr, err, sizeof err), 0, "%s",
		     err);
	cr_expect_eq(rr.status, RUN_OK);
	cr_expect_eq(rr.exit_code, 0, "%s", rr.out.buf);
	cr_expect(in_box("main.dll") && in_box("main.runtimeconfig.json"));
	run_result_release(&rr);
	run_result_init(&rr);
	cr_assert_eq(
	    compile(cs, "class P { static void Main() { int x } }\n", 0, 0, &rr, err, sizeof err),
	    0, "%s", err);
	cr_expect_eq(rr.exit_code, 1);
	cr_expect(strstr(rr.out.buf, "main.cs(1,38): error CS1002: ; expected"), "%s", rr.out.buf);
	run_result_release(&rr);
	lang_registry_release(&reg);
}

/* Each misbehaviour of l's server: -1 (compile cold) with the reason. */
static void expect_cold_of(const struct lang *l, long cpu_ms, long wall_ms, const char *why)
{
	struct run_result rr;
	run_result_init(&rr);
	char err[512] = "";
	cr_expect_eq(compile(l, "source", cpu_ms, wall_ms, &rr, err, sizeof err), -1);
	cr_expect(strstr(err, why), "want '%s' in '%s'", why, err);
	run_result_release(&rr);
}

static void expect_cold(const char *script, long cpu_ms, long wall_ms, const char *why)
{
	struct lang l = fake(script);
	expect_cold_of(&l, cpu_ms, wall_ms, why);
}

Test(compsrv, server_that_dies_mid_compile)
{
	expect_cold("echo READY 1; read l; head -c 6 >/dev/null; exit 3", 0, 0, "ended");
}

Test(compsrv, server_that_never_says_ready)
{
	struct lang l = fake("echo HELLO");
	expect_cold_of(&l, 0, 0, "instead of READY");
	/* not started again at once: the next compile goes cold without a try */
	expect_cold_of(&l, 0, 0, "last start failed");
}

Test(compsrv, reply_that_makes_no_sense)
{
	expect_cold("echo READY 1; read l; head -c 6 >/dev/null; echo 'DONE x'", 0, 0, "bad reply");
}

Test(compsrv, file_outside_the_box)
{
	expect_cold(
	    "echo READY 1; read l; head -c 6 >/dev/null; printf 'DONE 0 0 1\\nFILE ../evil 2\\nhi'",
	    0, 0, "bad file line");
	cr_expect(!in_box("evil"));
}

Test(compsrv, output_over_the_cap)
{
	expect_cold("echo READY 1; read l; head -c 6 >/dev/null; echo 'DONE 1 999999999999 0'", 0,
		    0, "over the compile");
}

Test(compsrv, server_that_hangs)
{
	expect_cold("echo READY 1; read l; head -c 6 >/dev/null; sleep 30", 0, 1500,
		    "no answer in time");
}

Test(compsrv, server_that_spins)
{
	expect_cold("echo READY 1; read l; head -c 6 >/dev/null; while :; do :; done", 300, 20000,
		    "ms of CPU");
}

/* A well-behaved fake: its output and files reach the caller and the box, and
 * COLD leaves the compile to the cold path without a failure. */
Test(compsrv, files_reach_the_box)
{
	struct lang l = fake("echo READY 1; read l; head -c 6 >/dev/null; "
			     "printf 'DONE 0 3 1\\nok\\nFILE out.bin 4\\nabcd'; "
			     "read l; head -c 6 >/dev/null; echo 'COLD no reason'");
	struct run_result rr;
	run_result_init(&rr);
	char err[512] = "";
	cr_assert_eq(compile(&l, "source", 0, 0, &rr, err, sizeof err), 0, "%s", err);
	cr_expect_str_eq(rr.out.buf, "ok\n");
	cr_expect_eq(rr.exit_code, 0);
	struct strbuf b = STRBUF_INIT;
	cr_expect_eq(sandbox_read_file(box, "out.bin", &b, 100), 0);
	cr_expect_str_eq(b.buf, "abcd");
	strbuf_release(&b);
	run_result_release(&rr);
	run_result_init(&rr);
	cr_expect_eq(compile(&l, "source", 0, 0, &rr, err, sizeof err), -1);
	cr_expect(strstr(err, "no reason"), "%s", err);
	run_result_release(&rr);
}
