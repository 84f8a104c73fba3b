/* jsonraw: spans of JSON values in their text, and NaN/Infinity made
 * readable for cJSON without moving a byte. */
#include "common/jsonraw.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

static size_t skip_space(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
		i++;
	return i;
}

/* The end of the string whose quote is s[i], or 0. */
static size_t skip_string(const char *s, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return 0;
}

size_t jsonraw_skip(const char *s, size_t n, size_t i)
{
	i = skip_space(s, n, i);
	if (i >= n)
		return 0;
	if (s[i] == '"')
		return skip_string(s, n, i);
	if (s[i] == '[' || s[i] == '{') {
		int depth = 0;
		for (; i < n; i++) {
			if (s[i] == '"') {
				size_t e = skip_string(s, n, i);
				if (!e)
					return 0;
				i = e - 1;
			} else if (s[i] == '[' || s[i] == '{') {
				depth++;
			} else if ((s[i] == ']' || s[i] == '}') && --depth == 0) {
				return i + 1;
			}
		}
		return 0;
	}
	size_t start = i; /* a number or a literal */
	while (i < n && !strchr(" \t\r\n,]}:", s[i]) && s[i])
		i++;
	return i > start ? i : 0;
}

/* Calls each(key span or NULL, value span, ctx) for the members of the object
 * or the elements of the array s[0..n) until it returns true; -1 when s is
 * neither, else how many it was called for. */
static int walk(const char *s, size_t n, char open,
		bool (*each)(const char *s, const struct jsonraw_span *key,
			     const struct jsonraw_span *val, void *ctx),
		void *ctx)
{
	char close = open == '{' ? '}' : ']';
	size_t i = skip_space(s, n, 0);
	if (i >= n || s[i] != open)
		return -1;
	i = skip_space(s, n, i + 1);
	int count = 0;
	while (i < n && s[i] != close) {
		struct jsonraw_span key = {0, 0}, val;
		if (open == '{') {
			size_t e = s[i] == '"' ? skip_string(s, n, i) : 0;
			if (!e)
				return -1;
			key = (struct jsonraw_span){i + 1, e - i - 2};
			i = skip_space(s, n, e);
			if (i >= n || s[i] != ':')
				return -1;
			i++;
		}
		val.at = skip_space(s, n, i);
		size_t e = jsonraw_skip(s, n, val.at);
		if (!e)
			return -1;
		val.len = e - val.at;
		count++;
		if (each(s, open == '{' ? &key : NULL, &val, ctx))
			return count;
		i = skip_space(s, n, e);
		if (i < n && s[i] == ',')
			i = skip_space(s, n, i + 1);
	}
	return count;
}

struct member_find {
	const char *key;
	struct jsonraw_span *out;
	bool found;
};

static bool member_each(const char *s, const struct jsonraw_span *key,
			const struct jsonraw_span *val, void *ctx)
{
	struct member_find *m = ctx;
	if (strlen(m->key) != key->len || memcmp(s + key->at, m->key, key->len))
		return false;
	*m->out = *val;
	m->found = true;
	return true;
}

bool jsonraw_member(const char *s, size_t n, const char *key, struct jsonraw_span *out)
{
	struct member_find m = {key, out, false};
	return walk(s, n, '{', member_each, &m) > 0 && m.found;
}

struct element_list {
	struct jsonraw_span *v;
	int n;
};

static bool element_each(const char *s, const struct jsonraw_span *key,
			 const struct jsonraw_span *val, void *ctx)
{
	(void)s;
	(void)key;
	struct element_list *l = ctx;
	l->v = xreallocarray(l->v, (size_t)l->n + 1, sizeof *l->v);
	l->v[l->n++] = *val;
	return false;
}

int jsonraw_elements(const char *s, size_t n, struct jsonraw_span **out)
{
	struct element_list l = {NULL, 0};
	int count = walk(s, n, '[', element_each, &l);
	if (count < 0) {
		free(l.v);
		l.v = NULL;
	}
	*out = l.v;
	return count;
}

/* copy, or a copy of s[0..n) made now, to change */
static char *writable(char *copy, const char *s, size_t n)
{
	if (copy)
		return copy;
	copy = xmalloc(n + 1);
	memcpy(copy, s, n);
	copy[n] = '\0';
	return copy;
}

char *jsonraw_tame(const char *s, size_t n, const struct jsonraw_span *nul_in, bool *nul)
{
	static const char *const words[] = {"-Infinity", "Infinity", "NaN"};
	char *copy = NULL;
	if (nul)
		*nul = false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"') {
			size_t e = skip_string(s, n, i);
			if (!e)
				break;
			bool within = nul_in && i >= nul_in->at && e <= nul_in->at + nul_in->len;
			for (size_t j = i + 1; within && j + 5 < e; j++) {
				if (s[j] != '\\')
					continue;
				if (!memcmp(s + j + 1, "u0000", 5)) {
					copy = writable(copy, s, n);
					copy[j + 5] = '1';
					if (nul)
						*nul = true;
				}
				j++; /* the escaped character */
			}
			i = e - 1;
			continue;
		}
		for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
			size_t len = strlen(words[w]);
			if (n - i < len || memcmp(s + i, words[w], len))
				continue;
			copy = writable(copy, s, n);
			copy[i] = '0';
			memset(copy + i + 1, ' ', len - 1);
			i += len - 1;
			break;
		}
	}
	return copy;
}
