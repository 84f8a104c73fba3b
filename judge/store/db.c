/* db: libpq connections with reconnect, parameterized queries, LISTEN/NOTIFY, a pool.
 *
 * Broken connections: libpq only learns that the server went away when it
 * reads from the socket. Before each query, ensure() peeks at an idle
 * connection's socket: a restarting server sends a FATAL message and closes,
 * so the socket is readable and PQconsumeInput() tells us; we then reconnect
 * before sending, instead of failing the query. A query whose connection
 * breaks while it runs is reported as an error (it may have committed).
 */
#include "judge/store/db.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "judge/store/pgembed.h"

#define MAX_CHANNELS 8
/* statements kept prepared per connection; past that many, queries are sent
 * unprepared (dynamic SQL must not grow a connection's memory without end) */
#define MAX_STMTS 128

/* A statement prepared on the current connection as "j<index>". */
struct stmt {
	uint64_t hash;
	char *sql;
	int nparams;
};

struct db {
	PGconn *conn;
	char *url;
	int reconnect_ms;
	long reconnects;
	char channels[MAX_CHANNELS][64];
	int nchannels;
	char err[512];
	char sqlstate[6];
	/* between db_begin and db_commit/db_rollback: a lost connection must not be
	 * silently replaced, or the rest of the transaction would autocommit */
	bool in_tx;
	struct stmt stmts[MAX_STMTS];
	int nstmts;
};

/* libpq messages end with a newline and may span lines: keep the first line. */
static void set_err(struct db *db, const char *prefix, const char *msg)
{
	snprintf(db->err, sizeof db->err, "%s%s", prefix, msg ? msg : "unknown error");
	char *nl = strchr(db->err, '\n');
	if (nl)
		*nl = 0;
}

static void notice_to_log(void *arg, const char *message)
{
	(void)arg;
	log_debug("postgres: %.*s", (int)strcspn(message, "\n"), message);
}

/* Prepared statements live in their connection: forget them with it. */
static void stmts_forget(struct db *db)
{
	for (int i = 0; i < db->nstmts; i++)
		free(db->stmts[i].sql);
	db->nstmts = 0;
}

static int connect_once(struct db *db)
{
	stmts_forget(db);
	PGconn *c = PQconnectdb(db->url);
	if (!c)
		xalloc_die(0); /* libpq's only reason for NULL */
	if (PQstatus(c) != CONNECTION_OK) {
		set_err(db, "cannot connect to the database: ", PQerrorMessage(c));
		PQfinish(c);
		return -1;
	}
	PQsetNoticeProcessor(c, notice_to_log, NULL);
	db->conn = c;
	return 0;
}

static int listen_all(struct db *db)
{
	for (int i = 0; i < db->nchannels; i++) {
		char sql[96];
		snprintf(sql, sizeof sql, "LISTEN %s", db->channels[i]);
		PGresult *r = PQexec(db->conn, sql);
		int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
		if (!ok)
			set_err(db, "listen failed: ", PQresultErrorMessage(r));
		PQclear(r);
		if (!ok)
			return -1;
	}
	return 0;
}

/* Connects with backoff for up to wait_ms. */
static int connect_backoff(struct db *db, int wait_ms)
{
	int64_t deadline = clock_deadline_ms(wait_ms);
	long delay = 100;
	for (;;) {
		if (connect_once(db) == 0) {
			if (listen_all(db) == 0)
				return 0;
			PQfinish(db->conn);
			db->conn = NULL;
		}
		int64_t left = clock_left_ms(deadline);
		if (left <= 0)
			return -1;
		clock_sleep_ms(delay < left ? delay : left);
		delay = delay * 2 > 2000 ? 2000 : delay * 2;
	}
}

/* True when an idle connection's socket shows the server closed it. */
static bool idle_conn_broken(PGconn *c)
{
	if (PQstatus(c) != CONNECTION_OK)
		return true;
	if (PQtransactionStatus(c) != PQTRANS_IDLE)
		return false; /* inside a transaction: nothing to peek at safely */
	/* the FATAL message and the close may arrive in two reads: keep reading
	 * while the socket has something (notifications are kept by libpq) */
	for (int i = 0; i < 4; i++) {
		struct pollfd p = {.fd = PQsocket(c), .events = POLLIN};
		if (p.fd < 0)
			return true;
		if (poll(&p, 1, i ? 5 : 0) <= 0)
			return false;
		if (!PQconsumeInput(c) || PQstatus(c) != CONNECTION_OK)
			return true;
	}
	return false;
}

/* Reconnects when needed; *reconnected tells whether it did. */
static int ensure(struct db *db, bool *reconnected)
{
	if (reconnected)
		*reconnected = false;
	if (db->conn && !idle_conn_broken(db->conn))
		return 0;
	if (db->in_tx) {
		set_err(db, "", "database connection lost inside a transaction");
		return -1;
	}
	if (db->conn) {
		log_warn("database connection lost, reconnecting");
		PQfinish(db->conn);
		db->conn = NULL;
	}
	if (connect_backoff(db, db->reconnect_ms) < 0)
		return -1;
	db->reconnects++;
	if (reconnected)
		*reconnected = true;
	log_info("database connection re-established");
	return 0;
}

int db_open(struct db **out, const char *url, int wait_ms, char *err, size_t errlen)
{
	struct db *db = xcalloc(1, sizeof *db);
	db->url = xstrdup(url);
	db->reconnect_ms = 30000;
	if (connect_backoff(db, wait_ms) < 0) {
		snprintf(err, errlen, "%s", db->err);
		db_close(db);
		return -1;
	}
	*out = db;
	return 0;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	if (db->conn)
		PQfinish(db->conn);
	stmts_forget(db);
	free(db->url);
	free(db);
}

void db_set_reconnect_ms(struct db *db, int ms)
{
	db->reconnect_ms = ms;
}

int db_ensure(struct db *db)
{
	return ensure(db, NULL);
}

const char *db_error(const struct db *db)
{
	return db->err;
}

PGconn *db_conn(struct db *db)
{
	return db->conn;
}

long db_reconnects(const struct db *db)
{
	return db->reconnects;
}

const char *db_sqlstate(const struct db *db)
{
	return db->sqlstate;
}

static uint64_t sql_hash(const char *sql)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (const unsigned char *c = (const unsigned char *)sql; *c; c++)
		h = (h ^ *c) * 1099511628211ULL;
	return h;
}

/* Worth preparing: what the service runs again and again. Transaction control,
 * LISTEN and the like gain nothing from it. */
static bool preparable(const char *sql, int nparams)
{
	static const char *const verbs[] = {"SELECT", "WITH", "INSERT", "UPDATE", "DELETE"};
	if (nparams > 0)
		return true;
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		if (!strncmp(sql, verbs[i], strlen(verbs[i])))
			return true;
	return false;
}

/* Runs sql as a statement prepared on this connection (prepared on its first
 * use): PostgreSQL then parses and analyses it once per connection, and plans
 * it once when a generic plan serves (a third of its CPU per submission went
 * there). Returns the result, or NULL when sql is not kept prepared (the
 * caller sends it as it is). A failed prepare returns its error result. */
static PGresult *exec_prepared(struct db *db, const char *sql, int nparams,
			       const char *const *params)
{
	if (!preparable(sql, nparams))
		return NULL;
	uint64_t h = sql_hash(sql);
	int i = 0;
	while (i < db->nstmts && (db->stmts[i].hash != h || db->stmts[i].nparams != nparams ||
				  strcmp(db->stmts[i].sql, sql)))
		i++;
	char name[16];
	snprintf(name, sizeof name, "j%d", i);
	if (i == db->nstmts) {
		if (i == MAX_STMTS)
			return NULL;
		PGresult *r = PQprepare(db->conn, name, sql, nparams, NULL);
		if (PQresultStatus(r) != PGRES_COMMAND_OK)
			return r;
		PQclear(r);
		db->stmts[i] = (struct stmt){.hash = h, .sql = xstrdup(sql), .nparams = nparams};
		db->nstmts++;
	}
	return PQexecPrepared(db->conn, name, nparams, params, NULL, NULL, 0);
}

PGresult *db_query(struct db *db, const char *sql, int nparams, const char *const *params)
{
	db->err[0] = 0;
	db->sqlstate[0] = 0;
	if (ensure(db, NULL) < 0)
		return NULL;
	PGresult *r = exec_prepared(db, sql, nparams, params);
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	if (state && !strcmp(state, "0A000") && !db->in_tx &&
	    strstr(PQresultErrorMessage(r), "cached plan")) {
		/* "cached plan must not change result type": a migration changed a
		 * table under a kept statement; drop them all, send this one as is */
		PQclear(r);
		PQclear(PQexec(db->conn, "DEALLOCATE ALL"));
		stmts_forget(db);
		r = NULL;
	}
	if (!r)
		r = PQexecParams(db->conn, sql, nparams, NULL, params, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(r);
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return r;
	state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	if (state)
		snprintf(db->sqlstate, sizeof db->sqlstate, "%s", state);
	set_err(db, "", r ? PQresultErrorMessage(r) : PQerrorMessage(db->conn));
	if (!db->err[0])
		set_err(db, "", PQerrorMessage(db->conn));
	PQclear(r);
	return NULL;
}

PGresult *db_query_bin(struct db *db, const char *sql, int nparams, const char *const *params,
		       const int *lengths, bool binary_result)
{
	db->err[0] = 0;
	db->sqlstate[0] = 0;
	if (ensure(db, NULL) < 0)
		return NULL;
	int formats[16] = {0}, lens[16] = {0};
	if (nparams > 16) {
		set_err(db, "", "too many binary parameters");
		return NULL;
	}
	for (int i = 0; lengths && i < nparams; i++) {
		formats[i] = lengths[i] >= 0;
		lens[i] = lengths[i] >= 0 ? lengths[i] : 0;
	}
	PGresult *r = PQexecParams(db->conn, sql, nparams, NULL, params, lens, formats,
				   binary_result ? 1 : 0);
	ExecStatusType st = PQresultStatus(r);
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return r;
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	if (state)
		snprintf(db->sqlstate, sizeof db->sqlstate, "%s", state);
	set_err(db, "", r ? PQresultErrorMessage(r) : PQerrorMessage(db->conn));
	if (!db->err[0])
		set_err(db, "", PQerrorMessage(db->conn));
	PQclear(r);
	return NULL;
}

int db_exec(struct db *db, const char *sql, int nparams, const char *const *params)
{
	PGresult *r = db_query(db, sql, nparams, params);
	if (!r)
		return -1;
	PQclear(r);
	return 0;
}

int db_begin(struct db *db)
{
	db->in_tx = false;
	if (db_exec(db, "BEGIN", 0, NULL) < 0)
		return -1;
	db->in_tx = true;
	return 0;
}

int db_commit(struct db *db)
{
	/* a COMMIT on an aborted transaction "succeeds" as ROLLBACK: catch that */
	if (db->conn && PQtransactionStatus(db->conn) == PQTRANS_INERROR) {
		db_rollback(db);
		set_err(db, "", "transaction aborted");
		return -1;
	}
	int rc = db_exec(db, "COMMIT", 0, NULL);
	db->in_tx = false;
	return rc;
}

void db_rollback(struct db *db)
{
	db->in_tx = false;
	if (!db->conn || PQstatus(db->conn) != CONNECTION_OK)
		return;
	if (PQtransactionStatus(db->conn) == PQTRANS_IDLE)
		return;
	PGresult *r = PQexec(db->conn, "ROLLBACK");
	PQclear(r);
}

static bool channel_ok(const char *ch)
{
	size_t n = strlen(ch);
	if (!n || n >= 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((ch[i] >= 'a' && ch[i] <= 'z') || (ch[i] >= '0' && ch[i] <= '9') ||
		      ch[i] == '_'))
			return false;
	return true;
}

int db_listen(struct db *db, const char *channel)
{
	if (!channel_ok(channel)) {
		set_err(db, "bad channel name: ", channel);
		return -1;
	}
	int found = 0;
	for (int i = 0; i < db->nchannels; i++)
		found |= !strcmp(db->channels[i], channel);
	if (!found) {
		if (db->nchannels == MAX_CHANNELS) {
			set_err(db, "too many channels: ", channel);
			return -1;
		}
		snprintf(db->channels[db->nchannels++], 64, "%s", channel);
	}
	char sql[96];
	snprintf(sql, sizeof sql, "LISTEN %s", channel);
	return db_exec(db, sql, 0, NULL);
}

int db_unlisten(struct db *db, const char *channel)
{
	if (!channel_ok(channel)) {
		set_err(db, "bad channel name: ", channel);
		return -1;
	}
	for (int i = 0; i < db->nchannels; i++)
		if (!strcmp(db->channels[i], channel)) {
			memmove(db->channels[i], db->channels[i + 1],
				(size_t)(db->nchannels - i - 1) * sizeof db->channels[0]);
			db->nchannels--;
			break;
		}
	char sql[96];
	snprintf(sql, sizeof sql, "UNLISTEN %s", channel);
	return db_exec(db, sql, 0, NULL);
}

static bool take_notify(struct db *db, struct db_notify *out)
{
	PGnotify *n = PQnotifies(db->conn);
	if (!n)
		return false;
	snprintf(out->channel, sizeof out->channel, "%s", n->relname);
	snprintf(out->payload, sizeof out->payload, "%s", n->extra ? n->extra : "");
	PQfreemem(n);
	return true;
}

int db_wait_notify(struct db *db, int timeout_ms, struct db_notify *out)
{
	int64_t deadline = clock_deadline_ms(timeout_ms);
	for (;;) {
		bool again;
		if (ensure(db, &again) < 0)
			return -1;
		if (again)
			return 2;
		if (take_notify(db, out))
			return 1;
		int64_t left = clock_left_ms(deadline);
		if (left <= 0)
			return 0;
		struct pollfd p = {.fd = PQsocket(db->conn), .events = POLLIN};
		int n = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (n < 0 && errno != EINTR) {
			set_err(db, "poll: ", strerror(errno));
			return -1;
		}
		if (n > 0 && !PQconsumeInput(db->conn)) {
			/* the server went away: the next ensure() reconnects */
			set_err(db, "", PQerrorMessage(db->conn));
			if (PQstatus(db->conn) == CONNECTION_OK) {
				PQfinish(db->conn);
				db->conn = NULL;
			}
		}
	}
}

const char *db_value(const PGresult *res, int row, int col)
{
	if (PQgetisnull(res, row, col))
		return NULL;
	return PQgetvalue(res, row, col);
}

long long db_value_ll(const PGresult *res, int row, int col)
{
	const char *v = db_value(res, row, col);
	return v ? strtoll(v, NULL, 10) : 0;
}

struct db_pool {
	pthread_mutex_t lock;
	pthread_cond_t freed;
	char *url;
	int size, open;
	struct db **idle; /* stack of idle connections */
	int nidle;
};

int db_pool_new(struct db_pool **out, const char *url, int size, int wait_ms, char *err,
		size_t errlen)
{
	if (size < 1)
		size = 1;
	struct db_pool *p = xcalloc(1, sizeof *p);
	p->url = xstrdup(url);
	p->idle = xcalloc((size_t)size, sizeof *p->idle);
	pthread_mutex_init(&p->lock, NULL);
	clock_cond_init(&p->freed);
	p->size = size;
	struct db *first;
	if (db_open(&first, url, wait_ms, err, errlen) < 0) {
		db_pool_free(p);
		return -1;
	}
	p->idle[p->nidle++] = first;
	p->open = 1;
	*out = p;
	return 0;
}

struct db *db_pool_get(struct db_pool *p, int timeout_ms)
{
	/* freed measures on CLOCK_MONOTONIC (clock_cond_init) */
	struct timespec until = clock_mono_after(timeout_ms);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		if (p->nidle) {
			struct db *db = p->idle[--p->nidle];
			pthread_mutex_unlock(&p->lock);
			return db;
		}
		if (p->open < p->size) {
			p->open++;
			pthread_mutex_unlock(&p->lock);
			struct db *db;
			char err[512];
			int wait = timeout_ms < 0 ? 30000 : timeout_ms;
			if (db_open(&db, p->url, wait, err, sizeof err) == 0)
				return db;
			log_warn("database pool: %s", err);
			pthread_mutex_lock(&p->lock);
			p->open--;
			pthread_cond_signal(&p->freed);
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		int rc = timeout_ms < 0 ? pthread_cond_wait(&p->freed, &p->lock)
					: pthread_cond_timedwait(&p->freed, &p->lock, &until);
		if (rc == ETIMEDOUT) {
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
	}
}

void db_pool_put(struct db_pool *p, struct db *db)
{
	if (!db)
		return;
	db_rollback(db);
	pthread_mutex_lock(&p->lock);
	p->idle[p->nidle++] = db;
	pthread_cond_signal(&p->freed);
	pthread_mutex_unlock(&p->lock);
}

const char *db_pool_url(const struct db_pool *p)
{
	return p->url;
}

void db_pool_free(struct db_pool *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nidle; i++)
		db_close(p->idle[i]);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->freed);
	free(p->idle);
	free(p->url);
	free(p);
}

int db_config_url(const struct judge_config *cfg, bool start, struct strbuf *url,
		  struct pgembed **embed, char *err, size_t errlen)
{
	if (embed)
		*embed = NULL;
	if (cfg->database_url && cfg->database_url[0]) {
		strbuf_addstr(url, cfg->database_url);
		return 0;
	}
	/* the socket path must be absolute: resolve state_dir now */
	int ret = -1;
	struct strbuf dir = STRBUF_INIT;
	const char *sd = cfg->state_dir && cfg->state_dir[0] ? cfg->state_dir : "var";
	if (mkdir(sd, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create state_dir '%s': %s", sd, strerror(errno));
		goto out;
	}
	char *abs = realpath(sd, NULL);
	if (!abs) {
		snprintf(err, errlen, "cannot resolve state_dir '%s': %s", sd, strerror(errno));
		goto out;
	}
	strbuf_addf(&dir, "%s/pg", abs);
	free(abs);
	if (start) {
		struct pgembed *h = NULL;
		if (pgembed_start(dir.buf, PGEMBED_PORT, &h, err, errlen) < 0)
			goto out;
		if (embed)
			*embed = h;
		else
			pgembed_detach(h); /* the caller asked to keep it running */
	}
	pgembed_url(dir.buf, PGEMBED_PORT, url);
	ret = 0;
out:
	strbuf_release(&dir);
	return ret;
}
