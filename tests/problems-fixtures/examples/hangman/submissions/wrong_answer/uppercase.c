/* Upper-case letters are not guesses. */
#include <stdio.h>

int main(void)
{
	puts("E");
	return 0;
}
