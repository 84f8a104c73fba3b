/* nsproxy: a listener that a sandbox reaches and nothing else: a network
 * namespace with only loopback up, in which the host listens on
 * 127.0.0.1:<port>, and the threads that serve its connections. The package
 * installs' registry proxy (runner/install/regproxy.h) and the sessions'
 * egress proxy (judge/service/session/sessegress.h) are both built on it.
 *
 * How it works. A helper thread unshares a new network namespace (that call
 * changes only the calling thread), brings lo up, binds and listens there and
 * keeps an fd of the namespace; the thread then ends and the namespace lives
 * on in those fds. A sandbox joins that namespace (run_spec's net_ns_fd),
 * where the only thing it can reach is the listener. The serving threads stay
 * in the host's namespace: the listening socket works from any thread, and
 * what they connect to upstream is reached through the host's network.
 */
#pragma once
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* Serves one accepted connection fd (blocking is fine: each connection has a
 * thread of its own); nsproxy closes fd after it returns. */
typedef void (*nsproxy_handler)(void *arg, int fd);

struct nsproxy;

/* Makes the namespace and the listener and starts serving: handler(arg, fd)
 * for each connection, at most max_conns at once (more wait to be
 * accepted). what names it in errors ("install network"). Returns 0 with
 * *out (stop it with nsproxy_stop), or -1 with err. */
int nsproxy_start(const char *what, int max_conns, nsproxy_handler handler, void *arg,
		  struct nsproxy **out, char *err, size_t errlen);
/* The fd of the namespace, for run_spec.net_ns_fd (owned by np). */
int nsproxy_netns_fd(const struct nsproxy *np);
/* The port np listens on at 127.0.0.1 inside the namespace. */
int nsproxy_port(const struct nsproxy *np);
/* Set once nsproxy_stop began: long transfers check it (regcache's stop). */
atomic_bool *nsproxy_stop_flag(struct nsproxy *np);
/* Stops serving: shuts every connection's socket down, waits for their
 * handlers to return, frees np (NULL is fine). */
void nsproxy_stop(struct nsproxy *np);

/* Writes all of buf to fd, waiting at most timeout_ms for each piece. 0 or -1. */
int nsproxy_send_all(int fd, const char *buf, size_t len, int timeout_ms);
/* Reads a request head from fd: up to its blank line, at most len - 1 bytes,
 * waiting at most timeout_ms for each piece; buf ends in a NUL. Returns the
 * bytes read (the head and maybe more after it, which the caller finds after
 * the blank line), or -1 (no whole head: the client went, was too slow, or
 * sent more than len - 1 bytes of head). */
long nsproxy_read_head(int fd, char *buf, size_t len, int timeout_ms);
