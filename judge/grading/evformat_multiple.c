/* evformat_multiple: MultiPL-E (nuprl/MultiPL-E), as its evaluator grades it.
 *
 * There is no problems file: each completions file (<name>.json[.gz], one
 * JSON object) carries {"name", "language", "prompt", "tests", "completions":
 * [...], "stop_tokens", "temperature", ...}; every completion is a sample.
 * The program is prompt + completion + "\n" + tests, the completion first cut
 * at its earliest stop token (languages/evalsets/multipl-e.ini, a section per
 * "language"). Results: <out>/<name>.results.json (.results.json.gz for a .gz
 * input; <out> is --out, else the folder of the completions), the input
 * without completions plus "results": [{program, stdout, stderr, exit_code,
 * status, timestamp}] (main.py); printout: pass_k.py's CSV for the folder,
 * pass@1 at temperature 0.2 (or none), pass@10 and pass@100 at 0.8. */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/strbuf.h"
#include "common/xalloc.h"
#include "judge/grading/evalset.h"
#include "judge/grading/evformat.h"

static bool detect(const cJSON *p, const cJSON *smp)
{
	return !p && smp && evformat_str(smp, "name") && evformat_str(smp, "language") &&
	       evformat_str(smp, "tests") &&
	       cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(smp, "completions"));
}

static int check(const cJSON *p, char *err, size_t errlen)
{
	(void)p;
	snprintf(err, errlen, "MultiPL-E has no problems file: give the completion files");
	return -1;
}

/* multipl_e/completions.py stop_at_stop_token: cut at the earliest stop token. */
static char *cut_at_stop(const char *s, const cJSON *stops)
{
	size_t end = strlen(s);
	const cJSON *t;
	cJSON_ArrayForEach(t, stops)
	{
		if (!cJSON_IsString(t) || !*t->valuestring)
			continue;
		const char *hit = strstr(s, t->valuestring);
		if (hit && (size_t)(hit - s) < end)
			end = (size_t)(hit - s);
	}
	return xstrndup(s, end);
}

static void expand(const struct evalset *s, const cJSON *smp, int index, struct evalset_items *out)
{
	const char *name = evformat_str(smp, "name"), *lang = evformat_str(smp, "language");
	const char *prompt = evformat_str(smp, "prompt"), *tests = evformat_str(smp, "tests");
	const cJSON *comps = cJSON_GetObjectItemCaseSensitive(smp, "completions");
	if (!name || !lang || !prompt || !tests || !cJSON_IsArray(comps)) {
		evformat_item_fail(evformat_item_add(out, index, 0, name),
				   "a MultiPL-E completions file needs name, language, prompt, "
				   "tests and completions");
		return;
	}
	const struct evformat_lang *l = evformat_lang_find(&s->facts, lang);
	int c = 0;
	const cJSON *comp;
	cJSON_ArrayForEach(comp, comps)
	{
		struct evalset_item *it = evformat_item_add(out, index, c++, name);
		if (!l) {
			char why[160];
			snprintf(why, sizeof why,
				 "MultiPL-E language '%.32s' is not one the judge runs", lang);
			evformat_item_fail(it, why);
			continue;
		}
		if (!cJSON_IsString(comp)) {
			evformat_item_fail(it, "a completion is not a string");
			continue;
		}
		char *code = l->trim && !strcmp(l->trim, "stop_tokens")
				 ? cut_at_stop(comp->valuestring,
					       cJSON_GetObjectItemCaseSensitive(smp, "stop_tokens"))
				 : xstrdup(comp->valuestring);
		struct strbuf prog = STRBUF_INIT;
		struct evformat_part parts[] = {
		    {"prompt", prompt}, {"completion", code}, {"tests", tests}};
		char err[200];
		if (evformat_assemble(&prog, l, parts, 3, err, sizeof err) < 0)
			evformat_item_fail(it, err);
		else
			evformat_item_program(s, it, l, prog.buf);
		strbuf_release(&prog);
		free(code);
	}
}

/* containerized_eval's status of an item, and the exit code to report. */
static const char *status_of(const struct evalset_item *it, int *exit_code)
{
	*exit_code = it->exit_code;
	if (it->passed)
		return "OK";
	if (it->status == SUB_TIMEOUT) {
		*exit_code = -1;
		return "Timeout";
	}
	if (it->status == SUB_COMPILE_ERROR || (it->err && strstr(it->err, "SyntaxError"))) {
		*exit_code = *exit_code > 0 ? *exit_code : 1;
		return "SyntaxError"; /* eval_python.py: "SyntaxError" in stderr */
	}
	if (*exit_code == 0) /* failed with exit 0: a stderr text (C#) */
		*exit_code = 1;
	return "Exception";
}

/* One completions file's results: the object without completions, plus
 * results, as main.py writes it (indent 2). */
static int write_one(const struct evformat_output *o, int si, const char *dir, int64_t now,
		     char *err, size_t errlen)
{
	const cJSON *smp = o->samples[si];
	const char *file = o->sample_files ? o->sample_files[si] : "completions.json";
	char *copy = xstrdup(file), *base = basename(copy);
	size_t bl = strlen(base);
	bool gz = bl > 8 && !strcmp(base + bl - 8, ".json.gz");
	if (gz)
		base[bl - 8] = 0;
	else if (bl > 5 && !strcmp(base + bl - 5, ".json"))
		base[bl - 5] = 0;
	char *path = xasprintf("%s/%s%s", dir, base, gz ? ".results.json.gz" : ".results.json");
	cJSON *r = cJSON_Duplicate(smp, 1);
	cJSON_DeleteItemFromObjectCaseSensitive(r, "completions");
	cJSON_DeleteItemFromObjectCaseSensitive(r, "results");
	cJSON *arr = cJSON_AddArrayToObject(r, "results");
	for (int i = 0; i < o->items->n; i++) {
		const struct evalset_item *it = &o->items->v[i];
		if (it->sample != si)
			continue;
		int code;
		const char *st = status_of(it, &code);
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "program", it->req.source ? it->req.source : "");
		cJSON_AddStringToObject(e, "stdout", it->out ? it->out : "");
		cJSON_AddStringToObject(e, "stderr",
					it->err && *it->err ? it->err
					: it->passed	    ? ""
							    : it->result);
		cJSON_AddNumberToObject(e, "exit_code", code);
		cJSON_AddStringToObject(e, "status", st);
		cJSON_AddNumberToObject(e, "timestamp", (double)now);
		cJSON_AddItemToArray(arr, e);
	}
	char *text = cJSON_Print(r);
	int ret = evformat_write_file(path, text, strlen(text), gz, err, errlen);
	free(text);
	cJSON_Delete(r);
	free(path);
	free(copy);
	return ret;
}

static double estimator(int n, int c, int k)
{
	if (n - c < k)
		return 1.0;
	double prod = 1.0;
	for (int i = n - c + 1; i <= n; i++)
		prod *= 1.0 - (double)k / i;
	return 1.0 - prod;
}

static int write_results(const struct evformat_output *o, FILE *f, char *err, size_t errlen)
{
	char *dir;
	if (o->out_path) {
		dir = xstrdup(o->out_path);
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			snprintf(err, errlen, "cannot make folder '%s': %s", dir, strerror(errno));
			free(dir);
			return -1;
		}
	} else {
		struct stat st;
		if (stat(o->samples_path, &st) == 0 && S_ISDIR(st.st_mode)) {
			dir = xstrdup(o->samples_path);
		} else {
			char *c = xstrdup(o->samples_path);
			dir = xstrdup(dirname(c));
			free(c);
		}
	}
	int64_t now = (int64_t)time(NULL);
	int ret = 0;
	for (int si = 0; si < o->nsamples && ret == 0; si++)
		ret = write_one(o, si, dir, now, err, errlen);
	if (ret == 0) {
		/* pass_k.py DIR: the estimator per file (no n >= k guard), the mean */
		double t = -1;
		int np = 0, minc = 0, maxc = 0;
		double s1 = 0, s10 = 0, s100 = 0;
		for (int si = 0; si < o->nsamples; si++) {
			const cJSON *tv =
			    cJSON_GetObjectItemCaseSensitive(o->samples[si], "temperature");
			double temp = cJSON_IsNumber(tv) ? tv->valuedouble : 0.2;
			if (t >= 0 && temp != t) {
				snprintf(err, errlen, "found several temperatures in %s", dir);
				ret = -1;
				break;
			}
			t = temp;
			int n = 0, c = 0;
			for (int i = 0; i < o->items->n; i++)
				if (o->items->v[i].sample == si)
					n++, c += o->items->v[i].passed;
			minc = np == 0 || n < minc ? n : minc;
			maxc = np == 0 || n > maxc ? n : maxc;
			np++;
			s1 += estimator(n, c, 1);
			s10 += estimator(n, c, 10);
			s100 += estimator(n, c, 100);
		}
		char *c = xstrdup(dir);
		char *name = basename(c);
		struct strbuf line = STRBUF_INIT;
		if (ret == 0 && np > 0 && (t == 0.2 || t == 0.8)) {
			fprintf(f, "Dataset,Pass@k,Estimate,NumProblems,MinCompletions,"
				   "MaxCompletions\n");
			const int ks[] = {1, 10, 100};
			const double sums[] = {s1, s10, s100};
			for (int j = t == 0.2 ? 0 : 1; j < (t == 0.2 ? 1 : 3); j++) {
				strbuf_reset(&line);
				evformat_pyfloat(&line, sums[j] / np);
				fprintf(f, "%s,%d,%s,%d,%d,%d\n", name, ks[j], line.buf, np, minc,
					maxc);
			}
		} else if (ret == 0 && np > 0) {
			snprintf(err, errlen,
				 "unexpected temperature %g (pass_k.py takes 0.2 or 0.8)", t);
			ret = -1;
		}
		strbuf_release(&line);
		free(c);
		fprintf(stderr, "judge eval: results in %s\n", dir);
	}
	free(dir);
	return ret;
}

const struct evformat evfmt_multiple = {
    .name = "multipl-e",
    .id_key = NULL,
    .detect = detect,
    .check = check,
    .expand = expand,
    .write = write_results,
    .file_samples = true,
};
