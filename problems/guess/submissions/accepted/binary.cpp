#include <iostream>
#include <string>

int main()
{
	int lo = 1, hi = 1000;
	std::string reply;
	for (;;) {
		int mid = (lo + hi) / 2;
		std::cout << mid << std::endl; // endl flushes
		if (!(std::cin >> reply) || reply == "correct")
			return 0;
		if (reply == "lower")
			hi = mid - 1;
		else
			lo = mid + 1;
	}
}
