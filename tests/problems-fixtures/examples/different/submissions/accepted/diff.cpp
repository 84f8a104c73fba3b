#include <iostream>

int main()
{
	long long a, b;
	while (std::cin >> a >> b)
		std::cout << (a > b ? a - b : b - a) << '\n';
}
