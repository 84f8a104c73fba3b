/* regproxy: the registry proxy of a package install (see regproxy.h). */
#define _GNU_SOURCE
#include "runner/install/regproxy.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "runner/install/regcache.h"

#define MAX_CONNS     32
#define HEAD_MAX      16384
#define READ_TIMEOUT  30000 /* ms for a client to send its request head */
#define WRITE_TIMEOUT 60000 /* ms for a client to take a piece of the answer */
#define MAX_BODY      (1LL << 30)
#define META_MAX      (64LL << 20) /* pages and package documents are rewritten in memory */
#define PYPI_FILES    "https://files.pythonhosted.org/"

#define NPM_ACCEPT "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*"

struct regproxy {
	char *pip_base;	  /* pip_index_url ending in '/' */
	char *pip_origin; /* scheme://host[:port] of the index */
	bool pypi;	  /* the index is on pypi.org: /pip-files/ is allowed */
	char *npm_base;	  /* npm_registry ending in '/' */
	char *cache_dir;
	long ttl_s;
	int listen_fd, netns_fd, port;
	int wake[2];
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	int active;		 /* connection threads alive */
	int conn_fds[MAX_CONNS]; /* their sockets (-1 free), shut down at stop */
	atomic_long requests, hits, fetches, refused;
};

enum kind { K_PIP_PAGE, K_PIP_FILE, K_NPM_DOC, K_NPM_FILE };

/* ---- the namespace ---- */

struct ns_job {
	int listen_fd, netns_fd, port, err;
	const char *what;
};

/* In a thread of its own: a new network namespace with lo up and a listener on
 * 127.0.0.1 in it; the thread ends, its namespace stays in the fds. */
static void *ns_main(void *arg)
{
	struct ns_job *j = arg;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	struct ifreq ifr = {0};
	int s = -1;
	j->what = "unshare(CLONE_NEWNET)";
	if (unshare(CLONE_NEWNET) < 0)
		goto fail;
	j->what = "bringing lo up";
	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		goto fail;
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		goto fail;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		goto fail;
	close(s);
	j->what = "listening on 127.0.0.1";
	j->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (j->listen_fd < 0 || bind(j->listen_fd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    listen(j->listen_fd, 64) < 0 ||
	    getsockname(j->listen_fd, (struct sockaddr *)&a, &al) < 0)
		goto fail;
	j->port = ntohs(a.sin_port);
	j->what = "opening the namespace";
	j->netns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (j->netns_fd < 0)
		goto fail;
	return NULL;
fail:
	j->err = errno;
	if (s >= 0)
		close(s);
	return NULL;
}

/* ---- routes ---- */

/* True for a request path piece that stays under its base: printable ASCII,
 * no "..", no encoded dot or slash, no backslash. */
static bool rest_ok(const char *r)
{
	for (const char *s = r; *s; s++)
		if (*s <= ' ' || *s >= 127 || *s == '\\')
			return false;
	if (strstr(r, "..") || strcasestr(r, "%2e") || strcasestr(r, "%2f") == r ||
	    strcasestr(r, "%5c") || r[0] == '/')
		return false;
	return true;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && !strncasecmp(s + n - k, suffix, k);
}

/* Files that never change at their URL: distributions and their metadata. */
static bool immutable_file(const char *path)
{
	size_t n = strcspn(path, "?#");
	static const char *const ext[] = {".whl",     ".tar.gz", ".zip", ".tgz",
					  ".tar.bz2", ".tar.xz", ".egg", ".metadata"};
	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
		if (ends_with(path, n, ext[i]))
			return true;
	return false;
}

/* Maps a request target to its upstream URL and kind. 0, or the HTTP status. */
static int route(struct regproxy *rp, const char *target, char *url, size_t len, enum kind *k)
{
	const char *base = NULL, *rest = NULL;
	bool pip = true;
	if (!strncmp(target, "/pip/", 5) && rp->pip_base) {
		base = rp->pip_base, rest = target + 5;
	} else if (!strncmp(target, "/pip-host/", 10) && rp->pip_origin) {
		base = rp->pip_origin, rest = target + 10;
	} else if (!strncmp(target, "/pip-files/", 11) && rp->pypi) {
		base = PYPI_FILES, rest = target + 11;
	} else if (!strncmp(target, "/npm/", 5) && rp->npm_base) {
		base = rp->npm_base, rest = target + 5, pip = false;
	}
	if (!base || !rest_ok(rest))
		return 403;
	/* the fragment (#sha256=...) is the client's, never sent upstream */
	int n = snprintf(url, len, "%s%s%.*s", base, base == rp->pip_origin ? "/" : "",
			 (int)strcspn(rest, "#"), rest);
	if (n >= (int)len)
		return 414;
	bool file = immutable_file(rest);
	*k = pip ? (file ? K_PIP_FILE : K_PIP_PAGE) : (file ? K_NPM_FILE : K_NPM_DOC);
	return 0;
}

/* ---- rewriting links to go through the proxy ---- */

/* The proxy URL of an absolute upstream URL, or NULL when it is not one of ours. */
static char *proxy_url(struct regproxy *rp, const char *abs)
{
	size_t n;
	if (!strncmp(abs, rp->pip_base, n = strlen(rp->pip_base)))
		return xasprintf("http://127.0.0.1:%d/pip/%s", rp->port, abs + n);
	if (!strncmp(abs, rp->pip_origin, n = strlen(rp->pip_origin)) && abs[n] == '/')
		return xasprintf("http://127.0.0.1:%d/pip-host/%s", rp->port, abs + n + 1);
	if (rp->pypi && !strncmp(abs, PYPI_FILES, n = strlen(PYPI_FILES)))
		return xasprintf("http://127.0.0.1:%d/pip-files/%s", rp->port, abs + n);
	return NULL;
}

/* Resolves href against the page's URL (curl's URL parser) and maps it. */
static char *map_href(struct regproxy *rp, const char *page, const char *href)
{
	CURLU *u = curl_url();
	char *abs = NULL, *out = NULL;
	if (!u)
		xalloc_die(0);
	if (curl_url_set(u, CURLUPART_URL, page, 0) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_URL, href, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_URL, &abs, 0) == CURLUE_OK)
		out = proxy_url(rp, abs);
	curl_free(abs);
	curl_url_cleanup(u);
	return out;
}

/* Rewrites every href="..." (or '...') of a PEP 503 page fetched from page. */
static void rewrite_pip_page(struct regproxy *rp, const char *page, const struct strbuf *in,
			     struct strbuf *out)
{
	const char *s = in->buf, *end = in->buf + in->len;
	while (s < end) {
		const char *h = strcasestr(s, "href=");
		if (!h || h + 6 > end || (h[5] != '"' && h[5] != '\'')) {
			size_t skip = h ? (size_t)(h + 5 - s) : (size_t)(end - s);
			strbuf_add(out, s, skip < (size_t)(end - s) ? skip : (size_t)(end - s));
			s += skip;
			continue;
		}
		const char *v = h + 6, *q = memchr(v, h[5], (size_t)(end - v));
		if (!q)
			q = end;
		strbuf_add(out, s, (size_t)(v - s));
		char *href = xstrndup(v, (size_t)(q - v));
		char *mapped = map_href(rp, page, href);
		strbuf_addstr(out, mapped ? mapped : href);
		free(mapped);
		free(href);
		s = q;
	}
}

/* npm package documents name their tarballs by the registry's URL: the proxy's. */
static void rewrite_npm_doc(struct regproxy *rp, const struct strbuf *in, struct strbuf *out)
{
	char mine[64];
	snprintf(mine, sizeof mine, "http://127.0.0.1:%d/npm/", rp->port);
	size_t bl = strlen(rp->npm_base);
	const char *s = in->buf, *end = in->buf + in->len;
	for (const char *m; s < end && (m = memmem(s, (size_t)(end - s), rp->npm_base, bl));
	     s = m + bl) {
		strbuf_add(out, s, (size_t)(m - s));
		strbuf_addstr(out, mine);
	}
	strbuf_add(out, s, (size_t)(end - s));
}

/* ---- answering ---- */

/* Writes all of buf to the client, waiting at most WRITE_TIMEOUT per piece. */
static int send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		if (poll(&p, 1, WRITE_TIMEOUT) <= 0)
			return -1;
		ssize_t w = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

static void send_head(int fd, int status, const char *ctype, long long len)
{
	char h[512];
	const char *reason = status == 200   ? "OK"
			     : status == 400 ? "Bad Request"
			     : status == 403 ? "Forbidden"
			     : status == 404 ? "Not Found"
			     : status == 405 ? "Method Not Allowed"
			     : status == 414 ? "URI Too Long"
					     : "Bad Gateway";
	int n =
	    snprintf(h, sizeof h,
		     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %lld\r\n"
		     "Connection: close\r\n\r\n",
		     status, reason, ctype && ctype[0] ? ctype : "application/octet-stream", len);
	send_all(fd, h, (size_t)n);
}

static void send_error(int fd, int status, const char *msg)
{
	send_head(fd, status, "text/plain", (long long)strlen(msg) + 1);
	send_all(fd, msg, strlen(msg));
	send_all(fd, "\n", 1);
}

/* Sends a cached file's body as it is. */
static void send_file(int fd, struct regcache_entry *e)
{
	char buf[65536];
	send_head(fd, 200, e->ctype, (long long)e->size);
	for (off_t left = e->size; left > 0;) {
		ssize_t n = read(e->fd, buf, left < (off_t)sizeof buf ? (size_t)left : sizeof buf);
		if (n <= 0 || send_all(fd, buf, (size_t)n) < 0)
			return;
		left -= n;
	}
}

/* Sends a page or a package document with its links through the proxy. */
static void send_meta(struct regproxy *rp, int fd, const char *url, enum kind k,
		      struct regcache_entry *e)
{
	struct strbuf in, out;
	strbuf_init(&in);
	strbuf_init(&out);
	if (e->size > META_MAX) {
		send_error(fd, 502, "upstream document too large");
		goto out;
	}
	strbuf_grow(&in, (size_t)e->size);
	for (off_t left = e->size; left > 0;) {
		ssize_t n = read(e->fd, in.buf + in.len, (size_t)left);
		if (n <= 0) {
			send_error(fd, 502, "cannot read the cache");
			goto out;
		}
		in.len += (size_t)n;
		left -= n;
	}
	in.buf[in.len] = 0;
	if (k == K_PIP_PAGE)
		rewrite_pip_page(rp, url, &in, &out);
	else
		rewrite_npm_doc(rp, &in, &out);
	send_head(fd, 200, e->ctype, (long long)out.len);
	send_all(fd, out.buf, out.len);
out:
	strbuf_release(&in);
	strbuf_release(&out);
}

static void send_entry(struct regproxy *rp, int fd, const char *url, enum kind k,
		       struct regcache_entry *e)
{
	if (k == K_PIP_FILE || k == K_NPM_FILE)
		send_file(fd, e);
	else
		send_meta(rp, fd, url, k, e);
}

/* A file going to the client while it is fetched (regcache_fetch's on_body). */
static bool stream_body(void *arg, const char *ctype, long long length, const char *data,
			size_t len)
{
	int fd = *(int *)arg;
	char h[512];
	if (!data) {
		/* without a length the body ends with the connection; pip checks the
		 * file's sha256, npm its integrity */
		int n = snprintf(h, sizeof h, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\n",
				 ctype[0] ? ctype : "application/octet-stream");
		if (length >= 0)
			n += snprintf(h + n, sizeof h - (size_t)n, "Content-Length: %lld\r\n",
				      length);
		n += snprintf(h + n, sizeof h - (size_t)n, "Connection: close\r\n\r\n");
		return send_all(fd, h, (size_t)n) == 0;
	}
	return send_all(fd, data, len) == 0;
}

/* Answers one GET of url: from the cache when fresh, else from the upstream
 * (a file is streamed to the client as it is cached; a page is stored first),
 * else a stale copy, else an error. */
static void serve(struct regproxy *rp, int fd, const char *url, enum kind k)
{
	struct regcache_entry e = {.fd = -1};
	char err[512];
	bool file = k == K_PIP_FILE || k == K_NPM_FILE;
	int have = regcache_open(rp->cache_dir, url, &e);
	/* a file's age needs the realtime clock: mtimes are in it */
	if (have == 1 && (file || time(NULL) - e.mtime < rp->ttl_s)) {
		atomic_fetch_add(&rp->hits, 1);
		send_entry(rp, fd, url, k, &e);
		goto out;
	}
	atomic_fetch_add(&rp->fetches, 1);
	struct regcache_fetch f = {
	    .url = url,
	    .accept = k == K_PIP_PAGE  ? "text/html"
		      : k == K_NPM_DOC ? NPM_ACCEPT
				       : NULL,
	    .max_bytes = file ? MAX_BODY : META_MAX,
	    .stop = &rp->stop,
	    .on_body = file && have != 1 ? stream_body : NULL,
	    .arg = &fd,
	};
	int rc = regcache_fetch(rp->cache_dir, &f, err, sizeof err);
	if (f.streamed) {
		if (rc < 0) /* the client sees a short body and fails */
			log_info("install proxy: '%s': %s", url, err);
		goto out;
	}
	if (rc == 1) {
		regcache_entry_close(&e);
		have = regcache_open(rp->cache_dir, url, &e);
	}
	if (have == 1 && (rc == 1 || rc < 0 || f.status >= 500)) {
		if (rc != 1)
			log_info("install proxy: '%s' served stale: upstream %s", url,
				 rc < 0 ? err : "failed");
		send_entry(rp, fd, url, k, &e);
	} else if (rc == 0 && f.status == 404) {
		send_error(fd, 404, "not found upstream");
	} else {
		log_info("install proxy: '%s': %s", url, rc < 0 ? err : "upstream error");
		send_error(fd, 502, rc < 0 ? err : "upstream error");
	}
out:
	regcache_entry_close(&e);
}

/* Reads the request head (to the blank line), at most HEAD_MAX bytes. */
static int read_head(int fd, char *buf, size_t len)
{
	size_t used = 0;
	while (used + 1 < len) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, READ_TIMEOUT) <= 0)
			return -1;
		ssize_t n = recv(fd, buf + used, len - 1 - used, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -1;
		used += (size_t)n;
		buf[used] = 0;
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			return 0;
	}
	return -1;
}

static void handle(struct regproxy *rp, int fd)
{
	char head[HEAD_MAX], url[4096];
	enum kind k;
	if (read_head(fd, head, sizeof head) < 0)
		return;
	char *sp1 = strchr(head, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2)
		return send_error(fd, 400, "bad request");
	*sp1 = *sp2 = 0;
	atomic_fetch_add(&rp->requests, 1);
	if (strcmp(head, "GET"))
		return send_error(fd, 405, "only GET");
	int st = route(rp, sp1 + 1, url, sizeof url, &k);
	if (st) {
		atomic_fetch_add(&rp->refused, 1);
		log_debug("install proxy: refused '%.200s'", sp1 + 1);
		return send_error(fd, st, "refused by the install proxy");
	}
	serve(rp, fd, url, k);
}

struct conn {
	struct regproxy *rp;
	int fd, slot;
};

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	struct regproxy *rp = c->rp;
	handle(rp, c->fd);
	pthread_mutex_lock(&rp->lock);
	rp->conn_fds[c->slot] = -1;
	close(c->fd);
	rp->active--;
	pthread_cond_broadcast(&rp->idle);
	pthread_mutex_unlock(&rp->lock);
	free(c);
	return NULL;
}

/* Starts a thread for a new connection (waits while MAX_CONNS are busy). */
static void start_conn(struct regproxy *rp, int fd)
{
	pthread_mutex_lock(&rp->lock);
	while (rp->active >= MAX_CONNS && !atomic_load(&rp->stop))
		pthread_cond_wait(&rp->idle, &rp->lock);
	int slot = 0;
	while (slot < MAX_CONNS && rp->conn_fds[slot] >= 0)
		slot++;
	if (atomic_load(&rp->stop) || slot == MAX_CONNS) {
		pthread_mutex_unlock(&rp->lock);
		close(fd);
		return;
	}
	struct conn *c = xcalloc(1, sizeof *c);
	*c = (struct conn){.rp = rp, .fd = fd, .slot = slot};
	pthread_t t;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, conn_main, c) == 0) {
		rp->conn_fds[slot] = fd;
		rp->active++;
	} else {
		close(fd);
		free(c);
	}
	pthread_attr_destroy(&attr);
	pthread_mutex_unlock(&rp->lock);
}

static void *accept_main(void *arg)
{
	struct regproxy *rp = arg;
	while (!atomic_load(&rp->stop)) {
		struct pollfd p[2] = {{.fd = rp->listen_fd, .events = POLLIN},
				      {.fd = rp->wake[0], .events = POLLIN}};
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		int fd = accept4(rp->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			start_conn(rp, fd);
	}
	return NULL;
}

/* ---- life cycle ---- */

/* base with a '/' at its end (malloc'd), or NULL for NULL or "". */
static char *with_slash(const char *base)
{
	if (!base || !base[0])
		return NULL;
	size_t n = strlen(base);
	return base[n - 1] == '/' ? xstrdup(base) : xasprintf("%s/", base);
}

/* Fills the upstream fields of rp from o. 0, or -1 with err. */
static int set_upstreams(struct regproxy *rp, const struct regproxy_options *o, char *err,
			 size_t errlen)
{
	rp->pip_base = with_slash(o->pip_index_url);
	rp->npm_base = with_slash(o->npm_registry);
	const char *const bases[] = {rp->pip_base, rp->npm_base};
	for (int i = 0; i < 2; i++) {
		if (bases[i] && strncmp(bases[i], "http://", 7) &&
		    strncmp(bases[i], "https://", 8)) {
			snprintf(err, errlen, "registry '%s' is not an http(s) URL", bases[i]);
			return -1;
		}
	}
	if (rp->pip_base) {
		const char *host = strstr(rp->pip_base, "://") + 3;
		size_t hl = strcspn(host, "/");
		rp->pip_origin = xstrndup(rp->pip_base, (size_t)(host - rp->pip_base) + hl);
		rp->pypi = hl == 8 && !strncmp(host, "pypi.org", 8);
	}
	return 0;
}

int regproxy_start(const struct regproxy_options *o, struct regproxy **out, char *err,
		   size_t errlen)
{
	*out = NULL;
	if (!o->cache_dir || o->cache_dir[0] != '/') {
		snprintf(err, errlen, "the install cache folder must be an absolute path");
		return -1;
	}
	struct regproxy *rp = xcalloc(1, sizeof *rp);
	rp->listen_fd = rp->netns_fd = rp->wake[0] = rp->wake[1] = -1;
	pthread_mutex_init(&rp->lock, NULL);
	pthread_cond_init(&rp->idle, NULL);
	for (int i = 0; i < MAX_CONNS; i++)
		rp->conn_fds[i] = -1;
	rp->cache_dir = xstrdup(o->cache_dir);
	rp->ttl_s = o->meta_ttl_s > 0 ? o->meta_ttl_s : 300;
	if (set_upstreams(rp, o, err, errlen) < 0)
		goto fail;
	struct ns_job j = {.listen_fd = -1, .netns_fd = -1};
	pthread_t t;
	if ((errno = pthread_create(&t, NULL, ns_main, &j)) != 0) {
		snprintf(err, errlen, "cannot start a thread: %s", strerror(errno));
		goto fail;
	}
	pthread_join(t, NULL);
	rp->listen_fd = j.listen_fd;
	rp->netns_fd = j.netns_fd;
	rp->port = j.port;
	if (j.err) {
		snprintf(err, errlen, "install network: %s: %s", j.what, strerror(j.err));
		goto fail;
	}
	if (pipe2(rp->wake, O_CLOEXEC) < 0 ||
	    (errno = pthread_create(&rp->thread, NULL, accept_main, rp)) != 0) {
		snprintf(err, errlen, "cannot start the install proxy: %s", strerror(errno));
		goto fail;
	}
	rp->thread_started = true;
	*out = rp;
	return 0;
fail:
	regproxy_stop(rp);
	return -1;
}

int regproxy_netns_fd(const struct regproxy *rp)
{
	return rp->netns_fd;
}

int regproxy_port(const struct regproxy *rp)
{
	return rp->port;
}

void regproxy_stats(struct regproxy *rp, struct regproxy_stats *out)
{
	out->requests = atomic_load(&rp->requests);
	out->hits = atomic_load(&rp->hits);
	out->fetches = atomic_load(&rp->fetches);
	out->refused = atomic_load(&rp->refused);
}

void regproxy_stop(struct regproxy *rp)
{
	if (!rp)
		return;
	atomic_store(&rp->stop, true);
	/* wake every connection thread (its socket ends, its transfer aborts) and
	 * the accept thread, which may wait for a free connection slot */
	pthread_mutex_lock(&rp->lock);
	for (int i = 0; i < MAX_CONNS; i++)
		if (rp->conn_fds[i] >= 0)
			shutdown(rp->conn_fds[i], SHUT_RDWR);
	pthread_cond_broadcast(&rp->idle);
	pthread_mutex_unlock(&rp->lock);
	if (rp->thread_started) {
		ssize_t w = write(rp->wake[1], "x", 1);
		(void)w;
		pthread_join(rp->thread, NULL);
	}
	pthread_mutex_lock(&rp->lock);
	while (rp->active > 0)
		pthread_cond_wait(&rp->idle, &rp->lock);
	pthread_mutex_unlock(&rp->lock);
	int *const fds[] = {&rp->listen_fd, &rp->netns_fd, &rp->wake[0], &rp->wake[1]};
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	pthread_mutex_destroy(&rp->lock);
	pthread_cond_destroy(&rp->idle);
	free(rp->pip_base);
	free(rp->pip_origin);
	free(rp->npm_base);
	free(rp->cache_dir);
	free(rp);
}

void regproxy_rewrite_pip_page(const char *pip_index_url, int port, const char *page_url,
			       const char *html, size_t len, struct strbuf *out)
{
	struct regproxy rp = {.port = port};
	struct regproxy_options o = {.pip_index_url = pip_index_url};
	struct strbuf in; /* a copy that ends in NUL: the scan uses string calls */
	char err[256];
	strbuf_init(&in);
	strbuf_add(&in, html, len);
	if (set_upstreams(&rp, &o, err, sizeof err) == 0 && rp.pip_base)
		rewrite_pip_page(&rp, page_url, &in, out);
	else
		strbuf_add(out, html, len);
	strbuf_release(&in);
	free(rp.pip_base);
	free(rp.pip_origin);
	free(rp.npm_base);
}
