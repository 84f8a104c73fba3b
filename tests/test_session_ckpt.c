/* test_session_ckpt: a whole session saved and restored
 * (runner/session/session_ckpt.c) on gVisor: variables of every context, a
 * background process that ignores signals, into another workspace's box; a
 * damaged checkpoint fails clearly; native refuses and runs on. gVisor tests
 * are skipped (and counted) when runsc does not work here. Needs root. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/mount.h>
#include <unistd.h>

#include "common/config.h"
#include "common/strbuf.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "runner/session/session.h"
#include "tests/fixture.h"

static struct judge_config cfg;
static struct lang_registry langs;
static struct sandbox *sb, *sb2;
static struct session *ses;
static char dir[64];

static void init_backend(enum sandbox_backend b)
{
	char err[512];
	signal(SIGPIPE, SIG_IGN);
	config_defaults(&cfg);
	free(cfg.sandbox);
	cfg.sandbox = strdup(b == SANDBOX_GVISOR ? "auto" : "native");
	cfg.gvisor_pool = 0;
	cfg.session_pool = 0;
	if (access("bin/box_init", X_OK) == 0)
		setenv("JUDGE_BOX_INIT", "bin/box_init", 0);
	fixture_sandbox_start(&cfg);
	if (!sandbox_backend_works(b, err, sizeof err)) {
		sandbox_global_shutdown();
		cr_skip_test("%s does not work here: %s", sandbox_backend_name(b), err);
	}
	cr_assert_eq(lang_load_dir(&langs, "languages", err, sizeof err), 0, "%s", err);
	cr_assert_eq(sandbox_open(b, 6, 32 << 20, &sb, err, sizeof err), 0, "%s", err);
	cr_assert_eq(sandbox_open(b, 7, 32 << 20, &sb2, err, sizeof err), 0, "%s", err);
	snprintf(dir, sizeof dir, "/tmp/judge-ckpt-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void setup_native(void)
{
	init_backend(SANDBOX_NATIVE);
}

static void setup_gvisor(void)
{
	init_backend(SANDBOX_GVISOR);
}

static void teardown(void)
{
	session_stop(ses);
	ses = NULL;
	if (sb)
		sandbox_close(sb);
	if (sb2)
		sandbox_close(sb2);
	sb = sb2 = NULL;
	if (dir[0]) {
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	lang_registry_release(&langs);
	sandbox_global_shutdown();
	config_release(&cfg);
}

static struct session_spec spec_of(const char *name)
{
	const struct lang *l = lang_find(&langs, name);
	cr_assert(l && l->session_argv, "%s has no session driver", name);
	/* every session driver's folders, as a worker's sessions have */
	static char *ro[64];
	size_t n = 0;
	for (int i = 0; i < langs.count && n < 60; i++)
		for (char **rp = langs.langs[i].session_ro_paths; rp && *rp && n < 60; rp++)
			ro[n++] = *rp;
	ro[n] = NULL;
	struct session_spec s = {.argv = (const char *const *)l->session_argv,
				 .env = (const char *const *)l->session_env,
				 .ro_paths = (const char *const *)ro};
	struct limits_policy pol;
	limits_policy_from_config(&cfg, &pol);
	limits_run(&pol, NULL, NULL, NULL, &s.limits);
	s.limits.cpu_ms = 3000;
	s.limits.wall_ms = 6000;
	s.limits.memory_kb = 256 * 1024;
	s.limits.processes = 64;
	s.limits.stdout_bytes = 64 << 10;
	s.limits.stderr_bytes = 64 << 10;
	return s;
}

/* Runs code in context ctx of s: its stdout into out (may be NULL); asserts ok
 * and not restarted. */
static void ok_in(struct session *s, int ctx, const char *code, const char *want_out)
{
	struct cell_spec c = {.context = ctx, .code = code, .code_len = strlen(code)};
	struct cell_result r;
	cell_result_init(&r);
	cr_assert_eq(session_exec(s, &c, &r), 0);
	cr_assert_eq(r.status, CELL_OK, "%s: %s %s %s", code, cell_status_name(r.status), r.message,
		     r.reply.buf ? r.reply.buf : "");
	cr_assert_not(r.restarted, "%s: restarted", code);
	if (want_out)
		cr_assert_str_eq(r.out.buf ? r.out.buf : "", want_out, "%s", code);
	cell_result_release(&r);
}

TestSuite(ckpt_gvisor, .init = setup_gvisor, .fini = teardown, .timeout = 180);
TestSuite(ckpt_native, .init = setup_native, .fini = teardown, .timeout = 60);

/* Variables of two contexts and a process that ignores SIGTERM survive a
 * checkpoint and a restore into another workspace's box holding the files. */
Test(ckpt_gvisor, variables_and_processes_survive)
{
	char err[512];
	struct session_spec spec = spec_of("python");
	cr_assert_eq(session_start(sb, &spec, &ses, err, sizeof err), 0, "%s", err);
	const struct lang *bash = lang_find(&langs, "bash");
	struct session_driver d = {.argv = (const char *const *)bash->session_argv,
				   .env = (const char *const *)bash->session_env};
	int bctx;
	cr_assert_eq(session_context_start(ses, &d, NULL, &bctx, err, sizeof err), 0, "%s", err);
	ok_in(ses, 0, "x = 41\nopen('a.txt', 'w').write('kept')", NULL);
	ok_in(ses, bctx, "export V=7", NULL);
	/* counts in /tmp (the sandbox's memory) and ignores SIGTERM; each count
	 * replaces the file whole, so that a reader never finds it empty */
	ok_in(ses, 0,
	      "import subprocess\n"
	      "p = subprocess.Popen(['python3', '-c', 'import os, signal, time\\n"
	      "signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
	      "n = 0\\nwhile True:\\n    n += 1\\n    open(\"/tmp/n.new\", \"w\").write(str(n))\\n"
	      "    os.replace(\"/tmp/n.new\", \"/tmp/n\")\\n"
	      "    time.sleep(0.05)'], start_new_session=True)\n"
	      "import time\ntime.sleep(0.3)",
	      NULL);
	bool alive = true;
	cr_assert_eq(session_checkpoint(ses, dir, &alive, err, sizeof err), 0, "%s", err);
	cr_assert_not(alive);
	session_stop(ses);
	ses = NULL;
	struct strbuf kept = STRBUF_INIT;
	cr_assert_eq(sandbox_read_file(sb, "a.txt", &kept, 64), 0);
	cr_assert_eq(sandbox_write_file(sb2, "a.txt", kept.buf, kept.len, 0644), 0);
	strbuf_release(&kept);
	cr_assert_eq(session_restore(sb2, &spec, dir, &ses, err, sizeof err), 0, "%s", err);
	ok_in(ses, 0, "print(x + 1)", "42\n");
	ok_in(ses, bctx, "echo $V", "7\n");
	ok_in(ses, 0, "print(open('a.txt').read())", "kept\n");
	ok_in(ses, 0,
	      "a = int(open('/tmp/n').read())\ntime.sleep(0.5)\n"
	      "print(p.poll() is None and int(open('/tmp/n').read()) > a)",
	      "True\n");
}

/* A checkpoint whose host-side state was changed is refused with the reason;
 * one without runsc's image fails in runsc restore, nothing left running. */
Test(ckpt_gvisor, damaged_checkpoint_fails_clearly)
{
	char err[512], path[128];
	struct session_spec spec = spec_of("python");
	cr_assert_eq(session_start(sb, &spec, &ses, err, sizeof err), 0, "%s", err);
	ok_in(ses, 0, "x = 1", NULL);
	bool alive;
	cr_assert_eq(session_checkpoint(ses, dir, &alive, err, sizeof err), 0, "%s", err);
	session_stop(ses);
	ses = NULL;
	snprintf(path, sizeof path, "%s/session.json", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("{\"next_sid\": 1, \"next_pid\": 0, \"contexts\": [{\"n\": 99}]}", f);
	fclose(f);
	cr_assert_eq(session_restore(sb2, &spec, dir, &ses, err, sizeof err), -1);
	cr_assert(strstr(err, "bad context"), "%s", err);
	cr_assert_null(ses);
	snprintf(path, sizeof path, "%s/checkpoint.img", dir);
	cr_assert_eq(unlink(path), 0);
	f = fopen(path, "w");
	fputs("not an image", f);
	fclose(f);
	snprintf(path, sizeof path, "%s/session.json", dir);
	f = fopen(path, "w");
	fputs("{\"next_sid\": 1, \"next_pid\": 0, \"contexts\": []}", f);
	fclose(f);
	cr_assert_eq(session_restore(sb2, &spec, dir, &ses, err, sizeof err), -1);
	cr_assert(strstr(err, "no default context"), "%s", err);
}

/* Native has no memory checkpoint: refused, and the session runs on. */
Test(ckpt_native, refused_and_runs_on)
{
	char err[512];
	struct session_spec spec = spec_of("python");
	cr_assert_eq(session_start(sb, &spec, &ses, err, sizeof err), 0, "%s", err);
	ok_in(ses, 0, "x = 5", NULL);
	bool alive = false;
	cr_assert_eq(session_checkpoint(ses, dir, &alive, err, sizeof err), -1);
	cr_assert(strstr(err, "cannot checkpoint"), "%s", err);
	cr_assert(alive);
	ok_in(ses, 0, "print(x)", "5\n");
}

/* A checkpoint into a full disk fails with runsc's reason; the session either
 * runs on with its variables or, when the sandbox went down with it, starts
 * again at the next cell (restarted), never a hang or a crash. */
Test(ckpt_gvisor, full_disk_fails_clearly)
{
	char err[512];
	struct session_spec spec = spec_of("python");
	cr_assert_eq(session_start(sb, &spec, &ses, err, sizeof err), 0, "%s", err);
	ok_in(ses, 0, "x = 3\nb = bytes(4 << 20)", NULL);
	cr_assert_eq(mount("tmpfs", dir, "tmpfs", 0, "size=64k"), 0, "mount: %s", strerror(errno));
	bool alive = true;
	int rc = session_checkpoint(ses, dir, &alive, err, sizeof err);
	umount2(dir, MNT_DETACH);
	cr_assert_eq(rc, -1, "a checkpoint into 64 KiB succeeded");
	cr_assert(strstr(err, "checkpoint") || strstr(err, "write"), "%s", err);
	struct cell_spec c = {.code = "print(x)", .code_len = 8};
	struct cell_result r;
	cell_result_init(&r);
	cr_assert_eq(session_exec(ses, &c, &r), 0);
	if (alive)
		cr_assert(r.status == CELL_OK && !strcmp(r.out.buf, "3\n") && !r.restarted,
			  "alive: %s %s", cell_status_name(r.status), r.reply.buf);
	else
		cr_assert(r.restarted,
			  "the sandbox ended, the next cell must say restarted: %s %s %s",
			  cell_status_name(r.status), r.out.buf, err);
	cell_result_release(&r);
}
