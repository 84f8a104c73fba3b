/* install: package installs into a session's package folder (pip, npm), run
 * sandboxed, with network only to the configured registries through a host
 * proxy that caches what it fetched.
 *
 * The session's own code never gets network. An install runs in a sandbox of
 * its own around the session's box (sdists and npm scripts run code at install
 * time), writes only under the box's package folder of its manager
 * (install_manager.dir), and reaches the registries only through a proxy the
 * host serves inside the install's network namespace; any other host is
 * refused. Which runtime runs a manager and where its folder is come from the
 * caller (the languages' package_* keys): the runner names no language.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"
#include "runner/sandbox.h"

/* One package manager's runtime. */
struct install_manager {
	/* the argv that runs the manager, its own arguments to follow ("python
	 * -m pip", "node npm-cli.js"); NULL: this manager is not configured */
	const char *const *argv;
	const char *const *ro_paths; /* host folders it needs, read-only */
	const char *dir;	     /* its package folder in the box, relative ("pkgs/x") */
};

struct install_options {
	const char *pip_index_url; /* PEP 503 simple index, e.g. https://pypi.org/simple */
	const char *npm_registry;  /* e.g. https://registry.npmjs.org/ */
	const char *cache_dir;	   /* host folder of the proxy's cache (made as needed) */
	struct install_manager pip, npm;
	struct run_limits limits; /* of the whole install */
	/* how long index pages and npm package documents stay fresh in the cache
	 * (files stay forever); 0 = 300 s. A stale copy still serves when the
	 * registry cannot answer. */
	long meta_ttl_s;
};

struct install_result {
	bool ok;
	struct strbuf output; /* the manager's stdout and stderr, capped */
	long time_ms;
	char message[256]; /* why it failed, when not the manager's own output */
};

/* True when manager is one install_packages knows ("pip", "npm"). */
bool install_manager_known(const char *manager);
/* The environment entry ("PYTHONPATH=/box/<dir>", "NODE_PATH=...") under which
 * processes find what manager installed into the box's dir; malloc'd, NULL
 * for a manager that has none. */
char *install_path_env(const char *manager, const char *dir);
/* Checks one package spec of manager ("pip": name[extras]==ver / >= / ~= ...;
 * "npm": name, @scope/name, name@range). Refuses what a manager would read as
 * an option, a path, a URL or a VCS link. Returns true, or false with why. */
bool install_check_package(const char *manager, const char *spec, char *why, size_t whylen);
/* Installs packages (each checked) into sb's box. Returns 0 with res filled
 * (res->ok false when the manager failed), or -1 with res->message (bad
 * arguments, sandbox failure).
 * The manager runs in the native backend whatever sb's backend (a run of sb:
 * not while another run of sb is going on), as the box's uid, with limits,
 * seeing only the box's package folder of manager (made as needed; a symlink
 * there is refused), writable at /box/<dir>, and nothing else of the box; pip
 * with --target, npm with --prefix (its node_modules, package.json and
 * package-lock.json go there). Its network is a namespace of its own where the
 * only address that answers is the registry proxy (regproxy.h). The manager's
 * argv must lie in its ro_paths or the sandbox's system folders. res->output holds the manager's
 * stdout then stderr (64 KiB at most); res->time_ms the whole call. */
int install_packages(struct sandbox *sb, const struct install_options *opts, const char *manager,
		     const char *const *packages, struct install_result *res);
/* The package folder of every manager of opts (box paths, NULL-terminated; the
 * caller frees it with xstrvfree), for a session's start to make before its
 * driver (session_spec.box_dirs): a driver started before the folder exists
 * may never look there again (Python caches a missing sys.path entry until
 * importlib.invalidate_caches()). install_packages makes its own anyway. */
char **install_folders(const struct install_options *opts);
void install_result_init(struct install_result *res);
void install_result_release(struct install_result *res);
