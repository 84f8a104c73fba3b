#include <iostream>

int main()
{
	std::cout << undeclared_greeting << std::endl;
}
