#include <stdio.h>

int main(void)
{
	for (;;)
		puts("Hello World! Hello World! Hello World! Hello World! Hello World!");
}
