/* http: libmicrohttpd glue: body gathering with a cap, suspend/resume, JSON responses. */
#include "judge/api/http.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"

struct http_server {
	struct MHD_Daemon *daemon;
	struct http_opts opts;
	pthread_mutex_t lock; /* guards r->suspended, the parked list and active */
	struct http_request **parked;
	size_t nparked, aparked;
	long active;
	bool stopping;
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
			content_type = "application/json";
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

/* Refuses bodies whose length is ambiguous: libmicrohttpd takes the first of
 * two different Content-Lengths, and chunked over a Content-Length (a proxy
 * may take the other: smuggling, RFC 9112 6.3), and reads a body of an
 * unknown Transfer-Encoding until the client closes.
 * Returns true when it responded. */
static bool framing_error(struct http_request *r)
{
	struct cl_count c = {0};
	MHD_get_connection_values(r->conn, MHD_HEADER_KIND, count_cl, &c);
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
		r->max_body = s->opts.max_body;
		/* a body announced larger than any cap is refused before it is read */
		const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		size_t most = s->opts.max_upload > r->max_body ? s->opts.max_upload : r->max_body;
		if (cl && strtoull(cl, NULL, 10) > most) {
			r->too_large = true;
			http_error(r, 413, "too_large", "the request body is larger than %zu KiB",
				   most / 1024);
			return MHD_YES;
		}
		if (framing_error(r))
			return MHD_YES;
		if (s->opts.headers)
			s->opts.headers(r, s->opts.arg);
		/* the hook may have raised r->max_body (uploads) */
		if (!r->responded && cl && strtoull(cl, NULL, 10) > r->max_body) {
			r->too_large = true;
			http_error(r, 413, "too_large", "the request body is larger than %zu KiB",
				   r->max_body / 1024);
		}
		return MHD_YES;
	}
	if (*upload_data_size) {
		/* the body of a refused request is read past, never kept */
		bool keep = !r->responded && !r->too_large;
		if (keep && r->body.len + *upload_data_size <= r->max_body)
			strbuf_add(&r->body, upload_data, *upload_data_size);
		else if (keep) {
			r->too_large = true;
			strbuf_release(&r->body);
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (r->responded)
		return MHD_YES;
	if (r->too_large) {
		http_error(r, 413, "too_large", "the request body is larger than %zu KiB",
			   r->max_body / 1024);
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
	(void)conn;
	(void)toe;
	struct http_server *s = cls;
	struct http_request *r = *con_cls;
	if (!r)
		return;
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
	(void)cls;
	char buf[512];
	vsnprintf(buf, sizeof buf, fmt, ap);
	buf[strcspn(buf, "\n")] = 0;
	log_debug("http: %s", buf);
}

int http_start(struct http_server **out, const struct http_opts *opts, char *err, size_t errlen)
{
	struct http_server *s = xcalloc(1, sizeof *s);
	s->opts = *opts;
	pthread_mutex_init(&s->lock, NULL);
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME |
			 MHD_USE_ERROR_LOG;
	s->daemon = MHD_start_daemon(
	    flags, 0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, opts->listen_fd,
	    MHD_OPTION_THREAD_POOL_SIZE, (unsigned)(opts->threads > 0 ? opts->threads : 1),
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)120, MHD_OPTION_CONNECTION_LIMIT, (unsigned)10000, MHD_OPTION_EXTERNAL_LOGGER,
	    mhd_log, NULL, MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL, MHD_OPTION_END);
	if (!s->daemon) {
		snprintf(err, errlen, "cannot start the HTTP server");
		pthread_mutex_destroy(&s->lock);
		free(s);
		return -1;
	}
	*out = s;
	return 0;
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
	pthread_mutex_destroy(&s->lock);
	free(s->parked);
	free(s);
}
