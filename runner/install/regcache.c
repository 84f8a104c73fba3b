/* regcache: the install proxy's cache of upstream responses (see regcache.h). */
#define _GNU_SOURCE
#include "runner/install/regcache.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC	     "judge-regcache 1\n"
#define HEADER_MAX   8192
#define CONNECT_S    10
#define LOW_SPEED_S  30 /* a transfer slower than 1 KiB/s this long fails */
#define MAX_REDIRECT 5

/* Two FNV-1a 64 hashes with different bases: a bounded file name for any URL. */
static void cache_path(const char *dir, const char *url, char *out, size_t len)
{
	uint64_t a = 0xcbf29ce484222325ULL, b = 0x84222325cbf29ce4ULL;
	for (const unsigned char *s = (const unsigned char *)url; *s; s++) {
		a = (a ^ *s) * 0x100000001b3ULL;
		b = (b ^ *s) * 0x100000001b3ULL;
	}
	snprintf(out, len, "%s/%016" PRIx64 "%016" PRIx64, dir, a, b);
}

/* A cache file is the body, then a trailer: MAGIC, url, content type, one line
 * each, then the trailer's length as 8 hex digits and a newline. A trailer is
 * written after the body has arrived, so the body is never copied. */
#define LEN_FIELD 9

/* Reads the trailer of an open cache file of size bytes; returns the body's
 * size, or -1 when it is not url's. */
static off_t read_trailer(int fd, off_t size, const char *url, char *ctype, size_t ctlen)
{
	char buf[HEADER_MAX + 1], lenf[LEN_FIELD + 1];
	if (size < LEN_FIELD || pread(fd, lenf, LEN_FIELD, size - LEN_FIELD) != LEN_FIELD)
		return -1;
	lenf[LEN_FIELD] = 0;
	char *end;
	long tl = strtol(lenf, &end, 16);
	if (*end != '\n' || tl <= 0 || tl > HEADER_MAX || tl > size - LEN_FIELD)
		return -1;
	off_t body = size - LEN_FIELD - tl;
	if (pread(fd, buf, (size_t)tl, body) != tl)
		return -1;
	buf[tl] = 0;
	size_t ml = strlen(MAGIC), ul = strlen(url);
	if (strncmp(buf, MAGIC, ml) || strncmp(buf + ml, url, ul) || buf[ml + ul] != '\n')
		return -1;
	char *ct = buf + ml + ul + 1;
	char *nl = strchr(ct, '\n');
	if (!nl)
		return -1;
	*nl = 0;
	snprintf(ctype, ctlen, "%s", ct);
	return body;
}

int regcache_open(const char *dir, const char *url, struct regcache_entry *e)
{
	char path[4096];
	struct stat st;
	e->fd = -1;
	cache_path(dir, url, path, sizeof path);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	off_t body = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		body = read_trailer(fd, st.st_size, url, e->ctype, sizeof e->ctype);
	if (body < 0 || lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return 0; /* another URL's (a collision) or damaged: a miss */
	}
	e->fd = fd;
	e->size = body;
	e->mtime = st.st_mtime;
	return 1;
}

void regcache_entry_close(struct regcache_entry *e)
{
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
}

struct sink {
	int fd;
	long long written, max;
	bool failed;
	CURL *curl;		  /* for the status and length of the answer */
	struct regcache_fetch *f; /* with on_body; NULL: cache only */
};

/* Hands a piece of the body to f->on_body, once the answer is known to be a 200. */
static void tee_body(struct sink *s, const char *data, size_t len)
{
	struct regcache_fetch *f = s->f;
	if (!f->streamed) {
		long status = 0;
		curl_off_t length = -1;
		char *ct = NULL;
		curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
		if (status != 200) {
			s->f = NULL;
			return;
		}
		curl_easy_getinfo(s->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
		curl_easy_getinfo(s->curl, CURLINFO_CONTENT_TYPE, &ct);
		f->streamed = true;
		if (!f->on_body(f->arg, ct && !strpbrk(ct, "\r\n") ? ct : "", (long long)length,
				NULL, 0)) {
			s->f = NULL;
			return;
		}
	}
	if (!f->on_body(f->arg, NULL, -1, data, len))
		s->f = NULL;
}

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = size * n;
	if (s->written + (long long)len > s->max)
		return 0; /* too big: the transfer fails */
	for (size_t off = 0; off < len;) {
		ssize_t w = write(s->fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			s->failed = true;
			return 0;
		}
		off += (size_t)w;
	}
	s->written += (long long)len;
	if (s->f)
		tee_body(s, data, len);
	return len;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	(void)dt, (void)dn, (void)ut, (void)un;
	const atomic_bool *stop = arg;
	return stop && atomic_load(stop) ? 1 : 0;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* Runs the transfer of f into fd (after the header). CURLE_OK or curl's code. */
static CURLcode transfer(struct regcache_fetch *f, struct sink *s, char *ctype, size_t ctlen)
{
	pthread_once(&curl_once, curl_init_once);
	CURL *c = curl_easy_init();
	if (!c)
		return CURLE_OUT_OF_MEMORY;
	struct curl_slist *hdrs = NULL;
	char accept[256];
	if (f->accept) {
		snprintf(accept, sizeof accept, "Accept: %s", f->accept);
		hdrs = curl_slist_append(hdrs, accept);
	}
	curl_easy_setopt(c, CURLOPT_URL, f->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, (long)MAX_REDIRECT);
	/* a streamed body's length must be the one the upstream announces */
	if (!f->on_body)
		curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	s->curl = c;
	s->f = f->on_body ? f : NULL;
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)CONNECT_S);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)LOW_SPEED_S);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "judge-install-proxy");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)f->stop);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)f->max_bytes);
	CURLcode rc = curl_easy_perform(c);
	long status = 0;
	char *ct = NULL;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
	f->status = (int)status;
	/* the content type goes into a one-line header: no line breaks */
	snprintf(ctype, ctlen, "%s", ct && !strpbrk(ct, "\r\n") ? ct : "");
	curl_easy_cleanup(c);
	curl_slist_free_all(hdrs);
	return rc;
}

/* mkdir -p: the cache's parents 0755, the cache itself 0700 (root's alone). */
static int make_dirs(const char *dir)
{
	char buf[4096];
	if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *s = strchr(buf + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return mkdir(buf, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

int regcache_fetch(const char *dir, struct regcache_fetch *f, char *err, size_t errlen)
{
	char path[4096], tmp[4096], ctype[128];
	int ret = -1;
	f->status = 0;
	f->streamed = false;
	if (make_dirs(dir) < 0) {
		snprintf(err, errlen, "cannot create '%s': %s", dir, strerror(errno));
		return -1;
	}
	cache_path(dir, f->url, path, sizeof path);
	snprintf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", dir);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create a file in '%s': %s", dir, strerror(errno));
		return -1;
	}
	struct sink s = {.fd = fd, .max = f->max_bytes};
	CURLcode rc = transfer(f, &s, ctype, sizeof ctype);
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "fetching '%s': %s%s", f->url, curl_easy_strerror(rc),
			 s.failed ? " (cache write failed)" : "");
		goto out;
	}
	if (f->status != 200) {
		ret = 0;
		goto out;
	}
	ret = -1;
	char tr[HEADER_MAX + LEN_FIELD + 1];
	int tl = snprintf(tr, HEADER_MAX, MAGIC "%s\n%s\n", f->url, ctype);
	if (tl >= HEADER_MAX) {
		snprintf(err, errlen, "url too long for the cache");
		goto out;
	}
	snprintf(tr + tl, LEN_FIELD + 1, "%08x\n", (unsigned)tl);
	struct sink ts = {.fd = fd, .max = LLONG_MAX};
	if (on_data(tr, 1, (size_t)tl + LEN_FIELD, &ts) != (size_t)tl + LEN_FIELD ||
	    rename(tmp, path) < 0) {
		snprintf(err, errlen, "cannot store '%s' in the cache: %s", f->url,
			 strerror(errno));
		goto out;
	}
	tmp[0] = 0;
	ret = 1;
out:
	close(fd);
	if (tmp[0])
		unlink(tmp);
	return ret;
}
