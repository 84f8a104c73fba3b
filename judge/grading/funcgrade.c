/* funcgrade: grading function and test-code problems (one harnessed run). */
#define _GNU_SOURCE
#include "judge/grading/funcgrade.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/config.h"
#include "common/log.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "judge/grading/harness.h"
#include "judge/grading/jsonval.h"
#include "judge/grading/compile.h"
#include "judge/grading/lang.h"
#include "judge/grading/problem.h"

#define RECORD_TAG "\x1ejudge:"
/* Shown values are cut to this many bytes in a feedback message. */
#define SHOW_MAX 120

void funcgrade_records_release(struct funcgrade_records *r)
{
	for (int i = 0; i < r->ncalls; i++)
		cJSON_Delete(r->calls[i]);
	free(r->calls);
	cJSON_Delete(r->load_error);
	cJSON_Delete(r->end);
	strbuf_release(&r->stray);
	memset(r, 0, sizeof *r);
}

/* Files one parsed record; a duplicate or out-of-range index is dropped. */
static void file_record(struct funcgrade_records *r, cJSON *rec)
{
	const cJSON *i = cJSON_GetObjectItemCaseSensitive(rec, "i");
	if (cJSON_GetObjectItemCaseSensitive(rec, "end") && !r->end) {
		r->end = rec;
	} else if (cJSON_IsNumber(i) && i->valueint == -1 && !r->load_error) {
		r->load_error = rec;
	} else if (cJSON_IsNumber(i) && i->valueint >= 0 && i->valueint < r->ncalls &&
		   !r->calls[i->valueint]) {
		r->calls[i->valueint] = rec;
	} else {
		cJSON_Delete(rec);
	}
}

void funcgrade_records_parse(struct funcgrade_records *r, const char *out, size_t len,
			     const char *nonce, int ncalls)
{
	memset(r, 0, sizeof *r);
	strbuf_init(&r->stray);
	r->ncalls = ncalls;
	r->calls = xcalloc((size_t)ncalls + 1, sizeof *r->calls);
	char tag[64];
	int tl = snprintf(tag, sizeof tag, RECORD_TAG "%s ", nonce);
	size_t at = 0;
	while (at < len) {
		const char *hit = memmem(out + at, len - at, tag, (size_t)tl);
		size_t upto = hit ? (size_t)(hit - out) : len;
		strbuf_add(&r->stray, out + at, upto - at);
		if (!hit)
			break;
		const char *body = hit + tl;
		const char *nl = memchr(body, '\n', len - (size_t)(body - out));
		size_t blen = nl ? (size_t)(nl - body) : len - (size_t)(body - out);
		cJSON *rec = cJSON_ParseWithLength(body, blen);
		if (rec)
			file_record(r, rec);
		at = (size_t)(body - out) + blen + (nl ? 1 : 0);
	}
}

static const char *str_of(const cJSON *o, const char *key, const char *dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) && v->valuestring ? v->valuestring : dflt;
}

/* "twoSum([2,7,11,15], 9)", or "test NAME" for a hidden test. */
static void show_call(struct strbuf *sb, const char *fn, const cJSON *test, const char *name)
{
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(test, "hidden"))) {
		strbuf_addf(sb, "hidden test %s: %s(...)", name, fn);
		return;
	}
	strbuf_addf(sb, "%s(", fn);
	jsonval_show_args(sb, cJSON_GetObjectItemCaseSensitive(test, "args"), SHOW_MAX);
	strbuf_addch(sb, ')');
}

/* "ValueError: bad (line 3)" of a record's error object. */
static void show_error(struct strbuf *sb, const cJSON *rec)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(rec, "error");
	const char *msg = str_of(e, "message", "");
	strbuf_addf(sb, "%s%s%.200s", str_of(e, "type", "Error"), *msg ? ": " : "", msg);
	const cJSON *line = cJSON_GetObjectItemCaseSensitive(e, "line");
	if (cJSON_IsNumber(line) && line->valueint > 0)
		strbuf_addf(sb, " (line %d)", line->valueint);
}

static struct jsonval_opts jv_of(const struct grade_request *req)
{
	struct jsonval_opts o;
	jsonval_opts_init(&o);
	if (req->has_compare) {
		o.abs_tol = req->cmp.float_abs_tol;
		o.rel_tol = req->cmp.float_rel_tol;
		o.unordered = req->cmp.mode == CMP_UNORDERED;
	}
	return o;
}

/* The verdict of a call that wrote its record. */
static enum sub_status judge_call(const struct grade_request *req, const cJSON *test,
				  const cJSON *rec, struct strbuf *msg, bool *has_expected)
{
	const cJSON *exp = cJSON_GetObjectItemCaseSensitive(test, "expected");
	*has_expected = exp != NULL;
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "ok"))) {
		strbuf_addstr(msg, " raised ");
		show_error(msg, rec);
		return SUB_RUNTIME_ERROR;
	}
	const cJSON *got = cJSON_GetObjectItemCaseSensitive(rec, "value");
	struct jsonval_opts o = jv_of(req);
	if (!exp || jsonval_equal(exp, got, &o))
		return exp ? SUB_ACCEPTED : SUB_COMPLETED;
	strbuf_addstr(msg, " returned ");
	jsonval_show(msg, got, SHOW_MAX);
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(test, "hidden"))) {
		strbuf_addstr(msg, ", expected ");
		jsonval_show(msg, exp, SHOW_MAX);
	}
	return SUB_WRONG_ANSWER;
}

/* The verdict of a call that wrote no record: how the run ended. */
static enum sub_status judge_missing(enum run_status run, const cJSON *load_error,
				     struct strbuf *msg)
{
	switch (run) {
	case RUN_TIMEOUT:
		strbuf_addstr(msg, " did not return within the time limit");
		return SUB_TIMEOUT;
	case RUN_MEMORY_LIMIT:
		strbuf_addstr(msg, " exceeded the memory limit");
		return SUB_MEMORY_LIMIT;
	case RUN_OUTPUT_LIMIT:
		strbuf_addstr(msg, " exceeded the output limit");
		return SUB_OUTPUT_LIMIT;
	default:
		break;
	}
	if (load_error) {
		strbuf_reset(msg);
		strbuf_addstr(msg, "loading the solution raised ");
		show_error(msg, load_error);
	} else {
		strbuf_addstr(msg, run == RUN_OK ? ": the program exited before the call returned"
						 : ": the program crashed during the call");
	}
	return SUB_RUNTIME_ERROR;
}

static void set_feedback(struct grade_feedback *fb, const struct strbuf *msg)
{
	memset(fb, 0, sizeof *fb);
	fb->present = true;
	struct strbuf clean = STRBUF_INIT;
	utf8_sanitize(&clean, msg->buf, msg->len);
	snprintf(fb->message, sizeof fb->message, "%s", clean.buf);
	strbuf_release(&clean);
}

/* Test i's entry in res->tests; the call's prints go beside its verdict. */
static void add_test(struct grade_result *res, const char *name, enum sub_status st,
		     const cJSON *rec, const struct strbuf *msg)
{
	struct grade_test_out *o = &res->tests[res->ntests++];
	o->name = xstrdup(name);
	o->status = st;
	const cJSON *ms = cJSON_GetObjectItemCaseSensitive(rec, "ms");
	o->run.time_ms = o->run.wall_ms = cJSON_IsNumber(ms) ? (long)ms->valuedouble : 0;
	o->run.exited = true;
	const char *out = str_of(rec, "stdout", NULL);
	if (out)
		o->output = xstrdup(out);
	if (st != SUB_ACCEPTED && st != SUB_COMPLETED)
		set_feedback(&o->feedback, msg);
}

void funcgrade_fold_function(const struct grade_request *req, const struct funcgrade_records *r,
			     enum run_status run, struct grade_result *res)
{
	int n = cJSON_GetArraySize(req->func->tests);
	bool any_expected = false, decided = false;
	res->has_tests = true;
	res->tests_total = n;
	res->tests = xcalloc((size_t)n + 1, sizeof *res->tests);
	res->status = SUB_ACCEPTED;
	for (int i = 0; i < n; i++) {
		const cJSON *test = cJSON_GetArrayItem(req->func->tests, i);
		char num[16];
		snprintf(num, sizeof num, "%d", i + 1);
		const char *name = str_of(test, "name", num);
		struct strbuf msg = STRBUF_INIT;
		bool has_exp = cJSON_GetObjectItemCaseSensitive(test, "expected") != NULL;
		show_call(&msg, req->func->name, test, name);
		const cJSON *rec = i < r->ncalls ? r->calls[i] : NULL;
		enum sub_status st = rec ? judge_call(req, test, rec, &msg, &has_exp)
					 : judge_missing(run, r->load_error, &msg);
		any_expected |= has_exp;
		add_test(res, name, st, rec, &msg);
		if (st != SUB_ACCEPTED && st != SUB_COMPLETED && !decided) {
			decided = true;
			res->status = st;
			res->feedback = res->tests[res->ntests - 1].feedback;
		}
		strbuf_release(&msg);
		if (!rec) /* the calls after it never ran */
			break;
	}
	if (!decided && !any_expected)
		res->status = SUB_COMPLETED;
}

/* The verdict of a test-code run that did not end well: its limit, else a
 * crash, told apart by how far the checks got (end: their record, or NULL).
 * judge_missing()'s words follow a call, which test code has none of. */
static enum sub_status test_code_ending(enum run_status run, const cJSON *end, struct strbuf *msg)
{
	switch (run) {
	case RUN_TIMEOUT:
		strbuf_addstr(msg, "the program did not end within the time limit");
		return SUB_TIMEOUT;
	case RUN_MEMORY_LIMIT:
		strbuf_addstr(msg, "the program exceeded the memory limit");
		return SUB_MEMORY_LIMIT;
	case RUN_OUTPUT_LIMIT:
		strbuf_addstr(msg, "the program exceeded the output limit");
		return SUB_OUTPUT_LIMIT;
	case RUN_INTERNAL_ERROR:
		strbuf_addstr(msg, "the program's run failed in the judge");
		return SUB_INTERNAL_ERROR;
	default:
		break;
	}
	if (!end) {
		strbuf_addstr(msg, "the program crashed before its checks ended");
	} else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(end, "end"))) {
		strbuf_addstr(msg, "the program crashed after its checks passed");
	} else {
		show_error(msg, end);
		strbuf_addstr(msg, ", then the program crashed");
	}
	return SUB_RUNTIME_ERROR;
}

void funcgrade_fold_test_code(const struct funcgrade_records *r, enum run_status run,
			      struct grade_result *res)
{
	struct strbuf msg = STRBUF_INIT;
	const cJSON *end = r->end;
	if (end && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(end, "end")) && run == RUN_OK) {
		res->status = SUB_ACCEPTED;
		return;
	}
	if (end && run == RUN_OK) {
		res->status = SUB_WRONG_ANSWER;
		show_error(&msg, end);
	} else if (run == RUN_OK) {
		res->status = SUB_WRONG_ANSWER;
		strbuf_addstr(&msg, "the program exited before its checks ended");
	} else {
		res->status = test_code_ending(run, end, &msg);
	}
	set_feedback(&res->feedback, &msg);
	strbuf_release(&msg);
}

void funcgrade_syntax_error(const struct lang *l, const struct funcgrade_records *r,
			    struct grade_result *res)
{
	const cJSON *rec = r->load_error ? r->load_error : r->end;
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(rec, "error");
	const char *type = str_of(e, "type", "");
	bool syntax = false;
	for (char **t = l->harness_syntax_errors; *t && !syntax; t++)
		syntax = !strcmp(type, *t);
	const char *file = r->load_error ? l->function_file : l->testcode_file;
	if (!syntax || !file)
		return;
	/* as the compile step reports it: the file, the line, the error */
	const cJSON *line = cJSON_GetObjectItemCaseSensitive(e, "line");
	strbuf_reset(&res->compile.output);
	strbuf_addf(&res->compile.output, "  File \"%s\", line %d\n%s: %s\n", file,
		    cJSON_IsNumber(line) ? line->valueint : 0, type, str_of(e, "message", ""));
	res->compile.ran = true;
	res->compile.ok = false;
	res->status = SUB_COMPILE_ERROR;
	res->ran = false;
	memset(&res->feedback, 0, sizeof res->feedback);
}

const char *funcgrade_eval_result(const struct grade_result *res, char *buf, size_t buflen)
{
	if (res->status == SUB_ACCEPTED)
		return "passed";
	if (res->status == SUB_TIMEOUT)
		return "timed out";
	const char *why = res->feedback.present		     ? res->feedback.message
			  : res->message		     ? res->message
			  : res->status == SUB_COMPILE_ERROR ? "compile error"
							     : status_name(res->status);
	if (res->status == SUB_COMPILE_ERROR && res->compile.output.len) {
		/* the compiler's last line: "SyntaxError: invalid syntax" */
		const char *s = res->compile.output.buf, *e = s + res->compile.output.len;
		while (e > s && (e[-1] == '\n' || e[-1] == ' '))
			e--;
		const char *b = e;
		while (b > s && b[-1] != '\n')
			b--;
		snprintf(buf, buflen, "failed: %.*s", (int)(e - b), b);
		return buf;
	}
	snprintf(buf, buflen, "failed: %s", why);
	return buf;
}

int funcgrade_nonce(char *out, size_t outlen)
{
	unsigned char rnd[12];
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd || outlen < 2 * sizeof rnd + 1)
		return -1;
	for (size_t i = 0; i < sizeof rnd; i++)
		snprintf(out + 2 * i, 3, "%02x", rnd[i]);
	return 0;
}

/* Writes the harness into a box, compiles (both files, unless the harness
 * compiles the user's itself), and runs it once into rr. Returns 0 when it ran,
 * 1 on a compile error (in res), -1 on the judge's failure (err). */
static int run_harness(const struct grade_env *env, struct grade_plan *plan,
		       const struct harness *h, struct grade_result *res, struct run_result *rr,
		       char *err, size_t errlen)
{
	struct sandbox *sb = NULL;
	int ret = -1;
	if (sandbox_open(env->backend, env->slot, env->cfg->tmp_size_mb * 1024 * 1024, &sb, err,
			 errlen) < 0)
		return -1;
	sandbox_set_reuse_key(sb, env->reuse_key);
	int rc = sandbox_write_file(sb, plan->lang->source_file, h->main_source.buf,
				    h->main_source.len, 0644);
	if (rc == 0 && h->user_file)
		rc = sandbox_write_file(sb, h->user_file, h->user_source.buf, h->user_source.len,
					0644);
	if (rc < 0) {
		snprintf(err, errlen, "cannot write the harness into the box: %s", strerror(-rc));
		goto out;
	}
	const char *extra[] = {h->user_file, NULL};
	if (h->user_file && plan->lang->compile_argv)
		plan->compile_argv = compile_command(plan->lang, extra, NULL);
	/* a harness that compiles the user's file itself (a syntax error is its
	 * load error, funcgrade_syntax_error): a second interpreter start per sample
	 * would halve an evaluation's throughput */
	rc = harness_compiles_itself(plan->lang) ? 0 : grade_compile(plan, sb, res, err, errlen);
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
	    .stdin_data = h->stdin_data.buf,
	    .stdin_len = h->stdin_data.len,
	    .limits = plan->run_limits,
	};
	if (sandbox_run(sb, &spec, rr) < 0)
		rr->status = RUN_INTERNAL_ERROR;
	ret = 0;
out:
	sandbox_close(sb);
	return ret;
}

/* Folds the run into res: records, verdicts, and the run's facts. */
static void fold_run(const struct lang *l, const struct grade_request *req, const char *nonce,
		     struct run_result *rr, struct grade_result *res)
{
	struct funcgrade_records recs;
	int ncalls = req->func ? cJSON_GetArraySize(req->func->tests) : 0;
	funcgrade_records_parse(&recs, rr->out.buf, rr->out.len, nonce, ncalls);
	if (req->func)
		funcgrade_fold_function(req, &recs, rr->status, res);
	else
		funcgrade_fold_test_code(&recs, rr->status, res);
	res->ran = true;
	res->run.exited = rr->status == RUN_OK || (rr->status == RUN_RUNTIME_ERROR && !rr->signal);
	res->run.exit_code = rr->exit_code;
	res->run.signal = rr->signal;
	res->run.time_ms = rr->cpu_ms;
	res->run.wall_ms = rr->wall_ms;
	res->run.memory_kb = rr->memory_kb;
	/* what the program wrote outside the records (test code's prints) */
	strbuf_add(&res->out, recs.stray.buf, recs.stray.len);
	strbuf_add(&res->err, rr->err.buf, rr->err.len);
	res->out_truncated = rr->out_truncated;
	res->err_truncated = rr->err_truncated;
	funcgrade_syntax_error(l, &recs, res);
	funcgrade_records_release(&recs);
}

void funcgrade_request(const struct grade_env *env, const struct grade_request *req,
		       struct grade_result *out)
{
	char err[512] = "", nonce[32], dir[1024];
	struct grade_plan plan;
	struct harness h;
	struct run_result rr;
	int rc = -1;
	model_result_init(out);
	harness_init(&h);
	run_result_init(&rr);
	if (grade_plan_make(&plan, env, req, err, sizeof err) < 0)
		goto out;
	snprintf(dir, sizeof dir, "%s/harness", env->cfg->languages_dir);
	if (funcgrade_nonce(nonce, sizeof nonce) < 0) {
		snprintf(err, sizeof err, "getrandom: %s", strerror(errno));
		goto out;
	}
	if (harness_make(dir, plan.lang, req, nonce, &h, err, sizeof err) < 0)
		goto out;
	rc = run_harness(env, &plan, &h, out, &rr, err, sizeof err);
	if (rc == 0 && rr.status == RUN_INTERNAL_ERROR) {
		snprintf(err, sizeof err, "sandbox failed: %s",
			 rr.message[0] ? rr.message : "invalid run specification");
		rc = -1;
	}
	if (rc == 0)
		fold_run(plan.lang, req, nonce, &rr, out);
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
	harness_release(&h);
	grade_plan_release(&plan);
}
