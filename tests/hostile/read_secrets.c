/* read_secrets: tries to read /etc/shadow, /root, the worker's environment
 * (/proc/1/environ, every /proc/<pid>/environ and mem) and prints LEAK on success. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char buf[1 << 16];

/* Reads path; returns bytes read or -1. */
static long slurp(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	long n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n >= 0)
		buf[n] = 0;
	return n;
}

int main(void)
{
	if (slurp("/etc/shadow") > 0)
		puts("LEAK /etc/shadow");
	if (opendir("/root"))
		puts("LEAK /root listable");
	if (slurp("/root/.bashrc") >= 0)
		puts("LEAK /root/.bashrc");
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[300];
	while (d && (e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/environ", e->d_name);
		long n = slurp(path);
		for (long i = 0; i < n; i++)
			if (!buf[i])
				buf[i] = '\n';
		if (n > 0 && strstr(buf, "JUDGE_HOSTILE_SECRET"))
			printf("LEAK %s\n", path);
		snprintf(path, sizeof path, "/proc/%s/mem", e->d_name);
		int fd = open(path, O_RDONLY);
		if (fd >= 0 && strcmp(e->d_name, "1") == 0)
			puts("LEAK /proc/1/mem opened");
		if (fd >= 0)
			close(fd);
	}
	long n = slurp("/proc/self/environ");
	if (n > 0) {
		for (long i = 0; i < n; i++)
			if (!buf[i])
				buf[i] = '\n';
		if (strstr(buf, "JUDGE_HOSTILE_SECRET"))
			puts("LEAK own environment");
	}
	if (slurp("/proc/kcore") > 0)
		puts("LEAK /proc/kcore");
	puts("done");
	return 0;
}
