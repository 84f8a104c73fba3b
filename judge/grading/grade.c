/* grade: compile once, run each test, compare, aggregate into the typed result.
 *
 * How it works: the request is turned into a plan (language, limits, compare
 * options, a list of tests). One sandbox workspace (box) holds the source and
 * whatever the compiler writes; every run gets a fresh sandbox around it. Tests
 * run in order and the first one that fails decides the verdict (all run when
 * run_all_tests). The runner's `ok` never reaches the user: it becomes
 * accepted / wrong_answer, or completed when there is nothing to compare with.
 */
#include "judge/grading/grade.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/grading/checker.h"
#include "judge/grading/compare.h"
#include "judge/grading/interact.h"
#include "common/config.h"
#include "judge/grading/evrun.h"
#include "judge/grading/funcgrade.h"
#include "judge/grading/compile.h"
#include "judge/grading/compsrv.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "common/log.h"
#include "judge/grading/problem.h"
#include "judge/grading/score.h"
#include "judge/grading/status.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "common/xalloc.h"

/* Compiler output kept in the result; the rest is cut. */
#define COMPILE_OUTPUT_MAX (64 * 1024)
/* Expected-output files larger than this are refused as a judge fault. */
#define EXPECTED_FILE_MAX ((size_t)1 << 30)

static void plan_limits(struct grade_plan *p, const struct judge_config *cfg,
			const struct grade_request *req)
{
	struct limits_policy pol;
	limits_policy_from_config(cfg, &pol);
	limits_run(&pol, p->lang, NULL, &req->limits, &p->run_limits);
	limits_compile(&pol, p->lang, &p->compile_limits);
}

static void add_test(struct grade_plan *p, const char *name, const char *stdin_data,
		     size_t stdin_len, const char *expected, size_t expected_len)
{
	struct grade_test *g = &p->tests[p->ntests++];
	memset(g, 0, sizeof *g);
	g->name = xstrdup(name);
	g->stdin_data = stdin_data;
	g->stdin_len = stdin_len;
	g->expected = expected;
	g->expected_len = expected_len;
	g->has_expected = expected != NULL;
	g->points = -1;
}

/* Tests, limits and validator options of a problem package (problem.h): env's
 * preloaded package (judge verify) or problems_dir/<id>. The request's own
 * limits win over the package's. */
static int plan_problem(struct grade_plan *p, const struct grade_env *env,
			const struct grade_request *req, const char *id, char *err, size_t errlen)
{
	const struct problem *pb = env->problem;
	if (pb && !strcmp(pb->id, id)) {
		p->checker = env->checker;
	} else {
		p->owned_problem = xcalloc(1, sizeof *p->owned_problem);
		if (problem_open(p->owned_problem, env->cfg->problems_dir, id, env->langs, err,
				 errlen) < 0)
			return -1;
		pb = p->owned_problem;
	}
	if (pb->unsupported) {
		snprintf(err, errlen, "problem '%s': %s", id, pb->unsupported);
		return -1;
	}
	p->problem = pb;
	p->interactive = pb->interactive;
	p->scoring = pb->scoring;
	p->run_all |= pb->scoring; /* every group's score needs every test */
	p->max_passes = pb->multi_pass ? (int)pb->limits.validation_passes : 1;
	struct limits_policy pol;
	limits_policy_from_config(env->cfg, &pol);
	limits_run(&pol, p->lang, &pb->limits, &req->limits, &p->run_limits);
	p->tests = xcalloc((size_t)pb->ntests, sizeof *p->tests);
	p->explicit_tests = true;
	for (int i = 0; i < pb->ntests; i++) {
		const struct problem_test *pt = &pb->tests[i];
		struct grade_test *g = &p->tests[p->ntests++];
		g->name = xstrdup(pt->name);
		g->stdin_path = xstrdup(pt->in_path);
		g->expected_path = pt->ans_path ? xstrdup(pt->ans_path) : NULL;
		g->hide_data = !pt->is_sample;
		g->cmp = &pt->cmp;
		g->validator_args = (const char *const *)pt->validator_args;
		g->points = -1;
	}
	return 0;
}

static int plan_tests(struct grade_plan *p, const struct grade_env *env,
		      const struct grade_request *req, char *err, size_t errlen)
{
	if (req->problem)
		return plan_problem(p, env, req, req->problem, err, errlen);
	int n = req->ntests > 0 ? req->ntests : 1;
	p->tests = xcalloc((size_t)n, sizeof *p->tests);
	p->explicit_tests = req->ntests > 0;
	for (int i = 0; i < req->ntests; i++) {
		const struct grade_test_in *t = &req->tests[i];
		add_test(p, t->name, t->stdin_data, t->stdin_len, t->expected, t->expected_len);
		p->tests[i].points = t->points;
		p->points |= t->points >= 0;
	}
	p->run_all |= p->points; /* partial credit needs every test's verdict */
	if (!req->ntests)
		add_test(p, "1", req->stdin_data, req->stdin_len, req->expected, req->expected_len);
	return 0;
}

void grade_plan_release(struct grade_plan *p)
{
	for (int i = 0; i < p->ntests; i++) {
		free(p->tests[i].name);
		free(p->tests[i].stdin_path);
		free(p->tests[i].expected_path);
	}
	free(p->tests);
	if (p->own_checker)
		checker_close(p->checker);
	if (p->owned_problem)
		problem_release(p->owned_problem);
	free(p->owned_problem);
	compile_argv_free(p->compile_argv);
	free(p->run_argv);
	memset(p, 0, sizeof *p);
}

int grade_plan_make(struct grade_plan *p, const struct grade_env *env,
		    const struct grade_request *req, char *err, size_t errlen)
{
	memset(p, 0, sizeof *p);
	if (!req->language || !req->source) {
		snprintf(err, errlen, "request has no %s", req->language ? "source" : "language");
		return -1;
	}
	p->lang = lang_find(env->langs, req->language);
	if (!p->lang) {
		snprintf(err, errlen, "unknown language");
		return -1;
	}
	p->source = req->source;
	p->source_len = req->source_len;
	p->run_all = req->run_all_tests;
	p->cancel = env->cancel;
	p->backend = env->backend;
	p->slot = env->slot;
	p->warm_compile =
	    env->cfg->warm_start && !strcmp(env->cfg->warm_start, "on") && compsrv_enabled();
	p->max_passes = 1;
	p->live = env;
	p->cmp = req->cmp;
	size_t n = 0;
	while (p->lang->run_argv && p->lang->run_argv[n])
		n++;
	p->run_argv = xcalloc(n + (size_t)req->nargs + 1, sizeof *p->run_argv);
	for (size_t i = 0; i < n; i++)
		p->run_argv[i] = p->lang->run_argv[i];
	for (int i = 0; i < req->nargs; i++)
		p->run_argv[n + (size_t)i] = req->args[i];
	plan_limits(p, env->cfg, req);
	return plan_tests(p, env, req, err, errlen);
}

/* What judging one run tells beyond its verdict: the validator's score and
 * next pass (scoring and multi-pass problems). */
struct judge_extra {
	int pass;		    /* 1 for the first run of a test */
	const struct strbuf *input; /* a later pass: its input (the validator's too) */
	struct strbuf *nextpass;    /* multi-pass: receives nextpass.in */
	bool has_next;
	struct score_test score;
};

/* Asks the package's output validator (checker.h). Its crash is the
 * package's fault (internal_error); its own limits hit on this output are
 * wrong_answer with the reason (checker.h). */
static enum sub_status judge_checker(const struct grade_plan *p, const struct grade_test *t,
				     const struct run_result *rr, struct grade_feedback *fb,
				     struct judge_extra *x, char *err, size_t errlen)
{
	struct checker_verdict v;
	struct checker_call call = {
	    .in_path = t->stdin_path,
	    .ans_path = t->expected_path,
	    .output = rr->out.buf,
	    .output_len = rr->out.len,
	    .args = t->validator_args,
	    .keep_feedback = x && x->pass > 1,
	    .in_data = x && x->input ? x->input->buf : NULL,
	    .in_len = x && x->input ? x->input->len : 0,
	    .nextpass = x ? x->nextpass : NULL,
	};
	checker_run_call(p->checker, &call, &v);
	if (v.outcome == CHECKER_FAIL) {
		snprintf(err, errlen, "test '%.100s': %.380s", t->name, v.message);
		return SUB_INTERNAL_ERROR;
	}
	if (v.outcome == CHECKER_ACCEPT) {
		if (x) {
			x->has_next = v.nextpass;
			x->score.has_value = v.has_score;
			x->score.multiplier = v.multiplier;
			x->score.value = v.score;
		}
		return SUB_ACCEPTED;
	}
	fb->present = true;
	if (v.outcome == CHECKER_LIMIT)
		snprintf(fb->message, sizeof fb->message, "not accepted: %.400s on this output",
			 v.message);
	else
		snprintf(fb->message, sizeof fb->message, "%s",
			 v.message[0] ? v.message : "rejected by the output validator");
	return SUB_WRONG_ANSWER;
}

/* Maps a run that did not fail to a verdict, comparing when there is an expected output. */
static enum sub_status judge_output(const struct grade_plan *p, const struct grade_test *t,
				    const struct run_result *rr, struct grade_feedback *fb,
				    struct judge_extra *x, char *err, size_t errlen)
{
	const struct compare_options *cmp = t->cmp ? t->cmp : &p->cmp;
	/* an output validator judges tests with no answer file too (multi-pass) */
	if (cmp->mode == CMP_CHECKER && t->stdin_path)
		return judge_checker(p, t, rr, fb, x, err, errlen);
	if (!t->has_expected && !t->expected_path)
		return SUB_COMPLETED;
	struct strbuf file = STRBUF_INIT;
	const char *exp = t->expected;
	size_t exp_len = t->expected_len;
	if (t->expected_path) {
		int rc = strbuf_read_file(&file, t->expected_path, EXPECTED_FILE_MAX);
		if (rc < 0) {
			snprintf(err, errlen, "cannot read answer file '%s': %s", t->expected_path,
				 strerror(-rc));
			strbuf_release(&file);
			return SUB_INTERNAL_ERROR;
		}
		exp = file.buf;
		exp_len = file.len;
	}
	struct compare_feedback cf;
	memset(&cf, 0, sizeof cf);
	enum compare_outcome o = compare_outputs(cmp, exp, exp_len, rr->out.buf, rr->out.len, &cf);
	strbuf_release(&file);
	if (o == CMP_MATCH)
		return SUB_ACCEPTED;
	if (o == CMP_ERROR) {
		snprintf(err, errlen, "comparison failed: %s", cf.message);
		return SUB_INTERNAL_ERROR;
	}
	fb->present = fb->has_position = true;
	fb->line = cf.line;
	fb->column = cf.column;
	fb->has_expected = !t->hide_data;
	snprintf(fb->expected, sizeof fb->expected, "%s", cf.expected);
	snprintf(fb->got, sizeof fb->got, "%s", cf.got);
	snprintf(fb->message, sizeof fb->message, "%s", cf.message);
	return SUB_WRONG_ANSWER;
}

enum sub_status grade_run_verdict(enum run_status s)
{
	switch (s) {
	case RUN_RUNTIME_ERROR:
		return SUB_RUNTIME_ERROR;
	case RUN_TIMEOUT:
		return SUB_TIMEOUT;
	case RUN_MEMORY_LIMIT:
		return SUB_MEMORY_LIMIT;
	case RUN_OUTPUT_LIMIT:
		return SUB_OUTPUT_LIMIT;
	case RUN_OK:
		return SUB_COMPLETED;
	case RUN_INTERNAL_ERROR:
		break;
	}
	return SUB_INTERNAL_ERROR;
}

static enum sub_status judge_test(const struct grade_plan *p, int i, const struct run_result *rr,
				  struct grade_feedback *fb, struct judge_extra *x, char *err,
				  size_t errlen)
{
	memset(fb, 0, sizeof *fb);
	if (rr->status != RUN_OK) {
		enum sub_status st = grade_run_verdict(rr->status);
		if (st == SUB_INTERNAL_ERROR)
			snprintf(err, errlen, "sandbox failed on test '%s': %s", p->tests[i].name,
				 rr->message[0] ? rr->message : "invalid run specification");
		return st;
	}
	return judge_output(p, &p->tests[i], rr, fb, x, err, errlen);
}

enum sub_status grade_judge_test(const struct grade_plan *p, int i, const struct run_result *rr,
				 struct grade_feedback *fb, char *err, size_t errlen)
{
	return judge_test(p, i, rr, fb, NULL, err, errlen);
}

static struct grade_run_facts run_facts(const struct run_result *rr)
{
	struct grade_run_facts f = {
	    .exited = rr->status != RUN_INTERNAL_ERROR && !rr->signal &&
		      rr->status != RUN_TIMEOUT && rr->status != RUN_MEMORY_LIMIT &&
		      rr->status != RUN_OUTPUT_LIMIT,
	    .exit_code = rr->exit_code,
	    .signal = rr->signal,
	    .time_ms = rr->cpu_ms,
	    .wall_ms = rr->wall_ms,
	    .memory_kb = rr->memory_kb,
	};
	return f;
}

void grade_tally_start(struct grade_tally *t, const struct grade_plan *p, struct grade_result *res)
{
	memset(t, 0, sizeof *t);
	res->status = SUB_ACCEPTED;
	res->has_tests = p->explicit_tests;
	res->tests_total = p->ntests;
	if (p->explicit_tests)
		res->tests = xcalloc((size_t)p->ntests, sizeof *res->tests);
}

bool grade_tally_add(struct grade_tally *t, const struct grade_plan *p, struct grade_result *res,
		     int i, enum sub_status st, struct run_result *rr,
		     const struct grade_feedback *fb)
{
	const struct grade_test *gt = &p->tests[i];
	/* an output validator judges a test without an answer file too */
	t->any_expected |=
	    gt->has_expected || gt->expected_path || (gt->cmp && gt->cmp->mode == CMP_CHECKER);
	t->max_cpu = rr->cpu_ms > t->max_cpu ? rr->cpu_ms : t->max_cpu;
	t->max_wall = rr->wall_ms > t->max_wall ? rr->wall_ms : t->max_wall;
	t->max_mem = rr->memory_kb > t->max_mem ? rr->memory_kb : t->max_mem;
	if (res->has_tests) {
		struct grade_test_out *o = &res->tests[res->ntests++];
		o->name = xstrdup(gt->name);
		o->status = st;
		o->run = run_facts(rr);
		o->feedback = *fb;
	}
	bool failed = st != SUB_ACCEPTED && st != SUB_COMPLETED;
	if (!t->decided && (failed || i == p->ntests - 1)) {
		/* the first failing test decides; else the last one speaks */
		t->decided = failed;
		res->status = st;
		res->ran = true;
		res->run = run_facts(rr);
		res->feedback = *fb;
		/* take the output: swap buffers, so rr keeps something to release */
		struct strbuf tmp = res->out;
		res->out = rr->out;
		rr->out = tmp;
		tmp = res->err;
		res->err = rr->err;
		rr->err = tmp;
		res->out_truncated = rr->out_truncated;
		res->err_truncated = rr->err_truncated;
	}
	return failed && !p->run_all;
}

void grade_tally_finish(const struct grade_tally *t, const struct grade_plan *p,
			struct grade_result *res)
{
	if (res->status == SUB_ACCEPTED && !t->any_expected)
		res->status = SUB_COMPLETED;
	if (p->ntests > 1) {
		/* across several tests the worst time and memory tell most */
		res->run.time_ms = t->max_cpu;
		res->run.wall_ms = t->max_wall;
		res->run.memory_kb = t->max_mem;
	}
}

/* run_spec.on_output of a compile: both of the compiler's streams are fd 3
 * of the live output (grade_env.on_output). */
static void compiler_output(void *arg, int fd, const char *data, size_t len)
{
	(void)fd;
	const struct grade_env *env = arg;
	env->on_output(env->live_arg, GRADE_COMPILER_FD, data, len);
}

/* Fills c from rr, the run of a compiler (or, compile_in_run, the program's
 * run that told a compile error): its output (stdout then stderr, cut at
 * COMPILE_OUTPUT_MAX), whether it compiled, its time and memory. */
static void compile_from_run(struct grade_compile *c, const struct run_result *rr)
{
	struct strbuf *text = &c->output;
	strbuf_add(text, rr->out.buf, rr->out.len);
	strbuf_add(text, rr->err.buf, rr->err.len);
	if (rr->status == RUN_TIMEOUT)
		strbuf_addstr(text, "\ncompilation exceeded its time limit\n");
	else if (rr->status == RUN_MEMORY_LIMIT)
		strbuf_addstr(text, "\ncompilation exceeded its memory limit\n");
	else if (rr->status == RUN_OUTPUT_LIMIT)
		strbuf_addstr(text, "\ncompiler output exceeded its limit\n");
	if (text->len > COMPILE_OUTPUT_MAX) {
		/* cut at a character boundary: back up over continuation bytes */
		size_t cut = COMPILE_OUTPUT_MAX;
		while (cut > 0 && ((unsigned char)text->buf[cut] & 0xc0) == 0x80)
			cut--;
		text->len = cut;
		text->buf[cut] = 0;
		strbuf_addstr(text, "\n[compiler output truncated]\n");
	}
	c->ran = true;
	c->ok = rr->status == RUN_OK && rr->exit_code == 0;
	c->time_ms = rr->cpu_ms;
	c->wall_ms = rr->wall_ms;
	c->memory_kb = rr->memory_kb;
}

/* Compiles the box's source file through its language's warm compile server
 * when p may (compsrv.h): one source and no compiler options, the server gets
 * the file's bytes. True with rr filled as the compiler's run; false (the reason
 * logged, rr cleared) when the cold path must compile. */
static bool warm_compile(const struct grade_plan *p, struct sandbox *sb, struct run_result *rr)
{
	if (!p->warm_compile || !p->lang->compile_server_argv || p->compile_argv)
		return false;
	/* what the compiler would read: the box's source file (a function
	 * problem's harness, say, is not the request's source) */
	struct strbuf src = STRBUF_INIT;
	char err[512];
	int rc =
	    sandbox_read_file(sb, p->lang->source_file, &src, (size_t)p->compile_limits.file_bytes);
	if (rc < 0) {
		snprintf(err, sizeof err, "cannot read '%s' of the box: %s", p->lang->source_file,
			 strerror(-rc));
		goto cold;
	}
	struct compsrv_job job = {
	    .lang = p->lang,
	    .backend = sandbox_tool_backend(p->backend),
	    .slot = p->slot,
	    .limits = p->compile_limits,
	    .source = src.buf,
	    .source_len = src.len,
	    .box = sb,
	};
	rc = compsrv_compile(&job, rr, err, sizeof err);
	strbuf_release(&src);
	if (rc == 0)
		return true;
cold:
	strbuf_release(&src);
	log_warn("compsrv: %s compile of slot %d falls back to a fresh compiler: %s", p->lang->name,
		 p->slot, err);
	run_result_release(rr);
	run_result_init(rr);
	return false;
}

/* Compiles the source in sb into res->compile. Returns 0 when it compiled (or
 * needs no compiling), 1 on a compile error, -1 on an internal error (message
 * in err). */
int grade_compile(const struct grade_plan *p, struct sandbox *sb, struct grade_result *res,
		  char *err, size_t errlen)
{
	struct grade_compile *c = &res->compile;
	if (!p->lang->compile_argv)
		return 0;
	struct run_spec spec = {
	    .argv =
		(const char *const *)(p->compile_argv ? p->compile_argv : p->lang->compile_argv),
	    .env =
		(const char *const *)(p->lang->compile_env ? p->lang->compile_env : p->lang->env),
	    .ro_paths = (const char *const *)p->lang->ro_paths,
	    .limits = p->compile_limits,
	    .trusted_tool = true,
	    /* the program's runs follow, in this backend when the tools run there */
	    .more_runs = sandbox_tool_backend(p->backend) == p->backend,
	    .on_output = p->live && p->live->on_output ? compiler_output : NULL,
	    .output_arg = (void *)p->live,
	};
	struct run_result rr;
	run_result_init(&rr);
	int ret = -1;
	if (warm_compile(p, sb, &rr)) {
		if (spec.on_output && rr.out.len)
			spec.on_output(spec.output_arg, 1, rr.out.buf, rr.out.len);
		compile_from_run(c, &rr);
		ret = c->ok ? 0 : 1;
		goto out;
	}
	if (sandbox_run(sb, &spec, &rr) < 0 || rr.status == RUN_INTERNAL_ERROR) {
		snprintf(err, errlen, "compiler sandbox failed: %s",
			 rr.message[0] ? rr.message : "invalid run specification");
		goto out;
	}
	compile_from_run(c, &rr);
	ret = c->ok ? 0 : 1;
out:
	run_result_release(&rr);
	return ret;
}

/* True (with the reason in err) once the caller no longer wants the result. */
static bool cancelled(const struct grade_plan *p, char *err, size_t errlen)
{
	if (!p->cancel || !atomic_load(p->cancel))
		return false;
	snprintf(err, errlen, "grading stopped: the result is no longer wanted");
	return true;
}

static struct run_spec test_spec(const struct grade_plan *p, int i)
{
	const struct grade_test *t = &p->tests[i];
	struct run_spec spec = {
	    .argv = (const char *const *)p->run_argv,
	    .env = (const char *const *)p->lang->env,
	    .ro_paths = (const char *const *)p->lang->ro_paths,
	    .warm_argv = (const char *const *)p->lang->warm_argv,
	    .preload = (const char *const *)p->lang->preload,
	    .zygote_argv = (const char *const *)p->lang->zygote_argv,
	    .stdin_data = t->stdin_data,
	    .stdin_len = t->stdin_len,
	    .stdin_path = t->stdin_path,
	    .limits = p->run_limits,
	    .more_runs = i < p->ntests - 1 || p->max_passes > 1,
	    .on_output = p->live ? p->live->on_output : NULL,
	    .output_arg = p->live ? p->live->live_arg : NULL,
	};
	return spec;
}

/* Runs test i into rr and judges it: once, or (multi-pass) again in the same
 * box with the validator's nextpass.in as input while it asks, up to
 * max_passes. The limits hold for each pass; rr reports the last pass, with
 * the largest time and memory of all. Returns the verdict. */
/* Test i of an interactive problem: the submission and the validator talk
 * (interact.h); rr receives the submission's run. Returns the verdict. */
static enum sub_status run_interactive(const struct grade_plan *p, struct sandbox *sb, int i,
				       struct run_result *rr, struct grade_feedback *fb,
				       struct judge_extra *x, char *err, size_t errlen)
{
	const struct grade_test *t = &p->tests[i];
	struct run_spec spec = test_spec(p, i);
	struct checker_call call = {
	    .in_path = t->stdin_path, .ans_path = t->expected_path, .args = t->validator_args};
	struct interact_result ir;
	memset(fb, 0, sizeof *fb);
	x->pass = 1;
	if (interact_run(sb, &spec, p->checker, &call, &ir, err, errlen) < 0) {
		run_result_release(&ir.sub);
		return SUB_INTERNAL_ERROR;
	}
	char why[400] = "";
	enum sub_status st = interact_verdict(&ir, why, sizeof why);
	if (st == SUB_INTERNAL_ERROR)
		snprintf(err, errlen, "test '%.100s': %.380s", t->name, why);
	if (st == SUB_WRONG_ANSWER) {
		fb->present = true;
		snprintf(fb->message, sizeof fb->message, "%s",
			 ir.val.message[0] ? ir.val.message : "rejected by the output validator");
	}
	if (st == SUB_ACCEPTED) {
		x->score.has_value = ir.val.has_score;
		x->score.multiplier = ir.val.multiplier;
		x->score.value = ir.val.score;
	}
	/* rr takes the submission's run (its stderr, times, exit) */
	run_result_release(rr);
	*rr = ir.sub;
	return st;
}

static enum sub_status run_test(const struct grade_plan *p, struct sandbox *sb, int i,
				struct run_result *rr, struct grade_feedback *fb,
				struct judge_extra *x, char *err, size_t errlen)
{
	if (p->interactive)
		return run_interactive(p, sb, i, rr, fb, x, err, errlen);
	struct run_spec spec = test_spec(p, i);
	struct strbuf next = STRBUF_INIT, input = STRBUF_INIT;
	long cpu = 0, wall = 0, mem = 0;
	enum sub_status st = SUB_INTERNAL_ERROR;
	x->nextpass = p->max_passes > 1 ? &next : NULL;
	for (x->pass = 1;; x->pass++) {
		if (x->pass > 1) {
			run_result_release(rr);
			run_result_init(rr);
		}
		if (sandbox_run(sb, &spec, rr) < 0)
			rr->status = RUN_INTERNAL_ERROR;
		cpu = rr->cpu_ms > cpu ? rr->cpu_ms : cpu;
		wall = rr->wall_ms > wall ? rr->wall_ms : wall;
		mem = rr->memory_kb > mem ? rr->memory_kb : mem;
		x->has_next = false;
		st = judge_test(p, i, rr, fb, x, err, errlen);
		if (st != SUB_ACCEPTED || !x->has_next)
			break;
		if (x->pass >= p->max_passes) {
			snprintf(err, errlen,
				 "test '%.100s': the output validator asked for pass %d of at most "
				 "%d (limits.validation_passes)",
				 p->tests[i].name, x->pass + 1, p->max_passes);
			st = SUB_INTERNAL_ERROR;
			break;
		}
		if (cancelled(p, err, errlen)) {
			st = SUB_INTERNAL_ERROR;
			break;
		}
		/* the next pass reads what the validator wrote */
		struct strbuf tmp = input;
		input = next;
		next = tmp;
		spec.stdin_data = input.buf;
		spec.stdin_len = input.len;
		spec.stdin_path = NULL;
		x->input = &input;
	}
	rr->cpu_ms = cpu;
	rr->wall_ms = wall;
	rr->memory_kb = mem;
	x->input = NULL;
	x->nextpass = NULL;
	strbuf_release(&next);
	strbuf_release(&input);
	return st;
}

/* Scores res from its tests: the package's groups (score.h), or inline tests'
 * points (the points of the accepted ones). */
static void finish_score(const struct grade_plan *p, const struct score_test *sc,
			 struct grade_result *res)
{
	if (p->points) {
		res->has_score = true;
		for (int i = 0; i < p->ntests; i++) {
			double pts = p->tests[i].points > 0 ? p->tests[i].points : 0;
			res->max_score += pts;
			if (i < res->ntests) {
				res->tests[i].has_score = true;
				res->tests[i].score = sc[i].accepted ? pts : 0;
				res->score += res->tests[i].score;
			}
		}
		return;
	}
	const struct problem *pb = p->problem;
	if (!p->scoring || !pb)
		return;
	struct score_group *g = xcalloc((size_t)pb->ngroups + 1, sizeof *g);
	double *ts = xcalloc((size_t)pb->ntests + 1, sizeof *ts);
	res->has_score = true;
	res->score = score_problem(pb, sc, g, ts, &res->max_score);
	for (int i = 0; i < res->ntests && i < pb->ntests; i++) {
		res->tests[i].has_score = true;
		res->tests[i].score = ts[i];
	}
	res->groups = xcalloc((size_t)pb->ngroups + 1, sizeof *res->groups);
	for (int i = 0; i < pb->ngroups; i++) {
		if (!strcmp(pb->groups[i].name, "sample") || pb->groups[i].parent < 0)
			continue; /* samples count nothing; data/secret is the score itself */
		struct grade_group_out *o = &res->groups[res->ngroups++];
		o->name = xstrdup(pb->groups[i].name);
		o->score = g[i].score;
		o->max_score = g[i].max;
		o->accepted = g[i].accepted;
	}
	free(g);
	free(ts);
}

/* compile_in_run: when rr, the first run of the program, exited non-zero with
 * a stderr the language's pattern matches, res becomes the compile_error the
 * compile step would have given (compile output, no run, no tests: the tally
 * grade_tally_start began is undone) and true is returned. A program that
 * prints such a text and exits non-zero on purpose is judged compile_error:
 * that only hurts itself. */
static bool compile_error_in_run(const struct grade_plan *p, const struct run_result *rr,
				 struct grade_result *res)
{
	if (!p->compile_in_run || rr->status != RUN_RUNTIME_ERROR || rr->signal || !rr->exit_code ||
	    rr->err_truncated || !lang_compile_error_in_run(p->lang, rr->err.buf, rr->err.len))
		return false;
	free(res->tests);
	res->tests = NULL;
	res->ntests = 0;
	res->has_tests = false;
	res->tests_total = 0;
	compile_from_run(&res->compile, rr);
	res->status = SUB_COMPILE_ERROR;
	return true;
}

/* Runs the tests in order into res. Returns 0, or -1 on the judge's own
 * failure (message in err). */
static int run_tests(const struct grade_plan *p, struct sandbox *sb, struct grade_result *res,
		     char *err, size_t errlen)
{
	struct grade_tally tally;
	struct score_test *sc = xcalloc((size_t)p->ntests + 1, sizeof *sc);
	int ret = -1;
	grade_tally_start(&tally, p, res);
	for (int i = 0; i < p->ntests; i++) {
		if (cancelled(p, err, errlen))
			goto out;
		struct run_result rr;
		struct grade_feedback fb;
		struct judge_extra x = {0};
		run_result_init(&rr);
		enum sub_status st = run_test(p, sb, i, &rr, &fb, &x, err, errlen);
		if (i == 0 && compile_error_in_run(p, &rr, res)) {
			run_result_release(&rr);
			ret = 0;
			goto out;
		}
		if (p->live && p->live->on_test) {
			struct grade_test_out to = {.name = p->tests[i].name,
						    .status = st,
						    .run = run_facts(&rr),
						    .feedback = fb,
						    .passes = p->max_passes > 1 ? x.pass : 0};
			p->live->on_test(p->live->live_arg, &to);
		}
		bool stop =
		    st == SUB_INTERNAL_ERROR || grade_tally_add(&tally, p, res, i, st, &rr, &fb);
		run_result_release(&rr);
		if (st == SUB_INTERNAL_ERROR)
			goto out;
		sc[i] = x.score;
		sc[i].ran = true;
		sc[i].accepted = st == SUB_ACCEPTED;
		if (p->max_passes > 1 && res->has_tests)
			res->tests[res->ntests - 1].passes = x.pass;
		if (stop)
			break;
	}
	grade_tally_finish(&tally, p, res);
	finish_score(p, sc, res);
	ret = 0;
out:
	free(sc);
	return ret;
}

/* Writes the request's extra files beside the source; when some are sources of
 * the language, they are compiled with it (plan's compile_argv). */
static int write_files(struct grade_plan *p, struct sandbox *sb, const struct grade_request *req,
		       char *err, size_t errlen)
{
	const char *srcs[257];
	int n = 0;
	for (int i = 0; i < req->nfiles; i++) {
		const char *name = req->files[i].name;
		if (!strcmp(name, p->lang->source_file)) {
			snprintf(err, errlen, "bad entry in files: '%s'", name);
			return -1;
		}
		int rc =
		    sandbox_write_file(sb, name, req->files[i].content, req->files[i].len, 0644);
		if (rc < 0) {
			snprintf(err, errlen, "cannot write '%s' into the box: %s", name,
				 strerror(-rc));
			return -1;
		}
		if (n < 256 && compile_is_source(p->lang, name))
			srcs[n++] = name;
	}
	/* the package's included files go in last: they win over the submission's */
	char *inc_dir = NULL, **inc = NULL;
	int ni = p->problem
		     ? problem_include_files(p->problem, p->lang->problem_language, &inc_dir, &inc)
		     : 0;
	int ret = ni < 0 ? -1 : 0;
	for (int i = 0; i < ni && ret == 0; i++) {
		struct strbuf path = STRBUF_INIT, data = STRBUF_INIT;
		strbuf_addf(&path, "%s/%s", inc_dir, inc[i]);
		/* a driver named like the main file would replace the submission itself */
		int rc = strcmp(inc[i], p->lang->source_file)
			     ? strbuf_read_file(&data, path.buf, EXPECTED_FILE_MAX)
			     : -ENOTSUP;
		if (rc == 0)
			rc = sandbox_write_file(sb, inc[i], data.buf, data.len, 0644);
		if (rc < 0) {
			snprintf(err, errlen, "included file '%s': %s", path.buf, strerror(-rc));
			ret = -1;
		} else if (n < 256 && compile_is_source(p->lang, inc[i])) {
			srcs[n++] = inc[i];
		}
		strbuf_release(&path);
		strbuf_release(&data);
	}
	if (ni < 0)
		snprintf(err, errlen, "cannot list the included files of the problem");
	srcs[n] = NULL;
	if (ret == 0 && (n > 0 || req->ncompiler_options) && p->lang->compile_argv)
		p->compile_argv =
		    compile_command(p->lang, srcs, (const char *const *)req->compiler_options);
	problem_names_free(inc);
	free(inc_dir);
	return ret;
}

/* A source that is not UTF-8 text (a binary, UTF-16, a NUL byte) is no program:
 * a compile_error that names the first bad byte, decided without a sandbox. The
 * API can only send UTF-8 text (JSON); this makes every front agree. Returns
 * true when the source was refused into res. */
static bool refuse_binary_source(const struct grade_plan *p, struct grade_result *res)
{
	const unsigned char *s = (const unsigned char *)p->source;
	size_t i = 0, n = p->source_len, k;
	while (i < n && s[i] && (k = utf8_seq_len(s + i, n - i)) > 0)
		i += k;
	if (i == n)
		return false;
	struct grade_compile *c = &res->compile;
	strbuf_addf(&c->output,
		    "source is not text: %s at byte %zu (a source must be UTF-8 text)\n",
		    s[i] ? "invalid UTF-8" : "a NUL byte", i);
	c->ran = true;
	c->ok = false;
	res->status = SUB_COMPILE_ERROR;
	return true;
}

/* Writes the program into a fresh box, compiles and runs it into res. Returns
 * 0, or -1 on the judge's own failure (message in err). */
static int grade_in_box(const struct grade_env *env, struct grade_plan *plan,
			const struct grade_request *req, struct grade_result *res, char *err,
			size_t errlen)
{
	struct sandbox *sb = NULL;
	int ret = -1;
	if (refuse_binary_source(plan, res))
		return 0;
	int rc = sandbox_open(env->backend, env->slot, env->cfg->tmp_size_mb * 1024 * 1024, &sb,
			      err, errlen);
	if (rc < 0)
		goto out;
	sandbox_set_reuse_key(sb, env->reuse_key);
	rc = sandbox_write_file(sb, plan->lang->source_file, plan->source, plan->source_len, 0644);
	if (rc < 0) {
		snprintf(err, errlen, "cannot write the source into the box: %s", strerror(-rc));
		goto out;
	}
	if (write_files(plan, sb, req, err, errlen) < 0 || cancelled(plan, err, errlen))
		goto out;
	/* one source (no compile_argv of several) and a language that tells a
	 * compile error from the run: no compile step (lang.h, compile_in_run);
	 * an interactive run talks to the validator first, so it keeps the step */
	plan->compile_in_run = plan->lang->compile_in_run && !plan->compile_argv &&
			       !plan->interactive && plan->ntests > 0;
	rc = plan->compile_in_run ? 0 : grade_compile(plan, sb, res, err, errlen);
	if (rc < 0)
		goto out;
	if (rc > 0) {
		res->status = SUB_COMPILE_ERROR;
		ret = 0;
		goto out;
	}
	if (plan->problem && plan->problem->custom_validator && !plan->checker) {
		if (checker_build(plan->problem, env->langs, env->cfg, env->backend, env->slot,
				  &plan->checker, err, errlen) < 0)
			goto out;
		plan->own_checker = true;
	}
	ret = run_tests(plan, sb, res, err, errlen);
out:
	if (sb)
		sandbox_close(sb);
	return ret;
}

void grade_request(const struct grade_env *env, const struct grade_request *req,
		   struct grade_result *out)
{
	char err[512] = "";
	struct grade_plan plan;
	if (req->func || req->test_code) {
		funcgrade_request(env, req, out);
		return;
	}
	if (req->eval) {
		evrun_request(env, req, out);
		return;
	}
	model_result_init(out);
	if (grade_plan_make(&plan, env, req, err, sizeof err) < 0) {
		model_result_fail(out, req->language, "%s", err);
		goto out;
	}
	if (grade_in_box(env, &plan, req, out, err, sizeof err) < 0) {
		log_error("grade: %s: %s", req->language, err);
		model_result_fail(out, req->language, "%s", err);
		goto out;
	}
	out->language = xstrdup(plan.lang->name);
out:
	grade_plan_release(&plan);
}
