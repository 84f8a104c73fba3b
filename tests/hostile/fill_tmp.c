/* fill_tmp: writes to /tmp until refused; prints how much it got. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char block[1 << 20];

int main(void)
{
	signal(SIGXFSZ, SIG_IGN); /* ask for errors, not the signal */
	memset(block, 'x', sizeof block);
	long total = 0;
	int err = 0;
	for (int f = 0; f < 10000 && !err; f++) {
		char name[64];
		snprintf(name, sizeof name, "/tmp/fill%d", f);
		int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			err = errno;
			break;
		}
		for (int i = 0; i < 16; i++) {
			ssize_t n = write(fd, block, sizeof block);
			if (n <= 0) {
				err = n < 0 ? errno : ENOSPC;
				break;
			}
			total += n;
		}
		close(fd);
	}
	printf("stopped after %ld MB: %s\n", total >> 20, strerror(err));
	return 0;
}
