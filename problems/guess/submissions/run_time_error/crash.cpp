#include <iostream>
#include <stdexcept>
#include <string>

int main()
{
	std::string reply;
	std::cout << 500 << std::endl;
	std::cin >> reply;
	throw std::runtime_error("gave up after " + reply);
}
