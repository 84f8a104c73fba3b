// doubles have 53 bits: large sums come out rounded
#include <cstdio>

int main()
{
	double a, b;
	if (std::scanf("%lf %lf", &a, &b) != 2)
		return 1;
	std::printf("%.0f\n", a + b);
}
