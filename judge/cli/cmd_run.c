/* cmd_run: `judge run` grades one program from the command line and prints the result JSON. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "judge/cli/cmd.h"
#include "judge/grading/compare.h"
#include "common/config.h"
#include "judge/grading/grade.h"
#include "judge/grading/compile.h"
#include "judge/grading/lang.h"
#include "judge/grading/problem.h"
#include "judge/grading/request_func.h"
#include "judge/grading/testdir.h"
#include "judge/grading/limits.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"

/* Inputs read from files are capped so a wrong path cannot eat the machine. */
#define RUN_FILE_MAX ((size_t)1 << 30)

static const char usage_text[] =
    "usage: judge run [--lang L] [options] SOURCE [MORE_FILES...]\n"
    "  --lang L             language (see 'judge languages'); default: the one\n"
    "                       whose files end like SOURCE (its extensions key)\n"
    "  --stdin FILE         feed FILE as standard input\n"
    "  --expected FILE      compare stdout with FILE (verdict instead of 'completed')\n"
    "  --tests DIR          run every NAME.in of DIR, comparing with NAME.ans\n"
    "  --problem DIR|ID     grade against an ICPC problem package (its tests, limits,\n"
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
    "  --function NAME      a function problem: call NAME (free-standing or a method\n"
    "                       of Solution) with each test of --func-tests\n"
    "  --func-tests FILE    JSON: [{\"args\": [...], \"expected\": v}, ...], or\n"
    "                       {\"tests\": [...], \"signature\": {...}}; or a problem\n"
    "                       folder with function.json (its samples, tests, compare)\n"
    "  --test-code FILE     a test-code problem (HumanEval): SOURCE + FILE + check(ENTRY)\n"
    "  --entry-point NAME   the function the test code's check() gets\n"
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

/* Splits "a b  c" into compare options through compare_parse_flags, so the CLI
 * and problem packages accept the same flag words. Returns 0 or -1 (reported). */
static int parse_compare(const char *mode, const char *args, struct compare_options *o)
{
	enum compare_mode m = CMP_LINES;
	if (mode && compare_mode_parse(mode, &m) < 0) {
		fprintf(stderr, "judge run: unknown compare mode '%s'\n", mode);
		return -1;
	}
	compare_options_init(o, m);
	if (!args)
		return 0;
	char *copy = xstrdup(args), *save = NULL;
	const char *words[64];
	int n = 0;
	for (char *w = strtok_r(copy, " \t", &save); w && n < 64; w = strtok_r(NULL, " \t", &save))
		words[n++] = w;
	char err[256];
	int rc = compare_parse_flags(o, n, words, err, sizeof err);
	free(copy);
	if (rc < 0)
		fprintf(stderr, "judge run: --compare-args: %s\n", err);
	return rc;
}

/* MORE_FILES go into the box beside the source, by base name (headers, more
 * modules); those that are sources of the language are compiled with it. */
static int add_more_files(struct grade_request *req, int n, char **paths)
{
	for (int i = 0; i < n; i++) {
		struct strbuf content = STRBUF_INIT;
		char *copy = NULL;
		int rc = read_into(paths[i], "file", &content);
		/* as always: a file is text, and NUL would end it early */
		if (rc == 0 && strlen(content.buf) != content.len) {
			fprintf(stderr, "judge run: file '%s' contains NUL bytes\n", paths[i]);
			rc = -1;
		}
		if (rc == 0) {
			copy = xstrdup(paths[i]);
			model_request_add_file(req, basename(copy), content.buf, content.len);
		}
		free(copy);
		strbuf_release(&content);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The one language whose source files end like file's name, or NULL. */
static const struct lang *lang_of_file(const struct lang_registry *langs, const char *file)
{
	const struct lang *found = NULL;
	for (int i = 0; i < langs->count; i++) {
		if (!compile_is_source(&langs->langs[i], file))
			continue;
		if (found)
			return NULL;
		found = &langs->langs[i];
	}
	return found;
}

/* What the command line asks for. */
struct run_args {
	const char *lang_name, *stdin_file, *expected_file, *tests_dir, *problem_dir;
	const char *compare_mode, *compare_args, *sandbox_name;
	const char *function, *func_tests, *test_code, *entry_point;
	struct limits_request limits; /* 0 = not given */
	bool all_tests;
};

/* Reads the options into a. Returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, const struct judge_config *cfg, struct run_args *a)
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
		OPT_FUNCTION,
		OPT_FUNC_TESTS,
		OPT_TEST_CODE,
		OPT_ENTRY,
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
	    {"function", required_argument, 0, OPT_FUNCTION},
	    {"func-tests", required_argument, 0, OPT_FUNC_TESTS},
	    {"test-code", required_argument, 0, OPT_TEST_CODE},
	    {"entry-point", required_argument, 0, OPT_ENTRY},
	    {"help", no_argument, 0, OPT_HELP},
	    {0, 0, 0, 0},
	};
	memset(a, 0, sizeof *a);
	a->sandbox_name = cfg->sandbox;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case OPT_LANG:
			a->lang_name = optarg;
			break;
		case OPT_STDIN:
			a->stdin_file = optarg;
			break;
		case OPT_EXPECTED:
			a->expected_file = optarg;
			break;
		case OPT_TESTS:
			a->tests_dir = optarg;
			break;
		case OPT_PROBLEM:
			a->problem_dir = optarg;
			break;
		case OPT_COMPARE:
			a->compare_mode = optarg;
			break;
		case OPT_COMPARE_ARGS:
			a->compare_args = optarg;
			break;
		case OPT_ALL:
			a->all_tests = true;
			break;
		case OPT_TIME:
			if (parse_limit("--time-limit", optarg, cfg->max_time_limit_ms,
					&a->limits.time_ms))
				return 2;
			break;
		case OPT_WALL:
			if (parse_limit("--wall-limit", optarg, cfg->max_time_limit_ms * 10,
					&a->limits.wall_ms))
				return 2;
			break;
		case OPT_MEMORY:
			if (parse_limit("--memory-limit", optarg, cfg->max_memory_limit_mb,
					&a->limits.memory_mb))
				return 2;
			break;
		case OPT_OUTPUT:
			if (parse_limit("--output-limit", optarg, cfg->max_output_limit_kb,
					&a->limits.output_kb))
				return 2;
			break;
		case OPT_PROCS:
			if (parse_limit("--processes", optarg, cfg->max_processes,
					&a->limits.processes))
				return 2;
			break;
		case OPT_SANDBOX:
			a->sandbox_name = optarg;
			break;
		case OPT_FUNCTION:
			a->function = optarg;
			break;
		case OPT_FUNC_TESTS:
			a->func_tests = optarg;
			break;
		case OPT_TEST_CODE:
			a->test_code = optarg;
			break;
		case OPT_ENTRY:
			a->entry_point = optarg;
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
	return -1;
}

/* The request of the command line: paths[0] is the source (read into source),
 * the other npaths - 1 paths more files; in and exp hold --stdin and --expected,
 * td the --tests folder (or NULL), pb the --problem package (or NULL). Returns
 * 0, or -1 (reported). */
static int fill_request(struct grade_request *req, const struct run_args *a,
			const struct lang *lang, const struct strbuf *source,
			const struct strbuf *in, const struct strbuf *exp, const struct testdir *td,
			const struct problem *pb, int npaths, char **paths)
{
	model_set(&req->language, lang->name, strlen(lang->name));
	/* the source goes in byte for byte, NUL bytes included (model_set would stop
	 * at one): grading makes a source that is not text a compile_error */
	free(req->source);
	req->source = xmalloc(source->len + 1);
	memcpy(req->source, source->buf, source->len + 1);
	/* stdin and expected output end at a NUL byte, as they always did */
	if (a->stdin_file)
		model_set(&req->stdin_data, in->buf, strlen(in->buf));
	if (a->expected_file)
		model_set(&req->expected, exp->buf, strlen(exp->buf));
	if (pb)
		model_set(&req->problem, pb->id, strlen(pb->id));
	req->source_len = source->len;
	req->stdin_len = req->stdin_data ? strlen(req->stdin_data) : 0;
	req->expected_len = req->expected ? strlen(req->expected) : 0;
	if (npaths > 1 && add_more_files(req, npaths - 1, paths + 1) < 0)
		return -1;
	for (int i = 0; td && i < td->count; i++) {
		const struct strbuf *tin = &td->tests[i].input, *tans = &td->tests[i].answer;
		const char *ans = td->tests[i].has_answer ? tans->buf : NULL;
		model_request_add_test(req, td->tests[i].name, tin->buf, strlen(tin->buf), ans,
				       ans ? strlen(ans) : 0);
	}
	req->has_compare = a->compare_mode || a->compare_args;
	if (req->has_compare && parse_compare(a->compare_mode, a->compare_args, &req->cmp) < 0)
		return -1;
	req->run_all_tests = a->all_tests;
	req->has_limits = true;
	req->limits = a->limits;
	return 0;
}

/* --func-tests DIR: a package's function form (DIR/function.json: samples,
 * secret tests, compare, limits; problems/README.md). Returns 0 or -1. */
static int fill_package(struct grade_request *req, const struct run_args *a)
{
	char err[512], *d = xstrdup(a->func_tests), *b = xstrdup(a->func_tests);
	int rc = request_func_package(dirname(d), basename(b), req, err, sizeof err);
	if (rc < 0)
		fprintf(stderr, "judge run: %s\n", err);
	else if (strcmp(req->func->name, a->function)) {
		fprintf(stderr, "judge run: the package's function is '%s', not '%s'\n",
			req->func->name, a->function);
		rc = -1;
	}
	free(d);
	free(b);
	return rc < 0 ? -1 : 0;
}

/* --function with --func-tests, or --test-code with --entry-point, into req.
 * Returns 0, or -1 (reported). */
static int fill_function(struct grade_request *req, const struct run_args *a)
{
	struct strbuf text = STRBUF_INIT;
	cJSON *j = NULL;
	int ret = -1;
	if (a->test_code) {
		if (read_into(a->test_code, "test code", &text) < 0)
			goto out;
		model_set(&req->test_code, text.buf, strlen(text.buf));
		if (a->entry_point)
			model_set(&req->entry_point, a->entry_point, strlen(a->entry_point));
		ret = 0;
		goto out;
	}
	struct stat st;
	if (stat(a->func_tests, &st) == 0 && S_ISDIR(st.st_mode)) {
		ret = fill_package(req, a);
		goto out;
	}
	if (read_into(a->func_tests, "function tests", &text) < 0)
		goto out;
	j = cJSON_Parse(text.buf);
	const cJSON *tests = cJSON_IsArray(j) ? j : cJSON_GetObjectItemCaseSensitive(j, "tests");
	if (!cJSON_IsArray(tests)) {
		fprintf(stderr, "judge run: %s: not JSON with a tests array\n", a->func_tests);
		goto out;
	}
	const cJSON *sig = cJSON_GetObjectItemCaseSensitive(j, "signature");
	model_request_set_function(req, a->function, cJSON_IsObject(sig) ? sig : NULL, tests);
	ret = 0;
out:
	cJSON_Delete(j);
	strbuf_release(&text);
	return ret;
}

/* gVisor's teardown (`runsc delete` of the sandbox and its files: 20-40 ms)
 * must not hold up the caller, and must still leave nothing behind. So the
 * job runs in a child: the parent (the process the caller waits for) exits
 * with the child's code as soon as the child has printed the result
 * (result_out), and the child tears down alone, its stdout (and a piped
 * stderr) closed so that nobody reading them waits for it. The child dies
 * with the parent until the result is out (a killed `judge run` stops its
 * run). Called before any thread exists. Returns in the child (or when no
 * child could be made); the parent never returns. */
static int result_fd = -1;

static void detach_teardown(void)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	fflush(stdout);
	fflush(stderr);
	pid_t parent = getpid(), pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		close(p[0]);
		result_fd = p[1];
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1); /* the parent is gone already */
		return;
	}
	close(p[1]);
	unsigned char code;
	ssize_t n;
	while ((n = read(p[0], &code, 1)) < 0 && errno == EINTR)
		;
	if (n == 1)
		_exit(code);
	/* the child ended before the result: its own end is ours */
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(st)) {
		signal(WTERMSIG(st), SIG_DFL);
		raise(WTERMSIG(st));
	}
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

/* In detach_teardown's child: the result is out; the parent exits with code. */
static void result_out(int code)
{
	if (result_fd < 0)
		return;
	fflush(stdout);
	fflush(stderr);
	prctl(PR_SET_PDEATHSIG, 0);
	signal(SIGPIPE, SIG_IGN);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct stat st;
	if (null >= 0) {
		dup2(null, STDOUT_FILENO);
		if (fstat(STDERR_FILENO, &st) == 0 &&
		    (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
			dup2(null, STDERR_FILENO);
		close(null);
	}
	unsigned char c = (unsigned char)code;
	while (write(result_fd, &c, 1) < 0 && errno == EINTR)
		;
	close(result_fd);
	result_fd = -1;
}

int cmd_run(int argc, char **argv, struct judge_config *cfg)
{
	int64_t t_start = clock_mono_us();
	struct run_args a;
	int rc = parse_args(argc, argv, cfg, &a);
	if (rc >= 0)
		return rc;
	const char *stdin_file = a.stdin_file, *expected_file = a.expected_file;
	const char *tests_dir = a.tests_dir, *problem_dir = a.problem_dir;
	const char *compare_mode = a.compare_mode, *compare_args = a.compare_args;
	if (optind >= argc)
		return usage_error("no SOURCE file given");
	if (!a.function != !a.func_tests)
		return usage_error("--function and --func-tests go together");
	if (a.entry_point && !a.test_code)
		return usage_error("--entry-point needs --test-code");
	if ((a.function || a.test_code) &&
	    (tests_dir || problem_dir || stdin_file || expected_file))
		return usage_error("--function and --test-code bring their own tests: they cannot "
				   "go with --tests, --problem, --stdin or --expected");
	if (a.function && a.test_code)
		return usage_error("give --function or --test-code, not both");
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
	struct grade_request req;
	struct grade_result res;
	cJSON *result = NULL;
	char err[512];
	model_request_init(&req);
	model_result_init(&res);
	enum sandbox_backend backend;

	if (sandbox_backend_parse(a.sandbox_name, &backend) < 0) {
		fprintf(stderr, "judge run: unknown sandbox '%s' (gvisor, native or auto)\n",
			a.sandbox_name);
		goto out;
	}
	if (lang_load_dir(&langs, cfg->languages_dir, err, sizeof err) < 0) {
		fprintf(stderr, "judge run: %s\n", err);
		goto out;
	}
	const struct lang *lang =
	    a.lang_name ? lang_find(&langs, a.lang_name) : lang_of_file(&langs, argv[optind]);
	if (!lang && !a.lang_name) {
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
		fprintf(stderr, "judge run: unknown language '%s'; known:", a.lang_name);
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
		/* a package's folder, or the id of one of problems_dir (`--problem sum`) */
		struct stat st;
		bool folder = stat(problem_dir, &st) == 0 || strchr(problem_dir, '/');
		if ((folder ? problem_load(&pb, problem_dir, &langs, err, sizeof err)
			    : problem_open(&pb, cfg->problems_dir, problem_dir, &langs, err,
					   sizeof err)) < 0) {
			fprintf(stderr, "judge run: %s\n", err);
			goto out;
		}
		have_problem = true;
		if (pb.unsupported) {
			fprintf(stderr, "judge run: problem '%s': %s\n", pb.id, pb.unsupported);
			goto out;
		}
	}

	if (fill_request(&req, &a, lang, &source, &in, &exp, tests_dir ? &td : NULL,
			 have_problem ? &pb : NULL, argc - optind, argv + optind) < 0)
		goto out;
	if ((a.function || a.test_code) && fill_function(&req, &a) < 0)
		goto out;

	if (backend == SANDBOX_GVISOR)
		detach_teardown();
	int64_t t_init = clock_mono_us();
	struct sandbox_options sbopts;
	int orc = limits_sandbox_options(cfg, &sbopts, err, sizeof err);
	/* a one-shot in the native sandbox starts (and sweeps) no gVisor: its
	 * threads, mounts and root file system would be set up for nothing */
	if (orc == 0 && backend == SANDBOX_NATIVE)
		snprintf(sbopts.sandbox, sizeof sbopts.sandbox, "native");
	/* nor pools: they fill from the second run of a runtime on, which a
	 * one-shot never has (its tests share one sandbox); without a pool the
	 * gVisor reapers, which the exit waits for, run at normal priority */
	sbopts.gvisor_pool = 0;
	sbopts.session_pool = 0;
	if (orc < 0 || sandbox_global_init(&sbopts, err, sizeof err) < 0) {
		fprintf(stderr, "judge run: sandbox: %s\n", err);
		ret = 1;
		goto out;
	}
	struct grade_env env = {.cfg = cfg,
				.langs = &langs,
				.backend = backend,
				.slot = 0,
				.reuse_key = "cli",
				.problem = have_problem ? &pb : NULL};
	int64_t t_grade = clock_mono_us();
	grade_request(&env, &req, &res);
	int64_t t_done = clock_mono_us();
	result = model_result_render(&res);
	char *text = cJSON_Print(result);
	puts(text);
	free(text);
	result_out(0);
	sandbox_global_shutdown();
	log_debug("run: set-up %lld us, sandbox init %lld us, grading %lld us, shutdown %lld us",
		  (long long)(t_init - t_start), (long long)(t_grade - t_init),
		  (long long)(t_done - t_grade), (long long)(clock_mono_us() - t_done));
	ret = 0;
out:
	model_request_release(&req);
	model_result_release(&res);
	cJSON_Delete(result);
	testdir_release(&td);
	if (have_problem)
		problem_release(&pb);
	strbuf_release(&source);
	strbuf_release(&in);
	strbuf_release(&exp);
	lang_registry_release(&langs);
	return ret;
}
