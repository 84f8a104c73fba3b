/* config: every configuration key, defined once in a table (config.c). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* CONF_PATH: a file or folder; relative in a config file or on the command line,
 * it is made absolute against the folder judge was started in as it is read.
 * CONF_PROG: a program, looked up in PATH without a '/', else as CONF_PATH. */
enum config_type { CONF_STR, CONF_INT, CONF_BOOL, CONF_PATH, CONF_PROG };

struct judge_config {
	/* [paths] */
	char *state_dir;
	char *languages_dir;
	char *problems_dir;
	char *runtimes_dir;
	/* [sandbox] */
	char *sandbox;
	char *runsc;
	char *box_root;
	long box_uid;
	long gvisor_pool;
	long session_pool;
	long session_pool_max;
	char *gvisor_platform;
	long gvisor_start_timeout_ms;
	char *gvisor_reuse;
	long gvisor_reuse_runs;
	long gvisor_reuse_s;
	char *tool_sandbox;
	char *warm_start;
	char *cgroup_root;
	char *cgroup_parent;
	/* [limits] */
	long time_limit_ms;
	long wall_limit_factor;
	long memory_limit_mb;
	long output_limit_kb;
	long stderr_limit_kb;
	long processes;
	long file_size_kb;
	long open_files;
	long tmp_size_mb;
	long compile_time_limit_ms;
	long compile_memory_limit_mb;
	long max_time_limit_ms;
	long max_memory_limit_mb;
	long max_output_limit_kb;
	long max_processes;
	/* [server] */
	char *listen;
	char *auth;
	long max_body_kb;
	long max_source_kb;
	long max_stdin_kb;
	long max_tests;
	long max_batch;
	long max_wait_s;
	long http_threads;
	long http_header_timeout_s, http_body_timeout_s, http_max_conns_per_ip;
	long rate_limit_per_min;
	long max_in_flight;
	char *callback_hosts;
	long callback_attempts;
	char *callback_ca_file;
	char *serve_user;
	/* [database] */
	char *database_url;
	/* [worker] */
	long worker_slots;
	long lease_s;
	long max_attempts;
	long reap_interval_s;
	long interactive_lead_ms;
	long drain_s;
	char *log_level;
	/* [sessions] */
	char *pip_index_url;
	char *npm_registry;
	long session_idle_ttl_s;
	long session_max_idle_ttl_s;
	char *session_idle_action;
	long paused_retention_s;
	long checkpoint_interval_s;
	long session_max_lifetime_s;
	long sessions_per_key;
	long session_images_mb_per_key;
	long sessions_per_worker;
	long session_memory_mb;
	long session_disk_mb;
	long max_session_disk_mb;
	long session_cpus;
	long max_session_cpus;
	long session_cpu_weight;
	long max_session_cpu_weight;
	long session_processes;
	long max_session_processes;
	long session_cpu_budget_s;
	long cell_time_limit_ms;
	long install_time_limit_s;
	long worker_timeout_s;
	char *egress;
	char *egress_allow;
	char *egress_hosts;
	char *egress_addr_allow;
	long egress_max_mb;
	long egress_max_connections;
	/* [problems] */
	char *problem_upload;
	long problem_max_mb;
	long problem_max_files;
	long problem_cache_mb;
};

struct config_key {
	const char *section;
	const char *name;
	enum config_type type;
	size_t offset;
	long min, max;
	const char *def;
	const char *doc;
};

extern const struct config_key config_keys[];
extern const size_t config_key_count;

/* Fills cfg with the defaults of the table. Strings are malloc'd; path
 * defaults stay relative (config_resolve). */
void config_defaults(struct judge_config *cfg);
/* Makes the path keys that are still relative (defaults no file or override
 * set) absolute against home (an absolute folder: where judge's own tree is). */
void config_resolve(struct judge_config *cfg, const char *home);
/* Loads path over the defaults. A missing file is an error only when
 * must_exist. Unknown keys, bad values and out-of-range numbers are errors
 * with "path:line: message" in err. Returns 0 or -1. */
int config_load(struct judge_config *cfg, const char *path, bool must_exist, char *err,
		size_t errlen);
/* Sets one key from "name=value" text (command-line overrides). Returns 0 or -1. */
int config_set(struct judge_config *cfg, const char *name, const char *value, char *err,
	       size_t errlen);
void config_release(struct judge_config *cfg);
