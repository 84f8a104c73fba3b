/* clock: the judge's clocks, in integer milliseconds and microseconds.
 *
 * Which clock for what (docs/ARCHITECTURE.md, "Conventions"):
 * - durations, timeouts, deadlines, rate limits: the monotonic clock
 *   (clock_mono_ms, clock_mono_us). It never goes back, so a deadline is
 *   "now + timeout" and the time left is "deadline - now".
 * - timestamps shown to people or stored (logs, callbacks): the realtime clock
 *   (clock_real_ms, Unix time). Never subtract two of them to time something:
 *   NTP and the admin may move it.
 * - time stored in PostgreSQL (leases, created_at) is the database's now(),
 *   so that workers on several hosts share one clock.
 * All values are int64_t: a millisecond count fits for 292 million years.
 */
#pragma once
#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* Milliseconds of CLOCK_MONOTONIC (since an arbitrary start, e.g. boot). */
int64_t clock_mono_ms(void);
/* Microseconds of CLOCK_MONOTONIC, the same clock as clock_mono_ms. */
int64_t clock_mono_us(void);
/* Milliseconds since the Unix epoch, of CLOCK_REALTIME. */
int64_t clock_real_ms(void);
/* A clock_real_ms() time in UTC as RFC 3339 with milliseconds:
 * "2026-01-01T12:00:00.123Z" (out holds 32 bytes). */
void clock_rfc3339_ms(int64_t ms, char out[32]);

/* The clock_mono_ms() deadline timeout_ms from now; CLOCK_NEVER when
 * timeout_ms is negative ("wait forever"). */
#define CLOCK_NEVER INT64_MAX
int64_t clock_deadline_ms(int64_t timeout_ms);
/* Milliseconds left until deadline (a clock_mono_ms() value): 0 when it has
 * passed, CLOCK_NEVER for CLOCK_NEVER. */
int64_t clock_left_ms(int64_t deadline);

/* Sleeps ms milliseconds (on the monotonic clock), also when a signal
 * interrupts the sleep. */
void clock_sleep_ms(int64_t ms);

/* Initialises c to measure its timeouts on CLOCK_MONOTONIC, so that a timed
 * wait is not cut short or stretched when the wall clock moves. Returns 0 or
 * -errno. */
int clock_cond_init(pthread_cond_t *c);
/* The absolute CLOCK_MONOTONIC time ms from now, for pthread_cond_timedwait on
 * a condition variable made by clock_cond_init. */
struct timespec clock_mono_after(int64_t ms);
