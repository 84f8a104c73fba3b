/* problemrun: a submission's problem package and verification jobs on a worker (see problemrun.h).
 */
#include "judge/service/problemrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "judge/grading/verify.h"

char *problemrun_cache_dir(const struct judge_config *cfg)
{
	const char *sd = cfg->state_dir && cfg->state_dir[0] ? cfg->state_dir : "var";
	return xasprintf("%s/problems", sd);
}

void problemrun_pkg_release(struct problemrun_pkg *pk)
{
	if (!pk)
		return;
	if (pk->loaded)
		problem_release(&pk->p);
	problemstore_copy_release(&pk->copy);
	memset(pk, 0, sizeof *pk);
	pk->copy.lock_fd = -1;
}

/* The problem id and version a stored request names: 1 with both (version 0:
 * none given), 0 when it names no problem, -1 when they are not valid. */
static int named(const cJSON *request, const char **id, int *version)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(request, "problem");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(request, "problem_version");
	if (!p)
		return 0;
	if (!cJSON_IsString(p) || !problem_id_valid(p->valuestring))
		return -1;
	*id = p->valuestring;
	*version = 0;
	if (cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble < 1e9)
		*version = (int)v->valuedouble;
	else if (v && !cJSON_IsNull(v))
		return -1;
	return 1;
}

/* Checks out and loads version of id into pk. Returns 0 or -1 with err. */
static int load(struct db *db, const struct judge_config *cfg, const struct lang_registry *langs,
		const char *id, int version, struct problemrun_pkg *pk, char *err, size_t errlen)
{
	char *root = problemrun_cache_dir(cfg);
	int rc = problemstore_checkout(db, root, cfg->problem_cache_mb, id, version, &pk->copy, err,
				       errlen);
	free(root);
	if (rc == 0)
		snprintf(err, errlen, "version %d of problem '%s' is not stored", version, id);
	if (rc <= 0)
		return -1;
	char lerr[1024];
	if (problem_load(&pk->p, pk->copy.dir, langs, lerr, sizeof lerr) < 0) {
		snprintf(err, errlen, "problem '%s' version %d: %s", id, version, lerr);
		return -1;
	}
	pk->loaded = true;
	/* the copy's folder is named by its hash: the package is the id's */
	free(pk->p.id);
	pk->p.id = xstrdup(id);
	if (pk->p.limits.time_limit_s <= 0 && pk->copy.time_limit_ms > 0)
		pk->p.limits.time_limit_s = pk->copy.time_limit_ms / 1000.0;
	return 0;
}

int problemrun_load(struct db *db, const struct judge_config *cfg,
		    const struct lang_registry *langs, const cJSON *request, int64_t key_id,
		    struct problemrun_pkg *pk, char *err, size_t errlen)
{
	memset(pk, 0, sizeof *pk);
	pk->copy.lock_fd = -1;
	const char *id = NULL;
	int version = 0;
	int rc = named(request, &id, &version);
	if (rc <= 0) {
		if (rc < 0)
			snprintf(err, errlen, "the stored request names no valid problem");
		return rc;
	}
	if (version == 0) {
		/* queued before problems had versions: the current one, if the
		 * submission's key may see it */
		struct problemstore_actor who = {.key_id = key_id, .admin = key_id == 0};
		char *unsupported = NULL;
		rc = problemstore_resolve(db, id, &who, &version, &unsupported, err, errlen);
		free(unsupported);
		if (rc == 0)
			snprintf(err, errlen, "unknown problem '%s'", id);
		if (rc <= 0)
			return -1;
	}
	return load(db, cfg, langs, id, version, pk, err, errlen) < 0 ? -1 : 1;
}

bool problemrun_is_verify(const cJSON *request)
{
	return cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(request, "verify"));
}

/* The result of a verification that could not run: internal_error. */
static cJSON *failed(enum sub_status *status, const char *msg)
{
	*status = SUB_INTERNAL_ERROR;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "status", "internal_error");
	cJSON_AddStringToObject(o, "message", msg);
	cJSON_AddBoolToObject(o, "ok", false);
	cJSON_AddBoolToObject(o, "gradable", false);
	return o;
}

cJSON *problemrun_verify(struct db *db, const struct problemrun_env *env, const cJSON *request,
			 enum sub_status *status)
{
	const char *id = NULL;
	int version = 0;
	char err[1024];
	if (named(request, &id, &version) != 1 || version == 0)
		return failed(status, "verification job without a problem version");
	struct problemrun_pkg pk;
	memset(&pk, 0, sizeof pk);
	pk.copy.lock_fd = -1;
	if (load(db, env->cfg, env->langs, id, version, &pk, err, sizeof err) < 0) {
		problemrun_pkg_release(&pk);
		char msg[1200];
		snprintf(msg, sizeof msg, "cannot verify problem '%s': %s", id, err);
		return failed(status, msg);
	}
	struct verify_opts o = {.cfg = env->cfg,
				.langs = env->langs,
				.backend = env->backend,
				.jobs = 1,
				.first_slot = env->slot,
				.reuse_key = env->reuse_key,
				.allow_no_submissions = true,
				.cancel = env->cancel,
				.line = env->line,
				.arg = env->arg};
	struct verify_counts n = {0};
	cJSON *rep = verify_problem(&o, &pk.p, &n);
	log_info("problems: %s version %d verified: %d passed, %d failed, %d skipped", id, version,
		 n.passed, n.failed, n.skipped);
	cJSON_AddNumberToObject(rep, "version", version);
	cJSON_AddStringToObject(rep, "status", "completed");
	problemrun_pkg_release(&pk);
	*status = SUB_COMPLETED;
	return rep;
}
