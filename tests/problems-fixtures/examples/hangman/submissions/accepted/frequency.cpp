#include <iostream>
#include <string>

int main()
{
	std::string guessed;
	std::getline(std::cin, guessed);
	for (char c : std::string("etaoinshrdlcumwfgypbvkjxqz"))
		if (guessed.find(c) == std::string::npos) {
			std::cout << c << '\n';
			break;
		}
}
