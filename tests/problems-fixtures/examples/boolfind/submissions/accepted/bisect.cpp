#include <iostream>
#include <string>

int main()
{
	long n;
	std::cin >> n;
	long lo = 0, hi = n;
	std::string reply;
	while (lo < hi) {
		long mid = (lo + hi) / 2;
		std::cout << "READ " << mid << std::endl;
		std::cin >> reply;
		if (reply == "true")
			hi = mid;
		else
			lo = mid + 1;
	}
	std::cout << "OUTPUT " << lo << std::endl;
}
