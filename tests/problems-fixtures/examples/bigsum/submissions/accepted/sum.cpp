#include <iostream>

int main()
{
	int n;
	long long x, s = 0;
	std::cin >> n;
	while (n-- > 0 && std::cin >> x)
		s += x;
	std::cout << s << '\n';
}
