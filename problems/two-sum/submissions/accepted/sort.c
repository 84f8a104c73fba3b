/* sorts (value, index) pairs and walks two pointers inwards */
#include <stdio.h>
#include <stdlib.h>

struct item {
	long long v;
	int i;
};

static int by_value(const void *a, const void *b)
{
	long long x = ((const struct item *)a)->v, y = ((const struct item *)b)->v;
	return x < y ? -1 : x > y;
}

int main(void)
{
	int n;
	long long t;
	if (scanf("%d %lld", &n, &t) != 2)
		return 1;
	struct item *a = malloc((size_t)n * sizeof *a);
	for (int i = 0; i < n; i++) {
		if (scanf("%lld", &a[i].v) != 1)
			return 1;
		a[i].i = i;
	}
	qsort(a, (size_t)n, sizeof *a, by_value);
	for (int lo = 0, hi = n - 1; lo < hi;) {
		long long s = a[lo].v + a[hi].v;
		if (s == t) {
			printf("%d %d\n", a[lo].i, a[hi].i);
			return 0;
		}
		if (s < t)
			lo++;
		else
			hi--;
	}
	return 1;
}
