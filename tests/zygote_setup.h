/* zygote_setup.h: the set-up the zygote tests share (test_native_zygote,
 * test_gvisor_zygote, test_node_zygote): a backend started with warm_start on,
 * a language with its zygote, workspaces of a key, a run as grading makes it,
 * and the wait for the first warm run. The includer defines WARM_MARK first: a
 * program that prints "warm" when it was forked from the zygote, "fresh" when
 * it was not. */
#pragma once

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/strbuf.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "runner/sandbox.h"

static struct judge_config cfg;
static struct lang_registry reg;
static const struct lang *zlang; /* the language whose zygote is tested */
static enum sandbox_backend backend;
static long run_cpu_ms, run_mem_kb; /* a run's limits unless a test says */

/* The backend with warm_start on (no pool of idle gVisor sandboxes: every
 * workspace opened is the test's), lang's zygote named by its .ini. */
static void zygote_start(enum sandbox_backend b, const char *lang, long cpu_ms, long mem_kb)
{
	char err[512];
	struct sandbox_options opts;
	backend = b;
	run_cpu_ms = cpu_ms;
	run_mem_kb = mem_kb;
	config_defaults(&cfg);
	free(cfg.sandbox);
	cfg.sandbox = strdup(b == SANDBOX_GVISOR ? "gvisor" : "native");
	cfg.gvisor_pool = 0;
	free(cfg.warm_start);
	cfg.warm_start = strdup("on");
	if (access("bin/box_init", X_OK) == 0)
		setenv("JUDGE_BOX_INIT", "bin/box_init", 0);
	if (access("bin/ns_init", X_OK) == 0)
		setenv("JUDGE_NS_INIT", "bin/ns_init", 0);
	cr_assert_eq(lang_load_dir(&reg, "languages", err, sizeof(err)), 0, "%s", err);
	zlang = lang_find(&reg, lang);
	cr_assert(zlang && zlang->zygote_argv, "%s.ini names a zygote", lang);
	cr_assert_eq(limits_sandbox_options(&cfg, &opts, err, sizeof(err)), 0, "%s", err);
	cr_assert(opts.warm_start);
	cr_assert_eq(sandbox_global_init(&opts, err, sizeof(err)), 0, "init: %s", err);
}

static void stop(void)
{
	sandbox_global_shutdown();
	lang_registry_release(&reg);
	config_release(&cfg);
}

/* A workspace of key (NULL: none, every native run fresh). */
static struct sandbox *open_key(int slot, const char *key)
{
	char err[512];
	struct sandbox *sb;
	cr_assert_eq(sandbox_open(backend, slot, 16 << 20, &sb, err, sizeof(err)), 0, "open: %s",
		     err);
	cr_assert_eq(sandbox_set_reuse_key(sb, key), 0);
	return sb;
}

static struct sandbox *open_ws(int slot)
{
	return open_key(slot, "zygote");
}

/* What grading runs for argv (the language's run when NULL): its env, folders,
 * warm-up and zygote; the configured limits with a test's room (0: the
 * defaults zygote_start was given). Asserts nothing: threads use it. */
static void zygote_spec(struct run_spec *s, const char *const *argv, long cpu_ms, long mem_kb)
{
	*s = (struct run_spec){.argv = argv ? argv : (const char *const *)zlang->run_argv,
			       .env = (const char *const *)zlang->env,
			       .ro_paths = (const char *const *)zlang->ro_paths,
			       .warm_argv = (const char *const *)zlang->warm_argv,
			       .zygote_argv = (const char *const *)zlang->zygote_argv};
	struct limits_policy pol;
	limits_policy_from_config(&cfg, &pol);
	limits_run(&pol, NULL, NULL, NULL, &s->limits);
	s->limits.cpu_ms = cpu_ms ? cpu_ms : run_cpu_ms;
	s->limits.wall_ms = 10000;
	s->limits.memory_kb = mem_kb ? mem_kb : run_mem_kb;
	s->limits.processes = 64;
	s->limits.stdout_bytes = 1 << 20;
	s->limits.stderr_bytes = 64 << 10;
}

/* Runs src written as file: the language's source file run as grading runs
 * it when file is NULL, `<interpreter> file` otherwise; res is the caller's
 * to release. */
static void run_src(struct sandbox *sb, const char *file, const char *src, const char *stdin_data,
		    long cpu_ms, long mem_kb, struct run_result *res)
{
	const char *other[] = {zlang->run_argv[0], file, NULL};
	cr_assert_eq(sandbox_write_file(sb, file ? file : zlang->source_file, src, strlen(src),
					0644),
		     0);
	struct run_spec s;
	zygote_spec(&s, file ? other : NULL, cpu_ms, mem_kb);
	s.stdin_data = stdin_data;
	s.stdin_len = stdin_data ? strlen(stdin_data) : 0;
	run_result_init(res);
	cr_assert_eq(sandbox_run(sb, &s, res), 0);
	cr_assert_neq(res->status, RUN_INTERNAL_ERROR, "%s", res->message);
}

/* Runs src, expecting status OK; its stdout in out. */
static void run_ok(struct sandbox *sb, const char *src, char *out, size_t outlen)
{
	struct run_result res;
	run_src(sb, NULL, src, NULL, 0, 0, &res);
	cr_assert_eq(res.status, RUN_OK, "%s: %s", run_status_name(res.status), res.err.buf);
	snprintf(out, outlen, "%s", res.out.buf);
	run_result_release(&res);
}

/* Runs WARM_MARK until a run is forked from the zygote (it starts after the
 * language's first run; runs start fresh until it is ready). */
static void warm_up(struct sandbox *sb)
{
	char out[64] = "";
	for (int i = 0; i < 50 && strcmp(out, "warm\n"); i++) {
		if (i)
			usleep(100 * 1000);
		run_ok(sb, WARM_MARK, out, sizeof(out));
	}
	cr_assert_str_eq(out, "warm\n", "the zygote serves runs within 5 s");
}

/* Runs src warm and fresh (a workspace without a key: natively every run is
 * fresh, under gVisor it is a new sandbox's first run) and asserts that the
 * warm run ended as want and as the fresh one did: status, exit code, signal,
 * stdout, stderr. */
static void same_end(const char *src, enum run_status want)
{
	struct sandbox *w = open_ws(1), *f = open_key(2, NULL);
	struct run_result warm, fresh;
	warm_up(w);
	run_src(w, NULL, src, NULL, 0, 0, &warm);
	run_src(f, NULL, src, NULL, 0, 0, &fresh);
	cr_assert_eq(warm.status, want, "%s: %s", run_status_name(warm.status), warm.err.buf);
	cr_assert_eq(fresh.status, warm.status);
	cr_assert_eq(fresh.exit_code, warm.exit_code);
	cr_assert_eq(fresh.signal, warm.signal);
	cr_assert_str_eq(warm.out.buf, fresh.out.buf);
	cr_assert_str_eq(warm.err.buf, fresh.err.buf);
	run_result_release(&warm);
	run_result_release(&fresh);
	sandbox_close(f);
	sandbox_close(w);
}

/* Three runs of src (which prints random values), the first before the
 * zygote is ready, the others forked from it: no two print the same. */
static void check_random_differs(const char *src)
{
	char r1[256], r2[256], r3[256];
	struct sandbox *a = open_ws(1);
	run_ok(a, src, r1, sizeof(r1));
	warm_up(a);
	run_ok(a, src, r2, sizeof(r2));
	run_ok(a, src, r3, sizeof(r3));
	cr_assert_str_neq(r1, r2);
	cr_assert_str_neq(r2, r3);
	cr_assert_str_neq(r1, r3);
	sandbox_close(a);
}
