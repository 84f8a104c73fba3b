/* test_gvisor_reuse: a gVisor sandbox serving several workspaces of one reuse key
 * (sandbox_set_reuse_key, runner/gvisor/gvisor.c): the same sandbox for the same key,
 * never for another key or without one, recycled after gvisor_reuse_runs,
 * gvisor_reuse_s or a run that did not end cleanly; and nothing of a workspace
 * reaches the next one in that sandbox (files, /tmp, /dev/shm, processes, IPC
 * objects, signals, environment, uid). Needs root and runsc. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "judge/grading/limits.h"
#include "runner/sandbox.h"

static struct judge_config cfg;

/* Starts the gvisor backend with reuse on (runs, seconds) or off (runs = 0). */
static void start(long runs, long secs)
{
	char err[512];
	struct sandbox_options opts;
	config_defaults(&cfg);
	free(cfg.sandbox);
	cfg.sandbox = strdup("gvisor");
	cfg.gvisor_pool = 0;
	free(cfg.gvisor_reuse);
	cfg.gvisor_reuse = strdup(runs > 0 ? "key" : "never");
	if (runs > 0)
		cfg.gvisor_reuse_runs = runs;
	if (secs > 0)
		cfg.gvisor_reuse_s = secs;
	if (access("bin/box_init", X_OK) == 0)
		setenv("JUDGE_BOX_INIT", "bin/box_init", 0);
	cr_assert_eq(limits_sandbox_options(&cfg, &opts, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sandbox_global_init(&opts, err, sizeof(err)), 0, "init: %s", err);
}

static void stop(void)
{
	sandbox_global_shutdown();
	config_release(&cfg);
}

static struct sandbox *open_ws(const char *key, int slot)
{
	char err[512];
	struct sandbox *sb;
	cr_assert_eq(sandbox_open(SANDBOX_GVISOR, slot, 16 << 20, &sb, err, sizeof(err)), 0,
		     "open: %s", err);
	cr_assert_eq(sandbox_set_reuse_key(sb, key), 0);
	return sb;
}

static struct run_spec spec_of(const char *const *argv, const char *const *env)
{
	static const char *const def_env[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL};
	struct run_spec s = {.argv = argv, .env = env ? env : def_env};
	struct limits_policy pol;
	limits_policy_from_config(&cfg, &pol);
	limits_run(&pol, NULL, NULL, NULL, &s.limits);
	s.limits.cpu_ms = 3000;
	s.limits.wall_ms = 8000;
	s.limits.memory_kb = 256 * 1024;
	s.limits.processes = 64;
	s.limits.stdout_bytes = 1 << 20;
	s.limits.stderr_bytes = 64 << 10;
	return s;
}

/* Runs a shell line in sb; its stdout into out (when not NULL), the sandbox id
 * into id. Returns the status. */
static enum run_status run_env(struct sandbox *sb, const char *line, const char *const *env,
			       long wall_ms, char *out, size_t outlen, char id[40])
{
	const char *argv[] = {"/bin/sh", "-c", line, NULL};
	struct run_spec s = spec_of(argv, env);
	if (wall_ms > 0)
		s.limits.wall_ms = wall_ms;
	struct run_result res;
	run_result_init(&res);
	cr_assert_eq(sandbox_run(sb, &s, &res), 0);
	cr_assert_neq(res.status, RUN_INTERNAL_ERROR, "'%s': %s", line, res.message);
	if (out)
		snprintf(out, outlen, "%s", res.out.buf);
	if (id)
		snprintf(id, 40, "%s", res.sandbox_id);
	cr_assert(res.sandbox_id[0], "a gVisor run names its sandbox");
	enum run_status st = res.status;
	if (st != RUN_OK && st != RUN_TIMEOUT)
		cr_log_warn("'%s': %s: %s", line, run_status_name(st), res.err.buf);
	run_result_release(&res);
	return st;
}

static void run_ok(struct sandbox *sb, const char *line, char *out, size_t outlen, char id[40])
{
	cr_assert_eq(run_env(sb, line, NULL, 0, out, outlen, id), RUN_OK, "'%s'", line);
}

/* One workspace of key: runs `true` and closes; returns the sandbox id. */
static void one_ws(const char *key, char id[40])
{
	struct sandbox *sb = open_ws(key, 1);
	run_ok(sb, "true", NULL, 0, id);
	sandbox_close(sb);
}

TestSuite(gvisor_reuse, .fini = stop, .timeout = 120);

Test(gvisor_reuse, same_key_same_sandbox_other_key_never)
{
	start(200, 300);
	char a1[40], a2[40], b1[40], a3[40], n1[40], n2[40];
	one_ws("a", a1);
	one_ws("a", a2);
	cr_assert_str_eq(a1, a2, "a second workspace of key a reuses the sandbox");
	/* an idle sandbox of key a exists now: key b must not get it */
	one_ws("b", b1);
	cr_assert_str_neq(b1, a2);
	one_ws("a", a3);
	cr_assert_str_eq(a3, a1, "key a's sandbox waited while key b ran");
	/* no key: never reused, nor given one of a key */
	one_ws(NULL, n1);
	one_ws(NULL, n2);
	cr_assert_str_neq(n1, n2);
	cr_assert_str_neq(n1, a1);
	cr_assert_str_neq(n1, b1);
	cr_assert_str_neq(n2, b1);
}

Test(gvisor_reuse, never_ignores_keys)
{
	start(0, 0);
	char a1[40], a2[40];
	one_ws("a", a1);
	one_ws("a", a2);
	cr_assert_str_neq(a1, a2);
}

/* A C program that creates (argument "create") or looks for (no argument) a
 * System V shared memory segment, semaphore set and message queue, a POSIX
 * shared memory object and a POSIX message queue; prints which exist. */
static const char ipc_src[] =
    "#include <fcntl.h>\n#include <mqueue.h>\n#include <stdio.h>\n#include <sys/mman.h>\n"
    "#include <sys/msg.h>\n#include <sys/sem.h>\n#include <sys/shm.h>\n"
    "int main(int c, char **v) {\n"
    "  int f = c > 1 ? IPC_CREAT | 0666 : 0666, o = c > 1 ? O_CREAT | O_RDWR : O_RDWR;\n"
    "  int shm = shmget(0x4a55, 4096, f) >= 0, sem = semget(0x4a56, 1, f) >= 0;\n"
    "  int msg = msgget(0x4a57, f) >= 0, pshm = shm_open(\"/jreuse\", o, 0666) >= 0;\n"
    "  struct mq_attr a = {.mq_maxmsg = 4, .mq_msgsize = 64};\n"
    "  int mq = mq_open(\"/jreuse\", o, 0666, c > 1 ? &a : NULL) != (mqd_t)-1;\n"
    "  printf(\"shm=%d sem=%d msg=%d pshm=%d mq=%d\\n\", shm, sem, msg, pshm, mq);\n"
    "  return 0; }\n";

/* Builds the IPC program on the host once (the sandbox binds the host's /usr
 * and /lib read-only, so the binary runs there); returns its path. */
static const char *ipc_binary(void)
{
	static char path[] = "/tmp/judge-reuse-ipc-XXXXXX";
	char src[64], bin[64], cmd[256];
	cr_assert_not_null(mkdtemp(path));
	snprintf(src, sizeof(src), "%s/ipc.c", path);
	snprintf(bin, sizeof(bin), "%s/ipc", path);
	FILE *f = fopen(src, "w");
	cr_assert_not_null(f);
	fputs(ipc_src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -o %s %s -lrt", bin, src);
	cr_assert_eq(system(cmd), 0, "cannot build %s", src);
	static char out[64];
	snprintf(out, sizeof(out), "%s", bin);
	return out;
}

static void put_binary(struct sandbox *sb, const char *host, const char *name)
{
	FILE *f = fopen(host, "rb");
	cr_assert_not_null(f);
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	cr_assert_eq(sandbox_write_file(sb, name, buf, n, 0755), 0);
}

static void rm_tree_of(const char *bin)
{
	char dir[64], cmd[128];
	snprintf(dir, sizeof(dir), "%s", bin);
	*strrchr(dir, '/') = 0;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

Test(gvisor_reuse, nothing_of_a_workspace_reaches_the_next)
{
	start(200, 300);
	const char *ipc = ipc_binary();
	char id1[40], id2[40], out[4096];

	/* workspace 1: leaves everything it can behind */
	struct sandbox *a = open_ws("k", 1);
	put_binary(a, ipc, "ipc");
	static const char *const env1[] = {"PATH=/usr/bin:/bin", "SECRET=one", NULL};
	cr_assert_eq(run_env(a,
			     "trap '' USR1; "
			     "echo f > /box/left; echo t > /tmp/left; echo s > /dev/shm/left; "
			     "./ipc create; "
			     /* a daemon: setsid and double fork */
			     "setsid sh -c 'sleep 100 & sleep 100' </dev/null >/dev/null 2>&1 & "
			     /* a process signalling everything it can, all the time */
			     "(trap '' USR1; while :; do kill -USR1 -1; sleep 0.01; done) "
			     "</dev/null >/dev/null 2>&1 & "
			     "sleep 0.2; ./ipc",
			     env1, 0, out, sizeof(out), id1),
		     RUN_OK);
	cr_assert_str_eq(out, "shm=1 sem=1 msg=1 pshm=1 mq=1\nshm=1 sem=1 msg=1 pshm=1 mq=1\n",
			 "the objects exist within their run");
	sandbox_close(a);

	/* workspace 2, same key, another slot: the same sandbox, nothing of 1 */
	struct sandbox *b = open_ws("k", 2);
	put_binary(b, ipc, "ipc");
	static const char *const env2[] = {"PATH=/usr/bin:/bin", NULL};
	cr_assert_eq(
	    run_env(b,
		    "trap 'echo got-usr1' USR1; sleep 0.3; "
		    "ls -A /box | tr '\\n' ' '; echo; "
		    "ls -A /tmp /dev/shm | tr '\\n' ' '; echo; "
		    "for p in /proc/[0-9]*; do q=${p#/proc/}; "
		    "[ $q = 1 ] || [ $q = $$ ] || echo proc $q $(tr '\\0' ' ' < $p/cmdline); "
		    "done; "
		    "./ipc; echo secret=${SECRET-unset}; id -u",
		    env2, 0, out, sizeof(out), id2),
	    RUN_OK);
	cr_assert_str_eq(id1, id2, "the second workspace of the key reuses the sandbox");
	char want[512];
	snprintf(want, sizeof(want),
		 "ipc \n/dev/shm:  /tmp: \nshm=0 sem=0 msg=0 pshm=0 mq=0\nsecret=unset\n%ld\n",
		 cfg.box_uid + 2);
	cr_assert_str_eq(out, want);
	sandbox_close(b);
	rm_tree_of(ipc);
}

Test(gvisor_reuse, nothing_writable_outside_the_box_and_tmp)
{
	start(200, 300);
	char out[8192], id[40];
	struct sandbox *a = open_ws("k", 1);
	/* what a program could leave for the next workspace: a folder or a file it
	 * can write (devices such as /dev/null are per open, not state) */
	run_ok(a,
	       "awk '$4 !~ /^ro(,|$)/ {print $2}' /proc/mounts | while read m; do "
	       "case $m in /proc*|/sys*|/box|/tmp|/dev/shm) continue;; esac; "
	       "find $m -xdev \\( -type d -o -type f \\) -writable -print 2>/dev/null; "
	       "done; true",
	       out, sizeof(out), id);
	cr_assert_str_eq(out, "", "writable outside /box and /tmp: %s", out);
	sandbox_close(a);
}

Test(gvisor_reuse, recycled_after_runs)
{
	start(3, 300);
	char id[4][40];
	for (int i = 0; i < 4; i++)
		one_ws("k", id[i]);
	/* three runs, then a new sandbox */
	cr_assert_str_eq(id[0], id[1]);
	cr_assert_str_eq(id[0], id[2]);
	cr_assert_str_neq(id[0], id[3]);
}

Test(gvisor_reuse, at_most_four_idle_without_a_pool_the_oldest_go)
{
	start(200, 300);
	static const char *const keys[] = {"a", "b", "c", "d", "e"};
	char id[5][40], again[40];
	for (int i = 0; i < 5; i++)
		one_ws(keys[i], id[i]);
	/* max(4, 2 x pool) parked: a's went when e's came */
	one_ws("e", again);
	cr_assert_str_eq(again, id[4]);
	one_ws("b", again);
	cr_assert_str_eq(again, id[1]);
	one_ws("a", again);
	cr_assert_str_neq(again, id[0], "the oldest parked sandbox was discarded");
}

/* True when runsc still has the container id (its state file). */
static bool container_exists(const char *id)
{
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "%s_sandbox:", id);
	DIR *d = opendir("/run/judge/runsc");
	struct dirent *e;
	bool found = false;
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix)))
			found = true;
	if (d)
		closedir(d);
	return found;
}

Test(gvisor_reuse, recycled_after_its_life_even_when_idle)
{
	start(200, 1);
	char a[40], b[40];
	one_ws("k", a);
	cr_assert(container_exists(a));
	/* parked; past its life a reaper deletes it without any other call */
	for (int i = 0; i < 100 && container_exists(a); i++)
		usleep(100000);
	cr_assert(!container_exists(a), "idle sandbox %s still there 10 s later", a);
	one_ws("k", b);
	cr_assert_str_neq(a, b);
}

Test(gvisor_reuse, recycled_after_a_run_that_did_not_end_cleanly)
{
	start(200, 300);
	char a[40], b[40], c[40];
	struct sandbox *sb = open_ws("k", 1);
	cr_assert_eq(run_env(sb, "sleep 100", NULL, 500, NULL, 0, a), RUN_TIMEOUT);
	sandbox_close(sb);
	one_ws("k", b);
	cr_assert_str_neq(a, b, "a sandbox whose run timed out is not reused");
	/* a CPU timeout ends its run cleanly (its workspace goes on in the same
	 * sandbox) but the sandbox serves no other workspace */
	sb = open_ws("k", 1);
	run_ok(sb, "true", NULL, 0, c);
	cr_assert_str_eq(c, b);
	const char *spin[] = {"/bin/sh", "-c", "while :; do :; done", NULL};
	struct run_spec s = spec_of(spin, NULL);
	s.limits.cpu_ms = 300;
	struct run_result res;
	run_result_init(&res);
	cr_assert_eq(sandbox_run(sb, &s, &res), 0);
	cr_assert_eq(res.status, RUN_TIMEOUT, "%s", run_status_name(res.status));
	run_result_release(&res);
	run_ok(sb, "true", NULL, 0, c);
	cr_assert_str_eq(c, b, "the workspace keeps its sandbox after a CPU timeout");
	sandbox_close(sb);
	one_ws("k", c);
	cr_assert_str_neq(c, b);
}

/* Mounts of this process (its boxes, its sandboxes' folders): other processes
 * of the machine mount and unmount their own meanwhile. */
static int mount_count(void)
{
	FILE *m = fopen("/proc/self/mountinfo", "r");
	char line[4096], gv[64], box[64];
	snprintf(gv, sizeof(gv), "/run/judge/gvisor/%ld", (long)getpid());
	snprintf(box, sizeof(box), "/run/judge/box-%ld-", (long)getpid());
	int n = 0;
	while (m && fgets(line, sizeof(line), m))
		n += strstr(line, gv) || strstr(line, box);
	if (m)
		fclose(m);
	return n;
}

Test(gvisor_reuse, many_reuses_leave_no_mounts, .timeout = 240)
{
	start(1000, 300);
	char first[40], id[40];
	one_ws("k", first);
	int mounts = mount_count();
	for (int i = 0; i < 30; i++) {
		struct sandbox *sb = open_ws("k", 1 + i % 3);
		char line[64], out[64];
		snprintf(line, sizeof(line), "echo %d > /box/n; cat /box/n", i);
		run_ok(sb, line, out, sizeof(out), id);
		cr_assert_eq(atoi(out), i);
		cr_assert_str_eq(id, first);
		sandbox_close(sb);
	}
	cr_assert_eq(mount_count(), mounts, "mounts before %d, after %d", mounts, mount_count());
}

/* Shutdown with parked sandboxes: nothing of this process stays. */
Test(gvisor_reuse, shutdown_removes_parked_sandboxes)
{
	start(200, 300);
	char a[40], b[40];
	one_ws("a", a);
	one_ws("b", b);
	stop();
	cr_assert(!container_exists(a) && !container_exists(b));
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "/run/judge/gvisor/%ld", (long)getpid());
	cr_assert(access(path, F_OK) < 0, "%s still exists", path);
	FILE *m = fopen("/proc/self/mountinfo", "r");
	char line[4096];
	while (m && fgets(line, sizeof(line), m))
		cr_assert(!strstr(line, path), "mount left: %s", line);
	if (m)
		fclose(m);
	config_defaults(&cfg); /* for the suite's fini */
}

/* Blocks of data held by open regular files on the filesystem dev (every
 * process's fds). */
static long long blocks_on(dev_t dev)
{
	long long n = 0;
	DIR *d = opendir("/proc");
	struct dirent *p;
	while (d && (p = readdir(d))) {
		if (p->d_name[0] < '0' || p->d_name[0] > '9')
			continue;
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "/proc/%s/fd", p->d_name);
		DIR *fd = opendir(path);
		struct dirent *f;
		while (fd && (f = readdir(fd))) {
			char fp[PATH_MAX + 300];
			struct stat st;
			snprintf(fp, sizeof(fp), "%s/%s", path, f->d_name);
			if (f->d_name[0] != '.' && stat(fp, &st) == 0 && st.st_dev == dev &&
			    S_ISREG(st.st_mode))
				n += st.st_blocks;
		}
		if (fd)
			closedir(fd);
	}
	if (d)
		closedir(d);
	return n;
}

Test(gvisor_reuse, the_next_workspace_does_not_pin_the_old_box)
{
	start(200, 300);
	char a[40], b[40];
	struct sandbox *sb = open_ws("k", 1);
	static char big[1 << 20];
	memset(big, 'x', sizeof(big));
	cr_assert_eq(sandbox_write_file(sb, "big", big, sizeof(big), 0644), 0);
	run_ok(sb, "mkdir d; echo y > d/f; cat big d/f > /dev/null; ls -R > /dev/null", NULL, 0, a);
	struct stat st;
	cr_assert_eq(stat(sandbox_box_path(sb), &st), 0);
	dev_t old = st.st_dev;
	sandbox_close(sb);
	sb = open_ws("k", 1);
	run_ok(sb, "ls; true", NULL, 0, b);
	cr_assert_str_eq(a, b);
	cr_assert_eq(stat(sandbox_box_path(sb), &st), 0);
	cr_assert_neq(st.st_dev, old, "the new box has the old one's device number");
	/* the sandbox still has files of the old box open (the sentry's caches):
	 * they must hold no data */
	long long n = blocks_on(old);
	cr_assert_eq(n, 0, "files of the closed box still hold %lld blocks", n);
	sandbox_close(sb);
}
