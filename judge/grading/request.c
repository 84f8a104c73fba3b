/* request: validation of client request bodies into the grader's normalized request. */
#include "judge/grading/request.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "judge/grading/compare.h"
#include "common/config.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "judge/grading/problem.h"
#include "common/strbuf.h"
#include "common/utf8.h"

#define MAX_PROBLEM_ID 64
#define MAX_TEST_NAME  128
#define MAX_URL	       2048

int req_fail(struct req_error *err, int http_status, const char *code, const char *fmt, ...)
{
	va_list ap;
	err->http_status = http_status;
	snprintf(err->code, sizeof err->code, "%s", code);
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof err->message, fmt, ap);
	va_end(ap);
	return -1;
}

void req_parsed_release(struct req_parsed *p)
{
	cJSON_Delete(p->request);
	free(p->callback_url);
	p->request = NULL;
	p->callback_url = NULL;
}

bool req_problem_id_valid(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n > MAX_PROBLEM_ID)
		return false;
	if (!(islower((unsigned char)id[0]) || isdigit((unsigned char)id[0])))
		return false;
	for (size_t i = 1; i < n; i++) {
		unsigned char c = (unsigned char)id[i];
		/* islower/isdigit are locale-dependent only above ASCII; be explicit */
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return true;
}

int req_url_split(const char *url, char *host, size_t hostlen, int *port, char *path,
		  size_t pathlen)
{
	const char *h;
	*port = 80;
	if (!strncasecmp(url, "http://", 7)) {
		h = url + 7;
	} else if (!strncasecmp(url, "https://", 8)) {
		h = url + 8;
		*port = 443;
	} else {
		return -1;
	}
	size_t hl = strcspn(h, ":/?#");
	if (hl == 0 || hl >= hostlen)
		return -1;
	for (size_t i = 0; i < hl; i++) {
		unsigned char c = (unsigned char)h[i];
		if (!(isalnum(c) || c == '.' || c == '-' || c == '_'))
			return -1;
	}
	memcpy(host, h, hl);
	host[hl] = 0;
	for (char *p = host; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	const char *rest = h + hl;
	if (*rest == ':') {
		char *end;
		long p = strtol(rest + 1, &end, 10);
		if (end == rest + 1 || p < 1 || p > 65535)
			return -1;
		*port = (int)p;
		rest = end;
	}
	if (*rest == 0)
		rest = "/";
	/* the path goes into the request line: CR/LF there would add headers */
	for (const char *p = rest; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '#')
			return -1;
	if (*rest == '?') {
		if (strlen(rest) + 2 > pathlen)
			return -1;
		snprintf(path, pathlen, "/%s", rest);
		return 0;
	}
	if (*rest != '/' || strlen(rest) + 1 > pathlen)
		return -1;
	snprintf(path, pathlen, "%s", rest);
	return 0;
}

/* True when host (and port) is listed in the comma-separated allowlist. */
static bool host_allowed(const char *host, int port, const char *allowlist)
{
	char hp[300];
	snprintf(hp, sizeof hp, "%s:%d", host, port);
	const char *p = allowlist;
	while (*p) {
		while (*p == ',' || *p == ' ')
			p++;
		size_t n = strcspn(p, ", ");
		if (n == 0)
			break;
		if ((strlen(host) == n && !strncasecmp(p, host, n)) ||
		    (strlen(hp) == n && !strncasecmp(p, hp, n)))
			return true;
		p += n;
	}
	return false;
}

int req_callback_url_check(const char *url, const char *allowlist, struct req_error *err)
{
	char host[256], path[MAX_URL];
	int port;
	if (strlen(url) > MAX_URL)
		return req_fail(err, 422, "invalid_field", "callback_url is longer than %d bytes",
				MAX_URL);
	if (req_url_split(url, host, sizeof host, &port, path, sizeof path) < 0)
		return req_fail(err, 422, "invalid_field",
				"callback_url must be an http:// or https:// URL with a host name, "
				"optional port and path");
	if (!allowlist || !*allowlist)
		return req_fail(err, 422, "callback_not_allowed",
				"callbacks are disabled on this server (callback_hosts is empty)");
	if (!host_allowed(host, port, allowlist))
		return req_fail(err, 422, "callback_not_allowed",
				"callback_url host '%s' is not in callback_hosts", host);
	return 0;
}

/* A string field: absent is fine (returns 0 with *out NULL) unless required. */
static int get_string(const cJSON *obj, const char *name, const char *where, bool required,
		      size_t max_bytes, const char **out, struct req_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	*out = NULL;
	if (!v || cJSON_IsNull(v)) {
		if (required)
			return req_fail(err, 422, "missing_field", "%s%s is required", where, name);
		return 0;
	}
	if (!cJSON_IsString(v) || !v->valuestring)
		return req_fail(err, 422, "invalid_field", "%s%s must be a string", where, name);
	if (max_bytes && strlen(v->valuestring) > max_bytes)
		return req_fail(err, 413, "too_large", "%s%s is larger than %zu KiB", where, name,
				max_bytes / 1024);
	*out = v->valuestring;
	return 0;
}

static int get_bool(const cJSON *obj, const char *name, const char *where, bool *out,
		    struct req_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsBool(v))
		return req_fail(err, 422, "invalid_field", "%s%s must be true or false", where,
				name);
	*out = cJSON_IsTrue(v);
	return 0;
}

/* An integer field within [lo, hi]; absent leaves *out at 0. */
static int get_int(const cJSON *obj, const char *name, const char *where, long lo, long hi,
		   long *out, struct req_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	*out = 0;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v))
		return req_fail(err, 422, "invalid_field", "%s%s must be a number", where, name);
	double d = v->valuedouble;
	/* the range first: converting 1e300 or inf to an integer is undefined */
	if (d != d || d < (double)lo || d > (double)hi)
		return req_fail(err, 422, "invalid_field", "%s%s must be between %ld and %ld",
				where, name, lo, hi);
	if (d != (double)(long)d)
		return req_fail(err, 422, "invalid_field", "%s%s must be a whole number", where,
				name);
	*out = (long)d;
	return 0;
}

static int check_known_keys(const cJSON *obj, const char *const *keys, const char *where,
			    struct req_error *err)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, obj)
	{
		bool ok = false;
		for (size_t i = 0; keys[i]; i++)
			if (it->string && !strcmp(it->string, keys[i]))
				ok = true;
		if (!ok)
			return req_fail(err, 422, "invalid_field", "unknown field '%s%s'", where,
					it->string ? it->string : "");
	}
	return 0;
}

static int add_string(cJSON *obj, const char *name, const char *value, struct req_error *err)
{
	if (!cJSON_AddStringToObject(obj, name, value))
		return req_fail(err, 503, "out_of_memory", "out of memory");
	return 0;
}

static int validate_limits(const struct judge_config *cfg, const cJSON *in, cJSON *out,
			   struct req_error *err)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(in, "limits");
	if (!l || cJSON_IsNull(l))
		return 0;
	if (!cJSON_IsObject(l))
		return req_fail(err, 422, "invalid_field", "limits must be an object");
	static const char *const keys[] = {"time_ms",	"wall_ms",   "memory_mb",
					   "output_kb", "processes", NULL};
	if (check_known_keys(l, keys, "limits.", err) < 0)
		return -1;
	struct limits_policy pol;
	struct limits_caps caps;
	limits_policy_from_config(cfg, &pol);
	limits_request_caps(&pol, &caps);
	struct {
		const char *name;
		struct limits_range r;
	} spec[] = {
	    {"time_ms", caps.time_ms},	   {"wall_ms", caps.wall_ms},
	    {"memory_mb", caps.memory_mb}, {"output_kb", caps.output_kb},
	    {"processes", caps.processes},
	};
	cJSON *lo = cJSON_AddObjectToObject(out, "limits");
	if (!lo)
		return req_fail(err, 503, "out_of_memory", "out of memory");
	for (size_t i = 0; i < sizeof spec / sizeof spec[0]; i++) {
		long v;
		if (get_int(l, spec[i].name, "limits.", spec[i].r.lo, spec[i].r.hi, &v, err) < 0)
			return -1;
		if (cJSON_GetObjectItemCaseSensitive(l, spec[i].name) &&
		    !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(l, spec[i].name)))
			cJSON_AddNumberToObject(lo, spec[i].name, (double)v);
	}
	return 0;
}

/* compare: a mode name, or {"mode": M, "flags": "icpc flags" | ["flag", ...]}
 * and/or the normalized keys of grade.h. Flags go through cmp_parse_flags so a
 * bad flag is the client's error here rather than an internal_error later. */
static int validate_compare(const cJSON *in, bool has_problem, cJSON *out, struct req_error *err)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(in, "compare");
	if (!c || cJSON_IsNull(c))
		return 0;
	const char *mode_s = NULL;
	const cJSON *flags = NULL;
	if (cJSON_IsString(c)) {
		mode_s = c->valuestring;
	} else if (cJSON_IsObject(c)) {
		static const char *const keys[] = {"mode",
						   "flags",
						   "case_sensitive",
						   "space_change_sensitive",
						   "float_absolute_tolerance",
						   "float_relative_tolerance",
						   "float_tolerance",
						   "unordered_tokens",
						   NULL};
		if (check_known_keys(c, keys, "compare.", err) < 0)
			return -1;
		if (get_string(c, "mode", "compare.", false, 64, &mode_s, err) < 0)
			return -1;
		flags = cJSON_GetObjectItemCaseSensitive(c, "flags");
	} else {
		return req_fail(err, 422, "invalid_field",
				"compare must be a mode name or an object");
	}
	struct cmp_opts o;
	enum cmp_mode mode = CMP_LINES;
	if (mode_s && cmp_mode_parse(mode_s, &mode) < 0)
		return req_fail(err, 422, "invalid_field",
				"compare.mode '%.40s' is not one of exact, lines, tokens, "
				"unordered, regex, checker",
				mode_s);
	if (mode == CMP_CHECKER && !has_problem)
		return req_fail(err, 422, "invalid_field",
				"compare.mode 'checker' needs a problem with an output validator");
	cmp_opts_init(&o, mode);

	/* collect flags as argv: the flags field, then the explicit keys */
	const char *argv[64];
	char numbuf[8][40];
	int argc = 0, nums = 0;
	char flagbuf[1024];
	if (flags && !cJSON_IsNull(flags)) {
		if (cJSON_IsString(flags)) {
			/* "float_tolerance 1e-6 case_sensitive": split on white space */
			if (strlen(flags->valuestring) >= sizeof flagbuf)
				return req_fail(err, 422, "invalid_field",
						"compare.flags is too long");
			strcpy(flagbuf, flags->valuestring);
			char *save = NULL;
			for (char *tok = strtok_r(flagbuf, " \t\r\n", &save); tok;
			     tok = strtok_r(NULL, " \t\r\n", &save)) {
				if (argc >= 48)
					return req_fail(err, 422, "invalid_field",
							"compare.flags has too many words");
				argv[argc++] = tok;
			}
		} else if (cJSON_IsArray(flags)) {
			const cJSON *f;
			cJSON_ArrayForEach(f, flags)
			{
				if (!cJSON_IsString(f) || argc >= 48)
					return req_fail(err, 422, "invalid_field",
							"compare.flags must be at most 48 strings");
				argv[argc++] = f->valuestring;
			}
		} else {
			return req_fail(err, 422, "invalid_field",
					"compare.flags must be a string or an array of strings");
		}
	}
	static const char *const bools[] = {"case_sensitive", "space_change_sensitive", NULL};
	for (size_t i = 0; cJSON_IsObject(c) && bools[i]; i++) {
		bool b = false;
		if (get_bool(c, bools[i], "compare.", &b, err) < 0)
			return -1;
		if (b)
			argv[argc++] = bools[i];
	}
	static const char *const tols[] = {"float_absolute_tolerance", "float_relative_tolerance",
					   "float_tolerance", NULL};
	for (size_t i = 0; cJSON_IsObject(c) && tols[i]; i++) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, tols[i]);
		if (!t || cJSON_IsNull(t))
			continue;
		if (!cJSON_IsNumber(t) || t->valuedouble < 0 || t->valuedouble != t->valuedouble)
			return req_fail(err, 422, "invalid_field",
					"compare.%s must be a number >= 0", tols[i]);
		snprintf(numbuf[nums], sizeof numbuf[nums], "%.17g", t->valuedouble);
		argv[argc++] = tols[i];
		argv[argc++] = numbuf[nums++];
	}
	char perr[256];
	if (argc && cmp_parse_flags(&o, argc, argv, perr, sizeof perr) < 0)
		return req_fail(err, 422, "invalid_field", "compare: %s", perr);
	bool ut = false;
	if (cJSON_IsObject(c) && get_bool(c, "unordered_tokens", "compare.", &ut, err) < 0)
		return -1;

	cJSON *co = cJSON_AddObjectToObject(out, "compare");
	if (!co)
		return req_fail(err, 503, "out_of_memory", "out of memory");
	cJSON_AddStringToObject(co, "mode", cmp_mode_name(o.mode));
	cJSON_AddBoolToObject(co, "case_sensitive", o.case_sensitive);
	cJSON_AddBoolToObject(co, "space_change_sensitive", o.space_change_sensitive);
	if (o.float_abs_tol >= 0)
		cJSON_AddNumberToObject(co, "float_absolute_tolerance", o.float_abs_tol);
	if (o.float_rel_tol >= 0)
		cJSON_AddNumberToObject(co, "float_relative_tolerance", o.float_rel_tol);
	cJSON_AddBoolToObject(co, "unordered_tokens", ut || o.unordered_tokens);
	return 0;
}

/* One pattern of compare mode regex: compiled (and tried on an empty output)
 * now, so a bad pattern is the client's 422 rather than an internal_error
 * after the run. */
static int check_regex(const char *pat, const char *what, struct req_error *err)
{
	struct cmp_opts o;
	struct cmp_feedback fb;
	cmp_opts_init(&o, CMP_REGEX);
	memset(&fb, 0, sizeof fb);
	if (cmp_compare(&o, pat, strlen(pat), "", 0, &fb) == CMP_ERROR &&
	    !strncmp(fb.message, "bad regex", 9))
		return req_fail(err, 422, "invalid_field", "%s: %s", what, fb.message);
	return 0;
}

static int check_regexes(const cJSON *o, struct req_error *err)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "compare");
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(c, "mode");
	if (!cJSON_IsString(mode) || strcmp(mode->valuestring, "regex"))
		return 0;
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "expected_output");
	if (cJSON_IsString(e) && check_regex(e->valuestring, "expected_output", err) < 0)
		return -1;
	const cJSON *t;
	int i = 0;
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(o, "tests"))
	{
		char what[48];
		snprintf(what, sizeof what, "tests[%d].expected_output", i++);
		e = cJSON_GetObjectItemCaseSensitive(t, "expected_output");
		if (cJSON_IsString(e) && check_regex(e->valuestring, what, err) < 0)
			return -1;
	}
	return 0;
}

static int validate_tests(const struct judge_config *cfg, const cJSON *tests, cJSON *out,
			  bool *any_expected, struct req_error *err)
{
	if (!cJSON_IsArray(tests))
		return req_fail(err, 422, "invalid_field", "tests must be an array of objects");
	int n = cJSON_GetArraySize(tests);
	if (n == 0)
		return req_fail(err, 422, "invalid_field", "tests must not be empty");
	if (n > cfg->max_tests)
		return req_fail(err, 413, "too_large", "tests has %d entries, at most %ld allowed",
				n, cfg->max_tests);
	cJSON *arr = cJSON_AddArrayToObject(out, "tests");
	if (!arr)
		return req_fail(err, 503, "out_of_memory", "out of memory");
	size_t max_stdin = (size_t)cfg->max_stdin_kb * 1024;
	int i = 0;
	const cJSON *t;
	static const char *const keys[] = {"name", "stdin", "expected_output", NULL};
	cJSON_ArrayForEach(t, tests)
	{
		char where[48];
		i++;
		snprintf(where, sizeof where, "tests[%d].", i - 1);
		if (!cJSON_IsObject(t))
			return req_fail(err, 422, "invalid_field", "tests[%d] must be an object",
					i - 1);
		if (check_known_keys(t, keys, where, err) < 0)
			return -1;
		const char *name, *in, *exp;
		if (get_string(t, "name", where, false, MAX_TEST_NAME, &name, err) < 0 ||
		    get_string(t, "stdin", where, false, max_stdin, &in, err) < 0 ||
		    get_string(t, "expected_output", where, false, max_stdin, &exp, err) < 0)
			return -1;
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(arr, o))
			return cJSON_Delete(o),
			       req_fail(err, 503, "out_of_memory", "out of memory");
		char num[16];
		snprintf(num, sizeof num, "%d", i);
		add_string(o, "name", name ? name : num, err);
		add_string(o, "stdin", in ? in : "", err);
		if (exp) {
			add_string(o, "expected_output", exp, err);
			*any_expected = true;
		}
	}
	return 0;
}

int req_validate(const struct judge_config *cfg, const struct lang_registry *langs,
		 enum req_kind kind, const cJSON *in, struct req_parsed *out, struct req_error *err)
{
	int ret = -1;
	cJSON *o = NULL;
	memset(out, 0, sizeof *out);
	if (!cJSON_IsObject(in))
		return req_fail(err, 422, "invalid_field", "the request must be a JSON object");
	static const char *const keys[] = {
	    "language", "source", "stdin",	   "expected_output", "tests",		 "problem",
	    "compare",	"limits", "run_all_tests", "callback_url",    "idempotency_key", NULL};
	if (check_known_keys(in, keys, "", err) < 0)
		return -1;
	o = cJSON_CreateObject();
	if (!o)
		return req_fail(err, 503, "out_of_memory", "out of memory");

	const char *language, *source, *stdin_s, *expected, *problem, *cb;
	size_t max_stdin = (size_t)cfg->max_stdin_kb * 1024;
	if (get_string(in, "language", "", true, 64, &language, err) < 0)
		goto out;
	if (!lang_find(langs, language)) {
		struct strbuf names = STRBUF_INIT;
		for (int i = 0; i < langs->count && names.len < 150; i++)
			strbuf_addf(&names, "%s%s", i ? ", " : "", langs->langs[i].name);
		req_fail(err, 422, "unknown_language", "unknown language '%.40s' (known: %s)",
			 language, names.buf);
		strbuf_release(&names);
		goto out;
	}
	if (get_string(in, "source", "", true, (size_t)cfg->max_source_kb * 1024, &source, err) < 0)
		goto out;
	if (!*source) {
		req_fail(err, 422, "missing_field", "source is empty");
		goto out;
	}
	if (get_string(in, "stdin", "", false, max_stdin, &stdin_s, err) < 0 ||
	    get_string(in, "expected_output", "", false, max_stdin, &expected, err) < 0 ||
	    get_string(in, "problem", "", false, 256, &problem, err) < 0 ||
	    get_string(in, "callback_url", "", false, MAX_URL + 1, &cb, err) < 0)
		goto out;
	add_string(o, "language", language, err);
	add_string(o, "source", source, err);

	const cJSON *tests = cJSON_GetObjectItemCaseSensitive(in, "tests");
	if (tests && cJSON_IsNull(tests))
		tests = NULL;
	int forms = (tests != NULL) + (problem != NULL) + (stdin_s || expected);
	if (forms > 1) {
		req_fail(err, 422, "invalid_field",
			 "give only one of tests, problem, or stdin/expected_output");
		goto out;
	}
	bool any_expected = expected != NULL;
	if (problem) {
		if (kind != REQ_SUBMISSION) {
			req_fail(err, 422, "invalid_field",
				 "problem is accepted by /v1/submissions only");
			goto out;
		}
		if (!req_problem_id_valid(problem)) {
			req_fail(
			    err, 422, "invalid_field",
			    "problem id must match [a-z0-9][a-z0-9_-]* (at most 64 characters)");
			goto out;
		}
		/* loading reads only problem.yaml and folder listings: cheap */
		struct problem pb;
		char perr[256];
		int prc = prob_open(&pb, cfg->problems_dir, problem, perr, sizeof perr);
		if (prc == -2) {
			req_fail(err, 422, "unknown_problem", "unknown problem '%s'", problem);
			goto out;
		}
		if (prc < 0) {
			req_fail(err, 422, "unsupported_problem",
				 "problem '%s' cannot be loaded: %s", problem, perr);
			goto out;
		}
		if (pb.unsupported) {
			req_fail(err, 422, "unsupported_problem",
				 "problem '%s' is not supported: %s", problem, pb.unsupported);
			prob_release(&pb);
			goto out;
		}
		prob_release(&pb);
		add_string(o, "problem", problem, err);
		any_expected = true;
	} else if (tests) {
		if (validate_tests(cfg, tests, o, &any_expected, err) < 0)
			goto out;
	} else {
		add_string(o, "stdin", stdin_s ? stdin_s : "", err);
		if (expected)
			add_string(o, "expected_output", expected, err);
	}
	if (kind == REQ_EXECUTE_EXPECTED && !any_expected) {
		req_fail(err, 422, "missing_field",
			 "expected_output (or tests with expected_output) is required");
		goto out;
	}
	if (validate_compare(in, problem != NULL, o, err) < 0 || check_regexes(o, err) < 0 ||
	    validate_limits(cfg, in, o, err) < 0)
		goto out;
	bool all = false;
	if (get_bool(in, "run_all_tests", "", &all, err) < 0)
		goto out;
	cJSON_AddBoolToObject(o, "run_all_tests", all);
	if (cb) {
		if (req_callback_url_check(cb, cfg->callback_hosts, err) < 0)
			goto out;
		out->callback_url = strdup(cb);
		if (!out->callback_url) {
			req_fail(err, 503, "out_of_memory", "out of memory");
			goto out;
		}
	}
	out->request = o;
	o = NULL;
	ret = 0;
out:
	cJSON_Delete(o);
	return ret;
}

int req_parse_json(const struct judge_config *cfg, const char *body, size_t len, cJSON **out,
		   struct req_error *err)
{
	*out = NULL;
	if (len == 0)
		return req_fail(err, 400, "invalid_json", "the request body is empty");
	if ((size_t)cfg->max_body_kb * 1024 < len)
		return req_fail(err, 413, "too_large", "the request body is larger than %ld KiB",
				cfg->max_body_kb);
	/* JSON text is UTF-8 (RFC 8259); NUL bytes would cut strings short */
	if (!utf8_valid_text(body, len))
		return req_fail(err, 400, "invalid_encoding",
				"the request body is not valid UTF-8 text");
	const char *end = NULL;
	cJSON *in = cJSON_ParseWithLengthOpts(body, len, &end, 0);
	if (in && end) /* only white space may follow the value */
		for (const char *p = end; p < body + len; p++)
			if (!strchr(" \t\r\n", *p)) {
				cJSON_Delete(in);
				in = NULL;
				break;
			}
	if (!in) {
		size_t at = end && end >= body ? (size_t)(end - body) : 0;
		return req_fail(err, 400, "invalid_json",
				"the body is not valid JSON (near byte %zu)", at);
	}
	/* "\u0000" decodes to a NUL that would silently cut a string short */
	for (size_t i = 0; i + 5 < len; i++)
		if (body[i] == '\\') {
			if (body[i + 1] == 'u' && !strncmp(body + i + 2, "0000", 4)) {
				cJSON_Delete(in);
				return req_fail(err, 422, "invalid_field",
						"strings must not contain NUL (\\u0000)");
			}
			i++; /* skip the escaped character */
		}
	*out = in;
	return 0;
}

int req_parse(const struct judge_config *cfg, const struct lang_registry *langs, enum req_kind kind,
	      const char *body, size_t len, struct req_parsed *out, struct req_error *err)
{
	cJSON *in;
	memset(out, 0, sizeof *out);
	if (req_parse_json(cfg, body, len, &in, err) < 0)
		return -1;
	int rc = req_validate(cfg, langs, kind, in, out, err);
	cJSON_Delete(in);
	return rc;
}
