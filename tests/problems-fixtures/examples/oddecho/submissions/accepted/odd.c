#include <stdio.h>

int main(void)
{
	int n;
	char w[128];
	if (scanf("%d", &n) != 1)
		return 1;
	for (int i = 0; i < n && scanf("%127s", w) == 1; i++)
		if (i % 2 == 0)
			puts(w);
	return 0;
}
