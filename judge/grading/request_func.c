/* request_func: the function-problem and test-code forms of a request. */
#include "judge/grading/request_func.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/strbuf.h"
#include "judge/grading/evrun.h"
#include "judge/grading/harness.h"
#include "judge/grading/lang.h"

#define MAX_NAME     64
#define PACKAGE_MAX  ((size_t)64 << 20)
#define MAX_PARAMS   16
#define MAX_TYPE_LEN 32

/* A name every harness can paste into code: [A-Za-z_][A-Za-z0-9_]*. */
static bool ident_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > MAX_NAME || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}

bool request_func_type_valid(const char *s)
{
	static const char *const base[] = {"int", "long", "double", "bool", "string", NULL};
	size_t n = strlen(s), depth = 0;
	if (n > MAX_TYPE_LEN)
		return false;
	while (n >= 2 && !strncmp(s + n - 2, "[]", 2))
		n -= 2, depth++;
	for (const char *const *b = base; *b; b++)
		if (strlen(*b) == n && !strncmp(s, *b, n))
			return depth <= 4;
	return false;
}

static int check_signature(const cJSON *sig, struct request_error *err)
{
	if (!cJSON_IsObject(sig))
		return request_fail(err, 422, "invalid_field", "signature must be an object");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(sig, "params");
	const cJSON *ret = cJSON_GetObjectItemCaseSensitive(sig, "returns");
	if (!cJSON_IsArray(params) || cJSON_GetArraySize(params) > MAX_PARAMS)
		return request_fail(err, 422, "invalid_field",
				    "signature.params must be an array of at most %d types",
				    MAX_PARAMS);
	const cJSON *p;
	cJSON_ArrayForEach(p, params)
	{
		if (!cJSON_IsString(p) || !request_func_type_valid(p->valuestring))
			return request_fail(
			    err, 422, "invalid_field",
			    "signature.params: each type is int, long, double, bool "
			    "or string, followed by [] for lists");
	}
	if (ret && !(cJSON_IsString(ret) && request_func_type_valid(ret->valuestring)))
		return request_fail(err, 422, "invalid_field",
				    "signature.returns must be a type like params'");
	return 0;
}

/* One test: {"args": [...], "expected"?, "name"?, "hidden"?}. */
static int check_test(const cJSON *t, int i, int nparams, struct request_error *err)
{
	if (!cJSON_IsObject(t))
		return request_fail(err, 422, "invalid_field", "tests[%d] must be an object", i);
	const cJSON *it;
	cJSON_ArrayForEach(it, t)
	{
		if (strcmp(it->string, "args") && strcmp(it->string, "expected") &&
		    strcmp(it->string, "name") && strcmp(it->string, "hidden"))
			return request_fail(err, 422, "invalid_field",
					    "unknown field 'tests[%d].%.40s' (a function problem's "
					    "tests have args, expected, name, hidden)",
					    i, it->string);
	}
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(t, "args");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(t, "name");
	const cJSON *hidden = cJSON_GetObjectItemCaseSensitive(t, "hidden");
	if (!cJSON_IsArray(args))
		return request_fail(err, 422, "missing_field",
				    "tests[%d].args is required: an array of the call's arguments",
				    i);
	if (nparams >= 0 && cJSON_GetArraySize(args) != nparams)
		return request_fail(err, 422, "invalid_field",
				    "tests[%d].args has %d arguments, the signature %d", i,
				    cJSON_GetArraySize(args), nparams);
	if (name && !(cJSON_IsString(name) && strlen(name->valuestring) <= 128))
		return request_fail(err, 422, "invalid_field", "tests[%d].name must be a string",
				    i);
	if (hidden && !cJSON_IsBool(hidden))
		return request_fail(err, 422, "invalid_field",
				    "tests[%d].hidden must be true or false", i);
	return 0;
}

static int check_tests(const struct judge_config *cfg, enum request_kind kind, const cJSON *tests,
		       const cJSON *sig, struct request_error *err)
{
	if (!cJSON_IsArray(tests) || cJSON_GetArraySize(tests) == 0)
		return request_fail(err, 422, "missing_field",
				    "tests is required with function: [{\"args\": [...], "
				    "\"expected\": value}, ...]");
	int n = cJSON_GetArraySize(tests), i = 0, nexp = 0;
	if (n > cfg->max_tests)
		return request_fail(err, 413, "too_large",
				    "tests has %d entries, at most %ld allowed", n, cfg->max_tests);
	const cJSON *params = sig ? cJSON_GetObjectItemCaseSensitive(sig, "params") : NULL;
	const cJSON *t;
	cJSON_ArrayForEach(t, tests)
	{
		if (check_test(t, i++, params ? cJSON_GetArraySize(params) : -1, err) < 0)
			return -1;
		nexp += cJSON_GetObjectItemCaseSensitive(t, "expected") != NULL;
	}
	char *text = cJSON_PrintUnformatted(tests);
	size_t len = strlen(text);
	free(text);
	/* arguments and expected values are the function problem's stdin */
	if (len > (size_t)cfg->max_stdin_kb * 1024 * 4)
		return request_fail(err, 413, "too_large", "tests is larger than %ld KiB",
				    cfg->max_stdin_kb * 4);
	if (kind == REQ_EXECUTE_EXPECTED && nexp == 0)
		return request_fail(err, 422, "missing_field", "tests need expected values here");
	return 0;
}

/* Keys that belong to the stdin forms and make no sense with these. */
static int refuse_stdin_keys(const cJSON *in, const char *form, struct request_error *err)
{
	static const char *const keys[] = {"stdin", "expected_output",	"files",
					   "args",  "compiler_options", NULL};
	for (const char *const *k = keys; *k; k++)
		if (cJSON_GetObjectItemCaseSensitive(in, *k))
			return request_fail(err, 422, "invalid_field", "%s cannot go with %s", *k,
					    form);
	return 0;
}

static bool has_test_code(const struct lang *l)
{
	return harness_supports(l, true);
}

static bool has_function(const struct lang *l)
{
	return harness_supports(l, false);
}

/* "<form> is supported in a, b and c, not <l>". Returns -1. */
static int unsupported(const struct lang_registry *langs, const struct lang *l, bool test_code,
		       struct request_error *err)
{
	struct strbuf names = STRBUF_INIT;
	lang_names(langs, test_code ? has_test_code : has_function, "and", &names);
	request_fail(err, 422, "invalid_field", "%s supported in %s, not %s",
		     test_code ? "test_code is" : "function problems are", names.buf, l->name);
	strbuf_release(&names);
	return -1;
}

static int validate_test_code(const struct judge_config *cfg, const struct lang_registry *langs,
			      const struct lang *l, const cJSON *in, struct grade_request *o,
			      struct request_error *err)
{
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(in, "test_code");
	const cJSON *ep = cJSON_GetObjectItemCaseSensitive(in, "entry_point");
	if (!cJSON_IsString(tc) || !*tc->valuestring)
		return request_fail(err, 422, "invalid_field",
				    "test_code must be a non-empty string");
	if (strlen(tc->valuestring) > (size_t)cfg->max_source_kb * 1024)
		return request_fail(err, 413, "too_large", "test_code is larger than %ld KiB",
				    cfg->max_source_kb);
	if (ep && !(cJSON_IsString(ep) && ident_ok(ep->valuestring)))
		return request_fail(err, 422, "invalid_field",
				    "entry_point must be a name [A-Za-z_][A-Za-z0-9_]*");
	if (cJSON_GetObjectItemCaseSensitive(in, "tests") ||
	    cJSON_GetObjectItemCaseSensitive(in, "problem") ||
	    cJSON_GetObjectItemCaseSensitive(in, "function"))
		return request_fail(err, 422, "invalid_field",
				    "test_code cannot go with tests, problem or function");
	if (!harness_supports(l, true))
		return unsupported(langs, l, true, err);
	model_set(&o->test_code, tc->valuestring, strlen(tc->valuestring));
	if (ep)
		model_set(&o->entry_point, ep->valuestring, strlen(ep->valuestring));
	return refuse_stdin_keys(in, "test_code", err) < 0 ? -1 : 1;
}

/* {"eval": {"rule": R, "stderr_fails": [...]}}: an eval set's assembled
 * program (evrun.h). Returns 2: the caller still validates args and
 * compiler_options, which the set's compile takes. */
static int validate_eval(const struct lang *l, const cJSON *in, struct grade_request *o,
			 struct request_error *err)
{
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(in, "eval");
	const cJSON *rule = cJSON_GetObjectItemCaseSensitive(ev, "rule");
	const cJSON *fails = cJSON_GetObjectItemCaseSensitive(ev, "stderr_fails");
	enum evrun_rule r;
	if (!cJSON_IsObject(ev))
		return request_fail(err, 422, "invalid_field", "eval must be an object");
	const cJSON *it;
	cJSON_ArrayForEach(it, ev)
	{
		if (strcmp(it->string, "rule") && strcmp(it->string, "stderr_fails"))
			return request_fail(err, 422, "invalid_field",
					    "eval: unknown field '%.40s'", it->string);
	}
	if (!cJSON_IsString(rule) || evrun_rule_parse(rule->valuestring, &r) < 0)
		return request_fail(err, 422, "invalid_field",
				    "eval.rule must be exit_zero, silent or exec");
	if (r == EVRUN_EXEC && !harness_compiles_itself(l))
		return request_fail(
		    err, 422, "invalid_field",
		    "eval.rule exec needs a language whose harness loads the program "
		    "itself (harness_compiles), not %s",
		    o->language);
	if (fails && (!cJSON_IsArray(fails) || cJSON_GetArraySize(fails) > 8))
		return request_fail(err, 422, "invalid_field",
				    "eval.stderr_fails must be an array of at most 8 strings");
	cJSON_ArrayForEach(it, fails)
	{
		if (!cJSON_IsString(it) || !*it->valuestring || strlen(it->valuestring) > 200)
			return request_fail(err, 422, "invalid_field",
					    "eval.stderr_fails: each must be a string of 1 to 200 "
					    "bytes");
	}
	static const char *const others[] = {"tests",		"problem", "function", "stdin",
					     "expected_output", "files",   NULL};
	for (const char *const *k = others; *k; k++)
		if (cJSON_GetObjectItemCaseSensitive(in, *k))
			return request_fail(err, 422, "invalid_field", "%s cannot go with eval",
					    *k);
	model_request_set_eval(o, rule->valuestring);
	cJSON_ArrayForEach(it, fails) model_request_add_stderr_fail(o, it->valuestring);
	return 2;
}

/* {"problem": ID, "function": true | NAME}: the package's function form. */
static int validate_package(const struct judge_config *cfg, enum request_kind kind, const cJSON *in,
			    const cJSON *fn, struct grade_request *o, struct request_error *err)
{
	const cJSON *pid = cJSON_GetObjectItemCaseSensitive(in, "problem");
	char perr[256];
	if (kind != REQ_SUBMISSION)
		return request_fail(err, 422, "invalid_field",
				    "problem is accepted by /v1/submissions only");
	if (!cJSON_IsString(pid) || !request_problem_id_valid(pid->valuestring))
		return request_fail(err, 422, "invalid_field",
				    "problem id must match [a-z0-9][a-z0-9_-]* (at most 64 "
				    "characters)");
	if (cJSON_GetObjectItemCaseSensitive(in, "tests"))
		return request_fail(err, 422, "invalid_field", "give only one of tests or problem");
	int rc = request_func_package(cfg->problems_dir, pid->valuestring, o, perr, sizeof perr);
	if (rc == -2)
		return request_fail(err, 422, "unknown_problem",
				    "problem '%s' has no function form (function.json)",
				    pid->valuestring);
	if (rc < 0)
		return request_fail(err, 422, "unsupported_problem", "problem '%s': %s",
				    pid->valuestring, perr);
	if (cJSON_IsString(fn) && strcmp(fn->valuestring, o->func->name))
		return request_fail(err, 422, "invalid_field",
				    "problem '%s' asks for function '%s', not '%.64s'",
				    pid->valuestring, o->func->name, fn->valuestring);
	return 1;
}

int request_func_validate(const struct judge_config *cfg, const struct lang_registry *langs,
			  const struct lang *l, enum request_kind kind, const cJSON *in,
			  struct grade_request *o, struct request_error *err)
{
	const cJSON *fn = cJSON_GetObjectItemCaseSensitive(in, "function");
	const cJSON *sig = cJSON_GetObjectItemCaseSensitive(in, "signature");
	if (cJSON_GetObjectItemCaseSensitive(in, "eval")) {
		if (cJSON_GetObjectItemCaseSensitive(in, "test_code"))
			return request_fail(err, 422, "invalid_field",
					    "test_code cannot go with eval");
		return validate_eval(l, in, o, err);
	}
	if (cJSON_GetObjectItemCaseSensitive(in, "test_code"))
		return validate_test_code(cfg, langs, l, in, o, err);
	if (cJSON_GetObjectItemCaseSensitive(in, "entry_point"))
		return request_fail(err, 422, "invalid_field", "entry_point needs test_code");
	if (!fn)
		return sig ? request_fail(err, 422, "invalid_field", "signature needs function")
			   : 0;
	if (!harness_supports(l, false))
		return unsupported(langs, l, false, err);
	if (refuse_stdin_keys(in, "function", err) < 0)
		return -1;
	if (cJSON_GetObjectItemCaseSensitive(in, "problem") &&
	    (cJSON_IsTrue(fn) || cJSON_IsString(fn)))
		return validate_package(cfg, kind, in, fn, o, err);
	if (!cJSON_IsString(fn) || !ident_ok(fn->valuestring))
		return request_fail(err, 422, "invalid_field",
				    "function must be a name [A-Za-z_][A-Za-z0-9_]* of at most %d "
				    "characters",
				    MAX_NAME);
	if (sig && check_signature(sig, err) < 0)
		return -1;
	const cJSON *tests = cJSON_GetObjectItemCaseSensitive(in, "tests");
	if (check_tests(cfg, kind, tests, sig, err) < 0)
		return -1;
	model_request_set_function(o, fn->valuestring, sig, tests);
	return 1;
}

/* The package's compare: "exact", "unordered", or {"mode", "float_tolerance"}. */
static int package_compare(const cJSON *c, struct grade_request *o, char *err, size_t errlen)
{
	if (!c)
		return 0;
	const cJSON *mode = cJSON_IsString(c) ? c : cJSON_GetObjectItemCaseSensitive(c, "mode");
	enum compare_mode m = CMP_EXACT;
	if (mode && (!cJSON_IsString(mode) || compare_mode_parse(mode->valuestring, &m) < 0 ||
		     (m != CMP_EXACT && m != CMP_UNORDERED))) {
		snprintf(err, errlen, "compare must be exact or unordered");
		return -1;
	}
	compare_options_init(&o->cmp, m);
	o->has_compare = true;
	const cJSON *tol = cJSON_GetObjectItemCaseSensitive(c, "float_tolerance");
	if (cJSON_IsNumber(tol) && tol->valuedouble >= 0)
		o->cmp.float_abs_tol = o->cmp.float_rel_tol = tol->valuedouble;
	return 0;
}

/* samples (shown) then tests (hidden) as one tests array. */
static cJSON *package_tests(const cJSON *pkg, char *err, size_t errlen)
{
	static const char *const parts[] = {"samples", "tests"};
	cJSON *all = cJSON_CreateArray();
	for (int p = 0; p < 2; p++) {
		const cJSON *arr = cJSON_GetObjectItemCaseSensitive(pkg, parts[p]), *t;
		int i = 0;
		cJSON_ArrayForEach(t, arr)
		{
			if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(t, "args")) ||
			    !cJSON_GetObjectItemCaseSensitive(t, "expected")) {
				snprintf(err, errlen, "%s[%d] needs args and expected", parts[p],
					 i);
				cJSON_Delete(all);
				return NULL;
			}
			cJSON *c = cJSON_CreateObject();
			char name[32];
			snprintf(name, sizeof name, "%s-%d", p ? "secret" : "sample", ++i);
			cJSON_AddStringToObject(c, "name", name);
			cJSON_AddItemToObject(
			    c, "args",
			    cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(t, "args"), 1));
			cJSON_AddItemToObject(
			    c, "expected",
			    cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(t, "expected"), 1));
			if (p)
				cJSON_AddTrueToObject(c, "hidden");
			cJSON_AddItemToArray(all, c);
		}
	}
	if (cJSON_GetArraySize(all) == 0) {
		snprintf(err, errlen, "no samples and no tests");
		cJSON_Delete(all);
		return NULL;
	}
	return all;
}

int request_func_package(const char *problems_dir, const char *id, struct grade_request *o,
			 char *err, size_t errlen)
{
	struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
	cJSON *pkg = NULL, *tests = NULL;
	int ret = -1;
	strbuf_addf(&path, "%s/%s/function.json", problems_dir, id);
	int rc = strbuf_read_file(&text, path.buf, PACKAGE_MAX);
	if (rc < 0) {
		ret = rc == -ENOENT ? -2 : -1;
		snprintf(err, errlen, "cannot read '%s': %s", path.buf, strerror(-rc));
		goto out;
	}
	pkg = cJSON_Parse(text.buf);
	const cJSON *fn = cJSON_GetObjectItemCaseSensitive(pkg, "function");
	const cJSON *sig = cJSON_GetObjectItemCaseSensitive(pkg, "signature");
	const cJSON *lim = cJSON_GetObjectItemCaseSensitive(pkg, "limits");
	struct request_error rerr;
	if (!cJSON_IsString(fn) || !ident_ok(fn->valuestring)) {
		snprintf(err, errlen, "%s: no valid \"function\" name", path.buf);
		goto out;
	}
	if (sig && check_signature(sig, &rerr) < 0) {
		snprintf(err, errlen, "%s: %s", path.buf, rerr.message);
		goto out;
	}
	if (!(tests = package_tests(pkg, err, errlen)) ||
	    package_compare(cJSON_GetObjectItemCaseSensitive(pkg, "compare"), o, err, errlen) < 0)
		goto out;
	const cJSON *tl = cJSON_GetObjectItemCaseSensitive(lim, "time_ms");
	if (cJSON_IsNumber(tl) && tl->valuedouble >= 1 && tl->valuedouble <= 60000) {
		o->has_limits = true;
		o->limits.time_ms = (long)tl->valuedouble;
	}
	model_request_set_function(o, fn->valuestring, sig, tests);
	ret = 0;
out:
	cJSON_Delete(tests);
	cJSON_Delete(pkg);
	strbuf_release(&path);
	strbuf_release(&text);
	return ret;
}
