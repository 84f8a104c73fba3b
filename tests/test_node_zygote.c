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

/* A forked child has one thread; a fresh node about a dozen */
#define WARM_MARK                                                                                  \
	"console.log(require('fs').readFileSync('/proc/self/status', 'utf8')"                      \
	".match(/Threads:\\s+(\\d+)/)[1] === '1' ? 'warm' : 'fresh');\n"

#include "tests/zygote_setup.h"

static void start_native(void)
{
	zygote_start(SANDBOX_NATIVE, "node", 5000, 512 * 1024);
}

static void start_gvisor(void)
{
	zygote_start(SANDBOX_GVISOR, "node", 5000, 512 * 1024);
}

/* Runs src as main.js with node.ini's argv */
static void run_js(struct sandbox *sb, const char *src, const char *stdin_data,
		   struct run_result *res)
{
	run_src(sb, NULL, src, stdin_data, 0, 0, res);
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
	struct sandbox *w = open_ws(1);
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
	check_random_differs(
	    "console.log(Math.random(), require('crypto').randomBytes(8).toString('hex'));\n");
}

static void nothing_of_a_run_reaches_the_next(void)
{
	char out[1024];
	struct sandbox *a = open_ws(1);
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
	struct sandbox *a = open_ws(1);
	struct run_result r;
	warm_up(a);
	run_src(a, "other.js", WARM_MARK "console.log(__filename);\n", NULL, 0, 0, &r);
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
