/* Sleeps 3 s under a 1 s time limit: DOMjudge judges it at the limit (wall
 * limit 1 x 1.5 + 1 s), so it times out; checked at a safety margin of twice
 * the limit instead (wall 4 s) it would finish and be a wrong answer.
 * @EXPECTED_RESULTS@: TIMELIMIT
 */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	sleep(3);
	puts("late");
	return 0;
}
