#include <cstdio>

int main()
{
	std::puts("Hello World!");
	std::puts("Hello World!");
}
