/* test_install: package installs for sessions — the spec check, pip from a local
 * PEP 503 index the test serves, npm from registry.npmjs.org, the cache (repeat
 * installs with the upstream gone), install scripts that try another host, and
 * what an install may write in the box. Needs root and the runtimes under
 * /opt/judge/runtimes (make deps). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/xalloc.h"
#include "judge/grading/limits.h"
#include "runner/install/install.h"
#include "runner/install/regproxy.h"
#include "tests/fixture.h"

#define PYTHON	"/opt/judge/runtimes/python3.12/bin/python3.12"
#define NODE	"/opt/judge/runtimes/node22/bin/node"
#define NPM_CLI "/opt/judge/runtimes/node22/lib/node_modules/npm/bin/npm-cli.js"

/* the package folders python.ini and node.ini name (package_dir) */
#define PKG_DIR_PYTHON ".packages/python"
#define PKG_DIR_NODE   ".packages/node"

static const char *const py_ro[] = {"/opt/judge/runtimes/python3.12", NULL};
static const char *const node_ro[] = {"/opt/judge/runtimes/node22", NULL};
static const char *const pip_argv[] = {PYTHON, "-m", "pip", NULL};
static const char *const npm_argv[] = {NODE, NPM_CLI, NULL};
static struct judge_config cfg;
static char cache_dir[64], work_dir[64], cache_sub[96];

static void setup(void)
{
	fixture_native_start(&cfg);
	snprintf(cache_dir, sizeof cache_dir, "/tmp/judge-install-cache.XXXXXX");
	snprintf(work_dir, sizeof work_dir, "/tmp/judge-install-work.XXXXXX");
	cr_assert(mkdtemp(cache_dir) && mkdtemp(work_dir));
	snprintf(cache_sub, sizeof cache_sub, "%s/a/b", cache_dir);
}

static void rm_rf(const char *dir)
{
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/rm", "rm", "-rf", "--", dir, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
}

static void teardown(void)
{
	sandbox_global_shutdown();
	rm_rf(cache_dir);
	rm_rf(work_dir);
}

TestSuite(install, .init = setup, .fini = teardown);

static struct sandbox *open_box(void)
{
	struct sandbox *sb;
	char err[512];
	cr_assert_eq(sandbox_open(SANDBOX_NATIVE, 7, 64 << 20, &sb, err, sizeof err), 0, "%s", err);
	return sb;
}

static struct install_options options(const char *pip_index, const char *npm_registry)
{
	struct install_options o = {
	    .pip_index_url = pip_index,
	    .npm_registry = npm_registry,
	    .cache_dir = cache_sub, /* made with its parents by the first fetch */
	    .pip = {.argv = pip_argv, .ro_paths = py_ro, .dir = PKG_DIR_PYTHON},
	    .npm = {.argv = npm_argv, .ro_paths = node_ro, .dir = PKG_DIR_NODE},
	    .limits = {.cpu_ms = 120000,
		       .wall_ms = 180000,
		       .memory_kb = 1 << 20,
		       .processes = 128,
		       .stdout_bytes = 1 << 20,
		       .stderr_bytes = 1 << 20,
		       .file_bytes = 256 << 20,
		       .open_files = 1024,
		       .tmp_bytes = 256 << 20},
	};
	return o;
}

/* ---- helper servers (tests/integration/lib) ---- */

/* Starts a helper script that prints "ready <url>"; returns its pid, url filled. */
static pid_t start_helper(const char *const *argv, char *url, size_t len)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execv("/usr/bin/python3", (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	char buf[512] = "";
	size_t used = 0;
	int64_t deadline = clock_deadline_ms(15000);
	while (!strchr(buf, '\n') && used + 1 < sizeof buf) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		if (poll(&pf, 1, (int)clock_left_ms(deadline)) <= 0)
			break;
		ssize_t n = read(p[0], buf + used, sizeof buf - 1 - used);
		if (n <= 0)
			break;
		used += (size_t)n;
		buf[used] = 0;
	}
	close(p[0]);
	cr_assert(!strncmp(buf, "ready ", 6), "helper %s did not start: '%s'", argv[1], buf);
	buf[strcspn(buf, "\n")] = 0;
	snprintf(url, len, "%s", buf + 6);
	return pid;
}

static void stop_helper(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* A listener on every host address: what an install script must never reach. */
static int listener(int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	cr_assert(fd >= 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	cr_assert_eq(listen(fd, 16), 0);
	getsockname(fd, (struct sockaddr *)&a, &al);
	*port = ntohs(a.sin_port);
	return fd;
}

static int accepted(int fd)
{
	int n = 0, c;
	while ((c = accept(fd, NULL, NULL)) >= 0) {
		close(c);
		n++;
	}
	return n;
}

/* The host's first non-loopback IPv4 address (another host, as seen from a box). */
static void host_ip(char *out, size_t len)
{
	struct ifaddrs *ifs, *i;
	snprintf(out, len, "127.0.0.1");
	if (getifaddrs(&ifs) < 0)
		return;
	for (i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, out,
			  (socklen_t)len);
		break;
	}
	freeifaddrs(ifs);
}

/* Runs argv natively in sb with env; returns the result (release it). */
static void run_in(struct sandbox *sb, const char *const *argv, const char *const *env,
		   const char *const *ro, struct run_result *res)
{
	struct install_options o = options(NULL, NULL);
	struct run_spec spec = {.argv = argv, .env = env, .ro_paths = ro, .limits = o.limits};
	spec.limits.wall_ms = 30000;
	run_result_init(res);
	cr_assert_eq(sandbox_run(sb, &spec, res), 0);
}

/* Names directly in folder rel of the box, joined by ' ' (sorted). */
static void list_box(struct sandbox *sb, const char *rel, char *out, size_t len)
{
	char path[4096];
	struct dirent **ents;
	snprintf(path, sizeof path, "%s/%s", sandbox_box_path(sb), rel);
	out[0] = 0;
	int n = scandir(path, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (strcmp(ents[i]->d_name, ".") && strcmp(ents[i]->d_name, ".."))
			snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? " " : "",
				 ents[i]->d_name);
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
}

static void must_install(struct sandbox *sb, const struct install_options *o, const char *mgr,
			 const char *const *pkgs, long *ms)
{
	struct install_result r;
	install_result_init(&r);
	int rc = install_packages(sb, o, mgr, pkgs, &r);
	cr_assert_eq(rc, 0, "%s", r.message);
	cr_assert(r.ok, "%s install failed: %s\n%s", mgr, r.message, r.output.buf);
	*ms = r.time_ms;
	install_result_release(&r);
}

/* ---- the spec check ---- */

struct spec_case {
	const char *manager, *spec;
	bool ok;
};

static const struct spec_case spec_cases[] = {
    {"pip", "requests", true},
    {"pip", "requests==2.31.0", true},
    {"pip", "requests>=2,<3", true},
    {"pip", "requests[socks]", true},
    {"pip", "requests[socks,security]~=2.31", true},
    {"pip", "numpy==1.26.*", true},
    {"pip", "zope.interface!=5.0", true},
    {"pip", "typing_extensions<=4.9", true},
    {"pip", "a", true},
    {"pip", "pkg===1.0", true},
    {"pip", "Django>3", true},
    {"pip", "../x", false},
    {"pip", "./x", false},
    {"pip", "/x", false},
    {"pip", "--index-url=http://evil/", false},
    {"pip", "-e.", false},
    {"pip", "-r", false},
    {"pip", "git+https://github.com/x/y", false},
    {"pip", "http://evil/x.whl", false},
    {"pip", "file:///etc/passwd", false},
    {"pip", "pkg @ https://evil/x.whl", false},
    {"pip", "pkg@https://evil/x.whl", false},
    {"pip", "x.whl", false},
    {"pip", "x.tar.gz", false},
    {"pip", "requests ==2", false},
    {"pip", "requests\t", false},
    {"pip", "req\nuests", false},
    {"pip", "", false},
    {"pip", "requests; python_version<'3'", false},
    {"pip", "requests[", false},
    {"pip", "requests[]", false},
    {"pip", "requests==", false},
    {"pip", "requests=2", false},
    {"pip", "requests==2,", false},
    {"pip", "-requests", false},
    {"pip", "_x", false},
    {"pip", "x-", false},
    {"pip", "caf\xc3\xa9", false},
    {"npm", "is-number", true},
    {"npm", "is-number@7.0.0", true},
    {"npm", "is-number@^7", true},
    {"npm", "is-number@~7.0.0", true},
    {"npm", "is-number@latest", true},
    {"npm", "is-number@>=7", true},
    {"npm", "is-number@1.x||2.x", true},
    {"npm", "@types/node", true},
    {"npm", "@types/node@22.1.0-beta.1", true},
    {"npm", "JSONStream", true},
    {"npm", "lodash.get", true},
    {"npm", "../x", false},
    {"npm", "./x", false},
    {"npm", "/x", false},
    {"npm", "~/x", false},
    {"npm", "--registry=http://evil/", false},
    {"npm", "-g", false},
    {"npm", "git+https://github.com/x/y.git", false},
    {"npm", "github:x/y", false},
    {"npm", "x/y", false},
    {"npm", "npm:is-number", false},
    {"npm", "file:../x", false},
    {"npm", "https://evil/x.tgz", false},
    {"npm", "x.tgz", false},
    {"npm", "is-number@", false},
    {"npm", "is-number@-1", false},
    {"npm", "is-number@1 || 2", false},
    {"npm", "@/x", false},
    {"npm", "@scope", false},
    {"npm", "@scope/", false},
    {"npm", ".hidden", false},
    {"npm", "_private", false},
    {"npm", "x@1@2", false},
    {"npm", "", false},
    {"cargo", "serde", false},
};

Test(install, check_package_table)
{
	char why[256];
	int n = 0;
	for (size_t i = 0; i < sizeof spec_cases / sizeof spec_cases[0]; i++, n++) {
		const struct spec_case *c = &spec_cases[i];
		why[0] = 0;
		bool ok = install_check_package(c->manager, c->spec, why, sizeof why);
		cr_expect_eq(ok, c->ok, "%s '%s': expected %s (%s)", c->manager, c->spec,
			     c->ok ? "accepted" : "refused", why);
		if (!ok)
			cr_expect(why[0], "%s '%s': refused without a reason", c->manager, c->spec);
	}
	char long_spec[256];
	memset(long_spec, 'a', 201);
	long_spec[201] = 0;
	cr_expect(!install_check_package("pip", long_spec, why, sizeof why));
	cr_expect(!install_check_package("npm", long_spec, why, sizeof why));
	cr_expect(!install_check_package("pip", NULL, why, sizeof why));
	cr_expect(!install_check_package(NULL, "x", why, sizeof why));
	cr_log_info("install_check_package: %d table cases", n + 4);
}

/* A bad spec is refused before anything runs: no package folder appears. */
Test(install, bad_spec_refused_before_running)
{
	struct sandbox *sb = open_box();
	struct install_options o = options("http://127.0.0.1:9/simple/", "http://127.0.0.1:9/");
	const char *const pkgs[] = {"ok-pkg", "--index-url=http://evil/", NULL};
	struct install_result r;
	install_result_init(&r);
	cr_expect_eq(install_packages(sb, &o, "pip", pkgs, &r), -1);
	cr_expect(!r.ok);
	cr_expect(strstr(r.message, "option"), "%s", r.message);
	const char *const npkgs[] = {"../x", NULL};
	cr_expect_eq(install_packages(sb, &o, "npm", npkgs, &r), -1);
	cr_expect(strstr(r.message, "path"), "%s", r.message);
	const char *const none[] = {NULL};
	cr_expect_eq(install_packages(sb, &o, "pip", none, &r), -1);
	cr_expect_eq(install_packages(sb, &o, "gem", pkgs, &r), -1);
	/* the caller's package folder must stay inside the box */
	const char *const good[] = {"six", NULL};
	const char *bad_dirs[] = {"../x", "/abs", ".packages/../..", "", NULL};
	for (int i = 0; bad_dirs[i]; i++) {
		struct install_options b = o;
		b.pip.dir = bad_dirs[i];
		cr_expect_eq(install_packages(sb, &b, "pip", good, &r), -1, "%s", bad_dirs[i]);
		cr_expect(strstr(r.message, "package folder"), "%s", r.message);
	}
	struct install_options none_cfg = o;
	none_cfg.npm.argv = NULL;
	cr_expect_eq(install_packages(sb, &none_cfg, "npm", good, &r), -1);
	cr_expect(strstr(r.message, "not configured"), "%s", r.message);
	char names[512];
	list_box(sb, "", names, sizeof names);
	cr_expect_str_empty(names, "the box holds '%s'", names);
	install_result_release(&r);
	sandbox_close(sb);
}

/* ---- pip ---- */

static const char *const py_env[] = {"PATH=/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8",
				     "PYTHONPATH=/box/" PKG_DIR_PYTHON, NULL};

/* python in the session's box imports the installed module and calls it. */
static void expect_tinypkg(struct sandbox *sb)
{
	const char *const argv[] = {PYTHON, "-c", "import tinypkg; print(tinypkg.hello())", NULL};
	struct run_result res;
	run_in(sb, argv, py_env, py_ro, &res);
	cr_expect_eq(res.status, RUN_OK, "%s %s", res.message, res.err.buf);
	cr_expect_str_eq(res.out.buf, "hello from tinypkg 1.0\n");
	run_result_release(&res);
}

Test(install, pip_local_index_then_cache_without_it, .timeout = 300)
{
	char url[512], root[128];
	snprintf(root, sizeof root, "%s/index", work_dir);
	const char *const helper[] = {"python3",   "tests/integration/lib/pep503.py",
				      "--root",	   root,
				      "--port",	   "0",
				      "--package", "tinypkg==1.0",
				      NULL};
	pid_t index = start_helper(helper, url, sizeof url);
	struct install_options o = options(url, NULL);
	const char *const pkgs[] = {"tinypkg==1.0", NULL};
	long first_ms, repeat_ms;

	struct sandbox *sb = open_box();
	must_install(sb, &o, "pip", pkgs, &first_ms);
	expect_tinypkg(sb);
	char names[512];
	list_box(sb, "", names, sizeof names);
	cr_expect_str_eq(names, ".packages");
	list_box(sb, ".packages", names, sizeof names);
	cr_expect_str_eq(names, "python");
	sandbox_close(sb);

	stop_helper(index); /* the repeat must come from the cache alone */
	sb = open_box();
	must_install(sb, &o, "pip", pkgs, &repeat_ms);
	expect_tinypkg(sb);
	sandbox_close(sb);
	fprintf(stderr, "MEASURE pip first_ms=%ld repeat_ms=%ld\n", first_ms, repeat_ms);
}

/* ---- npm ---- */

static const char *const node_env[] = {"PATH=/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8", NULL};

/* node in the session's box requires the installed package and prints js's value. */
static void expect_node(struct sandbox *sb, const char *js, const char *want)
{
	char code[512];
	snprintf(code, sizeof code,
		 "const r = require('module').createRequire('/box/" PKG_DIR_NODE "/'); %s", js);
	const char *const argv[] = {NODE, "-e", code, NULL};
	struct run_result res;
	run_in(sb, argv, node_env, node_ro, &res);
	cr_expect_eq(res.status, RUN_OK, "%s %s", res.message, res.err.buf);
	cr_expect_str_eq(res.out.buf, want);
	run_result_release(&res);
}

/* True when registry.npmjs.org answers from here (else the test is skipped). */
static bool npmjs_reachable(void)
{
	int st = system("curl -fsS -m 10 -o /dev/null https://registry.npmjs.org/is-number");
	return st == 0;
}

Test(install, npm_registry_then_cache, .timeout = 300)
{
	if (!npmjs_reachable())
		cr_skip_test("registry.npmjs.org is not reachable from here");
	struct install_options o = options(NULL, "https://registry.npmjs.org/");
	const char *const pkgs[] = {"is-number@7.0.0", NULL};
	long first_ms, repeat_ms;
	struct sandbox *sb = open_box();
	must_install(sb, &o, "npm", pkgs, &first_ms);
	expect_node(sb, "console.log(r('is-number')(5), r('is-number')('x'))", "true false\n");
	char names[512];
	list_box(sb, "", names, sizeof names);
	cr_expect_str_eq(names, ".packages");
	list_box(sb, ".packages", names, sizeof names);
	cr_expect_str_eq(names, "node");
	sandbox_close(sb);

	sb = open_box();
	must_install(sb, &o, "npm", pkgs, &repeat_ms);
	expect_node(sb, "console.log(r('is-number')(7))", "true\n");
	sandbox_close(sb);
	fprintf(stderr, "MEASURE npm first_ms=%ld repeat_ms=%ld\n", first_ms, repeat_ms);
}

/* ---- install scripts that try another host ---- */

/* Installs pkg of mgr from a local registry (helper) whose install script dials
 * the host's own address: the install must fail with the script's error and no
 * connection may reach the listener there. */
static void hostile(const char *mgr, const char *script, const char *flag, const char *pkg,
		    const char *said)
{
	char url[512], root[128], target[128], ip[64];
	int port, lfd = listener(&port);
	host_ip(ip, sizeof ip);
	snprintf(target, sizeof target, "%s:%d", ip, port);
	snprintf(root, sizeof root, "%s/%s", work_dir, mgr);
	const char *const helper[] = {"python3", script, "--root", root, "--port",
				      "0",	 flag,	 target,   NULL};
	pid_t reg = start_helper(helper, url, sizeof url);
	bool pip = !strcmp(mgr, "pip");
	struct install_options o = options(pip ? url : NULL, pip ? NULL : url);
	const char *const pkgs[] = {pkg, NULL};
	struct install_result r;
	install_result_init(&r);
	struct sandbox *sb = open_box();
	cr_assert_eq(install_packages(sb, &o, mgr, pkgs, &r), 0, "%s", r.message);
	stop_helper(reg);
	cr_expect(!r.ok, "the install of %s reached %s:\n%s", pkg, target, r.output.buf);
	cr_expect(strstr(r.message, "exited with code"), "%s", r.message);
	cr_expect(strstr(r.output.buf, said), "no '%s' in the output:\n%s", said, r.output.buf);
	cr_expect_eq(accepted(lfd), 0, "an install script reached %s", target);
	close(lfd);
	sandbox_close(sb);
	install_result_release(&r);
}

Test(install, npm_postinstall_cannot_reach_another_host, .timeout = 300)
{
	hostile("npm", "tests/integration/lib/npmreg.py", "--hostile", "hostile-post",
		"hostile-post: ");
}

Test(install, pip_sdist_cannot_reach_another_host, .timeout = 300)
{
	hostile("pip", "tests/integration/lib/pep503.py", "--sdist-hostile", "hostile-sdist",
		"hostile-sdist: cannot reach");
}

/* ---- what an install may write, and where it may connect ---- */

/* A run with box_subdir writes into that folder only and sees nothing else of
 * the box: the session's files stay unseen and unchanged. */
Test(install, box_subdir_is_the_only_writable_place)
{
	struct sandbox *sb = open_box();
	cr_assert_eq(sandbox_write_file(sb, "session.txt", "mine\n", 5, 0644), 0);
	struct install_result r;
	install_result_init(&r);
	/* a registry nobody listens on: the folder is made, pip then fails */
	struct install_options o = options("http://127.0.0.1:9/simple/", NULL);
	const char *const pkgs[] = {"nothing-here", NULL};
	cr_assert_eq(install_packages(sb, &o, "pip", pkgs, &r), 0, "%s", r.message);
	cr_expect(!r.ok);
	install_result_release(&r);

	const char *const argv[] = {"/bin/sh", "-c",
				    "echo in > /box/" PKG_DIR_PYTHON
				    "/inside && echo wrote-inside; "
				    "ls -A /box; echo x > /box/evil || echo no-box; "
				    "echo x > /box/.packages/evil || echo no-packages; "
				    "cat /box/session.txt || echo unseen",
				    NULL};
	struct run_spec spec = {.argv = argv, .env = node_env, .box_subdir = PKG_DIR_PYTHON};
	spec.limits = options(NULL, NULL).limits;
	struct run_result res;
	run_result_init(&res);
	cr_assert_eq(sandbox_run(sb, &spec, &res), 0);
	cr_expect_eq(res.status, RUN_OK, "%s", res.message);
	cr_expect_str_eq(res.out.buf, "wrote-inside\n.packages\nno-box\nno-packages\nunseen\n");
	run_result_release(&res);
	char names[512];
	list_box(sb, "", names, sizeof names);
	cr_expect_str_eq(names, ".packages session.txt");
	list_box(sb, PKG_DIR_PYTHON, names, sizeof names);
	cr_expect_str_eq(names, "inside");
	struct strbuf sbuf;
	strbuf_init(&sbuf);
	cr_expect_eq(sandbox_read_file(sb, "session.txt", &sbuf, 100), 0);
	cr_expect_str_eq(sbuf.buf, "mine\n");
	strbuf_release(&sbuf);
	sandbox_close(sb);
}

/* A symlink the session planted for the package folder is never followed: the
 * install fails with a clear error, and nothing is written where it points. */
Test(install, planted_symlink_refused)
{
	struct sandbox *sb = open_box();
	const char *const argv[] = {
	    "/bin/sh", "-c", "mkdir -p /box/elsewhere && ln -s /box/elsewhere /box/.packages",
	    NULL};
	struct run_result res;
	run_in(sb, argv, node_env, NULL, &res);
	cr_assert_eq(res.status, RUN_OK, "%s %s", res.message, res.err.buf);
	run_result_release(&res);
	struct install_options o = options("http://127.0.0.1:9/simple/", NULL);
	const char *const pkgs[] = {"tinypkg", NULL};
	struct install_result r;
	install_result_init(&r);
	cr_expect_eq(install_packages(sb, &o, "pip", pkgs, &r), -1);
	cr_expect(strstr(r.message, "package folder"), "%s", r.message);
	install_result_release(&r);
	char names[512];
	list_box(sb, "elsewhere", names, sizeof names);
	cr_expect_str_empty(names);

	/* the sandbox's own bind refuses it too (a link swapped in after the check) */
	const char *const ls[] = {"/bin/ls", "/box", NULL};
	struct run_spec spec = {.argv = ls, .env = node_env, .box_subdir = ".packages/python"};
	spec.limits = options(NULL, NULL).limits;
	run_result_init(&res);
	cr_assert_eq(sandbox_run(sb, &spec, &res), 0);
	cr_expect_eq(res.status, RUN_INTERNAL_ERROR);
	cr_expect(strstr(res.message, "bind box folder"), "%s", res.message);
	run_result_release(&res);
	sandbox_close(sb);
}

/* Inside the install's namespace only the proxy answers, and it forwards only
 * its routes: other paths are 403, other addresses unreachable, names unknown. */
Test(install, proxy_refuses_other_routes_and_hosts, .timeout = 120)
{
	struct regproxy *rp;
	char err[512], code[3072], ip[64];
	struct regproxy_options po = {.pip_index_url = "http://127.0.0.1:9/simple/",
				      .npm_registry = "http://127.0.0.1:9/",
				      .cache_dir = cache_dir};
	cr_assert_eq(regproxy_start(&po, &rp, err, sizeof err), 0, "%s", err);
	int port, lfd = listener(&port);
	host_ip(ip, sizeof ip);
	snprintf(
	    code, sizeof code,
	    "import socket, urllib.request, urllib.error\n"
	    "def get(p):\n"
	    "    try:\n"
	    "        return urllib.request.urlopen('http://127.0.0.1:%d' + p, timeout=10).status\n"
	    "    except urllib.error.HTTPError as e:\n"
	    "        return e.code\n"
	    "for p in ['/etc/passwd', '/pip-files/x.whl', '/pip/../../x', '/npm/%%2e%%2e/x', "
	    "'/other/']:\n"
	    "    print(p, get(p))\n"
	    "for h in [('%s', %d), ('127.0.0.1', %d), ('1.1.1.1', 80)]:\n"
	    "    try:\n"
	    "        socket.create_connection(h, timeout=3); print(h[0], 'connected')\n"
	    "    except OSError as e:\n"
	    "        print(h[0], 'refused')\n"
	    "try:\n"
	    "    socket.getaddrinfo('registry.npmjs.org', 443); print('resolved')\n"
	    "except OSError:\n"
	    "    print('no dns')\n"
	    "for raw in [b'garbage\\r\\n\\r\\n', b'HEAD /pip/x/ HTTP/1.1\\r\\n\\r\\n', "
	    "b'\\x00\\xff' * 9000]:\n"
	    "    s = socket.create_connection(('127.0.0.1', %d), timeout=10)\n"
	    "    try:\n"
	    "        s.sendall(raw); print(s.recv(12).decode(errors='replace') or 'closed')\n"
	    "    except ConnectionResetError:\n"
	    "        print('closed')\n",
	    regproxy_port(rp), ip, port, port, regproxy_port(rp));
	const char *const argv[] = {PYTHON, "-c", code, NULL};
	struct run_spec spec = {
	    .argv = argv, .env = py_env, .ro_paths = py_ro, .net_ns_fd = regproxy_netns_fd(rp)};
	spec.limits = options(NULL, NULL).limits;
	struct sandbox *sb = open_box();
	struct run_result res;
	run_result_init(&res);
	cr_assert_eq(sandbox_run(sb, &spec, &res), 0);
	cr_expect_eq(res.status, RUN_OK, "%s %s", res.message, res.err.buf);
	char want[512];
	snprintf(want, sizeof want,
		 "/etc/passwd 403\n/pip-files/x.whl 403\n/pip/../../x 403\n/npm/%%2e%%2e/x 403\n"
		 "/other/ 403\n%s refused\n127.0.0.1 refused\n1.1.1.1 refused\nno dns\n"
		 "HTTP/1.1 400\nHTTP/1.1 405\nclosed\n",
		 ip);
	cr_expect_str_eq(res.out.buf, want);
	struct regproxy_stats st;
	regproxy_stats(rp, &st);
	cr_expect_eq(st.refused, 5);
	cr_expect_eq(st.fetches, 0);
	cr_expect_eq(accepted(lfd), 0);
	close(lfd);
	run_result_release(&res);
	sandbox_close(sb);
	regproxy_stop(rp);
}

/* A dependency comes from the index too, absolute links on the index's host go
 * through the proxy, and pages older than meta_ttl_s are served stale when the
 * index is gone. */
Test(install, pip_dependency_absolute_links_stale_pages, .timeout = 300)
{
	char url[512], root[128];
	snprintf(root, sizeof root, "%s/index", work_dir);
	const char *const helper[] = {"python3",    "tests/integration/lib/pep503.py",
				      "--root",	    root,
				      "--port",	    "0",
				      "--package",  "tinyapp==2.0",
				      "--package",  "tinydep==0.5",
				      "--depends",  "tinyapp:tinydep",
				      "--absolute", NULL};
	pid_t index = start_helper(helper, url, sizeof url);
	struct install_options o = options(url, NULL);
	o.meta_ttl_s = 1;
	const char *const pkgs[] = {"tinyapp>=1,<3", NULL};
	const char *const argv[] = {
	    PYTHON, "-c", "import tinyapp, tinydep; print(tinyapp.hello(), tinydep.hello())", NULL};
	long ms;
	for (int round = 0; round < 2; round++) {
		struct sandbox *sb = open_box();
		must_install(sb, &o, "pip", pkgs, &ms);
		struct run_result res;
		run_in(sb, argv, py_env, py_ro, &res);
		cr_expect_eq(res.status, RUN_OK, "%s %s", res.message, res.err.buf);
		cr_expect_str_eq(res.out.buf, "hello from tinyapp 2.0 hello from tinydep 0.5\n");
		run_result_release(&res);
		sandbox_close(sb);
		if (round == 0) {
			stop_helper(index);
			sleep(2); /* every page is stale now */
		}
	}
}

/* ---- the proxy's page rewrite, pure ---- */

struct page_case {
	const char *index, *page, *html, *want;
};

static const struct page_case page_cases[] = {
    /* pypi.org: files on files.pythonhosted.org, hash fragments kept */
    {"https://pypi.org/simple/", "https://pypi.org/simple/six/",
     "<a href=\"https://files.pythonhosted.org/packages/a/b/six-1.16.0.whl#sha256=ab\">six</a>",
     "<a href=\"http://127.0.0.1:4000/pip-files/packages/a/b/six-1.16.0.whl#sha256=ab\">six</a>"},
    /* another index: files.pythonhosted.org is not its host, left alone */
    {"http://idx.example/simple", "http://idx.example/simple/six/",
     "<a href=\"https://files.pythonhosted.org/x.whl\">",
     "<a href=\"https://files.pythonhosted.org/x.whl\">"},
    /* relative links resolved against the page */
    {"http://idx.example/simple/", "http://idx.example/simple/six/",
     "<a href='../../files/six.whl'>", "<a href='http://127.0.0.1:4000/pip-host/files/six.whl'>"},
    {"http://idx.example/simple/", "http://idx.example/simple/six/", "<A HREF=\"six.whl\">",
     "<A HREF=\"http://127.0.0.1:4000/pip/six/six.whl\">"},
    /* absolute on the index's host, under the index and beside it */
    {"http://idx.example:8080/pypi/simple/", "http://idx.example:8080/pypi/simple/six/",
     "<a href=\"http://idx.example:8080/pypi/simple/six/f.whl\"><a href=\"http://"
     "idx.example:8080/dl/f.whl\">",
     "<a href=\"http://127.0.0.1:4000/pip/six/f.whl\"><a "
     "href=\"http://127.0.0.1:4000/pip-host/dl/f.whl\">"},
    /* another host, an unterminated attribute and no links at all */
    {"http://idx.example/simple/", "http://idx.example/simple/six/",
     "<a href=\"http://evil.example/x.whl\">", "<a href=\"http://evil.example/x.whl\">"},
    {"http://idx.example/simple/", "http://idx.example/simple/six/", "<a href=\"six.whl",
     "<a href=\"http://127.0.0.1:4000/pip/six/six.whl"},
    {"http://idx.example/simple/", "http://idx.example/simple/six/",
     "href=x href=", "href=x href="},
    {"http://idx.example/simple/", "http://idx.example/simple/six/", "", ""},
};

Test(install, proxy_rewrites_page_links)
{
	for (size_t i = 0; i < sizeof page_cases / sizeof page_cases[0]; i++) {
		const struct page_case *c = &page_cases[i];
		struct strbuf out;
		strbuf_init(&out);
		regproxy_rewrite_pip_page(c->index, 4000, c->page, c->html, strlen(c->html), &out);
		cr_expect_str_eq(out.len ? out.buf : "", c->want, "case %zu", i);
		strbuf_release(&out);
	}
}

/* A box folder that is not a plain relative path is refused before the run. */
Test(install, bad_box_subdir_refused)
{
	static const char *const bad[] = {"../x", "/x", "a//b", "a/./b", ".", "a/..", "a/", ""};
	const char *const argv[] = {"/bin/true", NULL};
	struct sandbox *sb = open_box();
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct run_spec spec = {.argv = argv, .env = node_env, .box_subdir = bad[i]};
		spec.limits = options(NULL, NULL).limits;
		struct run_result res;
		run_result_init(&res);
		cr_assert_eq(sandbox_run(sb, &spec, &res), 0);
		cr_expect_eq(res.status, RUN_INTERNAL_ERROR, "'%s'", bad[i]);
		cr_expect(strstr(res.message, "bad box folder"), "'%s': %s", bad[i], res.message);
		run_result_release(&res);
	}
	sandbox_close(sb);
}

/* ---- a gVisor session's workspace ---- */

static void setup_gvisor(void)
{
	char err[512];
	config_defaults(&cfg);
	free(cfg.sandbox);
	cfg.sandbox = strdup("auto");
	cfg.gvisor_pool = 0;
	struct sandbox_options opts;
	cr_assert_eq(limits_sandbox_options(&cfg, &opts, err, sizeof err), 0, "%s", err);
	cr_assert_eq(sandbox_global_init(&opts, err, sizeof err), 0, "%s", err);
	snprintf(cache_dir, sizeof cache_dir, "/tmp/judge-install-cache.XXXXXX");
	snprintf(work_dir, sizeof work_dir, "/tmp/judge-install-work.XXXXXX");
	cr_assert(mkdtemp(cache_dir) && mkdtemp(work_dir));
	snprintf(cache_sub, sizeof cache_sub, "%s/a/b", cache_dir);
}

/* The install runs natively on a gVisor workspace's box, and the session's own
 * runs (in gVisor) then import the package. */
TestSuite(install_gvisor, .init = setup_gvisor, .fini = teardown);

Test(install_gvisor, workspace, .timeout = 300)
{
	char why[256], err[512], url[512], root[128];
	if (!sandbox_backend_works(SANDBOX_GVISOR, why, sizeof why))
		cr_skip_test("gvisor does not work here: %s", why);
	snprintf(root, sizeof root, "%s/index", work_dir);
	const char *const helper[] = {"python3",   "tests/integration/lib/pep503.py",
				      "--root",	   root,
				      "--port",	   "0",
				      "--package", "tinypkg==1.0",
				      NULL};
	pid_t index = start_helper(helper, url, sizeof url);
	struct install_options o = options(url, NULL);
	const char *const pkgs[] = {"tinypkg", NULL};
	struct sandbox *sb;
	cr_assert_eq(sandbox_open(SANDBOX_GVISOR, 7, 64 << 20, &sb, err, sizeof err), 0, "%s", err);
	long ms;
	must_install(sb, &o, "pip", pkgs, &ms);
	stop_helper(index);
	expect_tinypkg(sb);
	sandbox_close(sb);
}

/* A second install into the same box adds to the first (a session installs
 * one package, then another), and installing the same one again is fine. */
Test(install, pip_second_install_keeps_the_first, .timeout = 300)
{
	char url[512], root[128];
	snprintf(root, sizeof root, "%s/index", work_dir);
	const char *const helper[] = {"python3",   "tests/integration/lib/pep503.py",
				      "--root",	   root,
				      "--port",	   "0",
				      "--package", "tinypkg==1.0",
				      "--package", "tinydep==0.5",
				      NULL};
	pid_t index = start_helper(helper, url, sizeof url);
	struct install_options o = options(url, NULL);
	const char *const first[] = {"tinypkg", NULL}, *const second[] = {"tinydep==0.5", NULL};
	long ms;
	struct sandbox *sb = open_box();
	must_install(sb, &o, "pip", first, &ms);
	must_install(sb, &o, "pip", second, &ms);
	must_install(sb, &o, "pip", first, &ms);
	stop_helper(index);
	const char *const argv[] = {
	    PYTHON, "-c", "import tinypkg, tinydep; print(tinypkg.hello(), tinydep.hello())", NULL};
	struct run_result res;
	run_in(sb, argv, py_env, py_ro, &res);
	cr_expect_eq(res.status, RUN_OK, "%s %s", res.message, res.err.buf);
	cr_expect_str_eq(res.out.buf, "hello from tinypkg 1.0 hello from tinydep 0.5\n");
	run_result_release(&res);
	sandbox_close(sb);
}

/* npm from a local registry (its tarball URLs rewritten to the proxy), a second
 * install keeping the first, and both again from the cache with it stopped. */
Test(install, npm_local_registry_second_install_and_cache, .timeout = 300)
{
	char url[512], root[128];
	snprintf(root, sizeof root, "%s/npm", work_dir);
	const char *const helper[] = {"python3",   "tests/integration/lib/npmreg.py",
				      "--root",	   root,
				      "--port",	   "0",
				      "--package", "tinynpm@1.0.0",
				      "--package", "othernpm@2.1.0",
				      NULL};
	pid_t reg = start_helper(helper, url, sizeof url);
	struct install_options o = options(NULL, url);
	const char *const first[] = {"tinynpm", NULL}, *const second[] = {"othernpm@^2", NULL};
	const char *const both[] = {"tinynpm@1.0.0", "othernpm@2.1.0", NULL};
	const char *js = "console.log(r('tinynpm').hello(), r('othernpm').hello())";
	const char *want = "hello from tinynpm 1.0.0 hello from othernpm 2.1.0\n";
	long ms;
	struct sandbox *sb = open_box();
	must_install(sb, &o, "npm", first, &ms);
	must_install(sb, &o, "npm", second, &ms);
	expect_node(sb, js, want);
	sandbox_close(sb);
	stop_helper(reg);
	sb = open_box();
	must_install(sb, &o, "npm", both, &ms);
	expect_node(sb, js, want);
	sandbox_close(sb);
}

/* The package folders a session's start makes (session_spec.box_dirs): both
 * managers', and once made (twice is no error) owned by the box's uid. */
Test(install, folders)
{
	char names[512];
	struct sandbox *sb = open_box();
	struct install_options o = options(NULL, NULL);
	char **dirs = install_folders(&o);
	cr_assert(dirs[0] && dirs[1] && !dirs[2]);
	for (int pass = 0; pass < 2; pass++)
		for (char **d = dirs; *d; d++)
			cr_assert_eq(sandbox_file_mkdir(sb, *d), 0, "%s", *d);
	xstrvfree(dirs);
	list_box(sb, ".packages", names, sizeof names);
	cr_expect_str_eq(names, "node python");
	const char *const argv[] = {
	    "/bin/sh", "-c", "touch /box/.packages/python/x /box/.packages/node/y && echo ok",
	    NULL};
	struct run_result res;
	run_in(sb, argv, node_env, NULL, &res);
	cr_expect_str_eq(res.out.buf, "ok\n", "%s", res.err.buf);
	run_result_release(&res);
	dirs = install_folders(NULL);
	cr_expect_null(dirs[0]);
	xstrvfree(dirs);
	sandbox_close(sb);
}
