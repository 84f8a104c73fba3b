/* touches ever more memory, 16 MB at a time, until something stops it */
#include <stdlib.h>
#include <string.h>

int main(void)
{
	for (;;) {
		char *p = malloc(16 << 20);
		if (!p)
			return 1;
		memset(p, 1, 16 << 20);
	}
}
