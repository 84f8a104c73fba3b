/* prints 100 MB, then spins: a judge that waits for the end times out instead */
#include <stdio.h>
#include <string.h>

int main(void)
{
	static char line[1024];
	memset(line, 'x', sizeof line - 1);
	line[sizeof line - 1] = '\n';
	for (int i = 0; i < 100 * 1024; i++)
		fwrite(line, 1, sizeof line, stdout);
	fflush(stdout);
	for (volatile unsigned long n = 0;; n++)
		;
}
