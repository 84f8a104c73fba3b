/* clock: monotonic and realtime clocks (see clock.h for which is for what). */
#include "common/clock.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

static int64_t read_us(clockid_t id)
{
	struct timespec ts;
	/* cannot fail for these clocks on Linux: no error path */
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t clock_mono_us(void)
{
	return read_us(CLOCK_MONOTONIC);
}

int64_t clock_mono_ms(void)
{
	return read_us(CLOCK_MONOTONIC) / 1000;
}

int64_t clock_real_ms(void)
{
	return read_us(CLOCK_REALTIME) / 1000;
}

void clock_rfc3339_ms(int64_t ms, char out[32])
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	char s[24];
	strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 32, "%s.%03dZ", s, (int)(ms % 1000));
}

int64_t clock_deadline_ms(int64_t timeout_ms)
{
	if (timeout_ms < 0)
		return CLOCK_NEVER;
	int64_t now = clock_mono_ms();
	return timeout_ms > CLOCK_NEVER - now ? CLOCK_NEVER : now + timeout_ms;
}

int64_t clock_left_ms(int64_t deadline)
{
	if (deadline == CLOCK_NEVER)
		return CLOCK_NEVER;
	int64_t left = deadline - clock_mono_ms();
	return left > 0 ? left : 0;
}

void clock_sleep_ms(int64_t ms)
{
	if (ms <= 0)
		return;
	struct timespec until = clock_mono_after(ms);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
}

int clock_cond_init(pthread_cond_t *c)
{
	pthread_condattr_t ca;
	int rc = pthread_condattr_init(&ca);
	if (rc)
		return -rc;
	rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!rc)
		rc = pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
	return -rc;
}

struct timespec clock_mono_after(int64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (ms < 0)
		ms = 0;
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}
