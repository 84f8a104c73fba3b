/* db: PostgreSQL connections through libpq: connect and reconnect with backoff,
 * parameterized queries, transactions, LISTEN/NOTIFY waits, a connection pool.
 *
 * A `struct db` is one connection and is used by one thread at a time (take one
 * per thread from a `struct db_pool`). Every query helper first makes sure the
 * connection is up and reconnects (with backoff, up to the db's reconnect
 * budget) when PostgreSQL went away; after a reconnect the channels given to
 * db_listen() are listened to again. A query that fails because the
 * connection broke is NOT retried (it may have committed): the helper returns
 * the error and the next call reconnects. Callers decide whether to retry.
 *
 * Text parameters only: params[i] is a NUL-terminated string or NULL (SQL NULL);
 * cast in SQL ($1::bigint, $2::jsonb). Results are in text format.
 */
#pragma once
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"

struct judge_config;
struct pgembed;

struct db;

/* Opens a connection to url (a libpq connection string or URI). When the server
 * is not reachable, retries with backoff (100 ms doubling to 2 s) for up to
 * wait_ms milliseconds (0: one attempt). *out is owned by the caller (db_close).
 * Returns 0, or -1 with a message in err. */
int db_open(struct db **out, const char *url, int wait_ms, char *err, size_t errlen);
/* Closes the connection and frees db. NULL is fine. */
void db_close(struct db *db);

/* How long later calls may spend reconnecting a broken connection before they
 * give up with an error (default 30000 ms). */
void db_set_reconnect_ms(struct db *db, int ms);
/* Makes sure the connection is up, reconnecting within the reconnect budget.
 * Returns 0, or -1 (message in db_error()). */
int db_ensure(struct db *db);
/* The last error of db (lower-case, one line); "" when none. Valid until the
 * next call on db. */
const char *db_error(const struct db *db);
/* The libpq connection, for what the helpers do not cover. NULL when down. */
PGconn *db_conn(struct db *db);
/* Number of reconnects since db_open (tests and metrics). */
long db_reconnects(const struct db *db);

/* Runs sql with nparams text parameters. Returns the result (caller PQclear()s)
 * when its status is PGRES_COMMAND_OK or PGRES_TUPLES_OK; else NULL with the
 * message in db_error() and db_sqlstate(). */
PGresult *db_query(struct db *db, const char *sql, int nparams, const char *const *params);
/* db_query with binary parameters (bytea): params[i] is lengths[i] bytes sent
 * as binary when lengths[i] >= 0, else text as in db_query (lengths may be
 * NULL: all text). With binary_result every field comes back in binary form
 * (a bytea's raw bytes: PQgetvalue, PQgetlength), so select bytea only. Not
 * kept prepared. Returns as db_query. */
PGresult *db_query_bin(struct db *db, const char *sql, int nparams, const char *const *params,
		       const int *lengths, bool binary_result);
/* db_query for statements whose rows do not matter. Returns 0 or -1. */
int db_exec(struct db *db, const char *sql, int nparams, const char *const *params);
/* SQLSTATE of the last failed query ("" when none or not a server error),
 * e.g. "23505" unique_violation, "40001" serialization_failure. */
const char *db_sqlstate(const struct db *db);

/* SQL of a timestamptz column x as the API shows times: ISO 8601 in UTC, ms. */
#define DB_ISO_TIME(x) "to_char(" x " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

/* Transactions: BEGIN / COMMIT / ROLLBACK. db_rollback() is safe to call in
 * any state (also on a broken connection) and never fails. */
int db_begin(struct db *db);
int db_commit(struct db *db);
void db_rollback(struct db *db);

/* LISTENs on channel (an SQL identifier of [a-z0-9_]) now and again after every
 * reconnect. Returns 0 or -1. */
int db_listen(struct db *db, const char *channel);
/* Stops listening on channel. Returns 0 or -1. */
int db_unlisten(struct db *db, const char *channel);

struct db_notify {
	char channel[64];
	char payload[256];
};
/* Waits up to timeout_ms (-1: forever) for one notification on a listened
 * channel, with poll() on the connection's socket (no sleep-polling).
 * Notifications that already arrived are returned first.
 * Returns 1 with *out filled, 0 on timeout, 2 when the connection was lost and
 * re-established (notifications may have been missed: re-check state), or -1
 * when the connection is down and could not be re-established in the budget. */
int db_wait_notify(struct db *db, int timeout_ms, struct db_notify *out);

/* Row helpers for a PGresult: the text of a field, NULL for SQL NULL. */
const char *db_value(const PGresult *res, int row, int col);
/* Field as a long long (0 for NULL). */
long long db_value_ll(const PGresult *res, int row, int col);

/* A fixed-size pool of connections to one URL, for threaded callers (HTTP). */
struct db_pool;
/* Creates a pool of up to size connections (opened lazily). The first one is
 * opened now, waiting up to wait_ms for the server. Returns 0 or -1 with err. */
int db_pool_new(struct db_pool **out, const char *url, int size, int wait_ms, char *err,
		size_t errlen);
/* Takes a connection, waiting up to timeout_ms (-1 forever) for a free one.
 * Returns NULL on timeout or when a new connection cannot be opened. The
 * connection is alive as far as we know; queries still reconnect if needed. */
struct db *db_pool_get(struct db_pool *pool, int timeout_ms);
/* Gives a connection back. A connection inside a transaction is rolled back. */
void db_pool_put(struct db_pool *pool, struct db *db);
/* The pool's connection string. */
const char *db_pool_url(const struct db_pool *pool);
/* Closes every connection (all must have been put back) and frees the pool. */
void db_pool_free(struct db_pool *pool);

/* The connection string the judge uses under cfg: database_url when set; else
 * the embedded cluster under state_dir/pg (see pgembed.h). With start set and
 * an empty database_url, the embedded cluster is initialised and started when it
 * is not running; *embed (when embed is non-NULL) then receives a handle that
 * pgembed_stop() stops at exit (NULL when this process did not start it; with
 * embed NULL a cluster started here is left running).
 * Appends the string to url. Returns 0 or -1 with a message in err. */
int db_config_url(const struct judge_config *cfg, bool start, struct strbuf *url,
		  struct pgembed **embed, char *err, size_t errlen);
