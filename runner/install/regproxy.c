/* regproxy: the registry proxy of a package install (see regproxy.h). */
#define _GNU_SOURCE
#include "runner/install/regproxy.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "runner/install/regcache.h"
#include "runner/nsproxy.h"

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
	struct nsproxy *np; /* the namespace, its listener and connections */
	int port;
	atomic_long requests, hits, fetches, refused;
};

enum kind { K_PIP_PAGE, K_PIP_FILE, K_NPM_DOC, K_NPM_FILE };

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
	nsproxy_send_all(fd, h, (size_t)n, WRITE_TIMEOUT);
}

static void send_error(int fd, int status, const char *msg)
{
	send_head(fd, status, "text/plain", (long long)strlen(msg) + 1);
	nsproxy_send_all(fd, msg, strlen(msg), WRITE_TIMEOUT);
	nsproxy_send_all(fd, "\n", 1, WRITE_TIMEOUT);
}

/* Sends a cached file's body as it is. */
static void send_file(int fd, struct regcache_entry *e)
{
	char buf[65536];
	send_head(fd, 200, e->ctype, (long long)e->size);
	for (off_t left = e->size; left > 0;) {
		ssize_t n = read(e->fd, buf, left < (off_t)sizeof buf ? (size_t)left : sizeof buf);
		if (n <= 0 || nsproxy_send_all(fd, buf, (size_t)n, WRITE_TIMEOUT) < 0)
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
	nsproxy_send_all(fd, out.buf, out.len, WRITE_TIMEOUT);
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
		return nsproxy_send_all(fd, h, (size_t)n, WRITE_TIMEOUT) == 0;
	}
	return nsproxy_send_all(fd, data, len, WRITE_TIMEOUT) == 0;
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
	    .stop = nsproxy_stop_flag(rp->np),
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

static void handle(struct regproxy *rp, int fd)
{
	char head[HEAD_MAX], url[4096];
	enum kind k;
	if (nsproxy_read_head(fd, head, sizeof head, READ_TIMEOUT) < 0)
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

/* nsproxy's handler: one request of a connection. */
static void handle_conn(void *arg, int fd)
{
	handle(arg, fd);
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
	rp->cache_dir = xstrdup(o->cache_dir);
	rp->ttl_s = o->meta_ttl_s > 0 ? o->meta_ttl_s : 300;
	if (set_upstreams(rp, o, err, errlen) < 0 ||
	    nsproxy_start("install network", MAX_CONNS, handle_conn, rp, &rp->np, err, errlen) < 0)
		goto fail;
	rp->port = nsproxy_port(rp->np);
	*out = rp;
	return 0;
fail:
	regproxy_stop(rp);
	return -1;
}

int regproxy_netns_fd(const struct regproxy *rp)
{
	return nsproxy_netns_fd(rp->np);
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
	/* every connection ends, its transfer aborts (regcache checks the stop flag) */
	nsproxy_stop(rp->np);
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
