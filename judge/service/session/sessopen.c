/* sessopen: a session's sandbox and driver started, and the runner's pool told of them. */
#include "judge/service/session/sessopen.h"

#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/xalloc.h"
#include "common/log.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "judge/service/session/sessproc.h"
#include "runner/install/install.h"
#include "runner/session/prestart.h"

/* Appends s to the list *v of *n unless it holds it already. */
static void add_once(char ***v, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], s))
			return;
	*v = xreallocarray(*v, *n + 2, sizeof **v);
	(*v)[(*n)++] = xstrdup(s);
	(*v)[*n] = NULL;
}

void sessopen_common_init(struct sessopen_common *c, const struct lang_registry *langs,
			  const struct install_options *inst)
{
	c->box_dirs = install_folders(inst);
	size_t nro = 0, ndirs = 0;
	char **dirs = NULL;
	c->ro_paths = xcalloc(1, sizeof *c->ro_paths);
	for (int i = 0; i < langs->count; i++) {
		const struct lang *l = &langs->langs[i];
		if (!l->session_argv)
			continue;
		for (char **rp = l->session_ro_paths; rp && *rp; rp++)
			add_once(&c->ro_paths, &nro, *rp);
		/* the folder of its programs (python3, pip, node, npm, dotnet) */
		char *dir = xstrdup(l->run_argv && l->run_argv[0] ? l->run_argv[0] : "/");
		char *slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = 0;
			add_once(&dirs, &ndirs, dir);
		}
		free(dir);
	}
	struct strbuf path = STRBUF_INIT;
	strbuf_addstr(&path, "PATH=");
	for (size_t i = 0; i < ndirs; i++)
		if (strcmp(dirs[i], "/bin") && strcmp(dirs[i], "/usr/bin"))
			strbuf_addf(&path, "%s:", dirs[i]);
	strbuf_addstr(&path, "/usr/local/bin:/usr/bin:/bin");
	const char *fixed[] = {"HOME=" SANDBOX_HOME, "TMPDIR=/tmp", "LANG=C.UTF-8",
			       "LC_ALL=C.UTF-8"};
	size_t nfixed = sizeof fixed / sizeof fixed[0], n = 0;
	/* PATH, the fixed ones, one per language with a package folder, NULL */
	c->proc_env = xcalloc(1 + nfixed + (size_t)langs->count + 1, sizeof *c->proc_env);
	c->proc_env[n++] = xstrdup(path.buf);
	for (size_t i = 0; i < nfixed; i++)
		c->proc_env[n++] = xstrdup(fixed[i]);
	/* where each language's installs go, on its import path (install.h) */
	for (int i = 0; i < langs->count; i++) {
		const struct lang *l = &langs->langs[i];
		char *v = l->package_manager && l->package_dir
			      ? install_path_env(l->package_manager, l->package_dir)
			      : NULL;
		if (v)
			c->proc_env[n++] = v;
	}
	strbuf_release(&path);
	for (size_t i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
}

void sessopen_common_release(struct sessopen_common *c)
{
	xstrvfree(c->ro_paths);
	xstrvfree(c->proc_env);
	xstrvfree(c->box_dirs);
	memset(c, 0, sizeof *c);
}

/* The spec of a session of l with limits (pointers into l and common). */
static void spec_of(const struct judge_config *cfg, const struct sessopen_common *common,
		    const struct lang *l, const struct limits_session *limits,
		    struct session_spec *spec)
{
	struct limits_policy p;
	limits_policy_from_config(cfg, &p);
	*spec = (struct session_spec){.argv = (const char *const *)l->session_argv,
				      .env = (const char *const *)l->session_env,
				      .ro_paths = (const char *const *)common->ro_paths,
				      .warm_argv = (const char *const *)l->warm_argv,
				      .preload = (const char *const *)l->preload,
				      .box_dirs = (const char *const *)common->box_dirs};
	limits_session_sandbox(&p, l, limits, &spec->limits);
	spec->cpu_millis = limits->cpu_millis;
	spec->cpu_weight = limits->cpu_weight;
}

int sessopen_sandbox(enum sandbox_backend backend, const struct limits_session *limits, int slot,
		     struct sandbox **sb, char *err, size_t errlen)
{
	/* the package folders are made by the session's start (its spec's
	 * box_dirs), in a pooled box as in this one */
	return sandbox_open(backend, slot, limits->disk_mb << 20, sb, err, errlen);
}

int sessopen_start(const struct judge_config *cfg, const struct sessopen_common *common,
		   const struct lang *l, const struct limits_session *limits,
		   const struct sessopen_net *net, struct sandbox *sb, const char *restore_dir,
		   struct session **s, char *err, size_t errlen)
{
	struct session_spec spec;
	spec_of(cfg, common, l, limits, &spec);
	char **env = NULL;
	if (net) {
		/* the language's, then the session's own (a NAME= replaces) */
		env = sessproc_env(spec.env, net->env);
		spec.env = (const char *const *)env;
		spec.net_ns_fd = net->netns_fd > 0 ? net->netns_fd : 0;
	}
	int rc = restore_dir ? session_restore(sb, &spec, restore_dir, s, err, errlen)
			     : session_start(sb, &spec, s, err, errlen);
	xstrvfree(env); /* session_start copied it */
	return rc;
}

int sessopen_open(const struct judge_config *cfg, const struct sessopen_common *common,
		  enum sandbox_backend backend, const struct lang *l,
		  const struct limits_session *limits, int slot, const struct sessopen_net *net,
		  struct sandbox **sb, struct session **s, char *err, size_t errlen)
{
	if (sessopen_sandbox(backend, limits, slot, sb, err, errlen) < 0)
		return -1;
	return sessopen_start(cfg, common, l, limits, net, *sb, NULL, s, err, errlen);
}

void sessopen_prepare(const struct judge_config *cfg, const struct sessopen_common *common,
		      const struct lang_registry *langs, enum sandbox_backend backend)
{
	/* the default language first: the pool fills in this order, and most
	 * sessions are in it */
	const struct lang *first = lang_default(langs);
	for (int i = -1; i < langs->count; i++) {
		const struct lang *l = i < 0 ? first : &langs->langs[i];
		if (!l || !l->session_argv || (i >= 0 && l == first))
			continue;
		/* the limits of a create that names none */
		struct limits_policy p;
		struct limits_session lim;
		struct session_spec spec;
		limits_policy_from_config(cfg, &p);
		limits_session(&p, NULL, &lim);
		spec_of(cfg, common, l, &lim, &spec);
		prestart_prepare(backend, lim.disk_mb << 20, &spec);
	}
}
