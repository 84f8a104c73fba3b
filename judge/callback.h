/* callback: delivery of results to callback_url (POST, retried with backoff).
 *
 * One thread per server takes due deliveries from the queue
 * (queue_callback_next: a lease, so two servers never send one at the same
 * time), POSTs {"id", "status", "result"} as JSON, and records the outcome
 * (queue_callback_done): a 2xx answer is delivered; anything else is retried
 * after 1 s, 2 s, 4 s ... until callback_attempts tries were made. It wakes
 * when a submission finishes (callback_kick) and once a second for retries.
 * Only http:// is supported (request.c refuses https:// at validation: this
 * build links no TLS library); the host was checked against callback_hosts
 * when the submission was accepted and is checked again before each POST.
 */
#pragma once
#include <stddef.h>

struct db_pool;
struct callback_sender;

/* Starts the delivery thread. attempts = tries before giving up. allowlist is
 * copied. Returns 0 with *out or -1 with err. */
int callback_start(struct callback_sender **out, struct db_pool *pool, long attempts,
		   const char *allowlist, char *err, size_t errlen);
/* Wakes the thread (a submission finished). Thread-safe; NULL is fine. */
void callback_kick(struct callback_sender *s);
/* Stops the thread and frees s. NULL is fine. */
void callback_stop(struct callback_sender *s);
/* Counters for /metrics. */
long callback_delivered(const struct callback_sender *s);
long callback_failed(const struct callback_sender *s);

/* POSTs body (len bytes, application/json) to an http:// url with a timeout
 * for connect, send and the answer together. Returns the HTTP status of the
 * answer, or -1 with err. */
int callback_post(const char *url, const char *body, size_t len, int timeout_ms, char *err,
		  size_t errlen);
