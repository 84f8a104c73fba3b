/* scmp: the seccomp policy of sandboxed programs, as a data table compiled to BPF.
 *
 * Default allow; a foreign architecture (or the x32 ABI) kills the process; the
 * calls that reach kernel attack surface or namespaces fail with EPERM (clone3
 * with ENOSYS, so that libc falls back to clone, whose flags can be checked).
 */
#pragma once
#include <stddef.h>

struct sock_filter;

struct scmp_filter {
	struct sock_filter *insns; /* malloc'd BPF program */
	unsigned short len;	   /* number of instructions */
};

/* Compiles the policy with libseccomp into f (memory only, nothing applied).
 * Returns 0, or -1 with a message in err. Free with scmp_release. */
int scmp_build(struct scmp_filter *f, char *err, size_t errlen);
/* Installs f on the calling thread. Needs no_new_privs (or CAP_SYS_ADMIN). Makes
 * only a system call, so it is safe between fork and exec. Returns 0 or -errno. */
int scmp_apply(const struct scmp_filter *f);
void scmp_release(struct scmp_filter *f);
