/* two decimals are not enough for small circles */
#include <math.h>
#include <stdio.h>

int main(void)
{
	const double pi = acos(-1.0); /* M_PI is not ISO C */
	double r;
	if (scanf("%lf", &r) != 1)
		return 1;
	printf("%.2f\n", pi * r * r);
	return 0;
}
