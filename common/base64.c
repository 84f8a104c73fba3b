/* base64: encoding and tolerant decoding of the standard alphabet. */
#include "common/base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void base64_encode(struct strbuf *out, const void *s, size_t n)
{
	const unsigned char *p = s;
	char q[4];
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		q[0] = alphabet[(v >> 18) & 63];
		q[1] = alphabet[(v >> 12) & 63];
		q[2] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
		q[3] = i + 2 < n ? alphabet[v & 63] : '=';
		strbuf_add(out, q, 4);
	}
}

static int value_of(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

bool base64_decode(struct strbuf *out, const char *s, size_t n)
{
	unsigned v = 0;
	int bits = 0, pad = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		int d = value_of(c);
		if (d < 0 || pad) /* nothing but padding after padding */
			return false;
		v = (v << 6) | (unsigned)d;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			char b = (char)((v >> bits) & 0xff);
			strbuf_add(out, &b, 1);
		}
	}
	/* 6 leftover bits cannot come from whole bytes */
	return bits < 6 && pad <= 2;
}
