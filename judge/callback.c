/* callback: POSTs finished results to their callback_url, with retries and backoff. */
#include "callback.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "queue.h"
#include "request.h"
#include "strbuf.h"

#define LEASE_MS   30000
#define TIMEOUT_MS 10000

struct callback_sender {
	struct db_pool *pool;
	long attempts;
	char *allowlist;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool kicked, stop;
	long delivered, failed;
};

static long ms_left(const struct timespec *end)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (end->tv_sec - now.tv_sec) * 1000 + (end->tv_nsec - now.tv_nsec) / 1000000;
}

/* Waits for fd to be ready for events until end. Returns 0, or -1 on timeout. */
static int wait_fd(int fd, short events, const struct timespec *end)
{
	for (;;) {
		long left = ms_left(end);
		if (left <= 0)
			return -1;
		struct pollfd p = {.fd = fd, .events = events};
		int rc = poll(&p, 1, (int)left);
		if (rc > 0)
			return 0;
		if (rc < 0 && errno != EINTR)
			return -1;
	}
}

int callback_post(const char *url, const char *body, size_t len, int timeout_ms, char *err,
		  size_t errlen)
{
	char host[256], path[4096], port_s[16];
	int port, fd = -1, ret = -1;
	struct addrinfo *ai = NULL;
	struct strbuf req = STRBUF_INIT;
	struct timespec end;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout_ms / 1000;
	end.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	if (req_url_split(url, host, sizeof host, &port, path, sizeof path) < 0) {
		snprintf(err, errlen, "not an http:// url: '%.100s'", url);
		return -1;
	}
	snprintf(port_s, sizeof port_s, "%d", port);
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	int rc = getaddrinfo(host, port_s, &hints, &ai);
	if (rc) {
		snprintf(err, errlen, "cannot resolve '%s': %s", host, gai_strerror(rc));
		return -1;
	}
	for (struct addrinfo *p = ai; p && fd < 0; p = p->ai_next) {
		fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    p->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, p->ai_addr, p->ai_addrlen) < 0 && errno != EINPROGRESS) {
			close(fd);
			fd = -1;
			continue;
		}
		int soerr = 0;
		socklen_t sl = sizeof soerr;
		if (wait_fd(fd, POLLOUT, &end) < 0 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot connect to %s:%d", host, port);
		goto out;
	}
	strbuf_addf(&req,
		    "POST %s HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: judge\r\n"
		    "Content-Type: application/json\r\nContent-Length: %zu\r\n"
		    "Connection: close\r\n\r\n",
		    path, host, port, len);
	strbuf_add(&req, body, len);
	size_t off = 0;
	while (off < req.len) {
		if (wait_fd(fd, POLLOUT, &end) < 0) {
			snprintf(err, errlen, "timed out sending to %s:%d", host, port);
			goto out;
		}
		ssize_t n = send(fd, req.buf + off, req.len - off, MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			snprintf(err, errlen, "send to %s:%d: %s", host, port, strerror(errno));
			goto out;
		}
		if (n > 0)
			off += (size_t)n;
	}
	/* the status line is all we need: "HTTP/1.x NNN" */
	char buf[64];
	size_t got = 0;
	while (got < 12) {
		if (wait_fd(fd, POLLIN, &end) < 0) {
			snprintf(err, errlen, "timed out waiting for %s:%d", host, port);
			goto out;
		}
		ssize_t n = recv(fd, buf + got, sizeof buf - 1 - got, 0);
		if (n == 0)
			break;
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			snprintf(err, errlen, "recv from %s:%d: %s", host, port, strerror(errno));
			goto out;
		}
		if (n > 0)
			got += (size_t)n;
	}
	buf[got] = 0;
	int status;
	if (got < 12 || strncmp(buf, "HTTP/1.", 7) || sscanf(buf + 9, "%3d", &status) != 1) {
		snprintf(err, errlen, "%s:%d did not answer HTTP", host, port);
		goto out;
	}
	ret = status;
out:
	if (fd >= 0)
		close(fd);
	if (ai)
		freeaddrinfo(ai);
	strbuf_release(&req);
	return ret;
}

/* Delivers one due callback. Returns 1 when one was handled, 0 when none was
 * due, -1 on a database error. */
static int deliver_one(struct callback_sender *s)
{
	char err[256];
	struct queue_sub sub;
	queue_sub_init(&sub);
	struct db *db = db_pool_get(s->pool, 5000);
	if (!db)
		return -1;
	int rc = queue_callback_next(db, LEASE_MS, &sub, err, sizeof err);
	if (rc <= 0) {
		if (rc < 0)
			log_warn("callback: %s", err);
		db_pool_put(s->pool, db);
		return rc;
	}
	/* the claim counted this attempt already */
	long attempt = sub.callback_attempts > 0 ? sub.callback_attempts : 1;
	db_pool_put(s->pool, db);

	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)sub.id);
	cJSON_AddStringToObject(o, "status", sub_status_name(sub.status));
	cJSON_AddItemToObject(o, "result",
			      sub.result ? cJSON_Duplicate(sub.result, 1) : cJSON_CreateNull());
	char *body = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	int status = -1;
	struct req_error e;
	if (!sub.callback_url) {
		snprintf(err, sizeof err, "no callback_url");
	} else if (req_callback_url_check(sub.callback_url, s->allowlist, &e) < 0) {
		/* the allowlist changed since the submission was accepted */
		snprintf(err, sizeof err, "%s", e.message);
		attempt = s->attempts; /* do not retry */
	} else if (body) {
		status = callback_post(sub.callback_url, body, strlen(body), TIMEOUT_MS, err,
				       sizeof err);
	}
	free(body);
	bool ok = status >= 200 && status < 300;
	if (!ok && status > 0)
		snprintf(err, sizeof err, "answered HTTP %d", status);
	long retry_ms = -1;
	if (!ok && attempt < s->attempts)
		retry_ms = 1000L << (attempt - 1 < 16 ? attempt - 1 : 16);
	pthread_mutex_lock(&s->lock);
	if (ok)
		s->delivered++;
	else
		s->failed++;
	pthread_mutex_unlock(&s->lock);
	if (ok)
		log_info("callback: submission %lld delivered to %s", (long long)sub.id,
			 sub.callback_url);
	else
		log_warn("callback: submission %lld to %s: %s%s", (long long)sub.id,
			 sub.callback_url ? sub.callback_url : "-", err,
			 retry_ms < 0 ? " (giving up)" : "");
	db = db_pool_get(s->pool, 5000);
	if (!db || queue_callback_done(db, sub.id, ok, retry_ms, err, sizeof err) < 0)
		log_warn("callback: recording delivery of %lld: %s", (long long)sub.id,
			 db ? err : "no database connection");
	if (db)
		db_pool_put(s->pool, db);
	queue_sub_release(&sub);
	return 1;
}

static void *sender_main(void *arg)
{
	struct callback_sender *s = arg;
	for (;;) {
		pthread_mutex_lock(&s->lock);
		bool stop = s->stop;
		s->kicked = false;
		pthread_mutex_unlock(&s->lock);
		if (stop)
			break;
		int rc;
		int n = 0;
		while ((rc = deliver_one(s)) == 1 && ++n < 100 && !s->stop)
			;
		/* wake on a finished submission, else each second for due retries */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_mutex_lock(&s->lock);
		while (!s->kicked && !s->stop && rc != 1)
			if (pthread_cond_timedwait(&s->cond, &s->lock, &ts) == ETIMEDOUT)
				break;
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

int callback_start(struct callback_sender **out, struct db_pool *pool, long attempts,
		   const char *allowlist, char *err, size_t errlen)
{
	struct callback_sender *s = calloc(1, sizeof *s);
	if (!s || !(s->allowlist = strdup(allowlist ? allowlist : ""))) {
		free(s);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->pool = pool;
	s->attempts = attempts;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (pthread_create(&s->thread, NULL, sender_main, s)) {
		snprintf(err, errlen, "cannot start the callback thread");
		pthread_mutex_destroy(&s->lock);
		pthread_cond_destroy(&s->cond);
		free(s->allowlist);
		free(s);
		return -1;
	}
	*out = s;
	return 0;
}

void callback_kick(struct callback_sender *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->kicked = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void callback_stop(struct callback_sender *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s->allowlist);
	free(s);
}

long callback_delivered(const struct callback_sender *s)
{
	return s ? __atomic_load_n(&s->delivered, __ATOMIC_RELAXED) : 0;
}

long callback_failed(const struct callback_sender *s)
{
	return s ? __atomic_load_n(&s->failed, __ATOMIC_RELAXED) : 0;
}
