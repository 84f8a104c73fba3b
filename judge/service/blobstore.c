/* blobstore: byte strings of an API key in PostgreSQL, chunked, compressed and checked. */
#include "judge/service/blobstore.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "common/clock.h"
#include "common/sha256.h"
#include "common/xalloc.h"
#include "judge/store/db.h"

/* Threads hashing and (de)compressing chunks 0..n-1, taken in order, while
 * the caller works through the chunks done (stores them, or reads the next). */
#define WORK_THREADS 4

struct work {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t n, next;
	unsigned char *done; /* per chunk */
	bool stop;
	void (*fn)(struct work *w, size_t i);
	void *arg;
	pthread_t th[WORK_THREADS];
	int nth;
};

static void *work_main(void *arg)
{
	struct work *w = arg;
	for (;;) {
		pthread_mutex_lock(&w->mu);
		size_t i = w->next < w->n && !w->stop ? w->next++ : w->n;
		pthread_mutex_unlock(&w->mu);
		if (i >= w->n)
			return NULL;
		w->fn(w, i);
		pthread_mutex_lock(&w->mu);
		w->done[i] = 1;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
}

/* Starts fn on chunks 0..n-1 on up to as many threads as CPUs (at most
 * WORK_THREADS); with none to be had, the caller's work_wait runs them. */
static void work_start(struct work *w, size_t n, void (*fn)(struct work *w, size_t i), void *arg)
{
	memset(w, 0, sizeof *w);
	pthread_mutex_init(&w->mu, NULL);
	clock_cond_init(&w->cv);
	w->n = n;
	w->done = xcalloc(n ? n : 1, 1);
	w->fn = fn;
	w->arg = arg;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int want = cpus < 1 ? 1 : cpus > WORK_THREADS ? WORK_THREADS : (int)cpus;
	for (int i = 0; i < want && (size_t)i < n; i++)
		if (pthread_create(&w->th[w->nth], NULL, work_main, w) == 0)
			w->nth++;
}

/* Waits until chunk i is done (doing it here when no thread runs). */
static void work_wait(struct work *w, size_t i)
{
	if (!w->nth) {
		w->fn(w, i);
		w->done[i] = 1;
		return;
	}
	pthread_mutex_lock(&w->mu);
	while (!w->done[i])
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

/* Stops the threads (the chunks not yet taken stay undone) and waits for them. */
static void work_end(struct work *w)
{
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	for (int i = 0; i < w->nth; i++)
		pthread_join(w->th[i], NULL);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w->done);
}

/* Whether deflate shrinks these bytes enough to be worth it: four slices of
 * 4 KiB spread over them, compressed; random bytes (most of a memory image's
 * data) cost deflate ~10 times what storing them does, and gain nothing. */
static bool worth_compressing(const unsigned char *p, size_t len)
{
	enum { SLICE = 4096 };
	if (len < 4 * SLICE)
		return true;
	unsigned char out[SLICE + 64];
	size_t in = 0, got = 0;
	for (int k = 0; k < 4; k++) {
		uLongf bound = sizeof out;
		if (compress2(out, &bound, p + len / 4 * k, SLICE, 1) != Z_OK)
			bound = SLICE; /* did not fit: no gain */
		in += SLICE;
		got += bound;
	}
	return got < in - in / 16;
}

struct encode {
	const unsigned char *data;
	size_t len, chunk;
	struct blob_chunk *c;
	bool borrow; /* a chunk stored as it is points into data, which outlives it */
};

static void encode_one(struct work *w, size_t i)
{
	struct encode *e = w->arg;
	struct blob_chunk *c = &e->c[i];
	const unsigned char *p = e->data + i * e->chunk;
	c->size = e->len - i * e->chunk < e->chunk ? e->len - i * e->chunk : e->chunk;
	unsigned char d[32];
	sha256_buf(c->size ? p : (const unsigned char *)"", c->size, d);
	sha256_hex(d, c->sha256);
	c->len = 0;
	if (worth_compressing(p, c->size)) {
		uLongf bound = compressBound((uLong)c->size);
		c->data = xmalloc(bound);
		/* level 1: images are mostly packages and data; speed beats the last percent */
		if (compress2(c->data, &bound, p, (uLong)c->size, 1) != Z_OK)
			abort(); /* only out of memory, which xmalloc already refuses */
		c->len = bound;
	}
	if (!c->len || c->len >= c->size) {
		/* as it is: its length equal to its size says so */
		free(c->data);
		c->len = c->size;
		if (e->borrow && c->size) {
			/* no copy of 1 MiB per chunk of a memory image */
			c->data = (unsigned char *)p;
			c->borrowed = true;
			return;
		}
		c->data = xmalloc(c->size ? c->size : 1);
		memcpy(c->data, p, c->size);
	}
}

/* The whole's hash as stored: "c:" and the SHA-256 of the chunks' hashes. */
static void whole_hash(const struct blob_chunk *c, size_t n, char out[BLOBSTORE_SHA_SIZE])
{
	struct sha256 h;
	unsigned char d[32];
	sha256_init(&h);
	for (size_t i = 0; i < n; i++)
		sha256_update(&h, c[i].sha256, 64);
	sha256_final(&h, d);
	memcpy(out, "c:", 2);
	sha256_hex(d, out + 2);
}

void blobstore_encode(const void *data, size_t len, size_t chunk, struct blob_chunk **out,
		      size_t *n, char sha256[BLOBSTORE_SHA_SIZE])
{
	if (!chunk)
		chunk = BLOBSTORE_CHUNK;
	*n = (len + chunk - 1) / chunk;
	*out = *n ? xcalloc(*n, sizeof **out) : NULL;
	struct encode e = {data, len, chunk, *out, false};
	struct work w;
	work_start(&w, *n, encode_one, &e);
	for (size_t i = 0; i < *n; i++)
		work_wait(&w, i);
	work_end(&w);
	whole_hash(*out, *n, sha256);
}

void blobstore_chunks_free(struct blob_chunk *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++)
		if (!c[i].borrowed)
			free(c[i].data);
	free(c);
}

/* Chunk i (c) into dst (c->size bytes), checked against its hash. 0, or -1
 * with err. */
static int decode_one(const struct blob_chunk *c, size_t i, unsigned char *dst, char *err,
		      size_t errlen)
{
	unsigned char d[32];
	char hex[65];
	int zr = Z_OK;
	if (c->len == c->size) {
		/* stored as it is; or, in a blob of before, deflated to exactly its size */
		memcpy(dst, c->data, c->size);
		sha256_buf(c->size ? dst : (const unsigned char *)"", c->size, d);
		sha256_hex(d, hex);
		if (!strcmp(hex, c->sha256))
			return 0;
	}
	uLongf got = (uLongf)c->size;
	zr = uncompress(dst, &got, c->data, (uLong)c->len);
	if (zr != Z_OK || got != c->size) {
		if (c->len == c->size)
			snprintf(err, errlen, "chunk %zu does not match its SHA-256", i);
		else
			snprintf(err, errlen, "chunk %zu does not inflate to its %zu bytes (%s)", i,
				 c->size, zr == Z_OK ? "short" : zError(zr));
		return -1;
	}
	sha256_buf(c->size ? dst : (const unsigned char *)"", c->size, d);
	sha256_hex(d, hex);
	if (strcmp(hex, c->sha256)) {
		snprintf(err, errlen, "chunk %zu does not match its SHA-256", i);
		return -1;
	}
	return 0;
}

/* Checks the whole against sha256: the chunks' hashes ("c:"), or for a blob of
 * before the bytes' hash. 0, or -1 with err. */
static int whole_check(const struct blob_chunk *c, size_t n, const void *bytes, size_t len,
		       const char *sha256, char *err, size_t errlen)
{
	char hex[BLOBSTORE_SHA_SIZE];
	if (!strncmp(sha256, "c:", 2)) {
		whole_hash(c, n, hex);
	} else {
		unsigned char d[32];
		sha256_buf(len ? bytes : "", len, d);
		sha256_hex(d, hex);
	}
	if (strcmp(hex, sha256)) {
		snprintf(err, errlen, "the blob does not match its SHA-256");
		return -1;
	}
	return 0;
}

struct decode {
	const struct blob_chunk *c;
	unsigned char *base;
	const size_t *off;
	/* what the caller does before a chunk's bytes are there, and after */
	int (*fetch)(void *arg, size_t i);
	void (*release)(void *arg, size_t i);
	void *arg;
	int *rc;
	char (*err)[200];
};

static void decode_chunk(struct work *w, size_t i)
{
	struct decode *d = w->arg;
	if (d->fetch && d->fetch(d->arg, i) < 0) {
		d->rc[i] = -2; /* the caller says why */
		return;
	}
	d->rc[i] = decode_one(&d->c[i], i, d->base + d->off[i], d->err[i], sizeof d->err[i]);
	if (d->release)
		d->release(d->arg, i);
}

/* Decodes chunks c (n, their sizes checked by the caller to add up to size)
 * into out's room at out->len, on threads; fetch (may be NULL) is called on a
 * thread for chunk i before it is decoded. 0; -1 with err; -2 when a fetch
 * failed (the caller's error). out->len is not moved. */
static int decode_all(const struct blob_chunk *c, size_t n, size_t size, struct strbuf *out,
		      int (*fetch)(void *, size_t), void (*release)(void *, size_t), void *arg,
		      char *err, size_t errlen)
{
	strbuf_grow(out, size + 1);
	size_t *off = xcalloc(n ? n : 1, sizeof *off);
	for (size_t i = 1; i < n; i++)
		off[i] = off[i - 1] + c[i - 1].size;
	int *rc = xcalloc(n ? n : 1, sizeof *rc);
	char(*errs)[200] = xcalloc(n ? n : 1, sizeof *errs);
	struct decode d = {c,	(unsigned char *)out->buf + out->len, off, fetch, release, arg, rc,
			   errs};
	struct work w;
	work_start(&w, n, decode_chunk, &d);
	int ret = 0;
	for (size_t i = 0; i < n; i++) {
		work_wait(&w, i);
		if (rc[i] < 0) {
			ret = rc[i];
			if (rc[i] == -1)
				snprintf(err, errlen, "%s", errs[i]);
			break;
		}
	}
	work_end(&w);
	free(off);
	free(rc);
	free(errs);
	return ret;
}

int blobstore_decode(const struct blob_chunk *c, size_t n, long long size, const char *sha256,
		     struct strbuf *out, char *err, size_t errlen)
{
	size_t start = out->len;
	long long total = 0;
	for (size_t i = 0; i < n; i++) {
		if (c[i].size > BLOBSTORE_CHUNK * 4 || total + (long long)c[i].size > size) {
			snprintf(err, errlen, "chunk %zu is larger than the blob", i);
			goto bad;
		}
		total += (long long)c[i].size;
	}
	if (total != size) {
		snprintf(err, errlen, "the blob is truncated: %lld of %lld bytes", total, size);
		goto bad;
	}
	if (decode_all(c, n, (size_t)size, out, NULL, NULL, NULL, err, errlen) < 0 ||
	    whole_check(c, n, out->buf + start, (size_t)size, sha256, err, errlen) < 0)
		goto bad;
	out->len += (size_t)size;
	out->buf[out->len] = 0;
	return 0;
bad:
	out->len = start;
	if (out->buf)
		out->buf[start] = 0;
	return -1;
}

static int fail(struct db *db, char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "cannot %s: %s", what, db_error(db));
	return -1;
}

/* The chunks' writers of one blob, one per connection: each takes the next
 * chunk not yet taken, waits until it is encoded and inserts it. */
struct writers {
	pthread_mutex_t mu;
	size_t next, n;
	struct work *w;
	struct blob_chunk *c;
	const char *ids;
	long long total;
	bool failed;
	char err[300];
};

struct writer {
	struct writers *ws;
	struct db *db;
	pthread_t th;
};

static void *writer_main(void *arg)
{
	struct writer *wr = arg;
	struct writers *ws = wr->ws;
	for (;;) {
		pthread_mutex_lock(&ws->mu);
		size_t i = ws->failed ? ws->n : ws->next;
		if (i < ws->n)
			ws->next++;
		pthread_mutex_unlock(&ws->mu);
		if (i >= ws->n)
			return NULL;
		work_wait(ws->w, i);
		struct blob_chunk *c = &ws->c[i];
		char seq[24], size[24];
		snprintf(seq, sizeof seq, "%zu", i);
		snprintf(size, sizeof size, "%zu", c->size);
		const char *q[] = {ws->ids, seq, size, c->sha256, (const char *)c->data};
		const int lens[] = {-1, -1, -1, -1, (int)c->len};
		PGresult *res = db_query_bin(
		    wr->db,
		    "INSERT INTO blob_chunks (blob_id, seq, size, sha256, data) VALUES "
		    "($1::bigint, $2::int, $3::int, $4, $5::bytea)",
		    5, q, lens, false);
		pthread_mutex_lock(&ws->mu);
		if (!res) {
			if (!ws->failed)
				snprintf(ws->err, sizeof ws->err, "cannot store a blob: %s",
					 db_error(wr->db));
			ws->failed = true;
		} else {
			ws->total += (long long)c->len;
		}
		pthread_mutex_unlock(&ws->mu);
		if (!res)
			return NULL;
		PQclear(res);
		if (!c->borrowed)
			free(c->data); /* written: what is held stays a few chunks */
		c->data = NULL;
	}
}

int blobstore_store(struct db *db, struct db *const *more, int nmore, int64_t key, const void *data,
		    size_t len, long long cap_bytes, int64_t *id, long long *stored, char *err,
		    size_t errlen)
{
	size_t n = (len + BLOBSTORE_CHUNK - 1) / BLOBSTORE_CHUNK;
	struct blob_chunk *c = n ? xcalloc(n, sizeof *c) : NULL;
	struct encode e = {data, len, BLOBSTORE_CHUNK, c, true};
	struct work w;
	char sha[BLOBSTORE_SHA_SIZE], k[24], sz[24], st[24], nc[24], ids[24], derr[256];
	int ret = -1;
	long long total = 0;
	*id = 0;
	*stored = 0;
	/* the chunks are hashed and compressed on threads from now on, while
	 * the blob's row is written and the chunks done go to PostgreSQL */
	work_start(&w, n, encode_one, &e);
	snprintf(k, sizeof k, "%" PRId64, key);
	snprintf(sz, sizeof sz, "%zu", len);
	snprintf(nc, sizeof nc, "%zu", n);
	if (db_begin(db) < 0) {
		fail(db, err, errlen, "store a blob");
		goto out;
	}
	/* one writer per key at a time, so two cannot both pass the cap */
	const char *lp[] = {k};
	if (db_exec(db, "SELECT pg_advisory_xact_lock(7244, ($1::bigint % 2147483647)::int)", 1,
		    lp) < 0) {
		fail(db, err, errlen, "store a blob");
		goto rollback;
	}
	PGresult *res = db_query(db,
				 "SELECT coalesce(sum(stored), 0) FROM blobs WHERE "
				 "coalesce(api_key_id, 0) = $1::bigint",
				 1, lp);
	if (!res) {
		fail(db, err, errlen, "store a blob");
		goto rollback;
	}
	long long used = db_value_ll(res, 0, 0), reserve = (long long)len;
	PQclear(res);
	/* a chunk is never stored larger than it is: within the cap at its
	 * size, it is within it compressed; else the compressed bytes decide */
	if (cap_bytes > 0 && used + (long long)len > cap_bytes) {
		for (size_t i = 0; i < n; i++) {
			work_wait(&w, i);
			total += (long long)c[i].len;
		}
		if (used + total > cap_bytes) {
			*stored = total;
			snprintf(err, errlen,
				 "the image needs %lld KiB compressed and this key holds %lld KiB "
				 "of its %lld KiB for images; delete snapshots or close paused "
				 "sessions",
				 total >> 10, used >> 10, cap_bytes >> 10);
			ret = 1;
			goto rollback;
		}
		reserve = total;
		total = 0;
	}
	/* the row first, committed unfinished (the chunks refer to it, from
	 * several connections), its stored bytes reserved against the cap */
	snprintf(st, sizeof st, "%lld", reserve);
	const char *p[] = {k, sz, nc, st};
	res = db_query(db,
		       "INSERT INTO blobs (api_key_id, size, stored, chunks, sha256, complete) "
		       "VALUES (nullif($1::bigint, 0), $2::bigint, $4::bigint, $3::int, '', false) "
		       "RETURNING id",
		       4, p);
	if (!res) {
		fail(db, err, errlen, "store a blob");
		goto rollback;
	}
	*id = db_value_ll(res, 0, 0);
	PQclear(res);
	if (db_commit(db) < 0) {
		fail(db, err, errlen, "store a blob");
		*id = 0;
		goto out;
	}
	snprintf(ids, sizeof ids, "%" PRId64, *id);
	/* PostgreSQL writes a chunk's TOAST and WAL on one backend: the chunks
	 * go on this connection and the caller's others at once */
	struct writers ws = {.n = n, .w = &w, .c = c, .ids = ids};
	pthread_mutex_init(&ws.mu, NULL);
	struct writer wr[1 + BLOBSTORE_WRITERS];
	int nwr = 1;
	wr[0] = (struct writer){&ws, db, 0};
	for (int i = 0; i < nmore && nwr < 1 + BLOBSTORE_WRITERS; i++) {
		wr[nwr] = (struct writer){&ws, more[i], 0};
		if (more[i] && pthread_create(&wr[nwr].th, NULL, writer_main, &wr[nwr]) == 0)
			nwr++;
	}
	writer_main(&wr[0]);
	for (int i = 1; i < nwr; i++)
		pthread_join(wr[i].th, NULL);
	pthread_mutex_destroy(&ws.mu);
	if (ws.failed) {
		snprintf(err, errlen, "%s", ws.err);
		goto drop;
	}
	total = ws.total;
	whole_hash(c, n, sha);
	snprintf(st, sizeof st, "%lld", total);
	const char *u[] = {ids, st, sha};
	if (db_exec(db,
		    "UPDATE blobs SET stored = $2::bigint, sha256 = $3, complete = true WHERE id = "
		    "$1::bigint",
		    3, u) < 0) {
		fail(db, err, errlen, "store a blob");
		goto drop;
	}
	*stored = total;
	ret = 0;
	goto out;
drop:
	/* what was written goes; a blob left here (the database gone) stays
	 * unfinished, never loaded, until blobstore_sweep */
	blobstore_delete(db, *id, derr, sizeof derr);
	*id = 0;
	goto out;
rollback:
	*id = 0;
	db_rollback(db);
out:
	work_end(&w);
	blobstore_chunks_free(c, n);
	return ret;
}

/* Reading a blob's chunks: the rows of their bytes, one query each (never
 * the whole compressed blob in one result), run on the decoding threads. */
struct load {
	struct db *db;
	pthread_mutex_t mu; /* one query at a time on the connection */
	const char *id;
	struct blob_chunk *c;
	PGresult **res;
	char err[300];
};

static int load_fetch(void *arg, size_t i)
{
	struct load *l = arg;
	char seqs[24];
	snprintf(seqs, sizeof seqs, "%zu", i);
	const char *q[] = {l->id, seqs};
	pthread_mutex_lock(&l->mu);
	/* the bytes in binary: not as hex text twice their size */
	PGresult *res = db_query_bin(l->db,
				     "SELECT data FROM blob_chunks WHERE blob_id = $1::bigint AND "
				     "seq = $2::int",
				     2, q, NULL, true);
	if (!res || PQntuples(res) != 1) {
		if (!l->err[0])
			snprintf(l->err, sizeof l->err, "chunk %zu cannot be read: %s", i,
				 res ? "it is gone" : db_error(l->db));
		pthread_mutex_unlock(&l->mu);
		if (res)
			PQclear(res);
		return -1;
	}
	pthread_mutex_unlock(&l->mu);
	l->res[i] = res;
	l->c[i].data = (unsigned char *)PQgetvalue(res, 0, 0);
	l->c[i].len = (size_t)PQgetlength(res, 0, 0);
	return 0;
}

static void load_release(void *arg, size_t i)
{
	struct load *l = arg;
	PQclear(l->res[i]);
	l->res[i] = NULL;
	l->c[i].data = NULL;
}

/* Blob ids's size, chunk count and hash, and every chunk's (seq, size,
 * sha256) in order, in one query, into *chunks: 1, 0 when there is no such
 * blob, -1 with err. */
static int read_layout(struct db *db, const char *ids, long long *size, long long *nchunks,
		       char sha[BLOBSTORE_SHA_SIZE], PGresult **chunks, char *err, size_t errlen)
{
	const char *p[] = {ids};
	PGresult *res = db_query(
	    db, "SELECT size, chunks, sha256 FROM blobs WHERE id = $1::bigint AND complete", 1, p);
	if (!res)
		return fail(db, err, errlen, "read a blob");
	if (PQntuples(res) != 1) {
		PQclear(res);
		return 0;
	}
	*size = db_value_ll(res, 0, 0);
	*nchunks = db_value_ll(res, 0, 1);
	snprintf(sha, BLOBSTORE_SHA_SIZE, "%s", db_value(res, 0, 2));
	PQclear(res);
	*chunks = db_query(db,
			   "SELECT seq, size, sha256 FROM blob_chunks WHERE blob_id = $1::bigint "
			   "ORDER BY seq",
			   1, p);
	if (!*chunks)
		return fail(db, err, errlen, "read a blob");
	return 1;
}

int blobstore_load(struct db *db, int64_t id, struct strbuf *out, char *err, size_t errlen)
{
	char ids[24];
	snprintf(ids, sizeof ids, "%" PRId64, id);
	long long size, nchunks;
	char sha[BLOBSTORE_SHA_SIZE];
	PGresult *res;
	/* every chunk's size and hash first: where each goes */
	int found = read_layout(db, ids, &size, &nchunks, sha, &res, err, errlen);
	if (found <= 0)
		return found;
	int ret = -1;
	size_t n = (size_t)(nchunks > 0 ? nchunks : 0);
	struct blob_chunk *c = xcalloc(n ? n : 1, sizeof *c);
	PGresult **rows = xcalloc(n ? n : 1, sizeof *rows);
	long long total = 0;
	for (size_t i = 0; i < n; i++) {
		if ((int)i >= PQntuples(res) || db_value_ll(res, (int)i, 0) != (long long)i) {
			snprintf(err, errlen, "the blob is truncated: chunk %zu of %lld is missing",
				 i, nchunks);
			goto out;
		}
		c[i].size = (size_t)db_value_ll(res, (int)i, 1);
		snprintf(c[i].sha256, sizeof c[i].sha256, "%s", db_value(res, (int)i, 2));
		if (c[i].size > BLOBSTORE_CHUNK * 4 || total + (long long)c[i].size > size) {
			snprintf(err, errlen, "the blob is longer than its %lld bytes", size);
			goto out;
		}
		total += (long long)c[i].size;
	}
	if (PQntuples(res) > (int)n) {
		snprintf(err, errlen, "the blob has more chunks than its %lld", nchunks);
		goto out;
	}
	if (total != size) {
		snprintf(err, errlen, "the blob is truncated: %lld of %lld bytes", total, size);
		goto out;
	}
	struct load l = {.db = db, .id = ids, .c = c, .res = rows};
	pthread_mutex_init(&l.mu, NULL);
	char cerr[200];
	size_t start = out->len;
	int dr =
	    decode_all(c, n, (size_t)size, out, load_fetch, load_release, &l, cerr, sizeof cerr);
	pthread_mutex_destroy(&l.mu);
	for (size_t i = 0; i < n; i++)
		if (rows[i])
			PQclear(rows[i]);
	if (dr == -2) {
		snprintf(err, errlen, "%s", l.err);
		goto out;
	}
	if (dr < 0) {
		snprintf(err, errlen, "%s", cerr);
		goto out;
	}
	if (whole_check(c, n, out->buf + start, (size_t)size, sha, err, errlen) < 0)
		goto out;
	out->len += (size_t)size;
	out->buf[out->len] = 0;
	ret = 1;
out:
	PQclear(res);
	free(rows);
	free(c);
	return ret;
}

struct verify {
	const struct blob_part *parts;
	size_t nparts;
	const size_t *off;
	const struct blob_chunk *c;
	unsigned char *bad;
};

/* Hashes len bytes from offset off of the parts (one after the other) into h. */
static void parts_hash(struct sha256 *h, const struct blob_part *parts, size_t nparts, size_t off,
		       size_t len)
{
	for (size_t k = 0; k < nparts && len; k++) {
		if (off >= parts[k].len) {
			off -= parts[k].len;
			continue;
		}
		size_t n = parts[k].len - off < len ? parts[k].len - off : len;
		sha256_update(h, (const unsigned char *)parts[k].p + off, n);
		len -= n;
		off = 0;
	}
}

static void verify_one(struct work *w, size_t i)
{
	struct verify *v = w->arg;
	struct sha256 h;
	unsigned char d[32];
	char hex[65];
	sha256_init(&h);
	parts_hash(&h, v->parts, v->nparts, v->off[i], v->c[i].size);
	sha256_final(&h, d);
	sha256_hex(d, hex);
	v->bad[i] = strcmp(hex, v->c[i].sha256) != 0;
}

int blobstore_verify(struct db *db, int64_t id, const void *data, size_t len, char *err,
		     size_t errlen)
{
	struct blob_part part = {data, len};
	return blobstore_verify_parts(db, id, &part, 1, err, errlen);
}

int blobstore_verify_parts(struct db *db, int64_t id, const struct blob_part *parts, size_t nparts,
			   char *err, size_t errlen)
{
	char ids[24];
	snprintf(ids, sizeof ids, "%" PRId64, id);
	long long size, nchunks;
	char sha[BLOBSTORE_SHA_SIZE];
	PGresult *res;
	size_t len = 0;
	for (size_t k = 0; k < nparts; k++)
		len += parts[k].len;
	int found = read_layout(db, ids, &size, &nchunks, sha, &res, err, errlen);
	if (found < 0)
		return -1;
	if (!found) {
		snprintf(err, errlen, "there is no such blob");
		return 0;
	}
	if (size != (long long)len || nchunks < 0) {
		PQclear(res);
		snprintf(err, errlen, "it has %zu bytes, the blob %lld", len, size);
		return 0;
	}
	size_t n = (size_t)nchunks;
	int ret = 0;
	struct blob_chunk *c = xcalloc(n ? n : 1, sizeof *c);
	size_t *off = xcalloc(n ? n : 1, sizeof *off);
	unsigned char *bad = xcalloc(n ? n : 1, 1);
	size_t total = 0;
	if (PQntuples(res) != (int)n) {
		snprintf(err, errlen, "the blob has %d of its %zu chunks", PQntuples(res), n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		c[i].size = (size_t)db_value_ll(res, (int)i, 1);
		snprintf(c[i].sha256, sizeof c[i].sha256, "%s", db_value(res, (int)i, 2));
		if (db_value_ll(res, (int)i, 0) != (long long)i || c[i].size > len - total) {
			snprintf(err, errlen, "the blob's chunk %zu does not fit", i);
			goto out;
		}
		off[i] = total;
		total += c[i].size;
	}
	if (total != len) {
		snprintf(err, errlen, "the blob's chunks hold %zu of its %zu bytes", total, len);
		goto out;
	}
	struct verify v = {parts, nparts, off, c, bad};
	struct work w;
	work_start(&w, n, verify_one, &v);
	for (size_t i = 0; i < n; i++)
		work_wait(&w, i);
	work_end(&w);
	for (size_t i = 0; i < n; i++)
		if (bad[i]) {
			snprintf(err, errlen, "chunk %zu does not match its SHA-256", i);
			goto out;
		}
	char hex[BLOBSTORE_SHA_SIZE];
	if (!strncmp(sha, "c:", 2)) {
		whole_hash(c, n, hex);
	} else {
		/* a blob of before: the hash of its bytes */
		struct sha256 h;
		unsigned char d[32];
		sha256_init(&h);
		parts_hash(&h, parts, nparts, 0, len);
		sha256_final(&h, d);
		sha256_hex(d, hex);
	}
	if (strcmp(hex, sha)) {
		snprintf(err, errlen, "the blob does not match its SHA-256");
		goto out;
	}
	ret = 1;
out:
	PQclear(res);
	free(c);
	free(off);
	free(bad);
	return ret;
}

int blobstore_delete(struct db *db, int64_t id, char *err, size_t errlen)
{
	char ids[24];
	snprintf(ids, sizeof ids, "%" PRId64, id);
	const char *p[] = {ids};
	if (db_exec(db, "DELETE FROM blobs WHERE id = $1::bigint", 1, p) < 0)
		return fail(db, err, errlen, "delete a blob");
	return 0;
}

int blobstore_sweep(struct db *db, char *err, size_t errlen)
{
	PGresult *res =
	    db_query(db,
		     "WITH d AS (DELETE FROM blobs WHERE NOT complete AND created < now() - "
		     "interval '" BLOBSTORE_UNFINISHED_MAX "' RETURNING 1) SELECT count(*) "
		     "FROM d",
		     0, NULL);
	if (!res)
		return fail(db, err, errlen, "delete unfinished blobs");
	int n = (int)db_value_ll(res, 0, 0);
	PQclear(res);
	return n;
}

int blobstore_used(struct db *db, int64_t key, long long *bytes, char *err, size_t errlen)
{
	char k[24];
	snprintf(k, sizeof k, "%" PRId64, key);
	const char *p[] = {k};
	PGresult *res =
	    db_query(db,
		     "SELECT coalesce(sum(stored), 0) FROM blobs WHERE $1::bigint < 0 OR "
		     "coalesce(api_key_id, 0) = $1::bigint",
		     1, p);
	if (!res)
		return fail(db, err, errlen, "sum a key's blobs");
	*bytes = db_value_ll(res, 0, 0);
	PQclear(res);
	return 0;
}
