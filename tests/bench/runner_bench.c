/* runner_bench: what a sandbox adds to one run, against bare execution of the same program
 * measured in the same process, interleaved run by run.
 *
 * usage: runner_bench BACKEND N C_BINARY PYTHON [cold|session|reuse|cpu|cpu-reuse]
 *   BACKEND  native | gvisor
 *   N        runs per program (median of N)
 *   C_BINARY a program that exits at once (copied into the box as /box/a.out)
 *   PYTHON   absolute path of python3; its prefix (two levels up) is bound read-only
 *            unless it lives under /usr
 *   cold     gvisor only: no pool, every run pays runsc create + start
 *   session  gvisor only: every run in one workspace (the tests of a submission)
 *   reuse    gvisor only: every run a new workspace of one reuse key (submissions
 *            of one API key: the sandbox of the last one serves the next)
 *   cpu, cpu-reuse: gvisor only: N Python print(1) submissions back to back, each a
 *            new workspace (cpu-reuse: of one reuse key); prints "gvisor-cpu[-reuse]
 *            python-print N CPU_MS_PER_RUN WALL_MS_PER_RUN": the CPU of this process
 *            and everything it reaped (runsc, sentries, gofers: all are reaped by
 *            the end), so the machine's cost of a submission
 * Prints one line per program: "BACKEND PROGRAM N BARE_MS SANDBOX_MS" (medians).
 * Bare = fork + execve + read stdout to EOF + wait4; sandbox = sandbox_run() with
 * the same argv and the same capture of stdout. With a pool (gvisor), the driver waits
 * until the pool holds a started sandbox before each run, as a worker that is not
 * saturated would find it: "sandboxes started ahead of need". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "judge/grading/limits.h"
#include "runner/gvisor/gvpool.h"
#include "runner/sandbox.h"

extern char **environ;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* fork + execve + read stdout to EOF + wait4: the bare run. */
static double bare(const char *const *argv, const char *const *env)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	double t0 = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		execve(argv[0], (char *const *)argv, (char *const *)env);
		_exit(127);
	}
	close(p[1]);
	char buf[4096];
	while (read(p[0], buf, sizeof(buf)) > 0)
		;
	close(p[0]);
	int st;
	struct rusage ru;
	wait4(pid, &st, 0, &ru);
	double t = now_ms() - t0;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bare run of %s failed\n", argv[0]);
		exit(1);
	}
	return t;
}

/* judge.ini's default limits of a run (main sets it) */
static struct run_limits run_limits;

static double boxed(struct sandbox *sb, const char *const *argv, const char *const *env,
		    const char *const *ro, const char *const *warm)
{
	struct run_spec spec = {
	    .argv = argv, .env = env, .ro_paths = ro, .warm_argv = warm, .limits = run_limits};
	spec.limits.cpu_ms = 5000;
	spec.limits.wall_ms = 10000;
	spec.limits.memory_kb = 256 * 1024;
	spec.limits.processes = 32;
	spec.limits.stdout_bytes = 1 << 20;
	spec.limits.stderr_bytes = 1 << 16;
	spec.limits.file_bytes = 1 << 20;
	spec.limits.open_files = 64;
	struct run_result res;
	run_result_init(&res);
	double t0 = now_ms();
	sandbox_run(sb, &spec, &res);
	double t = now_ms() - t0;
	if (res.status != RUN_OK) {
		fprintf(stderr, "sandboxed run of %s: %s %s %s\n", argv[0],
			run_status_name(res.status), res.message, res.err.buf);
		exit(1);
	}
	run_result_release(&res);
	return t;
}

/* A workspace holding the C program as a.out. */
static struct sandbox *workspace(enum sandbox_backend b, const struct strbuf *prog)
{
	struct sandbox *sb;
	char err[512];
	if (sandbox_open(b, 0, 64 << 20, &sb, err, sizeof(err)) < 0) {
		fprintf(stderr, "sandbox_open: %s\n", err);
		exit(1);
	}
	if (sandbox_write_file(sb, "a.out", prog->buf, prog->len, 0755) < 0) {
		fprintf(stderr, "cannot put the C program in the box\n");
		exit(1);
	}
	return sb;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: %s native|gvisor N C_BINARY PYTHON [cold|session]\n",
			argv[0]);
		return 2;
	}
	const char *backend = argv[1];
	int n = atoi(argv[2]);
	const char *cbin = argv[3], *py = argv[4];
	/* cold: no pool. session: every run in one workspace, so that gVisor runs
	 * them all in one sandbox (the tests of one submission); else each gVisor
	 * run gets a workspace, and so a sandbox, of its own (a new submission) */
	bool cold = argc > 5 && !strcmp(argv[5], "cold");
	bool session = argc > 5 && !strcmp(argv[5], "session");
	bool reuse = argc > 5 && !strcmp(argv[5], "reuse");
	bool cpu = argc > 5 && !strncmp(argv[5], "cpu", 3);
	bool cpu_reuse = argc > 5 && !strcmp(argv[5], "cpu-reuse");
	if (n < 1 || n > 10000)
		return 2;

	struct judge_config cfg;
	char err[512];
	config_defaults(&cfg);
	free(cfg.sandbox);
	cfg.sandbox = strdup(backend);
	cfg.gvisor_pool = cold ? 0 : 1;
	/* JUDGE_BENCH_DEBUG=1: the backends' per-step timing logs on stderr */
	log_min_level = getenv("JUDGE_BENCH_DEBUG") ? LOG_DEBUG : LOG_WARN;
	struct limits_policy pol;
	limits_policy_from_config(&cfg, &pol);
	limits_run(&pol, NULL, NULL, NULL, &run_limits);
	struct sandbox_options opts;
	if (limits_sandbox_options(&cfg, &opts, err, sizeof(err)) < 0 ||
	    sandbox_global_init(&opts, err, sizeof(err)) < 0) {
		fprintf(stderr, "sandbox_global_init: %s\n", err);
		return 1;
	}
	enum sandbox_backend b;
	if (sandbox_backend_parse(backend, &b) < 0)
		return 2;
	struct strbuf prog = STRBUF_INIT;
	if (strbuf_read_file(&prog, cbin, 64 << 20) < 0) {
		fprintf(stderr, "cannot read %s\n", cbin);
		return 1;
	}
	struct sandbox *sb = workspace(b, &prog);

	/* Python's prefix (e.g. /opt/judge/runtimes/python3.12) unless it is under /usr */
	char prefix[4096];
	snprintf(prefix, sizeof(prefix), "%s", py);
	for (int i = 0; i < 2; i++) {
		char *s = strrchr(prefix, '/');
		if (s)
			*s = 0;
	}
	const char *py_ro[] = {prefix, NULL};
	const char *const *pro = strncmp(py, "/usr/", 5) ? py_ro : NULL;

	static const char *const env[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL};
	const char *c_bare[] = {cbin, NULL};
	const char *c_box[] = {"/box/a.out", NULL};
	const char *py_argv[] = {py, "-c", "print(1)", NULL};
	/* the warm-ups of languages/c.ini and python.ini */
	const char *c_warm[] = {"/usr/bin/true", NULL};
	const char *py_warm[] = {py, "-c", "pass", NULL};
	struct {
		const char *name;
		const char *const *bare_argv, *const *box_argv, *const *ro, *const *warm;
	} progs[] = {
	    {"c-exit", c_bare, c_box, NULL, c_warm},
	    {"python-print", py_argv, py_argv, pro, py_warm},
	};
	if (cpu) {
		/* the machine's CPU per submission: everything this process ran and reaped */
		double t0 = now_ms();
		for (int i = 0; i < n; i++) {
			struct sandbox *w = workspace(b, &prog);
			if (cpu_reuse)
				sandbox_set_reuse_key(w, "bench");
			boxed(w, py_argv, env, pro, py_warm);
			sandbox_close(w);
		}
		double wall = now_ms() - t0;
		sandbox_close(sb);
		sandbox_global_shutdown();
		struct rusage self, kids;
		getrusage(RUSAGE_SELF, &self);
		getrusage(RUSAGE_CHILDREN, &kids);
		double ms = (self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
			     kids.ru_stime.tv_sec) *
				1e3 +
			    (self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
			     kids.ru_stime.tv_usec) /
				1e3;
		printf("gvisor-cpu%s python-print %d %.2f %.2f\n", cpu_reuse ? "-reuse" : "", n,
		       ms / n, wall / n);
		strbuf_release(&prog);
		config_release(&cfg);
		return 0;
	}
	double *tb = calloc((size_t)n, sizeof(double)), *ts = calloc((size_t)n, sizeof(double));
	bool pool = !strcmp(backend, "gvisor") && !cold;
	for (size_t k = 0; k < sizeof(progs) / sizeof(progs[0]); k++) {
		if (pool)
			gvpool_prepare(&(struct run_spec){.argv = progs[k].box_argv,
							  .ro_paths = progs[k].ro,
							  .warm_argv = progs[k].warm});
		/* one untimed round of each: page cache, pool creation */
		bare(progs[k].bare_argv, env);
		if (pool)
			gvpool_wait(&(struct run_spec){.argv = progs[k].box_argv,
						       .ro_paths = progs[k].ro,
						       .warm_argv = progs[k].warm},
				    60000);
		boxed(sb, progs[k].box_argv, env, progs[k].ro, progs[k].warm);
		for (int i = 0; i < n; i++) {
			if (pool) {
				gvpool_wait(&(struct run_spec){.argv = progs[k].box_argv,
							       .ro_paths = progs[k].ro,
							       .warm_argv = progs[k].warm},
					    60000);
				usleep(150000); /* let the reaper of the last run finish */
			}
			tb[i] = bare(progs[k].bare_argv, env);
			bool fresh = b == SANDBOX_GVISOR && !session;
			struct sandbox *run_sb = fresh ? workspace(b, &prog) : sb;
			if (fresh && reuse)
				sandbox_set_reuse_key(run_sb, "bench");
			ts[i] = boxed(run_sb, progs[k].box_argv, env, progs[k].ro, progs[k].warm);
			if (fresh)
				sandbox_close(run_sb);
		}
		printf("%s%s %s %d %.2f %.2f\n", backend,
		       cold	 ? "-cold"
		       : session ? "-session"
		       : reuse	 ? "-reuse"
				 : "",
		       progs[k].name, n, median(tb, n), median(ts, n));
		fflush(stdout);
	}
	free(tb);
	free(ts);
	sandbox_close(sb);
	strbuf_release(&prog);
	sandbox_global_shutdown();
	config_release(&cfg);
	return 0;
}
