/* request: validation of client request bodies into the grader's typed request. */
#include "judge/grading/request.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "judge/grading/compare.h"
#include "common/config.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "judge/grading/request_func.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "common/xalloc.h"

#define MAX_PROBLEM_ID 64
#define MAX_TEST_NAME  128
#define MAX_URL	       2048
/* A request's extra files and program arguments (Piston's files and args). */
#define MAX_FILES     64
#define MAX_FILE_NAME 128
#define MAX_ARGS      64
#define MAX_ARG_BYTES 4096

int request_fail(struct request_error *err, int http_status, const char *code, const char *fmt, ...)
{
	va_list ap;
	err->http_status = http_status;
	snprintf(err->code, sizeof err->code, "%s", code);
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof err->message, fmt, ap);
	va_end(ap);
	return -1;
}

void request_parsed_release(struct request_parsed *p)
{
	model_request_release(&p->req);
	cJSON_Delete(p->request);
	free(p->callback_url);
	p->request = NULL;
	p->callback_url = NULL;
}

bool request_problem_id_valid(const char *id)
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

int request_url_split(const char *url, char *host, size_t hostlen, int *port, char *path,
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

int request_callback_url_check(const char *url, const char *allowlist, struct request_error *err)
{
	char host[256], path[MAX_URL];
	int port;
	if (strlen(url) > MAX_URL)
		return request_fail(err, 422, "invalid_field",
				    "callback_url is longer than %d bytes", MAX_URL);
	if (request_url_split(url, host, sizeof host, &port, path, sizeof path) < 0)
		return request_fail(
		    err, 422, "invalid_field",
		    "callback_url must be an http:// or https:// URL with a host name, "
		    "optional port and path");
	if (!allowlist || !*allowlist)
		return request_fail(
		    err, 422, "callback_not_allowed",
		    "callbacks are disabled on this server (callback_hosts is empty)");
	if (!host_allowed(host, port, allowlist))
		return request_fail(err, 422, "callback_not_allowed",
				    "callback_url host '%s' is not in callback_hosts", host);
	return 0;
}

/* A string field: absent is fine (returns 0 with *out NULL) unless required. */
static int get_string(const cJSON *obj, const char *name, const char *where, bool required,
		      size_t max_bytes, const char **out, struct request_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	*out = NULL;
	if (!v || cJSON_IsNull(v)) {
		if (required)
			return request_fail(err, 422, "missing_field", "%s%s is required", where,
					    name);
		return 0;
	}
	if (!cJSON_IsString(v) || !v->valuestring)
		return request_fail(err, 422, "invalid_field", "%s%s must be a string", where,
				    name);
	if (max_bytes && strlen(v->valuestring) > max_bytes)
		return request_fail(err, 413, "too_large", "%s%s is larger than %zu KiB", where,
				    name, max_bytes / 1024);
	*out = v->valuestring;
	return 0;
}

static int get_bool(const cJSON *obj, const char *name, const char *where, bool *out,
		    struct request_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsBool(v))
		return request_fail(err, 422, "invalid_field", "%s%s must be true or false", where,
				    name);
	*out = cJSON_IsTrue(v);
	return 0;
}

/* An integer field within [lo, hi]; absent leaves *out at 0. */
static int get_int(const cJSON *obj, const char *name, const char *where, long lo, long hi,
		   long *out, struct request_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	*out = 0;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v))
		return request_fail(err, 422, "invalid_field", "%s%s must be a number", where,
				    name);
	double d = v->valuedouble;
	/* the range first: converting 1e300 or inf to an integer is undefined */
	if (d != d || d < (double)lo || d > (double)hi)
		return request_fail(err, 422, "invalid_field", "%s%s must be between %ld and %ld",
				    where, name, lo, hi);
	if (d != (double)(long)d)
		return request_fail(err, 422, "invalid_field", "%s%s must be a whole number", where,
				    name);
	*out = (long)d;
	return 0;
}

static int check_known_keys(const cJSON *obj, const char *const *keys, const char *where,
			    struct request_error *err)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, obj)
	{
		bool ok = false;
		for (size_t i = 0; keys[i]; i++)
			if (it->string && !strcmp(it->string, keys[i]))
				ok = true;
		if (!ok)
			return request_fail(err, 422, "invalid_field", "unknown field '%s%s'",
					    where, it->string ? it->string : "");
	}
	return 0;
}

/* Copies s into *dst (and its length into *len when len is not NULL). */
static void copy_string(char **dst, size_t *len, const char *s)
{
	size_t n = strlen(s);
	model_set(dst, s, n);
	if (len)
		*len = n;
}

static int validate_limits(const struct judge_config *cfg, const cJSON *in,
			   struct grade_request *out, struct request_error *err)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(in, "limits");
	if (!l || cJSON_IsNull(l))
		return 0;
	if (!cJSON_IsObject(l))
		return request_fail(err, 422, "invalid_field", "limits must be an object");
	static const char *const keys[] = {"time_ms",	"wall_ms",   "memory_mb",
					   "output_kb", "processes", NULL};
	if (check_known_keys(l, keys, "limits.", err) < 0)
		return -1;
	struct limits_policy pol;
	struct limits_caps caps;
	limits_policy_from_config(cfg, &pol);
	limits_request_caps(&pol, &caps);
	struct limits_request *g = &out->limits;
	struct {
		const char *name;
		struct limits_range r;
		long *to;
	} spec[] = {
	    {"time_ms", caps.time_ms, &g->time_ms},
	    {"wall_ms", caps.wall_ms, &g->wall_ms},
	    {"memory_mb", caps.memory_mb, &g->memory_mb},
	    {"output_kb", caps.output_kb, &g->output_kb},
	    {"processes", caps.processes, &g->processes},
	};
	out->has_limits = true;
	/* absent keys stay 0, which no range above admits: 0 = not given */
	for (size_t i = 0; i < sizeof spec / sizeof spec[0]; i++)
		if (get_int(l, spec[i].name, "limits.", spec[i].r.lo, spec[i].r.hi, spec[i].to,
			    err) < 0)
			return -1;
	return 0;
}

/* The flags of compare, in the ICPC validator's argv form ("float_tolerance
 * 1e-6 case_sensitive" or ["float_tolerance", "1e-6"]), into argv (words cut
 * in buf). */
static int collect_flags(const cJSON *flags, const char **argv, int *argc, char *buf, size_t buflen,
			 struct request_error *err)
{
	*argc = 0;
	if (!flags || cJSON_IsNull(flags))
		return 0;
	if (cJSON_IsString(flags)) {
		if (strlen(flags->valuestring) >= buflen)
			return request_fail(err, 422, "invalid_field", "compare.flags is too long");
		strcpy(buf, flags->valuestring);
		char *save = NULL;
		for (char *tok = strtok_r(buf, " \t\r\n", &save); tok;
		     tok = strtok_r(NULL, " \t\r\n", &save)) {
			if (*argc >= 48)
				return request_fail(err, 422, "invalid_field",
						    "compare.flags has too many words");
			argv[(*argc)++] = tok;
		}
	} else if (cJSON_IsArray(flags)) {
		const cJSON *f;
		cJSON_ArrayForEach(f, flags)
		{
			if (!cJSON_IsString(f) || *argc >= 48)
				return request_fail(err, 422, "invalid_field",
						    "compare.flags must be at most 48 strings");
			argv[(*argc)++] = f->valuestring;
		}
	} else {
		return request_fail(err, 422, "invalid_field",
				    "compare.flags must be a string or an array of strings");
	}
	return 0;
}

static const char *const tol_keys[] = {"float_absolute_tolerance", "float_relative_tolerance",
				       "float_tolerance"};

/* The explicit keys of a compare object, checked (in the order the API always
 * reported them) before the flags are parsed, and applied after them so they win. */
struct compare_keys {
	bool case_sensitive, space_change_sensitive;
	double tol[3]; /* by tol_keys; < 0 when not given */
};

static int read_keys(const cJSON *c, struct compare_keys *k, struct request_error *err)
{
	memset(k, 0, sizeof *k);
	if (get_bool(c, "case_sensitive", "compare.", &k->case_sensitive, err) < 0 ||
	    get_bool(c, "space_change_sensitive", "compare.", &k->space_change_sensitive, err) < 0)
		return -1;
	for (size_t i = 0; i < 3; i++) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, tol_keys[i]);
		k->tol[i] = -1;
		if (!t || cJSON_IsNull(t))
			continue;
		if (!cJSON_IsNumber(t) || t->valuedouble < 0 || t->valuedouble != t->valuedouble)
			return request_fail(err, 422, "invalid_field",
					    "compare.%s must be a number >= 0", tol_keys[i]);
		k->tol[i] = t->valuedouble;
	}
	return 0;
}

static int apply_keys(const struct compare_keys *k, struct compare_options *o,
		      struct request_error *err)
{
	o->case_sensitive |= k->case_sensitive;
	o->space_change_sensitive |= k->space_change_sensitive;
	for (size_t i = 0; i < 3; i++) {
		if (k->tol[i] < 0)
			continue;
		/* 1e999 parses to infinity */
		if (!isfinite(k->tol[i]))
			return request_fail(
			    err, 422, "invalid_field",
			    "compare: bad value 'inf' for '%s' (a finite number >= 0)",
			    tol_keys[i]);
		if (i != 1)
			o->float_abs_tol = k->tol[i];
		if (i != 0)
			o->float_rel_tol = k->tol[i];
	}
	return 0;
}

/* The flags and keys of a compare object into o. */
static int compare_object(const cJSON *c, struct compare_options *o, struct request_error *err)
{
	const char *argv[64];
	int argc;
	char buf[1024], perr[256];
	struct compare_keys k;
	bool ut = false;
	if (collect_flags(cJSON_GetObjectItemCaseSensitive(c, "flags"), argv, &argc, buf,
			  sizeof buf, err) < 0 ||
	    read_keys(c, &k, err) < 0)
		return -1;
	if (argc && compare_parse_flags(o, argc, argv, perr, sizeof perr) < 0)
		return request_fail(err, 422, "invalid_field", "compare: %s", perr);
	if (apply_keys(&k, o, err) < 0 || get_bool(c, "unordered_tokens", "compare.", &ut, err) < 0)
		return -1;
	o->unordered_tokens |= ut;
	return 0;
}

/* compare: a mode name, or {"mode": M, "flags": "icpc flags" | ["flag", ...]}
 * and/or the normalized keys of model.h, parsed once into out->cmp. A bad flag
 * is the client's error here rather than an internal_error later. */
static int validate_compare(const cJSON *in, bool has_problem, struct grade_request *out,
			    struct request_error *err)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(in, "compare");
	if (!c || cJSON_IsNull(c))
		return 0;
	const char *mode_s = NULL;
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
	} else {
		return request_fail(err, 422, "invalid_field",
				    "compare must be a mode name or an object");
	}
	enum compare_mode mode = CMP_LINES;
	if (mode_s && compare_mode_parse(mode_s, &mode) < 0)
		return request_fail(err, 422, "invalid_field",
				    "compare.mode '%.40s' is not one of exact, lines, tokens, "
				    "unordered, regex, checker",
				    mode_s);
	if (mode == CMP_CHECKER && !has_problem)
		return request_fail(
		    err, 422, "invalid_field",
		    "compare.mode 'checker' needs a problem with an output validator");
	compare_options_init(&out->cmp, mode);
	out->has_compare = true;
	if (!cJSON_IsObject(c))
		return 0;
	return compare_object(c, &out->cmp, err);
}

/* One pattern of compare mode regex: compiled (and tried on an empty output)
 * now, so a bad pattern is the client's 422 rather than an internal_error
 * after the run. */
static int check_regex(const char *pat, const char *what, struct request_error *err)
{
	struct compare_options o;
	struct compare_feedback fb;
	compare_options_init(&o, CMP_REGEX);
	memset(&fb, 0, sizeof fb);
	if (compare_outputs(&o, pat, strlen(pat), "", 0, &fb) == CMP_ERROR &&
	    !strncmp(fb.message, "bad regex", 9))
		return request_fail(err, 422, "invalid_field", "%s: %s", what, fb.message);
	return 0;
}

static int check_regexes(const struct grade_request *r, struct request_error *err)
{
	if (r->cmp.mode != CMP_REGEX)
		return 0;
	if (r->expected && check_regex(r->expected, "expected_output", err) < 0)
		return -1;
	for (int i = 0; i < r->ntests; i++) {
		char what[48];
		snprintf(what, sizeof what, "tests[%d].expected_output", i);
		if (r->tests[i].expected && check_regex(r->tests[i].expected, what, err) < 0)
			return -1;
	}
	return 0;
}

/* "points" of a test: a number from 0 to 1e6 (its share of the score), or absent. */
static int get_points(const cJSON *t, const char *where, double *out, struct request_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, "points");
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
	    v->valuedouble > 1e6)
		return request_fail(err, 422, "invalid_field",
				    "%spoints must be a number from 0 to 1000000", where);
	*out = v->valuedouble;
	return 0;
}

static int validate_tests(const struct judge_config *cfg, const cJSON *tests,
			  struct grade_request *out, bool *any_expected, struct request_error *err)
{
	if (!cJSON_IsArray(tests))
		return request_fail(err, 422, "invalid_field", "tests must be an array of objects");
	int n = cJSON_GetArraySize(tests);
	if (n == 0)
		return request_fail(err, 422, "invalid_field", "tests must not be empty");
	if (n > cfg->max_tests)
		return request_fail(err, 413, "too_large",
				    "tests has %d entries, at most %ld allowed", n, cfg->max_tests);
	size_t max_stdin = (size_t)cfg->max_stdin_kb * 1024;
	int i = 0;
	const cJSON *t;
	static const char *const keys[] = {"name", "stdin", "expected_output", "points", NULL};
	cJSON_ArrayForEach(t, tests)
	{
		char where[48];
		i++;
		snprintf(where, sizeof where, "tests[%d].", i - 1);
		if (!cJSON_IsObject(t))
			return request_fail(err, 422, "invalid_field",
					    "tests[%d] must be an object", i - 1);
		if (check_known_keys(t, keys, where, err) < 0)
			return -1;
		const char *name, *in, *exp;
		if (get_string(t, "name", where, false, MAX_TEST_NAME, &name, err) < 0 ||
		    get_string(t, "stdin", where, false, max_stdin, &in, err) < 0 ||
		    get_string(t, "expected_output", where, false, max_stdin, &exp, err) < 0)
			return -1;
		char num[16];
		snprintf(num, sizeof num, "%d", i);
		model_request_add_test(out, name ? name : num, in, in ? strlen(in) : 0, exp,
				       exp ? strlen(exp) : 0);
		*any_expected |= exp != NULL;
		if (get_points(t, where, &out->tests[out->ntests - 1].points, err) < 0)
			return -1;
	}
	return 0;
}

/* A file name in the box: one plain name, no hidden files, not the main source. */
static bool file_name_ok(const char *n)
{
	size_t len = strlen(n);
	if (len == 0 || len > MAX_FILE_NAME || n[0] == '.' || n[0] == '-')
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)n[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* files: [{name, content}], written beside the source (model.h). */
static int validate_files(const struct judge_config *cfg, const struct lang *l, const cJSON *in,
			  struct grade_request *o, struct request_error *err)
{
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(in, "files");
	if (!files || cJSON_IsNull(files))
		return 0;
	if (!cJSON_IsArray(files))
		return request_fail(err, 422, "invalid_field", "files must be an array of objects");
	int n = cJSON_GetArraySize(files);
	if (n > MAX_FILES)
		return request_fail(err, 413, "too_large",
				    "files has %d entries, at most %d allowed", n, MAX_FILES);
	static const char *const keys[] = {"name", "content", NULL};
	const cJSON *f;
	int i = 0;
	cJSON_ArrayForEach(f, files)
	{
		char where[32];
		const char *name, *content;
		snprintf(where, sizeof where, "files[%d].", i);
		if (!cJSON_IsObject(f))
			return request_fail(err, 422, "invalid_field",
					    "files[%d] must be an object", i);
		if (check_known_keys(f, keys, where, err) < 0 ||
		    get_string(f, "name", where, true, 0, &name, err) < 0 ||
		    get_string(f, "content", where, true, (size_t)cfg->max_source_kb * 1024,
			       &content, err) < 0)
			return -1;
		if (!file_name_ok(name))
			return request_fail(
			    err, 422, "invalid_field",
			    "files[%d].name must be a plain file name of at most %d "
			    "characters [A-Za-z0-9._-], not starting with '.' or '-'",
			    i, MAX_FILE_NAME);
		if (l->source_file && !strcmp(name, l->source_file))
			return request_fail(err, 422, "invalid_field",
					    "files[%d].name '%s' is the name of the source itself",
					    i, name);
		for (int j = 0; j < o->nfiles; j++)
			if (!strcmp(o->files[j].name, name))
				return request_fail(err, 422, "invalid_field",
						    "files[%d].name '%s' is also files[%d]'s", i,
						    name, j);
		model_request_add_file(o, name, content, strlen(content));
		i++;
	}
	return 0;
}

/* A list of at most max strings of at most MAX_ARG_BYTES under key, each
 * handed to add. */
static int validate_strings(const cJSON *in, const char *key, int max, struct grade_request *o,
			    void (*add)(struct grade_request *, const char *),
			    struct request_error *err)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(in, key);
	if (!list || cJSON_IsNull(list))
		return 0;
	if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > max)
		return request_fail(err, 422, "invalid_field", "%s must be at most %d strings", key,
				    max);
	const cJSON *a;
	int i = 0;
	cJSON_ArrayForEach(a, list)
	{
		if (!cJSON_IsString(a) || !a->valuestring)
			return request_fail(err, 422, "invalid_field", "%s[%d] must be a string",
					    key, i);
		if (strlen(a->valuestring) > MAX_ARG_BYTES)
			return request_fail(err, 413, "too_large", "%s[%d] is longer than %d bytes",
					    key, i, MAX_ARG_BYTES);
		add(o, a->valuestring);
		i++;
	}
	return 0;
}

/* args: the program's command-line arguments, after the language's run argv;
 * compiler_options: flags where the language's compile command says {options}
 * (the compiler runs sandboxed like the program: a flag can only break the build). */
static int validate_args(const struct lang *l, const cJSON *in, struct grade_request *o,
			 struct request_error *err)
{
	if (validate_strings(in, "args", MAX_ARGS, o, model_request_add_arg, err) < 0 ||
	    validate_strings(in, "compiler_options", MAX_ARGS, o, model_request_add_compiler_option,
			     err) < 0)
		return -1;
	if (o->ncompiler_options && l->compile_options_at < 0)
		return request_fail(err, 422, "invalid_field",
				    "compiler_options: language '%s' takes no compiler options",
				    l->name);
	return 0;
}

static int unknown_language(const struct lang_registry *langs, const char *language,
			    struct request_error *err)
{
	struct strbuf names = STRBUF_INIT;
	for (int i = 0; i < langs->count && names.len < 150; i++)
		strbuf_addf(&names, "%s%s", i ? ", " : "", langs->langs[i].name);
	request_fail(err, 422, "unknown_language", "unknown language '%.40s' (known: %s)", language,
		     names.buf);
	strbuf_release(&names);
	return -1;
}

/* A problem id of /v1/submissions, by its form: whether such a problem
 * exists for the key, and which version, is the API's to decide
 * (judge/api/problems.h: problems_pin, from the database). */
static int validate_problem(enum request_kind kind, const char *problem, struct request_error *err)
{
	if (kind != REQ_SUBMISSION)
		return request_fail(err, 422, "invalid_field",
				    "problem is accepted by /v1/submissions only");
	if (!request_problem_id_valid(problem))
		return request_fail(
		    err, 422, "invalid_field",
		    "problem id must match [a-z0-9][a-z0-9_-]* (at most 64 characters)");
	return 0;
}

/* The form of the request: a problem, inline tests, or one run; and the
 * callback URL's type (checked beside the other strings, as always). */
static int validate_form(const struct judge_config *cfg, enum request_kind kind, const cJSON *in,
			 struct grade_request *o, const char **cb, struct request_error *err)
{
	const char *stdin_s, *expected, *problem;
	size_t max_stdin = (size_t)cfg->max_stdin_kb * 1024;
	if (get_string(in, "stdin", "", false, max_stdin, &stdin_s, err) < 0 ||
	    get_string(in, "expected_output", "", false, max_stdin, &expected, err) < 0 ||
	    get_string(in, "problem", "", false, 256, &problem, err) < 0 ||
	    get_string(in, "callback_url", "", false, MAX_URL + 1, cb, err) < 0)
		return -1;
	const cJSON *tests = cJSON_GetObjectItemCaseSensitive(in, "tests");
	if (tests && cJSON_IsNull(tests))
		tests = NULL;
	int forms = (tests != NULL) + (problem != NULL) + (stdin_s || expected);
	if (forms > 1)
		return request_fail(err, 422, "invalid_field",
				    "give only one of tests, problem, or stdin/expected_output");
	bool any_expected = expected != NULL;
	if (problem) {
		if (validate_problem(kind, problem, err) < 0)
			return -1;
		copy_string(&o->problem, NULL, problem);
		any_expected = true;
	} else if (tests) {
		if (validate_tests(cfg, tests, o, &any_expected, err) < 0)
			return -1;
	} else {
		copy_string(&o->stdin_data, &o->stdin_len, stdin_s ? stdin_s : "");
		if (expected)
			copy_string(&o->expected, &o->expected_len, expected);
	}
	if (kind == REQ_EXECUTE_EXPECTED && !any_expected)
		return request_fail(err, 422, "missing_field",
				    "expected_output (or tests with expected_output) is required");
	return 0;
}

int request_validate(const struct judge_config *cfg, const struct lang_registry *langs,
		     enum request_kind kind, const cJSON *in, struct request_parsed *out,
		     struct request_error *err)
{
	int ret = -1;
	memset(out, 0, sizeof *out);
	model_request_init(&out->req);
	struct grade_request *o = &out->req;
	if (!cJSON_IsObject(in))
		return request_fail(err, 422, "invalid_field", "the request must be a JSON object");
	static const char *const keys[] = {
	    "language", "source", "code", "stdin", "expected_output", "tests", "problem", "compare",
	    "limits", "run_all_tests", "callback_url", "idempotency_key", "files", "args",
	    "compiler_options",
	    /* function and test-code problems (request_func.h) */
	    "function", "signature", "test_code", "entry_point", "eval", NULL};
	if (check_known_keys(in, keys, "", err) < 0)
		return -1;

	const char *language, *source, *cb;
	const struct lang *l;
	if (get_string(in, "language", "", true, 64, &language, err) < 0)
		goto out;
	if (!(l = lang_lookup(langs, language))) {
		unknown_language(langs, language, err);
		goto out;
	}
	language = l->name;
	/* "code" is what SDKs and agent tool schemas call the source */
	const char *src_key = cJSON_GetObjectItemCaseSensitive(in, "code") ? "code" : "source";
	if (!strcmp(src_key, "code") && cJSON_GetObjectItemCaseSensitive(in, "source")) {
		request_fail(err, 422, "invalid_field", "give source or code, not both");
		goto out;
	}
	if (get_string(in, src_key, "", true, (size_t)cfg->max_source_kb * 1024, &source, err) < 0)
		goto out;
	if (!*source) {
		request_fail(err, 422, "missing_field", "source is empty");
		goto out;
	}
	copy_string(&o->language, NULL, language);
	copy_string(&o->source, &o->source_len, source);
	int fform = request_func_validate(cfg, langs, l, kind, in, o, err);
	if (fform < 0 ||
	    (fform == 0 &&
	     (validate_files(cfg, l, in, o, err) < 0 || validate_args(l, in, o, err) < 0)) ||
	    (fform == 2 && validate_args(l, in, o, err) < 0) ||
	    (fform >= 1 && get_string(in, "callback_url", "", false, MAX_URL + 1, &cb, err) < 0) ||
	    (fform == 0 && validate_form(cfg, kind, in, o, &cb, err) < 0))
		goto out;
	if (validate_compare(in, o->problem != NULL, o, err) < 0 || check_regexes(o, err) < 0 ||
	    validate_limits(cfg, in, o, err) < 0 ||
	    get_bool(in, "run_all_tests", "", &o->run_all_tests, err) < 0)
		goto out;
	if (cb) {
		if (request_callback_url_check(cb, cfg->callback_hosts, err) < 0)
			goto out;
		copy_string(&out->callback_url, NULL, cb);
	}
	out->request = model_request_render(o);
	ret = 0;
out:
	if (ret < 0)
		request_parsed_release(out);
	return ret;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first name that appears twice in one object of v (depth first), or
 * NULL. cJSON keeps every member and its lookups return the first, while
 * most parsers keep the last: a body with a key twice means two different
 * requests to two readers, so it is refused (RFC 8259 4: names SHOULD be
 * unique). Sorting the names keeps an object of n keys at n log n. */
static const char *duplicate_key(const cJSON *v)
{
	if (!cJSON_IsObject(v) && !cJSON_IsArray(v))
		return NULL;
	const char *dup = NULL;
	if (cJSON_IsObject(v)) {
		size_t n = 0;
		for (const cJSON *c = v->child; c; c = c->next)
			n++;
		if (n > 1) {
			const char **names = xcalloc(n, sizeof *names);
			size_t i = 0;
			for (const cJSON *c = v->child; c; c = c->next)
				names[i++] = c->string ? c->string : "";
			qsort(names, n, sizeof *names, name_cmp);
			for (i = 1; i < n && !dup; i++)
				if (!strcmp(names[i - 1], names[i]))
					dup = names[i];
			free(names);
		}
	}
	for (const cJSON *c = v->child; c && !dup; c = c->next)
		dup = duplicate_key(c);
	return dup;
}

int request_parse_json(const struct judge_config *cfg, const char *body, size_t len, cJSON **out,
		       struct request_error *err)
{
	*out = NULL;
	if (len == 0)
		return request_fail(err, 400, "invalid_json", "the request body is empty");
	if ((size_t)cfg->max_body_kb * 1024 < len)
		return request_fail(err, 413, "too_large",
				    "the request body is larger than %ld KiB", cfg->max_body_kb);
	/* JSON text is UTF-8 (RFC 8259); NUL bytes would cut strings short */
	if (!utf8_valid_text(body, len))
		return request_fail(err, 400, "invalid_encoding",
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
		return request_fail(err, 400, "invalid_json",
				    "the body is not valid JSON (near byte %zu)", at);
	}
	/* "\u0000" decodes to a NUL that would silently cut a string short */
	for (size_t i = 0; i + 5 < len; i++)
		if (body[i] == '\\') {
			if (body[i + 1] == 'u' && !strncmp(body + i + 2, "0000", 4)) {
				cJSON_Delete(in);
				return request_fail(err, 422, "invalid_field",
						    "strings must not contain NUL (\\u0000)");
			}
			i++; /* skip the escaped character */
		}
	const char *dup = duplicate_key(in);
	if (dup) {
		int rc = request_fail(err, 400, "invalid_json",
				      "the key \"%.80s\" appears twice in one object", dup);
		cJSON_Delete(in);
		return rc;
	}
	*out = in;
	return 0;
}

int request_parse(const struct judge_config *cfg, const struct lang_registry *langs,
		  enum request_kind kind, const char *body, size_t len, struct request_parsed *out,
		  struct request_error *err)
{
	cJSON *in;
	memset(out, 0, sizeof *out);
	if (request_parse_json(cfg, body, len, &in, err) < 0)
		return -1;
	int rc = request_validate(cfg, langs, kind, in, out, err);
	cJSON_Delete(in);
	return rc;
}
