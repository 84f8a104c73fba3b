#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	char reply[32];
	printf("500\n");
	fflush(stdout);
	if (scanf("%31s", reply) == 1)
		abort();
	return 0;
}
