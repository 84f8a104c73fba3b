/* sesshub: one LISTEN judge_session_reply thread that resumes parked session calls (sesshub.h). */
#include "judge/service/sesshub.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "judge/service/sessdb.h"
#include "judge/store/db.h"

#define REAP_EVERY_MS 1000

struct sesshub {
	pthread_t thread;
	bool started;
	pthread_mutex_t lock; /* guards the table and every wait's hub fields */
	struct sesshub_wait *waits;
	char *db_url;
	long timeout_s;
	volatile int stop;
};

/* Wakes the waits of key (non-NULL), those past their deadline (now > 0), or
 * all (key NULL, now 0). */
static void wake(struct sesshub *h, const char *key, int64_t now)
{
	pthread_mutex_lock(&h->lock);
	struct sesshub_wait **p = &h->waits;
	while (*p) {
		struct sesshub_wait *w = *p;
		bool hit = key ? !strcmp(w->key, key) : now == 0 || now >= w->deadline_ms;
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

static int64_t next_deadline(struct sesshub *h)
{
	int64_t d = 0;
	pthread_mutex_lock(&h->lock);
	for (struct sesshub_wait *w = h->waits; w; w = w->next)
		if (!d || w->deadline_ms < d)
			d = w->deadline_ms;
	pthread_mutex_unlock(&h->lock);
	return d;
}

static struct db *connect_listen(struct sesshub *h)
{
	struct db *db = NULL;
	char err[256];
	if (db_open(&db, h->db_url, 1000, err, sizeof err) < 0) {
		log_warn("sesshub: cannot connect: %s", err);
		return NULL;
	}
	db_set_reconnect_ms(db, 1000);
	if (db_listen(db, SESS_CHANNEL_REPLY) < 0) {
		log_warn("sesshub: cannot listen: %s", db_error(db));
		db_close(db);
		return NULL;
	}
	return db;
}

static void reap(struct sesshub *h, struct db *db)
{
	char err[256];
	int n = sessdb_reap_lost(db, h->timeout_s, err, sizeof err);
	if (n < 0)
		log_debug("sesshub: %s", err);
	else if (n > 0)
		log_warn("sesshub: %d session%s lost with their worker", n, n == 1 ? "" : "s");
}

static void *hub_main(void *arg)
{
	struct sesshub *h = arg;
	struct db *db = NULL;
	int64_t next_reap = 0;
	while (!h->stop) {
		if (!db) {
			if (!(db = connect_listen(h))) {
				wake(h, NULL, clock_mono_ms());
				clock_sleep_ms(1000);
				continue;
			}
			wake(h, NULL, 0); /* an answer may have come while we were away */
		}
		int64_t now = clock_mono_ms(), d = next_deadline(h);
		if (now >= next_reap) {
			reap(h, db);
			next_reap = now + REAP_EVERY_MS;
		}
		int timeout = (int)(next_reap - now);
		if (d && d - now < timeout)
			timeout = d > now ? (int)(d - now) + 1 : 0;
		struct db_notify n;
		int rc = db_wait_notify(db, timeout, &n);
		if (rc == 1) {
			wake(h, n.payload, 0);
		} else if (rc == 2) {
			wake(h, NULL, 0);
		} else if (rc < 0) {
			log_warn("sesshub: lost the database: %s", db_error(db));
			db_close(db);
			db = NULL;
			wake(h, NULL, 0);
			clock_sleep_ms(500);
			continue;
		}
		wake(h, NULL, clock_mono_ms());
	}
	db_close(db);
	return NULL;
}

int sesshub_start(struct sesshub **out, const char *db_url, long timeout_s, char *err,
		  size_t errlen)
{
	struct sesshub *h = xcalloc(1, sizeof *h);
	h->db_url = xstrdup(db_url);
	h->timeout_s = timeout_s;
	pthread_mutex_init(&h->lock, NULL);
	if (pthread_create(&h->thread, NULL, hub_main, h)) {
		snprintf(err, errlen, "cannot start the session hub thread");
		sesshub_stop(h);
		return -1;
	}
	h->started = true;
	*out = h;
	return 0;
}

void sesshub_stop(struct sesshub *h)
{
	if (!h)
		return;
	h->stop = 1;
	if (h->started)
		pthread_join(h->thread, NULL);
	pthread_mutex_destroy(&h->lock);
	free(h->db_url);
	free(h);
}

void sesshub_register(struct sesshub *h, struct sesshub_wait *w)
{
	pthread_mutex_lock(&h->lock);
	if (!w->registered) {
		w->next = h->waits;
		h->waits = w;
		w->registered = true;
	}
	w->parked = false;
	w->notified = false;
	pthread_mutex_unlock(&h->lock);
}

void sesshub_unregister(struct sesshub *h, struct sesshub_wait *w)
{
	pthread_mutex_lock(&h->lock);
	if (w->registered)
		for (struct sesshub_wait **p = &h->waits; *p; p = &(*p)->next)
			if (*p == w) {
				*p = w->next;
				break;
			}
	w->registered = false;
	w->parked = false;
	pthread_mutex_unlock(&h->lock);
}

bool sesshub_park(struct sesshub *h, struct sesshub_wait *w,
		  void (*suspend)(struct sesshub_wait *w))
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
