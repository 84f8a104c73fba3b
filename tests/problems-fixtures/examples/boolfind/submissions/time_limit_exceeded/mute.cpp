// Reads n, then waits for an answer to a question it never asked.
#include <iostream>
#include <string>

int main()
{
	long n;
	std::string s;
	std::cin >> n >> s;
}
