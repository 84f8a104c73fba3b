#include <stdio.h>

int main(void)
{
	volatile int *p = NULL;
	*p = 42;
	puts("Hello World!");
	return 0;
}
