/* xalloc: allocation that never returns NULL (see xalloc.h for why). */
#include "common/xalloc.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

void xalloc_die(size_t size)
{
	/* log_write formats into a buffer on its stack: no allocation on the way out */
	if (size)
		log_write(LOG_ERROR, "out of memory (%zu bytes)", size);
	else
		log_write(LOG_ERROR, "out of memory");
	abort();
}

void xalloc_init(void)
{
	cJSON_Hooks hooks = {.malloc_fn = xmalloc, .free_fn = free};
	cJSON_InitHooks(&hooks);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (!p)
		xalloc_die(size);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	if (!n || !size)
		n = size = 1;
	void *p = calloc(n, size);
	if (!p)
		xalloc_die(size > SIZE_MAX / n ? SIZE_MAX : n * size);
	return p;
}

void *xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size ? size : 1);
	if (!q)
		xalloc_die(size);
	return q;
}

void *xreallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		xalloc_die(SIZE_MAX);
	return xrealloc(p, n * size);
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s);
	char *p = xmalloc(n + 1);
	memcpy(p, s, n + 1);
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = 0;
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	/* negative only for a bad format or a result over INT_MAX: a bug of the caller */
	if (n < 0)
		abort();
	char *p = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

char **xstrvdup(const char *const *v)
{
	if (!v)
		return NULL;
	size_t n = 0;
	while (v[n])
		n++;
	char **c = xcalloc(n + 1, sizeof *c);
	for (size_t i = 0; i < n; i++)
		c[i] = xstrdup(v[i]);
	return c;
}

void xstrvfree(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}
