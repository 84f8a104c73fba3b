/* cmd_run: `judge run` grades one program from the command line and prints the result JSON. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "judge/cli/cmd.h"
#include "judge/grading/compare.h"
#include "common/config.h"
#include "judge/grading/grade.h"
#include "judge/grading/lang.h"
#include "judge/grading/problem.h"
#include "judge/grading/testdir.h"
#include "judge/grading/limits.h"

/* Inputs read from files are capped so a wrong path cannot eat the machine. */
#define RUN_FILE_MAX ((size_t)1 << 30)

static const char usage_text[] =
    "usage: judge run [--lang L] [options] SOURCE [MORE_FILES...]\n"
    "  --lang L             language (see 'judge languages'); default: the one\n"
    "                       whose files end like SOURCE (.py, .js, .cs, .c, .cpp ...)\n"
    "  --stdin FILE         feed FILE as standard input\n"
    "  --expected FILE      compare stdout with FILE (verdict instead of 'completed')\n"
    "  --tests DIR          run every NAME.in of DIR, comparing with NAME.ans\n"
    "  --problem DIR        grade against an ICPC problem package (its tests, limits,\n"
    "                       comparison and output validator)\n"
    "  --compare MODE       exact, lines (default), tokens, unordered, regex\n"
    "  --compare-args ARGS  comparison flags, e.g. 'float_tolerance 1e-6 case_sensitive'\n"
    "  --all-tests          run every test even after one fails\n"
    "  --time-limit MS      CPU time limit\n"
    "  --wall-limit MS      wall time limit\n"
    "  --memory-limit MB    memory limit\n"
    "  --output-limit KB    stdout limit\n"
    "  --processes N        process and thread limit\n"
    "  --sandbox B          gvisor, native or auto (default: judge.ini's sandbox)\n"
    "Prints the result JSON; exits 0 whenever a result was produced, 2 on usage errors.\n";

static int usage_error(const char *msg)
{
	fprintf(stderr, "judge run: %s\n%s", msg, usage_text);
	return 2;
}

static int parse_limit(const char *opt, const char *s, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > max) {
		fprintf(stderr, "judge run: %s needs a whole number from 1 to %ld, got '%s'\n", opt,
			max, s);
		return -1;
	}
	*out = v;
	return 0;
}

static int read_into(const char *path, const char *what, struct strbuf *sb)
{
	int rc = strbuf_read_file(sb, path, RUN_FILE_MAX);
	if (rc < 0) {
		fprintf(stderr, "judge run: cannot read %s '%s': %s\n", what, path,
			rc == -EFBIG ? "file too large" : strerror(-rc));
		return -1;
	}
	return 0;
}

/* Splits "a b  c" into a JSON compare object through cmp_parse_flags, so the CLI
 * and problem packages accept the same flag words. */
static cJSON *compare_json(const char *mode, const char *args)
{
	struct cmp_opts o;
	enum cmp_mode m = CMP_LINES;
	if (mode && cmp_mode_parse(mode, &m) < 0) {
		fprintf(stderr, "judge run: unknown compare mode '%s'\n", mode);
		return NULL;
	}
	cmp_opts_init(&o, m);
	if (args) {
		char *copy = strdup(args), *save = NULL;
		const char *words[64];
		int n = 0;
		for (char *w = strtok_r(copy, " \t", &save); w && n < 64;
		     w = strtok_r(NULL, " \t", &save))
			words[n++] = w;
		char err[256];
		int rc = cmp_parse_flags(&o, n, words, err, sizeof err);
		free(copy);
		if (rc < 0) {
			fprintf(stderr, "judge run: --compare-args: %s\n", err);
			return NULL;
		}
	}
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "mode", cmp_mode_name(o.mode));
	cJSON_AddBoolToObject(c, "case_sensitive", o.case_sensitive);
	cJSON_AddBoolToObject(c, "space_change_sensitive", o.space_change_sensitive);
	cJSON_AddBoolToObject(c, "unordered_tokens", o.unordered_tokens);
	if (o.float_abs_tol >= 0)
		cJSON_AddNumberToObject(c, "float_absolute_tolerance", o.float_abs_tol);
	if (o.float_rel_tol >= 0)
		cJSON_AddNumberToObject(c, "float_relative_tolerance", o.float_rel_tol);
	return c;
}

/* MORE_FILES go into the box beside the source, by base name (headers, more
 * modules); those that are sources of the language are compiled with it. */
static int add_more_files(cJSON *req, int n, char **paths)
{
	cJSON *files = cJSON_AddArrayToObject(req, "files");
	for (int i = 0; i < n; i++) {
		struct strbuf content = STRBUF_INIT;
		if (read_into(paths[i], "file", &content) < 0)
			return -1;
		if (strlen(content.buf) != content.len) {
			fprintf(stderr, "judge run: file '%s' contains NUL bytes\n", paths[i]);
			strbuf_release(&content);
			return -1;
		}
		char *copy = strdup(paths[i]);
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "name", basename(copy));
		cJSON_AddStringToObject(f, "content", content.buf);
		cJSON_AddItemToArray(files, f);
		free(copy);
		strbuf_release(&content);
	}
	return 0;
}

/* The one language whose source files end like file's name, or NULL. */
static const struct lang *lang_of_file(const struct lang_registry *langs, const char *file)
{
	const struct lang *found = NULL;
	for (int i = 0; i < langs->count; i++) {
		if (!prob_is_source_for(&langs->langs[i], file))
			continue;
		if (found)
			return NULL;
		found = &langs->langs[i];
	}
	return found;
}

int cmd_run(int argc, char **argv, struct judge_config *cfg)
{
	enum {
		OPT_LANG = 1,
		OPT_STDIN,
		OPT_EXPECTED,
		OPT_TESTS,
		OPT_PROBLEM,
		OPT_COMPARE,
		OPT_COMPARE_ARGS,
		OPT_ALL,
		OPT_TIME,
		OPT_WALL,
		OPT_MEMORY,
		OPT_OUTPUT,
		OPT_PROCS,
		OPT_SANDBOX,
		OPT_HELP,
	};
	static const struct option opts[] = {
	    {"lang", required_argument, 0, OPT_LANG},
	    {"stdin", required_argument, 0, OPT_STDIN},
	    {"expected", required_argument, 0, OPT_EXPECTED},
	    {"tests", required_argument, 0, OPT_TESTS},
	    {"problem", required_argument, 0, OPT_PROBLEM},
	    {"compare", required_argument, 0, OPT_COMPARE},
	    {"compare-args", required_argument, 0, OPT_COMPARE_ARGS},
	    {"all-tests", no_argument, 0, OPT_ALL},
	    {"time-limit", required_argument, 0, OPT_TIME},
	    {"wall-limit", required_argument, 0, OPT_WALL},
	    {"memory-limit", required_argument, 0, OPT_MEMORY},
	    {"output-limit", required_argument, 0, OPT_OUTPUT},
	    {"processes", required_argument, 0, OPT_PROCS},
	    {"sandbox", required_argument, 0, OPT_SANDBOX},
	    {"help", no_argument, 0, OPT_HELP},
	    {0, 0, 0, 0},
	};
	const char *lang_name = NULL, *stdin_file = NULL, *expected_file = NULL, *tests_dir = NULL;
	const char *problem_dir = NULL;
	const char *compare_mode = NULL, *compare_args = NULL, *sandbox_name = cfg->sandbox;
	long time_ms = 0, wall_ms = 0, memory_mb = 0, output_kb = 0, processes = 0;
	bool all_tests = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case OPT_LANG:
			lang_name = optarg;
			break;
		case OPT_STDIN:
			stdin_file = optarg;
			break;
		case OPT_EXPECTED:
			expected_file = optarg;
			break;
		case OPT_TESTS:
			tests_dir = optarg;
			break;
		case OPT_PROBLEM:
			problem_dir = optarg;
			break;
		case OPT_COMPARE:
			compare_mode = optarg;
			break;
		case OPT_COMPARE_ARGS:
			compare_args = optarg;
			break;
		case OPT_ALL:
			all_tests = true;
			break;
		case OPT_TIME:
			if (parse_limit("--time-limit", optarg, cfg->max_time_limit_ms, &time_ms))
				return 2;
			break;
		case OPT_WALL:
			if (parse_limit("--wall-limit", optarg, cfg->max_time_limit_ms * 10,
					&wall_ms))
				return 2;
			break;
		case OPT_MEMORY:
			if (parse_limit("--memory-limit", optarg, cfg->max_memory_limit_mb,
					&memory_mb))
				return 2;
			break;
		case OPT_OUTPUT:
			if (parse_limit("--output-limit", optarg, cfg->max_output_limit_kb,
					&output_kb))
				return 2;
			break;
		case OPT_PROCS:
			if (parse_limit("--processes", optarg, cfg->max_processes, &processes))
				return 2;
			break;
		case OPT_SANDBOX:
			sandbox_name = optarg;
			break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			return 0;
		default: {
			char msg[300];
			snprintf(msg, sizeof msg, "unknown or incomplete option '%s'",
				 argv[optind - 1]);
			return usage_error(msg);
		}
		}
	}
	if (optind >= argc)
		return usage_error("no SOURCE file given");
	if (tests_dir && (stdin_file || expected_file))
		return usage_error("--tests cannot go with --stdin or --expected");
	if (problem_dir &&
	    (tests_dir || stdin_file || expected_file || compare_mode || compare_args))
		return usage_error("--problem brings its own tests and comparison: it cannot go "
				   "with --tests, --stdin, --expected or --compare");

	int ret = 2;
	struct lang_registry langs = {0};
	struct strbuf source = STRBUF_INIT, in = STRBUF_INIT, exp = STRBUF_INIT;
	struct testdir td = {0};
	struct problem pb = {0};
	bool have_problem = false;
	cJSON *req = NULL, *result = NULL;
	char err[512];
	enum sandbox_backend backend;

	if (sandbox_backend_parse(sandbox_name, &backend) < 0) {
		fprintf(stderr, "judge run: unknown sandbox '%s' (gvisor, native or auto)\n",
			sandbox_name);
		goto out;
	}
	if (lang_load_dir(&langs, cfg->languages_dir, err, sizeof err) < 0) {
		fprintf(stderr, "judge run: %s\n", err);
		goto out;
	}
	const struct lang *lang =
	    lang_name ? lang_find(&langs, lang_name) : lang_of_file(&langs, argv[optind]);
	if (!lang && !lang_name) {
		fprintf(stderr,
			"judge run: cannot tell the language of '%s' from its name; give --lang "
			"(known:",
			argv[optind]);
		for (int i = 0; i < langs.count; i++)
			fprintf(stderr, " %s", langs.langs[i].name);
		fputs(")\n", stderr);
		goto out;
	}
	if (!lang) {
		fprintf(stderr, "judge run: unknown language '%s'; known:", lang_name);
		for (int i = 0; i < langs.count; i++)
			fprintf(stderr, " %s", langs.langs[i].name);
		fputs("\n", stderr);
		goto out;
	}
	if (read_into(argv[optind], "source", &source) < 0)
		goto out;
	if (stdin_file && read_into(stdin_file, "stdin", &in) < 0)
		goto out;
	if (expected_file && read_into(expected_file, "expected output", &exp) < 0)
		goto out;
	if (tests_dir && testdir_load(&td, tests_dir, err, sizeof err) < 0) {
		fprintf(stderr, "judge run: %s\n", err);
		goto out;
	}

	if (problem_dir) {
		if (prob_load(&pb, problem_dir, err, sizeof err) < 0) {
			fprintf(stderr, "judge run: %s\n", err);
			goto out;
		}
		have_problem = true;
		if (pb.unsupported) {
			fprintf(stderr, "judge run: problem '%s': %s\n", pb.id, pb.unsupported);
			goto out;
		}
	}

	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "language", lang->name);
	/* cJSON strings end at NUL: a source with NUL bytes is not a program */
	if (strlen(source.buf) != source.len) {
		fprintf(stderr, "judge run: source '%s' contains NUL bytes\n", argv[optind]);
		goto out;
	}
	cJSON_AddStringToObject(req, "source", source.buf);
	if (optind + 1 < argc && add_more_files(req, argc - optind - 1, argv + optind + 1) < 0)
		goto out;
	if (stdin_file)
		cJSON_AddStringToObject(req, "stdin", in.buf);
	if (expected_file)
		cJSON_AddStringToObject(req, "expected_output", exp.buf);
	if (tests_dir) {
		cJSON *tests = cJSON_AddArrayToObject(req, "tests");
		for (int i = 0; i < td.count; i++) {
			cJSON *t = cJSON_CreateObject();
			cJSON_AddStringToObject(t, "name", td.tests[i].name);
			cJSON_AddStringToObject(t, "stdin", td.tests[i].input.buf);
			if (td.tests[i].has_answer)
				cJSON_AddStringToObject(t, "expected_output",
							td.tests[i].answer.buf);
			cJSON_AddItemToArray(tests, t);
		}
	}
	if (have_problem)
		cJSON_AddStringToObject(req, "problem", pb.id);
	if (compare_mode || compare_args) {
		cJSON *cj = compare_json(compare_mode, compare_args);
		if (!cj)
			goto out;
		cJSON_AddItemToObject(req, "compare", cj);
	}
	if (all_tests)
		cJSON_AddTrueToObject(req, "run_all_tests");
	cJSON *lim = cJSON_AddObjectToObject(req, "limits");
	if (time_ms)
		cJSON_AddNumberToObject(lim, "time_ms", time_ms);
	if (wall_ms)
		cJSON_AddNumberToObject(lim, "wall_ms", wall_ms);
	if (memory_mb)
		cJSON_AddNumberToObject(lim, "memory_mb", memory_mb);
	if (output_kb)
		cJSON_AddNumberToObject(lim, "output_kb", output_kb);
	if (processes)
		cJSON_AddNumberToObject(lim, "processes", processes);

	struct sandbox_options sbopts;
	if (limits_sandbox_options(cfg, &sbopts, err, sizeof err) < 0 ||
	    sandbox_global_init(&sbopts, err, sizeof err) < 0) {
		fprintf(stderr, "judge run: sandbox: %s\n", err);
		ret = 1;
		goto out;
	}
	struct grade_env env = {.cfg = cfg,
				.langs = &langs,
				.backend = backend,
				.slot = 0,
				.problem = have_problem ? &pb : NULL};
	result = grade_request(&env, req);
	sandbox_global_shutdown();
	char *text = cJSON_Print(result);
	if (!text) {
		fputs("judge run: out of memory printing the result\n", stderr);
		ret = 1;
		goto out;
	}
	puts(text);
	free(text);
	ret = 0;
out:
	cJSON_Delete(req);
	cJSON_Delete(result);
	testdir_release(&td);
	if (have_problem)
		prob_release(&pb);
	strbuf_release(&source);
	strbuf_release(&in);
	strbuf_release(&exp);
	lang_registry_release(&langs);
	return ret;
}
