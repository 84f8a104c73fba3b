/* prints the divisors in increasing order (any order is accepted) */
#include <stdio.h>

static long long big[8192];

int main(void)
{
	long long n;
	int nb = 0;
	if (scanf("%lld", &n) != 1)
		return 1;
	for (long long i = 1; i * i <= n; i++)
		if (n % i == 0) {
			printf("%lld\n", i);
			if (i != n / i)
				big[nb++] = n / i;
		}
	while (nb > 0)
		printf("%lld\n", big[--nb]);
	return 0;
}
