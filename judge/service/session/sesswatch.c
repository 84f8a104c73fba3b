/* sesswatch: a held session's folder watchers (see sesswatch.h). */
#include "judge/service/session/sesswatch.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "judge/service/outstream.h"
#include "runner/sandbox.h"

struct listing {
	struct sesswatch_entry *v;
	size_t n, cap;
};

struct watcher {
	struct sesswatch *owner;
	struct watcher *next;
	char id[SESS_ID_MAX];
	char *path; /* the folder, relative to the box */
	bool recursive, stream;
	struct sandbox *sb;
	int64_t deadline_ms, polled_ms; /* clock_mono_ms() */
	struct listing last;
	struct outstream *out; /* streamed */
	cJSON *queue;	       /* polled: the events not taken yet (under owner->lock) */
	bool stop, ended;      /* under owner->lock */
	pthread_t thread;
};

struct sesswatch {
	struct db_pool *out_pool;
	char session_id[37];
	pthread_mutex_t lock;
	pthread_cond_t wake; /* a watcher's stop */
	struct watcher *list;
};

void sesswatch_stream(const char *session_id, const char *id, char *out, size_t len)
{
	snprintf(out, len, "watch:%s:%s", session_id, id);
}

/* ---- listings and their difference ---- */

static void listing_release(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof *l);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct sesswatch_entry *)a)->name,
		      ((const struct sesswatch_entry *)b)->name);
}

/* The entries of folder dir (relative to the box) into l, named below the
 * watched folder by prefix; its folders' too when recursive. -ENOENT and
 * -ENOTDIR of the top are the caller's; a subfolder gone meanwhile is not. */
static int list_into(struct sandbox *sb, const char *dir, const char *prefix, bool recursive,
		     int depth, struct listing *l)
{
	struct sandbox_dirent *d = NULL;
	size_t n = 0;
	int rc = sandbox_file_list(sb, dir, &d, &n);
	for (size_t i = 0; rc == 0 && i < n && l->n < SESSWATCH_MAX_ENTRIES; i++) {
		/* the judge's own file being written (sandbox_file_put renames it
		 * into place): its final name is what the caller wrote */
		if (!strncmp(d[i].name, BOXFILES_PUT_PREFIX, sizeof BOXFILES_PUT_PREFIX - 1))
			continue;
		if (l->n == l->cap) {
			l->cap = l->cap ? 2 * l->cap : 64;
			l->v = xreallocarray(l->v, l->cap, sizeof *l->v);
		}
		struct sesswatch_entry *e = &l->v[l->n++];
		e->name = xasprintf("%s%s%s", prefix, *prefix ? "/" : "", d[i].name);
		e->type = d[i].type;
		e->size = d[i].size;
		e->mtime = d[i].mtime;
		e->mtime_ns = d[i].mtime_ns;
		e->mode = d[i].mode;
		e->ino = d[i].ino;
		if (recursive && d[i].type == 'd' && depth < SESS_MAX_DEPTH) {
			char *sub = xasprintf("%s%s%s", dir, *dir ? "/" : "", d[i].name);
			char *name = xstrdup(e->name); /* l->v may move */
			int src = list_into(sb, sub, name, true, depth + 1, l);
			free(sub);
			free(name);
			if (src < 0 && src != -ENOENT && src != -ENOTDIR)
				rc = src;
		}
	}
	free(d);
	return rc;
}

static int take_listing(struct watcher *w, struct listing *l)
{
	int rc = list_into(w->sb, w->path, "", w->recursive, 1, l);
	if (rc == 0 && l->n)
		qsort(l->v, l->n, sizeof *l->v, by_name);
	return rc;
}

static void add_event(cJSON *events, const char *name, const char *type)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "name", name);
	cJSON_AddStringToObject(e, "type", type);
	cJSON_AddItemToArray(events, e);
}

/* The entry of l named name, or NULL (l sorted by name). */
static const struct sesswatch_entry *find(const struct sesswatch_entry *l, size_t n,
					  const char *name)
{
	struct sesswatch_entry key = {.name = (char *)name};
	return bsearch(&key, l, n, sizeof *l, by_name);
}

/* The entry of l (not named as one of other) with inode ino and type t. */
static const struct sesswatch_entry *moved(const struct sesswatch_entry *l, size_t n,
					   const struct sesswatch_entry *other, size_t no,
					   unsigned long long ino, char t)
{
	for (size_t i = 0; i < n; i++)
		if (l[i].ino == ino && l[i].type == t && !find(other, no, l[i].name))
			return &l[i];
	return NULL;
}

void sesswatch_diff(const struct sesswatch_entry *a, size_t na, const struct sesswatch_entry *b,
		    size_t nb, cJSON *events)
{
	/* what went: renamed when its inode is under a new name now */
	for (size_t i = 0; i < na; i++) {
		const struct sesswatch_entry *now = find(b, nb, a[i].name);
		if (now && now->type == a[i].type)
			continue;
		bool renamed = !now && moved(b, nb, a, na, a[i].ino, a[i].type);
		add_event(events, a[i].name, renamed ? "EVENT_TYPE_RENAME" : "EVENT_TYPE_REMOVE");
	}
	for (size_t i = 0; i < nb; i++) {
		const struct sesswatch_entry *was = find(a, na, b[i].name);
		if (!was || was->type != b[i].type) {
			add_event(events, b[i].name, "EVENT_TYPE_CREATE");
			/* a file made with bytes was written too (as inotify tells
			 * it), unless it is an old file under a new name */
			if (b[i].type == 'f' && b[i].size > 0 &&
			    !moved(a, na, b, nb, b[i].ino, 'f'))
				add_event(events, b[i].name, "EVENT_TYPE_WRITE");
			continue;
		}
		/* a folder's own times change with what it holds: not its write */
		if (b[i].type != 'd' && (was->size != b[i].size || was->mtime != b[i].mtime ||
					 was->mtime_ns != b[i].mtime_ns))
			add_event(events, b[i].name, "EVENT_TYPE_WRITE");
		if (was->mode != b[i].mode)
			add_event(events, b[i].name, "EVENT_TYPE_CHMOD");
	}
}

/* ---- a watcher's thread ---- */

static void watcher_free(struct watcher *w)
{
	if (!w)
		return;
	listing_release(&w->last);
	cJSON_Delete(w->queue);
	free(w->path);
	free(w);
}

/* Passes events on: to the stream, or to the queue (the oldest kept when it
 * is full: a poller that lags loses the newest, as a full inotify queue). */
static void deliver(struct watcher *w, cJSON *events)
{
	cJSON *e;
	if (w->stream) {
		cJSON_ArrayForEach(e, events)
		{
			char *s = cJSON_PrintUnformatted(e);
			outstream_event(w->out, "fs", s);
			free(s);
		}
		return;
	}
	pthread_mutex_lock(&w->owner->lock);
	while ((e = events->child)) {
		cJSON_DetachItemViaPointer(events, e);
		if (cJSON_GetArraySize(w->queue) < SESSWATCH_MAX_QUEUE)
			cJSON_AddItemToArray(w->queue, e);
		else
			cJSON_Delete(e);
	}
	pthread_mutex_unlock(&w->owner->lock);
}

static void *watcher_main(void *arg)
{
	struct watcher *w = arg;
	struct sesswatch *o = w->owner;
	for (;;) {
		pthread_mutex_lock(&o->lock);
		struct timespec until = clock_mono_after(SESSWATCH_POLL_MS);
		while (!w->stop && pthread_cond_timedwait(&o->wake, &o->lock, &until) != ETIMEDOUT)
			;
		int64_t now = clock_mono_ms();
		bool idle = !w->stream && now - w->polled_ms > SESSWATCH_IDLE_MS;
		bool stop = w->stop || now >= w->deadline_ms || idle;
		pthread_mutex_unlock(&o->lock);
		if (stop)
			break;
		struct listing l = {0};
		int rc = take_listing(w, &l);
		if (rc < 0) {
			/* the folder went (or turned into something else): envd's
			 * watch ends with it */
			listing_release(&l);
			break;
		}
		cJSON *events = cJSON_CreateArray();
		sesswatch_diff(w->last.v, w->last.n, l.v, l.n, events);
		deliver(w, events);
		cJSON_Delete(events);
		listing_release(&w->last);
		w->last = l;
	}
	if (w->stream) {
		outstream_event(w->out, "done", "{}");
		outstream_flush(w->out, 5000);
		outstream_close(w->out);
		w->out = NULL;
	}
	pthread_mutex_lock(&o->lock);
	w->ended = true;
	pthread_mutex_unlock(&o->lock);
	return NULL;
}

/* ---- the calls ---- */

struct sesswatch *sesswatch_new(struct db_pool *out_pool, const char *session_id)
{
	struct sesswatch *o = xcalloc(1, sizeof *o);
	o->out_pool = out_pool;
	snprintf(o->session_id, sizeof o->session_id, "%s", session_id);
	pthread_mutex_init(&o->lock, NULL);
	clock_cond_init(&o->wake);
	return o;
}

/* Unlinks watcher w (under o->lock), stops it and waits for its thread
 * (without the lock), then frees it. */
static void stop_locked(struct sesswatch *o, struct watcher *w)
{
	for (struct watcher **p = &o->list; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	w->stop = true;
	pthread_cond_broadcast(&o->wake);
	pthread_mutex_unlock(&o->lock);
	pthread_join(w->thread, NULL);
	watcher_free(w);
	pthread_mutex_lock(&o->lock);
}

/* Frees the watchers that ended by themselves (under o->lock). */
static void reap_locked(struct sesswatch *o)
{
	for (;;) {
		struct watcher *w = o->list;
		/* a polled one is kept until its events are taken or it idles */
		int64_t now = clock_mono_ms();
		while (w && !(w->ended && (w->stream || !cJSON_GetArraySize(w->queue) ||
					   now - w->polled_ms > SESSWATCH_IDLE_MS)))
			w = w->next;
		if (!w)
			return;
		/* from the head again after it: the lock is let go meanwhile */
		stop_locked(o, w);
	}
}

static struct watcher *find_locked(struct sesswatch *o, const char *id)
{
	for (struct watcher *w = o->list; w; w = w->next)
		if (!strcmp(w->id, id))
			return w;
	return NULL;
}

static void start(struct sesswatch *o, struct sandbox *sb, const struct sess_call *c,
		  struct sess_reply *out)
{
	struct watcher *w = xcalloc(1, sizeof *w);
	w->owner = o;
	w->sb = sb;
	w->path = xstrdup(c->path ? c->path : "");
	w->recursive = c->watch.recursive;
	w->stream = c->watch.stream;
	long life = c->watch.timeout_ms > 0 && c->watch.timeout_ms < SESS_WATCH_MAX_MS
			? c->watch.timeout_ms
			: SESS_WATCH_MAX_MS;
	w->polled_ms = clock_mono_ms();
	w->deadline_ms = w->polled_ms + life;
	w->queue = cJSON_CreateArray();
	unsigned char raw[8];
	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
		sess_reply_fail(out, SERR_INTERNAL, "no random bytes for the watcher's id");
		watcher_free(w);
		return;
	}
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(w->id + 2 * i, 3, "%02x", raw[i]);
	struct sandbox_dirent top;
	int rc = sandbox_file_stat(sb, w->path, &top);
	if (rc == 0 && top.type != 'd')
		rc = -ENOTDIR;
	/* the listing events are measured against: what is there when the
	 * call answers */
	if (rc == 0)
		rc = take_listing(w, &w->last);
	if (rc < 0) {
		if (rc == -ENOENT)
			sess_reply_fail(out, SERR_NOT_FOUND, "'%.200s' does not exist", w->path);
		else if (rc == -ENOTDIR)
			sess_reply_fail(out, SERR_NOT_A_DIRECTORY, "'%.200s' is not a folder",
					w->path);
		else
			sess_reply_fail(out, SERR_BAD_PATH, "'%.200s': %s", w->path, strerror(-rc));
		watcher_free(w);
		return;
	}
	pthread_mutex_lock(&o->lock);
	reap_locked(o);
	int n = 0;
	for (struct watcher *x = o->list; x; x = x->next)
		n++;
	if (n >= SESS_MAX_WATCHERS) {
		pthread_mutex_unlock(&o->lock);
		sess_reply_fail(out, SERR_LIMIT,
				"the session watches %d folders, the most it may; remove one", n);
		watcher_free(w);
		return;
	}
	if (w->stream) {
		/* the start event is in the stream before the call answers: the
		 * relay sends it first */
		char stream[OUTSTREAM_ID_MAX];
		sesswatch_stream(o->session_id, w->id, stream, sizeof stream);
		w->out = outstream_open_pooled(o->out_pool);
		outstream_begin(w->out, stream);
		outstream_event(w->out, "start", "{}");
		outstream_flush(w->out, 5000);
	}
	if (pthread_create(&w->thread, NULL, watcher_main, w)) {
		pthread_mutex_unlock(&o->lock);
		outstream_close(w->out);
		sess_reply_fail(out, SERR_INTERNAL, "cannot start the watcher's thread");
		watcher_free(w);
		return;
	}
	w->next = o->list;
	o->list = w;
	snprintf(out->watch.id, sizeof out->watch.id, "%s", w->id);
	pthread_mutex_unlock(&o->lock);
	log_debug("sessions: %s watches '%s' (watcher %s%s)", o->session_id, c->path ? c->path : "",
		  w->id, w->recursive ? ", recursive" : "");
}

void sesswatch_call(struct sesswatch *o, struct sandbox *sb, const struct sess_call *c,
		    struct sess_reply *out)
{
	sess_reply_init(out);
	if (!sb) {
		sess_reply_fail(out, SERR_SESSION_LOST, "the session has no sandbox");
		return;
	}
	if (c->kind == SCALL_WATCH_START)
		return start(o, sb, c, out);
	pthread_mutex_lock(&o->lock);
	struct watcher *w = find_locked(o, c->watch.id);
	if (!w) {
		pthread_mutex_unlock(&o->lock);
		sess_reply_fail(out, SERR_NOT_FOUND, "no watcher '%.64s'", c->watch.id);
		return;
	}
	if (c->kind == SCALL_WATCH_EVENTS) {
		char *s = cJSON_PrintUnformatted(w->queue);
		out->watch.events = s;
		cJSON_Delete(w->queue);
		w->queue = cJSON_CreateArray();
		w->polled_ms = clock_mono_ms();
		if (w->ended)
			stop_locked(o, w); /* its last events are taken */
	} else {
		stop_locked(o, w);
	}
	pthread_mutex_unlock(&o->lock);
}

void sesswatch_free(struct sesswatch *o)
{
	if (!o)
		return;
	pthread_mutex_lock(&o->lock);
	while (o->list)
		stop_locked(o, o->list);
	pthread_mutex_unlock(&o->lock);
	pthread_mutex_destroy(&o->lock);
	pthread_cond_destroy(&o->wake);
	free(o);
}
