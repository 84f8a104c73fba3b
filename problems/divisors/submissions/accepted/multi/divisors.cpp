#include "divisors.hpp"

std::vector<long long> divisors(long long n)
{
	std::vector<long long> v;
	for (long long i = 1; i * i <= n; i++)
		if (n % i == 0) {
			v.push_back(n / i);
			if (i != n / i)
				v.push_back(i);
		}
	return v;
}
