/* tlshello: the server name (SNI) a TLS client asks for in its ClientHello,
 * read from the bytes a client sends first. An egress proxy that lets a
 * CONNECT tunnel through to one allowed host checks that the TLS inside
 * names the same host, so that an allowed address (a CDN's) cannot carry a
 * connection to another name behind it. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define TLSHELLO_NAME_MAX 256	/* a DNS name's 255 bytes and a NUL */
#define TLSHELLO_MAX	  65536 /* a ClientHello larger than this is refused */

enum tlshello {
	TLSHELLO_MORE,	    /* a TLS handshake so far: more bytes are needed */
	TLSHELLO_NOT_TLS,   /* the bytes are not a TLS handshake at all */
	TLSHELLO_MALFORMED, /* a TLS handshake, but no valid ClientHello */
	TLSHELLO_NO_NAME,   /* a ClientHello without a host name */
	TLSHELLO_NAME,	    /* a ClientHello naming the host in name */
};

/* Reads the first ClientHello in buf[0..len): its handshake message may span
 * several records. With TLSHELLO_NAME, name holds the host name, lower-cased,
 * without a trailing dot. */
enum tlshello tlshello_server_name(const uint8_t *buf, size_t len, char name[TLSHELLO_NAME_MAX]);
