/* x32_and_int80_syscalls: system calls through the x32 ABI and the 32-bit int 0x80
 * gate, which a filter written for x86-64 numbers would not see. Each is tried in
 * a child, which must die by SIGSYS (native: seccomp kills a foreign
 * architecture) or at least get no answer; prints LEAK when one gets through. */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void try(const char *what, int x32)
{
	pid_t pid = fork();
	if (pid == 0) {
		long ret;
		if (x32) /* getpid (39) with the x32 bit */
			__asm__ volatile("syscall"
					 : "=a"(ret)
					 : "a"(0x40000000L | 39)
					 : "rcx", "r11", "memory");
		else /* getpid (20) through int 0x80 */
			__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
		if (ret > 0)
			printf("LEAK %s getpid returned %ld\n", what, ret);
		else
			printf("%s refused (%ld)\n", what, ret);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st))
		printf("%s killed by signal %d\n", what, WTERMSIG(st));
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	try("x32", 1);
	try("int80", 0);
	puts("done");
	return 0;
}
