#include <stdio.h>

int main(void)
{
	printf("%d\n", undeclared_variable);
	return 0;
}
