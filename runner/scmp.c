/* scmp: the seccomp policy as a data table (see scmp.h). */
#define _GNU_SOURCE
#include "runner/scmp.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/xalloc.h"

/* Calls a judged program never needs: kernel attack surface, namespaces,
 * mounts, tracing, keyrings, modules. They fail with the given errno. */
static const struct {
	const char *name;
	int err;
} deny_table[] = {
    {"ptrace", EPERM},
    {"process_vm_readv", EPERM},
    {"process_vm_writev", EPERM},
    {"mount", EPERM},
    {"umount2", EPERM},
    {"pivot_root", EPERM},
    {"chroot", EPERM},
    {"fsopen", EPERM},
    {"fsconfig", EPERM},
    {"fsmount", EPERM},
    {"fspick", EPERM},
    {"move_mount", EPERM},
    {"open_tree", EPERM},
    {"mount_setattr", EPERM},
    {"setns", EPERM},
    {"clone3", ENOSYS}, /* flags live in memory: make libc fall back to clone */
    {"keyctl", EPERM},
    {"add_key", EPERM},
    {"request_key", EPERM},
    {"bpf", EPERM},
    {"perf_event_open", EPERM},
    {"io_uring_setup", EPERM},
    {"io_uring_enter", EPERM},
    {"io_uring_register", EPERM},
    {"kexec_load", EPERM},
    {"kexec_file_load", EPERM},
    {"init_module", EPERM},
    {"finit_module", EPERM},
    {"delete_module", EPERM},
    {"reboot", EPERM},
    {"swapon", EPERM},
    {"swapoff", EPERM},
    {"acct", EPERM},
    {"userfaultfd", EPERM},
    {"open_by_handle_at", EPERM},
    {"name_to_handle_at", EPERM},
    {"lookup_dcookie", EPERM},
    {"quotactl", EPERM},
    {"quotactl_fd", EPERM},
    {"syslog", EPERM},
    {"iopl", EPERM},
    {"ioperm", EPERM},
    {"vhangup", EPERM},
    {"fanotify_init", EPERM},
    {"pidfd_getfd", EPERM},
    {"kcmp", EPERM},
    {"settimeofday", EPERM},
    {"clock_settime", EPERM},
    {"clock_adjtime", EPERM},
    {"adjtimex", EPERM},
    {"nfsservctl", EPERM},
    {"uselib", EPERM},
    {"sysfs", EPERM},
    {"_sysctl", EPERM},
};

/* clone() flags that would create namespaces: any of them → EPERM. */
static const unsigned long clone_ns_flags[] = {
    CLONE_NEWNS,  CLONE_NEWUSER, CLONE_NEWPID,	  CLONE_NEWNET,
    CLONE_NEWIPC, CLONE_NEWUTS,	 CLONE_NEWCGROUP,
};

int scmp_build(struct scmp_filter *f, char *err, size_t errlen)
{
	int ret = -1, rc, mfd = -1;
	const char *what = "seccomp_init";
	memset(f, 0, sizeof(*f));
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		xalloc_die(0); /* with a valid action, libseccomp's only reason for NULL */
	/* a binary tree of the syscall numbers, not a chain: a call walks ~13
	 * instructions, not ~60, and gVisor runs the filter against every number
	 * each time a task that holds it forks: ~0.3 ms (~8 %) less per fork, measured */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	what = "bad-arch action";
	/* the native arch only; other arches and x32 numbers take this action */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0)
		goto fail;
	for (size_t i = 0; i < sizeof deny_table / sizeof deny_table[0]; i++) {
		int nr = seccomp_syscall_resolve_name(deny_table[i].name);
		if (nr == __NR_SCMP_ERROR)
			continue; /* not on this architecture */
		what = deny_table[i].name;
		if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(deny_table[i].err), nr, 0)) < 0)
			goto fail;
	}
	what = "clone";
	for (size_t i = 0; i < sizeof clone_ns_flags / sizeof clone_ns_flags[0]; i++) {
		if ((rc = seccomp_rule_add(
			 ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
			 SCMP_A0(SCMP_CMP_MASKED_EQ, clone_ns_flags[i], clone_ns_flags[i]))) < 0)
			goto fail;
	}
	what = "unshare";
	/* every unshare but exactly CLONE_NEWIPC, which a run's entry makes under the
	 * filter when it inherits it from a zygote (zcore.c); a program cannot use it
	 * (no CAP_SYS_ADMIN), and a new IPC namespace gives nothing */
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
				   SCMP_A0(SCMP_CMP_NE, CLONE_NEWIPC))) < 0)
		goto fail;
	what = "personality";
	/* a program keeps the default personality: any other value (a change such as
	 * READ_IMPLIES_EXEC or ADDR_NO_RANDOMIZE, and also the 0xffffffff query) is
	 * refused; one comparison keeps the filter short, and it is compiled at
	 * every run */
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality), 1,
				   SCMP_A0(SCMP_CMP_NE, 0))) < 0)
		goto fail;
	what = "export";
	mfd = memfd_create("scmp", MFD_CLOEXEC);
	if (mfd < 0) {
		rc = -errno;
		goto fail;
	}
	if ((rc = seccomp_export_bpf(ctx, mfd)) < 0)
		goto fail;
	off_t size = lseek(mfd, 0, SEEK_END);
	if (size <= 0 || size % sizeof(struct sock_filter) ||
	    size / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		rc = -EINVAL;
		goto fail;
	}
	f->insns = xmalloc((size_t)size);
	if (pread(mfd, f->insns, (size_t)size, 0) != size) {
		rc = -EIO;
		goto fail;
	}
	f->len = (unsigned short)(size / sizeof(struct sock_filter));
	ret = 0;
	goto out;
fail:
	snprintf(err, errlen, "cannot build the seccomp filter (%s): %s", what, strerror(-rc));
	free(f->insns);
	f->insns = NULL;
out:
	if (mfd >= 0)
		close(mfd);
	if (ctx)
		seccomp_release(ctx);
	return ret;
}

int scmp_apply(const struct scmp_filter *f)
{
	struct sock_fprog prog = {.len = f->len, .filter = f->insns};
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return -errno;
	return 0;
}

void scmp_release(struct scmp_filter *f)
{
	free(f->insns);
	f->insns = NULL;
	f->len = 0;
}
