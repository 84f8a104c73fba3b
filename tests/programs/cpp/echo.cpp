#include <iostream>
#include <string>

int main()
{
	std::ios::sync_with_stdio(false);
	std::string line;
	while (std::getline(std::cin, line))
		std::cout << line << '\n';
}
