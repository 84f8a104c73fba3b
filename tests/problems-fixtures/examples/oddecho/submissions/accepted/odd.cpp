#include <iostream>
#include <string>

int main()
{
	int n;
	std::cin >> n;
	for (int i = 0; i < n; i++) {
		std::string w;
		std::cin >> w;
		if (i % 2 == 0)
			std::cout << w << '\n';
	}
}
