#include <math.h>
#include <stdio.h>

int main(void)
{
	double r;
	if (scanf("%lf", &r) != 1)
		return 1;
	printf("%.7f\n", M_PI * r * r);
	return 0;
}
