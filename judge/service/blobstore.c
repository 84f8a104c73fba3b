/* blobstore: byte strings of an API key in PostgreSQL, chunked, compressed and checked. */
#include "judge/service/blobstore.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/sha256.h"
#include "common/xalloc.h"
#include "judge/store/db.h"

void blobstore_encode(const void *data, size_t len, size_t chunk, struct blob_chunk **out,
		      size_t *n, char sha256[65])
{
	if (!chunk)
		chunk = BLOBSTORE_CHUNK;
	unsigned char d[32];
	sha256_buf(len ? data : "", len, d);
	sha256_hex(d, sha256);
	*n = (len + chunk - 1) / chunk;
	*out = *n ? xcalloc(*n, sizeof **out) : NULL;
	const unsigned char *p = data;
	for (size_t i = 0; i < *n; i++) {
		struct blob_chunk *c = &(*out)[i];
		c->size = len - i * chunk < chunk ? len - i * chunk : chunk;
		sha256_buf(p, c->size, d);
		sha256_hex(d, c->sha256);
		uLongf bound = compressBound((uLong)c->size);
		c->data = xmalloc(bound);
		/* level 1: images are mostly packages and data; speed beats the last percent */
		if (compress2(c->data, &bound, p, (uLong)c->size, 1) != Z_OK)
			abort(); /* only out of memory, which xmalloc already refuses */
		c->len = bound;
		p += c->size;
	}
}

void blobstore_chunks_free(struct blob_chunk *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++)
		free(c[i].data);
	free(c);
}

int blobstore_decode(const struct blob_chunk *c, size_t n, long long size, const char *sha256,
		     struct strbuf *out, char *err, size_t errlen)
{
	size_t start = out->len;
	long long total = 0;
	struct sha256 h;
	sha256_init(&h);
	for (size_t i = 0; i < n; i++) {
		if (c[i].size > BLOBSTORE_CHUNK * 4 || total + (long long)c[i].size > size) {
			snprintf(err, errlen, "chunk %zu is larger than the blob", i);
			goto bad;
		}
		strbuf_grow(out, c[i].size + 1);
		uLongf got = (uLongf)c[i].size;
		int zr = uncompress((unsigned char *)out->buf + out->len, &got, c[i].data,
				    (uLong)c[i].len);
		if (zr != Z_OK || got != c[i].size) {
			snprintf(err, errlen, "chunk %zu does not inflate to its %zu bytes (%s)", i,
				 c[i].size, zr == Z_OK ? "short" : zError(zr));
			goto bad;
		}
		unsigned char d[32];
		char hex[65];
		sha256_buf(out->buf + out->len, c[i].size, d);
		sha256_hex(d, hex);
		if (strcmp(hex, c[i].sha256)) {
			snprintf(err, errlen, "chunk %zu does not match its SHA-256", i);
			goto bad;
		}
		sha256_update(&h, out->buf + out->len, c[i].size);
		out->len += c[i].size;
		out->buf[out->len] = 0;
		total += (long long)c[i].size;
	}
	if (total != size) {
		snprintf(err, errlen, "the blob is truncated: %lld of %lld bytes", total, size);
		goto bad;
	}
	unsigned char d[32];
	char hex[65];
	sha256_final(&h, d);
	sha256_hex(d, hex);
	if (strcmp(hex, sha256)) {
		snprintf(err, errlen, "the blob does not match its SHA-256");
		goto bad;
	}
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

int blobstore_store(struct db *db, int64_t key, const void *data, size_t len, long long cap_bytes,
		    int64_t *id, long long *stored, char *err, size_t errlen)
{
	struct blob_chunk *c = NULL;
	size_t n = 0;
	char sha[65], k[24], sz[24], st[24], nc[24], cap[24];
	int ret = -1;
	blobstore_encode(data, len, 0, &c, &n, sha);
	long long total = 0;
	for (size_t i = 0; i < n; i++)
		total += (long long)c[i].len;
	*stored = total;
	snprintf(k, sizeof k, "%" PRId64, key);
	snprintf(sz, sizeof sz, "%zu", len);
	snprintf(st, sizeof st, "%lld", total);
	snprintf(nc, sizeof nc, "%zu", n);
	snprintf(cap, sizeof cap, "%lld", cap_bytes);
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
	const char *p[] = {k, sz, st, nc, sha, cap};
	PGresult *res =
	    db_query(db,
		     "WITH used AS (SELECT coalesce(sum(stored), 0) AS u FROM blobs WHERE "
		     "coalesce(api_key_id, 0) = $1::bigint), "
		     "ins AS (INSERT INTO blobs (api_key_id, size, stored, chunks, sha256) SELECT "
		     "nullif($1::bigint, 0), $2::bigint, $3::bigint, $4::int, $5 FROM used WHERE "
		     "$6::bigint = 0 OR used.u + $3::bigint <= $6::bigint RETURNING id) "
		     "SELECT (SELECT id FROM ins), (SELECT u FROM used)",
		     6, p);
	if (!res) {
		fail(db, err, errlen, "store a blob");
		goto rollback;
	}
	bool over = PQgetisnull(res, 0, 0);
	long long used = db_value_ll(res, 0, 1);
	*id = over ? 0 : db_value_ll(res, 0, 0);
	PQclear(res);
	if (over) {
		snprintf(err, errlen,
			 "the image needs %lld KiB compressed and this key holds %lld KiB of its "
			 "%lld KiB for images; delete snapshots or close paused sessions",
			 total >> 10, used >> 10, cap_bytes >> 10);
		ret = 1;
		goto rollback;
	}
	char ids[24];
	snprintf(ids, sizeof ids, "%" PRId64, *id);
	for (size_t i = 0; i < n; i++) {
		char seq[24], size[24];
		snprintf(seq, sizeof seq, "%zu", i);
		snprintf(size, sizeof size, "%zu", c[i].size);
		const char *q[] = {ids, seq, size, c[i].sha256, (const char *)c[i].data};
		const int lens[] = {-1, -1, -1, -1, (int)c[i].len};
		res = db_query_bin(
		    db,
		    "INSERT INTO blob_chunks (blob_id, seq, size, sha256, data) VALUES "
		    "($1::bigint, $2::int, $3::int, $4, $5::bytea)",
		    5, q, lens, false);
		if (!res) {
			fail(db, err, errlen, "store a blob");
			goto rollback;
		}
		PQclear(res);
	}
	if (db_commit(db) < 0) {
		fail(db, err, errlen, "store a blob");
		goto out;
	}
	ret = 0;
	goto out;
rollback:
	db_rollback(db);
out:
	blobstore_chunks_free(c, n);
	return ret;
}

int blobstore_load(struct db *db, int64_t id, struct strbuf *out, char *err, size_t errlen)
{
	char ids[24];
	snprintf(ids, sizeof ids, "%" PRId64, id);
	const char *p[] = {ids};
	PGresult *res =
	    db_query(db, "SELECT size, chunks, sha256 FROM blobs WHERE id = $1::bigint", 1, p);
	if (!res)
		return fail(db, err, errlen, "read a blob");
	if (PQntuples(res) != 1) {
		PQclear(res);
		return 0;
	}
	long long size = db_value_ll(res, 0, 0);
	long long nchunks = db_value_ll(res, 0, 1);
	char sha[65];
	snprintf(sha, sizeof sha, "%s", db_value(res, 0, 2));
	PQclear(res);
	int ret = -1;
	/* one chunk at a time: never the whole compressed blob in one result */
	struct sha256 h;
	sha256_init(&h);
	long long total = 0;
	for (long long seq = 0; seq < nchunks; seq++) {
		char seqs[24];
		snprintf(seqs, sizeof seqs, "%lld", seq);
		const char *q[] = {ids, seqs};
		res =
		    db_query(db,
			     "SELECT size, sha256 FROM blob_chunks WHERE blob_id = $1::bigint AND "
			     "seq = $2::int",
			     2, q);
		if (!res) {
			fail(db, err, errlen, "read a blob");
			goto out;
		}
		if (PQntuples(res) != 1) {
			PQclear(res);
			snprintf(err, errlen,
				 "the blob is truncated: chunk %lld of %lld is missing", seq,
				 nchunks);
			goto out;
		}
		struct blob_chunk one = {.size = (size_t)db_value_ll(res, 0, 0)};
		snprintf(one.sha256, sizeof one.sha256, "%s", db_value(res, 0, 1));
		PQclear(res);
		/* the bytes in binary: not as hex text twice their size */
		res = db_query_bin(
		    db,
		    "SELECT data FROM blob_chunks WHERE blob_id = $1::bigint AND seq = "
		    "$2::int",
		    2, q, NULL, true);
		if (!res || PQntuples(res) != 1) {
			snprintf(err, errlen, "chunk %lld cannot be read: %s", seq,
				 res ? "it is gone" : db_error(db));
			if (res)
				PQclear(res);
			goto out;
		}
		one.data = (unsigned char *)PQgetvalue(res, 0, 0);
		one.len = (size_t)PQgetlength(res, 0, 0);
		/* each chunk checked alone (its own size and hash), then the whole */
		size_t before = out->len;
		char cerr[200];
		int dr = blobstore_decode(&one, 1, (long long)one.size, one.sha256, out, cerr,
					  sizeof cerr);
		PQclear(res);
		if (dr < 0) {
			snprintf(err, errlen, "chunk %lld: %s", seq,
				 strncmp(cerr, "chunk 0 ", 8) ? cerr : cerr + 8);
			goto out;
		}
		sha256_update(&h, out->buf + before, out->len - before);
		total += (long long)(out->len - before);
		if (total > size) {
			snprintf(err, errlen, "the blob is longer than its %lld bytes", size);
			goto out;
		}
	}
	unsigned char d[32];
	char hex[65];
	sha256_final(&h, d);
	sha256_hex(d, hex);
	if (total != size) {
		snprintf(err, errlen, "the blob is truncated: %lld of %lld bytes", total, size);
		goto out;
	}
	if (strcmp(hex, sha)) {
		snprintf(err, errlen, "the blob does not match its SHA-256");
		goto out;
	}
	ret = 1;
out:
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
