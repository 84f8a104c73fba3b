/* limits: the one limits policy (see limits.h for the rules and the wall rule). */
#include "judge/grading/limits.h"

#include <stdio.h>
#include <string.h>

#include "common/config.h"
#include "judge/grading/lang.h"
#include "judge/grading/problem.h"

/* The first of a, b, c that is > 0, else d: who asked first wins. */
static long pick(long a, long b, long c, long d)
{
	return a > 0 ? a : b > 0 ? b : c > 0 ? c : d;
}

void limits_policy_from_config(const struct judge_config *cfg, struct limits_policy *p)
{
	*p = (struct limits_policy){
	    .time_ms = cfg->time_limit_ms,
	    .wall_factor = cfg->wall_limit_factor,
	    .memory_mb = cfg->memory_limit_mb,
	    .output_kb = cfg->output_limit_kb,
	    .stderr_kb = cfg->stderr_limit_kb,
	    .processes = cfg->processes,
	    .file_kb = cfg->file_size_kb,
	    .open_files = cfg->open_files,
	    .tmp_mb = cfg->tmp_size_mb,
	    .compile_time_ms = cfg->compile_time_limit_ms,
	    .compile_memory_mb = cfg->compile_memory_limit_mb,
	    .max_time_ms = cfg->max_time_limit_ms,
	    .max_memory_mb = cfg->max_memory_limit_mb,
	    .max_output_kb = cfg->max_output_limit_kb,
	    .max_processes = cfg->max_processes,
	    .session_memory_mb = cfg->session_memory_mb,
	    .cell_time_ms = cfg->cell_time_limit_ms,
	    .session_disk_mb = cfg->session_disk_mb,
	    .max_session_disk_mb = cfg->max_session_disk_mb,
	    .session_cpus = cfg->session_cpus,
	    .max_session_cpus = cfg->max_session_cpus,
	    .session_cpu_weight = cfg->session_cpu_weight,
	    .max_session_cpu_weight = cfg->max_session_cpu_weight,
	    .session_processes = cfg->session_processes,
	    .max_session_processes = cfg->max_session_processes,
	    .session_cpu_budget_s = cfg->session_cpu_budget_s,
	    .install_time_s = cfg->install_time_limit_s,
	};
}

long limits_wall_ms(long cpu_ms, long factor)
{
	return cpu_ms * factor + LIMITS_WALL_SLACK_MS;
}

long limits_package_wall_ms(long cpu_ms, double time_limit_to_tle)
{
	double m = time_limit_to_tle >= 1 ? time_limit_to_tle : LIMITS_PACKAGE_TIME_LIMIT_TO_TLE;
	return (long)((double)cpu_ms * m + 0.5) + LIMITS_WALL_SLACK_MS;
}

/* The limits every kind of run shares: files, descriptors, /tmp. */
static void common_limits(const struct limits_policy *p, struct run_limits *out)
{
	out->file_bytes = p->file_kb * 1024;
	out->open_files = p->open_files;
	out->tmp_bytes = p->tmp_mb << 20;
}

void limits_run(const struct limits_policy *p, const struct lang *l,
		const struct problem_limits *pkg, const struct limits_request *req,
		struct run_limits *out)
{
	const struct limits_request none = {0};
	if (!req)
		req = &none;
	/* a package's time limit is in seconds, possibly fractional */
	long pkg_time_ms =
	    pkg && pkg->time_limit_s > 0 ? (long)(pkg->time_limit_s * 1000 + 0.5) : 0;
	long pkg_memory_mb = pkg ? pkg->memory_mb : 0;
	/* a package without limits.output has the format's default, not judge.ini's */
	long pkg_output_bytes =
	    !pkg ? 0 : (pkg->output_mb > 0 ? pkg->output_mb : LIMITS_PACKAGE_OUTPUT_MB) << 20;

	out->cpu_ms = pick(req->time_ms, pkg_time_ms, l ? l->time_limit_ms : 0, p->time_ms);
	out->wall_ms = req->wall_ms > 0 ? req->wall_ms
		       : pkg ? limits_package_wall_ms(out->cpu_ms, pkg->time_limit_to_tle)
			     : limits_wall_ms(out->cpu_ms, p->wall_factor);
	out->memory_kb =
	    pick(req->memory_mb, pkg_memory_mb, l ? l->memory_limit_mb : 0, p->memory_mb) * 1024;
	out->processes = pick(req->processes, 0, l ? l->processes : 0, p->processes);
	out->stdout_bytes = pick(req->output_kb * 1024, pkg_output_bytes, 0, p->output_kb * 1024);
	out->stderr_bytes = p->stderr_kb * 1024;
	common_limits(p, out);
}

void limits_compile(const struct limits_policy *p, const struct lang *l, struct run_limits *out)
{
	long procs = p->processes > LIMITS_COMPILE_PROCESSES_MIN ? p->processes
								 : LIMITS_COMPILE_PROCESSES_MIN;
	out->cpu_ms = pick(l ? l->compile_time_limit_ms : 0, 0, 0, p->compile_time_ms);
	out->wall_ms = limits_wall_ms(out->cpu_ms, LIMITS_TOOL_WALL_FACTOR);
	out->memory_kb =
	    pick(l ? l->compile_memory_limit_mb : 0, 0, 0, p->compile_memory_mb) * 1024;
	out->processes = pick(l ? l->compile_processes : 0, 0, 0, procs);
	out->stdout_bytes = LIMITS_COMPILE_OUTPUT_BYTES;
	out->stderr_bytes = LIMITS_COMPILE_OUTPUT_BYTES;
	common_limits(p, out);
}

void limits_validator(const struct limits_policy *p, const struct lang *l,
		      const struct problem_limits *pkg, struct run_limits *out)
{
	long time_s = pkg ? pkg->validation_time_s : 0;
	long memory_mb = pkg ? pkg->validation_memory_mb : 0;
	long output_mb = pkg ? pkg->validation_output_mb : 0;
	out->cpu_ms = pick(time_s * 1000, 0, 0, LIMITS_VALIDATOR_TIME_MS);
	out->wall_ms = limits_wall_ms(out->cpu_ms, LIMITS_TOOL_WALL_FACTOR);
	out->memory_kb = pick(memory_mb, 0, 0, LIMITS_VALIDATOR_MEMORY_MB) * 1024;
	out->processes = pick(l ? l->processes : 0, 0, 0, p->processes);
	out->stdout_bytes = pick(output_mb, 0, 0, LIMITS_VALIDATOR_OUTPUT_MB) << 20;
	out->stderr_bytes = LIMITS_VALIDATOR_STDERR_BYTES;
	common_limits(p, out);
}

void limits_request_caps(const struct limits_policy *p, struct limits_caps *out)
{
	*out = (struct limits_caps){
	    .time_ms = {1, p->max_time_ms},
	    .wall_ms = {1, limits_wall_ms(p->max_time_ms, p->wall_factor)},
	    .memory_mb = {LIMITS_REQUEST_MEMORY_MB_MIN, p->max_memory_mb},
	    .output_kb = {1, p->max_output_kb},
	    .processes = {1, p->max_processes},
	};
}

/* v, but at most cap. */
static long at_most(long v, long cap)
{
	return v > cap ? cap : v;
}

void limits_session(const struct limits_policy *p, const struct limits_session *req,
		    struct limits_session *out)
{
	const struct limits_session none = {0};
	if (!req)
		req = &none;
	out->memory_mb =
	    pick(req->memory_mb, 0, 0, at_most(p->session_memory_mb, p->max_memory_mb));
	out->cpu_ms = pick(req->cpu_ms, 0, 0, at_most(p->cell_time_ms, p->max_time_ms));
	out->wall_ms = pick(req->wall_ms, 0, 0, limits_wall_ms(out->cpu_ms, p->wall_factor));
	out->disk_mb = pick(req->disk_mb, 0, 0, p->session_disk_mb);
	out->cpu_millis =
	    pick(req->cpu_millis, 0, 0, at_most(p->session_cpus, p->max_session_cpus) * 1000);
	out->cpu_budget_s = pick(req->cpu_budget_s, 0, 0, p->session_cpu_budget_s);
	out->cpu_weight =
	    pick(req->cpu_weight, 0, 0, at_most(p->session_cpu_weight, p->max_session_cpu_weight));
	/* 0: not asked, the sandbox's default (limits_session_sandbox) */
	out->processes = req->processes;
}

void limits_session_caps(const struct limits_policy *p, struct limits_session_caps *out)
{
	struct limits_caps run;
	limits_request_caps(p, &run);
	*out = (struct limits_session_caps){
	    .memory_mb = {LIMITS_SESSION_MEMORY_MB_MIN, p->max_memory_mb},
	    .cpu_ms = run.time_ms,
	    .wall_ms = run.wall_ms,
	    .disk_mb = {1, p->max_session_disk_mb},
	    .cpu_millis = {LIMITS_SESSION_CPU_MILLIS_MIN, p->max_session_cpus * 1000},
	    /* a request may lower judge.ini's budget, never lift it */
	    .cpu_budget_s = {1, p->session_cpu_budget_s > 0 ? p->session_cpu_budget_s
							    : LIMITS_SESSION_CPU_BUDGET_S_MAX},
	    .cpu_weight = {1, p->max_session_cpu_weight},
	    .processes = {LIMITS_SESSION_PROCESSES_ASK_MIN, p->max_session_processes},
	};
}

void limits_session_sandbox(const struct limits_policy *p, const struct lang *l,
			    const struct limits_session *s, struct run_limits *out)
{
	struct limits_request req = {
	    .time_ms = s->cpu_ms, .wall_ms = s->wall_ms, .memory_mb = s->memory_mb};
	limits_run(p, l, NULL, &req, out);
	/* asked: as asked; else judge.ini's, or the language's when it needs more */
	long dflt = p->session_processes > 0 ? p->session_processes : LIMITS_SESSION_PROCESSES;
	if (s->processes > 0)
		out->processes = s->processes;
	else if (out->processes < dflt)
		out->processes = dflt;
}

void limits_cell(const struct limits_session *s, long timeout_ms, long *cpu_ms, long *wall_ms)
{
	*cpu_ms = timeout_ms > 0 && timeout_ms < s->cpu_ms ? timeout_ms : 0;
	*wall_ms = timeout_ms > 0 ? timeout_ms : 0;
}

long limits_cell_wait_ms(const struct limits_session *s, long timeout_ms)
{
	long wall = timeout_ms > 0 ? timeout_ms : s->wall_ms;
	return (wall > 0 ? wall : LIMITS_SESSION_CALL_MS) + LIMITS_SESSION_CALL_SLACK_MS;
}

void limits_install(const struct limits_policy *p, struct run_limits *out)
{
	*out = (struct run_limits){.cpu_ms = p->install_time_s * 1000,
				   .wall_ms = p->install_time_s * 1000,
				   .memory_kb = LIMITS_INSTALL_MEMORY_MB * 1024,
				   .processes = LIMITS_INSTALL_PROCESSES,
				   .stdout_bytes = LIMITS_INSTALL_OUTPUT_KB * 1024,
				   .stderr_bytes = LIMITS_INSTALL_OUTPUT_KB * 1024,
				   .file_bytes = LIMITS_INSTALL_FILE_MB << 20,
				   .open_files = LIMITS_INSTALL_OPEN_FILES,
				   .tmp_bytes = LIMITS_INSTALL_FILE_MB << 20};
}

long limits_install_wait_ms(const struct limits_policy *p)
{
	return p->install_time_s * 1000 + LIMITS_SESSION_CALL_SLACK_MS;
}

/* Copies src into dst[size]; returns 0, or -1 with err naming key when it does not fit. */
static int copy_option(char *dst, size_t size, const char *src, const char *key, char *err,
		       size_t errlen)
{
	if (snprintf(dst, size, "%s", src ? src : "") >= (int)size) {
		snprintf(err, errlen, "%s is too long", key);
		return -1;
	}
	return 0;
}

int limits_sandbox_options(const struct judge_config *cfg, struct sandbox_options *out, char *err,
			   size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (copy_option(out->box_root, sizeof out->box_root, cfg->box_root, "box_root", err,
			errlen) < 0 ||
	    copy_option(out->cgroup_root, sizeof out->cgroup_root, cfg->cgroup_root, "cgroup_root",
			err, errlen) < 0 ||
	    copy_option(out->cgroup_parent, sizeof out->cgroup_parent, cfg->cgroup_parent,
			"cgroup_parent", err, errlen) < 0 ||
	    copy_option(out->sandbox, sizeof out->sandbox, cfg->sandbox, "sandbox", err, errlen) <
		0 ||
	    copy_option(out->tool_sandbox, sizeof out->tool_sandbox, cfg->tool_sandbox,
			"tool_sandbox", err, errlen) < 0 ||
	    copy_option(out->runsc, sizeof out->runsc, cfg->runsc, "runsc", err, errlen) < 0 ||
	    copy_option(out->gvisor_platform, sizeof out->gvisor_platform, cfg->gvisor_platform,
			"gvisor_platform", err, errlen) < 0)
		return -1;
	out->box_uid = cfg->box_uid;
	out->gvisor_pool = (int)cfg->gvisor_pool;
	out->session_pool = (int)cfg->session_pool;
	out->session_pool_max = (int)cfg->session_pool_max;
	out->gvisor_start_timeout_ms = (int)cfg->gvisor_start_timeout_ms;
	const char *reuse = cfg->gvisor_reuse ? cfg->gvisor_reuse : "key";
	if (strcmp(reuse, "key") && strcmp(reuse, "never")) {
		snprintf(err, errlen, "gvisor_reuse must be key or never, not '%s'", reuse);
		return -1;
	}
	out->gvisor_reuse = !strcmp(reuse, "key");
	out->gvisor_reuse_runs = (int)cfg->gvisor_reuse_runs;
	out->gvisor_reuse_s = (int)cfg->gvisor_reuse_s;
	out->warm_start = cfg->warm_start && !strcmp(cfg->warm_start, "on");
	/* a gVisor sandbox may serve any run a request can ask for */
	out->gvisor_memory_bytes = (long long)cfg->max_memory_limit_mb << 20;
	out->gvisor_tmp_bytes = (long long)cfg->tmp_size_mb << 20;
	return 0;
}
