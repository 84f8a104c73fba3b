/* regcache: the host-side cache of the install proxy (regproxy.c) — upstream
 * responses stored as files under a folder, fetched with libcurl.
 *
 * One file per URL, named by a 128-bit hash of it and holding the URL itself
 * (a hash collision is a miss, never another URL's body), the content type and
 * the body. A fetch writes a temporary file and renames it into place, so a
 * reader never sees half a response and concurrent installs may share the
 * folder. The file's mtime is when it was fetched: the caller decides what is
 * fresh (immutable files forever, index pages for a few minutes).
 */
#pragma once
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

struct regcache_entry {
	int fd;		 /* open on the file, positioned at the body; -1 when none */
	off_t size;	 /* bytes of the body */
	time_t mtime;	 /* when it was fetched */
	char ctype[128]; /* the upstream's Content-Type, or "" */
};

/* Opens the cached response of url under dir. Returns 1 with *e filled (close
 * e->fd with regcache_entry_close), 0 when there is none, -1 on errors. */
int regcache_open(const char *dir, const char *url, struct regcache_entry *e);
void regcache_entry_close(struct regcache_entry *e);

struct regcache_fetch {
	const char *url;
	const char *accept;	 /* Accept header sent upstream, or NULL */
	long long max_bytes;	 /* bigger bodies fail the fetch */
	const atomic_bool *stop; /* set: abort the transfer; may be NULL */
	int status;		 /* out: the upstream's HTTP status, 0 when none came */
	/* When set, the body of a 200 answer is also handed to it as it arrives
	 * (first a call with its content type and length, -1 when unknown, and no
	 * data): a big file reaches the client while it is cached. Such a fetch
	 * asks for no content encoding, so the length is the body's. on_body
	 * returns false once it wants no more (the fetch goes on into the cache). */
	bool (*on_body)(void *arg, const char *ctype, long long length, const char *data,
			size_t len);
	void *arg;
	bool streamed; /* out: on_body saw the start of the body */
};

/* Fetches f->url into the cache under dir (made as needed) when the answer is
 * 200. Returns 1 stored, 0 the upstream answered another status (f->status),
 * -1 with err when the transfer failed. */
int regcache_fetch(const char *dir, struct regcache_fetch *f, char *err, size_t errlen);
