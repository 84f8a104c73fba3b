#include <stdio.h>

int main(void)
{
	puts("about to exit with 3");
	return 3;
}
