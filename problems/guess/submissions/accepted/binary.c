#include <stdio.h>
#include <string.h>

int main(void)
{
	int lo = 1, hi = 1000;
	char reply[32];
	for (;;) {
		int mid = (lo + hi) / 2;
		printf("%d\n", mid);
		fflush(stdout);
		if (scanf("%31s", reply) != 1 || !strcmp(reply, "correct"))
			return 0;
		if (!strcmp(reply, "lower"))
			hi = mid - 1;
		else
			lo = mid + 1;
	}
}
