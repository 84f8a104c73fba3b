// Interactive validator: input file "n p" (first true index p, n if none).
// Sends n, answers READ i, accepts OUTPUT p within 40 questions.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

static std::string feedback;

static int verdict(int code, const std::string &msg)
{
	std::ofstream(feedback + "judgemessage.txt") << msg << '\n';
	return code;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 1;
	feedback = argv[3];
	long n, p;
	std::ifstream in(argv[1]);
	if (!(in >> n >> p))
		return 1;
	std::cout << n << std::endl;
	std::string cmd;
	long i;
	for (int asked = 0; std::cin >> cmd >> i;) {
		if (cmd == "OUTPUT")
			return i == p ? verdict(42, "found " + std::to_string(p))
				      : verdict(43, "answered " + std::to_string(i) + ", not " +
							std::to_string(p));
		if (cmd != "READ" || i < 0 || i >= n)
			return verdict(43, "bad question: " + cmd + " " + std::to_string(i));
		if (++asked > 40)
			return verdict(43, "more than 40 questions");
		std::cout << (i >= p ? "true" : "false") << std::endl;
	}
	return verdict(43, "the program ended without OUTPUT");
}
