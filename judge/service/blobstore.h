/* blobstore: byte strings of an API key in PostgreSQL, chunked, compressed and
 * checked (migrations/0016_session_images.sql).
 *
 * How it works: a blob is cut into chunks of BLOBSTORE_CHUNK bytes; each is
 * compressed with zlib and stored beside its size and the SHA-256 of its
 * uncompressed bytes, so no value is larger than a chunk and every worker
 * reads it back from the database alone. A chunk that zlib would not shrink
 * (random bytes, most of a memory image's data) is stored as it is: its
 * stored length is then its size, which a compressed chunk's never is. The
 * blob's row holds the whole size and a SHA-256 over the whole: "c:" and the
 * hash of the chunks' hashes in order (older blobs: the hash of the bytes), so
 * the bytes are hashed once, chunk by chunk, on several threads. Loading
 * checks every chunk (present, in order, inflating to its size, its hash) and
 * then the whole: a tampered or truncated blob is an error with a message,
 * never a crash nor wrong bytes. Storing compresses and hashes on threads
 * while the chunks already done go to PostgreSQL, on several connections: the
 * blob's row is committed first, unfinished (never loaded; swept when old),
 * and marked complete once every chunk is in; loading decodes on threads
 * while the next chunks are read. The compressed bytes
 * a key holds count against its cap (blobstore_store). The encoding is pure
 * (blobstore_encode / blobstore_decode) so it is tested without a database.
 * Session images use it (sessimage.h); an object store could stand behind the
 * same three calls later.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

struct db;

#define BLOBSTORE_CHUNK (1 << 20)
/* A blob's whole hash as stored, with its NUL ("c:" and 64 hex digits). */
#define BLOBSTORE_SHA_SIZE 72

/* One stored chunk. */
struct blob_chunk {
	size_t size;	     /* bytes before compression */
	char sha256[65];     /* lower-case hex of those bytes */
	unsigned char *data; /* zlib, or the bytes when len == size (malloc'd) */
	size_t len;
	bool borrowed; /* data points into the bytes stored (not malloc'd) */
};

/* Cuts len bytes at data into chunks of at most chunk bytes (0: BLOBSTORE_CHUNK),
 * each compressed unless that would not make it smaller; *out (n of them; NULL,
 * 0 for an empty blob) is the caller's: blobstore_chunks_free. sha256 gets the
 * whole's hash as stored. Never fails. */
void blobstore_encode(const void *data, size_t len, size_t chunk, struct blob_chunk **out,
		      size_t *n, char sha256[BLOBSTORE_SHA_SIZE]);
void blobstore_chunks_free(struct blob_chunk *c, size_t n);

/* Puts n chunks (in order) back together into out, checking each chunk's
 * size and hash, then the whole's size and sha256. Returns 0, or -1 with err
 * (out then holds nothing valid). */
int blobstore_decode(const struct blob_chunk *c, size_t n, long long size, const char *sha256,
		     struct strbuf *out, char *err, size_t errlen);

/* Connections that write one blob's chunks beside the caller's, at most. */
#define BLOBSTORE_WRITERS 2
/* How old an unfinished blob is when blobstore_sweep deletes it (SQL interval). */
#define BLOBSTORE_UNFINISHED_MAX "10 minutes"

/* Stores len bytes at data as a blob of key (0: none) unless the key's blobs
 * would then hold more than cap_bytes compressed (0: no cap). The blob's row
 * is committed unfinished first; its chunks then go on db and on up to
 * BLOBSTORE_WRITERS of the nmore connections more (the caller's, idle, not in
 * a transaction; may be 0), and one statement marks it complete. Returns 0
 * with *id and *stored (compressed bytes), 1 when over the cap (err says how
 * much), -1 with err (what was written is deleted). */
int blobstore_store(struct db *db, struct db *const *more, int nmore, int64_t key, const void *data,
		    size_t len, long long cap_bytes, int64_t *id, long long *stored, char *err,
		    size_t errlen);
/* Deletes the unfinished blobs older than BLOBSTORE_UNFINISHED_MAX (a worker
 * died while it stored them). Their count, or -1 with err. */
int blobstore_sweep(struct db *db, char *err, size_t errlen);
/* Reads blob id into out (appended), checked. Returns 1, 0 when there is no
 * such blob (or it is unfinished), -1 with err (a damaged blob: which chunk and why). */
int blobstore_load(struct db *db, int64_t id, struct strbuf *out, char *err, size_t errlen);
/* Checks len bytes at data (a copy kept elsewhere, e.g. on a worker's disk)
 * against blob id as stored: its size, every chunk's hash and the whole's,
 * without reading the chunks' bytes. Returns 1 when they are the blob's, 0
 * when not (err says why), -1 with err. */
int blobstore_verify(struct db *db, int64_t id, const void *data, size_t len, char *err,
		     size_t errlen);
/* A piece of a blob's bytes held elsewhere (blobstore_verify_parts). */
struct blob_part {
	const void *p;
	size_t len;
};
/* blobstore_verify of the bytes of nparts parts one after the other (a copy
 * kept as several files, read where they lie). Same returns. */
int blobstore_verify_parts(struct db *db, int64_t id, const struct blob_part *parts, size_t nparts,
			   char *err, size_t errlen);
/* Deletes blob id (its chunks with it). 0, or -1 with err. */
int blobstore_delete(struct db *db, int64_t id, char *err, size_t errlen);
/* The compressed bytes key's blobs hold (what its cap counts) in *bytes; key
 * < 0: every key's together. 0, or -1 with err. */
int blobstore_used(struct db *db, int64_t key, long long *bytes, char *err, size_t errlen);
