/* sessegress: a session's egress proxy (see sessegress.h). */
#define _GNU_SOURCE
#include "judge/service/session/sessegress.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/tlshello.h"
#include "common/xalloc.h"
#include "runner/nsproxy.h"

#define MAX_CONNS	   32	 /* served at once; more wait to be accepted */
#define HEAD_MAX	   16384 /* a request head */
#define HEAD_TIMEOUT_MS	   30000
#define CONNECT_TIMEOUT_MS 10000
#define IDLE_TIMEOUT_MS	   300000 /* a tunnel with no byte either way this long ends */
#define MAX_ADDRS	   16	  /* addresses of one name looked at */
#define MAX_ENTRIES	   64	  /* of the hosts map and of the operator's addresses */

struct hostent_map {
	char name[SESSNET_HOST_MAX];
	struct sockaddr_storage sa;
};

struct sessegress {
	struct sessegress_options o;
	struct hostent_map hosts[MAX_ENTRIES];
	size_t nhosts;
	struct sockaddr_storage allowed[MAX_ENTRIES];
	size_t nallowed;
	atomic_llong bytes; /* both directions, every connection */
	atomic_long conns;  /* attempts that passed the policy */
	struct nsproxy *np;
};

/* ---- options ---- */

/* An address literal into sa (port 0). 0 or -1. */
static int addr_parse(const char *s, struct sockaddr_storage *sa)
{
	memset(sa, 0, sizeof *sa);
	struct sockaddr_in *a4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)sa;
	if (inet_pton(AF_INET, s, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		return 0;
	}
	return -1;
}

static bool same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
}

/* The next comma-separated item of *s, trimmed, into buf; false at the end. */
static bool next_item(const char **s, char *buf, size_t len)
{
	while (**s == ',' || isspace((unsigned char)**s))
		(*s)++;
	if (!**s)
		return false;
	size_t n = strcspn(*s, ",");
	const char *e = *s + n;
	while (e > *s && isspace((unsigned char)e[-1]))
		e--;
	snprintf(buf, len, "%.*s", (int)(e - *s), *s);
	*s += n;
	return true;
}

/* Parses the hosts map and the operator's addresses into e (NULL: check only). */
static int parse_options(const char *hosts, const char *addr_allow, struct sessegress *e, char *err,
			 size_t errlen)
{
	char item[320];
	size_t nh = 0, na = 0;
	for (const char *s = hosts ? hosts : ""; next_item(&s, item, sizeof item);) {
		char *eq = strchr(item, '=');
		struct sockaddr_storage sa;
		if (eq)
			*eq = 0;
		size_t nl = strlen(item);
		while (nl && isspace((unsigned char)item[nl - 1]))
			item[--nl] = 0;
		const char *addr = eq ? eq + 1 : "";
		while (isspace((unsigned char)*addr))
			addr++;
		if (!eq || !nl || nl >= SESSNET_HOST_MAX || addr_parse(addr, &sa) < 0) {
			snprintf(err, errlen, "egress_hosts: '%s' is not name=address", item);
			return -1;
		}
		if (nh == MAX_ENTRIES) {
			snprintf(err, errlen, "egress_hosts: more than %d entries", MAX_ENTRIES);
			return -1;
		}
		if (e) {
			for (char *c = item; *c; c++)
				*c = (char)tolower((unsigned char)*c);
			snprintf(e->hosts[nh].name, sizeof e->hosts[nh].name, "%s", item);
			e->hosts[nh].sa = sa;
		}
		nh++;
	}
	for (const char *s = addr_allow ? addr_allow : ""; next_item(&s, item, sizeof item);) {
		struct sockaddr_storage sa;
		if (addr_parse(item, &sa) < 0) {
			snprintf(err, errlen, "egress_addr_allow: '%s' is not an address", item);
			return -1;
		}
		if (na == MAX_ENTRIES) {
			snprintf(err, errlen, "egress_addr_allow: more than %d entries",
				 MAX_ENTRIES);
			return -1;
		}
		if (e)
			e->allowed[na] = sa;
		na++;
	}
	if (e)
		e->nhosts = nh, e->nallowed = na;
	return 0;
}

int sessegress_check_options(const char *hosts, const char *addr_allow, char *err, size_t errlen)
{
	return parse_options(hosts, addr_allow, NULL, err, errlen);
}

/* ---- one connection ---- */

/* What one connection asked and what became of it. */
struct attempt {
	char method[16];
	char host[SESSNET_HOST_MAX];
	int port;
	bool allowed;
	char reason[384];
	char addr[INET6_ADDRSTRLEN];
	long long out, in;
};

static void tell(struct sessegress *e, const struct attempt *a)
{
	log_debug("egress: %s %s:%d %s (%s) %s out %lld in %lld", a->method, a->host, a->port,
		  a->allowed ? "allowed" : "refused", a->reason, a->addr, a->out, a->in);
	if (!e->o.on_attempt)
		return;
	struct sessegress_attempt t = {.method = a->method,
				       .host = a->host,
				       .port = a->port,
				       .allowed = a->allowed,
				       .reason = a->reason,
				       .addr = a->addr,
				       .bytes_out = a->out,
				       .bytes_in = a->in};
	e->o.on_attempt(e->o.arg, &t);
}

/* Answers an error whose status line says why (clients show the reason
 * phrase: urllib's HTTPError, a failed CONNECT's message). */
static void refuse(int fd, int status, const char *why)
{
	struct strbuf b;
	strbuf_init(&b);
	strbuf_addf(&b,
		    "HTTP/1.1 %d egress refused: %s\r\nContent-Type: text/plain\r\n"
		    "Content-Length: %zu\r\nConnection: close\r\n\r\negress refused: %s\n",
		    status, why, strlen("egress refused: \n") + strlen(why), why);
	nsproxy_send_all(fd, b.buf, b.len, HEAD_TIMEOUT_MS);
	strbuf_release(&b);
}

/* Splits an authority "host", "host:port", "[v6]" or "[v6]:port" into a->host
 * (lower case) and a->port (def when absent). 0 or -1. */
static int authority(const char *s, size_t len, int def, struct attempt *a)
{
	const char *hs = s, *he, *ps = NULL;
	const char *end = s + len;
	if (len && *s == '[') {
		he = memchr(s, ']', len);
		if (!he)
			return -1;
		hs = s + 1;
		if (he + 1 < end) {
			if (he[1] != ':')
				return -1;
			ps = he + 2;
		}
	} else {
		he = memchr(s, ':', len);
		if (he)
			ps = he + 1;
		else
			he = end;
	}
	size_t hl = (size_t)(he - hs);
	if (!hl || hl >= sizeof a->host)
		return -1;
	for (size_t i = 0; i < hl; i++) {
		char c = (char)tolower((unsigned char)hs[i]);
		if (!isalnum((unsigned char)c) && c != '.' && c != '-' && c != '_' && c != ':')
			return -1;
		a->host[i] = c;
	}
	a->host[hl] = 0;
	a->port = def;
	if (ps) {
		char pb[8];
		size_t pl = (size_t)(end - ps);
		if (!pl || pl >= sizeof pb)
			return -1;
		memcpy(pb, ps, pl);
		pb[pl] = 0;
		char *x;
		long p = strtol(pb, &x, 10);
		if (*x || p < 1 || p > 65535)
			return -1;
		a->port = (int)p;
	}
	return 0;
}

static void addr_text(const struct sockaddr_storage *sa, char *buf, size_t len)
{
	const void *in = sa->ss_family == AF_INET
			     ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
			     : (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (!inet_ntop(sa->ss_family, in, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* Resolves a->host here: the hosts map, else the system's resolver. Fills
 * out[0..n-1]. Returns n (0: no address). */
static int resolve(struct sessegress *e, const char *host, struct sockaddr_storage *out)
{
	char name[SESSNET_HOST_MAX];
	snprintf(name, sizeof name, "%s", host);
	size_t nl = strlen(name);
	if (nl > 1 && name[nl - 1] == '.')
		name[nl - 1] = 0;
	for (size_t i = 0; i < e->nhosts; i++)
		if (!strcmp(e->hosts[i].name, name)) {
			out[0] = e->hosts[i].sa;
			return 1;
		}
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	if (getaddrinfo(name, NULL, &hints, &res) != 0)
		return 0;
	int n = 0;
	for (struct addrinfo *r = res; r && n < MAX_ADDRS; r = r->ai_next)
		if ((r->ai_family == AF_INET || r->ai_family == AF_INET6) &&
		    r->ai_addrlen <= sizeof *out) {
			memset(&out[n], 0, sizeof out[n]);
			memcpy(&out[n], r->ai_addr, r->ai_addrlen);
			n++;
		}
	freeaddrinfo(res);
	return n;
}

/* Connects to sa at port, waiting at most CONNECT_TIMEOUT_MS. The fd or -1. */
static int dial(struct sockaddr_storage *sa, int port)
{
	socklen_t len;
	if (sa->ss_family == AF_INET) {
		((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
		len = sizeof(struct sockaddr_in);
	} else {
		((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
		len = sizeof(struct sockaddr_in6);
	}
	int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)sa, len) < 0) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int soerr = 0;
		socklen_t sl = sizeof soerr;
		if (errno != EINPROGRESS || poll(&p, 1, CONNECT_TIMEOUT_MS) <= 0 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* Counts n bytes against the session's cap: false once it is passed. */
static bool spend(struct sessegress *e, long long n)
{
	long long now = atomic_fetch_add(&e->bytes, n) + n;
	return !e->o.max_bytes || now <= e->o.max_bytes;
}

/* Relays both ways between the client c and the upstream u until the upstream
 * is done, the byte cap is passed, the proxy stops or nothing moves for
 * IDLE_TIMEOUT_MS. */
static void relay(struct sessegress *e, int c, int u, struct attempt *a)
{
	char buf[65536];
	bool c_open = true, u_open = true;
	snprintf(a->reason, sizeof a->reason, "closed");
	while (u_open && (c_open || u_open)) {
		struct pollfd p[2] = {{.fd = c, .events = c_open ? POLLIN : 0},
				      {.fd = u, .events = POLLIN}};
		int r = poll(p, 2, IDLE_TIMEOUT_MS);
		if (atomic_load(nsproxy_stop_flag(e->np))) {
			/* the session ends: its sockets were shut down to wake us */
			snprintf(a->reason, sizeof a->reason, "the session ended");
			return;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(a->reason, sizeof a->reason, "idle for %d s",
				 IDLE_TIMEOUT_MS / 1000);
			return;
		}
		for (int i = 0; i < 2; i++) {
			if (!p[i].revents)
				continue;
			int from = i ? u : c, to = i ? c : u;
			ssize_t n = recv(from, buf, sizeof buf, MSG_DONTWAIT);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				if (i) {
					u_open = false;
				} else {
					c_open = false;
					shutdown(u, SHUT_WR);
				}
				continue;
			}
			if (!spend(e, n)) {
				snprintf(a->reason, sizeof a->reason,
					 "the session's egress byte cap (%lld) is reached",
					 e->o.max_bytes);
				return;
			}
			*(i ? &a->in : &a->out) += n;
			if (nsproxy_send_all(to, buf, (size_t)n, IDLE_TIMEOUT_MS) < 0) {
				snprintf(a->reason, sizeof a->reason, "%s went away",
					 i ? "the client" : "the upstream");
				return;
			}
		}
	}
}

/* The plain HTTP request's head for the upstream: origin-form target, the
 * proxy's own headers left out, one request per connection. */
static void origin_head(const char *method, const char *path, const char *version,
			const char *headers, const char *hend, const struct attempt *a,
			struct strbuf *out)
{
	strbuf_addf(out, "%s %s %s\r\n", method, path, version);
	bool host = false;
	for (const char *l = headers; l < hend;) {
		const char *nl = memchr(l, '\n', (size_t)(hend - l));
		size_t len = nl ? (size_t)(nl - l) : (size_t)(hend - l);
		size_t tl = len && l[len - 1] == '\r' ? len - 1 : len;
		static const char *const drop[] = {
		    "proxy-connection:", "proxy-authorization:", "connection:", "keep-alive:"};
		bool skip = tl == 0;
		for (size_t i = 0; i < sizeof drop / sizeof drop[0] && !skip; i++)
			skip = !strncasecmp(l, drop[i], strlen(drop[i]));
		if (!skip) {
			host = host || !strncasecmp(l, "host:", 5);
			strbuf_add(out, l, tl);
			strbuf_addstr(out, "\r\n");
		}
		l += len + (nl ? 1 : 0);
	}
	if (!host)
		strbuf_addf(out, "Host: %s:%d\r\n", a->host, a->port);
	strbuf_addstr(out, "Connection: close\r\n\r\n");
}

/* The host part of an authority or Host value ("name", "name:port",
 * "[v6]:port"), lower-cased and without a trailing dot, into out. */
static void host_of(const char *s, size_t len, char *out, size_t outlen)
{
	struct attempt h;
	if (authority(s, len, 1, &h) < 0) {
		snprintf(out, outlen, "%.*s", (int)(len < 200 ? len : 200), s);
		return;
	}
	size_t n = strlen(h.host);
	if (n > 1 && h.host[n - 1] == '.')
		h.host[--n] = 0;
	snprintf(out, outlen, "%s", h.host);
}

/* A tunnel's first bytes, before any reaches the upstream: when they are a
 * TLS ClientHello, the server name it asks for must be the CONNECT host
 * (none only for an address). They are kept in first, to be sent on.
 * Returns false, with a->reason, when the tunnel must be cut. */
static bool first_flight(struct sessegress *e, int fd, int ufd, struct attempt *a,
			 struct strbuf *first)
{
	char want[SESSNET_HOST_MAX], name[TLSHELLO_NAME_MAX];
	host_of(a->host, strlen(a->host), want, sizeof want);
	bool literal = strchr(want, ':') || strspn(want, "0123456789.") == strlen(want);
	enum tlshello r = TLSHELLO_MORE;
	int64_t deadline = clock_mono_ms() + HEAD_TIMEOUT_MS;
	while ((r = tlshello_server_name((const uint8_t *)first->buf, first->len, name)) ==
	       TLSHELLO_MORE) {
		if (first->len >= TLSHELLO_MAX + 4096 || clock_mono_ms() >= deadline ||
		    atomic_load(nsproxy_stop_flag(e->np))) {
			r = TLSHELLO_MALFORMED;
			break;
		}
		/* a server that speaks first is no TLS: TLS's client speaks first */
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = ufd, .events = POLLIN}};
		int n = poll(p, 2, 100);
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0 && p[1].revents && !first->len)
			return true;
		if (n <= 0 || !p[0].revents)
			continue;
		char buf[4096];
		ssize_t got = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0)
			return true; /* the client is gone: relay() ends the tunnel */
		strbuf_add(first, buf, (size_t)got);
	}
	switch (r) {
	case TLSHELLO_NOT_TLS: /* a plain protocol to an allowed host and port */
		return true;
	case TLSHELLO_NAME:
		if (!strcmp(name, want))
			return true;
		snprintf(a->reason, sizeof a->reason,
			 "the TLS server name %.160s is not the CONNECT host %.160s", name, want);
		return false;
	case TLSHELLO_NO_NAME:
		if (literal)
			return true;
		snprintf(a->reason, sizeof a->reason,
			 "the TLS ClientHello names no server (SNI); the CONNECT host is %s", want);
		return false;
	default:
		snprintf(a->reason, sizeof a->reason,
			 "the tunnel's TLS ClientHello is malformed or incomplete");
		return false;
	}
}

/* A plain request's Host header, when it has one, must name the URL's host:
 * the upstream is chosen by the URL, and a server behind that address that
 * routes by Host must not be asked for another name. */
static bool host_header_matches(const char *headers, const char *hend, struct attempt *a)
{
	char want[SESSNET_HOST_MAX], got[SESSNET_HOST_MAX];
	host_of(a->host, strlen(a->host), want, sizeof want);
	for (const char *l = headers; l < hend;) {
		const char *nl = memchr(l, '\n', (size_t)(hend - l));
		size_t len = nl ? (size_t)(nl - l) : (size_t)(hend - l);
		if (len > 5 && !strncasecmp(l, "host:", 5)) {
			const char *v = l + 5, *e = l + len;
			while (v < e && (*v == ' ' || *v == '\t'))
				v++;
			while (e > v && isspace((unsigned char)e[-1]))
				e--;
			host_of(v, (size_t)(e - v), got, sizeof got);
			if (strcmp(got, want)) {
				snprintf(a->reason, sizeof a->reason,
					 "the Host header names %.160s, not the URL's host %.160s",
					 got, want);
				return false;
			}
		}
		l += len + (nl ? 1 : 0);
	}
	return true;
}

/* Decides and carries out one connection's request (nsproxy's handler). */
static void handle(void *arg, int fd)
{
	struct sessegress *e = arg;
	char head[HEAD_MAX];
	struct attempt a = {.method = "?"};
	struct strbuf up;
	strbuf_init(&up);
	int ufd = -1;
	long n = nsproxy_read_head(fd, head, sizeof head, HEAD_TIMEOUT_MS);
	if (n < 0)
		goto out_quiet;
	char *hend = strstr(head, "\r\n\r\n");
	hend = hend ? hend + 4 : strstr(head, "\n\n") + 2;
	size_t extra = (size_t)(head + n - hend);
	char *eol = strchr(head, '\n');
	char *line_end = eol > head && eol[-1] == '\r' ? eol - 1 : eol;
	*line_end = 0;
	char *sp1 = strchr(head, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || sp1 - head >= (long)sizeof a.method) {
		refuse(fd, 400, "not an HTTP proxy request");
		snprintf(a.reason, sizeof a.reason, "not an HTTP proxy request");
		goto out;
	}
	*sp1 = *sp2 = 0;
	snprintf(a.method, sizeof a.method, "%.15s", head);
	const char *target = sp1 + 1, *version = sp2 + 1, *path = "/";
	bool tunnel = !strcmp(a.method, "CONNECT");
	int bad;
	if (tunnel) {
		bad = authority(target, strlen(target), 443, &a);
	} else if (!strncasecmp(target, "http://", 7)) {
		const char *auth = target + 7;
		size_t al = strcspn(auth, "/?#");
		path = auth[al] == '/' ? auth + al : "/";
		bad = memchr(auth, '@', al) ? -1 : authority(auth, al, 80, &a);
	} else {
		bad = -1;
	}
	if (bad) {
		snprintf(a.reason, sizeof a.reason,
			 "the request names no host: CONNECT host:port or an absolute http:// URL");
		refuse(fd, 400, a.reason);
		goto out;
	}
	if (!tunnel && !host_header_matches(eol + 1, hend, &a)) {
		refuse(fd, 403, a.reason);
		goto out;
	}
	if (!sessnet_allows(&e->o.policy, a.host, a.port)) {
		snprintf(a.reason, sizeof a.reason, "%s:%d is not in this session's network policy",
			 a.host, a.port);
		refuse(fd, 403, a.reason);
		goto out;
	}
	if (e->o.max_conns && atomic_fetch_add(&e->conns, 1) >= e->o.max_conns) {
		snprintf(a.reason, sizeof a.reason,
			 "the session's egress connection cap (%ld) is reached", e->o.max_conns);
		refuse(fd, 429, a.reason);
		goto out;
	}
	if (e->o.max_bytes && atomic_load(&e->bytes) >= e->o.max_bytes) {
		snprintf(a.reason, sizeof a.reason,
			 "the session's egress byte cap (%lld) is reached", e->o.max_bytes);
		refuse(fd, 403, a.reason);
		goto out;
	}
	struct sockaddr_storage addrs[MAX_ADDRS];
	int na = resolve(e, a.host, addrs), pick = -1;
	const char *why = NULL;
	for (int i = 0; i < na && pick < 0; i++) {
		const char *r = sessnet_addr_refused((struct sockaddr *)&addrs[i]);
		for (size_t k = 0; r && k < e->nallowed; k++)
			if (same_addr(&addrs[i], &e->allowed[k]))
				r = NULL;
		if (!r)
			pick = i;
		else if (!why) {
			why = r;
			addr_text(&addrs[i], a.addr, sizeof a.addr);
		}
	}
	if (na == 0) {
		snprintf(a.reason, sizeof a.reason, "cannot resolve %s", a.host);
		refuse(fd, 502, a.reason);
		goto out;
	}
	if (pick < 0) {
		snprintf(a.reason, sizeof a.reason, "%s resolves to a %s address (%s)", a.host, why,
			 a.addr);
		refuse(fd, 403, a.reason);
		goto out;
	}
	/* the address checked is the address connected to: no second lookup */
	addr_text(&addrs[pick], a.addr, sizeof a.addr);
	if ((ufd = dial(&addrs[pick], a.port)) < 0) {
		snprintf(a.reason, sizeof a.reason, "cannot connect to %s port %d", a.addr, a.port);
		refuse(fd, 502, a.reason);
		goto out;
	}
	a.allowed = true;
	if (tunnel) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		if (nsproxy_send_all(fd, ok, sizeof ok - 1, HEAD_TIMEOUT_MS) < 0)
			goto out;
		strbuf_add(&up, hend, extra); /* what the client sent after its head */
		if (!first_flight(e, fd, ufd, &a, &up)) {
			a.allowed = false; /* cut before a byte went upstream */
			goto out;
		}
	} else {
		origin_head(a.method, path, version, eol + 1, hend, &a, &up);
		strbuf_add(&up, hend, extra);
	}
	if (up.len && (!spend(e, (long long)up.len) ||
		       nsproxy_send_all(ufd, up.buf, up.len, IDLE_TIMEOUT_MS) < 0)) {
		snprintf(a.reason, sizeof a.reason, "the request could not be sent upstream");
		goto out;
	}
	a.out = (long long)up.len;
	relay(e, fd, ufd, &a);
out:
	tell(e, &a);
out_quiet:
	if (ufd >= 0)
		close(ufd);
	strbuf_release(&up);
}

/* ---- life cycle ---- */

int sessegress_start(const struct sessegress_options *o, struct sessegress **out, char *err,
		     size_t errlen)
{
	*out = NULL;
	struct sessegress *e = xcalloc(1, sizeof *e);
	e->o = *o;
	e->o.hosts = e->o.addr_allow = NULL; /* parsed: the strings are not kept */
	if (parse_options(o->hosts, o->addr_allow, e, err, errlen) < 0 ||
	    nsproxy_start("egress network", MAX_CONNS, handle, e, &e->np, err, errlen) < 0) {
		sessegress_stop(e);
		return -1;
	}
	*out = e;
	return 0;
}

int sessegress_netns_fd(const struct sessegress *e)
{
	return nsproxy_netns_fd(e->np);
}

int sessegress_port(const struct sessegress *e)
{
	return nsproxy_port(e->np);
}

void sessegress_stop(struct sessegress *e)
{
	if (!e)
		return;
	nsproxy_stop(e->np);
	free(e);
}
