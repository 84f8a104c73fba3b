/* test_owner: owner folders (runner/owner.h) against the real host — a dead
 * owner's mounts, cgroups and runsc processes are reclaimed, a live owner's
 * never, whatever the pids. Each test uses a box_root of its own under /tmp and
 * a cgroup parent of its own, so it sees only what it made (other suites run
 * sandboxes on this machine at the same time). Needs root. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner/cg.h"
#include "runner/owner.h"

static char root[256];	   /* this test's box_root */
static char cgname[64];	   /* this test's cgroup parent name */
static char cgdir[512];	   /* its v1 memory folder */
static struct cg_root cgr; /* cgroups under it */

static void setup(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root");
	snprintf(root, sizeof root, "/tmp/judge-owner-test.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	snprintf(cgname, sizeof cgname, "judge-owner-test-%d", (int)getpid());
	char err[512];
	cr_assert_eq(cg_detect(&cgr, "auto", cgname, err, sizeof err), 0, "%s", err);
	snprintf(cgdir, sizeof cgdir, "%s", cgr.version == CG_V2 ? cgr.v2 : cgr.memory);
}

static void rmdir_parents(const char *parent, void *arg)
{
	(void)arg;
	rmdir(parent);
}

static void teardown(void)
{
	if (!root[0])
		return;
	/* whatever a failed test left: this test's folders only */
	char cmd[900];
	snprintf(cmd, sizeof cmd,
		 "grep ' %s/' /proc/self/mountinfo | cut -d' ' -f5 | sort -r | xargs -r umount -l; "
		 "rm -rf %s",
		 root, root);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", root);
	cg_root_parents(&cgr, rmdir_parents, NULL);
}

TestSuite(owner, .init = setup, .fini = teardown);

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int mounts_below(const char *dir)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], mp[4096];
	int n = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1 &&
		    !strncmp(mp, dir, strlen(dir)))
			n++;
	if (f)
		fclose(f);
	return n;
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.' || (e->d_name[1] && strcmp(e->d_name, ".."));
	if (d)
		closedir(d);
	return n;
}

static void note_parent(const char *parent, void *arg)
{
	(void)arg;
	owner_note_cgroup_parent(parent);
}

/* True once pid runs the program path (its exec done), within ~5 s. */
static bool execd(pid_t pid, const char *path)
{
	for (int i = 0; i < 500; i++) {
		char link[64], target[256];
		snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (n > 0) {
			target[n] = 0;
			char real[PATH_MAX];
			if (realpath(path, real) && !strcmp(target, real))
				return true;
		}
		usleep(10000);
	}
	return false;
}

/* A handle on pid that a reused pid cannot fool: pid_max is 32768 here and a
 * busy test run wraps it, so a killed process's number may name a new one. */
static int hold(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	cr_assert(fd >= 0, "pidfd_open(%d): %s", (int)pid, strerror(errno));
	return fd;
}

/* Whether the process held by pidfd has ended (a zombie counts) within 10 s:
 * a loaded machine takes its time to run a killed process's exit. */
static bool gone(int pidfd)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	return poll(&p, 1, 10000) == 1;
}

/* A process that owns what a worker's sandboxes would: a tmpfs box with a
 * file, a cgroup "judge-<id>-1" with a process inside, a process whose
 * arguments name its runsc --root. It writes its id on fd, then waits to be
 * killed (it dies with the test). */
static pid_t fake_worker(int fd, int *inmate, int *runsc)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		char err[512], box[4200], name[64], rootarg[4200];
		if (owner_open(root, err, sizeof err) < 0)
			_exit(2);
		snprintf(box, sizeof box, "%s/box-1", owner_dir());
		if (mkdir(box, 0755) < 0 || mount("judge-box", box, "tmpfs", 0, "size=1m") < 0)
			_exit(3);
		strcat(box, "/user-data");
		int f = open(box, O_WRONLY | O_CREAT, 0600);
		if (f < 0 || write(f, "secret", 6) != 6)
			_exit(4);
		close(f);
		cg_root_parents(&cgr, note_parent, NULL);
		struct cg cg;
		snprintf(name, sizeof name, "judge-%s-1", owner_id());
		if (cg_create(&cgr, name, &cg, err, sizeof err) < 0)
			_exit(5);
		/* exec'd, as every process of a sandbox is: a fork that does not
		 * exec holds the owner's lock (its fd) with it */
		pid_t in = fork();
		if (in == 0) {
			execl("/bin/sleep", "sleep", "1000", (char *)NULL);
			_exit(127);
		}
		if (cg_join(&cg, in) < 0)
			_exit(6);
		snprintf(rootarg, sizeof rootarg, "--root=%s/runsc", owner_dir());
		pid_t rs = fork();
		if (rs == 0) {
			execl("/bin/sh", "sh", "-c", "while :; do sleep 1; done", rootarg,
			      (char *)NULL);
			_exit(127);
		}
		dprintf(p[1], "%s %d %d\n", owner_id(), (int)in, (int)rs);
		close(p[1]);
		for (;;)
			pause();
	}
	close(p[1]);
	char buf[128] = "";
	cr_assert_gt(read(p[0], buf, sizeof buf - 1), 0, "the fake worker did not start");
	close(p[0]);
	int in = 0, rs = 0;
	char id[64];
	cr_assert_eq(sscanf(buf, "%63s %d %d", id, &in, &rs), 3);
	/* until both have exec'd: a child between fork and exec still holds the
	 * owner's lock, and the owner would not look dead yet */
	cr_assert(execd(in, "/bin/sleep") && execd(rs, "/bin/sh"),
		  "the fake sandbox did not start");
	*inmate = hold(in);
	*runsc = hold(rs);
	dprintf(fd, "%s", id);
	return pid;
}

Test(owner, dead_owner_is_reclaimed_live_one_never)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	int inmate, runsc; /* pidfds */
	pid_t w = fake_worker(p[1], &inmate, &runsc);
	char id[64] = "";
	cr_assert_gt(read(p[0], id, sizeof id - 1), 0);
	char dir[512], cgpath[700], box[600];
	snprintf(dir, sizeof dir, "%s/owners/%s", root, id);
	snprintf(cgpath, sizeof cgpath, "%s/judge-%s-1", cgdir, id);
	snprintf(box, sizeof box, "%s/box-1/user-data", dir);
	cr_assert(access(box, F_OK) == 0, "the box has its file");

	/* alive: nothing of it is touched */
	cr_assert_eq(owner_reclaim_dead(root), 0);
	cr_assert(is_dir(dir) && is_dir(cgpath) && access(box, F_OK) == 0);
	cr_assert(!poll(&(struct pollfd){.fd = inmate, .events = POLLIN}, 1, 0));

	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	cr_assert_eq(owner_reclaim_dead(root), 1);
	cr_assert(!is_dir(dir), "the dead owner's folder stayed");
	cr_assert_eq(mounts_below(root), 0, "its box stayed mounted");
	cr_assert(!is_dir(cgpath), "its cgroup stayed");
	cr_assert(gone(inmate), "the process in its cgroup lives on");
	cr_assert(gone(runsc), "its runsc process lives on");
	cr_assert_eq(entries(dir), 0);
	/* again: nothing more to do */
	cr_assert_eq(owner_reclaim_dead(root), 0);
	waitpid(-1, NULL, WNOHANG);
}

/* Two owners side by side (two workers on one host, or two test suites): each
 * one's reclaim leaves the other alone; the own folder is never reclaimed. */
Test(owner, owners_side_by_side)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	int inmate, runsc; /* pidfds */
	pid_t w = fake_worker(p[1], &inmate, &runsc);
	char other[64] = "", err[512];
	cr_assert_gt(read(p[0], other, sizeof other - 1), 0);
	cr_assert_eq(owner_open(root, err, sizeof err), 0, "%s", err);
	cr_assert_str_neq(owner_id(), other);
	char mine[600], theirs[600];
	snprintf(mine, sizeof mine, "%s", owner_dir());
	snprintf(theirs, sizeof theirs, "%s/owners/%s", root, other);
	cr_assert_eq(owner_reclaim_dead(root), 0);
	cr_assert(is_dir(mine) && is_dir(theirs));
	/* open again in the same process: the same owner */
	cr_assert_eq(owner_open(root, err, sizeof err), 0);
	cr_assert_str_eq(owner_dir(), mine);
	/* our own reclaim keeps the folder and its lock, and removes what is in it */
	char sub[700];
	snprintf(sub, sizeof sub, "%s/box-9", mine);
	cr_assert_eq(mkdir(sub, 0755), 0);
	cr_assert_eq(mount("judge-box", sub, "tmpfs", 0, "size=1m"), 0);
	struct owner_counts c = {0};
	owner_reclaim_self(&c);
	cr_assert_eq(c.mounts, 1);
	cr_assert(is_dir(mine) && !is_dir(sub));
	cr_assert(is_dir(theirs), "another owner's folder went with ours");
	cr_assert_eq(owner_close(), 0, "a clean owner had things left");
	cr_assert(!is_dir(mine));
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	cr_assert_eq(owner_reclaim_dead(root), 1);
	cr_assert(gone(inmate) && gone(runsc));
}

/* A folder being made (".<id>", not yet locked) is left alone while it is
 * young, and reclaimed when a process died making it. */
Test(owner, folder_being_made)
{
	char making[600];
	snprintf(making, sizeof making, "%s/owners", root);
	mkdir(making, 0755);
	snprintf(making, sizeof making, "%s/owners/.o1x1", root);
	cr_assert_eq(mkdir(making, 0755), 0);
	cr_assert_eq(owner_reclaim_dead(root), 0);
	cr_assert(is_dir(making));
	struct timespec old[2] = {{.tv_sec = time(NULL) - 600}, {.tv_sec = time(NULL) - 600}};
	cr_assert_eq(utimensat(AT_FDCWD, making, old, 0), 0);
	cr_assert_eq(owner_reclaim_dead(root), 1);
	cr_assert(!is_dir(making));
}
