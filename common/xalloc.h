/* xalloc: allocation that never returns NULL. Out of memory logs the size and aborts.
 *
 * The judge's one out-of-memory policy (docs/ARCHITECTURE.md, "Conventions"): a
 * process that cannot get a few hundred bytes cannot grade, report or even log
 * reliably, and a worker that dies is replaced (judge up restarts it, the queue
 * re-queues its claims when the lease runs out). So callers never check these
 * for NULL and keep no error paths for out of memory. Limits on what a client
 * may send (body, source, output caps) are what keep the judge's memory small;
 * they are checked before allocating, as errors of the request.
 *
 * Not for a sandbox child between fork and execve (allocating there is unsafe
 * in a threaded parent) nor for runner/gvisor/init/box_init.c (static, no libraries).
 */
#pragma once
#include <stddef.h>

/* Tells the compiler what the contract says: fresh memory, never NULL. */
#define XALLOC_ATTRS __attribute__((malloc, returns_nonnull, warn_unused_result))

/* Points cJSON's allocations at xmalloc/free, so a cJSON_Create*, cJSON_Add*
 * or cJSON_Print* result is never NULL for want of memory (cJSON_Parse still
 * returns NULL for bad JSON). Call once at start, before any thread. */
void xalloc_init(void);

/* malloc(size), at least one byte. */
void *xmalloc(size_t size) XALLOC_ATTRS __attribute__((alloc_size(1)));
/* calloc(n, size): zeroed; n * size overflowing dies as out of memory. */
void *xcalloc(size_t n, size_t size) XALLOC_ATTRS __attribute__((alloc_size(1, 2)));
/* realloc(p, size), at least one byte; p may be NULL. */
void *xrealloc(void *p, size_t size)
    __attribute__((returns_nonnull, warn_unused_result, alloc_size(2)));
/* realloc(p, n * size) for arrays; n * size overflowing dies as out of memory. */
void *xreallocarray(void *p, size_t n, size_t size)
    __attribute__((returns_nonnull, warn_unused_result, alloc_size(2, 3)));
/* A malloc'd copy of s (caller frees). */
char *xstrdup(const char *s) XALLOC_ATTRS;
/* A malloc'd copy of at most n bytes of s, NUL-terminated (caller frees). */
char *xstrndup(const char *s, size_t n) XALLOC_ATTRS;
/* A malloc'd formatted string (caller frees). */
char *xasprintf(const char *fmt, ...) XALLOC_ATTRS __attribute__((format(printf, 1, 2)));

/* A NULL-terminated list of strings ("K=V", argv ...): a deep copy (NULL for
 * NULL), and its release (NULL fine). */
char **xstrvdup(const char *const *v);
void xstrvfree(char **v);

/* Logs "out of memory (N bytes)" (size 0: not known) and aborts. For libraries
 * that report their own allocation failures (libyaml, pcre2, libseccomp). */
_Noreturn void xalloc_die(size_t size);
