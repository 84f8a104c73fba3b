/* sessegress: a session's egress proxy, the one thing its sandbox reaches
 * (docs/egress.md). A listener in a network namespace of its own
 * (runner/nsproxy.h, as the installs' registry proxy); the session's sandbox
 * joins that namespace, so a program that ignores the proxy variables reaches
 * nothing.
 *
 * It speaks HTTP: CONNECT host:port (a tunnel, for https) and plain HTTP
 * requests with an absolute URI (GET http://host/path, any method), one
 * request per connection (it answers with Connection: close). For each, in
 * order: the session's byte and connection caps; the policy
 * (sessnet_allows() on the host and port); the name resolved here, on the
 * host (the hosts map first, then the system's resolver); every address
 * judged by sessnet_addr_refused() unless the operator lists it; a connection
 * to the first address that passed, the same address that was checked (no
 * second lookup: no DNS rebinding). A refusal is an HTTP error whose status
 * line says why ("403 egress refused: ..."), which is what a client shows.
 * Each attempt, allowed or refused, is told to on_attempt.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "judge/service/session/sessnet.h"

/* One egress attempt, as on_attempt is told it. */
struct sessegress_attempt {
	const char *method; /* "CONNECT", "GET", ... */
	const char *host;   /* as the client named it, lower case */
	int port;
	bool allowed;	     /* a connection to the upstream was made */
	const char *reason;  /* why it was refused, or how an allowed one ended; never NULL */
	const char *addr;    /* the address connected to (or refused), "" when none */
	long long bytes_out; /* bytes sent upstream */
	long long bytes_in;  /* bytes received from upstream */
};

struct sessegress_options {
	struct sessnet_policy policy; /* none is allowed here and refuses everything */
	/* "name=address, ..." (judge.ini [sessions] egress_hosts): names the
	 * proxy resolves to these addresses without asking the system's
	 * resolver; may be NULL. */
	const char *hosts;
	/* "address, ..." (egress_addr_allow): addresses let through although
	 * sessnet_addr_refused() judges them (an operator's own service); may be
	 * NULL. */
	const char *addr_allow;
	long long max_bytes; /* bytes in both directions, over the session's life; 0: no cap */
	long max_conns;	     /* connections over the session's life; 0: no cap */
	/* Called once per attempt, from the connection's thread (may block
	 * briefly: it writes the attempt to the database); may be NULL. */
	void (*on_attempt)(void *arg, const struct sessegress_attempt *a);
	void *arg;
};

/* Parses the hosts map and the operator's addresses alone (judge.ini's
 * check at start). 0, or -1 with err naming the bad entry. */
int sessegress_check_options(const char *hosts, const char *addr_allow, char *err, size_t errlen);

struct sessegress;

/* Starts a session's proxy. 0 with *out, or -1 with err. */
int sessegress_start(const struct sessegress_options *o, struct sessegress **out, char *err,
		     size_t errlen);
/* The namespace's fd, for session_spec.net_ns_fd (owned by the proxy). */
int sessegress_netns_fd(const struct sessegress *e);
/* Its port on 127.0.0.1 inside the namespace. */
int sessegress_port(const struct sessegress *e);
/* Ends every connection and frees e (NULL is fine). */
void sessegress_stop(struct sessegress *e);
