#include <stdio.h>

int main(void)
{
	long long n;
	if (scanf("%lld", &n) != 1)
		return 1;
	for (long long i = 1; i <= n; i++)
		if (n % i == 0)
			printf("%lld\n", i);
	return 0;
}
