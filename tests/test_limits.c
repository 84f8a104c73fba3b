/* test_limits: the limits policy (limits.c) from plain structs — defaults, language,
 * package and request values, caps, the wall rule, compile and validator limits,
 * and the runner's options. No sandbox, no database. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "judge/grading/problem.h"

/* judge.ini's defaults, spelled out so that a changed default shows here */
static const struct limits_policy policy = {
    .time_ms = 2000,
    .wall_factor = 3,
    .memory_mb = 256,
    .output_kb = 16384,
    .stderr_kb = 1024,
    .processes = 64,
    .file_kb = 65536,
    .open_files = 256,
    .tmp_mb = 64,
    .compile_time_ms = 20000,
    .compile_memory_mb = 2048,
    .max_time_ms = 20000,
    .max_memory_mb = 2048,
    .max_output_kb = 262144,
    .max_processes = 256,
    .session_memory_mb = 512,
    .cell_time_ms = 30000,
    .session_disk_mb = 256,
    .max_session_disk_mb = 2048,
    .session_cpus = 1,
    .max_session_cpus = 2,
    .session_cpu_budget_s = 0,
    .session_cpu_weight = 100,
    .max_session_cpu_weight = 100,
    .session_processes = 128,
    .max_session_processes = 1024,
    .install_time_s = 300,
};

static void assert_complete(const struct run_limits *l)
{
	cr_assert_gt(l->cpu_ms, 0);
	cr_assert_gt(l->wall_ms, 0);
	cr_assert_gt(l->memory_kb, 0);
	cr_assert_gt(l->processes, 0);
	cr_assert_gt(l->stdout_bytes, 0);
	cr_assert_gt(l->stderr_bytes, 0);
	cr_assert_gt(l->file_bytes, 0);
	cr_assert_gt(l->open_files, 0);
	cr_assert_gt(l->tmp_bytes, 0);
}

Test(limits, policy_is_judge_ini)
{
	struct judge_config cfg;
	config_defaults(&cfg);
	cfg.wall_limit_factor = 5;
	cfg.max_processes = 99;
	struct limits_policy p;
	limits_policy_from_config(&cfg, &p);
	struct limits_policy want = policy;
	want.wall_factor = 5;
	want.max_processes = 99;
	cr_assert_eq(memcmp(&p, &want, sizeof p), 0, "the policy is not judge.ini's [limits]");
	config_release(&cfg);
}

Test(limits, wall_rule)
{
	cr_assert_eq(limits_wall_ms(2000, 3), 7000);
	cr_assert_eq(limits_wall_ms(1, 1), 1001);
	cr_assert_eq(limits_wall_ms(0, 3), LIMITS_WALL_SLACK_MS);
	cr_assert_eq(limits_wall_ms(10000, LIMITS_TOOL_WALL_FACTOR), 51000);
}

Test(limits, run_defaults_are_judge_ini)
{
	struct run_limits l;
	memset(&l, 0xff, sizeof l);
	limits_run(&policy, NULL, NULL, NULL, &l);
	cr_assert_eq(l.cpu_ms, 2000);
	cr_assert_eq(l.wall_ms, 7000);
	cr_assert_eq(l.memory_kb, 256 * 1024);
	cr_assert_eq(l.processes, 64);
	cr_assert_eq(l.stdout_bytes, 16384L * 1024);
	cr_assert_eq(l.stderr_bytes, 1024L * 1024);
	cr_assert_eq(l.file_bytes, 65536L * 1024);
	cr_assert_eq(l.open_files, 256);
	cr_assert_eq(l.tmp_bytes, 64L << 20);
	assert_complete(&l);
}

Test(limits, language_defaults_win_over_judge_ini)
{
	struct lang lang = {.time_limit_ms = 5000, .memory_limit_mb = 512, .processes = 10};
	struct run_limits l;
	limits_run(&policy, &lang, NULL, NULL, &l);
	cr_assert_eq(l.cpu_ms, 5000);
	cr_assert_eq(l.wall_ms, 16000, "the wall rule follows the language's CPU limit");
	cr_assert_eq(l.memory_kb, 512 * 1024);
	cr_assert_eq(l.processes, 10);
	cr_assert_eq(l.stdout_bytes, 16384L * 1024);

	/* a language at 0 leaves judge.ini's */
	struct lang zero = {0};
	limits_run(&policy, &zero, NULL, NULL, &l);
	cr_assert_eq(l.cpu_ms, 2000);
	cr_assert_eq(l.memory_kb, 256 * 1024);
	cr_assert_eq(l.processes, 64);
}

Test(limits, package_wins_over_language)
{
	struct lang lang = {.time_limit_ms = 5000, .memory_limit_mb = 512, .processes = 10};
	struct problem_limits pkg = {.time_limit_s = 1.5, .memory_mb = 1024, .output_mb = 3};
	struct run_limits l;
	limits_run(&policy, &lang, &pkg, NULL, &l);
	cr_assert_eq(l.cpu_ms, 1500);
	cr_assert_eq(l.wall_ms, 3250, "a package's wall rule: 1.5 x 1.5 s + 1 s");
	cr_assert_eq(l.memory_kb, 1024 * 1024);
	cr_assert_eq(l.stdout_bytes, 3L << 20);
	cr_assert_eq(l.processes, 10, "a package has no process limit");

	/* a fractional time limit is rounded to the millisecond */
	pkg.time_limit_s = 0.0005;
	limits_run(&policy, &lang, &pkg, NULL, &l);
	cr_assert_eq(l.cpu_ms, 1);
	/* a package that gives nothing leaves the language's */
	struct problem_limits none = {0};
	limits_run(&policy, &lang, &none, NULL, &l);
	cr_assert_eq(l.cpu_ms, 5000);
	cr_assert_eq(l.memory_kb, 512 * 1024);
	cr_assert_eq(l.stdout_bytes, 8L << 20, "the format's 8 MiB, not judge.ini's 16");
}

Test(limits, package_wall_rule)
{
	/* time_limit_to_tle not given: the format's 1.5 */
	cr_assert_eq(limits_package_wall_ms(5000, 0), 8500);
	cr_assert_lt(limits_package_wall_ms(5000, 0), 10000, "sleep(10) under 5 s must time out");
	cr_assert_eq(limits_package_wall_ms(1000, 0), 2500);
	cr_assert_eq(limits_package_wall_ms(1000, 4), 5000);
	cr_assert_eq(limits_package_wall_ms(1500, 2), 4000);
	cr_assert_eq(limits_package_wall_ms(0, 1.5), LIMITS_WALL_SLACK_MS);

	struct problem_limits pkg = {.time_limit_s = 5, .time_limit_to_tle = 1.5};
	struct run_limits l;
	limits_run(&policy, NULL, &pkg, NULL, &l);
	cr_assert_eq(l.cpu_ms, 5000);
	cr_assert_eq(l.wall_ms, 8500);
	assert_complete(&l);
	/* the request's CPU limit (judge verify's) gets the package's wall rule */
	struct limits_request cpu_only = {.time_ms = 2000};
	limits_run(&policy, NULL, &pkg, &cpu_only, &l);
	cr_assert_eq(l.wall_ms, 4000);
	/* without a package, judge.ini's factor */
	limits_run(&policy, NULL, NULL, &cpu_only, &l);
	cr_assert_eq(l.wall_ms, 7000);
}

Test(limits, package_output_default)
{
	struct problem_limits pkg = {.time_limit_s = 1};
	struct run_limits l;
	limits_run(&policy, NULL, &pkg, NULL, &l);
	cr_assert_eq(l.stdout_bytes, LIMITS_PACKAGE_OUTPUT_MB << 20);
	cr_assert_eq(l.stdout_bytes, 8L << 20);
	/* problem.yaml's limits.output wins, and the request's over both */
	pkg.output_mb = 32;
	limits_run(&policy, NULL, &pkg, NULL, &l);
	cr_assert_eq(l.stdout_bytes, 32L << 20);
	struct limits_request req = {.output_kb = 100};
	limits_run(&policy, NULL, &pkg, &req, &l);
	cr_assert_eq(l.stdout_bytes, 100L * 1024);
}

Test(limits, request_wins_over_everything)
{
	struct lang lang = {.time_limit_ms = 5000, .memory_limit_mb = 512, .processes = 10};
	struct problem_limits pkg = {.time_limit_s = 1.5, .memory_mb = 1024, .output_mb = 3};
	struct limits_request req = {
	    .time_ms = 300, .wall_ms = 900, .memory_mb = 64, .output_kb = 10, .processes = 3};
	struct run_limits l;
	limits_run(&policy, &lang, &pkg, &req, &l);
	cr_assert_eq(l.cpu_ms, 300);
	cr_assert_eq(l.wall_ms, 900, "an asked wall limit is kept as asked");
	cr_assert_eq(l.memory_kb, 64 * 1024);
	cr_assert_eq(l.stdout_bytes, 10 * 1024);
	cr_assert_eq(l.processes, 3);
	assert_complete(&l);

	/* a CPU limit without a wall limit: the wall rule on the asked CPU limit */
	struct limits_request cpu_only = {.time_ms = 300};
	limits_run(&policy, &lang, &pkg, &cpu_only, &l);
	cr_assert_eq(l.wall_ms, 1450, "the package's wall rule on the asked CPU limit");
	/* a wall limit alone leaves the CPU limit to the package */
	struct limits_request wall_only = {.wall_ms = 100000};
	limits_run(&policy, &lang, &pkg, &wall_only, &l);
	cr_assert_eq(l.cpu_ms, 1500);
	cr_assert_eq(l.wall_ms, 100000);
}

Test(limits, request_caps)
{
	struct limits_caps c;
	limits_request_caps(&policy, &c);
	cr_assert_eq(c.time_ms.lo, 1);
	cr_assert_eq(c.time_ms.hi, 20000);
	cr_assert_eq(c.wall_ms.lo, 1);
	cr_assert_eq(c.wall_ms.hi, limits_wall_ms(20000, 3), "the cap on wall is the wall rule");
	cr_assert_eq(c.memory_mb.lo, LIMITS_REQUEST_MEMORY_MB_MIN);
	cr_assert_eq(c.memory_mb.hi, 2048);
	cr_assert_eq(c.output_kb.lo, 1);
	cr_assert_eq(c.output_kb.hi, 262144);
	cr_assert_eq(c.processes.lo, 1);
	cr_assert_eq(c.processes.hi, 256);

	/* the largest request a cap allows gives a run within the caps */
	struct limits_request req = {.time_ms = c.time_ms.hi,
				     .memory_mb = c.memory_mb.hi,
				     .output_kb = c.output_kb.hi,
				     .processes = c.processes.hi};
	struct run_limits l;
	limits_run(&policy, NULL, NULL, &req, &l);
	cr_assert_eq(l.wall_ms, c.wall_ms.hi);
}

Test(limits, compile_limits)
{
	struct run_limits l;
	memset(&l, 0, sizeof l);
	limits_compile(&policy, NULL, &l);
	cr_assert_eq(l.cpu_ms, 20000);
	cr_assert_eq(l.wall_ms, limits_wall_ms(20000, LIMITS_TOOL_WALL_FACTOR));
	cr_assert_eq(l.memory_kb, 2048 * 1024);
	cr_assert_eq(l.processes, LIMITS_COMPILE_PROCESSES_MIN,
		     "judge.ini's 64 processes are too few for a compiler");
	cr_assert_eq(l.stdout_bytes, LIMITS_COMPILE_OUTPUT_BYTES);
	cr_assert_eq(l.stderr_bytes, LIMITS_COMPILE_OUTPUT_BYTES);
	cr_assert_eq(l.tmp_bytes, 64L << 20);
	assert_complete(&l);

	/* more processes in judge.ini: compiles get them too */
	struct limits_policy many = policy;
	many.processes = 300;
	limits_compile(&many, NULL, &l);
	cr_assert_eq(l.processes, 300);

	/* the language's own compile limits win */
	struct lang c = {.compile_time_limit_ms = 10000,
			 .compile_memory_limit_mb = 1024,
			 .compile_processes = 16,
			 .time_limit_ms = 1,
			 .processes = 1};
	limits_compile(&many, &c, &l);
	cr_assert_eq(l.cpu_ms, 10000);
	cr_assert_eq(l.wall_ms, 51000);
	cr_assert_eq(l.memory_kb, 1024 * 1024);
	cr_assert_eq(l.processes, 16);
}

Test(limits, validator_limits)
{
	struct lang py = {0};
	struct run_limits l;
	limits_validator(&policy, &py, NULL, &l);
	cr_assert_eq(l.cpu_ms, LIMITS_VALIDATOR_TIME_MS);
	cr_assert_eq(l.wall_ms, limits_wall_ms(LIMITS_VALIDATOR_TIME_MS, LIMITS_TOOL_WALL_FACTOR));
	cr_assert_eq(l.memory_kb, LIMITS_VALIDATOR_MEMORY_MB * 1024);
	cr_assert_eq(l.stdout_bytes, LIMITS_VALIDATOR_OUTPUT_MB << 20);
	cr_assert_eq(l.stderr_bytes, LIMITS_VALIDATOR_STDERR_BYTES);
	cr_assert_eq(l.processes, 64, "judge.ini's when the validator's language has none");
	assert_complete(&l);

	struct lang node = {.processes = 32};
	struct problem_limits pkg = {
	    .validation_time_s = 4, .validation_memory_mb = 300, .validation_output_mb = 2};
	limits_validator(&policy, &node, &pkg, &l);
	cr_assert_eq(l.cpu_ms, 4000);
	cr_assert_eq(l.wall_ms, 21000);
	cr_assert_eq(l.memory_kb, 300 * 1024);
	cr_assert_eq(l.stdout_bytes, 2L << 20);
	cr_assert_eq(l.processes, 32);
	/* a test's limits never reach the validator */
	pkg.time_limit_s = 0.1;
	pkg.memory_mb = 8;
	limits_validator(&policy, &node, &pkg, &l);
	cr_assert_eq(l.cpu_ms, 4000);
	cr_assert_eq(l.memory_kb, 300 * 1024);
}

Test(limits, sandbox_options_from_judge_ini)
{
	struct judge_config cfg;
	char err[256] = "";
	config_defaults(&cfg);
	struct sandbox_options o;
	cr_assert_eq(limits_sandbox_options(&cfg, &o, err, sizeof err), 0, "%s", err);
	cr_assert_str_eq(o.box_root, "/run/judge");
	cr_assert_str_eq(o.cgroup_root, "auto");
	cr_assert_str_eq(o.sandbox, "auto");
	cr_assert_str_eq(o.tool_sandbox, "native");
	cr_assert_str_eq(o.runsc, "runsc");
	cr_assert_str_eq(o.gvisor_platform, "ptrace");
	cr_assert_eq(o.box_uid, 61000);
	cr_assert_eq(o.gvisor_pool, 2);
	cr_assert_eq(o.gvisor_memory_bytes, 2048LL << 20, "sized for the largest request");
	cr_assert_eq(o.gvisor_tmp_bytes, 64LL << 20);

	cr_assert_eq(config_set(&cfg, "gvisor_platform", "systrap", err, sizeof err), 0);
	cr_assert_eq(limits_sandbox_options(&cfg, &o, err, sizeof err), 0, "%s", err);
	cr_assert_str_eq(o.gvisor_platform, "systrap");

	/* a value that does not fit is an error naming the key, never cut */
	char *long_root = malloc(sizeof o.box_root + 2);
	memset(long_root, 'x', sizeof o.box_root + 1);
	long_root[0] = '/';
	long_root[sizeof o.box_root + 1] = 0;
	cr_assert_eq(config_set(&cfg, "box_root", long_root, err, sizeof err), 0);
	cr_assert_eq(limits_sandbox_options(&cfg, &o, err, sizeof err), -1);
	cr_assert(strstr(err, "box_root"), "%s", err);
	free(long_root);
	config_release(&cfg);
}

Test(limits, session_defaults_and_caps)
{
	struct limits_session s, req = {0};
	limits_session(&policy, NULL, &s);
	cr_assert_eq(s.memory_mb, 512);
	/* the cell's CPU default is capped by the largest a request may ask */
	cr_assert_eq(s.cpu_ms, policy.max_time_ms);
	cr_assert_eq(s.wall_ms, limits_wall_ms(s.cpu_ms, policy.wall_factor));
	cr_assert_eq(s.disk_mb, 256);
	req.cpu_ms = 500;
	req.disk_mb = 8;
	limits_session(&policy, &req, &s);
	cr_assert(s.cpu_ms == 500 && s.wall_ms == 500 * 3 + 1000 && s.disk_mb == 8);
	struct limits_policy small = policy;
	small.max_memory_mb = 128;
	limits_session(&small, NULL, &s);
	cr_assert_eq(s.memory_mb, 128, "the default memory never passes the cap");
	struct limits_session_caps caps;
	limits_session_caps(&policy, &caps);
	cr_assert_eq(caps.memory_mb.lo, LIMITS_SESSION_MEMORY_MB_MIN);
	cr_assert_eq(caps.memory_mb.hi, 2048);
	cr_assert_eq(caps.wall_ms.hi, limits_wall_ms(policy.max_time_ms, policy.wall_factor));
	cr_assert_eq(caps.disk_mb.hi, 2048);
	/* CPU weight: judge.ini's, a request lowers it up to max_session_cpu_weight;
	 * processes: the sandbox's default unless asked, within the caps */
	limits_session(&policy, NULL, &s);
	cr_assert(s.cpu_weight == 100 && s.processes == 0);
	cr_assert(caps.cpu_weight.lo == 1 && caps.cpu_weight.hi == 100);
	cr_assert(caps.processes.lo == LIMITS_SESSION_PROCESSES_ASK_MIN &&
		  caps.processes.hi == 1024);
	struct limits_session ask = {.cpu_weight = 25, .processes = 64};
	limits_session(&policy, &ask, &s);
	cr_assert(s.cpu_weight == 25 && s.processes == 64);
}

Test(limits, session_sandbox_cells_and_installs)
{
	struct limits_session s = {
	    .memory_mb = 300, .cpu_ms = 4000, .wall_ms = 9000, .disk_mb = 64};
	struct run_limits l;
	limits_session_sandbox(&policy, NULL, &s, &l);
	assert_complete(&l);
	cr_assert(l.memory_kb == 300 * 1024 && l.cpu_ms == 4000 && l.wall_ms == 9000);
	cr_assert_eq(l.processes, 128, "judge.ini's session_processes: pip, pipelines, processes");
	struct lang many = {.processes = 300};
	limits_session_sandbox(&policy, &many, &s, &l);
	cr_assert_eq(l.processes, 300, "a language needing more gets its own");
	s.processes = 40;
	limits_session_sandbox(&policy, &many, &s, &l);
	cr_assert_eq(l.processes, 40, "the session's own, as asked");
	s.processes = 0;
	long cpu, wall;
	limits_cell(&s, 0, &cpu, &wall);
	cr_assert(cpu == 0 && wall == 0, "no timeout: the session's");
	limits_cell(&s, 1000, &cpu, &wall);
	cr_assert(cpu == 1000 && wall == 1000);
	limits_cell(&s, 8000, &cpu, &wall);
	cr_assert(cpu == 0 && wall == 8000, "a timeout never raises the session's CPU");
	cr_assert_eq(limits_cell_wait_ms(&s, 0), 9000 + LIMITS_SESSION_CALL_SLACK_MS);
	cr_assert_eq(limits_cell_wait_ms(&s, 500), 500 + LIMITS_SESSION_CALL_SLACK_MS);
	limits_install(&policy, &l);
	assert_complete(&l);
	cr_assert(l.cpu_ms == 300000 && l.wall_ms == 300000);
	cr_assert_eq(limits_install_wait_ms(&policy), 300000 + LIMITS_SESSION_CALL_SLACK_MS);
}
