/* sessdb: sessions, their calls and the workers' heartbeats in PostgreSQL.
 *
 * How it works (tables of migrations/0003_sessions.sql):
 * - create: serve INSERTs a session `starting` with no worker and NOTIFYs
 *   judge_session_new; a worker with room claims it (FOR UPDATE SKIP LOCKED),
 *   starts its sandbox and marks it `ready` (or `failed`), NOTIFYing
 *   judge_session_reply with "s<id>".
 * - a call: serve INSERTs a session_calls row and NOTIFYs the holding worker's
 *   own channel ("judge_w<worker id>") in the same statement, which also
 *   touches the session's idle clock and refuses a session that is not open;
 *   the worker claims its pending calls, runs each, stores the answer and
 *   NOTIFYs judge_session_reply with "c<call id>", which serve's hub hears.
 * - liveness: each worker beats workers.last_seen; whoever runs
 *   sessdb_reap_lost (serve's hub, every worker) ends the sessions of a
 *   worker silent for longer than the timeout as `lost` and answers their
 *   open calls 410 session_lost, so nothing waits for a dead worker.
 * - expiry: a session past its idle TTL or lifetime counts as `expired` for
 *   every reader at once (computed in SQL), and its worker marks it so and
 *   stops its sandbox.
 * Every function takes a connection used by one thread at a time, returns -1
 * with the message in err on failure and leaves no transaction open.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"
#include "judge/service/session/sesscall.h"

struct db;

/* The states of a session: the CHECK constraint of sessions.status lists the
 * same names in the same order. */
enum sess_status {
	SESS_STARTING,
	SESS_READY,
	SESS_CLOSED,
	SESS_EXPIRED,
	SESS_LOST,
	SESS_FAILED,
	SESS_PAUSED, /* its image stored, no sandbox, no worker: the next call resumes it */
	SESS_STATUS_COUNT
};
const char *sess_status_name(enum sess_status s);
/* Returns the status named s, or -1. */
int sess_status_parse(const char *s);

/* Why a session ended, as its close reason starts (sessdb_totals sorts ended
 * sessions by these; auth.h's AUTH_REVOKED_REASON is one more). */
#define SESS_REASON_CLIENT     "closed by the client"
#define SESS_REASON_CPU_BUDGET "it used its CPU budget"
#define SESS_REASON_LIFETIME   "it reached its maximum lifetime"

#define SESS_CHANNEL_NEW   "judge_session_new"	 /* payload: a session id to claim */
#define SESS_CHANNEL_REPLY "judge_session_reply" /* "s<session id>" or "c<call id>" */

struct sess_row {
	char id[37];
	char language[32];
	enum sess_status status; /* as readers see it: expired and lost already applied */
	int64_t worker_id;	 /* 0 when none */
	cJSON *limits;		 /* owned */
	long idle_ttl_s;
	bool idle_pause;				       /* idle_action "pause" */
	char created_at[40], expires_at[40], last_used_at[40]; /* ISO 8601 UTC */
	char reason[256];				       /* why it ended, "" while open */
	long execution_count, restarts;
	cJSON *usage;	    /* owned; NULL until its worker read it (migrations/0012) */
	cJSON *network;	    /* owned; its egress policy as sessnet_json stored it, NULL = none */
	cJSON *metadata;    /* owned; {"key": "value"} its creator gave, NULL = none */
	int resumed_memory; /* started from an image: 1 with its memory, 0 without; -1 not */
	long checkpoint_interval_s; /* its own (0: none), -1: judge.ini's */
};
void sess_row_release(struct sess_row *r);
/* The row as the API shows it: id, language, status, created_at, expires_at,
 * last_used_at, idle_ttl, idle_action, limits, execution_count, network ({"mode": "none"}
 * when none), usage once read, metadata when given, and reason when ended. */
cJSON *sess_row_json(const struct sess_row *r);

/* ---- serve's side ---- */

/* Creates a session of key (0: none) unless the key holds per_key open ones,
 * with network its egress policy (sessnet_json; NULL: none), env its own
 * variables ({"NAME": "value"}; NULL: none), image_id the image its worker
 * restores first (sessimage.h; NULL: none), idle_pause its idle_action,
 * metadata its creator's {"key": "value"} (NULL: none), access_token its
 * E2B sandbox's secret (NULL: none; never shown) and checkpoint_interval_s its
 * own periodic checkpoints (-1: judge.ini's). Returns 0 with id (37 bytes), 1
 * when the key is at its cap, -1 with err. */
int sessdb_create(struct db *db, int64_t key, const char *language, const cJSON *limits,
		  const cJSON *network, const cJSON *env, const char *image_id, long idle_ttl_s,
		  bool idle_pause, long lifetime_s, long per_key, const cJSON *metadata,
		  const char *access_token, long checkpoint_interval_s, char *id, char *err,
		  size_t errlen);
/* Makes paused session id of key starting again, for any worker to claim and
 * restore from its image. Returns 1 done, 0 no such session of key, 2 when it
 * is not paused (*row then holds it: the caller releases it), -1 with err. */
int sessdb_resume(struct db *db, const char *id, int64_t key, long timeout_s, struct sess_row *row,
		  char *err, size_t errlen);
/* Sets the idle TTL of open session id of key to ttl_s, and its end to now
 * + ttl_s (within its lifetime); a paused one keeps its end (its retention's)
 * and takes the TTL when it resumes. Returns 1 done, 0 when key has no such open
 * session, -1 with err. */
int sessdb_set_idle_ttl(struct db *db, const char *id, int64_t key, long ttl_s, char *err,
			size_t errlen);
/* Reads session id of key (scoped: another key's is not found); workers
 * silent longer than timeout_s count as lost. Returns 1, 0 not found, -1. */
int sessdb_get(struct db *db, const char *id, int64_t key, long timeout_s, struct sess_row *out,
	       char *err, size_t errlen);
/* An E2B sandbox's secret (sessions.access_token) and whose it is. */
struct sess_access {
	char id[37];
	int64_t key_id; /* 0: made with auth off */
	char token[80];
};
#define SESS_ACCESS_MAX	    10000
#define SESS_ACCESS_MAX_SQL "10000"
/* The secrets of the open sessions that have one: of session id, or with id
 * NULL of all (newest first, at most SESS_ACCESS_MAX), into *out (malloc'd,
 * *n of them; the caller frees it). Returns 0, or -1 with err. */
int sessdb_access(struct db *db, const char *id, struct sess_access **out, size_t *n, char *err,
		  size_t errlen);
/* The sessions of key, newest first (at most 1000), as a JSON array: the
 * open ones, or with all also those that ended in the last day. */
int sessdb_list(struct db *db, int64_t key, long timeout_s, bool all, cJSON **out, char *err,
		size_t errlen);
/* Ends a session that never got a worker (create timed out): failed. */
int sessdb_fail_unclaimed(struct db *db, const char *id, const char *reason, char *err,
			  size_t errlen);
/* Routes call c: when session id of key is ready (not expired, its worker
 * alive), stores it (sesscall_store, and c->body as bytes), touches the idle
 * clock and NOTIFYs its worker. Returns 1 with *call_id, 0 not found, 2 not
 * open (row says why: out->status and out->reason), -1 with err. row is
 * filled in any case but -1. */
int sessdb_call(struct db *db, const char *id, int64_t key, long timeout_s,
		const struct sess_call *c, int64_t *call_id, struct sess_row *row, char *err,
		size_t errlen);
/* Reads the answer of call_id, of kind k: 1 done (with *out, which the caller
 * releases; a file's bytes too when with_body), 0 still open, -1 with err (also
 * unknown id, and an answer that cannot be read). */
int sessdb_call_get(struct db *db, int64_t call_id, enum scall_kind k, bool with_body,
		    struct sess_reply *out, char *err, size_t errlen);
/* One call of a session as its history shows it (sessdb_history). */
struct sess_hist {
	struct sess_call call;		      /* typed; its body's bytes not loaded */
	struct sess_reply reply;	      /* the answer once done (no file bytes) */
	bool done;			      /* else pending or running */
	long long body_len;		      /* file_put's, process_input's bytes */
	char created_at[40], finished_at[40]; /* ISO 8601 UTC; finished_at "" while open */
	long duration_ms;		      /* started (or stored) to finished; -1 while open */
	char load_error[256];		      /* "" when call and answer were read */
};
void sess_hist_release(struct sess_hist *h);
/* The calls of session id of key (scoped as sessdb_get: another key's is not
 * found) with an id above after, oldest first, at most limit, whatever the
 * session's state: the audit trail, kept as long as the session's row.
 * Returns 1 with *out (a new array of *n; sess_hist_release each, then free),
 * 0 not found, -1 with err. */
int sessdb_history(struct db *db, const char *id, int64_t key, int64_t after, long limit,
		   struct sess_hist **out, size_t *n, char *err, size_t errlen);
/* One egress attempt of a session (migrations/0015, sessegress.h). */
struct sess_egress {
	int64_t id;
	char at[32]; /* ISO 8601, UTC */
	char method[16];
	char host[256];
	int port;
	bool allowed;
	char reason[384];
	char addr[48];
	long long bytes_out, bytes_in;
};
/* The egress attempts of session id (whose key sessdb_history checked) with an
 * id above after, oldest first, at most limit. 0 with *out (free it) and *n,
 * or -1 with err. */
int sessdb_egress_list(struct db *db, const char *id, int64_t after, long limit,
		       struct sess_egress **out, size_t *n, char *err, size_t errlen);
/* Adds one egress attempt (e's id and at are ignored). 0, or -1 with err. */
int sessdb_egress_add(struct db *db, const char *id, const struct sess_egress *e, char *err,
		      size_t errlen);
/* Lost workers' sessions and calls (see above); also ends sessions nobody
 * claimed for 60 s. Returns the number of sessions it ended, or -1. */
int sessdb_reap_lost(struct db *db, long timeout_s, char *err, size_t errlen);
/* Open sessions and how many of them each worker holds, for /metrics:
 * counts[status] over all sessions. */
int sessdb_counts(struct db *db, long counts[SESS_STATUS_COUNT], char *err, size_t errlen);

/* Why ended sessions ended: the "reason" label of judge_sessions_ended_total. */
enum sess_end {
	SESS_END_CLIENT,      /* DELETE, E2B kill */
	SESS_END_IDLE,	      /* idle_ttl passed */
	SESS_END_LIFETIME,    /* session_max_lifetime_s passed */
	SESS_END_CPU_BUDGET,  /* closed by its worker past its CPU budget */
	SESS_END_KEY_REVOKED, /* its API key was revoked */
	SESS_END_LOST,	      /* its worker died or stopped */
	SESS_END_FAILED,      /* it never started */
	SESS_END_OTHER,
	SESS_END_COUNT
};
const char *sess_end_name(enum sess_end e);

/* What every session used, summed from their stored usage (the last reading
 * of each, every second by its worker; rows are kept, so the sums only grow),
 * and what the open ones hold now, for /metrics. */
struct sess_totals {
	double cpu_s, throttled_s; /* CPU, and time held back by the quota */
	long pids_refused;	   /* forks refused by a pids limit */
	long memory_kb, processes; /* open sessions now, as last read */
	long ended[SESS_END_COUNT];
	long egress_allowed, egress_refused; /* egress attempts (session_egress) */
};
/* Fills out from the sessions table (one scan). 0, or -1 with err. */
int sessdb_totals(struct db *db, struct sess_totals *out, char *err, size_t errlen);

/* ---- the worker's side ---- */

/* Registers a worker (name "host:pid"). Returns 0 with *id, or -1. */
int sessdb_worker_register(struct db *db, const char *name, const char *host, long capacity,
			   int64_t *id, char *err, size_t errlen);
/* Beats; with stopping set, says the worker is gone (its sessions lost at once). */
int sessdb_heartbeat(struct db *db, int64_t worker, bool stopping, char *err, size_t errlen);
/* Claims one unclaimed session. Returns 1 with id, language (32 bytes),
 * *limits, *network and *env (owned; NULL: none) and image_id (37 bytes: the image
 * to restore, "" when none), 0 when none, -1. */
int sessdb_claim(struct db *db, int64_t worker, char *id, char *language, cJSON **limits,
		 cJSON **network, cJSON **env, char *image_id, char *err, size_t errlen);
/* Stores the answer of pause call call_id and, when it succeeded
 * (reply->image.id), makes its session paused: no worker, image_id to
 * resume from. Returns 1 paused, 0 not (the answer alone), -1 with err. */
int sessdb_pause_finish(struct db *db, int64_t call_id, const struct sess_reply *reply,
			long retention_s, char *err, size_t errlen);
/* Queues a periodic checkpoint (a snapshot call with checkpoint set) for each
 * ready session of worker used since its last one, its own interval (else
 * interval_s, judge.ini's) ago or more, with no network and no call in
 * flight; an interval of 0 takes none. Returns how many, or -1 with err. */
int sessdb_checkpoint_due(struct db *db, int64_t worker, long interval_s, char *err, size_t errlen);
/* How old session id's checkpoint was when it was moved to a new worker from
 * it (and forgets it): 1 with *age_s, 0 when it was not, -1 with err. */
int sessdb_checkpoint_age(struct db *db, const char *id, double *age_s, char *err, size_t errlen);
/* A claimed session started (ready) or not (failed, reason); memory: from an
 * image, 1 with its memory, 0 without; -1 not from an image. NOTIFYs "s<id>". */
int sessdb_started(struct db *db, const char *id, int64_t worker, bool ok, const char *reason,
		   int memory, char *err, size_t errlen);
/* Marks this worker's sessions past their idle TTL (idle_action close) or
 * lifetime expired. */
int sessdb_expire(struct db *db, int64_t worker, char *err, size_t errlen);
/* Queues a pause call (sess_call.idle) for each of this worker's sessions of
 * idle_action pause past their idle TTL with no call in flight, and announces
 * it to the worker. Returns how many, or -1 with err. */
int sessdb_idle_pause(struct db *db, int64_t worker, char *err, size_t errlen);
/* Ends (expired, with the reason) every paused session past its retention
 * or lifetime, whatever worker paused it. Returns how many, or -1 with err. */
int sessdb_paused_sweep(struct db *db, char *err, size_t errlen);
/* The ids of this worker's open sessions (a JSON array of strings). */
int sessdb_open_ids(struct db *db, int64_t worker, cJSON **out, char *err, size_t errlen);

/* A claimed call: loaded typed, or not (then load_error says why, and the
 * call is to be answered with it). */
struct sess_claimed {
	struct sess_call call; /* id and session_id set in any case */
	char load_error[256];  /* "" when call was loaded */
};
void sess_claimed_release(struct sess_claimed *c);
/* Claims up to max pending calls of this worker's sessions, oldest first.
 * Returns how many (*out: a new array of them), or -1. */
int sessdb_calls_claim(struct db *db, int64_t worker, int max, struct sess_claimed **out, char *err,
		       size_t errlen);
/* Stores the answer to call_id, of kind k (sesscall_reply_store; a file's
 * bytes from reply->file.bytes) and NOTIFYs "c<id>". The session's
 * execution_count grows by reply->cells, its restarts by reply->restarted;
 * end other than SESS_READY ends the session (status, reason). */
int sessdb_call_finish(struct db *db, int64_t call_id, enum scall_kind k,
		       const struct sess_reply *reply, enum sess_status end, const char *reason,
		       char *err, size_t errlen);
/* Stores what this worker's sessions used: usage is an object of session id
 * -> usage object (sesshost's reading). 0, or -1 with err. */
int sessdb_usage_store(struct db *db, int64_t worker, const cJSON *usage, char *err, size_t errlen);
/* Ends a session held here (closed or expired, with reason), answering its open calls. */
int sessdb_end(struct db *db, const char *id, enum sess_status st, const char *reason, char *err,
	       size_t errlen);
