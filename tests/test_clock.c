/* test_clock: the monotonic clock never goes back, ms and us agree, realtime is
 * Unix time, deadlines and timed waits on a monotonic condition variable. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "common/clock.h"

Test(clock, monotonic_never_goes_back)
{
	int64_t prev_ms = clock_mono_ms(), prev_us = clock_mono_us();
	for (int i = 0; i < 100000; i++) {
		int64_t ms = clock_mono_ms(), us = clock_mono_us();
		cr_assert_geq(ms, prev_ms);
		cr_assert_geq(us, prev_us);
		prev_ms = ms;
		prev_us = us;
	}
}

Test(clock, ms_and_us_agree)
{
	int64_t ms = clock_mono_ms();
	int64_t us = clock_mono_us();
	int64_t ms2 = clock_mono_ms();
	/* us was read between ms and ms2: its millisecond lies between them */
	cr_assert_geq(us / 1000, ms);
	cr_assert_leq(us / 1000, ms2);
}

Test(clock, sleep_lasts_its_time)
{
	int64_t t0 = clock_mono_us();
	clock_sleep_ms(20);
	int64_t dt = clock_mono_us() - t0;
	cr_assert_geq(dt, 20000, "slept 20 ms, measured %lld us", (long long)dt);
	cr_assert_lt(dt, 2000000, "slept 20 ms, measured %lld us", (long long)dt);
}

Test(clock, realtime_is_unix_time)
{
	time_t before = time(NULL);
	int64_t ms = clock_real_ms();
	time_t after = time(NULL);
	cr_assert_geq(ms / 1000, (int64_t)before - 1);
	cr_assert_leq(ms / 1000, (int64_t)after + 1);
}

Test(clock, deadlines)
{
	cr_assert_eq(clock_deadline_ms(-1), CLOCK_NEVER);
	cr_assert_eq(clock_left_ms(CLOCK_NEVER), CLOCK_NEVER);
	cr_assert_eq(clock_deadline_ms(INT64_MAX - 1), CLOCK_NEVER, "no overflow");
	int64_t d = clock_deadline_ms(60000);
	int64_t left = clock_left_ms(d);
	cr_assert(left > 59000 && left <= 60000, "left %lld", (long long)left);
	cr_assert_eq(clock_left_ms(clock_mono_ms() - 5), 0, "a passed deadline has 0 left");
	cr_assert_eq(clock_left_ms(clock_deadline_ms(0)), 0);
}

Test(clock, timed_wait_on_a_monotonic_condvar)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c;
	cr_assert_eq(clock_cond_init(&c), 0);
	int64_t t0 = clock_mono_ms();
	struct timespec until = clock_mono_after(50);
	pthread_mutex_lock(&m);
	int rc;
	do
		rc = pthread_cond_timedwait(&c, &m, &until);
	while (rc == 0);
	pthread_mutex_unlock(&m);
	int64_t dt = clock_mono_ms() - t0;
	cr_assert_eq(rc, ETIMEDOUT);
	cr_assert_geq(dt, 49, "waited %lld ms for 50", (long long)dt);
	cr_assert_lt(dt, 2000, "waited %lld ms for 50", (long long)dt);
	/* a past time returns at once rather than waiting */
	struct timespec past = clock_mono_after(-10);
	pthread_mutex_lock(&m);
	cr_assert_eq(pthread_cond_timedwait(&c, &m, &past), ETIMEDOUT);
	pthread_mutex_unlock(&m);
	pthread_cond_destroy(&c);
}
