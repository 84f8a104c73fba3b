/* sigstop_self: stops itself; the run must still end (wall limit). */
#include <signal.h>
#include <stdio.h>

int main(void)
{
	puts("stopping");
	fflush(stdout);
	raise(SIGSTOP);
	puts("resumed");
	return 0;
}
