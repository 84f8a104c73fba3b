/* fork_bomb: forks without end; the pids limit stops it, the CPU limit ends it. */
#include <unistd.h>

int main(void)
{
	for (;;)
		fork();
}
