/* nsproxy: a listener in a network namespace of its own (see nsproxy.h). */
#define _GNU_SOURCE
#include "runner/nsproxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/xalloc.h"

struct nsproxy {
	nsproxy_handler handler;
	void *arg;
	int max_conns;
	int listen_fd, netns_fd, port;
	int wake[2];
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	int active;    /* connection threads alive */
	int *conn_fds; /* their sockets (-1 free), shut down at stop */
};

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
	s = -1;
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

/* ---- connections ---- */

struct conn {
	struct nsproxy *np;
	int fd, slot;
};

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	struct nsproxy *np = c->np;
	np->handler(np->arg, c->fd);
	pthread_mutex_lock(&np->lock);
	np->conn_fds[c->slot] = -1;
	close(c->fd);
	np->active--;
	pthread_cond_broadcast(&np->idle);
	pthread_mutex_unlock(&np->lock);
	free(c);
	return NULL;
}

/* Starts a thread for a new connection (waits while max_conns are busy). */
static void start_conn(struct nsproxy *np, int fd)
{
	pthread_mutex_lock(&np->lock);
	while (np->active >= np->max_conns && !atomic_load(&np->stop))
		pthread_cond_wait(&np->idle, &np->lock);
	int slot = 0;
	while (slot < np->max_conns && np->conn_fds[slot] >= 0)
		slot++;
	if (atomic_load(&np->stop) || slot == np->max_conns) {
		pthread_mutex_unlock(&np->lock);
		close(fd);
		return;
	}
	struct conn *c = xcalloc(1, sizeof *c);
	*c = (struct conn){.np = np, .fd = fd, .slot = slot};
	pthread_t t;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, conn_main, c) == 0) {
		np->conn_fds[slot] = fd;
		np->active++;
	} else {
		close(fd);
		free(c);
	}
	pthread_attr_destroy(&attr);
	pthread_mutex_unlock(&np->lock);
}

static void *accept_main(void *arg)
{
	struct nsproxy *np = arg;
	while (!atomic_load(&np->stop)) {
		struct pollfd p[2] = {{.fd = np->listen_fd, .events = POLLIN},
				      {.fd = np->wake[0], .events = POLLIN}};
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		int fd = accept4(np->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			start_conn(np, fd);
	}
	return NULL;
}

/* ---- life cycle ---- */

int nsproxy_start(const char *what, int max_conns, nsproxy_handler handler, void *arg,
		  struct nsproxy **out, char *err, size_t errlen)
{
	*out = NULL;
	struct nsproxy *np = xcalloc(1, sizeof *np);
	np->handler = handler;
	np->arg = arg;
	np->max_conns = max_conns > 0 ? max_conns : 1;
	np->listen_fd = np->netns_fd = np->wake[0] = np->wake[1] = -1;
	pthread_mutex_init(&np->lock, NULL);
	pthread_cond_init(&np->idle, NULL);
	np->conn_fds = xcalloc((size_t)np->max_conns, sizeof *np->conn_fds);
	for (int i = 0; i < np->max_conns; i++)
		np->conn_fds[i] = -1;
	struct ns_job j = {.listen_fd = -1, .netns_fd = -1};
	pthread_t t;
	if ((errno = pthread_create(&t, NULL, ns_main, &j)) != 0) {
		snprintf(err, errlen, "cannot start a thread: %s", strerror(errno));
		goto fail;
	}
	pthread_join(t, NULL);
	np->listen_fd = j.listen_fd;
	np->netns_fd = j.netns_fd;
	np->port = j.port;
	if (j.err) {
		snprintf(err, errlen, "%s: %s: %s", what, j.what, strerror(j.err));
		goto fail;
	}
	if (pipe2(np->wake, O_CLOEXEC) < 0 ||
	    (errno = pthread_create(&np->thread, NULL, accept_main, np)) != 0) {
		snprintf(err, errlen, "%s: cannot start serving: %s", what, strerror(errno));
		goto fail;
	}
	np->thread_started = true;
	*out = np;
	return 0;
fail:
	nsproxy_stop(np);
	return -1;
}

int nsproxy_netns_fd(const struct nsproxy *np)
{
	return np->netns_fd;
}

int nsproxy_port(const struct nsproxy *np)
{
	return np->port;
}

atomic_bool *nsproxy_stop_flag(struct nsproxy *np)
{
	return &np->stop;
}

void nsproxy_stop(struct nsproxy *np)
{
	if (!np)
		return;
	atomic_store(&np->stop, true);
	/* wake every connection thread (its socket ends) and the accept thread,
	 * which may wait for a free connection slot */
	pthread_mutex_lock(&np->lock);
	for (int i = 0; i < np->max_conns; i++)
		if (np->conn_fds[i] >= 0)
			shutdown(np->conn_fds[i], SHUT_RDWR);
	pthread_cond_broadcast(&np->idle);
	pthread_mutex_unlock(&np->lock);
	if (np->thread_started) {
		ssize_t w = write(np->wake[1], "x", 1);
		(void)w;
		pthread_join(np->thread, NULL);
	}
	pthread_mutex_lock(&np->lock);
	while (np->active > 0)
		pthread_cond_wait(&np->idle, &np->lock);
	pthread_mutex_unlock(&np->lock);
	int *const fds[] = {&np->listen_fd, &np->netns_fd, &np->wake[0], &np->wake[1]};
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	pthread_mutex_destroy(&np->lock);
	pthread_cond_destroy(&np->idle);
	free(np->conn_fds);
	free(np);
}

/* ---- helpers of the handlers ---- */

int nsproxy_send_all(int fd, const char *buf, size_t len, int timeout_ms)
{
	while (len > 0) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		if (poll(&p, 1, timeout_ms) <= 0)
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

long nsproxy_read_head(int fd, char *buf, size_t len, int timeout_ms)
{
	size_t used = 0;
	buf[0] = 0;
	while (used + 1 < len) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, timeout_ms) <= 0)
			return -1;
		ssize_t n = recv(fd, buf + used, len - 1 - used, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -1;
		used += (size_t)n;
		buf[used] = 0;
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			return (long)used;
	}
	return -1;
}
