#include <stdio.h>
#include <string.h>

int main(void)
{
	char mode[16], w[128];
	if (scanf("%15s %127s", mode, w) != 2)
		return 1;
	for (size_t i = strlen(w); i-- > 0;)
		putchar(w[i]);
	putchar('\n');
	return 0;
}
