// Guesses once, then never reads the reply nor guesses again.
#include <iostream>
#include <thread>

int main()
{
	std::cout << 500 << std::endl;
	std::this_thread::sleep_for(std::chrono::hours(1));
}
