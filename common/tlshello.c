/* tlshello: the SNI of a TLS ClientHello (RFC 8446 5.1 and 4.1.2, RFC 6066 3). */
#include "common/tlshello.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#define RECORD_HEAD	   5
#define RECORD_MAX	   16384 /* a plaintext record's fragment */
#define TYPE_HANDSHAKE	   22
#define HS_CLIENT_HELLO	   1
#define EXT_SERVER_NAME	   0
#define NAME_TYPE_HOSTNAME 0

/* A cursor over bytes whose reads fail, not overrun, past the end. */
struct cur {
	const uint8_t *p;
	size_t n;
	bool bad;
};

static unsigned take(struct cur *c, size_t width)
{
	unsigned v = 0;
	if (c->bad || c->n < width) {
		c->bad = true;
		return 0;
	}
	for (size_t i = 0; i < width; i++)
		v = v << 8 | c->p[i];
	c->p += width;
	c->n -= width;
	return v;
}

/* The next len bytes as a cursor of their own. */
static struct cur sub(struct cur *c, size_t len)
{
	struct cur s = {.p = c->p, .n = len, .bad = c->bad || c->n < len};
	if (s.bad) {
		c->bad = true;
		s.n = 0;
		return s;
	}
	c->p += len;
	c->n -= len;
	return s;
}

/* A host_name entry into name: letters, digits, '-', '_' and dots, lower-cased,
 * without the trailing dot. */
static bool host_name(struct cur v, char name[TLSHELLO_NAME_MAX])
{
	if (v.n == 0 || v.n >= TLSHELLO_NAME_MAX)
		return false;
	for (size_t i = 0; i < v.n; i++) {
		int ch = v.p[i];
		if (!isalnum(ch) && ch != '-' && ch != '_' && ch != '.')
			return false;
		name[i] = (char)tolower(ch);
	}
	size_t n = v.n;
	if (name[n - 1] == '.')
		n--;
	name[n] = 0;
	return n > 0 && name[0] != '.';
}

/* The server_name extension's body (a list of names of which one may be a
 * host name). */
static enum tlshello server_name_ext(struct cur x, char name[TLSHELLO_NAME_MAX])
{
	struct cur list = sub(&x, take(&x, 2));
	if (x.bad || x.n || list.n == 0)
		return TLSHELLO_MALFORMED;
	bool seen = false;
	while (list.n) {
		unsigned type = take(&list, 1);
		struct cur v = sub(&list, take(&list, 2));
		if (list.bad)
			return TLSHELLO_MALFORMED;
		if (type != NAME_TYPE_HOSTNAME)
			continue;
		if (seen || !host_name(v, name)) /* one host name at most (RFC 6066) */
			return TLSHELLO_MALFORMED;
		seen = true;
	}
	return seen ? TLSHELLO_NAME : TLSHELLO_NO_NAME;
}

/* The ClientHello's body: version, random, session id, cipher suites,
 * compression methods, then extensions (absent in a TLS 1.0 hello). */
static enum tlshello client_hello(struct cur c, char name[TLSHELLO_NAME_MAX])
{
	take(&c, 2 + 32);
	unsigned sid = take(&c, 1);
	sub(&c, sid);
	unsigned suites = take(&c, 2);
	sub(&c, suites);
	unsigned comp = take(&c, 1);
	sub(&c, comp);
	if (c.bad || sid > 32 || suites < 2 || suites % 2 || comp < 1)
		return TLSHELLO_MALFORMED;
	if (c.n == 0)
		return TLSHELLO_NO_NAME;
	struct cur exts = sub(&c, take(&c, 2));
	if (c.bad || c.n)
		return TLSHELLO_MALFORMED;
	enum tlshello found = TLSHELLO_NO_NAME;
	while (exts.n) {
		unsigned type = take(&exts, 2);
		struct cur x = sub(&exts, take(&exts, 2));
		if (exts.bad)
			return TLSHELLO_MALFORMED;
		if (type != EXT_SERVER_NAME)
			continue;
		if (found != TLSHELLO_NO_NAME) /* the extension twice */
			return TLSHELLO_MALFORMED;
		found = server_name_ext(x, name);
		if (found == TLSHELLO_MALFORMED)
			return found;
	}
	return found;
}

enum tlshello tlshello_server_name(const uint8_t *buf, size_t len, char name[TLSHELLO_NAME_MAX])
{
	name[0] = 0;
	/* the handshake message, gathered from the fragments of its records */
	uint8_t *msg = xmalloc(len ? len : 1);
	size_t got = 0, need = 0, off = 0;
	enum tlshello r = TLSHELLO_MORE;
	while (r == TLSHELLO_MORE) {
		const uint8_t *h = buf + off;
		size_t left = len - off;
		if ((left >= 1 && h[0] != TYPE_HANDSHAKE) || (left >= 2 && h[1] != 3)) {
			r = off == 0 ? TLSHELLO_NOT_TLS : TLSHELLO_MALFORMED;
			break;
		}
		if (left < RECORD_HEAD)
			break;
		size_t rlen = (size_t)h[3] << 8 | h[4];
		if (rlen == 0 || rlen > RECORD_MAX) {
			r = TLSHELLO_MALFORMED;
			break;
		}
		size_t have = left - RECORD_HEAD < rlen ? left - RECORD_HEAD : rlen;
		memcpy(msg + got, h + RECORD_HEAD, have);
		got += have;
		if (got >= 4) {
			need = 4 + ((size_t)msg[1] << 16 | (size_t)msg[2] << 8 | msg[3]);
			if (msg[0] != HS_CLIENT_HELLO || need > TLSHELLO_MAX) {
				r = TLSHELLO_MALFORMED;
				break;
			}
			if (got >= need) {
				struct cur c = {.p = msg + 4, .n = need - 4};
				r = client_hello(c, name);
				break;
			}
		}
		if (have < rlen)
			break; /* the record is not whole yet */
		off += RECORD_HEAD + rlen;
	}
	free(msg);
	if (r != TLSHELLO_NAME)
		name[0] = 0;
	return r;
}
