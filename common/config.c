/* config: the key table, defaults, judge.ini loading and validation. */
#include "common/config.h"
#include "common/xalloc.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ini.h"

/* the key table reads best one key a row */
/* clang-format off */
#define S(sec, key, def, doc) {sec, #key, CONF_STR, offsetof(struct judge_config, key), 0, 0, def, doc}
#define P(sec, key, def, doc) {sec, #key, CONF_PATH, offsetof(struct judge_config, key), 0, 0, def, doc}
#define X(sec, key, def, doc) {sec, #key, CONF_PROG, offsetof(struct judge_config, key), 0, 0, def, doc}
#define I(sec, key, lo, hi, def, doc)                                                              \
	{sec, #key, CONF_INT, offsetof(struct judge_config, key), lo, hi, def, doc}

/* judge.ini documents exactly these keys; tests/test_config.c checks that. */
const struct config_key config_keys[] = {
	P("paths", state_dir, "var", "where the judge keeps its state (embedded database, logs)"),
	P("paths", languages_dir, "languages", "folder of language definition files"),
	P("paths", problems_dir, "problems",
	  "folder of ICPC problem packages, loaded into the database when judge serve starts"),
	P("paths", runtimes_dir, "/opt/judge/runtimes",
	  "where make deps installs language runtimes that sandboxes can read"),
	S("sandbox", sandbox, "auto", "auto, gvisor or native (auto = gvisor where runsc works)"),
	X("sandbox", runsc, "runsc", "path of the runsc binary"),
	P("sandbox", box_root, "/run/judge", "host folder under which per-run boxes are mounted"),
	I("sandbox", box_uid, 1000, 2000000000, "61000",
	  "first host uid/gid used for sandboxed programs; each slot gets its own"),
	I("sandbox", gvisor_pool, 0, 64, "2", "gVisor sandboxes started ahead of need per runtime"),
	I("sandbox", session_pool, 0, 64, "1",
	  "sessions started ahead of need per language (driver running, never reused)"),
	I("sandbox", session_pool_max, 0, 64, "4",
	  "under a burst of creates a language's pool grows up to this many (back to session_pool after a quiet minute)"),
	S("sandbox", gvisor_platform, "ptrace",
	  "how gVisor traps a program's system calls: ptrace, systrap or kvm (runsc --platform)"),
	I("sandbox", gvisor_start_timeout_ms, 1000, 600000, "20000",
	  "a gVisor sandbox not ready this long after runsc starts is killed (internal_error)"),
	S("sandbox", gvisor_reuse, "key",
	  "key: a gVisor sandbox may serve later submissions of the same API key; never: one per submission"),
	I("sandbox", gvisor_reuse_runs, 1, 1000000, "200",
	  "runs a reused gVisor sandbox serves before it is recycled"),
	I("sandbox", gvisor_reuse_s, 1, 86400, "300",
	  "seconds after its start past which a reused gVisor sandbox is recycled"),
	S("sandbox", tool_sandbox, "native",
	  "where compilers and output validators run when sandbox is gvisor: native or gvisor"),
	S("sandbox", warm_start, "on",
	  "on: a worker compiles through the language's warm compile server (compile_server), and Python runs fork from a zygote (gVisor: per sandbox; native: per key); off: a fresh compiler per compile and a fresh process per run"),
	S("sandbox", cgroup_root, "auto",
	  "auto, or the cgroup (v2 path, or v1 controller folder parent) under which runs go"),
	S("sandbox", cgroup_parent, "judge",
	  "name of the cgroup, in each hierarchy, that holds native runs (gVisor's: <name>-gvisor)"),
	I("limits", time_limit_ms, 1, 600000, "2000", "default CPU time limit of a run"),
	I("limits", wall_limit_factor, 1, 100, "3", "default wall limit = factor x CPU limit + 1 s"),
	I("limits", memory_limit_mb, 8, 65536, "256", "default memory limit of a run"),
	I("limits", output_limit_kb, 1, 4194304, "16384", "default stdout cap of a run"),
	I("limits", stderr_limit_kb, 1, 1048576, "1024", "default stderr cap of a run"),
	I("limits", processes, 1, 4096, "64", "default cap on processes and threads of a run"),
	I("limits", file_size_kb, 1, 4194304, "65536", "largest file a run may write"),
	I("limits", open_files, 16, 65536, "256", "open file descriptors per process"),
	I("limits", tmp_size_mb, 1, 65536, "64", "size of the writable box and /tmp of a run"),
	I("limits", compile_time_limit_ms, 100, 600000, "20000", "CPU time limit of a compilation"),
	I("limits", compile_memory_limit_mb, 64, 65536, "2048", "memory limit of a compilation"),
	I("limits", max_time_limit_ms, 1, 600000, "20000", "largest CPU limit a request may ask"),
	I("limits", max_memory_limit_mb, 8, 65536, "2048", "largest memory limit a request may ask"),
	I("limits", max_output_limit_kb, 1, 4194304, "262144",
	  "largest stdout cap a request may ask"),
	I("limits", max_processes, 1, 4096, "256", "largest process cap a request may ask"),
	S("server", listen, "127.0.0.1:8080", "address and port of the HTTP API"),
	S("server", auth, "on", "on: API keys required; off: only allowed on a loopback listener"),
	I("server", max_body_kb, 1, 1048576, "10240", "largest request body"),
	I("server", max_source_kb, 1, 1048576, "512", "largest source file"),
	I("server", max_stdin_kb, 1, 1048576, "8192", "largest stdin of one test"),
	I("server", max_tests, 1, 100000, "200", "most tests in one submission"),
	I("server", max_batch, 1, 10000, "100", "most submissions in one batch request"),
	I("server", max_wait_s, 0, 3600, "60",
	  "longest wait of a synchronous execute or ?wait= before the answer is 202 and the id"),
	I("server", http_threads, 0, 256, "0", "threads of the HTTP server; 0 = cores"),
	I("server", http_header_timeout_s, 0, 3600, "30",
	  "a connection must send a request's whole headers this long after it opens or after its previous answer, else it is closed; 0 = no deadline"),
	I("server", http_body_timeout_s, 0, 86400, "120",
	  "a request's whole body must arrive this long after its headers, else the connection is closed; 0 = no deadline"),
	I("server", http_max_conns_per_ip, 0, 100000, "256",
	  "open connections from one client address at once (more are closed on accept; behind a proxy all clients share its address); 0 = no cap"),
	I("server", rate_limit_per_min, 0, 10000000, "6000",
	  "requests per minute per API key (burst: a tenth of it); 0 = no limit"),
	I("server", max_in_flight, 0, 100000, "64",
	  "requests of one API key being served or waiting at once; 0 = no limit"),
	S("server", callback_hosts, "",
	  "comma-separated host or host:port allowed in callback_url; empty = callbacks off"),
	I("server", callback_attempts, 1, 100, "5",
	  "tries of a callback POST (backoff 1 s, 2 s, 4 s ...) before giving up"),
	P("server", callback_ca_file, "",
	  "PEM file of the CAs trusted for https callbacks; empty = the system's CA store"),
	S("server", serve_user, "judge",
	  "user that judge serve drops to when started as root (nobody when missing)"),
	S("database", database_url, "",
	  "libpq connection string; empty = a private cluster under state_dir/pg"),
	I("worker", worker_slots, 0, 1024, "0", "concurrent sandboxes per worker; 0 = cores"),
	I("worker", lease_s, 2, 3600, "30",
	  "seconds a claimed submission stays with its worker without a lease extension"),
	I("worker", max_attempts, 1, 100, "3",
	  "claims of one submission (workers lost while running it) before internal_error"),
	I("worker", reap_interval_s, 1, 3600, "5", "how often each worker requeues expired leases"),
	I("worker", interactive_lead_ms, 0, 3600000, "10000",
	  "interactive requests (/v1/execute*) go ahead of bulk work queued at most this long before them"),
	I("worker", drain_s, 0, 3600, "60",
	  "on SIGTERM, how long running submissions may finish before they are handed back"),
	S("worker", log_level, "info", "debug, info, warn or error"),
	S("sessions", pip_index_url, "https://pypi.org/simple",
	  "PEP 503 index that session installs with pip read (through the worker's caching proxy)"),
	S("sessions", npm_registry, "https://registry.npmjs.org/",
	  "registry that session installs with npm read (through the worker's caching proxy)"),
	I("sessions", session_idle_ttl_s, 10, 86400, "600",
	  "a session unused this long is closed, when the request gives no idle_ttl"),
	I("sessions", session_max_idle_ttl_s, 10, 604800, "3600", "largest idle_ttl a request may ask"),
	S("sessions", session_idle_action, "close",
	  "what a session unused for its idle_ttl does, when the request gives no idle_action: close, "
	  "or pause (its files and packages stored, its sandbox ended; the next call resumes it)"),
	I("sessions", checkpoint_interval_s, 0, 86400, "0",
	  "gVisor: a used session's memory and files are checkpointed this often, and a session whose "
	  "worker dies resumes from its last checkpoint instead of being lost; 0 = never"),
	I("sessions", paused_retention_s, 10, 31536000, "86400",
	  "a paused session is deleted with its image this long after its pause (or at its lifetime's end)"),
	I("sessions", session_max_lifetime_s, 60, 2592000, "86400",
	  "a session is closed this long after its creation, used or not"),
	I("sessions", sessions_per_key, 1, 100000, "20",
	  "open sessions of one API key at once (more: 429)"),
	I("sessions", session_images_mb_per_key, 0, 1048576, "1024",
	  "stored session images (pauses and snapshots, compressed) one API key may hold together, in MiB; "
	  "past it a pause or snapshot is refused (413)"),
	I("sessions", sessions_per_worker, 0, 100000, "64",
	  "sessions one worker holds at once; 0 = this worker holds none"),
	I("sessions", session_memory_mb, 16, 65536, "512",
	  "memory of a session's sandbox, when the request gives none (capped by max_memory_limit_mb)"),
	I("sessions", session_disk_mb, 1, 65536, "256",
	  "size of a session's folder (files and packages), when the request gives none"),
	I("sessions", max_session_disk_mb, 1, 65536, "2048", "largest disk_mb a request may ask"),
	I("sessions", session_cpus, 0, 1024, "1",
	  "CPUs a session's processes may keep busy together, background ones included (a kernel quota: "
	  "more is slowed down), when the request gives no cpus; 0 = no quota"),
	I("sessions", max_session_cpus, 1, 1024, "2", "largest cpus a request may ask"),
	I("sessions", session_cpu_weight, 1, 10000, "100",
	  "a session's share of contended CPU against other sessions (cgroup v2 cpu.weight; v1 "
	  "cpu.shares = weight x 1024 / 100), when the request gives no cpu_weight"),
	I("sessions", max_session_cpu_weight, 1, 10000, "100",
	  "largest cpu_weight a request may ask (at the default a request may only lower its own)"),
	I("sessions", session_processes, 16, 65536, "128",
	  "processes and threads of a session's sandbox together (every context, process and "
	  "background program), when the request gives none; a language needing more gets its own"),
	I("sessions", max_session_processes, 16, 65536, "1024",
	  "largest processes a request may ask"),
	I("sessions", session_cpu_budget_s, 0, 31536000, "0",
	  "CPU seconds a session may use in all (every process, background ones included); past "
	  "them it is closed with a reason; 0 = no budget"),
	I("sessions", cell_time_limit_ms, 1, 600000, "30000",
	  "CPU limit of one cell, when neither the session nor the call gives one"),
	I("sessions", install_time_limit_s, 5, 3600, "300", "wall limit of one package install"),
	I("sessions", worker_timeout_s, 2, 3600, "10",
	  "a worker silent this long has lost its sessions (their calls answer 410 session_lost)"),
	S("sessions", egress, "off",
	  "the most network a session may ask (docs/egress.md): off (none), allowlist (named hosts) or open"),
	S("sessions", egress_allow, "",
	  "comma-separated host[:port] rules (*.domain for the names under it) that bound what an "
	  "allowlist may name; empty = any name"),
	S("sessions", egress_hosts, "",
	  "name=address pairs, comma-separated, that the egress proxy resolves without asking the "
	  "system's resolver (a name of your own network; the tests' stand-in upstreams)"),
	S("sessions", egress_addr_allow, "",
	  "comma-separated addresses the egress proxy may connect to although they are loopback, "
	  "private, link-local or metadata addresses (refused otherwise); empty = none"),
	I("sessions", egress_max_mb, 0, 1048576, "1024",
	  "megabytes a session's egress may carry in both directions over its life; 0 = no cap"),
	I("sessions", egress_max_connections, 0, 1000000, "1000",
	  "connections a session's egress proxy makes over its life; 0 = no cap"),
	S("problems", problem_upload, "keys",
	  "who may upload problem packages: keys (any API key), admin (admin keys) or off"),
	I("problems", problem_max_mb, 1, 4096, "256",
	  "largest problem package: its zip, and its files uncompressed in all"),
	I("problems", problem_max_files, 1, 1000000, "10000", "most files in one problem package"),
	I("problems", problem_cache_mb, 0, 1048576, "4096",
	  "a worker's copies of problem packages (state_dir/problems) are trimmed to this; 0 = never"),
};
/* clang-format on */
const size_t config_key_count = sizeof config_keys / sizeof config_keys[0];

static const struct config_key *find_key(const char *name)
{
	for (size_t i = 0; i < config_key_count; i++)
		if (!strcmp(config_keys[i].name, name))
			return &config_keys[i];
	return NULL;
}

/* True when a path key's value is relative: resolved against a folder. A
 * program (runsc) without a '/' is looked up in PATH, not resolved. */
static bool relative(const struct config_key *k, const char *value)
{
	if (!value[0] || value[0] == '/')
		return false;
	return k->type == CONF_PATH || (k->type == CONF_PROG && strchr(value, '/'));
}

/* base/value in a new string (no base: value itself). */
static char *join(const char *base, const char *value)
{
	size_t n = strlen(base);
	while (n > 1 && base[n - 1] == '/')
		n--;
	char *out = xmalloc(n + 1 + strlen(value) + 1);
	memcpy(out, base, n);
	out[n] = '/';
	strcpy(out + n + 1, value);
	return out;
}

/* value, or for a relative path value the folder judge was started in joined
 * to it (judge.ini's rule for every path key). NULL with err when the folder
 * cannot be told. */
static char *resolve_here(const struct config_key *k, const char *value, char *err, size_t errlen)
{
	if (!relative(k, value))
		return xstrdup(value);
	char *cwd = getcwd(NULL, 0);
	if (!cwd) {
		snprintf(err, errlen, "'%s': cannot tell the working folder: %s", k->name,
			 strerror(errno));
		return NULL;
	}
	char *out = join(cwd, value);
	free(cwd);
	return out;
}

static int set_key(struct judge_config *cfg, const struct config_key *k, const char *value,
		   char *err, size_t errlen)
{
	char *field = (char *)cfg + k->offset;
	if (k->type == CONF_PATH || k->type == CONF_PROG) {
		char *copy = resolve_here(k, value, err, errlen);
		if (!copy)
			return -1;
		free(*(char **)field);
		*(char **)field = copy;
		return 0;
	}
	if (k->type == CONF_STR) {
		if (!strcmp(k->name, "session_idle_action") && strcmp(value, "close") &&
		    strcmp(value, "pause")) {
			snprintf(err, errlen, "'%s' must be close or pause, got '%s'", k->name,
				 value);
			return -1;
		}
		char *copy = xstrdup(value);
		free(*(char **)field);
		*(char **)field = copy;
		return 0;
	}
	char *end;
	errno = 0;
	long v = strtol(value, &end, 10);
	if (errno || end == value || *end) {
		snprintf(err, errlen, "'%s' needs a whole number, got '%s'", k->name, value);
		return -1;
	}
	if (v < k->min || v > k->max) {
		snprintf(err, errlen, "'%s' must be between %ld and %ld, got %ld", k->name, k->min,
			 k->max, v);
		return -1;
	}
	*(long *)field = v;
	return 0;
}

void config_defaults(struct judge_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	char err[256];
	for (size_t i = 0; i < config_key_count; i++) {
		const struct config_key *k = &config_keys[i];
		char **field = (char **)((char *)cfg + k->offset);
		/* a path default stays as the table has it: config_resolve places it */
		if (k->type == CONF_PATH || k->type == CONF_PROG)
			*field = xstrdup(k->def);
		else if (set_key(cfg, k, k->def, err, sizeof err) < 0)
			abort(); /* a bad default is a bug in the table */
	}
}

void config_resolve(struct judge_config *cfg, const char *home)
{
	for (size_t i = 0; i < config_key_count; i++) {
		const struct config_key *k = &config_keys[i];
		char **field = (char **)((char *)cfg + k->offset);
		if ((k->type == CONF_PATH || k->type == CONF_PROG) && relative(k, *field)) {
			char *abs = join(home, *field);
			free(*field);
			*field = abs;
		}
	}
}

int config_set(struct judge_config *cfg, const char *name, const char *value, char *err,
	       size_t errlen)
{
	const struct config_key *k = find_key(name);
	if (!k) {
		snprintf(err, errlen, "unknown key '%s'", name);
		return -1;
	}
	return set_key(cfg, k, value, err, errlen);
}

static int on_ini(void *ctx, const char *section, const char *key, const char *value, char *err,
		  size_t errlen)
{
	const struct config_key *k = find_key(key);
	if (!k) {
		snprintf(err, errlen, "unknown key '%s'", key);
		return -1;
	}
	if (*section && strcmp(section, k->section)) {
		snprintf(err, errlen, "key '%s' belongs in [%s], not [%s]", key, k->section,
			 section);
		return -1;
	}
	return set_key(ctx, k, value, err, errlen);
}

int config_load(struct judge_config *cfg, const char *path, bool must_exist, char *err,
		size_t errlen)
{
	if (!must_exist && access(path, F_OK) < 0 && errno == ENOENT)
		return 0;
	return ini_parse_file(path, on_ini, cfg, err, errlen);
}

void config_release(struct judge_config *cfg)
{
	for (size_t i = 0; i < config_key_count; i++)
		if (config_keys[i].type != CONF_INT && config_keys[i].type != CONF_BOOL) {
			char **p = (char **)((char *)cfg + config_keys[i].offset);
			free(*p);
			*p = NULL;
		}
}
