/* regproxy: the registry proxy of one package install — a network namespace with
 * only loopback up, in which the host listens on 127.0.0.1:<port> and forwards
 * to the configured registries, through the host-side cache (regcache.h).
 *
 * The namespace, its listener and the threads of its connections are
 * runner/nsproxy.h's: the install's sandbox joins that namespace (run_spec's
 * net_ns_fd), where the only thing it can reach is the listener; upstream
 * fetches (libcurl) use the host's network.
 *
 * Routes (anything else is 403):
 *   /pip/<rest>       -> pip_index_url + rest
 *   /pip-host/<path>  -> the index's own origin + "/" + path (files it links)
 *   /pip-files/<path> -> https://files.pythonhosted.org/<path>, only when the
 *                        index is on pypi.org
 *   /npm/<rest>       -> npm_registry + rest
 * Absolute links in PEP 503 pages and npm tarball URLs that point at the
 * upstream are rewritten to go through the proxy. Files (wheels, sdists,
 * tarballs, .metadata) are cached forever and reach the client while they are
 * fetched; pages and package documents are cached for meta_ttl_s, and a stale
 * copy is served when the upstream cannot answer.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"

struct regproxy_options {
	const char *pip_index_url; /* may be NULL: /pip/ is refused */
	const char *npm_registry;  /* may be NULL: /npm/ is refused */
	const char *cache_dir;	   /* host folder of the cache (made as needed) */
	long meta_ttl_s;	   /* freshness of pages and package documents; 0 = 300 */
};

struct regproxy_stats {
	long requests; /* requests answered */
	long hits;     /* answered from the cache */
	long fetches;  /* upstream transfers started */
	long refused;  /* 403: a route that is not allowed */
};

struct regproxy;

/* Makes the namespace, the listener and the serving thread. Returns 0 with *out
 * (stop it with regproxy_stop), or -1 with err. */
int regproxy_start(const struct regproxy_options *o, struct regproxy **out, char *err,
		   size_t errlen);
/* The fd of the namespace, for run_spec.net_ns_fd (owned by the proxy). */
int regproxy_netns_fd(const struct regproxy *rp);
/* The port the proxy listens on at 127.0.0.1 inside the namespace. */
int regproxy_port(const struct regproxy *rp);
void regproxy_stats(struct regproxy *rp, struct regproxy_stats *out);
/* Stops serving, ends every connection and transfer, frees rp (NULL is fine). */
void regproxy_stop(struct regproxy *rp);
/* Appends to out the PEP 503 page html (len bytes, fetched from page_url of the
 * index pip_index_url) with every href that points at the index, its host or
 * (for pypi.org) files.pythonhosted.org made a URL of the proxy on
 * 127.0.0.1:port; relative links are resolved first, other links stay as they
 * are. Pure: what the proxy does to every page it serves. */
void regproxy_rewrite_pip_page(const char *pip_index_url, int port, const char *page_url,
			       const char *html, size_t len, struct strbuf *out);
