/* 32-bit numbers: the small group's 40 points only. */
#include <stdio.h>

int main(void)
{
	int n, x, s = 0;
	if (scanf("%d", &n) != 1)
		return 1;
	while (n-- > 0 && scanf("%d", &x) == 1)
		s += x;
	printf("%d\n", s);
	return 0;
}
