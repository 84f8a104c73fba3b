/* write_outside: tries to write everywhere but /box and /tmp; prints LEAK on success.
 * Also writes /tmp/judge-hostile-marker, which must stay private to the run. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void)
{
	const char *targets[] = {"/x", "/usr/x", "/usr/bin/x", "/etc/x", "/etc/passwd",
				 "/bin/x", "/lib/x", "/dev/x", "/proc/x", "/proc/sys/kernel/hostname",
				 "/proc/sysrq-trigger", "/box/../etc/x", "/tmp/../usr/x", NULL};
	for (int i = 0; targets[i]; i++) {
		int fd = open(targets[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			printf("LEAK wrote %s\n", targets[i]);
			close(fd);
		}
	}
	if (mkdir("/usr/hostile", 0755) == 0)
		puts("LEAK mkdir /usr/hostile");
	if (chmod("/box", 04777) == 0 && chmod("/", 0777) == 0)
		puts("LEAK chmod /");
	int fd = open("/tmp/judge-hostile-marker", O_WRONLY | O_CREAT, 0644);
	if (fd < 0 || write(fd, "x", 1) != 1)
		puts("private /tmp not writable");
	puts("done");
	return 0;
}
