#include <cstdio>
#include <unordered_map>

int main()
{
	int n;
	long long t;
	if (std::scanf("%d %lld", &n, &t) != 2)
		return 1;
	std::unordered_map<long long, int> seen;
	seen.reserve(2 * n);
	for (int j = 0; j < n; j++) {
		long long x;
		if (std::scanf("%lld", &x) != 1)
			return 1;
		auto it = seen.find(t - x);
		if (it != seen.end()) {
			std::printf("%d %d\n", it->second, j);
			return 0;
		}
		seen.emplace(x, j);
	}
}
