#include <algorithm>
#include <iostream>
#include <string>

int main()
{
	std::string mode, w;
	std::cin >> mode >> w;
	std::reverse(w.begin(), w.end());
	std::cout << w << '\n';
}
