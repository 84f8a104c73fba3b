/* outbuf: batching a run's live output into output_chunks rows (see outbuf.h). */
#include "judge/service/outbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/xalloc.h"

void outbuf_init(struct outbuf *b, size_t max_bytes, size_t max_pending)
{
	memset(b, 0, sizeof *b);
	b->max_bytes = max_bytes;
	b->max_pending = max_pending;
}

void outbuf_events_free(struct outbuf_event *ev, size_t n)
{
	for (size_t i = 0; i < n; i++)
		strbuf_release(&ev[i].data);
	free(ev);
}

void outbuf_reset(struct outbuf *b)
{
	size_t max = b->max_bytes, pending = b->max_pending;
	outbuf_events_free(b->ev, b->nev);
	outbuf_init(b, max, pending);
}

void outbuf_release(struct outbuf *b)
{
	outbuf_reset(b);
}

size_t outbuf_pending(const struct outbuf *b)
{
	return b->pending;
}

static const char *fd_event(int fd)
{
	return fd == 2 ? "stderr" : fd == 3 ? "compile" : "stdout";
}

static struct outbuf_event *push(struct outbuf *b, const char *name, int fd)
{
	if (b->nev == b->aev) {
		b->aev = b->aev ? 2 * b->aev : 16;
		b->ev = xreallocarray(b->ev, b->aev, sizeof *b->ev);
	}
	struct outbuf_event *e = &b->ev[b->nev++];
	snprintf(e->name, sizeof e->name, "%s", name);
	e->fd = fd;
	strbuf_init(&e->data);
	return e;
}

void outbuf_event(struct outbuf *b, const char *name, const char *json)
{
	struct outbuf_event *e = push(b, name, 0);
	strbuf_addstr(&e->data, json);
	b->pending += e->data.len;
}

void outbuf_truncate(struct outbuf *b, const char *reason)
{
	if (b->truncated)
		return;
	b->truncated = true;
	char json[128];
	snprintf(json, sizeof json, "{\"reason\":\"%s\",\"bytes\":%zu}", reason, b->accepted);
	outbuf_event(b, "truncated", json);
}

void outbuf_output(struct outbuf *b, int fd, const char *data, size_t len)
{
	if (b->truncated || !len)
		return;
	const char *why = NULL;
	/* PostgreSQL is behind: keep what fits, drop the rest rather than wait
	 * (a reader that emits a burst at once, as a slow capture does, would
	 * otherwise lose all of it) */
	size_t room = b->max_pending > b->pending ? b->max_pending - b->pending : 0;
	if (len > room) {
		why = "backlog";
		len = room;
	}
	if (b->accepted + len > b->max_bytes) {
		why = why ? why : "limit";
		len = b->max_bytes - b->accepted;
	}
	while (len) {
		struct outbuf_event *e = b->nev ? &b->ev[b->nev - 1] : NULL;
		if (!e || e->fd != fd || e->data.len >= OUTBUF_EVENT_BYTES)
			e = push(b, fd_event(fd), fd);
		size_t n = OUTBUF_EVENT_BYTES - e->data.len;
		if (n > len)
			n = len;
		strbuf_add(&e->data, data, n);
		data += n;
		len -= n;
		b->pending += n;
		b->accepted += n;
	}
	if (why)
		outbuf_truncate(b, why);
}

/* Length of an incomplete but possibly valid UTF-8 sequence ending s[0..n). */
static size_t utf8_cut_tail(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t k = 1; k <= 3 && k <= n; k++) {
		unsigned char c = p[n - k];
		if ((c & 0xc0) == 0x80)
			continue; /* a continuation byte: look further back */
		size_t want = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
		return want > k && c < 0xf5 ? k : 0;
	}
	return 0;
}

void outbuf_json_string(struct strbuf *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	strbuf_grow(out, n + 2);
	strbuf_addch(out, '"');
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\') {
			run++;
			continue;
		}
		strbuf_add(out, s + i - run, run);
		run = 0;
		const char *esc = c == '"'    ? "\\\""
				  : c == '\\' ? "\\\\"
				  : c == '\n' ? "\\n"
				  : c == '\r' ? "\\r"
				  : c == '\t' ? "\\t"
					      : NULL;
		if (esc) {
			strbuf_addstr(out, esc);
		} else {
			char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
			strbuf_addstr(out, u);
		}
	}
	strbuf_add(out, s + n - run, run);
	strbuf_addch(out, '"');
}

/* Turns an output event's raw bytes into its JSON string. */
static void to_json(struct outbuf_event *e)
{
	struct strbuf clean = STRBUF_INIT, json = STRBUF_INIT;
	utf8_sanitize(&clean, e->data.buf, e->data.len);
	outbuf_json_string(&json, clean.buf, clean.len);
	strbuf_release(&clean);
	strbuf_release(&e->data);
	e->data = json;
}

size_t outbuf_take(struct outbuf *b, bool at_end, struct outbuf_event **out)
{
	char tail[4];
	size_t ntail = 0, n = b->nev;
	int tail_fd = 0;
	struct outbuf_event *last = n ? &b->ev[n - 1] : NULL;
	if (!at_end && last && last->fd) {
		ntail = utf8_cut_tail(last->data.buf, last->data.len);
		memcpy(tail, last->data.buf + last->data.len - ntail, ntail);
		last->data.len -= ntail;
		last->data.buf[last->data.len] = 0;
		tail_fd = last->fd;
		if (!last->data.len) {
			strbuf_release(&last->data);
			n--;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (b->ev[i].fd)
			to_json(&b->ev[i]);
	*out = b->ev;
	b->ev = NULL;
	b->nev = b->aev = 0;
	b->pending = 0;
	if (ntail) {
		struct outbuf_event *e = push(b, fd_event(tail_fd), tail_fd);
		strbuf_add(&e->data, tail, ntail);
		b->pending = ntail;
	}
	if (!n) {
		free(*out);
		*out = NULL;
	}
	return n;
}
