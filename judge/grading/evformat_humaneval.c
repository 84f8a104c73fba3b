/* evformat_humaneval: openai/human-eval's format, and the project's function
 * problems in the same files.
 *
 * A problem is {"task_id", "prompt", "test", "entry_point"} (human-eval; a
 * sample's program is prompt + completion + test + check(entry_point), run by
 * the test-code harness, funcgrade.h) or {"task_id", "function", "tests",
 * "signature"?, "compare"?} (a sample's completion is the whole source of the
 * function). Other keys (canonical_solution ...) are ignored. A sample is
 * {"task_id", "completion"}; the language is --lang's (default: the registry's default language).
 */
#include <string.h>

#include "common/xalloc.h"
#include "judge/grading/evalset.h"
#include "judge/grading/evformat.h"

static bool is_function(const cJSON *p)
{
	return evformat_str(p, "function") &&
	       cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(p, "tests"));
}

static bool detect(const cJSON *p, const cJSON *smp)
{
	(void)smp;
	return p && (evformat_str(p, "test") || is_function(p));
}

static int check(const cJSON *p, char *err, size_t errlen)
{
	if (evformat_str(p, "test") || is_function(p))
		return 0;
	snprintf(err, errlen,
		 "problem '%.100s' has neither test (with prompt, entry_point) nor function with "
		 "tests",
		 evformat_str(p, "task_id") ? evformat_str(p, "task_id") : "?");
	return -1;
}

static void expand(const struct evalset *s, const cJSON *smp, int index, struct evalset_items *out)
{
	const char *tid = evformat_str(smp, "task_id"), *comp = evformat_str(smp, "completion");
	const struct evalset_problem *p = tid ? evalset_find(s, tid) : NULL;
	struct evalset_item *it = evformat_item_add(out, index, 0, tid);
	if (!p || !comp) {
		evformat_item_fail(it, !p ? "task_id not in the problems file"
					  : "sample has no completion string");
		return;
	}
	const char *language = s->language ? s->language : s->default_language;
	struct grade_request *r = &it->req;
	model_set(&r->language, language, strlen(language));
	const cJSON *o = p->obj;
	const char *test = evformat_str(o, "test");
	if (test) {
		const char *prompt = evformat_str(o, "prompt"),
			   *ep = evformat_str(o, "entry_point");
		char *src = xasprintf("%s%s", prompt ? prompt : "", comp);
		r->source = src;
		r->source_len = strlen(src);
		model_set(&r->test_code, test, strlen(test));
		if (ep)
			model_set(&r->entry_point, ep, strlen(ep));
	} else {
		model_set(&r->source, comp, strlen(comp));
		r->source_len = strlen(comp);
		const cJSON *sig = cJSON_GetObjectItemCaseSensitive(o, "signature");
		model_request_set_function(r, evformat_str(o, "function"),
					   cJSON_IsObject(sig) ? sig : NULL,
					   cJSON_GetObjectItemCaseSensitive(o, "tests"));
		const char *cmp = evformat_str(o, "compare");
		if (cmp && !strcmp(cmp, "unordered")) {
			compare_options_init(&r->cmp, CMP_UNORDERED);
			r->has_compare = true;
		}
	}
	if (s->timeout_ms > 0) {
		/* an endless sample costs its time limit and little more */
		r->has_limits = true;
		r->limits.time_ms = s->timeout_ms;
		r->limits.wall_ms = s->timeout_ms + 250;
	}
}

const struct evformat evfmt_humaneval = {
    .name = "human-eval",
    .id_key = "task_id",
    .detect = detect,
    .check = check,
    .expand = expand,
};
