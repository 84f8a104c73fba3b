// a submission of several files: main.cpp and divisors.cpp / divisors.hpp
#include <iostream>

#include "divisors.hpp"

int main()
{
	long long n;
	std::cin >> n;
	for (long long d : divisors(n))
		std::cout << d << ' ';
	std::cout << '\n';
}
