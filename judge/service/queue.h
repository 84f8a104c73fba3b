/* queue: submissions in PostgreSQL: enqueue, claim with a lease, finish, wait.
 *
 * How it works (table `submissions`, migrations/0001_init.sql):
 * - enqueue: INSERT + NOTIFY judge_new in one transaction. An idempotency key
 *   is unique per API key: the same key gives back the same submission.
 * - claim: one statement, the function judge_claim (migrations/0008): the row
 *   becomes `running`, attempts + 1, with lease_until = now + lease. Which
 *   row: the API key with the fewest running submissions per its weight
 *   (api_keys.weight) goes first, so a key never waits for another key's
 *   backlog; inside a key (and between keys at the same share) the oldest
 *   head, where bulk work (QUEUE_PRIO_BULK: /v1/submissions, batches,
 *   evaluations) counts as queued lead_ms later than it was, so interactive
 *   requests (QUEUE_PRIO_INTERACTIVE: /v1/execute*) go ahead of bulk work
 *   only by that much (docs/operations.md, "Queue policy"). SKIP LOCKED:
 *   concurrent claims never wait for each other.
 * - the worker extends its lease while it grades (queue_extend);
 * - queue_reap() puts `running` rows whose lease expired back to `queued`, or,
 *   when they used up their attempts, ends them as internal_error;
 * - finish: result + final status in one transaction + NOTIFY judge_done
 *   (payload: the id). A claim is identified by (id, worker, attempt): a worker
 *   that lost its lease cannot finish a submission someone else now runs, so
 *   every submission ends exactly once.
 * - waiting for a result: LISTEN judge_done (waiter.h), never sleep-polling.
 *
 * All functions take a connection (db.h) used by one thread at a time, return
 * -1 with a message in err on failure (database errors included) and never
 * leave a transaction open.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "judge/grading/status.h"

struct db;
struct db_pool;

/* The states of a submission are enum sub_status of status.h (whose list the
 * SQL CHECK constraint of submissions.status repeats). */

enum { QUEUE_PRIO_INTERACTIVE = 0, QUEUE_PRIO_BULK = 10 };

/* NOTIFY channels. */
#define QUEUE_CHANNEL_NEW "judge_new" /* payload: id of a queued submission */
/* judge_done's payload: the id of a finished submission, then
 * QUEUE_DONE_CALLBACK when it has a callback to deliver */
#define QUEUE_CHANNEL_DONE  "judge_done"
#define QUEUE_DONE_CALLBACK " callback"

struct queue_sub {
	int64_t id;
	enum sub_status status;
	cJSON *request; /* the normalized request (model.h); owned */
	cJSON *result;	/* the result JSON once final, else NULL; owned */
	int priority;
	char *idempotency_key; /* NULL when none */
	int64_t api_key_id;    /* 0 when none */
	char *callback_url;    /* NULL when none */
	int attempts;	       /* claims so far */
	char *worker;	       /* who runs/ran it, NULL when never claimed */
	/* Unix times in milliseconds; 0 = not yet. */
	int64_t created_ms, started_ms, finished_ms;
	int callback_attempts; /* callback deliveries tried so far (queue_callback_next counts) */
	int64_t callback_done_ms; /* when the callback was delivered; 0 = not (yet) */
	bool callback_pending;	  /* another attempt is due */
	char *callback_error;	  /* why the last attempt failed; NULL when none */
	char token[37];		  /* the UUID token (lower-case text), "" when unknown */
	cJSON *front;		  /* what a front API stored beside the request, or NULL; owned */
};

/* Zeroes s. */
void queue_sub_init(struct queue_sub *s);
/* Frees what s owns and zeroes it. */
void queue_sub_release(struct queue_sub *s);

struct queue_new {
	const cJSON *request;	     /* required; stored as jsonb */
	int priority;		     /* QUEUE_PRIO_* */
	const char *idempotency_key; /* may be NULL */
	int64_t api_key_id;	     /* 0 = none */
	const char *callback_url;    /* may be NULL */
	const cJSON *front;	     /* may be NULL: a front API's own fields (queue_sub.front) */
};

/* Enqueues one submission (INSERT + NOTIFY in one transaction). With an
 * idempotency key that this API key already used, nothing is inserted and the
 * existing submission's id is returned with *created = false.
 * Returns 0 with *id (and *created when non-NULL), or -1 with err. */
int queue_enqueue(struct db *db, const struct queue_new *in, int64_t *id, bool *created, char *err,
		  size_t errlen);
/* Enqueues n submissions in one transaction (all or none); ids[i] (and
 * created[i] when created is non-NULL) for each. Returns 0 or -1 with err. */
int queue_enqueue_batch(struct db *db, const struct queue_new *in, size_t n, int64_t *ids,
			bool *created, char *err, size_t errlen);

/* Reads submission id into *out (queue_sub_release it). With api_key_id > 0,
 * only a submission of that key is found.
 * Returns 1 when found, 0 when not, -1 with err. */
int queue_get(struct db *db, int64_t id, int64_t api_key_id, struct queue_sub *out, char *err,
	      size_t errlen);

/* True when token has the form of a UUID (8-4-4-4-12 hex digits). */
bool queue_token_valid(const char *token);
/* Reads the submission whose UUID token is token, as queue_get does (scoped by
 * api_key_id when > 0). A token that is not a UUID is not found. Returns 1, 0
 * or -1 with err. */
int queue_get_token(struct db *db, const char *token, int64_t api_key_id, struct queue_sub *out,
		    char *err, size_t errlen);

/* Claims the next queued submission for worker (a unique name such as
 * "host:pid/slot") with a lease of lease_ms, in the order of the queue policy
 * (above) with bulk work aged by lead_ms (judge.ini interactive_lead_ms).
 * Returns 1 with *out (status running, attempts already counted), 0 when the
 * queue is empty, -1 with err. */
int queue_claim(struct db *db, const char *worker, long lease_ms, long lead_ms,
		struct queue_sub *out, char *err, size_t errlen);
/* Extends the lease of a claim (id, worker, attempt = out->attempts of the
 * claim) to now + lease_ms. Returns 0, 1 when the claim is no longer ours
 * (reaped or finished), or -1 with err. */
int queue_extend(struct db *db, int64_t id, const char *worker, int attempt, long lease_ms,
		 char *err, size_t errlen);
/* Finishes a claim: stores status and result (the result JSON of status; a
 * status that is not final is the judge's fault and is stored as
 * internal_error, in the JSON too), finished time, and NOTIFYs judge_done, in
 * one transaction. Returns 0, 1 when the claim is no longer ours (nothing is
 * changed), or -1 with err. */
int queue_finish(struct db *db, int64_t id, const char *worker, int attempt, enum sub_status status,
		 const cJSON *result, char *err, size_t errlen);
/* queue_finish, and in the same statement (one round trip) claims the next
 * queued submission for worker as queue_claim does (lease_ms, lead_ms). Returns what
 * queue_finish returns; *claimed tells whether *next holds a new claim (then
 * it is the caller's, whatever the return value; on -1 nothing changed). */
int queue_finish_claim(struct db *db, int64_t id, const char *worker, int attempt,
		       enum sub_status status, const cJSON *result, long lease_ms, long lead_ms,
		       struct queue_sub *next, bool *claimed, char *err, size_t errlen);
/* Hands a claim back unfinished (a draining worker): status queued again, the
 * attempt not counted, NOTIFY judge_new. Returns 0, 1 when not ours, -1. */
int queue_release(struct db *db, int64_t id, const char *worker, int attempt, char *err,
		  size_t errlen);

/* Requeues running submissions whose lease expired; those that already had
 * max_attempts claims end as internal_error ("gave up after N attempts").
 * *requeued and *failed (when non-NULL) receive the counts. Returns 0 or -1. */
int queue_reap(struct db *db, int max_attempts, int *requeued, int *failed, char *err,
	       size_t errlen);

/* Counts for metrics: counts[s] = number of submissions in state s.
 * Returns 0 or -1 with err. */
int queue_counts(struct db *db, long counts[SUB_STATUS_COUNT], char *err, size_t errlen);

/* Callback delivery (callback_url): the server POSTs results itself; the queue
 * keeps the delivery state so a restart loses none. queue_callback_next()
 * claims one finished submission with a pending callback whose next attempt is
 * due, pushing that attempt lease_ms into the future (so two servers do not
 * deliver it at once). Returns 1 with *out, 0 when none is due, -1 with err. */
int queue_callback_next(struct db *db, long lease_ms, struct queue_sub *out, char *err,
			size_t errlen);
/* Records a delivery attempt: delivered, or failed (why) with the next attempt
 * in retry_ms (retry_ms < 0: give up). Returns 0 or -1 with err. */
int queue_callback_done(struct db *db, int64_t id, bool delivered, long retry_ms, const char *why,
			char *err, size_t errlen);
