#include <cmath>
#include <iomanip>
#include <iostream>

int main()
{
	double r;
	std::cin >> r;
	std::cout << std::setprecision(15) << M_PI * r * r << '\n';
}
