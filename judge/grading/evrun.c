/* evrun: an eval set's program, compiled, run once and judged by its rule. */
#define _GNU_SOURCE
#include "judge/grading/evrun.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "judge/grading/compile.h"
#include "judge/grading/funcgrade.h"
#include "judge/grading/harness.h"
#include "judge/grading/lang.h"
#include "judge/grading/problem.h"

static const char *const rule_names[] = {
    [EVRUN_EXIT_ZERO] = "exit_zero", [EVRUN_SILENT] = "silent",
    [EVRUN_EXEC] = "exec",	     [EVRUN_LCB] = "lcb",
    [EVRUN_EVALPLUS] = "evalplus",
};

int evrun_rule_parse(const char *s, enum evrun_rule *out)
{
	for (size_t i = 0; i < sizeof rule_names / sizeof rule_names[0]; i++)
		if (!strcmp(s, rule_names[i])) {
			*out = (enum evrun_rule)i;
			return 0;
		}
	return -1;
}

/* fb's message: what, then the first line of text (len bytes) when any. */
static void feedback(struct grade_feedback *fb, const char *what, const char *text, size_t len)
{
	struct strbuf clean = STRBUF_INIT;
	utf8_sanitize(&clean, text, len);
	memset(fb, 0, sizeof *fb);
	fb->present = true;
	snprintf(fb->message, sizeof fb->message, "%s%s%s", what, clean.len ? ": " : "", clean.buf);
	strbuf_release(&clean);
}

enum sub_status evrun_verdict(enum evrun_rule rule, const struct run_result *rr,
			      char *const *stderr_fails, int n, struct grade_feedback *fb)
{
	memset(fb, 0, sizeof *fb);
	bool exited = rr->status == RUN_OK || (rr->status == RUN_RUNTIME_ERROR && !rr->signal);
	if (rule == EVRUN_SILENT && exited) {
		/* CodeGeeX's execution.py: stderr first, then stdout, else passed */
		if (rr->err.len) {
			feedback(fb, "wrote to stderr", rr->err.buf, rr->err.len);
			return SUB_WRONG_ANSWER;
		}
		if (rr->out.len) {
			feedback(fb, "wrote to stdout", rr->out.buf, rr->out.len);
			return SUB_WRONG_ANSWER;
		}
		return SUB_ACCEPTED;
	}
	if (rr->status != RUN_OK) {
		enum sub_status st = grade_run_verdict(rr->status);
		if (st == SUB_RUNTIME_ERROR)
			feedback(fb, rr->signal ? "killed by a signal" : "exited non-zero",
				 rr->err.len ? rr->err.buf : rr->out.buf,
				 rr->err.len ? rr->err.len : rr->out.len);
		return st;
	}
	for (int i = 0; i < n; i++)
		if (*stderr_fails[i] &&
		    memmem(rr->err.buf, rr->err.len, stderr_fails[i], strlen(stderr_fails[i]))) {
			feedback(fb, "stderr says", stderr_fails[i], strlen(stderr_fails[i]));
			return SUB_WRONG_ANSWER;
		}
	return SUB_ACCEPTED;
}

enum sub_status evrun_lcb_verdict(const cJSON *end, enum run_status run)
{
	if (!end)
		return run == RUN_OK ? SUB_WRONG_ANSWER : grade_run_verdict(run);
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(end, "end")))
		return SUB_ACCEPTED;
	const cJSON *results = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(end, "lcb"), "results");
	const cJSON *last = NULL, *r;
	cJSON_ArrayForEach(r, results) last = r;
	if (cJSON_IsNumber(last) && last->valuedouble == -3)
		return SUB_TIMEOUT;
	if (cJSON_IsNumber(last) && last->valuedouble == -4)
		return SUB_RUNTIME_ERROR;
	return SUB_WRONG_ANSWER;
}

enum sub_status evrun_evalplus_verdict(const cJSON *end, enum run_status run)
{
	if (!end)
		return run == RUN_OK ? SUB_WRONG_ANSWER : grade_run_verdict(run);
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(end, "end")))
		return SUB_ACCEPTED;
	const cJSON *ep = cJSON_GetObjectItemCaseSensitive(end, "evalplus");
	static const char *const sets[] = {"base_status", "plus_status"};
	for (size_t i = 0; i < 2; i++) {
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(ep, sets[i]);
		if (cJSON_IsString(st) && !strcmp(st->valuestring, "timeout"))
			return SUB_TIMEOUT;
		if (cJSON_IsString(st) && strcmp(st->valuestring, "pass"))
			return SUB_WRONG_ANSWER;
	}
	return ep ? SUB_WRONG_ANSWER : SUB_INTERNAL_ERROR;
}

/* Writes the program (exec: the harness as the main file, the program beside
 * it as the language's testcode_file), compiles it when the language compiles (with the
 * request's options) and runs it once into rr. Returns 0 when it ran, 1 on a
 * compile error (in res), -1 on the judge's failure (err). */
static int run_program(const struct grade_env *env, struct grade_plan *plan,
		       const struct grade_request *req, enum evrun_rule rule, const char *nonce,
		       struct grade_result *res, struct run_result *rr, char *err, size_t errlen)
{
	struct sandbox *sb = NULL;
	struct strbuf harness = STRBUF_INIT, dir = STRBUF_INIT, name = STRBUF_INIT;
	struct strbuf in = STRBUF_INIT;
	int ret = -1, rc;
	bool harnessed = rule == EVRUN_EXEC || rule == EVRUN_LCB || rule == EVRUN_EVALPLUS;
	if (harnessed) {
		/* each harnessed rule's harness is named after it */
		strbuf_addf(&dir, "%s/harness", env->cfg->languages_dir);
		strbuf_addf(&name, "%s.py", rule_names[rule]);
		if (harness_read_template(dir.buf, name.buf, &harness, err, errlen) < 0)
			goto out;
		strbuf_addf(&in, "%s\n", nonce);
	}
	if (sandbox_open(env->backend, env->slot, env->cfg->tmp_size_mb * 1024 * 1024, &sb, err,
			 errlen) < 0)
		goto out;
	sandbox_set_reuse_key(sb, env->reuse_key);
	if (harnessed) {
		rc =
		    sandbox_write_file(sb, plan->lang->source_file, harness.buf, harness.len, 0644);
		if (rc == 0)
			rc = sandbox_write_file(sb, plan->lang->testcode_file, req->source,
						req->source_len, 0644);
	} else {
		rc = sandbox_write_file(sb, plan->lang->source_file, req->source, req->source_len,
					0644);
	}
	if (rc < 0) {
		snprintf(err, errlen, "cannot write the program into the box: %s", strerror(-rc));
		goto out;
	}
	/* the exec harness compiles the program itself; a language that tells a
	 * compile error from its run needs no step: a syntax error fails the run */
	bool step = !harnessed && plan->lang->compile_argv &&
		    !(plan->lang->compile_in_run && !req->ncompiler_options);
	if (step && req->ncompiler_options) {
		const char *none[] = {NULL};
		plan->compile_argv =
		    compile_command(plan->lang, none, (const char *const *)req->compiler_options);
	}
	rc = step ? grade_compile(plan, sb, res, err, errlen) : 0;
	if (rc != 0) {
		ret = rc;
		goto out;
	}
	struct run_spec spec = {
	    .argv = (const char *const *)plan->run_argv,
	    .env = (const char *const *)plan->lang->env,
	    .ro_paths = (const char *const *)plan->lang->ro_paths,
	    .warm_argv = (const char *const *)plan->lang->warm_argv,
	    .preload = (const char *const *)plan->lang->preload,
	    .zygote_argv = (const char *const *)plan->lang->zygote_argv,
	    .stdin_data = in.buf,
	    .stdin_len = in.len,
	    .limits = plan->run_limits,
	};
	if (sandbox_run(sb, &spec, rr) < 0)
		rr->status = RUN_INTERNAL_ERROR;
	ret = 0;
out:
	sandbox_close(sb);
	strbuf_release(&harness);
	strbuf_release(&dir);
	strbuf_release(&name);
	strbuf_release(&in);
	return ret;
}

/* Folds the run into res: the verdict and the run's facts. */
static void fold(const struct lang *l, const struct grade_request *req, enum evrun_rule rule,
		 const char *nonce, struct run_result *rr, struct grade_result *res)
{
	res->ran = true;
	res->run.exited = rr->status == RUN_OK || (rr->status == RUN_RUNTIME_ERROR && !rr->signal);
	res->run.exit_code = rr->exit_code;
	res->run.signal = rr->signal;
	res->run.time_ms = rr->cpu_ms;
	res->run.wall_ms = rr->wall_ms;
	res->run.memory_kb = rr->memory_kb;
	if (rule == EVRUN_LCB || rule == EVRUN_EVALPLUS) {
		/* the harness's own record of the set (its key: the rule's name) is
		 * the result's stdout, for the set's results file */
		struct funcgrade_records recs;
		funcgrade_records_parse(&recs, rr->out.buf, rr->out.len, nonce, 0);
		funcgrade_fold_test_code(&recs, rr->status, res);
		res->status = rule == EVRUN_LCB ? evrun_lcb_verdict(recs.end, rr->status)
						: evrun_evalplus_verdict(recs.end, rr->status);
		const cJSON *own = cJSON_GetObjectItemCaseSensitive(recs.end, rule_names[rule]);
		char *text = own ? cJSON_PrintUnformatted(own) : NULL;
		if (text)
			strbuf_addstr(&res->out, text);
		free(text);
		funcgrade_records_release(&recs);
	} else if (rule == EVRUN_EXEC) {
		struct funcgrade_records recs;
		funcgrade_records_parse(&recs, rr->out.buf, rr->out.len, nonce, 0);
		funcgrade_fold_test_code(&recs, rr->status, res);
		strbuf_add(&res->out, recs.stray.buf, recs.stray.len);
		funcgrade_syntax_error(l, &recs, res);
		funcgrade_records_release(&recs);
	} else {
		res->status = evrun_verdict(rule, rr, req->eval->stderr_fails,
					    req->eval->nstderr_fails, &res->feedback);
		strbuf_add(&res->out, rr->out.buf, rr->out.len);
	}
	strbuf_add(&res->err, rr->err.buf, rr->err.len);
	res->out_truncated = rr->out_truncated;
	res->err_truncated = rr->err_truncated;
}

void evrun_request(const struct grade_env *env, const struct grade_request *req,
		   struct grade_result *out)
{
	char err[512] = "", nonce[32] = "";
	struct grade_plan plan;
	struct run_result rr;
	enum evrun_rule rule = EVRUN_EXIT_ZERO;
	int rc = -1;
	model_result_init(out);
	run_result_init(&rr);
	if (grade_plan_make(&plan, env, req, err, sizeof err) < 0)
		goto out;
	if (evrun_rule_parse(req->eval->rule, &rule) < 0) {
		snprintf(err, sizeof err, "unknown eval rule '%.40s'", req->eval->rule);
		goto out;
	}
	if (funcgrade_nonce(nonce, sizeof nonce) < 0) {
		snprintf(err, sizeof err, "getrandom: %s", strerror(errno));
		goto out;
	}
	rc = run_program(env, &plan, req, rule, nonce, out, &rr, err, sizeof err);
	if (rc == 0 && rr.status == RUN_INTERNAL_ERROR) {
		snprintf(err, sizeof err, "sandbox failed: %s",
			 rr.message[0] ? rr.message : "invalid run specification");
		rc = -1;
	}
	if (rc == 0)
		fold(plan.lang, req, rule, nonce, &rr, out);
	else if (rc > 0)
		out->status = SUB_COMPILE_ERROR;
out:
	if (rc < 0) {
		log_error("grade: %s: %s", req->language, err);
		model_result_fail(out, req->language, "%s", err);
	} else {
		out->language = xstrdup(plan.lang->name);
	}
	run_result_release(&rr);
	grade_plan_release(&plan);
}
