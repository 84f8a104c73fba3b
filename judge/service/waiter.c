/* waiter: one LISTEN judge_done thread that resumes parked waits (see waiter.h). */
#include "judge/service/waiter.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "judge/service/queue.h"
#include "judge/store/db.h"

#define WAITER_RECENT 4096

struct waiter_hub {
	pthread_t thread;
	bool started;
	pthread_mutex_t lock; /* guards the table and every waiter's hub fields */
	struct waiter *waiters;
	char *db_url;
	waiter_notify_fn on_notify;
	void *arg;
	char *channel;			     /* LISTENed to */
	int64_t (*key)(const char *payload); /* a notification's waiter id */
	long connects;
	/* under lock: the ids of the last WAITER_RECENT notifications, heard in all,
	 * and whether the thread is listening now (waiter_register_since) */
	int64_t recent[WAITER_RECENT];
	uint64_t heard;
	bool listening;
	volatile int stop;
};

/* The hub's thread heard a notification for id, or (id 0) lost or regained
 * its connection (listening). */
static void note(struct waiter_hub *h, int64_t id, bool listening)
{
	pthread_mutex_lock(&h->lock);
	if (id > 0)
		h->recent[h->heard++ % WAITER_RECENT] = id;
	h->listening = listening;
	pthread_mutex_unlock(&h->lock);
}

static void remove_locked(struct waiter_hub *h, struct waiter *w)
{
	for (struct waiter **p = &h->waiters; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	w->registered = false;
	w->parked = false;
}

/* Wakes the waiters of id (id > 0), those past their deadline (now > 0), or
 * all (id < 0). A parked one leaves the table and is resumed; one that is
 * reading keeps its place and reads again before it parks. */
static void wake(struct waiter_hub *h, int64_t id, int64_t now)
{
	pthread_mutex_lock(&h->lock);
	struct waiter **p = &h->waiters;
	while (*p) {
		struct waiter *w = *p;
		bool hit = id < 0 || w->id == id || (now > 0 && now >= w->deadline_ms);
		if (!hit) {
			p = &w->next;
		} else if (w->parked) {
			*p = w->next;
			w->registered = false;
			w->parked = false;
			w->resume(w);
		} else {
			w->notified = true;
			p = &w->next;
		}
	}
	pthread_mutex_unlock(&h->lock);
}

static int64_t next_deadline(struct waiter_hub *h)
{
	int64_t d = 0;
	pthread_mutex_lock(&h->lock);
	for (struct waiter *w = h->waiters; w; w = w->next)
		if (!d || w->deadline_ms < d)
			d = w->deadline_ms;
	pthread_mutex_unlock(&h->lock);
	return d;
}

static void notified(struct waiter_hub *h, const char *payload)
{
	if (h->on_notify)
		h->on_notify(h->arg, payload);
}

/* Opens and LISTENs, or returns NULL (logged) for the caller to retry. */
static struct db *connect_listen(struct waiter_hub *h)
{
	struct db *db = NULL;
	char err[256];
	if (db_open(&db, h->db_url, 1000, err, sizeof err) < 0) {
		log_warn("waiter: cannot connect: %s", err);
		return NULL;
	}
	/* a short budget per try: the loop retries, checking stop between */
	db_set_reconnect_ms(db, 1000);
	if (db_listen(db, h->channel) < 0) {
		log_warn("waiter: cannot listen: %s", db_error(db));
		db_close(db);
		return NULL;
	}
	note(h, 0, true);
	__atomic_add_fetch(&h->connects, 1, __ATOMIC_RELAXED);
	return db;
}

static void *hub_main(void *arg)
{
	struct waiter_hub *h = arg;
	struct db *db = NULL;
	while (!h->stop) {
		if (!db) {
			if (!(db = connect_listen(h))) {
				/* no database: deadlines still pass */
				wake(h, 0, clock_mono_ms());
				clock_sleep_ms(1000);
				continue;
			}
			/* anything may have finished while we were not listening */
			wake(h, -1, 0);
		}
		int64_t now = clock_mono_ms(), d = next_deadline(h);
		int timeout = 500; /* also how fast stop is noticed */
		if (d && d - now < timeout)
			timeout = d > now ? (int)(d - now) + 1 : 0;
		struct db_notify n;
		int rc = db_wait_notify(db, timeout, &n);
		if (rc == 1) {
			int64_t id = h->key(n.payload);
			if (id > 0) {
				note(h, id, true);
				wake(h, id, 0);
			}
			notified(h, n.payload);
		} else if (rc == 2) {
			/* reconnected (and listening again): a finish may have been missed */
			__atomic_add_fetch(&h->connects, 1, __ATOMIC_RELAXED);
			note(h, 0, true);
			wake(h, -1, 0);
			notified(h, NULL);
		} else if (rc < 0) {
			log_warn("waiter: lost the database: %s", db_error(db));
			note(h, 0, false);
			db_close(db);
			db = NULL;
			wake(h, -1, 0);
			clock_sleep_ms(1000);
			continue;
		}
		wake(h, 0, clock_mono_ms());
	}
	db_close(db);
	return NULL;
}

static int64_t id_key(const char *payload)
{
	return strtoll(payload, NULL, 10);
}

int64_t waiter_text_key(const char *s)
{
	/* FNV-1a, 63 bits; 0 is no id */
	uint64_t h = 0xcbf29ce484222325u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3u;
	h &= INT64_MAX;
	return h ? (int64_t)h : 1;
}

int waiter_hub_start(struct waiter_hub **out, const char *db_url, waiter_notify_fn on_notify,
		     void *arg, char *err, size_t errlen)
{
	return waiter_hub_start_on(out, db_url, QUEUE_CHANNEL_DONE, id_key, on_notify, arg, err,
				   errlen);
}

int waiter_hub_start_on(struct waiter_hub **out, const char *db_url, const char *channel,
			int64_t (*key)(const char *payload), waiter_notify_fn on_notify, void *arg,
			char *err, size_t errlen)
{
	struct waiter_hub *h = xcalloc(1, sizeof *h);
	h->db_url = xstrdup(db_url);
	h->channel = xstrdup(channel);
	h->key = key;
	pthread_mutex_init(&h->lock, NULL);
	h->on_notify = on_notify;
	h->arg = arg;
	if (pthread_create(&h->thread, NULL, hub_main, h)) {
		snprintf(err, errlen, "cannot start the waiter thread");
		waiter_hub_stop(h);
		return -1;
	}
	h->started = true;
	*out = h;
	return 0;
}

void waiter_hub_stop(struct waiter_hub *h)
{
	if (!h)
		return;
	h->stop = 1;
	if (h->started)
		pthread_join(h->thread, NULL);
	pthread_mutex_destroy(&h->lock);
	free(h->db_url);
	free(h->channel);
	free(h);
}

long waiter_hub_connects(struct waiter_hub *h)
{
	return __atomic_load_n(&h->connects, __ATOMIC_RELAXED);
}

void waiter_hub_wake(struct waiter_hub *h, int64_t id)
{
	if (id > 0)
		wake(h, id, 0);
}

void waiter_register(struct waiter_hub *h, struct waiter *w)
{
	pthread_mutex_lock(&h->lock);
	if (!w->registered) {
		w->next = h->waiters;
		h->waiters = w;
		w->registered = true;
	}
	w->parked = false;
	w->notified = false;
	pthread_mutex_unlock(&h->lock);
}

struct waiter_mark waiter_mark(struct waiter_hub *h)
{
	pthread_mutex_lock(&h->lock);
	struct waiter_mark m = {
	    .heard = h->heard, .connects = waiter_hub_connects(h), .listening = h->listening};
	pthread_mutex_unlock(&h->lock);
	return m;
}

bool waiter_register_since(struct waiter_hub *h, struct waiter *w, const struct waiter_mark *m)
{
	waiter_register(h, w);
	pthread_mutex_lock(&h->lock);
	/* listening all along: listening at m and now, no reconnect in between (a
	 * reconnect counts before it listens again, so a loss shows in connects) */
	bool sure = m->listening && h->listening && m->connects == waiter_hub_connects(h) &&
		    h->heard - m->heard <= WAITER_RECENT;
	for (uint64_t i = m->heard; sure && i < h->heard; i++)
		if (h->recent[i % WAITER_RECENT] == w->id)
			sure = false;
	pthread_mutex_unlock(&h->lock);
	return sure;
}

void waiter_unregister(struct waiter_hub *h, struct waiter *w)
{
	pthread_mutex_lock(&h->lock);
	if (w->registered)
		remove_locked(h, w);
	pthread_mutex_unlock(&h->lock);
}

bool waiter_park(struct waiter_hub *h, struct waiter *w, void (*suspend)(struct waiter *w))
{
	pthread_mutex_lock(&h->lock);
	bool park = !w->notified;
	if (park) {
		w->parked = true;
		suspend(w);
	}
	pthread_mutex_unlock(&h->lock);
	return park;
}

/* A blocked thread's wait: resume signals it, suspend does nothing (the
 * thread blocks on the condition after waiter_park). */
struct blocked {
	struct waiter w;
	pthread_cond_t cond;
	bool resumed;
};

static void blocked_resume(struct waiter *w)
{
	struct blocked *b = w->arg;
	b->resumed = true;
	pthread_cond_signal(&b->cond);
}

static void blocked_suspend(struct waiter *w)
{
	((struct blocked *)w->arg)->resumed = false;
}

static int read_sub(struct db_pool *pool, int64_t id, int64_t api_key_id, struct queue_sub *out,
		    char *err, size_t errlen)
{
	struct db *db = db_pool_get(pool, 10000);
	if (!db) {
		snprintf(err, errlen, "no database connection available");
		return -1;
	}
	queue_sub_release(out);
	int rc = queue_get(db, id, api_key_id, out, err, errlen);
	db_pool_put(pool, db);
	return rc;
}

int waiter_wait(struct waiter_hub *h, struct db_pool *pool, int64_t id, int64_t api_key_id,
		int timeout_ms, struct queue_sub *out, char *err, size_t errlen)
{
	int ret = -1;
	struct blocked b = {
	    .w = {.id = id,
		  .deadline_ms = clock_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0),
		  .resume = blocked_resume}};
	b.w.arg = &b;
	clock_cond_init(&b.cond);
	for (;;) {
		waiter_register(h, &b.w);
		int found = read_sub(pool, id, api_key_id, out, err, errlen);
		if (found < 0)
			break;
		if (found == 0) {
			ret = 2;
			break;
		}
		if (status_is_final(out->status)) {
			ret = 1;
			break;
		}
		if (clock_mono_ms() >= b.w.deadline_ms) {
			ret = 0; /* out holds the state read just now */
			break;
		}
		if (!waiter_park(h, &b.w, blocked_suspend))
			continue;
		/* the hub resumes it at the deadline at the latest; the timed wait
		 * only guards against a hub that cannot run */
		struct timespec until = clock_mono_after(clock_left_ms(b.w.deadline_ms) + 1000);
		pthread_mutex_lock(&h->lock);
		int rc = 0;
		while (!b.resumed && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&b.cond, &h->lock, &until);
		pthread_mutex_unlock(&h->lock);
	}
	waiter_unregister(h, &b.w);
	pthread_cond_destroy(&b.cond);
	return ret;
}
