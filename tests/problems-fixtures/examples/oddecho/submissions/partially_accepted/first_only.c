/* Right only when N is 1 or 2: group 1's points, not group 2's. */
#include <stdio.h>

int main(void)
{
	char w[128];
	if (scanf("%*d %127s", w) == 1)
		puts(w);
	return 0;
}
