/* quadratic: fine for small tests, far too slow for n = 2e5 with the pair at the end */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	int n;
	long long t;
	if (scanf("%d %lld", &n, &t) != 2)
		return 1;
	long long *a = malloc((size_t)n * sizeof *a);
	for (int i = 0; i < n; i++)
		if (scanf("%lld", &a[i]) != 1)
			return 1;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (a[i] + a[j] == t) {
				printf("%d %d\n", i, j);
				return 0;
			}
	return 1;
}
