/* auth: API keys (created, listed, revoked; stored as SHA-256), Bearer checks,
 * and the per-key admission control of the HTTP API (rate limit, in-flight cap).
 *
 * A key is "jk_" followed by 40 hex digits (160 random bits from getrandom).
 * The database keeps only its hex SHA-256 (api_keys.hash). The server keeps a
 * copy of the active hashes in memory and compares in constant time, so
 * checking a key costs no database round trip. Every change to api_keys
 * NOTIFYs AUTH_CHANNEL when it commits (migrations/0008); serve LISTENs
 * there and calls auth_invalidate, and the next check reads the list again:
 * a revoked key is refused at once. A key that is not in the copy reads the
 * list again too (at most AUTH_MISS_RELOADS_PER_S times a second), so a key
 * used the moment it was created works even when its notification is still
 * on its way.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

struct db;
struct db_pool;

#define AUTH_CHANNEL		"judge_keys" /* NOTIFYed on every change to api_keys */
#define AUTH_MISS_RELOADS_PER_S 20
#define AUTH_KEY_LEN		43     /* "jk_" + 40 hex */
#define AUTH_E2B_PREFIX		"e2b_" /* the same key as "e2b_" + its 40 hex (auth_check) */

/* SHA-256 of len bytes at data into out. */
void auth_sha256(const void *data, size_t len, unsigned char out[32]);
/* Compares n bytes in time that depends on n only. */
bool auth_ct_equal(const void *a, const void *b, size_t n);

/* Creates a key called name: writes the key (AUTH_KEY_LEN chars + NUL) to key
 * and its row id to *id. Returns 0 or -1 with err. */
int auth_key_create(struct db *db, const char *name, char key[AUTH_KEY_LEN + 1], int64_t *id,
		    char *err, size_t errlen);
/* auth_key_create for an operator's key when admin is true: it may use the
 * dashboard and /v1/admin/ (create and revoke keys). */
int auth_key_create_as(struct db *db, const char *name, bool admin, char key[AUTH_KEY_LEN + 1],
		       int64_t *id, char *err, size_t errlen);
/* Every key (id 0), or key id alone, as a JSON array (caller owns it) of {id,
 * name, admin, weight, egress (its own cap, null: judge.ini's), created_ms,
 * revoked_ms (null while active), paused_sessions, images_stored}; never the
 * keys. Returns 0 or -1 with err. */
int auth_key_list_json(struct db *db, int64_t id, cJSON **out, char *err, size_t errlen);
/* Sets active key id's own egress cap to egress (checked by the caller with
 * sessnet_keycap_parse; NULL: none, judge.ini's applies). Returns 1, 0 when
 * there is no such active key, -1 with err. */
int auth_key_set_egress(struct db *db, int64_t id, const cJSON *egress, char *err, size_t errlen);
/* Key id's own egress cap into *out (caller deletes it), NULL when it has
 * none. Returns 0 or -1 with err. */
int auth_key_egress(struct db *db, int64_t id, cJSON **out, char *err, size_t errlen);
/* Prints every key (id, name, created, revoked) to out. Returns 0 or -1. */
int auth_key_list(struct db *db, FILE *out, char *err, size_t errlen);
/* What revoking a key ended. */
struct auth_revoked {
	long cancelled; /* queued submissions, now `cancelled` */
	long sessions;	/* open sessions, now closed */
};
/* The message of a revoked key's cancelled submissions and closed sessions. */
#define AUTH_REVOKED_REASON "its API key was revoked"
/* Revokes key id and, in the same statement, ends its work: its queued
 * submissions become `cancelled` (never run, no callback; running ones
 * finish), its open sessions are closed (their pending calls answer 410;
 * the holding worker ends the sandbox and its processes within a second,
 * after the call in progress), and their waiters are told. Fills *out
 * when not NULL. Returns 1 when revoked, 0 when there is no such active key,
 * -1 with err. */
int auth_key_revoke(struct db *db, int64_t id, struct auth_revoked *out, char *err, size_t errlen);
/* A key's weight: its share of the workers against other keys with queued
 * work (the queue policy, queue.h). */
#define AUTH_WEIGHT_MIN 1
#define AUTH_WEIGHT_MAX 1000
/* Sets key id's weight (AUTH_WEIGHT_MIN..MAX). Returns 1, 0 when there is no
 * such key, -1 with err (a weight out of range included). */
int auth_key_set_weight(struct db *db, int64_t id, long weight, char *err, size_t errlen);

struct auth;

/* Creates the server side: key cache over pool, admission limits
 * (rate_per_min 0 = none; burst is a tenth of it, at least 1; max_in_flight
 * 0 = none). Never NULL (out of memory aborts, xalloc.h). */
struct auth *auth_new(struct db_pool *pool, long rate_per_min, long max_in_flight);
void auth_free(struct auth *a);

enum auth_result { AUTH_OK, AUTH_MISSING, AUTH_INVALID, AUTH_UNAVAILABLE };
/* Checks an Authorization header value ("Bearer KEY"; may be NULL).
 * AUTH_OK sets *key_id; AUTH_UNAVAILABLE when the key list could not be read. */
enum auth_result auth_check(struct auth *a, const char *header, int64_t *key_id);

/* api_keys changed (a notification on AUTH_CHANNEL, or the listener
 * reconnected and may have missed one): the next check reads the list again. */
void auth_invalidate(struct auth *a);
/* True when key_id (from auth_check) is an admin key, or 0 (auth = off, which
 * serve allows on loopback only). Reads the cache auth_check filled. */
bool auth_is_admin(struct auth *a, int64_t key_id);

/* Admits one request of key_id (0 = anonymous, when auth is off). Returns 0,
 * or -1 when the key is over its rate (*retry_after_s: seconds until a token)
 * or in-flight cap (*retry_after_s = 1). An admitted request is ended with
 * auth_done(). */
int auth_admit(struct auth *a, int64_t key_id, int *retry_after_s);
void auth_done(struct auth *a, int64_t key_id);

/* True when listen ("host:port") is a loopback address (127.0.0.0/8, ::1,
 * localhost). */
bool auth_listen_is_loopback(const char *listen);
