#include <stdio.h>

int main(void)
{
	long long a, b;
	if (scanf("%lld %lld", &a, &b) != 2)
		return 1;
	volatile long long s = a;
	long long step = b > 0 ? 1 : -1, n = b > 0 ? b : -b;
	for (long long i = 0; i < n; i++)
		s = s + step;
	printf("%lld\n", (long long)s);
	return 0;
}
