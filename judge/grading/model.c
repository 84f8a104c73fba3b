/* model: the typed request and result of grading, and their JSON forms. */
#include "judge/grading/model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/utf8.h"
#include "common/xalloc.h"

void model_request_init(struct grade_request *r)
{
	memset(r, 0, sizeof *r);
	compare_options_init(&r->cmp, CMP_LINES);
}

void model_request_release(struct grade_request *r)
{
	free(r->language);
	free(r->source);
	for (int i = 0; i < r->nfiles; i++) {
		free(r->files[i].name);
		free(r->files[i].content);
	}
	free(r->files);
	for (int i = 0; i < r->nargs; i++)
		free(r->args[i]);
	free(r->args);
	for (int i = 0; i < r->ncompiler_options; i++)
		free(r->compiler_options[i]);
	free(r->compiler_options);
	for (int i = 0; i < r->ntests; i++) {
		free(r->tests[i].name);
		free(r->tests[i].stdin_data);
		free(r->tests[i].expected);
	}
	free(r->tests);
	free(r->problem);
	free(r->stdin_data);
	free(r->expected);
	if (r->func) {
		free(r->func->name);
		cJSON_Delete(r->func->signature);
		cJSON_Delete(r->func->tests);
		free(r->func);
	}
	free(r->test_code);
	free(r->entry_point);
	if (r->eval) {
		free(r->eval->rule);
		for (int i = 0; i < r->eval->nstderr_fails; i++)
			free(r->eval->stderr_fails[i]);
		free(r->eval->stderr_fails);
		free(r->eval);
	}
	model_request_init(r);
}

void model_request_set_eval(struct grade_request *r, const char *rule)
{
	if (!r->eval)
		r->eval = xcalloc(1, sizeof *r->eval);
	model_set(&r->eval->rule, rule, strlen(rule));
}

void model_request_add_stderr_fail(struct grade_request *r, const char *text)
{
	struct grade_eval *e = r->eval;
	e->stderr_fails =
	    xreallocarray(e->stderr_fails, (size_t)e->nstderr_fails + 1, sizeof *e->stderr_fails);
	e->stderr_fails[e->nstderr_fails++] = xstrdup(text);
}

void model_set(char **dst, const char *s, size_t len)
{
	char *c = xstrndup(s, len);
	free(*dst);
	*dst = c;
}

void model_request_add_test(struct grade_request *r, const char *name, const char *stdin_data,
			    size_t stdin_len, const char *expected, size_t expected_len)
{
	r->tests = xreallocarray(r->tests, (size_t)r->ntests + 1, sizeof *r->tests);
	struct grade_test_in *t = &r->tests[r->ntests++];
	memset(t, 0, sizeof *t);
	t->points = -1;
	if (!stdin_data)
		stdin_data = "", stdin_len = 0;
	model_set(&t->name, name, strlen(name));
	model_set(&t->stdin_data, stdin_data, stdin_len);
	t->stdin_len = stdin_len;
	if (expected) {
		model_set(&t->expected, expected, expected_len);
		t->expected_len = expected_len;
	}
}

void model_request_add_file(struct grade_request *r, const char *name, const char *content,
			    size_t len)
{
	r->files = xreallocarray(r->files, (size_t)r->nfiles + 1, sizeof *r->files);
	struct grade_file *f = &r->files[r->nfiles++];
	memset(f, 0, sizeof *f);
	model_set(&f->name, name, strlen(name));
	model_set(&f->content, content, len);
	f->len = len;
}

void model_request_add_arg(struct grade_request *r, const char *arg)
{
	r->args = xreallocarray(r->args, (size_t)r->nargs + 1, sizeof *r->args);
	r->args[r->nargs++] = xstrdup(arg);
}

void model_request_add_compiler_option(struct grade_request *r, const char *opt)
{
	/* NULL-terminated: compile_command takes the list as it is */
	r->compiler_options = xreallocarray(r->compiler_options, (size_t)r->ncompiler_options + 2,
					    sizeof *r->compiler_options);
	r->compiler_options[r->ncompiler_options++] = xstrdup(opt);
	r->compiler_options[r->ncompiler_options] = NULL;
}

/* cJSON strings end at the first NUL: the parsers never let one in. */
static void add_str(cJSON *o, const char *key, const char *s)
{
	cJSON_AddStringToObject(o, key, s ? s : "");
}

void model_compare_render(cJSON *o, const struct compare_options *c)
{
	cJSON *co = cJSON_AddObjectToObject(o, "compare");
	add_str(co, "mode", compare_mode_name(c->mode));
	cJSON_AddBoolToObject(co, "case_sensitive", c->case_sensitive);
	cJSON_AddBoolToObject(co, "space_change_sensitive", c->space_change_sensitive);
	if (c->float_abs_tol >= 0)
		cJSON_AddNumberToObject(co, "float_absolute_tolerance", c->float_abs_tol);
	if (c->float_rel_tol >= 0)
		cJSON_AddNumberToObject(co, "float_relative_tolerance", c->float_rel_tol);
	cJSON_AddBoolToObject(co, "unordered_tokens", c->unordered_tokens);
}

static const char *const limit_keys[] = {"time_ms", "wall_ms", "memory_mb", "output_kb",
					 "processes"};

static long *limit_field(struct limits_request *l, size_t i)
{
	long *f[] = {&l->time_ms, &l->wall_ms, &l->memory_mb, &l->output_kb, &l->processes};
	return f[i];
}

static void render_body(cJSON *o, const struct grade_request *r)
{
	add_str(o, "language", r->language);
	add_str(o, "source", r->source);
	if (r->nfiles) {
		cJSON *files = cJSON_AddArrayToObject(o, "files");
		for (int i = 0; i < r->nfiles; i++) {
			cJSON *f = cJSON_CreateObject();
			cJSON_AddItemToArray(files, f);
			add_str(f, "name", r->files[i].name);
			add_str(f, "content", r->files[i].content);
		}
	}
	if (r->nargs) {
		cJSON *args = cJSON_AddArrayToObject(o, "args");
		for (int i = 0; i < r->nargs; i++)
			cJSON_AddItemToArray(args, cJSON_CreateString(r->args[i]));
	}
	if (r->ncompiler_options) {
		cJSON *opts = cJSON_AddArrayToObject(o, "compiler_options");
		for (int i = 0; i < r->ncompiler_options; i++)
			cJSON_AddItemToArray(opts, cJSON_CreateString(r->compiler_options[i]));
	}
	if (r->problem) {
		add_str(o, "problem", r->problem);
	} else if (r->ntests) {
		cJSON *tests = cJSON_AddArrayToObject(o, "tests");
		for (int i = 0; i < r->ntests; i++) {
			const struct grade_test_in *t = &r->tests[i];
			cJSON *tj = cJSON_CreateObject();
			cJSON_AddItemToArray(tests, tj);
			add_str(tj, "name", t->name);
			add_str(tj, "stdin", t->stdin_data);
			if (t->expected)
				add_str(tj, "expected_output", t->expected);
			if (t->points >= 0)
				cJSON_AddNumberToObject(tj, "points", t->points);
		}
	} else if (!r->func && !r->test_code && !r->eval) { /* those forms have no stdin */
		add_str(o, "stdin", r->stdin_data);
		if (r->expected)
			add_str(o, "expected_output", r->expected);
	}
}

cJSON *model_request_render(const struct grade_request *r)
{
	cJSON *o = cJSON_CreateObject();
	render_body(o, r);
	if (r->has_compare)
		model_compare_render(o, &r->cmp);
	if (r->has_limits) {
		cJSON *lo = cJSON_AddObjectToObject(o, "limits");
		struct limits_request l = r->limits;
		for (size_t i = 0; i < sizeof limit_keys / sizeof limit_keys[0]; i++)
			if (*limit_field(&l, i))
				cJSON_AddNumberToObject(lo, limit_keys[i],
							(double)*limit_field(&l, i));
	}
	cJSON_AddBoolToObject(o, "run_all_tests", r->run_all_tests);
	if (r->func) {
		cJSON *f = cJSON_AddObjectToObject(o, "function");
		add_str(f, "name", r->func->name);
		if (r->func->signature)
			cJSON_AddItemToObject(f, "signature",
					      cJSON_Duplicate(r->func->signature, 1));
		cJSON_AddItemToObject(f, "tests", cJSON_Duplicate(r->func->tests, 1));
	}
	if (r->test_code)
		add_str(o, "test_code", r->test_code);
	if (r->entry_point)
		add_str(o, "entry_point", r->entry_point);
	if (r->eval) {
		cJSON *e = cJSON_AddObjectToObject(o, "eval");
		add_str(e, "rule", r->eval->rule);
		if (r->eval->nstderr_fails) {
			cJSON *a = cJSON_AddArrayToObject(e, "stderr_fails");
			for (int i = 0; i < r->eval->nstderr_fails; i++)
				cJSON_AddItemToArray(a,
						     cJSON_CreateString(r->eval->stderr_fails[i]));
		}
	}
	return o;
}

/* ---- loading stored JSON ---- */

/* The string at key, or NULL when absent or not a string. */
static const char *json_str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

/* A limit as the grader always read it: a number in [0, 1e15), else 0. */
static long json_long(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15)
		return (long)v->valuedouble;
	return 0;
}

static void set_str(char **dst, size_t *len, const char *s)
{
	size_t n = strlen(s);
	model_set(dst, s, n);
	if (len)
		*len = n;
}

int model_compare_load(const cJSON *c, struct compare_options *o, char *err, size_t errlen)
{
	const char *mode = cJSON_IsString(c) ? c->valuestring : json_str(c, "mode");
	if (mode) {
		enum compare_mode m;
		if (compare_mode_parse(mode, &m) < 0) {
			snprintf(err, errlen, "unknown compare mode '%s'", mode);
			return -1;
		}
		compare_options_init(o, m);
	}
	if (!cJSON_IsObject(c))
		return 0;
	o->case_sensitive = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "case_sensitive"));
	o->space_change_sensitive =
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "space_change_sensitive"));
	o->unordered_tokens = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "unordered_tokens"));
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "float_tolerance");
	if (cJSON_IsNumber(t))
		o->float_abs_tol = o->float_rel_tol = t->valuedouble;
	t = cJSON_GetObjectItemCaseSensitive(c, "float_absolute_tolerance");
	if (cJSON_IsNumber(t))
		o->float_abs_tol = t->valuedouble;
	t = cJSON_GetObjectItemCaseSensitive(c, "float_relative_tolerance");
	if (cJSON_IsNumber(t))
		o->float_rel_tol = t->valuedouble;
	return 0;
}

static void load_tests(const cJSON *in, struct grade_request *out)
{
	const cJSON *tests = cJSON_GetObjectItemCaseSensitive(in, "tests");
	if (!cJSON_IsArray(tests) || cJSON_GetArraySize(tests) == 0) {
		const char *s = json_str(in, "stdin"), *e = json_str(in, "expected_output");
		if (s)
			set_str(&out->stdin_data, &out->stdin_len, s);
		if (e)
			set_str(&out->expected, &out->expected_len, e);
		return;
	}
	const cJSON *t;
	int i = 0;
	cJSON_ArrayForEach(t, tests)
	{
		char num[32];
		const char *name = json_str(t, "name"), *s = json_str(t, "stdin");
		const char *e = json_str(t, "expected_output");
		snprintf(num, sizeof num, "%d", ++i);
		model_request_add_test(out, name ? name : num, s, s ? strlen(s) : 0, e,
				       e ? strlen(e) : 0);
		const cJSON *pts = cJSON_GetObjectItemCaseSensitive(t, "points");
		if (cJSON_IsNumber(pts) && pts->valuedouble >= 0)
			out->tests[out->ntests - 1].points = pts->valuedouble;
	}
}

static int load_files(const cJSON *in, struct grade_request *out, char *err, size_t errlen)
{
	const cJSON *f;
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(in, "files"))
	{
		const char *name = json_str(f, "name"), *content = json_str(f, "content");
		if (!name || !content) {
			snprintf(err, errlen, "bad entry in files: '%s'",
				 name ? name : "(no name)");
			return -1;
		}
		model_request_add_file(out, name, content, strlen(content));
	}
	return 0;
}

/* The "function" object of a function problem, when it has a name and tests. */
static void load_function(const cJSON *in, struct grade_request *out)
{
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(in, "function");
	const char *name = json_str(f, "name");
	const cJSON *tests = cJSON_GetObjectItemCaseSensitive(f, "tests");
	if (!name || !cJSON_IsArray(tests))
		return;
	const cJSON *sig = cJSON_GetObjectItemCaseSensitive(f, "signature");
	model_request_set_function(out, name, cJSON_IsObject(sig) ? sig : NULL, tests);
}

void model_request_set_function(struct grade_request *r, const char *name, const cJSON *signature,
				const cJSON *tests)
{
	struct grade_func *fn = xcalloc(1, sizeof *fn);
	fn->name = xstrdup(name);
	fn->signature = signature ? cJSON_Duplicate(signature, 1) : NULL;
	fn->tests = cJSON_Duplicate(tests, 1);
	if (r->func) {
		free(r->func->name);
		cJSON_Delete(r->func->signature);
		cJSON_Delete(r->func->tests);
		free(r->func);
	}
	r->func = fn;
}

int model_request_load(const cJSON *in, struct grade_request *out, char *err, size_t errlen)
{
	model_request_init(out);
	const char *lang = json_str(in, "language"), *src = json_str(in, "source");
	const char *problem = json_str(in, "problem");
	if (!lang) {
		snprintf(err, errlen, "request has no language");
		return -1;
	}
	set_str(&out->language, NULL, lang);
	if (!src) {
		snprintf(err, errlen, "request has no source");
		return -1;
	}
	set_str(&out->source, &out->source_len, src);
	if (load_files(in, out, err, errlen) < 0)
		return -1;
	const cJSON *arg;
	cJSON_ArrayForEach(arg, cJSON_GetObjectItemCaseSensitive(in, "args"))
	{
		if (cJSON_IsString(arg) && arg->valuestring)
			model_request_add_arg(out, arg->valuestring);
	}
	cJSON_ArrayForEach(arg, cJSON_GetObjectItemCaseSensitive(in, "compiler_options"))
	{
		if (cJSON_IsString(arg) && arg->valuestring)
			model_request_add_compiler_option(out, arg->valuestring);
	}
	if (problem)
		set_str(&out->problem, NULL, problem);
	else
		load_tests(in, out);
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(in, "compare");
	out->has_compare = c != NULL;
	if (c && model_compare_load(c, &out->cmp, err, errlen) < 0)
		return -1;
	const cJSON *lim = cJSON_GetObjectItemCaseSensitive(in, "limits");
	out->has_limits = cJSON_IsObject(lim);
	for (size_t i = 0; i < sizeof limit_keys / sizeof limit_keys[0]; i++)
		*limit_field(&out->limits, i) = json_long(lim, limit_keys[i]);
	out->run_all_tests = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(in, "run_all_tests"));
	load_function(in, out);
	const char *tc = json_str(in, "test_code"), *ep = json_str(in, "entry_point");
	if (tc)
		set_str(&out->test_code, NULL, tc);
	if (ep)
		set_str(&out->entry_point, NULL, ep);
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(in, "eval");
	const char *rule = json_str(ev, "rule");
	if (rule) {
		model_request_set_eval(out, rule);
		const cJSON *t;
		cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(ev, "stderr_fails"))
		{
			if (cJSON_IsString(t) && t->valuestring)
				model_request_add_stderr_fail(out, t->valuestring);
		}
	}
	return 0;
}

/* ---- result ---- */

void model_result_init(struct grade_result *r)
{
	memset(r, 0, sizeof *r);
	strbuf_init(&r->compile.output);
	strbuf_init(&r->out);
	strbuf_init(&r->err);
}

void model_result_release(struct grade_result *r)
{
	free(r->language);
	free(r->message);
	strbuf_release(&r->compile.output);
	strbuf_release(&r->out);
	strbuf_release(&r->err);
	for (int i = 0; i < r->ntests; i++) {
		free(r->tests[i].name);
		free(r->tests[i].output);
	}
	free(r->tests);
	for (int i = 0; i < r->ngroups; i++)
		free(r->groups[i].name);
	free(r->groups);
	model_result_init(r);
}

void model_result_fail(struct grade_result *r, const char *language, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* language may point into r: copy it before r is emptied */
	char *lang = language ? xstrdup(language) : NULL;
	model_result_release(r);
	r->status = SUB_INTERNAL_ERROR;
	r->language = lang;
	r->message = xstrdup(msg);
}

/* key: the output as UTF-8 text (bad bytes as U+FFFD); and, only when bytes
 * were replaced, key_base64: the raw bytes, which APIs that hand out output
 * as base64 (Judge0) must give back unchanged. */
static void add_output(cJSON *obj, const char *key, const struct strbuf *sb)
{
	struct strbuf clean = STRBUF_INIT;
	if (utf8_sanitize(&clean, sb->buf, sb->len) > 0) {
		struct strbuf raw = STRBUF_INIT;
		char name[64];
		snprintf(name, sizeof name, "%s_base64", key);
		base64_encode(&raw, sb->buf, sb->len);
		cJSON_AddStringToObject(obj, name, raw.buf);
		strbuf_release(&raw);
	}
	cJSON_AddStringToObject(obj, key, clean.buf);
	strbuf_release(&clean);
}

static void add_nullable_int(cJSON *obj, const char *key, bool present, long v)
{
	cJSON_AddItemToObject(obj, key,
			      present ? cJSON_CreateNumber((double)v) : cJSON_CreateNull());
}

static void render_run(cJSON *o, const struct grade_run_facts *f)
{
	add_nullable_int(o, "exit_code", f->exited, f->exit_code);
	add_nullable_int(o, "signal", f->signal != 0, f->signal);
	cJSON_AddNumberToObject(o, "time_ms", (double)f->time_ms);
	cJSON_AddNumberToObject(o, "wall_ms", (double)f->wall_ms);
	cJSON_AddNumberToObject(o, "memory_kb", (double)f->memory_kb);
}

static void render_feedback(cJSON *o, const struct grade_feedback *fb)
{
	if (!fb->present)
		return;
	cJSON *f = cJSON_AddObjectToObject(o, "feedback");
	if (fb->has_position) {
		cJSON_AddNumberToObject(f, "line", (double)fb->line);
		cJSON_AddNumberToObject(f, "column", (double)fb->column);
		if (fb->has_expected)
			add_str(f, "expected", fb->expected);
		add_str(f, "got", fb->got);
	}
	add_str(f, "message", fb->message);
}

static void render_compile(cJSON *o, const struct grade_compile *c)
{
	cJSON *cj = cJSON_AddObjectToObject(o, "compile");
	add_str(cj, "status", !c->ran || c->ok ? "ok" : "error");
	if (!c->ran) {
		add_str(cj, "output", "");
		cJSON_AddNumberToObject(cj, "time_ms", 0);
		return;
	}
	add_output(cj, "output", &c->output);
	cJSON_AddNumberToObject(cj, "time_ms", (double)c->time_ms);
	cJSON_AddNumberToObject(cj, "wall_ms", (double)c->wall_ms);
	cJSON_AddNumberToObject(cj, "memory_kb", (double)c->memory_kb);
}

cJSON *model_test_render(const struct grade_test_out *t)
{
	cJSON *tj = cJSON_CreateObject();
	add_str(tj, "name", t->name);
	add_str(tj, "status", status_name(t->status));
	render_run(tj, &t->run);
	render_feedback(tj, &t->feedback);
	if (t->has_score)
		cJSON_AddNumberToObject(tj, "score", t->score);
	if (t->passes > 0)
		cJSON_AddNumberToObject(tj, "passes", t->passes);
	if (t->output)
		add_str(tj, "stdout", t->output);
	return tj;
}

/* The "tests" array, when r has tests. */
static void render_tests(cJSON *o, const struct grade_result *r)
{
	if (!r->has_tests)
		return;
	cJSON *tests = cJSON_AddArrayToObject(o, "tests");
	for (int i = 0; i < r->ntests; i++)
		cJSON_AddItemToArray(tests, model_test_render(&r->tests[i]));
}

/* "score", its maximum and the groups' scores, when the result is scored
 * (absent otherwise, so unscored results keep their shape). */
static void render_score(cJSON *o, const struct grade_result *r)
{
	if (!r->has_score)
		return;
	cJSON_AddNumberToObject(o, "score", r->score);
	cJSON_AddNumberToObject(o, "max_score", r->max_score);
	if (!r->ngroups)
		return;
	cJSON *groups = cJSON_AddArrayToObject(o, "groups");
	for (int i = 0; i < r->ngroups; i++) {
		cJSON *g = cJSON_CreateObject();
		cJSON_AddItemToArray(groups, g);
		add_str(g, "name", r->groups[i].name);
		cJSON_AddNumberToObject(g, "score", r->groups[i].score);
		cJSON_AddNumberToObject(g, "max_score", r->groups[i].max_score);
		cJSON_AddBoolToObject(g, "accepted", r->groups[i].accepted);
	}
}

/* The whole result of a program that ran; the key order is docs/grading.md's. */
static void render_ran(cJSON *o, const struct grade_result *r)
{
	render_tests(o, r);
	render_run(o, &r->run);
	add_output(o, "stdout", &r->out);
	add_output(o, "stderr", &r->err);
	cJSON_AddBoolToObject(o, "stdout_truncated", r->out_truncated);
	cJSON_AddBoolToObject(o, "stderr_truncated", r->err_truncated);
	if (!r->feedback.present)
		cJSON_AddNullToObject(o, "feedback");
	render_feedback(o, &r->feedback);
	render_score(o, r);
	if (r->has_tests)
		cJSON_AddNumberToObject(o, "tests_total", r->tests_total);
}

cJSON *model_result_render(const struct grade_result *r)
{
	cJSON *o = cJSON_CreateObject();
	add_str(o, "status", status_name(r->status));
	if (r->language)
		add_str(o, "language", r->language);
	if (r->status == SUB_INTERNAL_ERROR || r->message) {
		add_str(o, "message", r->message ? r->message : "");
		return o;
	}
	render_compile(o, &r->compile);
	if (r->ran)
		render_ran(o, r);
	return o;
}
