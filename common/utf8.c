/* utf8: UTF-8 validation and repair. */
#include "common/utf8.h"

size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	if (!n)
		return 0;
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	size_t len;
	unsigned min;
	unsigned cp;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2, min = 0x80, cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3, min = 0x800, cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4, min = 0x10000, cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

bool utf8_valid_text(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		if (!p[i])
			return false;
		size_t l = utf8_seq_len(p + i, n - i);
		if (!l)
			return false;
		i += l;
	}
	return true;
}

size_t utf8_sanitize(struct strbuf *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t replaced = 0, run = 0;
	strbuf_grow(out, n);
	for (size_t i = 0; i < n;) {
		size_t l = p[i] ? utf8_seq_len(p + i, n - i) : 0;
		if (l) {
			i += l;
			run += l;
			continue;
		}
		strbuf_add(out, p + i - run, run);
		run = 0;
		strbuf_addstr(out, "\xef\xbf\xbd");
		replaced++;
		i++;
	}
	strbuf_add(out, p + n - run, run);
	return replaced;
}
