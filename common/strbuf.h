/* strbuf: the one growable byte buffer, used for output, JSON and SQL text. */
#pragma once
#include <stdarg.h>
#include <stddef.h>

/* Invariant: buf is always NUL-terminated (buf[len] == 0), even when empty.
 * An initialised, never-grown strbuf points at a static empty string. */
struct strbuf {
	char *buf;
	size_t len;
	size_t alloc;
};

#define STRBUF_INIT                                                                                \
	{                                                                                          \
		.buf = strbuf_empty, .len = 0, .alloc = 0                                          \
	}
extern char strbuf_empty[];

void strbuf_init(struct strbuf *sb);
/* Frees the memory; sb is left initialised and empty. */
void strbuf_release(struct strbuf *sb);
/* Ensures room for extra more bytes (plus the NUL). Out of memory aborts (xalloc.h). */
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
void strbuf_reset(struct strbuf *sb);
/* Returns the malloc'd buffer (caller frees) and leaves sb empty. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
/* Reads the whole file at path into sb (appending), at most max bytes.
 * Returns 0, -errno on failure, or -EFBIG when the file is larger than max. */
int strbuf_read_file(struct strbuf *sb, const char *path, size_t max);
