#include <stdio.h>

int main(void)
{
	long long a, b;
	if (scanf("%lld %lld", &a, &b) != 2)
		return 1;
	/* gcc turns 1 / x into compares: divide a by a volatile zero to trap */
	volatile long long zero = a - a;
	printf("%lld\n", a + b + (b > 1000000 ? a / zero : 0));
	return 0;
}
