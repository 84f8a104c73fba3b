/* box_enter: what a gVisor run's program does before it becomes the program, after
 * its signals, session and stdio: box_init's child() before its execve, and a
 * zygote's child (runner/zygote/zcore.c) in place of it. Only system calls. */
#pragma once
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runner/gvisor/init/box_proto.h"

static inline void bx_limit(int res, int64_t v)
{
	struct rlimit rl = {.rlim_cur = (rlim_t)v, .rlim_max = (rlim_t)v};
	setrlimit(res, &rl);
}

/* The job's limits, its own IPC namespace, no capability, its uid and gid,
 * no_new_privs, /box and the seccomp filter. Returns 0, or the errno of the step
 * that failed. */
static inline int bx_enter(const struct bx_job *job, const struct sock_fprog *filter)
{
	if (job->cpu_ms > 0) {
		/* backstop of the poll: SIGXCPU one second after the limit, SIGKILL after two */
		struct rlimit rl = {.rlim_cur = (rlim_t)(job->cpu_ms / 1000 + 1),
				    .rlim_max = (rlim_t)(job->cpu_ms / 1000 + 2)};
		setrlimit(RLIMIT_CPU, &rl);
	}
	/* gVisor refuses a clone only when the count would pass the limit (Linux: reach
	 * it); measured: RLIMIT_NPROC n lets n + 1 tasks of the uid exist. So n - 1. */
	if (job->processes > 0)
		bx_limit(RLIMIT_NPROC, job->processes > 1 ? job->processes - 1 : 0);
	if (job->file_bytes > 0)
		bx_limit(RLIMIT_FSIZE, job->file_bytes);
	if (job->open_files > 0)
		bx_limit(RLIMIT_NOFILE, job->open_files);
	if (job->stack_kb > 0)
		bx_limit(RLIMIT_STACK, job->stack_kb * 1024);
	bx_limit(RLIMIT_CORE, 0);
	/* System V IPC objects live as long as their namespace: one per run, so none
	 * outlives it into the next run of the session */
	if (unshare(CLONE_NEWIPC) < 0)
		return errno;
	/* The bounding set keeps the four capabilities oci.c gives init: dropping
	 * them needs CAP_SETPCAP, which init does not have (the drops failed with
	 * EPERM, four trips through the sentry per run). Nothing can regain them:
	 * the program's uid is not 0, it holds no capability, and no_new_privs
	 * keeps an execve from granting any. */
	if (setgroups(0, NULL) < 0 || setresgid(job->gid, job->gid, job->gid) < 0 ||
	    setresuid(job->uid, job->uid, job->uid) < 0)
		return errno;
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    chdir("/box") < 0)
		return errno;
	if (filter->len > 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, filter) < 0)
		return errno;
	return 0;
}
