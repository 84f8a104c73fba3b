/* test_node_zygote: Node runs forked from a Node zygote (warm_start on,
 * docs/warm-start.md "Node"), natively (the zygote of the workspace's key) and
 * under gVisor (the sandbox's). A program run warm sees what a fresh `node
 * main.js` sees, ends as it does (exit codes, exitCode, output at exit, the
 * report of an uncaught error, signals), gets its own Math.random, and nothing
 * a program did reaches the next one. The fresh reference: natively a
 * workspace without a key; under gVisor the sandbox's first run. Needs root,
 * Node and runsc. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/strbuf.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "runner/sandbox.h"

static struct judge_config cfg;
static struct lang_registry reg;
static const struct lang *js;

static enum sandbox_backend backend;

static void start_backend(const char *name)
{
	char err[512];
	struct sandbox_options opts;
	config_defaults(&cfg);
	free(cfg.sandbox);
	cfg.sandbox = strdup(name);
	cfg.gvisor_pool = 0;
	if (access("bin/box_init", X_OK) == 0)
		setenv("JUDGE_BOX_INIT", "bin/box_init", 0);
	free(cfg.warm_start);
	cfg.warm_start = strdup("on");
	if (access("bin/ns_init", X_OK) == 0)
		setenv("JUDGE_NS_INIT", "bin/ns_init", 0);
	cr_assert_eq(lang_load_dir(&reg, "languages", err, sizeof(err)), 0, "%s", err);
	js = lang_find(&reg, "node");
	cr_assert(js && js->zygote_argv, "node.ini names a zygote");
	cr_assert_eq(limits_sandbox_options(&cfg, &opts, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sandbox_global_init(&opts, err, sizeof(err)), 0, "init: %s", err);
}

static void start_native(void)
{
	backend = SANDBOX_NATIVE;
	start_backend("native");
}

static void start_gvisor(void)
{
	backend = SANDBOX_GVISOR;
	start_backend("gvisor");
}

static void stop(void)
{
	sandbox_global_shutdown();
	lang_registry_release(&reg);
	config_release(&cfg);
}

static struct sandbox *open_key(int slot, const char *key)
{
	char err[512];
	struct sandbox *sb;
	cr_assert_eq(sandbox_open(backend, slot, 16 << 20, &sb, err, sizeof(err)), 0, "open: %s",
		     err);
	cr_assert_eq(sandbox_set_reuse_key(sb, key), 0);
	return sb;
}

/* Runs src as file (main.js when NULL) with node.ini's argv, or node file */
static void run_file(struct sandbox *sb, const char *file, const char *src, const char *stdin_data,
		     struct run_result *res)
{
	const char *other[] = {js->run_argv[0], file, NULL};
	cr_assert_eq(sandbox_write_file(sb, file ? file : "main.js", src, strlen(src), 0644), 0);
	struct run_spec s = {.argv = file ? other : (const char *const *)js->run_argv,
			     .env = (const char *const *)js->env,
			     .ro_paths = (const char *const *)js->ro_paths,
			     .warm_argv = (const char *const *)js->warm_argv,
			     .zygote_argv = (const char *const *)js->zygote_argv,
			     .stdin_data = stdin_data,
			     .stdin_len = stdin_data ? strlen(stdin_data) : 0};
	struct limits_policy pol;
	limits_policy_from_config(&cfg, &pol);
	limits_run(&pol, NULL, NULL, NULL, &s.limits);
	s.limits.cpu_ms = 5000;
	s.limits.wall_ms = 10000;
	s.limits.memory_kb = 512 * 1024;
	s.limits.processes = 64;
	s.limits.stdout_bytes = 1 << 20;
	s.limits.stderr_bytes = 64 << 10;
	run_result_init(res);
	cr_assert_eq(sandbox_run(sb, &s, res), 0);
	cr_assert_neq(res->status, RUN_INTERNAL_ERROR, "%s", res->message);
}

static void run_js(struct sandbox *sb, const char *src, const char *stdin_data,
		   struct run_result *res)
{
	run_file(sb, NULL, src, stdin_data, res);
}

/* A forked child has one thread; a fresh node about a dozen */
#define WARM_MARK                                                                                  \
	"console.log(require('fs').readFileSync('/proc/self/status', 'utf8')"                      \
	".match(/Threads:\\s+(\\d+)/)[1] === '1' ? 'warm' : 'fresh');\n"

static void run_ok(struct sandbox *sb, const char *src, char *out, size_t len)
{
	struct run_result r;
	run_js(sb, src, NULL, &r);
	cr_assert_eq(r.status, RUN_OK, "%s: %s", run_status_name(r.status), r.err.buf);
	snprintf(out, len, "%s", r.out.buf);
	run_result_release(&r);
}

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

static const char *const fingerprint =
    "const fs = require('fs');\n"
    "console.log(process.argv, process.execArgv, process.argv0, process.execPath, process.title);\n"
    "console.log(__filename, __dirname, require.main === module, module.id, module.paths,\n"
    "  Object.keys(require.cache), process.cwd(), process.env);\n"
    "console.log(process.getuid(), process.getgid(), process.getgroups(), process.umask(),\n"
    "  typeof process.mainModule, process.exitCode, "
    "process.config.variables.node_module_version);\n"
    "console.log(Object.getOwnPropertyNames(globalThis).sort().join(' '));\n"
    "console.log(Object.keys(process).sort().join(' '));\n"
    "console.log(fs.readFileSync('/proc/self/limits', 'utf8'));\n"
    "console.log(fs.readdirSync('/tmp'));\n"
    "console.log(fs.readFileSync('/proc/self/cgroup', 'utf8'), "
    "fs.readFileSync('/proc/self/uid_map', 'utf8'));\n"
    "const st = fs.readFileSync('/proc/self/status', 'utf8');\n"
    "console.log(['Uid', 'Gid', 'Groups', 'CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb',\n"
    "  'NoNewPrivs', 'Seccomp', 'Seccomp_filters', 'NSpid', 'SigBlk', 'SigIgn']\n"
    "  .map((k) => (st.match(new RegExp('^' + k + ':[ \\\\t]*(.*)$', 'm')) || [])[1]));\n"
    "console.log(fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\\n').map((l) => l.split(' "
    "').slice(3).join(' ').replace(/box-\\d+/, 'box-N')));\n"
    "console.log(JSON.stringify(fs.readFileSync(0, 'utf8')), process.stdin.isTTY, "
    "process.stdout.isTTY);\n"
    "console.log(String(process.pid) === fs.readlinkSync('/proc/self'), new "
    "Error('x').stack.split('\\n').length);\n";

static void a_warm_run_sees_what_a_fresh_one_does(void)
{
	struct sandbox *w = open_key(1, "zygote");
	struct run_result fresh, warm;
	warm_up(w);
	run_js(w, fingerprint, "line one\nline two\n", &warm);
	sandbox_close(w);
	struct sandbox *f = open_key(1, NULL);
	run_js(f, fingerprint, "line one\nline two\n", &fresh);
	cr_assert_eq(fresh.status, RUN_OK, "%s", fresh.err.buf);
	cr_assert_eq(warm.status, RUN_OK, "%s", warm.err.buf);
	cr_assert_str_eq(warm.out.buf, fresh.out.buf);
	cr_assert_str_eq(warm.err.buf, "");
	run_result_release(&fresh);
	run_result_release(&warm);
	sandbox_close(f);
}

static void same_end(const char *src, enum run_status want)
{
	struct sandbox *w = open_key(1, "zygote"), *f = open_key(2, NULL);
	struct run_result warm, fresh;
	warm_up(w);
	run_js(w, src, NULL, &warm);
	run_js(f, src, NULL, &fresh);
	cr_assert_eq(warm.status, want, "%s: %s", run_status_name(warm.status), warm.err.buf);
	cr_assert_eq(fresh.status, warm.status);
	cr_assert_eq(fresh.exit_code, warm.exit_code);
	cr_assert_eq(fresh.signal, warm.signal);
	cr_assert_str_eq(warm.out.buf, fresh.out.buf);
	cr_assert_str_eq(warm.err.buf, fresh.err.buf);
	run_result_release(&warm);
	run_result_release(&fresh);
	sandbox_close(f);
	sandbox_close(w);
}

static void exit_codes_errors_output_at_exit_signals(void)
{
	same_end("console.log('a'); process.exit(3);\n", RUN_RUNTIME_ERROR);
	same_end("process.exitCode = 4; console.log('b');\n", RUN_RUNTIME_ERROR);
	same_end("process.stdout.write('no newline'); process.stderr.write('err');\n", RUN_OK);
	same_end("process.on('exit', (c) => console.log('exit', c)); console.log('body');\n",
		 RUN_OK);
	same_end("setTimeout(() => console.log('later'), 50); console.log('now');\n", RUN_OK);
	same_end("function f() { return g(); }\nfunction g() { throw new Error('boom'); }\nf();\n",
		 RUN_RUNTIME_ERROR);
	same_end("setTimeout(() => { throw new TypeError('late'); }, 10);\n", RUN_RUNTIME_ERROR);
	same_end("Promise.reject(new Error('rejected'));\n", RUN_RUNTIME_ERROR);
	same_end("x = ;\n", RUN_RUNTIME_ERROR);
	same_end("process.kill(process.pid, 'SIGKILL');\n", RUN_RUNTIME_ERROR);
	same_end("process.on('beforeExit', () => { if (!globalThis.done) { globalThis.done = 1;\n"
		 "  setTimeout(() => console.log('again'), 5); } }); console.log('x');\n",
		 RUN_OK);
}

static void random_differs_between_runs(void)
{
	char r1[256], r2[256], r3[256];
	const char *src =
	    "console.log(Math.random(), require('crypto').randomBytes(8).toString('hex'));\n";
	struct sandbox *a = open_key(1, "zygote");
	warm_up(a);
	run_ok(a, src, r1, sizeof(r1));
	run_ok(a, src, r2, sizeof(r2));
	run_ok(a, src, r3, sizeof(r3));
	cr_assert_str_neq(r1, r2);
	cr_assert_str_neq(r2, r3);
	cr_assert_str_neq(r1, r3);
	sandbox_close(a);
}

static void nothing_of_a_run_reaches_the_next(void)
{
	char out[1024];
	struct sandbox *a = open_key(1, "zygote");
	warm_up(a);
	run_ok(a,
	       WARM_MARK "globalThis.LEAK = 1; Object.prototype.leak = 1; Math.max = () => 7;\n"
			 "require('fs').writeFileSync('/tmp/leak', 'x'); process.env.LEAK = '1';\n"
			 "require.cache['/x'] = {}; process.on('SIGTERM', () => {});\n",
	       out, sizeof(out));
	cr_assert_str_eq(out, "warm\n");
	run_ok(a,
	       WARM_MARK
	       "const bad = [];\n"
	       "if (globalThis.LEAK || ({}).leak || Math.max(1, 2) !== 2) bad.push('globals');\n"
	       "if (require('fs').existsSync('/tmp/leak')) bad.push('/tmp');\n"
	       "if (process.env.LEAK) bad.push('env');\n"
	       "if (Object.keys(require.cache).length !== 1) bad.push('require.cache');\n"
	       "if (process.listenerCount('SIGTERM')) bad.push('SIGTERM');\n"
	       "console.log(bad.length ? 'LEAKED ' + bad.join(' ') : 'clean');\n",
	       out, sizeof(out));
	cr_assert_str_eq(out, "warm\nclean\n");
	sandbox_close(a);
}

/* Only runs of the script the zygote's children run (node.ini's main.js) are
 * forked: another script starts fresh, and is the one that runs. */
static void another_script_starts_fresh(void)
{
	struct sandbox *a = open_key(1, "zygote");
	struct run_result r;
	warm_up(a);
	run_file(a, "other.js", WARM_MARK "console.log(__filename);\n", NULL, &r);
	cr_assert_eq(r.status, RUN_OK, "%s", r.err.buf);
	cr_assert_str_eq(r.out.buf, "fresh\n/box/other.js\n");
	run_result_release(&r);
	sandbox_close(a);
}

/* every check under both backends */
TestSuite(node_zygote, .init = start_native, .fini = stop, .timeout = 180);
TestSuite(node_zygote_gvisor, .init = start_gvisor, .fini = stop, .timeout = 300);

Test(node_zygote, a_warm_run_sees_what_a_fresh_one_does)
{
	a_warm_run_sees_what_a_fresh_one_does();
}
Test(node_zygote, exit_codes_errors_output_at_exit_signals)
{
	exit_codes_errors_output_at_exit_signals();
}
Test(node_zygote, random_differs_between_runs)
{
	random_differs_between_runs();
}
Test(node_zygote, nothing_of_a_run_reaches_the_next)
{
	nothing_of_a_run_reaches_the_next();
}
Test(node_zygote_gvisor, a_warm_run_sees_what_a_fresh_one_does)
{
	a_warm_run_sees_what_a_fresh_one_does();
}
Test(node_zygote_gvisor, exit_codes_errors_output_at_exit_signals)
{
	exit_codes_errors_output_at_exit_signals();
}
Test(node_zygote_gvisor, random_differs_between_runs)
{
	random_differs_between_runs();
}
Test(node_zygote_gvisor, nothing_of_a_run_reaches_the_next)
{
	nothing_of_a_run_reaches_the_next();
}
Test(node_zygote, another_script_starts_fresh)
{
	another_script_starts_fresh();
}
Test(node_zygote_gvisor, another_script_starts_fresh)
{
	another_script_starts_fresh();
}
