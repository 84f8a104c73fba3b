/* setsid_double_fork: leaves a daemon (setsid + double fork) named
 * "hostile-survivr" behind and exits at once; the daemon must die with the run. */
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(void)
{
	if (fork() == 0) {
		setsid();
		if (fork() == 0) {
			prctl(PR_SET_NAME, "hostile-survivr");
			close(0);
			close(1);
			close(2);
			for (;;)
				sleep(1);
		}
		_exit(0);
	}
	usleep(100000); /* let the daemon start */
	puts("left a daemon");
	return 0;
}
