/* passk: the unbiased pass@k estimator (Codex paper). */
#include "judge/grading/passk.h"

double passk_estimate(int n, int c, int k)
{
	if (n - c < k)
		return 1.0;
	if (k == 1) /* exactly the pass rate, without the product's rounding */
		return (double)c / (double)n;
	double prod = 1.0;
	for (int i = n - c + 1; i <= n; i++)
		prod *= 1.0 - (double)k / (double)i;
	return 1.0 - prod;
}

bool passk_defined(const int *ns, int nproblems, int k)
{
	if (nproblems <= 0 || k < 1)
		return false;
	for (int i = 0; i < nproblems; i++)
		if (ns[i] < k)
			return false;
	return true;
}
