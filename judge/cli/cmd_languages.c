/* cmd_languages: `judge languages` (languages, versions, which backends run
 * them) and `judge selftest` (every configured backend x language must grade a
 * hello world as accepted).
 *
 * Both grade the language's self-test program,
 * <languages_dir>/selftest/<name><ext> (ext taken from source_file), which
 * prints "hello world": compile and run go through grade_request and so through
 * sandbox_run exactly as a submission does.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "judge/cli/cmd.h"
#include "common/clock.h"
#include "common/config.h"
#include "judge/grading/grade.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#define SELFTEST_OUTPUT	   "hello world\n"
#define VERSION_TIMEOUT_MS 15000

static const enum sandbox_backend all_backends[] = {SANDBOX_NATIVE, SANDBOX_GVISOR};
#define BACKEND_COUNT 2

/* The outcome of one language on one backend. */
struct cell {
	bool checked; /* false: backend unavailable or not asked for */
	bool ok;
	char text[64];	   /* short, for the table: "ok 812 ms", "wrong_answer" */
	char detail[1024]; /* why it failed */
};

struct lang_report {
	const struct lang *lang;
	bool version_ok;
	char version[256];
	struct cell cells[BACKEND_COUNT];
};

struct backend_state {
	enum sandbox_backend backend;
	bool wanted;
	bool works;
	char why[256];
};

static const char *json_str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Copies the first line-ish part of s into a detail message, flattened. */
static void add_detail(char *dst, size_t len, const char *label, const char *s)
{
	if (!s || !*s)
		return;
	size_t used = strlen(dst);
	if (used + 1 >= len)
		return;
	int n = snprintf(dst + used, len - used, "%s%s: ", used ? "; " : "", label);
	if (n < 0 || (size_t)n >= len - used)
		return;
	used += (size_t)n;
	for (; *s && used + 1 < len && used < 600; s++)
		dst[used++] = (*s == '\n' || *s == '\r' || *s == '\t') ? ' ' : *s;
	dst[used] = 0;
}

/* Grades the self-test program of l on backend b into c. */
static void check_cell(const struct judge_config *cfg, const struct lang_registry *reg,
		       const struct lang *l, enum sandbox_backend b, struct cell *c)
{
	struct strbuf path = STRBUF_INIT, src = STRBUF_INIT;
	struct grade_request req;
	struct grade_result gr;
	cJSON *res = NULL;
	model_request_init(&req);
	model_result_init(&gr);
	c->checked = true;
	const char *ext = strrchr(l->source_file, '.');
	strbuf_addf(&path, "%s/selftest/%s%s", cfg->languages_dir, l->name, ext ? ext : "");
	int rc = strbuf_read_file(&src, path.buf, 1 << 20);
	if (rc < 0) {
		snprintf(c->text, sizeof c->text, "no test program");
		snprintf(c->detail, sizeof c->detail, "cannot read '%s': %s", path.buf,
			 strerror(-rc));
		goto out;
	}
	model_set(&req.language, l->name, strlen(l->name));
	model_set(&req.source, src.buf, src.len);
	model_set(&req.expected, SELFTEST_OUTPUT, strlen(SELFTEST_OUTPUT));
	struct grade_env env = {.cfg = cfg, .langs = reg, .backend = b, .slot = 0};
	int64_t t0 = clock_mono_ms();
	req.source_len = src.len;
	req.expected_len = strlen(SELFTEST_OUTPUT);
	grade_request(&env, &req, &gr);
	long ms = (long)(clock_mono_ms() - t0);
	res = model_result_render(&gr);
	const char *status = json_str(res, "status");
	if (status && !strcmp(status, "accepted")) {
		c->ok = true;
		snprintf(c->text, sizeof c->text, "ok %ld ms", ms);
		goto out;
	}
	snprintf(c->text, sizeof c->text, "FAIL %s", status ? status : "no status");
	const cJSON *comp = cJSON_GetObjectItemCaseSensitive(res, "compile");
	add_detail(c->detail, sizeof c->detail, "message", json_str(res, "message"));
	if (status && !strcmp(status, "compile_error"))
		add_detail(c->detail, sizeof c->detail, "compiler", json_str(comp, "output"));
	add_detail(c->detail, sizeof c->detail, "stdout", json_str(res, "stdout"));
	add_detail(c->detail, sizeof c->detail, "stderr", json_str(res, "stderr"));
out:
	model_request_release(&req);
	model_result_release(&gr);
	cJSON_Delete(res);
	strbuf_release(&path);
	strbuf_release(&src);
}

static int parse_backends(const char *s, struct backend_state *bs, const char *cmd)
{
	enum sandbox_backend b;
	if (!strcmp(s, "all")) {
		for (int i = 0; i < BACKEND_COUNT; i++)
			bs[i].wanted = true;
		return 0;
	}
	if (!strcmp(s, "auto") || sandbox_backend_parse(s, &b) < 0) {
		fprintf(stderr, "judge %s: --sandbox takes native, gvisor or all, got '%s'\n", cmd,
			s);
		return -1;
	}
	for (int i = 0; i < BACKEND_COUNT; i++)
		bs[i].wanted = bs[i].backend == b;
	return 0;
}

/* The shared work of both commands: versions, then every wanted backend x
 * language. Returns the number of failed checks, or -1 when nothing could run.
 */
static int survey(const struct judge_config *cfg, const struct lang_registry *reg,
		  struct backend_state *bs, struct lang_report *reps, bool run_checks)
{
	char err[512];
	int failures = 0;
	for (int i = 0; i < reg->count; i++) {
		reps[i].lang = &reg->langs[i];
		reps[i].version_ok =
		    lang_probe_version(&reg->langs[i], reps[i].version, sizeof reps[i].version,
				       VERSION_TIMEOUT_MS) == 0;
		if (!reps[i].version_ok)
			failures++;
	}
	if (!run_checks)
		return failures;
	struct sandbox_options sbopts;
	if (limits_sandbox_options(cfg, &sbopts, err, sizeof err) < 0 ||
	    sandbox_global_init(&sbopts, err, sizeof err) < 0) {
		fprintf(stderr, "judge: sandbox: %s\n", err);
		return -1;
	}
	/* after global init: the backends report what it found */
	for (int j = 0; j < BACKEND_COUNT; j++)
		if (bs[j].wanted)
			bs[j].works =
			    sandbox_backend_works(bs[j].backend, bs[j].why, sizeof bs[j].why);
	for (int j = 0; j < BACKEND_COUNT; j++) {
		if (!bs[j].wanted || !bs[j].works)
			continue;
		for (int i = 0; i < reg->count; i++) {
			struct cell *c = &reps[i].cells[j];
			check_cell(cfg, reg, reps[i].lang, bs[j].backend, c);
			if (!c->ok)
				failures++;
		}
	}
	sandbox_global_shutdown();
	return failures;
}

/* Writes line without its trailing blanks, then empties it. */
static void put_line(FILE *out, struct strbuf *line)
{
	while (line->len && line->buf[line->len - 1] == ' ')
		line->buf[--line->len] = 0;
	fprintf(out, "%s\n", line->buf);
	strbuf_reset(line);
}

static void print_table(FILE *out, const struct lang_registry *reg, const struct lang_report *reps,
			const struct backend_state *bs, bool run_checks)
{
	struct strbuf line = STRBUF_INIT;
	strbuf_addf(&line, "%-8s %-24s %-44s", "LANGUAGE", "NAME", "VERSION");
	if (run_checks)
		for (int j = 0; j < BACKEND_COUNT; j++)
			if (bs[j].wanted)
				strbuf_addf(&line, " %-16s", sandbox_backend_name(bs[j].backend));
	put_line(out, &line);
	for (int i = 0; i < reg->count; i++) {
		const struct lang_report *r = &reps[i];
		strbuf_addf(&line, "%-8s %-24s %-*.*s", r->lang->name, r->lang->display_name,
			    r->version_ok ? 44 : 37, r->version_ok ? 44 : 37, r->version);
		if (!r->version_ok)
			strbuf_addstr(&line, " (FAIL)");
		if (run_checks)
			for (int j = 0; j < BACKEND_COUNT; j++)
				if (bs[j].wanted)
					strbuf_addf(&line, " %-16s",
						    !bs[j].works	  ? "unavailable"
						    : r->cells[j].checked ? r->cells[j].text
									  : "-");
		put_line(out, &line);
	}
	strbuf_release(&line);
	if (!run_checks)
		return;
	for (int j = 0; j < BACKEND_COUNT; j++)
		if (bs[j].wanted && !bs[j].works)
			fprintf(out, "%s unavailable: %s\n", sandbox_backend_name(bs[j].backend),
				bs[j].why);
	for (int i = 0; i < reg->count; i++) {
		if (!reps[i].version_ok)
			fprintf(out, "%s version: %s\n", reps[i].lang->name, reps[i].version);
		for (int j = 0; j < BACKEND_COUNT; j++)
			if (reps[i].cells[j].checked && !reps[i].cells[j].ok)
				fprintf(out, "%s on %s: %s%s%s\n", reps[i].lang->name,
					sandbox_backend_name(bs[j].backend), reps[i].cells[j].text,
					reps[i].cells[j].detail[0] ? ": " : "",
					reps[i].cells[j].detail);
	}
}

/* The report as pretty JSON text (free with cJSON_free). */
static char *report_json(const struct lang_registry *reg, const struct lang_report *reps,
			 const struct backend_state *bs, bool run_checks)
{
	cJSON *arr = cJSON_CreateArray();
	for (int i = 0; i < reg->count; i++) {
		const struct lang_report *r = &reps[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, o);
		cJSON_AddStringToObject(o, "name", r->lang->name);
		cJSON_AddStringToObject(o, "display_name", r->lang->display_name);
		if (r->version_ok)
			cJSON_AddStringToObject(o, "version", r->version);
		else
			cJSON_AddNullToObject(o, "version");
		cJSON_AddStringToObject(o, "source_file", r->lang->source_file);
		cJSON_AddBoolToObject(o, "compiled", r->lang->compile_argv != NULL);
		if (!run_checks)
			continue;
		cJSON *be = cJSON_AddObjectToObject(o, "backends");
		for (int j = 0; j < BACKEND_COUNT; j++) {
			if (!bs[j].wanted)
				continue;
			const struct cell *c = &r->cells[j];
			cJSON *b = cJSON_AddObjectToObject(be, sandbox_backend_name(bs[j].backend));
			cJSON_AddBoolToObject(b, "works", bs[j].works && c->ok);
			if (!bs[j].works)
				cJSON_AddStringToObject(b, "error", bs[j].why);
			else if (!c->ok)
				cJSON_AddStringToObject(b, "error",
							c->detail[0] ? c->detail : c->text);
		}
	}
	char *text = cJSON_Print(arr);
	cJSON_Delete(arr);
	return text;
}

/* The common command body; selftest decides the exit code by failures. */
static int languages_main(int argc, char **argv, struct judge_config *cfg, bool selftest)
{
	const char *cmd = selftest ? "selftest" : "languages";
	bool json = false, run_checks = true;
	const char *sandbox_opt = NULL;
	static const struct option opts[] = {
	    {"json", no_argument, 0, 'j'},
	    {"quick", no_argument, 0, 'q'},
	    {"sandbox", required_argument, 0, 's'},
	    {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0},
	};
	optind = 1;
	int o;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'j':
			json = true;
			break;
		case 'q':
			if (selftest)
				goto usage;
			run_checks = false;
			break;
		case 's':
			sandbox_opt = optarg;
			break;
		case 'h':
			printf("usage: judge %s [--sandbox native|gvisor|all] [--json]%s\n", cmd,
			       selftest ? "" : " [--quick]");
			puts(selftest
				 ? "Grades a hello world in every language on every configured "
				   "backend;\nprints a table and exits 1 if any check fails."
				 : "Lists the languages with their detected versions and whether "
				   "each backend\nruns them (--quick: versions only).");
			return 0;
		default:
			goto usage;
		}
	}
	if (optind < argc)
		goto usage;

	struct backend_state bs[BACKEND_COUNT];
	for (int j = 0; j < BACKEND_COUNT; j++)
		bs[j] = (struct backend_state){.backend = all_backends[j]};
	/* configured backends: the one judge.ini names, or with auto both (auto
	 * uses gvisor where it works and native otherwise, so both can serve) */
	if (parse_backends(sandbox_opt			   ? sandbox_opt
			   : !strcmp(cfg->sandbox, "auto") ? "all"
							   : cfg->sandbox,
			   bs, cmd) < 0)
		return 2;

	struct lang_registry reg;
	char err[512];
	if (lang_load_dir(&reg, cfg->languages_dir, err, sizeof err) < 0) {
		fprintf(stderr, "judge %s: %s\n", cmd, err);
		return 1;
	}
	struct lang_report *reps = xcalloc((size_t)reg.count, sizeof *reps);
	int failures = survey(cfg, &reg, bs, reps, run_checks);
	/* under auto, a gvisor that cannot run here is no failure: native serves */
	bool auto_mode = !sandbox_opt && !strcmp(cfg->sandbox, "auto");
	for (int j = 0; j < BACKEND_COUNT; j++)
		if (run_checks && bs[j].wanted && !bs[j].works &&
		    !(auto_mode && bs[j].backend == SANDBOX_GVISOR))
			failures++;
	if (failures >= 0) {
		if (json) {
			char *text = report_json(&reg, reps, bs, run_checks);
			puts(text);
			cJSON_free(text);
		} else {
			print_table(stdout, &reg, reps, bs, run_checks);
			if (selftest)
				printf("selftest: %s (%d failed)\n", failures ? "FAIL" : "ok",
				       failures);
		}
	}
	free(reps);
	lang_registry_release(&reg);
	if (failures < 0)
		return 1;
	return selftest && failures ? 1 : 0;
usage:
	fprintf(stderr, "usage: judge %s [--sandbox native|gvisor|all] [--json]%s\n", cmd,
		selftest ? "" : " [--quick]");
	return 2;
}

int cmd_languages(int argc, char **argv, struct judge_config *cfg)
{
	return languages_main(argc, argv, cfg, false);
}

int cmd_selftest(int argc, char **argv, struct judge_config *cfg)
{
	return languages_main(argc, argv, cfg, true);
}
