// prints 100 MB, then spins: a judge that waits for the end times out instead
#include <iostream>
#include <string>

int main()
{
	std::ios::sync_with_stdio(false);
	std::string line(1023, 'x');
	for (int i = 0; i < 100 * 1024; i++)
		std::cout << line << '\n';
	std::cout.flush();
	for (volatile unsigned long n = 0;; n = n + 1)
		;
}
