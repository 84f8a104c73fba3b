// keeps ever more memory, 16 MB at a time, each byte written
#include <vector>

int main()
{
	std::vector<std::vector<char>> keep;
	for (;;)
		keep.emplace_back(16 << 20, 1);
}
