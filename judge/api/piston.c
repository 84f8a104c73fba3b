/* piston: the Piston v2 compatible endpoints, a thin front over /v1/execute. */
#define _GNU_SOURCE /* sigabbrev_np */
#include "judge/api/piston.h"

#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "judge/api/api.h"
#include "judge/api/http.h"
#include "judge/api/info.h"
#include "judge/api/render.h"
#include "judge/api/submit.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "judge/grading/request.h"
#include "judge/service/queue.h"

/* True when Piston's name or alias s (or our own name) names l (the
 * language's piston_* keys: lang.h). */
static bool names_lang(const struct lang *l, const char *s)
{
	if (!strcmp(s, l->name) || !strcmp(s, l->piston_language))
		return true;
	for (char **a = l->piston_aliases; *a; a++)
		if (!strcmp(s, *a))
			return true;
	return false;
}

/* The semver "X.Y.Z" of a version probe's line: its last number with dots
 * ("gcc (Debian 12.2.0-14) 12.2.0" gives 12.2.0, "v22.11.0" 22.11.0, "C#
 * Roslyn 4.14.0, .NET 9.0.22" 9.0.22), else its first number, padded with .0;
 * "0.0.0" when it has none. */
static void semver_of(const char *probe, char *out, size_t outlen)
{
	const char *first = NULL, *dotted = NULL;
	for (const char *p = probe; *p;) {
		size_t n = strspn(p, "0123456789.");
		if (n && isdigit((unsigned char)*p)) {
			if (!first)
				first = p;
			if (memchr(p, '.', n))
				dotted = p;
		}
		p += n ? n : 1;
	}
	long v[3] = {0, 0, 0};
	const char *p = dotted ? dotted : first ? first : "";
	for (int i = 0; i < 3 && isdigit((unsigned char)*p); i++) {
		v[i] = strtol(p, (char **)&p, 10);
		if (*p != '.')
			break;
		p++;
	}
	snprintf(out, outlen, "%ld.%ld.%ld", v[0], v[1], v[2]);
}

static void version_of(struct api *a, const struct lang *l, char *out, size_t outlen)
{
	semver_of(info_language_version(a, (int)(l - a->langs.langs)), out, outlen);
}

/* ---- semver ranges (node-semver's grammar, without pre-release ordering) ---- */

struct sv {
	long v[3]; /* missing components are 0 */
	int n;	   /* components given: 0 for "*" */
};

/* A partial version: [v]N[.N[.N]], x, X or * for the rest; a pre-release or
 * build tail (-rc.1, +b) is ignored. False when s is not one. */
static bool parse_partial(const char *s, struct sv *out)
{
	memset(out, 0, sizeof *out);
	if (*s == 'v' || *s == 'V')
		s++;
	for (int i = 0; i < 3; i++) {
		if (*s == 'x' || *s == 'X' || *s == '*') {
			s++;
			/* the rest must be wildcards too: 1.x.x */
			while (*s == '.' && (s[1] == 'x' || s[1] == 'X' || s[1] == '*'))
				s += 2;
			break;
		}
		if (!isdigit((unsigned char)*s))
			return false;
		long val = 0;
		for (; isdigit((unsigned char)*s); s++) {
			val = val * 10 + (*s - '0');
			if (val > 1000000000L)
				return false;
		}
		out->v[i] = val;
		out->n = i + 1;
		if (*s != '.' || i == 2)
			break;
		s++;
	}
	return !*s || *s == '-' || *s == '+';
}

static int cmp3(const long a[3], const long b[3])
{
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* p with component k raised by one and the ones after it zeroed: the first
 * version above the partial p (1.2 -> 1.3.0). */
static void bump(const struct sv *p, int k, long out[3])
{
	for (int i = 0; i < 3; i++)
		out[i] = i < k ? p->v[i] : i == k ? p->v[i] + 1 : 0;
}

/* Whether version v satisfies the comparator op p. */
static bool holds(const char *op, const struct sv *p, const long v[3])
{
	long hi[3];
	int c = cmp3(v, p->v);
	if (p->n > 0)
		bump(p, p->n - 1, hi);
	if (!*op || !strcmp(op, "="))
		return p->n == 0 || (p->n == 3 ? c == 0 : c >= 0 && cmp3(v, hi) < 0);
	if (!strcmp(op, ">="))
		return c >= 0;
	if (!strcmp(op, ">"))
		return p->n == 3 ? c > 0 : p->n > 0 && cmp3(v, hi) >= 0;
	if (!strcmp(op, "<"))
		return p->n > 0 && c < 0;
	if (!strcmp(op, "<="))
		return p->n == 0 || (p->n == 3 ? c <= 0 : cmp3(v, hi) < 0);
	if (!strcmp(op, "~") || !strcmp(op, "~>")) {
		if (p->n == 0)
			return true;
		bump(p, p->n == 1 ? 0 : 1, hi);
		return c >= 0 && cmp3(v, hi) < 0;
	}
	if (!strcmp(op, "^")) {
		if (p->n == 0)
			return true;
		int k = p->v[0] > 0 || p->n == 1 ? 0 : p->v[1] > 0 || p->n == 2 ? 1 : 2;
		bump(p, k, hi);
		return c >= 0 && cmp3(v, hi) < 0;
	}
	return false; /* not an operator */
}

/* One alternative of a range: comparators that must all hold (alt is cut). */
static bool all_hold(char *alt, const long v[3])
{
	char *tok[32], *save = NULL;
	int n = 0;
	for (char *t = strtok_r(alt, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (n == 32)
			return false;
		tok[n++] = t;
	}
	for (int i = 0; i < n; i++) {
		struct sv p, q;
		if (i + 2 < n && !strcmp(tok[i + 1], "-")) { /* A - B, both ends included */
			if (!parse_partial(tok[i], &p) || !parse_partial(tok[i + 2], &q) ||
			    !holds(">=", &p, v) || !holds("<=", &q, v))
				return false;
			i += 2;
			continue;
		}
		size_t ol = strspn(tok[i], "<>=~^");
		char op[3] = "";
		if (ol > 2)
			return false;
		memcpy(op, tok[i], ol);
		op[ol] = 0;
		const char *rest = tok[i] + ol;
		if (!*rest && ol) /* ">= 1.2": the version is the next word */
			rest = i + 1 < n ? tok[++i] : "";
		if (!parse_partial(rest, &p) || !holds(op, &p, v))
			return false;
	}
	return true; /* no comparator: "" is "*" */
}

bool piston_version_match(const char *range, const char *version)
{
	struct sv ver;
	char buf[256];
	if (!strcmp(range, version))
		return true;
	if (!parse_partial(version, &ver) || strlen(range) >= sizeof buf)
		return false;
	strcpy(buf, range);
	for (char *alt = buf;;) {
		char *bar = strstr(alt, "||");
		if (bar)
			*bar = 0;
		if (all_hold(alt, ver.v))
			return true;
		if (!bar)
			return false;
		alt = bar + 2;
	}
}

/* ---- GET /api/v2/runtimes ---- */

void piston_runtimes(struct http_request *r, struct api *a)
{
	cJSON *arr = cJSON_CreateArray();
	for (int i = 0; i < a->langs.count; i++) {
		const struct lang *l = &a->langs.langs[i];
		char v[64];
		version_of(a, l, v, sizeof v);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "language", l->piston_language);
		cJSON_AddStringToObject(o, "version", v);
		cJSON *al = cJSON_AddArrayToObject(o, "aliases");
		for (char **al_name = l->piston_aliases; *al_name; al_name++)
			cJSON_AddItemToArray(al, cJSON_CreateString(*al_name));
		if (l->piston_runtime)
			cJSON_AddStringToObject(o, "runtime", l->piston_runtime);
		cJSON_AddItemToArray(arr, o);
	}
	http_respond_json(r, 200, arr);
	cJSON_Delete(arr);
}

/* ---- POST /api/v2/execute ---- */

/* Piston's error reply: {"message": ...}. */
#define fail(r, status, ...) render_keyed_error(r, status, "message", __VA_ARGS__)

static int hexval(int c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* Decodes base64 (padding and blanks allowed) into out. Returns 0 or -1. */
static int base64_decode(const char *s, struct strbuf *out)
{
	static const char abc[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned long acc = 0;
	int bits = 0;
	for (; *s && *s != '='; s++) {
		if (isspace((unsigned char)*s))
			continue;
		const char *c = strchr(abc, *s);
		if (!c)
			return -1;
		acc = (acc << 6 | (unsigned long)(c - abc)) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			strbuf_addch(out, (char)(acc >> bits & 0xff));
		}
	}
	for (; *s; s++)
		if (*s != '=' && !isspace((unsigned char)*s))
			return -1;
	return 0;
}

/* The content of files[i] decoded by its encoding into out (text: the
 * submission is stored as JSON). Returns 0, or -1 having answered. */
static int file_content(struct http_request *r, const cJSON *f, int i, struct strbuf *out)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(f, "content");
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(f, "encoding");
	if (!cJSON_IsString(c)) {
		fail(r, 400, "files[%d].content is required as a string", i);
		return -1;
	}
	const char *enc = cJSON_IsString(e) ? e->valuestring : "utf8";
	int rc = 0;
	if (e && !cJSON_IsNull(e) && !cJSON_IsString(e))
		enc = ""; /* not a name: refused below */
	if (!strcmp(enc, "utf8")) {
		strbuf_addstr(out, c->valuestring);
	} else if (!strcmp(enc, "base64")) {
		rc = base64_decode(c->valuestring, out);
	} else if (!strcmp(enc, "hex")) {
		const char *s = c->valuestring;
		for (; rc == 0 && s[0] && s[1]; s += 2)
			if (hexval(s[0]) < 0 || hexval(s[1]) < 0)
				rc = -1;
			else
				strbuf_addch(out, (char)(hexval(s[0]) << 4 | hexval(s[1])));
		if (*s)
			rc = -1;
	} else {
		fail(r, 400, "files[%d].encoding must be one of utf8, base64, hex", i);
		return -1;
	}
	if (rc < 0) {
		fail(r, 400, "files[%d].content is not valid %s", i, enc);
		return -1;
	}
	if (!utf8_valid_text(out->buf, out->len)) {
		fail(r, 400, "files[%d]: only text files are supported (UTF-8, no NUL)", i);
		return -1;
	}
	return 0;
}

/* The language of the body whose version matches, or NULL having answered. */
static const struct lang *runtime_of(struct http_request *r, struct api *a, const cJSON *in)
{
	const cJSON *lj = cJSON_GetObjectItemCaseSensitive(in, "language");
	const cJSON *vj = cJSON_GetObjectItemCaseSensitive(in, "version");
	if (!cJSON_IsString(lj) || !*lj->valuestring) {
		fail(r, 400, "language is required as a string");
		return NULL;
	}
	/* Piston requires a version; a missing one is taken as "*" */
	if (vj && !cJSON_IsNull(vj) && !cJSON_IsString(vj)) {
		fail(r, 400, "version is required as a string");
		return NULL;
	}
	const char *want = cJSON_IsString(vj) ? vj->valuestring : "*";
	for (int i = 0; i < a->langs.count; i++) {
		const struct lang *l = &a->langs.langs[i];
		char v[64];
		version_of(a, l, v, sizeof v);
		if (names_lang(l, lj->valuestring) && piston_version_match(want, v))
			return l;
	}
	fail(r, 400, "%.64s-%.64s runtime is unknown", lj->valuestring, want);
	return NULL;
}

/* One of Piston's optional limits: absent, null, 0 or -1 (no limit) leave *out
 * at 0; else a number in [1, max]. Returns 0, or -1 having answered. */
static int limit_of(struct http_request *r, const cJSON *in, const char *name, double max,
		    double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, name);
	*out = 0;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v)) {
		fail(r, 400, "If specified, %s must be a number", name);
		return -1;
	}
	double d = v->valuedouble;
	if (d == 0 || d == -1)
		return 0;
	if (d < 0 || d != d) {
		fail(r, 400, "%s must be non-negative", name);
		return -1;
	}
	if (max > 0 && d > max) {
		fail(r, 400, "%s cannot exceed the configured limit of %.0f", name, max);
		return -1;
	}
	*out = d;
	return 0;
}

/* The body of /v1/execute for the Piston request in: language, source (files[0]),
 * files, stdin, args, limits. NULL having answered. */
static cJSON *v1_body(struct http_request *r, struct api *a, const cJSON *in)
{
	struct limits_policy pol;
	struct limits_caps caps;
	limits_policy_from_config(a->cfg, &pol);
	limits_request_caps(&pol, &caps);
	const struct lang *l = runtime_of(r, a, in);
	if (!l)
		return NULL;
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(in, "files");
	if (!cJSON_IsArray(files) || cJSON_GetArraySize(files) == 0) {
		fail(r, 400, "files is required as an array");
		return NULL;
	}
	double run_ms, run_mem, ignored;
	/* the compile stage keeps its language's limits: these are only checked */
	if (limit_of(r, in, "run_timeout", (double)caps.time_ms.hi, &run_ms) < 0 ||
	    limit_of(r, in, "compile_timeout", 0, &ignored) < 0 ||
	    limit_of(r, in, "run_memory_limit", (double)caps.memory_mb.hi * 1048576, &run_mem) <
		0 ||
	    limit_of(r, in, "compile_memory_limit", 0, &ignored) < 0)
		return NULL;
	cJSON *body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "language", l->name);
	cJSON *more = cJSON_CreateArray();
	const cJSON *f;
	int i = 0;
	cJSON_ArrayForEach(f, files)
	{
		struct strbuf content = STRBUF_INIT;
		if (!cJSON_IsObject(f) || file_content(r, f, i, &content) < 0) {
			if (!cJSON_IsObject(f))
				fail(r, 400, "files[%d] must be an object", i);
			strbuf_release(&content);
			cJSON_Delete(more);
			cJSON_Delete(body);
			return NULL;
		}
		if (i == 0) {
			cJSON_AddStringToObject(body, "source", content.buf);
		} else {
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "name");
			char dflt[32];
			snprintf(dflt, sizeof dflt, "file%d", i);
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "name",
						cJSON_IsString(name) ? name->valuestring : dflt);
			cJSON_AddStringToObject(o, "content", content.buf);
			cJSON_AddItemToArray(more, o);
		}
		strbuf_release(&content);
		i++;
	}
	if (cJSON_GetArraySize(more))
		cJSON_AddItemToObject(body, "files", more);
	else
		cJSON_Delete(more);
	const cJSON *stdin_j = cJSON_GetObjectItemCaseSensitive(in, "stdin");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(in, "args");
	if (stdin_j && !cJSON_IsNull(stdin_j))
		cJSON_AddItemToObject(body, "stdin", cJSON_Duplicate(stdin_j, 1));
	if (args && !cJSON_IsNull(args))
		cJSON_AddItemToObject(body, "args", cJSON_Duplicate(args, 1));
	if (run_ms > 0 || run_mem > 0) {
		cJSON *lim = cJSON_AddObjectToObject(body, "limits");
		/* Piston's run_timeout is the run's wall time: CPU time cannot pass it either */
		if (run_ms > 0) {
			cJSON_AddNumberToObject(lim, "time_ms", (double)(long)run_ms);
			cJSON_AddNumberToObject(lim, "wall_ms", (double)(long)run_ms);
		}
		if (run_mem > 0) {
			long mb = (long)((run_mem + 1048575) / 1048576);
			/* less does not start a runtime */
			if (mb < caps.memory_mb.lo)
				mb = caps.memory_mb.lo;
			cJSON_AddNumberToObject(lim, "memory_mb", (double)mb);
		}
	}
	return body;
}

/* A Piston stage: {stdout, stderr, output, code, signal}; output is stdout
 * then stderr (the judge captures them apart). */
static cJSON *stage(const char *out, const char *err, bool exited, long code, int sig)
{
	cJSON *o = cJSON_CreateObject();
	struct strbuf both = STRBUF_INIT;
	strbuf_addf(&both, "%s%s", out, err);
	cJSON_AddStringToObject(o, "stdout", out);
	cJSON_AddStringToObject(o, "stderr", err);
	cJSON_AddStringToObject(o, "output", both.buf);
	strbuf_release(&both);
	if (exited && !sig)
		cJSON_AddNumberToObject(o, "code", (double)code);
	else
		cJSON_AddNullToObject(o, "code");
	if (sig) {
		const char *abbrev = sigabbrev_np(sig);
		char name[32];
		snprintf(name, sizeof name, "SIG%s", abbrev ? abbrev : "UNKNOWN");
		cJSON_AddStringToObject(o, "signal", name);
	} else {
		cJSON_AddNullToObject(o, "signal");
	}
	return o;
}

static const char *str_at(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

/* Renders the finished submission s in Piston's shape. */
static void answer(struct http_request *r, struct api *a, const struct queue_sub *s, bool final)
{
	if (!final) {
		fail(r, 504, "the run did not finish within %ld s (submission %lld is %s)",
		     a->cfg->max_wait_s, (long long)s->id, status_name(s->status));
		return;
	}
	const cJSON *res = s->result;
	const char *status = str_at(res, "status");
	const struct lang *l = lang_find(&a->langs, str_at(s->request, "language"));
	if (!l || !strcmp(status, "internal_error") || !res) {
		const char *m = str_at(res, "message");
		fail(r, 500, "the judge failed: %s", *m ? m : status);
		return;
	}
	char v[64];
	version_of(a, l, v, sizeof v);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "language", l->piston_language);
	cJSON_AddStringToObject(o, "version", v);
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(res, "compile");
	bool compile_error = !strcmp(status, "compile_error");
	/* a syntax check that Piston has no stage for (piston_compiled = no) is
	 * reported by its run */
	if (l->piston_compiled) {
		/* compilers write their diagnostics to stderr; the judge keeps them as one text */
		cJSON_AddItemToObject(
		    o, "compile", stage("", str_at(c, "output"), true, compile_error ? 1 : 0, 0));
	} else if (compile_error) {
		/* no compile stage in Piston: its interpreter reports the error and exits 1 */
		cJSON_AddItemToObject(o, "run", stage("", str_at(c, "output"), true, 1, 0));
	}
	/* like Piston, a program that did not compile is not run */
	if (!compile_error) {
		const cJSON *ec = cJSON_GetObjectItemCaseSensitive(res, "exit_code");
		const cJSON *sg = cJSON_GetObjectItemCaseSensitive(res, "signal");
		int sig = cJSON_IsNumber(sg) ? sg->valueint : 0;
		/* Piston kills a run over its limits with SIGKILL */
		if (!sig && (!strcmp(status, "timeout") || !strcmp(status, "memory_limit") ||
			     !strcmp(status, "output_limit")))
			sig = SIGKILL;
		cJSON_AddItemToObject(o, "run",
				      stage(str_at(res, "stdout"), str_at(res, "stderr"),
					    cJSON_IsNumber(ec),
					    cJSON_IsNumber(ec) ? ec->valueint : 0, sig));
	}
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

void piston_execute(struct http_request *r, struct api *a)
{
	cJSON *in = NULL, *body = NULL;
	struct request_error e;
	struct request_parsed p = {0};
	if (request_parse_json(a->cfg, r->body.buf, r->body.len, &in, &e) < 0) {
		fail(r, e.http_status == 413 ? 413 : 400, "%s", e.message);
		goto out;
	}
	if (!cJSON_IsObject(in)) {
		fail(r, 400, "the request must be a JSON object");
		goto out;
	}
	if (!(body = v1_body(r, a, in)))
		goto out;
	/* the same validation as /v1/execute: caps, file names, args */
	if (request_validate(a->cfg, &a->langs, REQ_EXECUTE, body, &p, &e) < 0) {
		fail(r, e.http_status == 413 ? 413 : 400, "%s", e.message);
		goto out;
	}
	submit_run(r, a, &p, answer);
out:
	request_parsed_release(&p);
	cJSON_Delete(body);
	cJSON_Delete(in);
}
