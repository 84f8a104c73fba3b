/* md5: RFC 1321's algorithm, one buffer at a time. */
#include "common/md5.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* per-round left rotations (RFC 1321 3.4) */
static const unsigned char shifts[64] = {
    7,	12, 17, 22, 7,	12, 17, 22, 7,	12, 17, 22, 7,	12, 17, 22, 5,	9,  14, 20, 5,	9,
    14, 20, 5,	9,  14, 20, 5,	9,  14, 20, 4,	11, 16, 23, 4,	11, 16, 23, 4,	11, 16, 23,
    4,	11, 16, 23, 6,	10, 15, 21, 6,	10, 15, 21, 6,	10, 15, 21, 6,	10, 15, 21};

static uint32_t rol(uint32_t x, int n)
{
	return (x << n) | (x >> (32 - n));
}

static void block(uint32_t h[4], const unsigned char *p, const uint32_t k[64])
{
	uint32_t m[16];
	for (int i = 0; i < 16; i++)
		m[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
		       (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
	for (int i = 0; i < 64; i++) {
		uint32_t f;
		int g;
		if (i < 16) {
			f = (b & c) | (~b & d);
			g = i;
		} else if (i < 32) {
			f = (d & b) | (~d & c);
			g = (5 * i + 1) % 16;
		} else if (i < 48) {
			f = b ^ c ^ d;
			g = (3 * i + 5) % 16;
		} else {
			f = c ^ (b | ~d);
			g = (7 * i) % 16;
		}
		uint32_t t = d;
		d = c;
		c = b;
		b = b + rol(a + f + k[i] + m[g], shifts[i]);
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
}

void md5_hex(const void *data, size_t len, char hex[33])
{
	/* the sine table: floor(|sin(i + 1)| x 2^32), exact in a double */
	uint32_t k[64];
	for (int i = 0; i < 64; i++)
		k[i] = (uint32_t)(fabs(sin(i + 1.0)) * 4294967296.0);
	uint32_t h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
	const unsigned char *p = data;
	size_t n = len;
	for (; n >= 64; p += 64, n -= 64)
		block(h, p, k);
	unsigned char tail[128] = {0};
	memcpy(tail, p, n);
	tail[n] = 0x80;
	size_t tl = n < 56 ? 64 : 128;
	uint64_t bits = (uint64_t)len * 8;
	for (int i = 0; i < 8; i++)
		tail[tl - 8 + i] = (unsigned char)(bits >> (8 * i));
	block(h, tail, k);
	if (tl == 128)
		block(h, tail + 64, k);
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", (h[i / 4] >> (8 * (i % 4))) & 0xff);
}
