#include <cstdlib>
#include <iostream>

int main()
{
	std::cout << "about to exit with 3" << std::endl;
	std::exit(3);
}
