/* evformat_humanevalx: HumanEval-X (THUDM/CodeGeeX), as its harness
 * evaluate_humaneval_x.py grades it.
 *
 * Problems: codegeex/benchmark/humaneval-x/<lang>/data/humaneval_<lang>.jsonl.gz
 * ({"task_id": "CPP/0", "prompt", "canonical_solution", "test", "declaration",
 * "example_test"}). Samples: {"task_id", "prompt", "generation", "completion_id"?,
 * ...}; the harness takes the prompt from the sample (the problem's when the
 * sample has none: the harness would stop on a KeyError). The task id names
 * the language ("CPP/0": [cpp] of languages/evalsets/humaneval-x.ini), which
 * holds the assembly and the rule. Results: SAMPLES with ".jsonl" replaced by
 * "_results.jsonl", records {task_id, completion_id, test_code, prompt,
 * generation, result, passed, finish, file, output}; printout: the pass@k dict
 * when every problem has samples, else Total and Correct. */
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/xalloc.h"
#include "judge/grading/evalset.h"
#include "judge/grading/evformat.h"
#include "judge/grading/passk.h"

static bool detect(const cJSON *p, const cJSON *smp)
{
	const char *tid = evformat_str(p ? p : smp, "task_id");
	if (!tid || !strchr(tid, '/'))
		return false;
	return p ? evformat_str(p, "declaration") && evformat_str(p, "test")
		 : evformat_str(smp, "generation") != NULL;
}

static int check(const cJSON *p, char *err, size_t errlen)
{
	const char *tid = evformat_str(p, "task_id");
	if (!strchr(tid, '/') || !evformat_str(p, "prompt") || !evformat_str(p, "test")) {
		snprintf(err, errlen,
			 "problem '%.100s' is not HumanEval-X's (LANG/N task_id, prompt, test)",
			 tid);
		return -1;
	}
	return 0;
}

/* The harness's Python trim: lines up to the first non-empty one whose first
 * character is neither a space nor a tab. */
static char *trim_indented_body(const char *code)
{
	struct strbuf sb = STRBUF_INIT;
	for (const char *p = code;;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (strspn(p, " \t\r\f\v") < len && p[0] != ' ' && p[0] != '\t')
			break;
		if (p != code)
			strbuf_addch(&sb, '\n');
		strbuf_add(&sb, p, len);
		if (!nl)
			break;
		p = nl + 1;
	}
	return strbuf_detach(&sb, NULL);
}

static void expand(const struct evalset *s, const cJSON *smp, int index, struct evalset_items *out)
{
	const char *tid = evformat_str(smp, "task_id"), *gen = evformat_str(smp, "generation");
	const struct evalset_problem *p = tid ? evalset_find(s, tid) : NULL;
	const cJSON *cid = cJSON_GetObjectItemCaseSensitive(smp, "completion_id");
	struct evalset_item *it =
	    evformat_item_add(out, index, cJSON_IsNumber(cid) ? cid->valueint : 0, tid);
	if (!p || !gen) {
		evformat_item_fail(it, !p ? "task_id not in the problems file"
					  : "sample has no generation string");
		return;
	}
	char lang[32];
	snprintf(lang, sizeof lang, "%.*s", (int)strcspn(tid, "/"), tid);
	const struct evformat_lang *l = evformat_lang_find(&s->facts, lang);
	if (!l) {
		char why[160];
		snprintf(why, sizeof why, "HumanEval-X language '%.32s' is not one the judge runs",
			 lang);
		evformat_item_fail(it, why);
		return;
	}
	const char *prompt = evformat_str(smp, "prompt");
	if (!prompt)
		prompt = evformat_str(p->obj, "prompt");
	char *code =
	    l->trim && !strcmp(l->trim, "indented_body") ? trim_indented_body(gen) : xstrdup(gen);
	struct strbuf header = STRBUF_INIT, prog = STRBUF_INIT;
	evformat_add_header(&header, l, prompt);
	struct evformat_part parts[] = {{"header", header.buf},
					{"prompt", prompt},
					{"completion", code},
					{"test", evformat_str(p->obj, "test")}};
	char err[200];
	if (evformat_assemble(&prog, l, parts, 4, err, sizeof err) < 0)
		evformat_item_fail(it, err);
	else
		evformat_item_program(s, it, l, prog.buf);
	strbuf_release(&header);
	strbuf_release(&prog);
	free(code);
}

/* input_file.replace(".jsonl", "_results.jsonl"), every occurrence, as
 * Python's str.replace; a name without ".jsonl" gets the suffix appended
 * (the harness would overwrite the samples file). */
static char *results_path(const char *samples)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = samples, *hit;
	bool any = false;
	while ((hit = strstr(p, ".jsonl"))) {
		strbuf_add(&sb, p, (size_t)(hit - p));
		strbuf_addstr(&sb, "_results.jsonl");
		p = hit + 6;
		any = true;
	}
	strbuf_addstr(&sb, p);
	if (!any)
		strbuf_addstr(&sb, "_results.jsonl");
	return strbuf_detach(&sb, NULL);
}

static int write_results(const struct evformat_output *o, FILE *f, char *err, size_t errlen)
{
	const struct evalset_items *items = o->items;
	struct evformat_tally *t = xcalloc((size_t)items->n + 1, sizeof *t);
	int np = evformat_tally(items, t), ret = -1;
	struct strbuf text = STRBUF_INIT;
	int *seen = xcalloc((size_t)np + 1, sizeof *seen);
	/* grouped by task, in the order of their first sample */
	for (int k = 0; k < np; k++) {
		for (int i = 0; i < items->n; i++) {
			const struct evalset_item *it = &items->v[i];
			if (strcmp(it->task_id, t[k].task_id))
				continue;
			const cJSON *smp = o->samples[it->sample];
			const cJSON *cid = cJSON_GetObjectItemCaseSensitive(smp, "completion_id");
			cJSON *r = cJSON_CreateObject();
			cJSON_AddStringToObject(r, "task_id", it->task_id);
			cJSON_AddNumberToObject(r, "completion_id",
						cJSON_IsNumber(cid) ? cid->valuedouble : seen[k]);
			seen[k]++;
			cJSON_AddStringToObject(r, "test_code",
						it->req.source ? it->req.source : "");
			const char *prompt = evformat_str(smp, "prompt");
			const char *gen = evformat_str(smp, "generation");
			cJSON_AddStringToObject(r, "prompt", prompt ? prompt : "");
			cJSON_AddStringToObject(r, "generation", gen ? gen : "");
			cJSON_AddStringToObject(r, "result", it->result ? it->result : "");
			cJSON_AddBoolToObject(r, "passed", it->passed);
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(smp, "finish");
			cJSON_AddItemToObject(r, "finish",
					      v ? cJSON_Duplicate(v, 1) : cJSON_CreateNumber(-1));
			v = cJSON_GetObjectItemCaseSensitive(smp, "file");
			cJSON_AddItemToObject(r, "file",
					      v ? cJSON_Duplicate(v, 1) : cJSON_CreateString(""));
			v = cJSON_GetObjectItemCaseSensitive(smp, "output");
			cJSON_AddItemToObject(r, "output",
					      v ? cJSON_Duplicate(v, 1) : cJSON_CreateArray());
			char *line = cJSON_PrintUnformatted(r);
			strbuf_addf(&text, "%s\n", line);
			free(line);
			cJSON_Delete(r);
		}
	}
	char *path = o->out_path ? xstrdup(o->out_path) : results_path(o->samples_path);
	size_t pl = strlen(path);
	bool gz = pl > 3 && !strcmp(path + pl - 3, ".gz");
	if (evformat_write_file(path, text.buf, text.len, gz, err, errlen) < 0)
		goto out;
	if (np == o->set->count) {
		/* {'pass@1': 0.5, ...} for each k every task reaches */
		struct strbuf line = STRBUF_INIT;
		int *ns = xcalloc((size_t)np + 1, sizeof *ns);
		for (int k = 0; k < np; k++)
			ns[k] = t[k].n;
		strbuf_addch(&line, '{');
		bool first = true;
		for (int j = 0; j < o->nks; j++) {
			if (!passk_defined(ns, np, o->ks[j]))
				continue;
			double sum = 0;
			for (int k = 0; k < np; k++)
				sum += passk_estimate(t[k].n, t[k].c, o->ks[j]);
			strbuf_addf(&line, "%s'pass@%d': ", first ? "" : ", ", o->ks[j]);
			evformat_pyfloat(&line, sum / np);
			first = false;
		}
		fprintf(f, "%s}\n", line.buf);
		strbuf_release(&line);
		free(ns);
	} else {
		int total = 0, correct = 0;
		for (int k = 0; k < np; k++)
			total += t[k].n, correct += t[k].c;
		fprintf(f, "Total: %d\nCorrect: %d\n", total, correct);
	}
	fprintf(stderr, "judge eval: results in %s\n", path);
	ret = 0;
out:
	free(path);
	free(seen);
	free(t);
	strbuf_release(&text);
	return ret;
}

const struct evformat evfmt_humanevalx = {
    .name = "humaneval-x",
    .id_key = "task_id",
    .detect = detect,
    .check = check,
    .expand = expand,
    .write = write_results,
};
