// grows a vector until the 256 MiB limit ends it
#include <vector>

int main()
{
	std::vector<std::vector<char>> v;
	for (;;)
		v.emplace_back(16 << 20, 1);
}
