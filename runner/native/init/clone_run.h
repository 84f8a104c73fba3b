/* clone_run: clone3 whose child runs fn(arg) on a stack of its own and exits with
 * its value — for CLONE_VM children (vfork-like: the parent's memory, no copy).
 * In C, clone3 would return twice on one stack, so the child's side is assembly.
 * Used by native.c (the run's init) and ns_init.c (the program). */
#pragma once
#include <stdint.h>
#include <sys/syscall.h>

/* clone3's arguments up to cgroup (version 2, Linux 5.7); an older kernel takes
 * them as long as the fields it does not know are zero */
struct clone_args_v2 {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	uint64_t set_tid, set_tid_size, cgroup;
};

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

#if defined(__x86_64__)
/* Returns the child's pid, or -errno. ca->stack and stack_size must be set (the
 * top 16-aligned); the child must not return into the caller's frames. */
__attribute__((no_sanitize("address", "undefined"), unused)) static long
clone_run(struct clone_args_v2 *ca, int (*fn)(void *), void *arg)
{
	register long r12 __asm__("r12") = (long)fn;
	register long r13 __asm__("r13") = (long)arg;
	long ret;
	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 /* the child, on its own stack */
			 "xor %%ebp, %%ebp\n\t"
			 "mov %%r13, %%rdi\n\t"
			 "call *%%r12\n\t"
			 "mov %%eax, %%edi\n\t"
			 "mov %[nr_exit], %%eax\n\t"
			 "syscall\n\t"
			 "ud2\n"
			 "1:"
			 : "=a"(ret)
			 : "0"((long)SYS_clone3), "D"(ca), "S"(sizeof *ca), "r"(r12),
			   "r"(r13), [nr_exit] "i"(SYS_exit)
			 : "rcx", "r11", "memory", "cc");
	return ret;
}
#else
#include <errno.h>
#include <sched.h>
/* elsewhere glibc's clone(), which cannot start the child in a cgroup: a caller
 * that asked for one joins it by pid */
__attribute__((unused)) static long clone_run(struct clone_args_v2 *ca, int (*fn)(void *),
					      void *arg)
{
	if (ca->flags & CLONE_INTO_CGROUP)
		return -EINVAL;
	int pid = clone(fn, (char *)(uintptr_t)(ca->stack + ca->stack_size),
			(int)ca->flags | (int)ca->exit_signal, arg, (int *)(uintptr_t)ca->pidfd);
	return pid < 0 ? -errno : pid;
}
#endif
