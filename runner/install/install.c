/* install: package installs into a session's package folder (see install.h).
 *
 * How it works. install_packages checks every spec, makes the box's package
 * folder (no symlink followed), starts a registry proxy (regproxy.h: a network
 * namespace whose only reachable address is the host's listener) and runs the
 * manager natively in a sandbox around the box that joins that namespace and
 * sees only the package folder of the box, writable (run_spec.box_subdir): an
 * install script can neither reach another host nor write elsewhere in the
 * session folder. Why native whatever the session's backend: gVisor has a
 * network stack of its own and could not join the host's namespace, and the
 * manager is not the session's code.
 */
#define _GNU_SOURCE
#include "runner/install/install.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/xalloc.h"
#include "runner/install/regproxy.h"

#define SPEC_MAX     200
#define PACKAGES_MAX 64
#define PIP_INDEX    "/pip/"
#define NPM_REGISTRY "/npm/"
#define OUTPUT_MAX   (64 << 10)

static bool why_f(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool why_f(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return false;
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

/* A PEP 508 name at *s (letters, digits, ". _ -", alphanumeric at both ends);
 * advances *s past it. */
static bool pip_name(const char **s)
{
	const char *p = *s;
	if (!isalnum((unsigned char)*p))
		return false;
	while (name_char(*p))
		p++;
	if (!isalnum((unsigned char)p[-1]))
		return false;
	*s = p;
	return true;
}

/* One version specifier at *s: an operator and a version. */
static bool pip_specifier(const char **s)
{
	static const char *const ops[] = {"===", "==", "~=", "!=", "<=", ">=", "<", ">"};
	const char *p = *s;
	size_t i;
	for (i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (!strncmp(p, ops[i], strlen(ops[i])))
			break;
	if (i == sizeof ops / sizeof ops[0])
		return false;
	p += strlen(ops[i]);
	if (!isalnum((unsigned char)*p))
		return false;
	while (isalnum((unsigned char)*p) || (*p && strchr(".*+!_-", *p)))
		p++;
	if (*p && *p != ',')
		return false;
	*s = p;
	return true;
}

/* name[extra,...] followed by specifiers joined by commas, nothing else. */
static bool check_pip(const char *spec, char *why, size_t whylen)
{
	const char *s = spec;
	if (!pip_name(&s))
		return why_f(why, whylen, "'%s' is not a Python package name", spec);
	if (*s == '[') {
		do {
			s++;
			if (!pip_name(&s))
				return why_f(why, whylen, "bad extra in '%s'", spec);
		} while (*s == ',');
		if (*s++ != ']')
			return why_f(why, whylen, "bad extras in '%s'", spec);
	}
	if (!*s)
		return true;
	for (;;) {
		if (!pip_specifier(&s))
			return why_f(why, whylen, "bad version specifier in '%s'", spec);
		if (!*s)
			return true;
		s++; /* ',' */
	}
}

/* An npm name part: URL-safe letters, not starting with '.' or '_'. */
static bool npm_part(const char **s, char stop)
{
	const char *p = *s;
	if (*p == '.' || *p == '_')
		return false;
	while (name_char(*p) || *p == '~')
		p++;
	if (p == *s || (*p && *p != stop))
		return false;
	*s = p;
	return true;
}

/* name, @scope/name, each optionally @version, @range or @tag. */
static bool check_npm(const char *spec, char *why, size_t whylen)
{
	const char *s = spec;
	if (*s == '@') {
		s++;
		if (!npm_part(&s, '/') || *s != '/')
			return why_f(why, whylen, "bad scope in '%s'", spec);
		s++;
	}
	const char *name = s;
	if (!npm_part(&s, '@'))
		return why_f(why, whylen, "'%s' is not an npm package name", spec);
	if (s - name > 214)
		return why_f(why, whylen, "npm package name too long in '%s'", spec);
	if (!*s)
		return true;
	const char *v = ++s;
	if (!*v || *v == '-')
		return why_f(why, whylen, "bad version in '%s'", spec);
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr(".^~<>=*+_|-", *s))
			return why_f(why, whylen, "bad version range in '%s'", spec);
	return true;
}

/* What every manager would read as something other than a registry package. */
static bool check_common(const char *spec, char *why, size_t whylen)
{
	if (!spec || !spec[0])
		return why_f(why, whylen, "empty package name");
	size_t n = strlen(spec);
	if (n > SPEC_MAX)
		return why_f(why, whylen, "package spec longer than %d characters", SPEC_MAX);
	for (const char *s = spec; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 127)
			return why_f(why, whylen,
				     "package spec '%.*s' holds whitespace, a control or non-ASCII "
				     "character",
				     (int)(s - spec), spec);
	if (spec[0] == '-')
		return why_f(why, whylen, "'%s' would be read as an option", spec);
	if (spec[0] == '.' || spec[0] == '/' || spec[0] == '~' || spec[0] == '\\')
		return why_f(why, whylen, "'%s' is a path, not a package", spec);
	if (strchr(spec, ':'))
		return why_f(why, whylen, "'%s' is a URL or a VCS link, not a package", spec);
	static const char *const archives[] = {".tgz", ".tar",	   ".tar.gz", ".whl",
					       ".zip", ".tar.bz2", ".tar.xz"};
	for (size_t i = 0; i < sizeof archives / sizeof archives[0]; i++) {
		size_t k = strlen(archives[i]);
		if (n > k && !strcasecmp(spec + n - k, archives[i]))
			return why_f(why, whylen, "'%s' names a file, not a package", spec);
	}
	return true;
}

bool install_manager_known(const char *manager)
{
	return manager && (!strcmp(manager, "pip") || !strcmp(manager, "npm"));
}

char *install_path_env(const char *manager, const char *dir)
{
	/* what a program other than the session's driver reads to find them */
	if (!strcmp(manager, "pip"))
		return xasprintf("PYTHONPATH=/box/%s", dir);
	if (!strcmp(manager, "npm"))
		return xasprintf("NODE_PATH=/box/%s/node_modules", dir);
	return NULL;
}

bool install_check_package(const char *manager, const char *spec, char *why, size_t whylen)
{
	if (!install_manager_known(manager))
		return why_f(why, whylen, "unknown package manager '%s' (pip or npm)",
			     manager ? manager : "");
	if (!check_common(spec, why, whylen))
		return false;
	return !strcmp(manager, "pip") ? check_pip(spec, why, whylen)
				       : check_npm(spec, why, whylen);
}

void install_result_init(struct install_result *res)
{
	memset(res, 0, sizeof *res);
	strbuf_init(&res->output);
}

void install_result_release(struct install_result *res)
{
	strbuf_release(&res->output);
}

static int fail(struct install_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int fail(struct install_result *res, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(res->message, sizeof res->message, fmt, ap);
	va_end(ap);
	res->ok = false;
	return -1;
}

/* Makes the package folder with its parents, owned by the box's uid, never
 * following a symlink (the session's code may have planted one; the sandbox's
 * bind checks again, beneath the box). */
static int make_folder(struct sandbox *sb, const char *dir, struct install_result *res)
{
	int rc = sandbox_file_mkdir(sb, dir);
	if (rc < 0)
		return fail(res, "cannot make the package folder '%s': %s", dir, strerror(-rc));
	return 0;
}

char **install_folders(const struct install_options *opts)
{
	char **v = xcalloc(3, sizeof *v);
	size_t n = 0;
	const struct install_manager *ms[] = {opts ? &opts->pip : NULL, opts ? &opts->npm : NULL};
	for (size_t i = 0; i < 2; i++)
		if (ms[i] && ms[i]->argv && ms[i]->dir)
			v[n++] = xstrdup(ms[i]->dir);
	return v;
}

/* The folder of a binary ("/a/b/node" -> "/a/b"), for PATH. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return xstrndup(path, slash && slash != path ? (size_t)(slash - path) : 1);
}

struct install_cmd {
	const char *argv[64 + PACKAGES_MAX];
	const char *env[12];
	char url[64], target[256], path_env[512];
};

/* argv and env of `<m's argv> install ...` (pip's or npm's arguments). */
static void build_cmd(struct install_cmd *c, const struct install_manager *m, bool pip, int port,
		      const char *const *packages)
{
	int a = 0, e = 0;
	char *bindir = dir_of(m->argv[0]);
	snprintf(c->path_env, sizeof c->path_env, "PATH=%s:/usr/local/bin:/usr/bin:/bin", bindir);
	free(bindir);
	snprintf(c->url, sizeof c->url, "http://127.0.0.1:%d%s", port,
		 pip ? PIP_INDEX : NPM_REGISTRY);
	snprintf(c->target, sizeof c->target, "/box/%s", m->dir);
	const char *const *fixed;
	/* --timeout: the proxy answers a page once it has fetched all of it, and
	 * a slow registry should end by the install's wall limit, not by pip's
	 * 15 s or npm's default */
	static const char *const pip_args[] = {"install",
					       "--no-cache-dir",
					       "--disable-pip-version-check",
					       "--no-input",
					       "--progress-bar",
					       "off",
					       "--upgrade",
					       "--isolated",
					       "--timeout",
					       "600",
					       NULL};
	static const char *const npm_args[] = {"install",
					       "--cache",
					       "/tmp/npm-cache",
					       "--replace-registry-host=never",
					       "--no-audit",
					       "--no-fund",
					       "--no-update-notifier",
					       "--userconfig",
					       "/dev/null",
					       "--fetch-timeout=600000",
					       NULL};
	for (int i = 0; m->argv[i] && a < 16; i++)
		c->argv[a++] = m->argv[i];
	for (fixed = pip ? pip_args : npm_args; *fixed; fixed++)
		c->argv[a++] = *fixed;
	c->argv[a++] = pip ? "--target" : "--prefix";
	c->argv[a++] = c->target;
	c->argv[a++] = pip ? "--index-url" : "--registry";
	c->argv[a++] = c->url;
	c->argv[a++] = "--"; /* whatever follows is a package, never an option */
	for (int i = 0; packages[i]; i++)
		c->argv[a++] = packages[i];
	c->argv[a] = NULL;
	c->env[e++] = c->path_env;
	c->env[e++] = "HOME=/tmp";
	c->env[e++] = "TMPDIR=/tmp";
	c->env[e++] = "LANG=C.UTF-8";
	/* pip's interpreter reads no user site; neither manager reads a user
	 * config or checks for its own updates */
	c->env[e++] = pip ? "PYTHONNOUSERSITE=1" : "NO_UPDATE_NOTIFIER=1";
	c->env[e++] = pip ? "PIP_CONFIG_FILE=/dev/null" : "npm_config_update_notifier=false";
	c->env[e] = NULL;
}

/* A package folder: relative, inside the box, no '..' or '.' part. */
static bool dir_ok(const char *d)
{
	if (!d || !*d || *d == '/' || strlen(d) > 200)
		return false;
	for (const char *p = d; *p;) {
		size_t n = strcspn(p, "/");
		if (!n || (n == 1 && *p == '.') || (n == 2 && !strncmp(p, "..", 2)))
			return false;
		p += n + (p[n] == '/');
	}
	return true;
}

/* Checks the arguments and every spec. 0, or -1 with res->message. */
static int check_args(struct sandbox *sb, const struct install_options *o, const char *manager,
		      const char *const *packages, struct install_result *res)
{
	char why[256];
	if (!sb || !o || !manager || !packages || !packages[0])
		return fail(res, "nothing to install");
	if (!install_manager_known(manager))
		return fail(res, "unknown package manager '%s' (pip or npm)", manager);
	bool pip = !strcmp(manager, "pip");
	const struct install_manager *m = pip ? &o->pip : &o->npm;
	const char *reg = pip ? o->pip_index_url : o->npm_registry;
	if (!m->argv || !m->argv[0] || m->argv[0][0] != '/')
		return fail(res, "%s installs are not configured (no runtime)", manager);
	if (!dir_ok(m->dir))
		return fail(res, "%s installs are not configured (bad package folder '%s')",
			    manager, m->dir ? m->dir : "");
	if (!reg || !reg[0])
		return fail(res, "%s installs are not configured (no registry)", manager);
	if (!o->cache_dir || o->cache_dir[0] != '/')
		return fail(res, "the install cache folder must be an absolute path");
	for (int i = 0; packages[i]; i++) {
		if (i >= PACKAGES_MAX)
			return fail(res, "more than %d packages", PACKAGES_MAX);
		if (!install_check_package(manager, packages[i], why, sizeof why))
			return fail(res, "%s", why);
	}
	return 0;
}

/* The manager's output, stdout then stderr, at most OUTPUT_MAX bytes. */
static void keep_output(struct install_result *res, const struct run_result *rr)
{
	strbuf_add(&res->output, rr->out.buf, rr->out.len < OUTPUT_MAX ? rr->out.len : OUTPUT_MAX);
	size_t room = OUTPUT_MAX - res->output.len;
	strbuf_add(&res->output, rr->err.buf, rr->err.len < room ? rr->err.len : room);
}

int install_packages(struct sandbox *sb, const struct install_options *opts, const char *manager,
		     const char *const *packages, struct install_result *res)
{
	struct regproxy *rp = NULL;
	struct install_cmd *cmd = NULL;
	struct run_result rr;
	char err[512];
	int ret = -1;
	int64_t t0 = clock_mono_ms();
	run_result_init(&rr);
	res->ok = false;
	res->message[0] = 0;
	strbuf_reset(&res->output);
	if (check_args(sb, opts, manager, packages, res) < 0)
		goto out;
	bool pip = !strcmp(manager, "pip");
	const struct install_manager *m = pip ? &opts->pip : &opts->npm;
	const char *dir = m->dir;
	if (make_folder(sb, dir, res) < 0)
		goto out;
	struct regproxy_options po = {
	    .pip_index_url = pip ? opts->pip_index_url : NULL,
	    .npm_registry = pip ? NULL : opts->npm_registry,
	    .cache_dir = opts->cache_dir,
	    .meta_ttl_s = opts->meta_ttl_s,
	};
	if (regproxy_start(&po, &rp, err, sizeof err) < 0) {
		fail(res, "%s", err);
		goto out;
	}
	cmd = xcalloc(1, sizeof *cmd);
	build_cmd(cmd, m, pip, regproxy_port(rp), packages);
	struct run_spec spec = {
	    .argv = cmd->argv,
	    .env = cmd->env,
	    .ro_paths = m->ro_paths,
	    .limits = opts->limits,
	    .net_ns_fd = regproxy_netns_fd(rp),
	    .box_subdir = dir,
	};
	if (sandbox_run(sb, &spec, &rr) < 0 || rr.status == RUN_INTERNAL_ERROR) {
		fail(res, "install sandbox: %s", rr.message);
		goto out;
	}
	keep_output(res, &rr);
	res->ok = rr.status == RUN_OK;
	if (rr.status == RUN_RUNTIME_ERROR && rr.signal)
		snprintf(res->message, sizeof res->message, "%s was killed by signal %d", manager,
			 rr.signal);
	else if (rr.status == RUN_RUNTIME_ERROR)
		snprintf(res->message, sizeof res->message,
			 "%s exited with code %d (see the output)", manager, rr.exit_code);
	else if (!res->ok)
		snprintf(res->message, sizeof res->message, "%s install failed: %s", manager,
			 run_status_name(rr.status));
	ret = 0;
out:
	regproxy_stop(rp);
	free(cmd);
	run_result_release(&rr);
	res->time_ms = (long)(clock_mono_ms() - t0);
	return ret;
}
