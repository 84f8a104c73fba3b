// single precision: 7 significant digits are not 1e-6 for big areas
#include <cstdio>

int main()
{
	float r;
	if (std::scanf("%f", &r) != 1)
		return 1;
	float a = 3.14159265f * r * r;
	std::printf("%.0f\n", a);
}
