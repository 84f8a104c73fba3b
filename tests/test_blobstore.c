/* test_blobstore: the chunked, compressed, checked encoding of blobs
 * (judge/service/blobstore.h): round trips at chunk edges, and every kind of
 * damage (a flipped byte, a chunk's wrong hash, a missing chunk, a wrong
 * whole) is an error with a message, never wrong bytes. The database side is
 * tested end to end by tests/integration/sessions_pause.sh. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/sha256.h"
#include "common/strbuf.h"
#include "judge/service/blobstore.h"

static unsigned char *pattern(size_t n, unsigned seed)
{
	unsigned char *b = malloc(n ? n : 1);
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		b[i] = (unsigned char)(i % 7 == 0 ? seed >> 16 : 'a' + i % 3);
	}
	return b;
}

static void round_trip(size_t n, size_t chunk)
{
	unsigned char *b = pattern(n, 7);
	struct blob_chunk *c;
	size_t nc;
	char sha[BLOBSTORE_SHA_SIZE], err[256];
	blobstore_encode(b, n, chunk, &c, &nc, sha);
	cr_assert_eq(nc, (n + chunk - 1) / chunk, "%zu bytes in chunks of %zu: %zu", n, chunk, nc);
	struct strbuf out = STRBUF_INIT;
	cr_assert_eq(blobstore_decode(c, nc, (long long)n, sha, &out, err, sizeof err), 0, "%s",
		     err);
	cr_assert_eq(out.len, n);
	cr_assert(n == 0 || !memcmp(out.buf, b, n));
	strbuf_release(&out);
	blobstore_chunks_free(c, nc);
	free(b);
}

Test(blobstore, round_trips_at_chunk_edges)
{
	round_trip(0, 1000);
	round_trip(1, 1000);
	round_trip(999, 1000);
	round_trip(1000, 1000);
	round_trip(1001, 1000);
	round_trip(5000, 1000);
	round_trip(3 * BLOBSTORE_CHUNK + 17, 0 + BLOBSTORE_CHUNK);
}

Test(blobstore, compresses_what_repeats)
{
	size_t n = 1 << 20;
	char *b = malloc(n);
	memset(b, 'x', n);
	struct blob_chunk *c;
	size_t nc;
	char sha[BLOBSTORE_SHA_SIZE];
	blobstore_encode(b, n, 0, &c, &nc, sha);
	cr_assert_eq(nc, 1);
	cr_assert_lt(c[0].len, n / 100, "1 MiB of one byte stored in %zu", c[0].len);
	blobstore_chunks_free(c, nc);
	free(b);
}

/* A blob of 4 chunks of 1000 bytes, and a decode that must fail with msg. */
struct fixture {
	unsigned char *b;
	struct blob_chunk *c;
	size_t nc;
	char sha[BLOBSTORE_SHA_SIZE];
};

static void make(struct fixture *f)
{
	f->b = pattern(4000, 3);
	blobstore_encode(f->b, 4000, 1000, &f->c, &f->nc, f->sha);
}

static void must_fail(struct fixture *f, size_t nc, long long size, const char *sha,
		      const char *msg)
{
	struct strbuf out = STRBUF_INIT;
	char err[256] = "";
	strbuf_addstr(&out, "kept");
	cr_assert_eq(blobstore_decode(f->c, nc, size, sha, &out, err, sizeof err), -1);
	cr_assert(strstr(err, msg), "want '%s' in '%s'", msg, err);
	cr_assert_str_eq(out.buf, "kept", "what was there before stays, nothing else");
	strbuf_release(&out);
	blobstore_chunks_free(f->c, f->nc);
	free(f->b);
}

Test(blobstore, a_flipped_byte_is_caught)
{
	struct fixture f;
	make(&f);
	f.c[2].data[f.c[2].len / 2] ^= 0x55;
	must_fail(&f, f.nc, 4000, f.sha, "chunk 2");
}

Test(blobstore, a_chunk_with_another_hash_is_caught)
{
	struct fixture f;
	make(&f);
	/* chunk 1's bytes swapped for chunk 3's: each inflates, the hash tells */
	unsigned char *d = f.c[1].data;
	size_t len = f.c[1].len;
	f.c[1].data = f.c[3].data;
	f.c[1].len = f.c[3].len;
	f.c[3].data = d;
	f.c[3].len = len;
	must_fail(&f, f.nc, 4000, f.sha, "does not match its SHA-256");
}

Test(blobstore, a_missing_last_chunk_is_truncation)
{
	struct fixture f;
	make(&f);
	must_fail(&f, f.nc - 1, 4000, f.sha, "truncated: 3000 of 4000");
}

Test(blobstore, a_chunk_cut_short_is_caught)
{
	struct fixture f;
	make(&f);
	f.c[0].len /= 2;
	must_fail(&f, f.nc, 4000, f.sha, "chunk 0 does not inflate");
}

Test(blobstore, a_wrong_whole_hash_is_caught)
{
	struct fixture f;
	make(&f);
	char sha[BLOBSTORE_SHA_SIZE];
	memcpy(sha, f.sha, sizeof sha);
	sha[0] = sha[0] == 'a' ? 'b' : 'a';
	must_fail(&f, f.nc, 4000, sha, "the blob does not match");
}

Test(blobstore, more_bytes_than_the_blob_says_are_caught)
{
	struct fixture f;
	make(&f);
	must_fail(&f, f.nc, 3500, f.sha, "larger than the blob");
}

Test(blobstore, garbage_never_crashes)
{
	struct blob_chunk c = {
	    .size = 1000, .data = (unsigned char *)strdup("not zlib at all"), .len = 15};
	strcpy(c.sha256, "00");
	struct strbuf out = STRBUF_INIT;
	char err[256];
	cr_assert_eq(blobstore_decode(&c, 1, 1000, "00", &out, err, sizeof err), -1);
	cr_assert(strstr(err, "does not inflate"), "%s", err);
	free(c.data);
	strbuf_release(&out);
	/* a chunk claiming a size past any chunk is refused before allocating */
	struct blob_chunk big = {.size = (size_t)1 << 40, .data = NULL, .len = 0};
	cr_assert_eq(blobstore_decode(&big, 1, 1LL << 41, "00", &out, err, sizeof err), -1);
	cr_assert(strstr(err, "larger than the blob"), "%s", err);
}

/* Random bytes, which deflate cannot shrink, are stored as they are (their
 * length equal to their size), round trip, and a flipped byte is still caught. */
Test(blobstore, random_bytes_are_stored_as_they_are)
{
	size_t n = 3 * 100000 + 123;
	unsigned char *b = malloc(n);
	unsigned seed = 26;
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		b[i] = (unsigned char)(seed >> 16);
	}
	struct blob_chunk *c;
	size_t nc;
	char sha[BLOBSTORE_SHA_SIZE], err[256] = "";
	blobstore_encode(b, n, 100000, &c, &nc, sha);
	cr_assert_eq(nc, 4);
	for (size_t i = 0; i < nc; i++)
		cr_expect_eq(c[i].len, c[i].size, "chunk %zu: %zu of %zu", i, c[i].len, c[i].size);
	cr_assert_eq(strncmp(sha, "c:", 2), 0, "%s", sha);
	struct strbuf out = STRBUF_INIT;
	cr_assert_eq(blobstore_decode(c, nc, (long long)n, sha, &out, err, sizeof err), 0, "%s",
		     err);
	cr_assert(out.len == n && !memcmp(out.buf, b, n));
	strbuf_reset(&out);
	c[1].data[500] ^= 1;
	cr_assert_eq(blobstore_decode(c, nc, (long long)n, sha, &out, err, sizeof err), -1);
	cr_assert(strstr(err, "chunk 1 does not match its SHA-256"), "%s", err);
	cr_assert_eq(out.len, 0);
	strbuf_release(&out);
	blobstore_chunks_free(c, nc);
	free(b);
}

/* A blob stored before the chunks' hashes made the whole's hash: its row's
 * hash is the bytes' own, and it still loads (and is still checked). */
Test(blobstore, a_blob_hashed_the_older_way_loads)
{
	struct fixture f;
	make(&f);
	unsigned char d[32];
	char old[65], err[256] = "";
	sha256_buf(f.b, 4000, d);
	sha256_hex(d, old);
	struct strbuf out = STRBUF_INIT;
	cr_assert_eq(blobstore_decode(f.c, f.nc, 4000, old, &out, err, sizeof err), 0, "%s", err);
	cr_assert(out.len == 4000 && !memcmp(out.buf, f.b, 4000));
	strbuf_release(&out);
	old[10] = old[10] == '0' ? '1' : '0';
	must_fail(&f, f.nc, 4000, old, "the blob does not match");
}
