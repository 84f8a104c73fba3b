#pragma once
#include <vector>

std::vector<long long> divisors(long long n);
