/* Sends a guess the validator cannot read, then spins without reading the
 * reply: the validator rejects first, so this is wrong_answer, never timeout. */
#include <stdio.h>

int main(void)
{
	printf("seven\n");
	fflush(stdout);
	for (volatile unsigned long i = 0;; i++)
		;
}
