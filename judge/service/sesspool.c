/* sesspool: a session's sandbox and driver started, and the runner's pool told of them. */
#include "judge/service/sesspool.h"

#include <string.h>

#include "common/config.h"
#include "common/log.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "runner/install/install.h"
#include "runner/session/prestart.h"

/* The driver spec of a session of l with limits (pointers into l). */
static void spec_of(const struct judge_config *cfg, const struct lang *l,
		    const struct sess_limits *limits, struct session_spec *spec)
{
	struct limits_policy p;
	limits_policy_from_config(cfg, &p);
	struct limits_request req = {
	    .time_ms = limits->cpu_ms, .wall_ms = limits->wall_ms, .memory_mb = limits->memory_mb};
	*spec = (struct session_spec){.argv = (const char *const *)l->session_argv,
				      .env = (const char *const *)l->session_env,
				      .ro_paths = (const char *const *)l->session_ro_paths,
				      .warm_argv = (const char *const *)l->warm_argv,
				      .preload = (const char *const *)l->preload};
	limits_run(&p, l, NULL, &req, &spec->limits);
	/* pip, a shell's pipelines and a plotting library's threads */
	if (spec->limits.processes < 128)
		spec->limits.processes = 128;
}

int sesspool_open(const struct judge_config *cfg, enum sandbox_backend backend,
		  const struct lang *l, const struct sess_limits *limits, int slot,
		  struct sandbox **sb, struct session **s, char *err, size_t errlen)
{
	if (sandbox_open(backend, slot, limits->disk_mb << 20, sb, err, errlen) < 0)
		return -1;
	/* the package folders before the driver: it may never look again for one
	 * that was missing at its start */
	if (install_make_folders(*sb, err, errlen) < 0)
		return -1;
	struct session_spec spec;
	spec_of(cfg, l, limits, &spec);
	return session_start(*sb, &spec, s, err, errlen);
}

void sesspool_prepare(const struct judge_config *cfg, const struct lang_registry *langs,
		      enum sandbox_backend backend)
{
	/* python first: the pool fills in this order, and most sessions are python */
	const struct lang *py = lang_find(langs, "python");
	for (int i = -1; i < langs->count; i++) {
		const struct lang *l = i < 0 ? py : &langs->langs[i];
		if (!l || !l->session_argv || (i >= 0 && l == py))
			continue;
		/* the limits of a create that names none */
		cJSON *body = cJSON_CreateObject();
		cJSON_AddStringToObject(body, "language", l->name);
		struct sreq_create c;
		struct req_error e;
		if (sreq_create(cfg, langs, body, &c, &e) == 0) {
			struct session_spec spec;
			spec_of(cfg, l, &c.limits, &spec);
			prestart_prepare(backend, c.limits.disk_mb << 20, &spec);
		} else {
			log_warn("sessions: no pool for %s: %s", l->name, e.message);
		}
		cJSON_Delete(body);
	}
}
