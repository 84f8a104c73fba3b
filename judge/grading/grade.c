/* grade: compile once, run each test, compare, aggregate into the result JSON.
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
#include "common/config.h"
#include "judge/grading/lang.h"
#include "common/log.h"
#include "judge/grading/problem.h"
#include "judge/grading/status.h"
#include "common/strbuf.h"
#include "common/utf8.h"

/* Compiler output kept in the result; the rest is cut. */
#define COMPILE_OUTPUT_MAX (64 * 1024)
/* Expected-output files larger than this are refused as a judge fault. */
#define EXPECTED_FILE_MAX ((size_t)1 << 30)

struct grade_test {
	char *name;
	const char *stdin_data; /* borrowed from the request */
	size_t stdin_len;
	char *stdin_path;     /* host file (problem packages) */
	const char *expected; /* borrowed, or owned in expected_buf */
	size_t expected_len;
	bool has_expected;
	char *expected_path;	    /* host file read at compare time */
	bool hide_data;		    /* secret test: no expected snippet in feedback */
	const struct cmp_opts *cmp; /* problem packages: the test group's options, else NULL */
	const char *const *validator_args; /* custom output validator arguments */
};

struct grade_plan {
	const atomic_bool *cancel;    /* grade_env's */
	enum sandbox_backend backend; /* grade_env's */
	const struct lang *lang;
	const char *source;
	size_t source_len;
	struct run_limits run_limits;
	struct run_limits compile_limits;
	struct cmp_opts cmp;
	bool run_all;
	struct grade_test *tests;
	int ntests;
	bool explicit_tests;	       /* report a tests array */
	const struct problem *problem; /* "problem" requests: env's or owned_problem */
	struct problem *owned_problem;
	struct checker *checker; /* custom output validator; owned when own_checker */
	bool own_checker;
	char **compile_argv; /* programs of several sources (prob_compile_argv), or NULL */
};

static cJSON *error_result(const char *lang, enum sub_status st, const char *msg)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "status", sub_status_name(st));
	if (lang)
		cJSON_AddStringToObject(r, "language", lang);
	cJSON_AddStringToObject(r, "message", msg);
	return r;
}

static long json_long(const cJSON *obj, const char *key, long def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15)
		return (long)v->valuedouble;
	return def;
}

static const char *json_str(const cJSON *obj, const char *key, size_t *len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsString(v) || !v->valuestring)
		return NULL;
	if (len)
		*len = strlen(v->valuestring);
	return v->valuestring;
}

static long pick(long a, long b, long c)
{
	return a > 0 ? a : b > 0 ? b : c;
}

static void plan_limits(struct grade_plan *p, const struct judge_config *cfg, const cJSON *req)
{
	const cJSON *lim = cJSON_GetObjectItemCaseSensitive(req, "limits");
	const struct lang *l = p->lang;
	struct run_limits *r = &p->run_limits;
	r->cpu_ms = pick(json_long(lim, "time_ms", 0), l->time_limit_ms, cfg->time_limit_ms);
	r->wall_ms =
	    pick(json_long(lim, "wall_ms", 0), 0, r->cpu_ms * cfg->wall_limit_factor + 1000);
	r->memory_kb =
	    pick(json_long(lim, "memory_mb", 0), l->memory_limit_mb, cfg->memory_limit_mb) * 1024;
	r->stdout_bytes = pick(json_long(lim, "output_kb", 0), 0, cfg->output_limit_kb) * 1024;
	r->stderr_bytes = cfg->stderr_limit_kb * 1024;
	r->processes = pick(json_long(lim, "processes", 0), l->processes, cfg->processes);
	r->file_bytes = cfg->file_size_kb * 1024;
	r->open_files = cfg->open_files;

	struct run_limits *c = &p->compile_limits;
	c->cpu_ms = pick(l->compile_time_limit_ms, 0, cfg->compile_time_limit_ms);
	c->wall_ms = c->cpu_ms * 2 + 2000;
	c->memory_kb = pick(l->compile_memory_limit_mb, 0, cfg->compile_memory_limit_mb) * 1024;
	c->processes = pick(l->compile_processes, 0, cfg->processes > 128 ? cfg->processes : 128);
	c->stdout_bytes = 1024 * 1024;
	c->stderr_bytes = 1024 * 1024;
	c->file_bytes = cfg->file_size_kb * 1024;
	c->open_files = cfg->open_files;
}

/* Reads compare options: "compare": "tokens" or {"mode": ..., flags...}. */
static int plan_compare(struct grade_plan *p, const cJSON *req, char *err, size_t errlen)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(req, "compare");
	cmp_opts_init(&p->cmp, CMP_LINES);
	if (!c)
		return 0;
	const char *mode = cJSON_IsString(c) ? c->valuestring : json_str(c, "mode", NULL);
	if (mode) {
		enum cmp_mode m;
		if (cmp_mode_parse(mode, &m) < 0) {
			snprintf(err, errlen, "unknown compare mode '%s'", mode);
			return -1;
		}
		cmp_opts_init(&p->cmp, m);
	}
	if (!cJSON_IsObject(c))
		return 0;
	p->cmp.case_sensitive = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "case_sensitive"));
	p->cmp.space_change_sensitive =
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "space_change_sensitive"));
	p->cmp.unordered_tokens =
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "unordered_tokens"));
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "float_tolerance");
	if (cJSON_IsNumber(t))
		p->cmp.float_abs_tol = p->cmp.float_rel_tol = t->valuedouble;
	t = cJSON_GetObjectItemCaseSensitive(c, "float_absolute_tolerance");
	if (cJSON_IsNumber(t))
		p->cmp.float_abs_tol = t->valuedouble;
	t = cJSON_GetObjectItemCaseSensitive(c, "float_relative_tolerance");
	if (cJSON_IsNumber(t))
		p->cmp.float_rel_tol = t->valuedouble;
	return 0;
}

static void add_test(struct grade_plan *p, const char *name, const cJSON *t)
{
	struct grade_test *g = &p->tests[p->ntests++];
	memset(g, 0, sizeof *g);
	g->name = strdup(name);
	g->stdin_data = json_str(t, "stdin", &g->stdin_len);
	g->expected = json_str(t, "expected_output", &g->expected_len);
	g->has_expected = g->expected != NULL;
}

/* Tests, limits and validator options of a problem package (problem.h): env's
 * preloaded package (judge verify) or problems_dir/<id>. The request's own
 * limits win over the package's. */
static int plan_problem(struct grade_plan *p, const struct grade_env *env, const cJSON *req,
			const char *id, char *err, size_t errlen)
{
	const struct problem *pb = env->problem;
	if (pb && !strcmp(pb->id, id)) {
		p->checker = env->checker;
	} else {
		p->owned_problem = calloc(1, sizeof *p->owned_problem);
		if (!p->owned_problem ||
		    prob_open(p->owned_problem, env->cfg->problems_dir, id, err, errlen) < 0) {
			if (!p->owned_problem)
				snprintf(err, errlen, "out of memory");
			return -1;
		}
		pb = p->owned_problem;
	}
	if (pb->unsupported) {
		snprintf(err, errlen, "problem '%s': %s", id, pb->unsupported);
		return -1;
	}
	p->problem = pb;
	const cJSON *lim = cJSON_GetObjectItemCaseSensitive(req, "limits");
	struct run_limits *r = &p->run_limits;
	if (json_long(lim, "time_ms", 0) <= 0 && pb->limits.time_limit_s > 0) {
		r->cpu_ms = (long)(pb->limits.time_limit_s * 1000 + 0.5);
		if (json_long(lim, "wall_ms", 0) <= 0)
			r->wall_ms = r->cpu_ms * env->cfg->wall_limit_factor + 1000;
	}
	if (json_long(lim, "memory_mb", 0) <= 0 && pb->limits.memory_mb > 0)
		r->memory_kb = pb->limits.memory_mb * 1024;
	if (json_long(lim, "output_kb", 0) <= 0 && pb->limits.output_mb > 0)
		r->stdout_bytes = pb->limits.output_mb * 1024 * 1024;
	p->tests = calloc((size_t)pb->ntests, sizeof *p->tests);
	if (!p->tests) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	p->explicit_tests = true;
	for (int i = 0; i < pb->ntests; i++) {
		const struct prob_test *pt = &pb->tests[i];
		struct grade_test *g = &p->tests[p->ntests++];
		g->name = strdup(pt->name);
		g->stdin_path = strdup(pt->in_path);
		g->expected_path = pt->ans_path ? strdup(pt->ans_path) : NULL;
		g->hide_data = !pt->is_sample;
		g->cmp = &pt->cmp;
		g->validator_args = (const char *const *)pt->validator_args;
	}
	return 0;
}

static int plan_tests(struct grade_plan *p, const struct grade_env *env, const cJSON *req,
		      char *err, size_t errlen)
{
	const cJSON *tests = cJSON_GetObjectItemCaseSensitive(req, "tests");
	const char *problem = json_str(req, "problem", NULL);
	if (problem)
		return plan_problem(p, env, req, problem, err, errlen);
	if (cJSON_IsArray(tests) && cJSON_GetArraySize(tests) > 0) {
		int n = cJSON_GetArraySize(tests);
		p->tests = calloc((size_t)n, sizeof *p->tests);
		if (!p->tests) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		p->explicit_tests = true;
		const cJSON *t;
		int i = 0;
		cJSON_ArrayForEach(t, tests)
		{
			char num[32];
			const char *name = json_str(t, "name", NULL);
			snprintf(num, sizeof num, "%d", ++i);
			add_test(p, name ? name : num, t);
		}
		return 0;
	}
	p->tests = calloc(1, sizeof *p->tests);
	if (!p->tests) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	add_test(p, "1", req);
	return 0;
}

static void plan_release(struct grade_plan *p)
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
		prob_release(p->owned_problem);
	free(p->owned_problem);
	prob_argv_free(p->compile_argv);
}

static void add_output(cJSON *obj, const char *key, const struct strbuf *sb)
{
	struct strbuf clean = STRBUF_INIT;
	utf8_sanitize(&clean, sb->buf, sb->len);
	cJSON_AddStringToObject(obj, key, clean.buf);
	strbuf_release(&clean);
}

static void add_nullable_int(cJSON *obj, const char *key, bool present, long v)
{
	if (present)
		cJSON_AddNumberToObject(obj, key, (double)v);
	else
		cJSON_AddNullToObject(obj, key);
}

/* Asks the package's output validator (checker.h). Its failure is the judge's
 * fault (internal_error), never a verdict against the submission. */
static enum sub_status judge_checker(const struct grade_plan *p, const struct grade_test *t,
				     const struct run_result *rr, cJSON **feedback, char *err,
				     size_t errlen)
{
	struct checker_verdict v;
	checker_run(p->checker, t->stdin_path, t->expected_path, rr->out.buf, rr->out.len,
		    t->validator_args, &v);
	if (v.outcome == CHECKER_FAIL) {
		snprintf(err, errlen, "test '%.100s': %.380s", t->name, v.message);
		return SUB_INTERNAL_ERROR;
	}
	if (v.outcome == CHECKER_ACCEPT)
		return SUB_ACCEPTED;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "message",
				v.message[0] ? v.message : "rejected by the output validator");
	*feedback = f;
	return SUB_WRONG_ANSWER;
}

/* Maps a run that did not fail to a verdict, comparing when there is an expected output. */
static enum sub_status judge_output(const struct grade_plan *p, const struct grade_test *t,
				    const struct run_result *rr, cJSON **feedback, char *err,
				    size_t errlen)
{
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
	const struct cmp_opts *cmp = t->cmp ? t->cmp : &p->cmp;
	if (cmp->mode == CMP_CHECKER) {
		strbuf_release(&file);
		return judge_checker(p, t, rr, feedback, err, errlen);
	}
	struct cmp_feedback fb;
	memset(&fb, 0, sizeof fb);
	enum cmp_outcome o = cmp_compare(cmp, exp, exp_len, rr->out.buf, rr->out.len, &fb);
	strbuf_release(&file);
	if (o == CMP_MATCH)
		return SUB_ACCEPTED;
	if (o == CMP_ERROR) {
		snprintf(err, errlen, "comparison failed: %s", fb.message);
		return SUB_INTERNAL_ERROR;
	}
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "line", (double)fb.line);
	cJSON_AddNumberToObject(f, "column", (double)fb.column);
	if (!t->hide_data)
		cJSON_AddStringToObject(f, "expected", fb.expected);
	cJSON_AddStringToObject(f, "got", fb.got);
	cJSON_AddStringToObject(f, "message", fb.message);
	*feedback = f;
	return SUB_WRONG_ANSWER;
}

static enum sub_status run_status_verdict(enum run_status s)
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

static void fill_run_fields(cJSON *obj, const struct run_result *rr, bool with_output)
{
	bool exited = rr->status != RUN_INTERNAL_ERROR && !rr->signal &&
		      rr->status != RUN_TIMEOUT && rr->status != RUN_MEMORY_LIMIT &&
		      rr->status != RUN_OUTPUT_LIMIT;
	add_nullable_int(obj, "exit_code", exited, rr->exit_code);
	add_nullable_int(obj, "signal", rr->signal != 0, rr->signal);
	cJSON_AddNumberToObject(obj, "time_ms", (double)rr->cpu_ms);
	cJSON_AddNumberToObject(obj, "wall_ms", (double)rr->wall_ms);
	cJSON_AddNumberToObject(obj, "memory_kb", (double)rr->memory_kb);
	if (with_output) {
		add_output(obj, "stdout", &rr->out);
		add_output(obj, "stderr", &rr->err);
		cJSON_AddBoolToObject(obj, "stdout_truncated", rr->out_truncated);
		cJSON_AddBoolToObject(obj, "stderr_truncated", rr->err_truncated);
	}
}

/* Compiles the source in sb. Returns 0 when it compiled (or needs no compiling),
 * 1 on a compile error, -1 on an internal error (message in err). */
static int compile(const struct grade_plan *p, struct sandbox *sb, cJSON *result, char *err,
		   size_t errlen)
{
	cJSON *c = cJSON_AddObjectToObject(result, "compile");
	if (!p->lang->compile_argv) {
		cJSON_AddStringToObject(c, "status", "ok");
		cJSON_AddStringToObject(c, "output", "");
		cJSON_AddNumberToObject(c, "time_ms", 0);
		return 0;
	}
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
	};
	struct run_result rr;
	run_result_init(&rr);
	int ret = -1;
	if (sandbox_run(sb, &spec, &rr) < 0 || rr.status == RUN_INTERNAL_ERROR) {
		snprintf(err, errlen, "compiler sandbox failed: %s",
			 rr.message[0] ? rr.message : "invalid run specification");
		goto out;
	}
	struct strbuf text = STRBUF_INIT;
	strbuf_add(&text, rr.out.buf, rr.out.len);
	strbuf_add(&text, rr.err.buf, rr.err.len);
	if (rr.status == RUN_TIMEOUT)
		strbuf_addstr(&text, "\ncompilation exceeded its time limit\n");
	else if (rr.status == RUN_MEMORY_LIMIT)
		strbuf_addstr(&text, "\ncompilation exceeded its memory limit\n");
	else if (rr.status == RUN_OUTPUT_LIMIT)
		strbuf_addstr(&text, "\ncompiler output exceeded its limit\n");
	if (text.len > COMPILE_OUTPUT_MAX) {
		/* cut at a character boundary: back up over continuation bytes */
		size_t cut = COMPILE_OUTPUT_MAX;
		while (cut > 0 && ((unsigned char)text.buf[cut] & 0xc0) == 0x80)
			cut--;
		text.len = cut;
		text.buf[cut] = 0;
		strbuf_addstr(&text, "\n[compiler output truncated]\n");
	}
	bool ok = rr.status == RUN_OK && rr.exit_code == 0;
	cJSON_AddStringToObject(c, "status", ok ? "ok" : "error");
	add_output(c, "output", &text);
	cJSON_AddNumberToObject(c, "time_ms", (double)rr.cpu_ms);
	cJSON_AddNumberToObject(c, "wall_ms", (double)rr.wall_ms);
	cJSON_AddNumberToObject(c, "memory_kb", (double)rr.memory_kb);
	strbuf_release(&text);
	ret = ok ? 0 : 1;
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

static int run_tests(const struct grade_plan *p, struct sandbox *sb, cJSON *result, char *err,
		     size_t errlen)
{
	cJSON *tests = p->explicit_tests ? cJSON_AddArrayToObject(result, "tests") : NULL;
	enum sub_status overall = SUB_ACCEPTED;
	bool any_expected = false, decided = false;
	long max_cpu = 0, max_wall = 0, max_mem = 0;
	struct run_result deciding;
	run_result_init(&deciding);
	cJSON *deciding_feedback = NULL;
	int ret = 0;

	for (int i = 0; i < p->ntests; i++) {
		if (cancelled(p, err, errlen)) {
			ret = -1;
			break;
		}
		const struct grade_test *t = &p->tests[i];
		struct run_spec spec = {
		    .argv = (const char *const *)p->lang->run_argv,
		    .env = (const char *const *)p->lang->env,
		    .ro_paths = (const char *const *)p->lang->ro_paths,
		    .warm_argv = (const char *const *)p->lang->warm_argv,
		    .preload = (const char *const *)p->lang->preload,
		    .stdin_data = t->stdin_data,
		    .stdin_len = t->stdin_len,
		    .stdin_path = t->stdin_path,
		    .limits = p->run_limits,
		    .more_runs = i < p->ntests - 1,
		};
		struct run_result rr;
		run_result_init(&rr);
		if (sandbox_run(sb, &spec, &rr) < 0 || rr.status == RUN_INTERNAL_ERROR) {
			snprintf(err, errlen, "sandbox failed on test '%s': %s", t->name,
				 rr.message[0] ? rr.message : "invalid run specification");
			run_result_release(&rr);
			ret = -1;
			break;
		}
		cJSON *feedback = NULL;
		enum sub_status st = run_status_verdict(rr.status);
		if (rr.status == RUN_OK)
			st = judge_output(p, t, &rr, &feedback, err, errlen);
		if (st == SUB_INTERNAL_ERROR) {
			run_result_release(&rr);
			ret = -1;
			break;
		}
		any_expected |= t->has_expected || t->expected_path;
		max_cpu = rr.cpu_ms > max_cpu ? rr.cpu_ms : max_cpu;
		max_wall = rr.wall_ms > max_wall ? rr.wall_ms : max_wall;
		max_mem = rr.memory_kb > max_mem ? rr.memory_kb : max_mem;
		if (tests) {
			cJSON *tj = cJSON_CreateObject();
			cJSON_AddStringToObject(tj, "name", t->name);
			cJSON_AddStringToObject(tj, "status", sub_status_name(st));
			fill_run_fields(tj, &rr, false);
			if (feedback)
				cJSON_AddItemToObject(tj, "feedback",
						      cJSON_Duplicate(feedback, true));
			cJSON_AddItemToArray(tests, tj);
		}
		bool failed = st != SUB_ACCEPTED && st != SUB_COMPLETED;
		if (!decided && (failed || i == p->ntests - 1)) {
			/* the first failing test decides; else the last one speaks */
			decided = failed;
			overall = st;
			run_result_release(&deciding);
			deciding = rr;
			cJSON_Delete(deciding_feedback);
			deciding_feedback = feedback;
		} else {
			run_result_release(&rr);
			cJSON_Delete(feedback);
		}
		if (failed && !p->run_all)
			break;
	}
	if (ret == 0) {
		if (overall == SUB_ACCEPTED && !any_expected)
			overall = SUB_COMPLETED;
		cJSON_AddStringToObject(result, "status", sub_status_name(overall));
		fill_run_fields(result, &deciding, true);
		if (p->ntests > 1) {
			/* across several tests the worst time and memory tell most */
			cJSON_ReplaceItemInObject(result, "time_ms", cJSON_CreateNumber(max_cpu));
			cJSON_ReplaceItemInObject(result, "wall_ms", cJSON_CreateNumber(max_wall));
			cJSON_ReplaceItemInObject(result, "memory_kb", cJSON_CreateNumber(max_mem));
		}
		if (deciding_feedback) {
			cJSON_AddItemToObject(result, "feedback", deciding_feedback);
			deciding_feedback = NULL;
		} else {
			cJSON_AddNullToObject(result, "feedback");
		}
		if (tests)
			cJSON_AddNumberToObject(result, "tests_total", p->ntests);
	}
	cJSON_Delete(deciding_feedback);
	run_result_release(&deciding);
	return ret;
}

/* Writes the request's extra "files" beside the source; when some are sources of
 * the language, they are compiled with it (plan's compile_argv). */
static int write_files(struct grade_plan *p, struct sandbox *sb, const cJSON *req, char *err,
		       size_t errlen)
{
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(req, "files");
	const cJSON *f;
	const char *srcs[257];
	int n = 0;
	cJSON_ArrayForEach(f, files)
	{
		size_t len;
		const char *name = json_str(f, "name", NULL);
		const char *content = json_str(f, "content", &len);
		if (!name || !content || !strcmp(name, p->lang->source_file)) {
			snprintf(err, errlen, "bad entry in files: '%s'",
				 name ? name : "(no name)");
			return -1;
		}
		int rc = sandbox_write_file(sb, name, content, len, 0644);
		if (rc < 0) {
			snprintf(err, errlen, "cannot write '%s' into the box: %s", name,
				 strerror(-rc));
			return -1;
		}
		if (n < 256 && prob_is_source_for(p->lang, name))
			srcs[n++] = name;
	}
	/* the package's included files go in last: they win over the submission's */
	char *inc_dir = NULL, **inc = NULL;
	int ni = p->problem ? prob_include_files(p->problem, p->lang->name, &inc_dir, &inc) : 0;
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
		} else if (n < 256 && prob_is_source_for(p->lang, inc[i])) {
			srcs[n++] = inc[i];
		}
		strbuf_release(&path);
		strbuf_release(&data);
	}
	if (ni < 0)
		snprintf(err, errlen, "cannot list the included files of the problem");
	srcs[n] = NULL;
	if (ret == 0 && n > 0 && p->lang->compile_argv)
		p->compile_argv = prob_compile_argv(p->lang, srcs);
	prob_argv_free(inc);
	free(inc_dir);
	return ret;
}

cJSON *grade_request(const struct grade_env *env, const cJSON *request)
{
	char err[512] = "";
	struct grade_plan plan;
	memset(&plan, 0, sizeof plan);
	const char *lang_name = json_str(request, "language", NULL);
	if (!lang_name)
		return error_result(NULL, SUB_INTERNAL_ERROR, "request has no language");
	plan.lang = lang_find(env->langs, lang_name);
	if (!plan.lang)
		return error_result(lang_name, SUB_INTERNAL_ERROR, "unknown language");
	plan.source = json_str(request, "source", &plan.source_len);
	if (!plan.source)
		return error_result(lang_name, SUB_INTERNAL_ERROR, "request has no source");
	plan.run_all = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(request, "run_all_tests"));
	plan.cancel = env->cancel;
	plan.backend = env->backend;
	plan_limits(&plan, env->cfg, request);
	if (plan_compare(&plan, request, err, sizeof err) < 0 ||
	    plan_tests(&plan, env, request, err, sizeof err) < 0) {
		plan_release(&plan);
		return error_result(lang_name, SUB_INTERNAL_ERROR, err);
	}

	cJSON *result = cJSON_CreateObject();
	struct sandbox *sb = NULL;
	int rc = sandbox_open(env->backend, env->slot, env->cfg->tmp_size_mb * 1024 * 1024, &sb,
			      err, sizeof err);
	if (rc < 0)
		goto internal;
	rc = sandbox_write_file(sb, plan.lang->source_file, plan.source, plan.source_len, 0644);
	if (rc < 0) {
		snprintf(err, sizeof err, "cannot write the source into the box: %s",
			 strerror(-rc));
		goto internal;
	}
	if (write_files(&plan, sb, request, err, sizeof err) < 0 ||
	    cancelled(&plan, err, sizeof err))
		goto internal;
	rc = compile(&plan, sb, result, err, sizeof err);
	if (rc < 0)
		goto internal;
	if (rc > 0) {
		cJSON_AddStringToObject(result, "status", sub_status_name(SUB_COMPILE_ERROR));
		goto done;
	}
	if (plan.problem && plan.problem->custom_validator && !plan.checker) {
		if (checker_build(plan.problem, env->langs, env->cfg, env->backend, env->slot,
				  &plan.checker, err, sizeof err) < 0)
			goto internal;
		plan.own_checker = true;
	}
	if (run_tests(&plan, sb, result, err, sizeof err) < 0)
		goto internal;
	goto done;

internal:
	log_error("grade: %s: %s", lang_name, err);
	cJSON_Delete(result);
	result = error_result(lang_name, SUB_INTERNAL_ERROR, err);
	goto out;
done:
	cJSON_AddStringToObject(result, "language", plan.lang->name);
	/* put status and language first, where a reader looks */
	cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(result, "status");
	cJSON *lg = cJSON_DetachItemFromObjectCaseSensitive(result, "language");
	cJSON_InsertItemInArray(result, 0, lg);
	cJSON_InsertItemInArray(result, 0, st);
out:
	if (sb)
		sandbox_close(sb);
	plan_release(&plan);
	return result;
}
