/* install: package installs into a session's package folder (pip, npm), run
 * sandboxed, with network only to the configured registries through a host
 * proxy that caches what it fetched.
 *
 * The session's own code never gets network. An install runs in a sandbox of
 * its own around the session's box (sdists and npm scripts run code at install
 * time), writes only under the box's package folder (PKG_DIR_PYTHON,
 * PKG_DIR_NODE), and reaches the registries only through a proxy the host
 * serves inside the install's network namespace; any other host is refused.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"
#include "runner/sandbox.h"

/* Package folders inside the box; the drivers put them on their import paths. */
#define PKG_DIR_PYTHON ".packages/python"
#define PKG_DIR_NODE   ".packages/node"

struct install_options {
	const char *pip_index_url; /* PEP 503 simple index, e.g. https://pypi.org/simple */
	const char *npm_registry;  /* e.g. https://registry.npmjs.org/ */
	const char *cache_dir;	   /* host folder of the proxy's cache (made as needed) */
	/* the runtimes: interpreters and the folders they need bound read-only */
	const char *python; /* python3.12 binary (runs `-m pip`) */
	const char *const *python_ro_paths;
	const char *node;    /* node binary */
	const char *npm_cli; /* npm-cli.js run by node */
	const char *const *node_ro_paths;
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
 * there is refused), writable at /box/<PKG_DIR_...>, and nothing else of the
 * box; pip with --target, npm with --prefix (its node_modules, package.json and
 * package-lock.json go there). Its network is a namespace of its own where the
 * only address that answers is the registry proxy (regproxy.h). npm_cli must lie
 * in node_ro_paths. res->output holds the manager's stdout then stderr (64 KiB
 * at most); res->time_ms the whole call. */
int install_packages(struct sandbox *sb, const struct install_options *opts, const char *manager,
		     const char *const *packages, struct install_result *res);
/* Makes both package folders (PKG_DIR_PYTHON, PKG_DIR_NODE) in sb's box, owned
 * by the box's uid, never following a symlink. For a session's start: a
 * driver started before the folder exists may never look there again (Python
 * caches a missing sys.path entry until importlib.invalidate_caches()).
 * install_packages makes its own folder anyway. 0, or -1 with err. */
int install_make_folders(struct sandbox *sb, char *err, size_t errlen);
void install_result_init(struct install_result *res);
void install_result_release(struct install_result *res);
