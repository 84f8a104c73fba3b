/* kill_all: kill(-1, SIGKILL) — may only hit its own sandbox. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	if (fork() == 0)
		for (;;)
			pause();
	int rc = kill(-1, SIGKILL);
	printf("kill rc %d\nalive\n", rc);
	return 0;
}
