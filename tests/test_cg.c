/* test_cg: the cgroup code against real hierarchies — v2 on the cgroup2 mount at
 * /sys/fs/cgroup/unified (core files only on this hybrid host) and v1 on the
 * controllers under /sys/fs/cgroup. Needs root. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "runner/cg.h"

#define V2_MOUNT "/sys/fs/cgroup/unified"
#define V1_BASE	 "/sys/fs/cgroup"

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A child of the test's process that dies with it: a failed assertion ends
 * the test's process, and a child left running (a spinner at full CPU) would
 * slow every later suite of the run. */
static pid_t fork_bound(void)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
	}
	return pid;
}

static pid_t spawn_sleeper(void)
{
	pid_t pid = fork_bound();
	if (pid == 0) {
		for (;;)
			pause();
	}
	cr_assert(pid > 0);
	return pid;
}

/* A child that burns ms of CPU time once it is in cg: it waits for the
 * parent's go, so none of its burning is counted outside (a child that began
 * at once burned half of it before the join at load, in a sanitizer run). */
static pid_t spawn_burner(struct cg *cg, int ms)
{
	int go[2];
	cr_assert_eq(pipe(go), 0);
	pid_t pid = fork_bound();
	if (pid == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		struct timespec a, b;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
		do
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
		while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
		_exit(0);
	}
	cr_assert(pid > 0);
	close(go[0]);
	cg_join(cg, pid);
	cr_assert_eq(write(go[1], "g", 1), 1);
	close(go[1]);
	return pid;
}

static void name_for(char *buf, size_t len, const char *what)
{
	snprintf(buf, len, "cgtest-%d-%s", (int)getpid(), what);
}

/* the common life cycle: create, join a forked child, populated, kill, remove */
static void life_cycle(struct cg_root *root, const char *sub)
{
	char name[64], err[512], dir[1024];
	struct cg cg;
	name_for(name, sizeof name, sub);
	cr_assert_eq(cg_create(root, name, &cg, err, sizeof err), 0, "%s", err);
	snprintf(dir, sizeof dir, "%s/%s", root->version == CG_V2 ? root->v2 : root->pids, name);
	cr_assert(is_dir(dir), "%s missing", dir);
	cr_assert_eq(cg_populated(&cg), 0);
	pid_t pid = spawn_sleeper();
	cr_assert_eq(cg_join(&cg, pid), 0);
	cr_assert_eq(cg_populated(&cg), 1);
	cr_assert_eq(cg_kill(&cg), 0);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	for (int i = 0; i < 100 && cg_populated(&cg) != 0; i++)
		usleep(1000);
	cr_assert_eq(cg_populated(&cg), 0);
	cr_assert_eq(cg_remove(&cg), 0);
	cr_assert(!is_dir(dir), "%s left behind", dir);
}

Test(cg_v2, life_cycle_on_unified)
{
	struct cg_root root;
	char err[512];
	if (!is_dir(V2_MOUNT "/cgroup.procs") && access(V2_MOUNT "/cgroup.procs", F_OK) < 0)
		cr_skip_test("no cgroup2 at " V2_MOUNT);
	cr_assert_eq(cg_root_v2(&root, V2_MOUNT "/judge-test", err, sizeof err), 0, "%s", err);
	cr_assert_eq(root.version, CG_V2);
	life_cycle(&root, "life");
	rmdir(V2_MOUNT "/judge-test");
}

Test(cg_v2, kill_whole_tree_with_cgroup_kill)
{
	struct cg_root root;
	struct cg cg;
	char err[512], name[64];
	cr_assert_eq(cg_root_v2(&root, V2_MOUNT "/judge-test", err, sizeof err), 0, "%s", err);
	name_for(name, sizeof name, "tree");
	cr_assert_eq(cg_create(&root, name, &cg, err, sizeof err), 0, "%s", err);
	/* a child that forks a grandchild and a setsid'ed great-grandchild */
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char go;
		close(pfd[1]);
		if (read(pfd[0], &go, 1) != 1)
			_exit(1);
		if (fork() == 0) {
			setsid();
			if (fork() == 0)
				for (;;)
					pause();
			for (;;)
				pause();
		}
		for (;;)
			pause();
	}
	close(pfd[0]);
	cr_assert_eq(cg_join(&cg, pid), 0);
	cr_assert_eq(write(pfd[1], "g", 1), 1);
	close(pfd[1]);
	usleep(50000);
	cr_assert_eq(cg_populated(&cg), 1);
	cr_assert_eq(cg_kill(&cg), 0);
	waitpid(pid, NULL, 0);
	for (int i = 0; i < 200 && cg_populated(&cg) != 0; i++)
		usleep(1000);
	cr_assert_eq(cg_populated(&cg), 0, "grandchildren survived cgroup.kill");
	cr_assert_eq(cg_remove(&cg), 0);
	rmdir(V2_MOUNT "/judge-test");
}

Test(cg_v2, clone_into_cgroup_starts_the_child_inside)
{
	struct cg_root root;
	struct cg cg;
	char err[512], name[64];
	cr_assert_eq(cg_root_v2(&root, V2_MOUNT "/judge-test", err, sizeof err), 0, "%s", err);
	name_for(name, sizeof name, "into");
	cr_assert_eq(cg_create(&root, name, &cg, err, sizeof err), 0, "%s", err);
	int fd = cg_clone_into_fd(&cg);
	cr_assert_geq(fd, 0);
	uint64_t args[11] = {0};
	args[0] = 0x200000000ULL; /* CLONE_INTO_CGROUP */
	args[4] = SIGCHLD;
	args[10] = (uint64_t)fd;
	pid_t pid = (pid_t)syscall(SYS_clone3, args, sizeof args);
	if (pid == 0)
		for (;;)
			pause();
	cr_assert_gt(pid, 0, "clone3: %s", strerror(errno));
	char path[512], procs[256] = "";
	snprintf(path, sizeof path, "%s/judge-test/%s/cgroup.procs", V2_MOUNT, name);
	FILE *f = fopen(path, "r");
	cr_assert(f);
	size_t n = fread(procs, 1, sizeof procs - 1, f);
	procs[n] = 0;
	fclose(f);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	char want[32];
	snprintf(want, sizeof want, "%d\n", (int)pid);
	cr_assert_str_eq(procs, want);
	cr_assert_eq(cg_remove(&cg), 0);
	rmdir(V2_MOUNT "/judge-test");
}

Test(cg_v1, no_clone_into_fd)
{
	struct cg_root root;
	struct cg cg;
	char err[512], name[64];
	cr_assert_eq(cg_root_v1(&root, V1_BASE, "judge-test", err, sizeof err), 0, "%s", err);
	name_for(name, sizeof name, "v1into");
	cr_assert_eq(cg_create(&root, name, &cg, err, sizeof err), 0, "%s", err);
	cr_assert_eq(cg_clone_into_fd(&cg), -1);
	int fds[CG_MAX_CTL];
	cr_assert_eq(cg_self_join_fds(&cg, fds), 3);
	cr_assert_eq(cg_remove(&cg), 0);
}

Test(cg_v2, limits_report_missing_controller_cleanly)
{
	struct cg_root root;
	struct cg cg;
	char err[512] = "", name[64];
	cr_assert_eq(cg_root_v2(&root, V2_MOUNT "/judge-test", err, sizeof err), 0, "%s", err);
	name_for(name, sizeof name, "lim");
	cr_assert_eq(cg_create(&root, name, &cg, err, sizeof err), 0, "%s", err);
	int rc = cg_set_limits(&cg, 65536, 0, err, sizeof err);
	if (access(V2_MOUNT "/cgroup.controllers", F_OK) == 0 && rc == 0) {
		/* a host whose cgroup2 has the memory controller: then it must work */
		cr_assert_eq(rc, 0);
	} else {
		cr_assert_eq(rc, -ENOENT, "rc %d: %s", rc, err);
		cr_assert(strstr(err, "memory.max"), "message: %s", err);
	}
	long long us;
	int crc = cg_cpu_us(&cg, &us);
	cr_assert(crc == 0 || crc == -ENOENT);
	cr_assert_eq(cg_remove(&cg), 0);
	rmdir(V2_MOUNT "/judge-test");
}

Test(cg_v1, life_cycle)
{
	struct cg_root root;
	char err[512];
	if (access(V1_BASE "/memory/tasks", F_OK) < 0)
		cr_skip_test("no cgroup v1 memory controller");
	cr_assert_eq(cg_root_v1(&root, V1_BASE, "judge-test", err, sizeof err), 0, "%s", err);
	cr_assert_eq(root.version, CG_V1);
	life_cycle(&root, "life");
}

Test(cg_v1, limits_cpu_and_oom)
{
	struct cg_root root;
	struct cg cg;
	char err[512], name[64], path[1024], buf[64];
	if (access(V1_BASE "/memory/tasks", F_OK) < 0)
		cr_skip_test("no cgroup v1 memory controller");
	cr_assert_eq(cg_root_v1(&root, V1_BASE, "judge-test", err, sizeof err), 0, "%s", err);
	name_for(name, sizeof name, "lim");
	cr_assert_eq(cg_create(&root, name, &cg, err, sizeof err), 0, "%s", err);
	cr_assert_eq(cg_set_limits(&cg, 32 * 1024, 20, err, sizeof err), 0, "%s", err);
	snprintf(path, sizeof path, "%s/%s/memory.limit_in_bytes", root.memory, name);
	FILE *f = fopen(path, "r");
	cr_assert(f);
	cr_assert(fgets(buf, sizeof buf, f));
	fclose(f);
	cr_assert_eq(atoll(buf), 32LL * 1024 * 1024);

	/* CPU: a child burning 150 ms of CPU time is counted */
	pid_t pid = spawn_burner(&cg, 150);
	int burned = 0;
	waitpid(pid, &burned, 0);
	cr_assert(WIFEXITED(burned) && WEXITSTATUS(burned) == 0, "the burner ended with %d",
		  burned);
	long long us = 0;
	cr_assert_eq(cg_cpu_us(&cg, &us), 0);
	cr_assert(us >= 100000, "cpu %lld us", us);

	/* memory: a child touching 128 MB is OOM-killed */
	pid = fork();
	if (pid == 0) {
		usleep(20000); /* let the parent move us first */
		for (int i = 0; i < 128; i++) {
			char *p = malloc(1 << 20);
			if (p)
				memset(p, 1, 1 << 20);
		}
		_exit(0);
	}
	cr_assert_eq(cg_join(&cg, pid), 0);
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "hog was not killed");
	long ooms = 0, peak = 0;
	cr_assert_eq(cg_oom_kills(&cg, &ooms), 0);
	cr_assert(ooms >= 1);
	cr_assert_eq(cg_memory_peak_kb(&cg, &peak), 0);
	cr_assert(peak >= 16 * 1024 && peak <= 33 * 1024, "peak %ld kB", peak);
	cr_assert_eq(cg_remove(&cg), 0);
}

/* What a dead owner left is found by its id in the name (runner/owner.h),
 * never by a pid: another owner's cgroups, and one whose id only begins
 * like it, stay. */
Test(cg, owner_reclaim_takes_only_that_owner)
{
	struct cg_root root;
	char err[512], dir[1024];
	if (access(V2_MOUNT "/cgroup.procs", F_OK) < 0)
		cr_skip_test("no cgroup2 at " V2_MOUNT);
	cr_assert_eq(cg_root_v2(&root, V2_MOUNT "/judge-test", err, sizeof err), 0, "%s", err);
	struct cg a, a2, b, c;
	cr_assert_eq(cg_create(&root, "ownt-o1x1-1", &a, err, sizeof err), 0, "%s", err);
	cr_assert_eq(cg_create(&root, "judge-o1x1-7-2", &a2, err, sizeof err), 0, "%s", err);
	cr_assert_eq(cg_create(&root, "ownt-o2x1-1", &b, err, sizeof err), 0, "%s", err);
	cr_assert_eq(cg_create(&root, "ownt-o1x12-1", &c, err, sizeof err), 0, "%s", err);
	/* a child cgroup inside, and a process that must die first */
	snprintf(dir, sizeof dir, "%s/ownt-o1x1-1/sub", root.v2);
	cr_assert_eq(mkdir(dir, 0755), 0);
	pid_t sleeper = spawn_sleeper();
	cr_assert_eq(cg_join(&a, sleeper), 0);
	cr_assert_eq(cg_owner_kill(root.v2, "o1x1"), 2);
	int st;
	waitpid(sleeper, &st, 0);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the owner's process was not killed");
	cr_assert_eq(cg_owner_remove(root.v2, "o1x1"), 2);
	cg_close(&a);
	cg_close(&a2);
	snprintf(dir, sizeof dir, "%s/ownt-o1x1-1", root.v2);
	cr_assert(!is_dir(dir), "the owner's cgroup kept");
	snprintf(dir, sizeof dir, "%s/judge-o1x1-7-2", root.v2);
	cr_assert(!is_dir(dir), "the owner's cgroup kept");
	snprintf(dir, sizeof dir, "%s/ownt-o2x1-1", root.v2);
	cr_assert(is_dir(dir), "another owner's cgroup removed");
	snprintf(dir, sizeof dir, "%s/ownt-o1x12-1", root.v2);
	cr_assert(is_dir(dir), "a cgroup of an owner whose id begins alike removed");
	cr_assert_eq(cg_remove(&b), 0);
	cr_assert_eq(cg_remove(&c), 0);
	rmdir(V2_MOUNT "/judge-test");
}

Test(cg, detect)
{
	struct cg_root root;
	char err[512] = "";
	cr_assert_eq(cg_detect(&root, "/nonexistent-cgroup-root", "judge", err, sizeof err), -1);
	cr_assert(strstr(err, "no usable cgroups"), "message: %s", err);
	cr_assert_eq(cg_detect(&root, "auto", "judge", err, sizeof err), 0, "%s", err);
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
		cr_assert_eq(root.version, CG_V2);
	else
		cr_assert_eq(root.version, CG_V1);
}

/* Makes <base>/<h>/<sub>/<name> in every v1 hierarchy, as runsc does for a
 * container; returns how many. */
static int make_everywhere(const char *sub, const char *name)
{
	static const char *const hier[] = {"memory",  "pids",	 "cpuacct", "cpu",
					   "devices", "freezer", "blkio",   NULL};
	int n = 0;
	for (const char *const *h = hier; *h; h++) {
		char dir[1024];
		snprintf(dir, sizeof dir, V1_BASE "/%s", *h);
		if (!is_dir(dir))
			continue;
		snprintf(dir, sizeof dir, V1_BASE "/%s/%s", *h, sub);
		mkdir(dir, 0755);
		snprintf(dir, sizeof dir, V1_BASE "/%s/%s/%s", *h, sub, name);
		if (mkdir(dir, 0755) == 0)
			n++;
	}
	return n;
}

/* Removes the parent <base>/<h>/<sub> of every hierarchy (when empty). */
static void remove_parents(const char *sub)
{
	static const char *const hier[] = {"memory",  "pids",	 "cpuacct", "cpu",
					   "devices", "freezer", "blkio",   NULL};
	for (const char *const *h = hier; *h; h++) {
		char dir[1024];
		snprintf(dir, sizeof dir, V1_BASE "/%s/%s", *h, sub);
		rmdir(dir);
	}
}

static int count_everywhere(const char *sub, const char *name)
{
	static const char *const hier[] = {"memory",  "pids",	 "cpuacct", "cpu",
					   "devices", "freezer", "blkio",   NULL};
	int n = 0;
	for (const char *const *h = hier; *h; h++) {
		char dir[1024];
		snprintf(dir, sizeof dir, V1_BASE "/%s/%s/%s", *h, sub, name);
		n += is_dir(dir);
	}
	return n;
}

Test(cg_v1, oci_open_read_limit_and_remove_everywhere)
{
	struct cg_root root;
	struct cg cg;
	char err[512], name[64];
	if (access(V1_BASE "/memory/tasks", F_OK) < 0)
		cr_skip_test("no cgroup v1 memory controller");
	cr_assert_eq(cg_root_oci(&root, NULL, "judge-test-oci", err, sizeof err), 0, "%s", err);
	cr_assert_eq(root.version, CG_V1);
	cr_assert(root.every_v1);
	name_for(name, sizeof name, "oci");
	cr_assert_eq(cg_open(&root, name, &cg), -ENOENT, "nothing made yet");
	cr_assert_eq(cg_remove(&cg), 0, "removing nothing is fine");
	int made = make_everywhere("judge-test-oci", name);
	cr_assert_gt(made, 3, "only %d hierarchies", made);
	cr_assert_eq(cg_open(&root, name, &cg), 0);

	/* limits may go down and up again (v1 memsw ordering) */
	cr_assert_eq(cg_set_limits(&cg, 64 * 1024, 100, err, sizeof err), 0, "%s", err);
	cr_assert_eq(cg_set_limits(&cg, 32 * 1024, 50, err, sizeof err), 0, "%s", err);
	cr_assert_eq(cg_set_limits(&cg, 96 * 1024, 200, err, sizeof err), 0, "%s", err);

	/* a sleeper with a thread shows up in the lists and counters */
	pid_t pid = spawn_sleeper();
	cr_assert_eq(cg_join(&cg, pid), 0);
	pid_t ids[16];
	cr_assert_eq(cg_list(&cg, false, ids, 16), 1);
	cr_assert_eq(ids[0], pid);
	cr_assert_eq(cg_list(&cg, true, ids, 16), 1);
	long n = -1;
	cr_assert_eq(cg_pids_current(&cg, &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_eq(cg_pids_limit_hits(&cg, &n), 0);
	cr_assert_eq(n, 0);
	cr_assert_eq(cg_memory_failcnt(&cg, &n), 0);
	cr_assert_geq(n, 0);

	/* remove: kills the sleeper and clears every hierarchy, not only ours */
	cr_assert_eq(cg_remove(&cg), 0);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFSIGNALED(st));
	cr_assert_eq(count_everywhere("judge-test-oci", name), 0);
	remove_parents("judge-test-oci");
}

static void count_parent(const char *parent, void *arg)
{
	(void)parent;
	(*(int *)arg)++;
}

/* runsc makes a container's cgroups in every hierarchy: the owner's parents
 * name them all (whether runsc made them yet or not), and the reclaim there
 * takes them and their children. */
Test(cg_v1, oci_owner_reclaim_covers_every_hierarchy_and_children)
{
	struct cg_root root;
	char err[512], child[1024];
	if (access(V1_BASE "/memory/tasks", F_OK) < 0)
		cr_skip_test("no cgroup v1 memory controller");
	cr_assert_eq(cg_root_oci(&root, "auto", "judge-test-oci", err, sizeof err), 0, "%s", err);
	int parents = 0;
	cg_root_parents(&root, count_parent, &parents);
	cr_assert_geq(parents, 7, "every hierarchy is a parent (%d)", parents);
	cr_assert_gt(make_everywhere("judge-test-oci", "jgv-o9x9-1"), 3);
	cr_assert_gt(make_everywhere("judge-test-oci", "jgv-o8x9-1"), 3);
	snprintf(child, sizeof child, V1_BASE "/memory/judge-test-oci/jgv-o9x9-1/sub");
	cr_assert_eq(mkdir(child, 0755), 0);
	int removed = 0;
	static const char *const hier[] = {"memory",  "pids",	 "cpuacct", "cpu",
					   "devices", "freezer", "blkio",   NULL};
	for (const char *const *h = hier; *h; h++) {
		char parent[1024];
		snprintf(parent, sizeof parent, V1_BASE "/%s/judge-test-oci", *h);
		removed += cg_owner_remove(parent, "o9x9");
	}
	cr_assert_gt(removed, 3);
	cr_assert_eq(count_everywhere("judge-test-oci", "jgv-o9x9-1"), 0,
		     "the owner's cgroups kept");
	cr_assert_gt(count_everywhere("judge-test-oci", "jgv-o8x9-1"), 3,
		     "another owner's removed");
	struct cg cg;
	cr_assert_eq(cg_open(&root, "jgv-o8x9-1", &cg), 0);
	cr_assert_eq(cg_remove(&cg), 0);
	cr_assert_eq(count_everywhere("judge-test-oci", "jgv-o8x9-1"), 0);
	remove_parents("judge-test-oci");
}

Test(cg, oci_root_checks_its_parent_name)
{
	struct cg_root root;
	char err[512] = "";
	cr_assert_eq(cg_root_oci(&root, NULL, "a/b", err, sizeof err), -1);
	cr_assert(strstr(err, "bad cgroup parent"), "message: %s", err);
	cr_assert_eq(cg_root_oci(&root, NULL, "", err, sizeof err), -1);
}

Test(cg_v2, open_existing_on_unified)
{
	struct cg_root root;
	struct cg cg;
	char err[512], name[64], dir[1024];
	if (!is_dir(V2_MOUNT))
		cr_skip_test("no cgroup2 mount at " V2_MOUNT);
	cr_assert_eq(cg_root_v2(&root, V2_MOUNT "/judge-test", err, sizeof err), 0, "%s", err);
	name_for(name, sizeof name, "open");
	snprintf(dir, sizeof dir, "%s/%s", root.v2, name);
	cr_assert_eq(mkdir(dir, 0755), 0);
	cr_assert_eq(cg_open(&root, name, &cg), 0);
	cr_assert_geq(cg_clone_into_fd(&cg), 0, "the folder fd is open");
	pid_t pid = spawn_sleeper();
	cr_assert_eq(cg_join(&cg, pid), 0);
	pid_t ids[4];
	cr_assert_eq(cg_list(&cg, false, ids, 4), 1);
	cr_assert_eq(ids[0], pid);
	cr_assert_eq(cg_remove(&cg), 0);
	waitpid(pid, NULL, 0);
	cr_assert(!is_dir(dir));
	rmdir(V2_MOUNT "/judge-test");
}

static pid_t spawn_spinner(void)
{
	pid_t pid = fork_bound();
	if (pid == 0) {
		for (volatile unsigned long n = 0;; n++)
			;
	}
	cr_assert(pid > 0);
	return pid;
}

/* A session's quota (cg_add_cpu, cg_set_cpu): two busy children joined to a
 * cgroup limited to 0.2 CPU use at most that (plus a margin) over a window,
 * as a ratio of CPU time to the window, and the kernel reports throttling;
 * unlimited again writes -1; removal takes the cpu hierarchy's folder too. */
Test(cg_v1, cpu_quota_holds_busy_children)
{
	struct cg_root root;
	struct cg cg;
	char err[512], name[64], path[1024], buf[64];
	if (access(V1_BASE "/cpu/cpu.cfs_quota_us", F_OK) < 0)
		cr_skip_test("no cgroup v1 cpu controller");
	cr_assert_eq(cg_root_v1(&root, V1_BASE, "judge-test", err, sizeof err), 0, "%s", err);
	name_for(name, sizeof name, "cpuq");
	cr_assert_eq(cg_create(&root, name, &cg, err, sizeof err), 0, "%s", err);
	cr_assert_eq(cg_add_cpu(&cg, err, sizeof err), 0, "%s", err);
	cr_assert_eq(cg_set_cpu(&cg, 200, err, sizeof err), 0, "%s", err);
	const char *dir = root.cpu[0] ? root.cpu : root.cpuacct;
	snprintf(path, sizeof path, "%s/%s/cpu.cfs_quota_us", dir, name);
	FILE *f = fopen(path, "r");
	cr_assert(f, "%s", path);
	cr_assert(fgets(buf, sizeof buf, f));
	fclose(f);
	cr_assert_eq(atoll(buf), 20000); /* 0.2 of the 100 ms period */
	if (root.cpu[0]) {
		int fds[CG_MAX_CTL];
		cr_assert_eq(cg_self_join_fds(&cg, fds), 4);
	}
	pid_t a = spawn_spinner(), b = spawn_spinner();
	cr_assert_eq(cg_join(&cg, a), 0);
	cr_assert_eq(cg_join(&cg, b), 0);
	long long u0 = 0, u1 = 0, t0 = 0, t1 = 0;
	cr_assert_eq(cg_cpu_us(&cg, &u0), 0);
	int64_t w0 = clock_mono_us();
	usleep(1500 * 1000);
	cr_assert_eq(cg_cpu_us(&cg, &u1), 0);
	int64_t w1 = clock_mono_us();
	double ratio = (double)(u1 - u0) / (double)(w1 - w0);
	cr_assert(ratio <= 0.3, "two spinners used %.3f CPU under a 0.2 quota", ratio);
	cr_assert(u1 > u0, "the spinners' CPU is counted");
	/* on a busy machine the spinners may not reach the quota at once: the
	 * kernel reports throttling once they do (10 s at most) */
	cr_assert_eq(cg_cpu_throttled_us(&cg, &t0), 0);
	for (int i = 0; i < 100 && t1 <= 0; i++) {
		usleep(100 * 1000);
		cr_assert_eq(cg_cpu_throttled_us(&cg, &t1), 0);
	}
	cr_assert(t1 > 0, "no throttling reported (first read %lld us)", t0);
	cr_assert_eq(cg_set_cpu(&cg, 0, err, sizeof err), 0, "%s", err);
	f = fopen(path, "r");
	cr_assert(f);
	cr_assert(fgets(buf, sizeof buf, f));
	fclose(f);
	cr_assert_eq(atoll(buf), -1);
	cr_assert_eq(cg_remove(&cg), 0);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	cr_assert(!is_dir(path), "%s left behind", path);
}

/* Without cg_add_cpu a v1 cgroup has no cpu.* of its own (where cpu is a
 * hierarchy apart): cg_set_cpu says so instead of limiting nothing silently. */
Test(cg_v1, cpu_quota_needs_add_cpu)
{
	struct cg_root root;
	struct cg cg;
	char err[512] = "", name[64];
	cr_assert_eq(cg_root_v1(&root, V1_BASE, "judge-test", err, sizeof err), 0, "%s", err);
	if (!root.cpu[0])
		cr_skip_test("cpu is co-mounted with cpuacct here");
	name_for(name, sizeof name, "nocpu");
	cr_assert_eq(cg_create(&root, name, &cg, err, sizeof err), 0, "%s", err);
	cr_assert_eq(cg_set_cpu(&cg, 500, err, sizeof err), -ENOENT);
	cr_assert(strstr(err, "no cpu controller"), "%s", err);
	cr_assert_eq(cg_remove(&cg), 0);
}

/* Reads a number from dir/name/file. */
static long long read_num(const char *dir, const char *name, const char *file)
{
	char path[1024], buf[64] = "";
	snprintf(path, sizeof path, "%s/%s/%s", dir, name, file);
	FILE *f = fopen(path, "r");
	cr_assert(f, "%s", path);
	cr_assert(fgets(buf, sizeof buf, f));
	fclose(f);
	return atoll(buf);
}

/* A session's CPU weight (cg_set_cpu_weight): v1 cpu.shares = weight × 1024 /
 * 100, clamped to the v2 range; two sibling cgroups of weights 100 and 400
 * whose busy children share one CPU split it about 1:4 (asserted loosely, as
 * a ratio: the heavier gets at least twice the lighter's CPU). */
Test(cg_v1, cpu_weight_sets_shares_and_splits_a_cpu)
{
	struct cg_root root;
	struct cg light, heavy;
	char err[512], nl[64], nh[64];
	if (access(V1_BASE "/cpu/cpu.shares", F_OK) < 0)
		cr_skip_test("no cgroup v1 cpu controller");
	cr_assert_eq(cg_root_v1(&root, V1_BASE, "judge-test", err, sizeof err), 0, "%s", err);
	name_for(nl, sizeof nl, "wlight");
	name_for(nh, sizeof nh, "wheavy");
	cr_assert_eq(cg_create(&root, nl, &light, err, sizeof err), 0, "%s", err);
	cr_assert_eq(cg_create(&root, nh, &heavy, err, sizeof err), 0, "%s", err);
	cr_assert_eq(cg_add_cpu(&light, err, sizeof err), 0, "%s", err);
	cr_assert_eq(cg_add_cpu(&heavy, err, sizeof err), 0, "%s", err);
	const char *dir = root.cpu[0] ? root.cpu : root.cpuacct;
	cr_assert_eq(cg_set_cpu_weight(&light, 1, err, sizeof err), 0, "%s", err);
	cr_assert_eq(read_num(dir, nl, "cpu.shares"), 10);
	cr_assert_eq(cg_set_cpu_weight(&light, 20000, err, sizeof err), 0, "%s", err);
	cr_assert_eq(read_num(dir, nl, "cpu.shares"), 102400, "clamped to 10000");
	cr_assert_eq(cg_set_cpu_weight(&light, 100, err, sizeof err), 0, "%s", err);
	cr_assert_eq(read_num(dir, nl, "cpu.shares"), 1024);
	cr_assert_eq(cg_set_cpu_weight(&heavy, 400, err, sizeof err), 0, "%s", err);
	cr_assert_eq(read_num(dir, nh, "cpu.shares"), 4096);
	if (root.cpu[0]) {
		int fds[CG_MAX_CTL];
		cr_assert_eq(cg_self_join_fds(&light, fds), 4);
	}
	/* both on the first CPU this test may use */
	cpu_set_t all, one;
	cr_assert_eq(sched_getaffinity(0, sizeof all, &all), 0);
	int cpu = 0;
	while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &all))
		cpu++;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	pid_t a = spawn_spinner(), b = spawn_spinner();
	cr_assert_eq(sched_setaffinity(a, sizeof one, &one), 0);
	cr_assert_eq(sched_setaffinity(b, sizeof one, &one), 0);
	cr_assert_eq(cg_join(&light, a), 0);
	cr_assert_eq(cg_join(&heavy, b), 0);
	long long l0 = 0, l1 = 0, h0 = 0, h1 = 0;
	cr_assert_eq(cg_cpu_us(&light, &l0), 0);
	cr_assert_eq(cg_cpu_us(&heavy, &h0), 0);
	usleep(1500 * 1000);
	cr_assert_eq(cg_cpu_us(&light, &l1), 0);
	cr_assert_eq(cg_cpu_us(&heavy, &h1), 0);
	double ratio = (double)(h1 - h0) / (double)(l1 - l0 > 0 ? l1 - l0 : 1);
	cr_log_info("weights 400:100 on one CPU: CPU %lld us : %lld us (%.2f)", h1 - h0, l1 - l0,
		    ratio);
	cr_assert(h1 > h0, "the heavier one ran");
	cr_assert(ratio >= 2, "weights 400:100 split one CPU %.2f:1", ratio);
	cr_assert_eq(cg_remove(&light), 0);
	cr_assert_eq(cg_remove(&heavy), 0);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
}
