/* auth: API keys, Bearer checks against a cached key list, per-key admission. */
#include "judge/service/auth.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "judge/store/db.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/sha256.h"
#include "common/xalloc.h"
#include "judge/service/queue.h"
#include "judge/service/session/sessdb.h"

void auth_sha256(const void *data, size_t len, unsigned char out[32])
{
	sha256_buf(data, len, out);
}

bool auth_ct_equal(const void *a, const void *b, size_t n)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char d = 0;
	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

static void hex(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = 0;
}

static int unhex(const char *s, unsigned char *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int v = 0;
		for (int j = 0; j < 2; j++) {
			char c = s[2 * i + j];
			int d = c >= '0' && c <= '9'   ? c - '0'
				: c >= 'a' && c <= 'f' ? c - 'a' + 10
						       : -1;
			if (d < 0)
				return -1;
			v = v * 16 + d;
		}
		out[i] = (unsigned char)v;
	}
	return s[2 * n] ? -1 : 0;
}

/* ---- key management (CLI) ---- */

int auth_key_create(struct db *db, const char *name, char key[AUTH_KEY_LEN + 1], int64_t *id,
		    char *err, size_t errlen)
{
	return auth_key_create_as(db, name, false, key, id, err, errlen);
}

int auth_key_create_as(struct db *db, const char *name, bool admin, char key[AUTH_KEY_LEN + 1],
		       int64_t *id, char *err, size_t errlen)
{
	unsigned char rnd[20], digest[32];
	char hash[65];
	if (!*name || strlen(name) > 200) {
		snprintf(err, errlen, "a key name must have 1 to 200 characters");
		return -1;
	}
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
		snprintf(err, errlen, "getrandom: %s", strerror(errno));
		return -1;
	}
	memcpy(key, "jk_", 3);
	hex(rnd, sizeof rnd, key + 3);
	auth_sha256(key, AUTH_KEY_LEN, digest);
	hex(digest, 32, hash);
	const char *params[] = {name, hash, admin ? "true" : "false"};
	PGresult *res = db_query(
	    db,
	    "INSERT INTO api_keys (name, hash, admin) VALUES ($1, $2, $3::boolean) RETURNING id", 3,
	    params);
	if (!res) {
		snprintf(err, errlen, "cannot store the key: %s", db_error(db));
		return -1;
	}
	*id = db_value_ll(res, 0, 0);
	PQclear(res);
	return 0;
}

int auth_key_list(struct db *db, FILE *out, char *err, size_t errlen)
{
	PGresult *res =
	    db_query(db,
		     "SELECT id, name, to_char(created AT TIME ZONE 'UTC', "
		     "'YYYY-MM-DD HH24:MI:SS'), coalesce(to_char(revoked AT TIME ZONE "
		     "'UTC', 'YYYY-MM-DD HH24:MI:SS'), '-'), CASE WHEN admin THEN 'admin' "
		     "ELSE '-' END, weight, coalesce(egress->>'mode' || coalesce(' ' || (SELECT "
		     "string_agg(r, ',') FROM jsonb_array_elements_text(egress->'allow') r), ''), "
		     "'-') FROM api_keys ORDER BY id",
		     0, NULL);
	if (!res) {
		snprintf(err, errlen, "cannot list keys: %s", db_error(db));
		return -1;
	}
	fprintf(out, "%-6s %-24s %-20s %-20s %-6s %-6s %s\n", "id", "name", "created (UTC)",
		"revoked (UTC)", "admin", "weight", "egress");
	for (int i = 0; i < PQntuples(res); i++)
		fprintf(out, "%-6s %-24s %-20s %-20s %-6s %-6s %s\n", db_value(res, i, 0),
			db_value(res, i, 1), db_value(res, i, 2), db_value(res, i, 3),
			db_value(res, i, 4), db_value(res, i, 5), db_value(res, i, 6));
	PQclear(res);
	return 0;
}

int auth_key_list_json(struct db *db, int64_t id, cJSON **out, char *err, size_t errlen)
{
	char ids[32];
	snprintf(ids, sizeof ids, "%lld", (long long)id);
	const char *params[] = {ids};
	PGresult *res = db_query(
	    db,
	    "SELECT coalesce(json_agg(json_build_object('id', k.id, 'name', k.name, 'admin', "
	    "k.admin, 'weight', k.weight, "
	    "'egress', k.egress, "
	    "'created_ms', (extract(epoch FROM k.created) * 1000)::bigint, 'revoked_ms', "
	    "(extract(epoch FROM k.revoked) * 1000)::bigint, "
	    "'paused_sessions', (SELECT count(*) FROM sessions s WHERE s.api_key_id = k.id AND "
	    "s.status = 'paused'), "
	    "'images_stored', (SELECT coalesce(sum(b.stored), 0) FROM blobs b WHERE b.api_key_id = "
	    "k.id)) ORDER BY k.id), '[]') FROM api_keys k WHERE $1::bigint = 0 OR k.id = "
	    "$1::bigint",
	    1, params);
	if (!res) {
		snprintf(err, errlen, "cannot list keys: %s", db_error(db));
		return -1;
	}
	*out = cJSON_Parse(db_value(res, 0, 0));
	PQclear(res);
	if (!*out) {
		snprintf(err, errlen, "cannot list keys: not JSON");
		return -1;
	}
	return 0;
}

/* What a revoked key's work becomes: its queued submissions are cancelled
 * (never run, no callback), its open sessions closed with their pending calls
 * answered 410, and everyone waiting told (judge_done, the sessions' replies);
 * the workers holding the sessions end them at their next look (sesshost.h).
 * One statement: the key, its work and the NOTIFYs commit together. */
static const char revoke_sql[] =
    "WITH k AS (UPDATE api_keys SET revoked = now() WHERE id = $1::bigint AND revoked IS NULL "
    "RETURNING id), "
    "c AS (UPDATE submissions s SET status = 'cancelled', finished = now(), lease_until = NULL, "
    "callback_next = NULL, result = jsonb_build_object('status', 'cancelled', 'message', "
    "$2::text) FROM k WHERE s.api_key_id = k.id AND s.status = 'queued' RETURNING s.id), "
    "e AS (UPDATE sessions t SET status = 'closed', closed = now(), close_reason = $2::text "
    "FROM k WHERE t.api_key_id = k.id AND t.status IN ('starting', 'ready') RETURNING t.id), "
    "calls AS (UPDATE session_calls sc SET state = 'done', finished = now(), response = "
    "jsonb_build_object('http', 410, 'error', jsonb_build_object('code', 'session_closed', "
    "'message', $2::text)) WHERE sc.session_id IN (SELECT id FROM e) AND sc.state <> 'done' "
    "RETURNING sc.id), "
    "n AS (SELECT pg_notify('" QUEUE_CHANNEL_DONE "', id::text) FROM c UNION ALL "
    "SELECT pg_notify('" SESS_CHANNEL_REPLY "', 's' || id) FROM e UNION ALL "
    "SELECT pg_notify('" SESS_CHANNEL_REPLY "', 'c' || id) FROM calls) "
    "SELECT (SELECT count(*) FROM k), (SELECT count(*) FROM c), (SELECT count(*) FROM e), "
    "(SELECT count(*) FROM n)";

int auth_key_revoke(struct db *db, int64_t id, struct auth_revoked *out, char *err, size_t errlen)
{
	char ids[32];
	snprintf(ids, sizeof ids, "%lld", (long long)id);
	const char *params[] = {ids, AUTH_REVOKED_REASON};
	PGresult *res = db_query(db, revoke_sql, 2, params);
	if (!res) {
		snprintf(err, errlen, "cannot revoke key %lld: %s", (long long)id, db_error(db));
		return -1;
	}
	int n = (int)db_value_ll(res, 0, 0);
	if (out) {
		out->cancelled = (long)db_value_ll(res, 0, 1);
		out->sessions = (long)db_value_ll(res, 0, 2);
	}
	PQclear(res);
	return n == 1;
}

int auth_key_set_weight(struct db *db, int64_t id, long weight, char *err, size_t errlen)
{
	if (weight < AUTH_WEIGHT_MIN || weight > AUTH_WEIGHT_MAX) {
		snprintf(err, errlen, "a key's weight must be between %d and %d, not %ld",
			 AUTH_WEIGHT_MIN, AUTH_WEIGHT_MAX, weight);
		return -1;
	}
	char ids[32], w[24];
	snprintf(ids, sizeof ids, "%lld", (long long)id);
	snprintf(w, sizeof w, "%ld", weight);
	const char *params[] = {ids, w};
	PGresult *res =
	    db_query(db, "UPDATE api_keys SET weight = $2::int WHERE id = $1::bigint", 2, params);
	if (!res) {
		snprintf(err, errlen, "cannot set the weight of key %lld: %s", (long long)id,
			 db_error(db));
		return -1;
	}
	int n = atoi(PQcmdTuples(res));
	PQclear(res);
	return n == 1;
}

int auth_key_set_egress(struct db *db, int64_t id, const cJSON *egress, char *err, size_t errlen)
{
	char ids[32];
	snprintf(ids, sizeof ids, "%lld", (long long)id);
	char *text = egress ? cJSON_PrintUnformatted(egress) : NULL;
	const char *params[] = {ids, text};
	PGresult *res = db_query(
	    db, "UPDATE api_keys SET egress = $2::jsonb WHERE id = $1::bigint AND revoked IS NULL",
	    2, params);
	free(text);
	if (!res) {
		snprintf(err, errlen, "cannot set the egress of key %lld: %s", (long long)id,
			 db_error(db));
		return -1;
	}
	int n = atoi(PQcmdTuples(res));
	PQclear(res);
	return n == 1;
}

int auth_key_egress(struct db *db, int64_t id, cJSON **out, char *err, size_t errlen)
{
	char ids[32];
	snprintf(ids, sizeof ids, "%lld", (long long)id);
	const char *params[] = {ids};
	*out = NULL;
	PGresult *res =
	    db_query(db, "SELECT egress FROM api_keys WHERE id = $1::bigint", 1, params);
	if (!res) {
		snprintf(err, errlen, "cannot read the egress of key %lld: %s", (long long)id,
			 db_error(db));
		return -1;
	}
	if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 0) &&
	    !(*out = cJSON_Parse(db_value(res, 0, 0)))) {
		snprintf(err, errlen, "key %lld's egress is not JSON", (long long)id);
		PQclear(res);
		return -1;
	}
	PQclear(res);
	return 0;
}

/* ---- server side ---- */

struct cached_key {
	int64_t id;
	unsigned char hash[32];
	bool admin;
};

/* Admission state of one key: a token bucket and the in-flight count. */
struct bucket {
	int64_t key_id;
	double tokens;
	int64_t last_ms; /* clock_mono_ms() of the last refill */
	long in_flight;
};

struct auth {
	struct db_pool *pool;
	pthread_mutex_t lock;
	struct cached_key *keys;
	size_t nkeys;
	int64_t loaded_ms; /* clock_mono_ms() of the last load, 0 = never */
	int64_t last_try_ms;
	bool stale;	      /* api_keys changed since the last load (auth_invalidate) */
	double miss_tokens;   /* reloads a miss may still cause (AUTH_MISS_RELOADS_PER_S) */
	int64_t miss_last_ms; /* clock_mono_ms() of the last refill */
	double rate_per_s, burst;
	long max_in_flight;
	struct bucket *buckets;
	size_t nbuckets, abuckets;
};

struct auth *auth_new(struct db_pool *pool, long rate_per_min, long max_in_flight)
{
	struct auth *a = xcalloc(1, sizeof *a);
	a->pool = pool;
	pthread_mutex_init(&a->lock, NULL);
	a->rate_per_s = (double)rate_per_min / 60.0;
	a->burst = rate_per_min / 10 > 1 ? (double)(rate_per_min / 10) : 1.0;
	a->max_in_flight = max_in_flight;
	a->miss_tokens = AUTH_MISS_RELOADS_PER_S;
	a->miss_last_ms = clock_mono_ms();
	return a;
}

void auth_free(struct auth *a)
{
	if (!a)
		return;
	pthread_mutex_destroy(&a->lock);
	free(a->keys);
	free(a->buckets);
	free(a);
}

/* Reloads the active keys; called with a->lock held. Returns 0 or -1. */
static int load_keys(struct auth *a)
{
	a->last_try_ms = clock_mono_ms();
	struct db *db = db_pool_get(a->pool, 2000);
	if (!db)
		return -1;
	db_set_reconnect_ms(db, 2000); /* the lock is held: fail fast while the server is away */
	PGresult *res =
	    db_query(db, "SELECT id, hash, admin FROM api_keys WHERE revoked IS NULL", 0, NULL);
	if (!res) {
		log_warn("auth: cannot read api keys: %s", db_error(db));
		db_pool_put(a->pool, db);
		return -1;
	}
	int n = PQntuples(res);
	struct cached_key *keys = xcalloc((size_t)n + 1, sizeof *keys);
	size_t k = 0;
	for (int i = 0; i < n; i++) {
		const char *h = db_value(res, i, 1);
		if (h && unhex(h, keys[k].hash, 32) == 0) {
			keys[k].admin = !strcmp(db_value(res, i, 2), "t");
			keys[k++].id = db_value_ll(res, i, 0);
		}
	}
	PQclear(res);
	db_pool_put(a->pool, db);
	free(a->keys);
	a->keys = keys;
	a->nkeys = k;
	a->loaded_ms = a->last_try_ms;
	a->stale = false;
	return 0;
}

static int64_t find_key(const struct auth *a, const unsigned char digest[32])
{
	int64_t found = 0;
	/* every entry is compared, so the time does not tell which one matched */
	for (size_t i = 0; i < a->nkeys; i++)
		if (auth_ct_equal(a->keys[i].hash, digest, 32))
			found = a->keys[i].id;
	return found;
}

/* Takes one of the reloads misses may cause (a token bucket, burst of one
 * second's worth); called with a->lock held. */
static bool miss_token(struct auth *a, int64_t now_ms)
{
	a->miss_tokens += (double)(now_ms - a->miss_last_ms) / 1000.0 * AUTH_MISS_RELOADS_PER_S;
	if (a->miss_tokens > AUTH_MISS_RELOADS_PER_S)
		a->miss_tokens = AUTH_MISS_RELOADS_PER_S;
	a->miss_last_ms = now_ms;
	if (a->miss_tokens < 1.0)
		return false;
	a->miss_tokens -= 1.0;
	return true;
}

enum auth_result auth_check(struct auth *a, const char *header, int64_t *key_id)
{
	if (!header)
		return AUTH_MISSING;
	while (*header == ' ')
		header++;
	if (strncasecmp(header, "Bearer ", 7))
		return AUTH_INVALID;
	const char *key = header + 7;
	while (*key == ' ')
		key++;
	size_t n = strcspn(key, " \t");
	/* "Bearer KEY junk" is not a credential, whatever KEY is */
	if (key[n + strspn(key + n, " \t")])
		return AUTH_INVALID;
	/* E2B's Python SDK takes only keys of the form e2b_ + hex: a judge key
	 * may be written so, "e2b_" in place of its "jk_" (docs/e2b.md) */
	char spelled[AUTH_KEY_LEN];
	if (n == AUTH_KEY_LEN + 1 && !strncmp(key, AUTH_E2B_PREFIX, 4)) {
		memcpy(spelled, "jk_", 3);
		memcpy(spelled + 3, key + 4, AUTH_KEY_LEN - 3);
		key = spelled;
		n = AUTH_KEY_LEN;
	}
	if (n != AUTH_KEY_LEN || strncmp(key, "jk_", 3))
		return AUTH_INVALID;
	unsigned char digest[32];
	auth_sha256(key, n, digest);
	enum auth_result r = AUTH_INVALID;
	pthread_mutex_lock(&a->lock);
	int64_t t = clock_mono_ms();
	/* a database that is away is retried once a second, not by every request */
	bool failed_lately = a->last_try_ms != a->loaded_ms && t - a->last_try_ms <= 1000;
	if ((!a->loaded_ms || a->stale) && !failed_lately)
		load_keys(a);
	int64_t id = a->loaded_ms ? find_key(a, digest) : 0;
	/* a key created a moment ago, whose notification is still on its way: the
	 * list is read again, at most AUTH_MISS_RELOADS_PER_S times a second (keys
	 * that do not exist cost the database no more than that) */
	if (!id && a->loaded_ms && !failed_lately && miss_token(a, t) && load_keys(a) == 0)
		id = find_key(a, digest);
	if (id) {
		*key_id = id;
		r = AUTH_OK;
	} else if (!a->loaded_ms) {
		r = AUTH_UNAVAILABLE;
	}
	pthread_mutex_unlock(&a->lock);
	return r;
}

void auth_invalidate(struct auth *a)
{
	pthread_mutex_lock(&a->lock);
	a->stale = true;
	pthread_mutex_unlock(&a->lock);
}

bool auth_is_admin(struct auth *a, int64_t key_id)
{
	if (!key_id)
		return true; /* auth = off: loopback only (serve refuses it elsewhere) */
	bool admin = false;
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->nkeys; i++)
		if (a->keys[i].id == key_id)
			admin = a->keys[i].admin;
	pthread_mutex_unlock(&a->lock);
	return admin;
}

static struct bucket *bucket_of(struct auth *a, int64_t key_id)
{
	for (size_t i = 0; i < a->nbuckets; i++)
		if (a->buckets[i].key_id == key_id)
			return &a->buckets[i];
	if (a->nbuckets == a->abuckets) {
		size_t na = a->abuckets ? 2 * a->abuckets : 16;
		a->buckets = xreallocarray(a->buckets, na, sizeof *a->buckets);
		a->abuckets = na;
	}
	struct bucket *b = &a->buckets[a->nbuckets++];
	b->key_id = key_id;
	b->tokens = a->burst;
	b->last_ms = clock_mono_ms();
	b->in_flight = 0;
	return b;
}

int auth_admit(struct auth *a, int64_t key_id, int *retry_after_s)
{
	int ret = 0;
	pthread_mutex_lock(&a->lock);
	struct bucket *b = bucket_of(a, key_id);
	if (a->max_in_flight && b->in_flight >= a->max_in_flight) {
		*retry_after_s = 1;
		ret = -1;
		goto out;
	}
	if (a->rate_per_s > 0) {
		int64_t t = clock_mono_ms();
		b->tokens += (double)(t - b->last_ms) / 1000.0 * a->rate_per_s;
		if (b->tokens > a->burst)
			b->tokens = a->burst;
		b->last_ms = t;
		if (b->tokens < 1.0) {
			double wait = (1.0 - b->tokens) / a->rate_per_s;
			*retry_after_s = (int)wait + 1;
			ret = -1;
			goto out;
		}
		b->tokens -= 1.0;
	}
	b->in_flight++;
out:
	pthread_mutex_unlock(&a->lock);
	return ret;
}

void auth_done(struct auth *a, int64_t key_id)
{
	pthread_mutex_lock(&a->lock);
	struct bucket *b = bucket_of(a, key_id);
	if (b->in_flight > 0)
		b->in_flight--;
	pthread_mutex_unlock(&a->lock);
}

bool auth_listen_is_loopback(const char *listen)
{
	char host[256];
	const char *colon = strrchr(listen, ':');
	size_t n = colon ? (size_t)(colon - listen) : strlen(listen);
	if (n >= sizeof host)
		return false;
	memcpy(host, listen, n);
	host[n] = 0;
	if (host[0] == '[' && n >= 2 && host[n - 1] == ']') {
		memmove(host, host + 1, n - 2);
		host[n - 2] = 0;
	}
	if (!strcasecmp(host, "localhost"))
		return true;
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return false;
}
