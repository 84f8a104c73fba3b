#include <stdio.h>
#include <string.h>

int main(void)
{
	long n, lo = 0, hi;
	char reply[16];
	if (scanf("%ld", &n) != 1)
		return 1;
	hi = n;
	while (lo < hi) {
		long mid = (lo + hi) / 2;
		printf("READ %ld\n", mid);
		fflush(stdout);
		if (scanf("%15s", reply) != 1)
			return 1;
		if (!strcmp(reply, "true"))
			hi = mid;
		else
			lo = mid + 1;
	}
	printf("OUTPUT %ld\n", lo);
	return 0;
}
