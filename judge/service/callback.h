/* callback: delivery of results to callback_url (POST, retried with backoff).
 *
 * One thread per server takes due deliveries from the queue
 * (queue_callback_next: a lease, so two servers never send one at the same
 * time), POSTs {"id", "status", "result"} as JSON, and records the outcome
 * (queue_callback_done): a 2xx answer is delivered; anything else is retried
 * after 1 s, 2 s, 4 s ... until callback_attempts tries were made. It wakes
 * when a submission finishes (callback_kick) and once a second for retries.
 * libcurl sends it, over http:// or https:// (certificate and host name
 * verified, against callback_ca_file when set); the host was checked against
 * callback_hosts when the submission was accepted and is checked again before
 * each POST, and libcurl connects to that host only: no redirects, no proxy.
 */
#pragma once
#include <stddef.h>

struct db_pool;
struct callback_sender;
struct judge_config;
struct queue_sub;

/* A front API's own callback for submission s (the Judge0 API's PUT): returns
 * the JSON body (the caller frees it) and sets *method, or returns NULL for
 * the default POST {"id", "status", "result"}. */
typedef char *(*callback_format_fn)(const struct queue_sub *s, const char **method);

/* Starts the delivery thread with callback_attempts, callback_hosts and
 * callback_ca_file of cfg (copied), and initializes libcurl for the process:
 * one sender per process. format may be NULL (every callback the default).
 * Returns 0 with *out or -1 with err (also when callback_ca_file cannot be read). */
int callback_start(struct callback_sender **out, struct db_pool *pool,
		   const struct judge_config *cfg, callback_format_fn format, char *err,
		   size_t errlen);
/* Wakes the thread (a submission finished). Thread-safe; NULL is fine. */
void callback_kick(struct callback_sender *s);
/* Stops the thread, frees s and releases libcurl. NULL is fine. */
void callback_stop(struct callback_sender *s);
/* Counters for /metrics. */
long callback_delivered(const struct callback_sender *s);
long callback_failed(const struct callback_sender *s);

/* Sends body (len bytes, application/json) with method (POST or PUT) to an http:// or https:// url
 * (as request_url_split reads it) with a timeout for connect, send and the answer
 * together; https certificates are checked against ca_file when it is not
 * NULL or empty, else the system's CA store. Needs curl_global_init (done by
 * callback_start). Returns the HTTP status of the answer, or -1 with err. */
int callback_post(const char *url, const char *method, const char *body, size_t len,
		  const char *ca_file, int timeout_ms, char *err, size_t errlen);
