/* harness_typed: the typed harness kinds, stl (C++ standard-library
 * literals in a generated main) and clr (.NET literals in a table). Both need
 * static types: the
 * signature's, else types inferred from the tests' args (int while every value
 * fits 32 bits, long beyond, double when any has a fraction; lists of those).
 * Arguments become literals of those types in the generated main, so no JSON
 * parser runs in the sandbox; the prelude template holds the JSON writer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "judge/grading/harness.h"

#define TYPE_MAX 48

/* Merges the type of v into t ("" = unknown yet). Returns 0 or -1. */
static int infer(const cJSON *v, char *t, size_t tl)
{
	char got[TYPE_MAX] = "";
	if (cJSON_IsBool(v)) {
		snprintf(got, sizeof got, "bool");
	} else if (cJSON_IsString(v)) {
		snprintf(got, sizeof got, "string");
	} else if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;
		snprintf(got, sizeof got, "%s",
			 d != floor(d) || fabs(d) > 9e18 ? "double"
			 : fabs(d) > 2147483647.0	 ? "long"
							 : "int");
	} else if (cJSON_IsArray(v)) {
		char elem[TYPE_MAX] = "";
		const cJSON *e;
		cJSON_ArrayForEach(e, v) if (infer(e, elem, sizeof elem) < 0) return -1;
		if (!*elem) /* [] alone says nothing: a list of whatever t holds */
			return 0;
		snprintf(got, sizeof got, "%s[]", elem);
	} else {
		return -1; /* null, objects: the problem must declare a signature */
	}
	if (!*t || !strcmp(t, got)) {
		snprintf(t, tl, "%s", got);
		return 0;
	}
	/* numbers widen: int < long < double, at the same list depth */
	const char *order[] = {"int", "long", "double"};
	size_t a = strcspn(t, "["), b = strcspn(got, "[");
	if (strcmp(t + a, got + b))
		return -1;
	int ra = -1, rb = -1;
	for (int i = 0; i < 3; i++) {
		if (strlen(order[i]) == a && !strncmp(t, order[i], a))
			ra = i;
		if (strlen(order[i]) == b && !strncmp(got, order[i], b))
			rb = i;
	}
	if (ra < 0 || rb < 0)
		return -1;
	if (rb > ra)
		snprintf(t, tl, "%s", got);
	return 0;
}

/* The types of the parameters: the signature's or inferred. Returns the
 * count, or -1 with err. types[i] holds TYPE_MAX bytes. */
static int param_types(const struct grade_func *f, char (*types)[TYPE_MAX], int max, char *err,
		       size_t errlen)
{
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(f->signature, "params");
	const cJSON *first =
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(f->tests, 0), "args");
	int n = params ? cJSON_GetArraySize(params) : cJSON_GetArraySize(first);
	if (n > max) {
		snprintf(err, errlen, "too many parameters (%d)", n);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		types[i][0] = 0;
		if (params) {
			snprintf(types[i], TYPE_MAX, "%s",
				 cJSON_GetArrayItem(params, i)->valuestring);
			continue;
		}
		const cJSON *t;
		cJSON_ArrayForEach(t, f->tests)
		{
			const cJSON *a =
			    cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(t, "args"), i);
			if (!a || infer(a, types[i], TYPE_MAX) < 0) {
				snprintf(
				    err, errlen,
				    "cannot infer the type of argument %d from the tests: give "
				    "a signature",
				    i + 1);
				return -1;
			}
		}
		if (!types[i][0])
			snprintf(types[i], TYPE_MAX, "int[]");
	}
	return n;
}

/* The language's name of a signature type. */
static void type_name(struct strbuf *sb, const char *t, bool stl)
{
	size_t base = strcspn(t, "[");
	int depth = (int)(strlen(t) - base) / 2;
	const char *name = t;
	char b[16];
	snprintf(b, sizeof b, "%.*s", (int)base, t);
	if (stl) {
		name = !strcmp(b, "long") ? "long long" : !strcmp(b, "string") ? "std::string" : b;
		for (int i = 0; i < depth; i++)
			strbuf_addstr(sb, "std::vector<");
		strbuf_addstr(sb, name);
		for (int i = 0; i < depth; i++)
			strbuf_addch(sb, '>');
		return;
	}
	strbuf_addstr(sb, b);
	for (int i = 0; i < depth; i++)
		strbuf_addstr(sb, "[]");
}

/* A string literal: printable ASCII as is, every other byte in octal (C++)
 * or \uXXXX of the byte's code point (C#, which reads UTF-16: the value is
 * decoded there from the UTF-8 of the literal's escapes). */
static void string_literal(struct strbuf *sb, const char *s, bool stl)
{
	strbuf_addch(sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
			strbuf_addch(sb, *p);
		else if (stl)
			strbuf_addf(sb, "\\%03o", *p);
		else
			strbuf_addf(sb, "\\x%04x", *p);
	}
	strbuf_addch(sb, '"');
}

/* The literal of v as type t. Returns 0, or -1 when v does not fit t. */
static int literal(struct strbuf *sb, const cJSON *v, const char *t, bool stl)
{
	if (!strcmp(t, "bool") && cJSON_IsBool(v)) {
		strbuf_addstr(sb, cJSON_IsTrue(v) ? "true" : "false");
	} else if (!strcmp(t, "string") && cJSON_IsString(v)) {
		if (!stl) /* C# strings are UTF-16: bytes are decoded by the harness */
			strbuf_addstr(sb, "__JudgeH.U8(");
		string_literal(sb, v->valuestring, stl);
		if (!stl)
			strbuf_addch(sb, ')');
	} else if ((!strcmp(t, "int") || !strcmp(t, "long")) && cJSON_IsNumber(v) &&
		   v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 9.2e18) {
		long long x = (long long)v->valuedouble;
		if (!strcmp(t, "int") && (x > 2147483647LL || x < -2147483648LL))
			return -1;
		const char *suf = !strcmp(t, "long") ? (stl ? "LL" : "L") : "";
		if (x == -2147483648LL) /* -2147483648 is -(a long): narrowing */
			strbuf_addf(sb, "(-2147483647%s - 1)", suf);
		else
			strbuf_addf(sb, x < 0 ? "(%lld%s)" : "%lld%s", x, suf);
	} else if (!strcmp(t, "double") && cJSON_IsNumber(v)) {
		strbuf_addf(sb, "(%.17g%s)", v->valuedouble, stl ? "" : "D");
	} else if (strstr(t, "[]") && cJSON_IsArray(v)) {
		char elem[TYPE_MAX];
		snprintf(elem, sizeof elem, "%.*s", (int)strlen(t) - 2, t);
		if (!stl)
			strbuf_addstr(sb, "new ");
		type_name(sb, t, stl);
		strbuf_addch(sb, '{');
		const cJSON *e;
		cJSON_ArrayForEach(e, v)
		{
			if (e != v->child)
				strbuf_addch(sb, ',');
			if (literal(sb, e, elem, stl) < 0)
				return -1;
		}
		strbuf_addch(sb, '}');
	} else {
		return -1;
	}
	return 0;
}

/* The argument literals of test i, "a0, a1" declared before the call as
 * "auto a0 = ...;" (C++, lvalues for vector<int>& parameters). */
static int test_args(struct strbuf *sb, const cJSON *args, char (*types)[TYPE_MAX], int n, bool stl,
		     int i, char *err, size_t errlen)
{
	if (cJSON_GetArraySize(args) != n) {
		snprintf(err, errlen, "test %d has %d arguments, not %d", i + 1,
			 cJSON_GetArraySize(args), n);
		return -1;
	}
	for (int k = 0; k < n; k++) {
		if (stl)
			strbuf_addf(sb, "\t\tauto a%d = ", k);
		else
			strbuf_addstr(sb, k ? ", " : "");
		if (literal(sb, cJSON_GetArrayItem(args, k), types[k], stl) < 0) {
			snprintf(err, errlen, "test %d: argument %d is not of type %s", i + 1,
				 k + 1, types[k]);
			return -1;
		}
		if (stl)
			strbuf_addstr(sb, ";\n");
	}
	return 0;
}

/* "harness.<ext of user_file>": the generated part's name in messages. */
static void harness_name(struct strbuf *out, const char *user_file)
{
	const char *dot = strrchr(user_file, '.');
	strbuf_addf(out, "harness%s", dot ? dot : "");
}

int harness_stl(const char *prelude, const char *user_file, const struct grade_request *req,
		struct strbuf *out, char *err, size_t errlen)
{
	char types[16][TYPE_MAX];
	const struct grade_func *f = req->func;
	int n = param_types(f, types, 16, err, errlen);
	if (n < 0)
		return -1;
	bool method =
	    strstr(req->source, "class Solution") || strstr(req->source, "struct Solution");
	strbuf_addstr(out, prelude);
	strbuf_addf(out, "\n#line 1 \"%s\"\n", user_file);
	strbuf_add(out, req->source, req->source_len);
	strbuf_addstr(out, "\n#line 1 \"");
	harness_name(out, user_file);
	strbuf_addstr(out, "\"\nint main() {\n\t__judge::init();\n");
	const cJSON *t;
	int i = 0;
	cJSON_ArrayForEach(t, f->tests)
	{
		strbuf_addstr(out, "\t{\n");
		if (test_args(out, cJSON_GetObjectItemCaseSensitive(t, "args"), types, n, true, i,
			      err, errlen) < 0)
			return -1;
		strbuf_addf(out, "\t\t__judge::call(%d, [&]() { %sreturn %s%s(", i,
			    method ? "Solution s; " : "", method ? "s." : "", f->name);
		for (int k = 0; k < n; k++)
			strbuf_addf(out, "%sa%d", k ? ", " : "", k);
		strbuf_addstr(out, "); });\n\t}\n");
		i++;
	}
	strbuf_addstr(out, "\t__judge::end();\n\treturn 0;\n}\n");
	return 0;
}

int harness_clr(const char *prelude, const char *user_file, const struct grade_request *req,
		struct strbuf *out, char *err, size_t errlen)
{
	char types[16][TYPE_MAX];
	const struct grade_func *f = req->func;
	int n = param_types(f, types, 16, err, errlen);
	if (n < 0)
		return -1;
	strbuf_addf(out, "#line 1 \"%s\"\n", user_file);
	strbuf_add(out, req->source, req->source_len);
	strbuf_addstr(out, "\n#line default\n");
	strbuf_addstr(out, prelude);
	strbuf_addf(out, "static partial class __JudgeH {\n\tstatic readonly string Name = ");
	string_literal(out, f->name, false);
	strbuf_addstr(out, ";\n\tstatic object[][] Tests() => new object[][] {\n");
	const cJSON *t;
	int i = 0;
	cJSON_ArrayForEach(t, f->tests)
	{
		strbuf_addstr(out, "\t\tnew object[] {");
		if (test_args(out, cJSON_GetObjectItemCaseSensitive(t, "args"), types, n, false, i,
			      err, errlen) < 0)
			return -1;
		strbuf_addstr(out, "},\n");
		i++;
	}
	strbuf_addstr(out, "\t};\n}\n");
	return 0;
}
