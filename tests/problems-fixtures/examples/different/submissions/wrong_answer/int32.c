#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	int a, b;
	while (scanf("%d %d", &a, &b) == 2)
		printf("%d\n", abs(a - b));
	return 0;
}
