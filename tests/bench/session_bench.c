/* session_bench: what a Python session costs at the runner level: creating one
 * (sandbox_open + session_start, from the start pool or cold) and running a
 * trivial cell (`1 + 1`, reply read), medians over N sessions of M cells.
 *
 * usage: session_bench BACKEND N M [cold] [LANG]
 * Prints "BACKEND pooled|cold LANG start_p50_ms start_p90_ms cell_p50_ms cell_p90_ms".
 * With the pool, each start waits until the pool holds a started session, as a
 * worker that is not saturated finds it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "runner/session/session.h"
#include "runner/session/prestart.h"

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
	qsort(v, (size_t)n, sizeof *v, cmp_d);
	return n ? v[(int)((n - 1) * p)] : 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: session_bench BACKEND N M [cold] [LANG]\n");
		return 2;
	}
	enum sandbox_backend b = strcmp(argv[1], "gvisor") ? SANDBOX_NATIVE : SANDBOX_GVISOR;
	int n = atoi(argv[2]), m = atoi(argv[3]);
	bool cold = argc > 4 && !strcmp(argv[4], "cold");
	const char *lang = argc > 5 ? argv[5] : "python";
	char err[512];
	struct judge_config cfg;
	config_defaults(&cfg);
	free(cfg.sandbox);
	cfg.sandbox = strdup(argv[1]);
	cfg.gvisor_pool = 0;
	cfg.session_pool = cold ? 0 : 1;
	log_min_level = LOG_WARN;
	struct sandbox_options opts;
	struct lang_registry langs;
	if (limits_sandbox_options(&cfg, &opts, err, sizeof err) < 0 ||
	    sandbox_global_init(&opts, err, sizeof err) < 0 ||
	    lang_load_dir(&langs, "languages", err, sizeof err) < 0) {
		fprintf(stderr, "session_bench: %s\n", err);
		return 1;
	}
	const struct lang *l = lang_find(&langs, lang);
	struct session_spec spec = {.argv = (const char *const *)l->session_argv,
				    .env = (const char *const *)l->session_env,
				    .ro_paths = (const char *const *)l->session_ro_paths};
	struct limits_policy pol;
	limits_policy_from_config(&cfg, &pol);
	limits_run(&pol, NULL, NULL, NULL, &spec.limits);
	spec.limits.memory_kb = 256 * 1024;
	spec.limits.processes = 64;
	long box = 32 << 20;
	prestart_prepare(b, box, &spec);
	double *starts = calloc((size_t)n, sizeof(double)), *cells = calloc((size_t)(n * m), sizeof(double));
	int nc = 0;
	const char *code = strcmp(lang, "bash") ? "1 + 1" : "true";
	for (int i = 0; i < n; i++) {
		if (!cold)
			prestart_wait(b, box, &spec, 1, 60000);
		int64_t t0 = clock_mono_us();
		struct sandbox *sb;
		struct session *s;
		if (sandbox_open(b, 9, box, &sb, err, sizeof err) < 0 ||
		    session_start(sb, &spec, &s, err, sizeof err) < 0) {
			fprintf(stderr, "session_bench: %s\n", err);
			return 1;
		}
		starts[i] = (double)(clock_mono_us() - t0) / 1000;
		for (int j = 0; j < m; j++) {
			struct cell_spec c = {.code = code, .code_len = strlen(code)};
			struct cell_result r;
			cell_result_init(&r);
			int64_t c0 = clock_mono_us();
			session_exec(s, &c, &r);
			cells[nc++] = (double)(clock_mono_us() - c0) / 1000;
			if (r.status != RUN_OK)
				fprintf(stderr, "cell: %s %s\n", run_status_name(r.status), r.message);
			cell_result_release(&r);
		}
		session_stop(s);
		sandbox_close(sb);
	}
	printf("%s %s %s start_p50 %.1f start_p90 %.1f cell_p50 %.2f cell_p90 %.2f (N=%d M=%d)\n",
	       argv[1], cold ? "cold" : "pooled", lang, pct(starts, n, 0.5), pct(starts, n, 0.9),
	       pct(cells, nc, 0.5), pct(cells, nc, 0.9), n, m);
	free(starts);
	free(cells);
	lang_registry_release(&langs);
	sandbox_global_shutdown();
	config_release(&cfg);
	return 0;
}
