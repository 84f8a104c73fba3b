/* sha256: SHA-256 (FIPS 180-4), in one call or streamed (see sha256.h). */
#include "common/sha256.h"

#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void block(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh;
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = hh + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) +
			      K256[i] + w[i];
		uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

#if defined(__x86_64__)
/* The same compression with the CPU's SHA extensions (SHA-NI): ~5-8 times the
 * portable loop, which made hashing the largest part of storing and loading a
 * session image (docs/benchmarks.md). The state lives in two registers as
 * (A, B, E, F) and (C, D, G, H), the order sha256rnds2 wants. */
__attribute__((target("sha,sse4.1,ssse3"))) static void blocks_ni(uint32_t h[8],
								  const unsigned char *p, size_t n)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i t = _mm_loadu_si128((const __m128i *)&h[0]);  /* A B C D */
	__m128i s1 = _mm_loadu_si128((const __m128i *)&h[4]); /* E F G H */
	t = _mm_shuffle_epi32(t, 0xB1);
	s1 = _mm_shuffle_epi32(s1, 0x1B);
	__m128i s0 = _mm_alignr_epi8(t, s1, 8); /* A B E F */
	s1 = _mm_blend_epi16(s1, t, 0xF0);	/* C D G H */
	for (; n; n--, p += 64) {
		__m128i save0 = s0, save1 = s1, m[4];
		for (int g = 0; g < 16; g++) {
			__m128i w;
			if (g < 4) {
				w = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)),
						     bswap);
			} else {
				/* W[4g..4g+3] from the four groups before */
				w = _mm_sha256msg1_epu32(m[g & 3], m[(g + 1) & 3]);
				w = _mm_add_epi32(
				    w, _mm_alignr_epi8(m[(g + 3) & 3], m[(g + 2) & 3], 4));
				w = _mm_sha256msg2_epu32(w, m[(g + 3) & 3]);
			}
			m[g & 3] = w;
			__m128i k =
			    _mm_add_epi32(w, _mm_loadu_si128((const __m128i *)&K256[4 * g]));
			s1 = _mm_sha256rnds2_epu32(s1, s0, k);
			s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(k, 0x0E));
		}
		s0 = _mm_add_epi32(s0, save0);
		s1 = _mm_add_epi32(s1, save1);
	}
	t = _mm_shuffle_epi32(s0, 0x1B);  /* F E B A */
	s1 = _mm_shuffle_epi32(s1, 0xB1); /* D C H G */
	s0 = _mm_blend_epi16(t, s1, 0xF0);
	s1 = _mm_alignr_epi8(s1, t, 8);
	_mm_storeu_si128((__m128i *)&h[0], s0);
	_mm_storeu_si128((__m128i *)&h[4], s1);
}

static bool have_ni(void)
{
	static int have = -1;
	int v = __atomic_load_n(&have, __ATOMIC_RELAXED);
	if (v < 0) {
		unsigned a, b, c, d;
		bool ssse3_41 =
		    __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSSE3) && (c & bit_SSE4_1);
		v = ssse3_41 && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
		__atomic_store_n(&have, v, __ATOMIC_RELAXED);
	}
	return v;
}
#endif

/* n blocks of 64 bytes at p into h. */
static void blocks(uint32_t h[8], const unsigned char *p, size_t n)
{
#if defined(__x86_64__)
	if (have_ni()) {
		blocks_ni(h, p, n);
		return;
	}
#endif
	for (; n; n--, p += 64)
		block(h, p);
}

bool sha256_accelerated(void)
{
#if defined(__x86_64__)
	return have_ni();
#else
	return false;
#endif
}

void sha256_init(struct sha256 *s)
{
	static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
				       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	memcpy(s->h, iv, sizeof iv);
	s->len = 0;
	s->nbuf = 0;
}

void sha256_update(struct sha256 *s, const void *data, size_t len)
{
	const unsigned char *p = data;
	s->len += len;
	if (s->nbuf) {
		size_t n = 64 - s->nbuf < len ? 64 - s->nbuf : len;
		memcpy(s->buf + s->nbuf, p, n);
		s->nbuf += n;
		p += n;
		len -= n;
		if (s->nbuf < 64)
			return;
		blocks(s->h, s->buf, 1);
		s->nbuf = 0;
	}
	blocks(s->h, p, len / 64);
	p += len / 64 * 64;
	len %= 64;
	memcpy(s->buf, p, len);
	s->nbuf = len;
}

void sha256_final(struct sha256 *s, unsigned char out[32])
{
	unsigned char tail[128] = {0};
	memcpy(tail, s->buf, s->nbuf);
	tail[s->nbuf] = 0x80;
	size_t tl = s->nbuf + 1 + 8 <= 64 ? 64 : 128;
	uint64_t bits = s->len * 8;
	for (int i = 0; i < 8; i++)
		tail[tl - 1 - i] = (unsigned char)(bits >> (8 * i));
	blocks(s->h, tail, tl / 64);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(s->h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
		out[4 * i + 3] = (unsigned char)s->h[i];
	}
}

void sha256_buf(const void *data, size_t len, unsigned char out[32])
{
	struct sha256 s;
	sha256_init(&s);
	sha256_update(&s, data, len);
	sha256_final(&s, out);
}

void sha256_hex(const unsigned char digest[32], char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < 32; i++) {
		hex[2 * i] = digits[digest[i] >> 4];
		hex[2 * i + 1] = digits[digest[i] & 15];
	}
	hex[64] = 0;
}
