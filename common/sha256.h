/* sha256: SHA-256 (FIPS 180-4), in one call or streamed; small enough to keep
 * rather than link a crypto library (API keys, content hashes of packages). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes so far */
	unsigned char buf[64];
	size_t nbuf;
};

/* Starts a hash. */
void sha256_init(struct sha256 *s);
/* Adds len bytes at data. */
void sha256_update(struct sha256 *s, const void *data, size_t len);
/* Ends the hash into out; s must be sha256_init'ed again before reuse. */
void sha256_final(struct sha256 *s, unsigned char out[32]);

/* Whether the CPU's SHA extensions do the work (x86-64 with SHA-NI); the
 * digests are the same either way. */
bool sha256_accelerated(void);

/* SHA-256 of len bytes at data into out. */
void sha256_buf(const void *data, size_t len, unsigned char out[32]);
/* The lower-case hex of a digest into hex (65 bytes with the NUL). */
void sha256_hex(const unsigned char digest[32], char hex[65]);
