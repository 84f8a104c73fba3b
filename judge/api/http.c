/* http: libmicrohttpd glue: body gathering with a cap, suspend/resume, JSON responses. */
#define _GNU_SOURCE
#include "judge/api/http.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"

/* Where a connection is in its current request, for its deadline. */
enum conn_phase {
	PH_HEADERS, /* waiting for a request's headers: header deadline */
	PH_BODY,    /* headers in, body coming: body deadline */
	PH_HANDLER, /* the request is whole: no deadline (it may wait or stream) */
};

/* One per TCP connection (libmicrohttpd's socket context), from its STARTED
 * to its CLOSED notification. CLOSED comes before libmicrohttpd closes the
 * socket and both hold conns_lock, so the reaper never shuts down an fd that
 * was closed and reused. */
struct http_conn {
	struct http_conn *prev, *next;
	struct MHD_Connection *conn;
	int fd;
	pthread_t owner; /* the pool thread that serves it */
	enum conn_phase phase;
	int64_t deadline_ms; /* clock_mono_ms(), CLOCK_NEVER for none */
};

struct http_server {
	struct MHD_Daemon *daemon;
	struct http_opts opts;
	pthread_mutex_t lock; /* guards r->suspended, the parked list and active */
	struct http_request **parked;
	size_t nparked, aparked;
	long active;
	bool stopping;
	/* the deadline reaper: conns_lock guards the list, each conn's phase
	 * and deadline, reaper_stop and cut */
	pthread_mutex_t conns_lock;
	pthread_cond_t reaper_cond;
	pthread_t reaper;
	bool reaper_started, reaper_stop;
	struct http_conn *conns;
	long cut; /* connections shut down at a deadline */
};

int http_listen(const char *addr, char *err, size_t errlen)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	if (!colon || !colon[1]) {
		snprintf(err, errlen, "listen '%s' must be host:port", addr);
		return -1;
	}
	size_t n = (size_t)(colon - addr);
	if (n >= sizeof host) {
		snprintf(err, errlen, "listen '%s': host too long", addr);
		return -1;
	}
	memcpy(host, addr, n);
	host[n] = 0;
	if (host[0] == '[' && n >= 2 && host[n - 1] == ']') {
		memmove(host, host + 1, n - 2);
		host[n - 2] = 0;
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *ai = NULL;
	int rc = getaddrinfo(*host ? host : NULL, colon + 1, &hints, &ai);
	if (rc) {
		snprintf(err, errlen, "listen '%s': %s", addr, gai_strerror(rc));
		return -1;
	}
	int fd = -1, saved = 0;
	for (struct addrinfo *p = ai; p; p = p->ai_next) {
		fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, p->ai_addr, p->ai_addrlen) == 0 && listen(fd, 1024) == 0)
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		snprintf(err, errlen, "cannot listen on '%s': %s", addr, strerror(saved));
	return fd;
}

const char *http_header(struct http_request *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *http_query(struct http_request *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

struct query_find {
	const char *name, *value;
	int seen; /* 1: the name was there; 2: with that value */
};

static enum MHD_Result query_find_one(void *arg, enum MHD_ValueKind kind, const char *key,
				      const char *val)
{
	(void)kind;
	struct query_find *f = arg;
	if (!key || strcmp(key, f->name))
		return MHD_YES;
	f->seen = f->seen ? f->seen : 1;
	size_t n = strlen(f->value);
	for (const char *p = val ? val : ""; *p; p += strcspn(p, ",")) {
		p += *p == ',';
		if (!strncmp(p, f->value, n) && (p[n] == ',' || !p[n]))
			f->seen = 2;
	}
	return f->seen == 2 ? MHD_NO : MHD_YES;
}

int http_query_lists(struct http_request *r, const char *name, const char *value)
{
	struct query_find f = {name, value, 0};
	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, query_find_one, &f);
	return f.seen == 2 ? 1 : f.seen ? 0 : -1;
}

int http_query_long(struct http_request *r, const char *name, long long def, long long lo,
		    long long hi, long long *v)
{
	const char *s = http_query(r, name);
	*v = def;
	if (!s)
		return 0;
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (!*s || *end || errno || x < lo || x > hi)
		return -1;
	*v = x;
	return 0;
}

/* Adds the content type and headers (name, value pairs, NULL-ended) to resp,
 * queues it (taking it) and marks r answered. */
static int queue_response(struct http_request *r, int status, struct MHD_Response *resp,
			  const char *content_type, const char *const *headers)
{
	if (content_type)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	for (size_t i = 0; headers && headers[i] && headers[i + 1]; i += 2)
		MHD_add_response_header(resp, headers[i], headers[i + 1]);
	enum MHD_Result rc = MHD_queue_response(r->conn, (unsigned)status, resp);
	MHD_destroy_response(resp);
	r->responded = true;
	r->status = status;
	return rc == MHD_YES ? 0 : -1;
}

int http_respond(struct http_request *r, int status, const char *content_type, const char *body,
		 size_t len, const char *const *headers)
{
	if (r->responded)
		return -1;
	struct strbuf tb = STRBUF_INIT;
	if (r->transform) {
		/* the body may not be NUL-terminated: the hook gets a copy that is */
		struct strbuf in = STRBUF_INIT;
		strbuf_add(&in, body, len);
		int ts = r->transform(r, status, in.buf, in.len, &tb, r->transform_arg);
		strbuf_release(&in);
		if (ts > 0) {
			status = ts;
			content_type = r->transform_type ? r->transform_type : "application/json";
			body = tb.buf;
			len = tb.len;
			headers = NULL;
		}
	}
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	strbuf_release(&tb);
	if (!resp)
		return -1;
	return queue_response(r, status, resp, content_type, headers);
}

struct stream {
	http_stream_fn read;
	void *arg;
	void (*free_arg)(void *arg);
};

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct stream *st = cls;
	long n = st->read(st->arg, buf, max);
	return n == HTTP_STREAM_END ? MHD_CONTENT_READER_END_OF_STREAM : (ssize_t)n;
}

static void stream_free(void *cls)
{
	struct stream *st = cls;
	if (st->free_arg)
		st->free_arg(st->arg);
	free(st);
}

int http_respond_stream(struct http_request *r, int status, const char *content_type,
			http_stream_fn read, void *arg, void (*free_arg)(void *arg),
			const char *const *headers)
{
	struct stream *st = xcalloc(1, sizeof *st);
	*st = (struct stream){read, arg, free_arg};
	if (r->responded) {
		stream_free(st);
		return -1;
	}
	/* 16 KiB: the largest piece read is asked for at once */
	struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024,
								      stream_read, st, stream_free);
	if (!resp) {
		stream_free(st);
		return -1;
	}
	return queue_response(r, status, resp, content_type, headers);
}

int http_respond_json(struct http_request *r, int status, const cJSON *json)
{
	char *text = cJSON_PrintUnformatted(json);
	size_t n = strlen(text);
	/* a newline at the end makes curl output readable */
	text = xrealloc(text, n + 2);
	text[n++] = '\n';
	text[n] = 0;
	int rc = http_respond(r, status, "application/json", text, n, NULL);
	free(text);
	return rc;
}

static int verror(struct http_request *r, int status, const char *const *headers, const char *code,
		  const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	cJSON *o = cJSON_CreateObject();
	cJSON *e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddStringToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", msg);
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, text);
	strbuf_addch(&sb, '\n');
	free(text);
	int rc = http_respond(r, status, "application/json", sb.buf, sb.len, headers);
	strbuf_release(&sb);
	return rc;
}

int http_error(struct http_request *r, int status, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = verror(r, status, NULL, code, fmt, ap);
	va_end(ap);
	return rc;
}

int http_error_h(struct http_request *r, int status, const char *const *headers, const char *code,
		 const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = verror(r, status, headers, code, fmt, ap);
	va_end(ap);
	return rc;
}

void http_suspend(struct http_request *r)
{
	struct http_server *s = r->server;
	pthread_mutex_lock(&s->lock);
	if (s->stopping) {
		pthread_mutex_unlock(&s->lock);
		http_error(r, 503, "shutting_down", "the server is shutting down");
		return;
	}
	if (s->nparked == s->aparked) {
		size_t na = s->aparked ? 2 * s->aparked : 64;
		s->parked = xreallocarray(s->parked, na, sizeof *s->parked);
		s->aparked = na;
	}
	s->parked[s->nparked++] = r;
	r->suspended = true;
	r->suspends++;
	MHD_suspend_connection(r->conn);
	pthread_mutex_unlock(&s->lock);
}

/* Called with s->lock held. */
static void resume_locked(struct http_server *s, struct http_request *r)
{
	if (!r->suspended)
		return;
	for (size_t i = 0; i < s->nparked; i++)
		if (s->parked[i] == r) {
			s->parked[i] = s->parked[--s->nparked];
			break;
		}
	r->suspended = false;
	MHD_resume_connection(r->conn);
}

void http_resume(struct http_request *r)
{
	struct http_server *s = r->server;
	pthread_mutex_lock(&s->lock);
	resume_locked(s, r);
	pthread_mutex_unlock(&s->lock);
}

bool http_stopping(struct http_request *r)
{
	pthread_mutex_lock(&r->server->lock);
	bool stopping = r->server->stopping;
	pthread_mutex_unlock(&r->server->lock);
	return stopping;
}

bool http_client_gone(struct http_request *r)
{
	const union MHD_ConnectionInfo *ci =
	    r && r->conn ? MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD)
			 : NULL;
	if (!ci)
		return false;
	/* a client sends nothing more once its request is whole: a readable
	 * end of stream (or an error) is its close */
	struct pollfd p = {.fd = ci->connect_fd, .events = POLLRDHUP};
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

long http_active(const struct http_server *s)
{
	return __atomic_load_n(&s->active, __ATOMIC_RELAXED);
}

struct cl_count {
	const char *first;
	bool differ;
};

static enum MHD_Result count_cl(void *cls, enum MHD_ValueKind kind, const char *key,
				const char *value)
{
	(void)kind;
	struct cl_count *c = cls;
	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH))
		return MHD_YES;
	if (!c->first)
		c->first = value ? value : "";
	else if (strcmp(c->first, value ? value : ""))
		c->differ = true;
	return MHD_YES;
}

/* RFC 9110 5.6.2: a field name is a token. */
static bool is_token(const char *p)
{
	if (!*p)
		return false;
	for (; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("!#$%&'*+-.^_`|~", *p)))
			return false;
	return true;
}

static enum MHD_Result find_bad_name(void *cls, enum MHD_ValueKind kind, const char *key,
				     const char *value)
{
	(void)kind;
	(void)value;
	const char **bad = cls;
	if (!is_token(key ? key : "")) {
		*bad = key ? key : "";
		return MHD_NO;
	}
	return MHD_YES;
}

/* Refuses header lines and bodies whose meaning is ambiguous. A field name
 * that is not a token: libmicrohttpd 0.9.75 splits a line at its first colon
 * and keeps "Transfer-Encoding " (space before the colon) as a name of its
 * own, so it reads no chunked body where a proxy in front may read one
 * (RFC 9112 5.1 asks for a 400). Two different Content-Lengths (libmicrohttpd
 * takes the first), chunked over a Content-Length (a proxy may take the
 * other: smuggling, RFC 9112 6.3), a length that is not digits, and a body of
 * an unknown Transfer-Encoding, which libmicrohttpd reads until the client
 * closes. Returns true when it responded. */
static bool framing_error(struct http_request *r)
{
	const char *bad = NULL;
	MHD_get_connection_values(r->conn, MHD_HEADER_KIND, find_bad_name, &bad);
	if (bad) {
		http_error(r, 400, "bad_request",
			   "malformed header field name '%.60s' (no space may come before the "
			   "colon)",
			   bad);
		return true;
	}
	struct cl_count c = {0};
	MHD_get_connection_values(r->conn, MHD_HEADER_KIND, count_cl, &c);
	if (c.first && (!*c.first || strspn(c.first, "0123456789") != strlen(c.first))) {
		http_error(r, 400, "bad_request", "Content-Length '%.40s' is not a number",
			   c.first);
		return true;
	}
	if (c.differ) {
		http_error(r, 400, "bad_request", "conflicting Content-Length headers");
		return true;
	}
	const char *te = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_TRANSFER_ENCODING);
	if (te && strcasecmp(te, "chunked")) {
		http_error(r, 400, "bad_request",
			   "Transfer-Encoding '%.40s' is not supported (only chunked)", te);
		return true;
	}
	if (te && c.first) {
		http_error(r, 400, "bad_request",
			   "Content-Length and Transfer-Encoding must not come together");
		return true;
	}
	return false;
}

/* libmicrohttpd decodes %00 to a NUL that silently cuts the path or a query
 * value short ("/v1/submissions/1%00x" would read submission 1): such a
 * string is left as it is, so it matches no route and no valid value. */
static size_t unescape(void *cls, struct MHD_Connection *conn, char *s)
{
	(void)cls;
	(void)conn;
	for (const char *p = strchr(s, '%'); p; p = strchr(p + 1, '%'))
		if (p[1] == '0' && p[2] == '0')
			return strlen(s);
	return MHD_http_unescape(s);
}

/* ---- connections and their deadlines ---- */

static struct http_conn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* Moves hc to phase ph and sets the phase's deadline from now. */
static void conn_phase(struct http_server *s, struct http_conn *hc, enum conn_phase ph)
{
	if (!hc)
		return;
	int64_t t = ph == PH_HEADERS ? s->opts.header_timeout_ms
		    : ph == PH_BODY  ? s->opts.body_timeout_ms
				     : 0;
	pthread_mutex_lock(&s->conns_lock);
	hc->phase = ph;
	hc->deadline_ms = t > 0 ? clock_mono_ms() + t : CLOCK_NEVER;
	pthread_mutex_unlock(&s->conns_lock);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct http_server *s = cls;
	struct http_conn *hc = *socket_context;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		hc = xcalloc(1, sizeof *hc);
		hc->conn = conn;
		hc->fd = ci ? ci->connect_fd : -1;
		hc->owner = pthread_self();
		pthread_mutex_lock(&s->conns_lock);
		hc->next = s->conns;
		if (s->conns)
			s->conns->prev = hc;
		s->conns = hc;
		pthread_mutex_unlock(&s->conns_lock);
		*socket_context = hc;
		conn_phase(s, hc, PH_HEADERS);
		return;
	}
	if (code != MHD_CONNECTION_NOTIFY_CLOSED || !hc)
		return;
	pthread_mutex_lock(&s->conns_lock);
	if (hc->prev)
		hc->prev->next = hc->next;
	else
		s->conns = hc->next;
	if (hc->next)
		hc->next->prev = hc->prev;
	pthread_mutex_unlock(&s->conns_lock);
	free(hc);
	*socket_context = NULL;
}

/* libmicrohttpd's own timeout is for idleness: a client that sends a byte
 * now and then keeps its connection forever (slowloris). This thread shuts
 * down a connection whose headers or body are late; libmicrohttpd then
 * sees the socket end and closes it in its own thread. */
static void *reaper_main(void *arg)
{
	struct http_server *s = arg;
	pthread_mutex_lock(&s->conns_lock);
	while (!s->reaper_stop) {
		int64_t now = clock_mono_ms();
		for (struct http_conn *hc = s->conns; hc; hc = hc->next) {
			if (hc->deadline_ms > now || hc->fd < 0)
				continue;
			log_debug("http: closing a connection whose %s did not arrive in time",
				  hc->phase == PH_HEADERS ? "request headers" : "request body");
			shutdown(hc->fd, SHUT_RDWR);
			hc->deadline_ms = CLOCK_NEVER;
			s->cut++;
		}
		struct timespec ts = clock_mono_after(250);
		pthread_cond_timedwait(&s->reaper_cond, &s->conns_lock, &ts);
	}
	pthread_mutex_unlock(&s->conns_lock);
	return NULL;
}

long http_deadline_closes(struct http_server *s)
{
	pthread_mutex_lock(&s->conns_lock);
	long n = s->cut;
	pthread_mutex_unlock(&s->conns_lock);
	return n;
}

/* libmicrohttpd 0.9.75 answers a Content-Length that is not a number (or
 * too large for 64 bits) on its own, before the request reaches this module,
 * and sends that answer's head twice (parse_connection_headers queues it,
 * then the state machine builds the head again). The only hook left is its
 * log line, written in the thread that serves the connection, at that
 * moment: this answers the request with one JSON error and ends the
 * connection, so what libmicrohttpd writes after it is never sent. */
static const struct {
	const char *log; /* how libmicrohttpd's message starts */
	int status;
	const char *code, *message;
} mhd_refusals[] = {
    {"Failed to parse `Content-Length' header", 400, "bad_request",
     "the Content-Length header is not a number"},
    {"Too large value of 'Content-Length' header", 413, "too_large",
     "the Content-Length header is too large"},
};

static void refuse_current(struct http_server *s, int status, const char *code, const char *message)
{
	pthread_mutex_lock(&s->conns_lock);
	/* the connection this thread is parsing: its headers are in, the request
	 * has reached no handler, and no answer is queued yet */
	struct http_conn *found = NULL;
	int n = 0;
	for (struct http_conn *hc = s->conns; hc; hc = hc->next) {
		if (!pthread_equal(hc->owner, pthread_self()) || hc->phase != PH_HEADERS ||
		    hc->fd < 0 ||
		    !MHD_get_connection_info(hc->conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE))
			continue;
		const union MHD_ConnectionInfo *st =
		    MHD_get_connection_info(hc->conn, MHD_CONNECTION_INFO_HTTP_STATUS);
		if (st && st->http_status)
			continue;
		found = hc;
		n++;
	}
	if (n == 1) {
		char body[256], head[512];
		int blen =
		    snprintf(body, sizeof body,
			     "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}\n", code, message);
		int hlen =
		    snprintf(head, sizeof head,
			     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
			     "Content-Length: %d\r\nConnection: close\r\n\r\n",
			     status, status == 413 ? "Content Too Large" : "Bad Request", blen);
		/* a fresh answer on an idle socket: its buffer takes it at once */
		struct iovec iov[2] = {{head, (size_t)hlen}, {body, (size_t)blen}};
		struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
		if (sendmsg(found->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			log_debug("http: cannot answer a malformed request: %s", strerror(errno));
		shutdown(found->fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&s->conns_lock);
}

/* A body announced larger than limit. Closing a connection whose body is
 * still unread makes the kernel reset it, and the client often loses the 413
 * with it (curl reports no status): a body up to HTTP_DRAIN_BYTES is read
 * past and answered when it ends; only a larger one is answered at once. */
static void refuse_large(struct http_request *r, size_t limit, unsigned long long announced)
{
	r->too_large = true;
	r->large_limit = limit;
	if (announced > HTTP_DRAIN_BYTES)
		http_error(r, 413, "too_large", "the request body is larger than %zu KiB",
			   limit / 1024);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	(void)version;
	struct http_server *s = cls;
	struct http_request *r = *con_cls;
	if (!r) {
		r = xcalloc(1, sizeof *r);
		r->server = s;
		r->conn = conn;
		r->method = method;
		r->url = url;
		r->route = -1;
		r->start_us = clock_mono_us();
		strbuf_init(&r->body);
		*con_cls = r;
		__atomic_add_fetch(&s->active, 1, __ATOMIC_RELAXED);
		r->hc = conn_of(conn);
		conn_phase(s, r->hc, PH_BODY);
		if (framing_error(r))
			return MHD_YES;
		r->max_body = s->opts.max_body;
		/* a body announced larger than any cap is refused before it is read */
		const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		size_t most = s->opts.max_upload > r->max_body ? s->opts.max_upload : r->max_body;
		unsigned long long announced = cl ? strtoull(cl, NULL, 10) : 0;
		if (announced > most) {
			refuse_large(r, most, announced);
			return MHD_YES;
		}
		if (s->opts.headers)
			s->opts.headers(r, s->opts.arg);
		/* the hook may have raised r->max_body (uploads) */
		if (!r->responded && announced > r->max_body)
			refuse_large(r, r->max_body, announced);
		return MHD_YES;
	}
	if (*upload_data_size) {
		/* the body of a refused request is read past, never kept */
		bool keep = !r->responded && !r->too_large;
		r->body_seen += *upload_data_size;
		if (keep && r->body.len + *upload_data_size <= r->max_body)
			strbuf_add(&r->body, upload_data, *upload_data_size);
		else if (keep) {
			r->too_large = true;
			strbuf_release(&r->body);
		}
		/* a refused body (chunked, or announced small) is not read forever:
		 * libmicrohttpd cannot answer in the middle of a body, so past
		 * HTTP_DRAIN_BYTES the connection is closed */
		if (r->too_large && r->body_seen > HTTP_DRAIN_BYTES)
			return MHD_NO;
		*upload_data_size = 0;
		return MHD_YES;
	}
	/* the request is whole: what comes now may wait or stream for long */
	conn_phase(s, r->hc, PH_HANDLER);
	if (r->responded)
		return MHD_YES;
	if (r->too_large) {
		http_error(r, 413, "too_large", "the request body is larger than %zu KiB",
			   (r->large_limit ? r->large_limit : r->max_body) / 1024);
		return MHD_YES;
	}
	unsigned long suspends = r->suspends;
	s->opts.handler(r, s->opts.arg);
	/* parked and already resumed by another thread (an answer that came at
	 * once) is not a missing response: the handler runs again */
	if (!r->responded && !r->suspended && r->suspends == suspends) {
		/* a handler bug must not leave a client hanging */
		log_error("http: %s %s got no response", method, url);
		http_error(r, 503, "internal", "the server could not answer this request");
	}
	return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_server *s = cls;
	struct http_request *r = *con_cls;
	/* the next request on this connection has header_timeout for its headers */
	conn_phase(s, conn_of(conn), PH_HEADERS);
	if (!r)
		return;
	/* gone before an answer was queued: the client's doing (or its deadline's) */
	if (!r->responded && (toe == MHD_REQUEST_TERMINATED_CLIENT_ABORT ||
			      toe == MHD_REQUEST_TERMINATED_READ_ERROR ||
			      toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED))
		r->status = HTTP_CLIENT_CLOSED;
	if (s->opts.done)
		s->opts.done(r, s->opts.arg);
	if (r->ctx_free)
		r->ctx_free(r->ctx);
	if (r->transform_free)
		r->transform_free(r->transform_arg);
	pthread_mutex_lock(&s->lock);
	resume_locked(s, r); /* cannot be parked here, but never leave a dangling entry */
	pthread_mutex_unlock(&s->lock);
	strbuf_release(&r->body);
	free(r);
	*con_cls = NULL;
	__atomic_sub_fetch(&s->active, 1, __ATOMIC_RELAXED);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	for (size_t i = 0; i < sizeof mhd_refusals / sizeof mhd_refusals[0]; i++)
		if (!strncmp(fmt, mhd_refusals[i].log, strlen(mhd_refusals[i].log)))
			refuse_current(cls, mhd_refusals[i].status, mhd_refusals[i].code,
				       mhd_refusals[i].message);
	char buf[512];
	vsnprintf(buf, sizeof buf, fmt, ap);
	buf[strcspn(buf, "\n")] = 0;
	log_debug("http: %s", buf);
}

static void stop_reaper(struct http_server *s)
{
	if (!s->reaper_started)
		return;
	pthread_mutex_lock(&s->conns_lock);
	s->reaper_stop = true;
	pthread_cond_signal(&s->reaper_cond);
	pthread_mutex_unlock(&s->conns_lock);
	pthread_join(s->reaper, NULL);
	s->reaper_started = false;
}

int http_start(struct http_server **out, const struct http_opts *opts, char *err, size_t errlen)
{
	struct http_server *s = xcalloc(1, sizeof *s);
	s->opts = *opts;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->conns_lock, NULL);
	clock_cond_init(&s->reaper_cond);
	int rc = pthread_create(&s->reaper, NULL, reaper_main, s);
	if (rc) {
		snprintf(err, errlen, "cannot start the HTTP deadline thread: %s", strerror(rc));
		goto fail;
	}
	s->reaper_started = true;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME |
			 MHD_USE_ERROR_LOG;
	/* PER_IP_CONNECTION_LIMIT: a connection past it is closed on accept */
	s->daemon = MHD_start_daemon(
	    flags, 0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, opts->listen_fd,
	    MHD_OPTION_THREAD_POOL_SIZE, (unsigned)(opts->threads > 0 ? opts->threads : 1),
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION,
	    on_connection, s, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)10000, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	    (unsigned)(opts->max_conns_per_ip > 0 ? opts->max_conns_per_ip : 0),
	    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s, MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
	    MHD_OPTION_END);
	if (!s->daemon) {
		snprintf(err, errlen, "cannot start the HTTP server");
		goto fail;
	}
	*out = s;
	return 0;
fail:
	stop_reaper(s);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->conns_lock);
	pthread_cond_destroy(&s->reaper_cond);
	free(s);
	return -1;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	MHD_quiesce_daemon(s->daemon);
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	while (s->nparked)
		resume_locked(s, s->parked[0]);
	pthread_mutex_unlock(&s->lock);
	/* let the resumed requests answer 503 before the connections close */
	for (int i = 0; i < 50 && http_active(s) > 0; i++)
		clock_sleep_ms(20);
	MHD_stop_daemon(s->daemon);
	stop_reaper(s);
	pthread_mutex_destroy(&s->conns_lock);
	pthread_cond_destroy(&s->reaper_cond);
	pthread_mutex_destroy(&s->lock);
	free(s->parked);
	free(s);
}
