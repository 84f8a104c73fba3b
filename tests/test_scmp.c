/* test_scmp: the seccomp policy (runner/scmp.h) as the kernel applies it, in a
 * forked child of this root process: what it refuses, and the one unshare it
 * lets through (CLONE_NEWIPC alone, which a run's entry makes under a filter it
 * inherited from a zygote, runner/zygote/zcore.c). Needs root, as the entry
 * has CAP_SYS_ADMIN. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/scmp.h"

/* codes a child writes: one errno (0: the call succeeded) per probe */
enum { P_IPC, P_IPC_NS, P_NS, P_USER, P_MOUNT, P_PERSONALITY, P_CLONE_NS, NPROBES };

static int errno_of(long r)
{
	return r < 0 ? errno : 0;
}

/* Runs the probes in a child under the filter; their errnos in out. */
static void probe(int out[NPROBES])
{
	struct scmp_filter f;
	char err[256];
	cr_assert_eq(scmp_build(&f, err, sizeof err), 0, "%s", err);
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int r[NPROBES];
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || scmp_apply(&f) < 0)
			_exit(2);
		r[P_IPC] = errno_of(unshare(CLONE_NEWIPC));
		r[P_IPC_NS] = errno_of(unshare(CLONE_NEWIPC | CLONE_NEWNS));
		r[P_NS] = errno_of(unshare(CLONE_NEWNS));
		r[P_USER] = errno_of(unshare(CLONE_NEWUSER));
		r[P_MOUNT] = errno_of(mount("none", "/mnt", "tmpfs", 0, NULL));
		r[P_PERSONALITY] = errno_of(personality(READ_IMPLIES_EXEC));
		long c = syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0);
		if (c == 0)
			_exit(0); /* the clone's child, were it let through */
		if (c > 0)
			waitpid((pid_t)c, NULL, 0);
		r[P_CLONE_NS] = errno_of(c);
		(void)!write(p[1], r, sizeof r);
		_exit(0);
	}
	close(p[1]);
	cr_assert_eq(read(p[0], out, sizeof(int) * NPROBES), (ssize_t)(sizeof(int) * NPROBES));
	close(p[0]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the probe child ended with %#x", st);
	scmp_release(&f);
}

Test(scmp, refuses_namespaces_mounts_and_personality)
{
	int r[NPROBES];
	probe(r);
	cr_expect_eq(r[P_NS], EPERM, "unshare(CLONE_NEWNS): %s", strerror(r[P_NS]));
	cr_expect_eq(r[P_USER], EPERM, "unshare(CLONE_NEWUSER): %s", strerror(r[P_USER]));
	cr_expect_eq(r[P_IPC_NS], EPERM, "unshare(CLONE_NEWIPC | CLONE_NEWNS): %s",
		     strerror(r[P_IPC_NS]));
	cr_expect_eq(r[P_MOUNT], EPERM, "mount: %s", strerror(r[P_MOUNT]));
	cr_expect_eq(r[P_PERSONALITY], EPERM, "personality: %s", strerror(r[P_PERSONALITY]));
	cr_expect_eq(r[P_CLONE_NS], EPERM, "clone(CLONE_NEWNET): %s", strerror(r[P_CLONE_NS]));
}

Test(scmp, lets_a_runs_entry_make_its_ipc_namespace)
{
	int r[NPROBES];
	probe(r);
	/* root (as a zygote's child before it drops its uid): the kernel grants it */
	cr_expect_eq(r[P_IPC], 0, "unshare(CLONE_NEWIPC) under the filter: %s", strerror(r[P_IPC]));
}
