#include <stdio.h>
#include "helper.h"
int main(void)
{
	long n;
	if (scanf("%ld", &n) != 1)
		return 1;
	printf("%ld\n", answer(n));
	return 0;
}
