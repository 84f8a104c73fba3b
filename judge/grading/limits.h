/* limits: the one limits policy — defaults, request caps, the wall rule, and the
 * limits of runs, compiles and output validators.
 *
 * How it works: judge.ini's [limits] become a plain struct limits_policy once
 * (limits_policy_from_config); everything else is a pure function of that
 * policy and of what a language, a problem package and a request ask for, and
 * fills every field of a struct run_limits (the runner fills in nothing).
 * Precedence of a run limit: the request, then the problem package, then the
 * language, then judge.ini.
 *
 * The wall rule, for every run: wall = cpu × factor + 1 s (limits_wall_ms).
 * A submission's program uses judge.ini's wall_limit_factor (default 3): it may
 * sleep or wait on I/O, and a loaded host stretches its wall time. Compilers
 * and output validators use LIMITS_TOOL_WALL_FACTOR (5): they are trusted and
 * CPU-bound, so their CPU limit bounds the work; the wall limit only catches a
 * tool stuck on something. It is wide because a busy host stretches wall time
 * and a compile it cut would be charged to the submission as compile_error (a
 * C++ compile of 5 s CPU took 41 s wall at load 25 and failed at factor 2).
 * The 1 s absorbs a sandbox's start-up.
 *
 * A run of a problem package's test uses the package's own wall rule
 * (limits_package_wall_ms): wall = cpu × time_limit_to_tle + 1 s. The package
 * format says a submission still running at time_limit × time_limit_to_tle
 * (2023-07 / 2025-09 key, default 1.5, used for legacy packages too) is surely
 * over time: its time_limit_exceeded submissions must exceed that margin. So
 * that margin is the wall budget too, and the same 1 s absorbs the sandbox's
 * start-up. judge.ini's factor (3) would let a program that sleeps or blocks
 * pass a package: sleep(10) under a 5 s limit is 10 s < 16 s, but > 8.5 s here.
 * Legacy's time_safety_margin (default 2) is not used: at 5 s it gives 11 s.
 *
 * A package's output limit is its limits.output, else the format's default,
 * LIMITS_PACKAGE_OUTPUT_MB (8 MiB), never judge.ini's output_limit_kb.
 */
#pragma once
#include <stddef.h>

#include "runner/sandbox.h"

struct judge_config;
struct lang;
struct problem_limits;

/* Added to cpu × factor by the wall rule: a sandbox's start-up and a host's jitter. */
#define LIMITS_WALL_SLACK_MS 1000L
/* The wall factor of trusted tools (compilers, output validators). */
#define LIMITS_TOOL_WALL_FACTOR 5L
/* Compilers start threads and helper processes (cc1, as, ld; dotnet's build
 * server): a compile gets at least this many processes, more when judge.ini's
 * processes is higher, unless its language names its own cap. */
#define LIMITS_COMPILE_PROCESSES_MIN 128L
/* Output a compile may print (kept in the result, cut at 64 KiB there). */
#define LIMITS_COMPILE_OUTPUT_BYTES (1L << 20)
/* An output validator's limits when its package gives none (the ICPC package
 * format's validation_* defaults are larger than a test's run). */
#define LIMITS_VALIDATOR_TIME_MS      30000L
#define LIMITS_VALIDATOR_MEMORY_MB    1024L
#define LIMITS_VALIDATOR_OUTPUT_MB    8L
#define LIMITS_VALIDATOR_STDERR_BYTES (64L * 1024)
/* The ICPC package format's default limits.output (MiB), and its default
 * time_multipliers.time_limit_to_tle. */
#define LIMITS_PACKAGE_OUTPUT_MB	 8L
#define LIMITS_PACKAGE_TIME_LIMIT_TO_TLE 1.5
/* The smallest memory limit a request may ask: less does not start a runtime. */
#define LIMITS_REQUEST_MEMORY_MB_MIN 8L
/* The smallest memory a session may ask: its interpreter stays resident. */
#define LIMITS_SESSION_MEMORY_MB_MIN 32L
/* A session's sandbox holds this many processes and threads when judge.ini
 * sets no session_processes: pip, a shell's pipelines, a plotting library's
 * threads, the session's processes. */
#define LIMITS_SESSION_PROCESSES 128L
/* The fewest processes a session may ask: a driver and its runtime's threads. */
#define LIMITS_SESSION_PROCESSES_ASK_MIN 16L
/* What serve waits beyond a session call's own limit: routing through
 * PostgreSQL, a driver's restart, storing the answer. */
#define LIMITS_SESSION_CALL_SLACK_MS 15000L
/* A session call with no limit of its own (files, contexts, processes). */
#define LIMITS_SESSION_CALL_MS 60000L
/* A package install's sandbox (runner/install/install.h): memory, processes,
 * output kept, file and /tmp size, open files. Its time is judge.ini's
 * install_time_limit_s, for CPU and wall alike (it mostly waits on the network). */
#define LIMITS_INSTALL_MEMORY_MB  2048L
#define LIMITS_INSTALL_PROCESSES  256L
#define LIMITS_INSTALL_OUTPUT_KB  1024L
#define LIMITS_INSTALL_FILE_MB	  512L
#define LIMITS_INSTALL_OPEN_FILES 4096L

/* judge.ini's [limits], in judge.ini's units. */
struct limits_policy {
	long time_ms, wall_factor, memory_mb, output_kb, stderr_kb, processes;
	long file_kb, open_files, tmp_mb;
	long compile_time_ms, compile_memory_mb;
	long max_time_ms, max_memory_mb, max_output_kb, max_processes;
	/* [sessions] */
	long session_memory_mb, cell_time_ms, session_disk_mb, max_session_disk_mb;
	long session_cpus, max_session_cpus;		 /* whole CPUs; session_cpus 0 = no quota */
	long session_cpu_budget_s;			 /* 0 = none */
	long session_cpu_weight, max_session_cpu_weight; /* cgroup v2 cpu.weight scale */
	long session_processes, max_session_processes;
	long install_time_s;
};

/* What a request asks for; 0 = not asked. */
struct limits_request {
	long time_ms, wall_ms, memory_mb, output_kb, processes;
};

/* The range a request's limit must fall in (both ends included). */
struct limits_range {
	long lo, hi;
};

/* The ranges of struct limits_request's fields. */
struct limits_caps {
	struct limits_range time_ms, wall_ms, memory_mb, output_kb, processes;
};

/* A session's limits: memory of its whole sandbox (every context and process),
 * CPU and wall time of one cell (a call's default), size of its folder, the
 * CPU bandwidth of its whole sandbox in thousandths of a CPU (0 = none), the
 * CPU seconds it may use in all before it is closed (0 = no budget), its CPU
 * weight against other sessions (cgroup v2 cpu.weight, 1..10000) and its
 * processes and threads together (0 = the sandbox's default). */
struct limits_session {
	long memory_mb, cpu_ms, wall_ms, disk_mb, cpu_millis, cpu_budget_s, cpu_weight, processes;
};
/* The largest cpu_budget_s a request may ask when judge.ini sets none. */
#define LIMITS_SESSION_CPU_BUDGET_S_MAX 31536000L

/* The smallest CPU share a session may ask, in thousandths of a CPU. */
#define LIMITS_SESSION_CPU_MILLIS_MIN 100L

/* The ranges a session create's limits must fall in (cpu_millis: thousandths). */
struct limits_session_caps {
	struct limits_range memory_mb, cpu_ms, wall_ms, disk_mb, cpu_millis, cpu_budget_s,
	    cpu_weight, processes;
};

/* Fills p from cfg's [limits] and [sessions] keys (cfg is not kept). */
void limits_policy_from_config(const struct judge_config *cfg, struct limits_policy *p);

/* The wall rule: cpu_ms × factor + LIMITS_WALL_SLACK_MS. */
long limits_wall_ms(long cpu_ms, long factor);

/* The wall rule of a problem package's runs: cpu_ms × time_limit_to_tle +
 * LIMITS_WALL_SLACK_MS; a time_limit_to_tle below 1 (not given) is the
 * format's default, LIMITS_PACKAGE_TIME_LIMIT_TO_TLE. */
long limits_package_wall_ms(long cpu_ms, double time_limit_to_tle);

/* The limits of one test run of a program in language l (NULL: none of its
 * defaults), of problem package pkg (NULL: none), as request req asks (NULL:
 * nothing). With a package, the wall limit follows limits_package_wall_ms and
 * the output limit defaults to LIMITS_PACKAGE_OUTPUT_MB. Every field of out is
 * set and > 0 when p's are. */
void limits_run(const struct limits_policy *p, const struct lang *l,
		const struct problem_limits *pkg, const struct limits_request *req,
		struct run_limits *out);

/* The limits of a compile in language l (NULL: judge.ini's compile limits). */
void limits_compile(const struct limits_policy *p, const struct lang *l, struct run_limits *out);

/* The limits of one run of an output validator written in language l (NULL:
 * judge.ini's processes) for package pkg (NULL, or validation_* at 0: the
 * LIMITS_VALIDATOR_* defaults). */
void limits_validator(const struct limits_policy *p, const struct lang *l,
		      const struct problem_limits *pkg, struct run_limits *out);

/* The ranges a request's limits must fall in: up to judge.ini's max_*, and a
 * wall limit up to the wall rule applied to the largest CPU limit. */
void limits_request_caps(const struct limits_policy *p, struct limits_caps *out);

/* The limits of a session whose create asked req (fields 0: not asked; NULL:
 * nothing): judge.ini's [sessions] defaults (session_memory_mb and
 * cell_time_limit_ms, each capped by the largest a request may ask;
 * session_disk_mb), and the wall rule for a wall not asked. Every field of out
 * is > 0 when p's are. */
void limits_session(const struct limits_policy *p, const struct limits_session *req,
		    struct limits_session *out);

/* The ranges of a session create's limits: memory from
 * LIMITS_SESSION_MEMORY_MB_MIN, CPU and wall as a run's (limits_request_caps),
 * disk up to max_session_disk_mb. */
void limits_session_caps(const struct limits_policy *p, struct limits_session_caps *out);

/* The limits of a session's sandbox, whose driver runs in language l (NULL:
 * none of its defaults): memory for the whole sandbox, cpu_ms and wall_ms the
 * default of each cell, processes as the session asked, else judge.ini's
 * session_processes or the language's when higher; the rest as a run of l. */
void limits_session_sandbox(const struct limits_policy *p, const struct lang *l,
			    const struct limits_session *s, struct run_limits *out);

/* A cell's CPU and wall limits when its call asks timeout_ms (0: not asked):
 * timeout_ms bounds the cell's wall time, and its CPU within the session's.
 * 0 in *cpu_ms or *wall_ms means the session's own. */
void limits_cell(const struct limits_session *s, long timeout_ms, long *cpu_ms, long *wall_ms);

/* How long serve waits for a cell's answer: its wall limit (timeout_ms when
 * asked, else the session's) plus LIMITS_SESSION_CALL_SLACK_MS. */
long limits_cell_wait_ms(const struct limits_session *s, long timeout_ms);

/* The limits of a package install's run (judge.ini's install_time_limit_s for
 * CPU and wall, LIMITS_INSTALL_* for the rest), and how long serve waits for
 * an install's answer. */
void limits_install(const struct limits_policy *p, struct run_limits *out);
long limits_install_wait_ms(const struct limits_policy *p);

/* Fills out, the runner's options, from cfg's [sandbox] keys and the limits a
 * gVisor sandbox must be sized for. Returns 0, or -1 with a message in err
 * when a path does not fit or gvisor_reuse is neither key nor never. */
int limits_sandbox_options(const struct judge_config *cfg, struct sandbox_options *out, char *err,
			   size_t errlen);
