/* sesshub: a waiter hub on judge_session_reply plus a once-a-second reaper of lost workers
 * (sesshub.h). */
#include "judge/service/session/sesshub.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "judge/service/session/sessdb.h"
#include "judge/service/waiter.h"
#include "judge/store/db.h"

#define REAP_EVERY_MS 1000
/* how fast the reaper notices stop */
#define STOP_POLL_MS 100

struct sesshub {
	struct waiter_hub *hub;
	pthread_t reaper;
	bool started;
	char *db_url;
	long timeout_s;
	volatile int stop;
};

static struct db *connect_db(struct sesshub *h)
{
	struct db *db = NULL;
	char err[256];
	if (db_open(&db, h->db_url, 1000, err, sizeof err) < 0) {
		log_warn("sesshub: cannot connect: %s", err);
		return NULL;
	}
	db_set_reconnect_ms(db, 1000);
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

static void *reaper_main(void *arg)
{
	struct sesshub *h = arg;
	struct db *db = NULL;
	int64_t next_reap = 0;
	while (!h->stop) {
		if (clock_mono_ms() < next_reap) {
			clock_sleep_ms(STOP_POLL_MS);
			continue;
		}
		next_reap = clock_mono_ms() + REAP_EVERY_MS;
		if (!db && !(db = connect_db(h)))
			continue;
		reap(h, db);
	}
	db_close(db);
	return NULL;
}

int64_t sesshub_key(const char *text)
{
	return waiter_text_key(text);
}

int sesshub_start(struct sesshub **out, const char *db_url, long timeout_s, char *err,
		  size_t errlen)
{
	struct sesshub *h = xcalloc(1, sizeof *h);
	h->db_url = xstrdup(db_url);
	h->timeout_s = timeout_s;
	if (waiter_hub_start_on(&h->hub, db_url, SESS_CHANNEL_REPLY, waiter_text_key, NULL, NULL,
				err, errlen) < 0) {
		sesshub_stop(h);
		return -1;
	}
	if (pthread_create(&h->reaper, NULL, reaper_main, h)) {
		snprintf(err, errlen, "cannot start the session reaper thread");
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
		pthread_join(h->reaper, NULL);
	waiter_hub_stop(h->hub);
	free(h->db_url);
	free(h);
}

struct waiter_hub *sesshub_waiters(struct sesshub *h)
{
	return h->hub;
}
