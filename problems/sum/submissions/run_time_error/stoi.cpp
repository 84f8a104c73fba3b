// std::stoi throws std::out_of_range on the large tests
#include <iostream>
#include <string>

int main()
{
	std::string a, b;
	std::cin >> a >> b;
	std::cout << std::stoi(a) + std::stoi(b) << '\n';
}
