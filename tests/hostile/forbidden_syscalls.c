/* forbidden_syscalls: mount, unshare, ptrace, keyctl, io_uring, bpf, perf, clone with
 * namespace flags, setns, personality; prints LEAK for each that succeeds. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void check(const char *what, long rc)
{
	if (rc >= 0)
		printf("LEAK %s succeeded\n", what);
	else
		printf("%s refused\n", what);
}

int main(void)
{
	check("mount tmpfs", mount("none", "/tmp", "tmpfs", 0, NULL));
	check("unshare user", unshare(CLONE_NEWUSER));
	check("unshare mount", unshare(CLONE_NEWNS));
	check("unshare net", unshare(CLONE_NEWNET));
	check("ptrace attach 1", ptrace(PTRACE_ATTACH, 1, NULL, NULL));
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	check("ptrace attach child", ptrace(PTRACE_ATTACH, child, NULL, NULL));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	check("keyctl", syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0));
	check("add_key", syscall(SYS_add_key, "user", "k", "v", 1, -3));
	char params[120];
	memset(params, 0, sizeof params);
	check("io_uring_setup", syscall(SYS_io_uring_setup, 4, params));
	check("bpf", syscall(SYS_bpf, 0, NULL, 0));
	char attr[128];
	memset(attr, 0, sizeof attr);
	check("perf_event_open", syscall(SYS_perf_event_open, attr, 0, -1, -1, 0));
	long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	check("clone newuser", pid);
	int fd = open("/proc/1/ns/mnt", O_RDONLY);
	check("setns", fd >= 0 ? setns(fd, 0) : -1);
	check("personality READ_IMPLIES_EXEC", personality(READ_IMPLIES_EXEC) >= 0 &&
						       (personality(0xffffffff) & READ_IMPLIES_EXEC)
					       ? 0
					       : -1);
	check("chroot", chroot("/tmp"));
	check("reboot", syscall(SYS_reboot, 0xfee1dead, 672274793, 0x4321fedc, NULL));
	puts("done");
	return 0;
}
