// only the proper divisors (leaves out n)
#include <iostream>

int main()
{
	long long n;
	std::cin >> n;
	for (long long i = 1; i * i <= n; i++)
		if (n % i == 0) {
			if (i != n)
				std::cout << i << '\n';
			if (i != n / i && n / i != n)
				std::cout << n / i << '\n';
		}
}
