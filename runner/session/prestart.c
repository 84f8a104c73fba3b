/* prestart: sessions started ahead of need, so that creating one costs a
 * hand-over instead of a sandbox and a runtime start (~0.1 s native, ~0.3 s
 * gVisor for Python).
 *
 * How it works. prestart_prepare() names a (backend, box size, driver spec); a
 * refill thread keeps `size` sessions of each started: its own workspace
 * (sandbox_open with a slot of the pool's range, POOL_SLOT0..), the driver
 * running and its ready reply read. session_start() takes one whose key matches
 * and moves it into the caller's workspace: the two struct sandbox swap their
 * contents (box, slot, uid, backend state), so the caller's sb now holds the
 * session's box, and the caller's own (fresh, empty) box is closed. A pooled
 * session serves one session only: it is never given back.
 *
 * Bursts. A pool holds `size` (session_pool) sessions while creates are
 * rare. A create that finds its pool empty raises that pool's target by one,
 * up to session_pool_max, and waits for a start already under way rather than
 * beginning its own (the pooled one is nearer its end); a pool without such a
 * miss for POOL_SHRINK_MS steps back down, stopping a spare session. Two
 * refill threads start sessions side by side (one could not keep up with
 * back-to-back creates, docs/benchmarks.md).
 *
 * The refill threads are also the parents of native drivers' init (PDEATHSIG
 * is per thread): they live until prestart_stop.
 */
#define _GNU_SOURCE
#include "runner/session/prestart.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#define MAX_POOLS  16
#define POOL_SLOT0 65000 /* slots 65000..65499: apart from the callers' */
#define POOL_SLOTS 500
#define REFILLERS  2
/* a pool grown by misses steps back down after this long without one */
#define POOL_SHRINK_MS 60000
/* a create waits at most this long for a pooled start under way */
#define TAKE_WAIT_MS 2000

struct pooled {
	struct pooled *next;
	struct sandbox *sb;
	struct session *s;
};

struct spool {
	char *key;
	enum sandbox_backend backend;
	long box_bytes;
	struct session_spec spec;
	struct pooled *ready;
	int nready, starting;
	int target;	  /* sessions to keep: size, more after misses */
	int waiting;	  /* creates waiting for a start under way */
	int64_t miss_ms;  /* the last create that found none ready */
	int64_t retry_ms; /* after a failed start: none before this time */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct spool pools[MAX_POOLS];
	int npools;
	int size, max;
	int nthreads;
	bool running, stopping;
	pthread_t threads[REFILLERS];
	unsigned next_slot;
} sp = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

/* ---- the pools ---- */

static void add_list(struct strbuf *k, const char *const *v)
{
	for (; v && *v; v++) {
		strbuf_addstr(k, *v);
		strbuf_addch(k, '\x1f');
	}
	strbuf_addch(k, '\x1e');
}

/* What must be equal for a pooled session to serve a request. */
static char *key_of(enum sandbox_backend b, long box_bytes, const struct session_spec *spec)
{
	struct strbuf k = STRBUF_INIT;
	const struct run_limits *l = &spec->limits;
	strbuf_addf(&k, "%d %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld|", (int)b,
		    box_bytes, l->cpu_ms, l->wall_ms, l->memory_kb, l->processes, l->stdout_bytes,
		    l->stderr_bytes, l->file_bytes, l->open_files, l->tmp_bytes,
		    spec->start_timeout_ms, spec->cpu_millis, spec->cpu_weight);
	add_list(&k, spec->argv);
	add_list(&k, spec->env);
	add_list(&k, spec->ro_paths);
	add_list(&k, spec->warm_argv);
	add_list(&k, spec->preload);
	add_list(&k, spec->box_dirs);
	return strbuf_detach(&k, NULL);
}

/* sp.lock held. */
static struct spool *pool_find(const char *key)
{
	for (int i = 0; i < sp.npools; i++)
		if (!strcmp(sp.pools[i].key, key))
			return &sp.pools[i];
	return NULL;
}

/* sp.lock held: a pool short of sessions, or NULL. */
static struct spool *pool_needing(void)
{
	for (int i = 0; i < sp.npools; i++) {
		struct spool *p = &sp.pools[i];
		if (p->nready + p->starting < p->target + p->waiting &&
		    p->retry_ms <= clock_mono_ms())
			return p;
	}
	return NULL;
}

/* sp.lock held: a pool grown by misses and quiet since steps back down by
 * one; its spare session, if one is ready, is handed back to stop. */
static struct pooled *pool_shrinking(void)
{
	int64_t now = clock_mono_ms();
	for (int i = 0; i < sp.npools; i++) {
		struct spool *p = &sp.pools[i];
		if (p->target <= sp.size || now - p->miss_ms < POOL_SHRINK_MS)
			continue;
		p->target--;
		p->miss_ms = now; /* the next step one quiet period later */
		if (p->nready > p->target) {
			struct pooled *e = p->ready;
			p->ready = e->next;
			p->nready--;
			return e;
		}
	}
	return NULL;
}

/* Starts one session of p in a workspace of its own (sp.lock not held). */
static struct pooled *pooled_start(struct spool *p, unsigned slot)
{
	char err[512];
	struct pooled *e = xcalloc(1, sizeof *e);
	if (sandbox_open(p->backend, POOL_SLOT0 + (int)slot, p->box_bytes, &e->sb, err,
			 sizeof err) < 0 ||
	    session_start_new(e->sb, &p->spec, &e->s, err, sizeof err) < 0) {
		log_warn("session pool: cannot start a %s session: %s",
			 sandbox_backend_name(p->backend), err);
		if (e->sb)
			sandbox_close(e->sb);
		free(e);
		return NULL;
	}
	return e;
}

static void pooled_free(struct pooled *e)
{
	session_stop(e->s);
	sandbox_close(e->sb);
	free(e);
}

static void *refill_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&sp.lock);
	while (!sp.stopping) {
		struct pooled *spare = pool_shrinking();
		if (spare) {
			pthread_mutex_unlock(&sp.lock);
			pooled_free(spare);
			pthread_mutex_lock(&sp.lock);
			continue;
		}
		struct spool *p = pool_needing();
		if (!p) {
			struct timespec ts = clock_mono_after(1000);
			pthread_cond_timedwait(&sp.cond, &sp.lock, &ts);
			continue;
		}
		p->starting++;
		unsigned slot = sp.next_slot++ % POOL_SLOTS;
		pthread_mutex_unlock(&sp.lock);
		struct pooled *e = pooled_start(p, slot);
		pthread_mutex_lock(&sp.lock);
		p->starting--;
		if (!e) {
			p->retry_ms = clock_mono_ms() + 10000;
			continue;
		}
		e->next = p->ready;
		p->ready = e;
		p->nready++;
		pthread_cond_broadcast(&sp.cond); /* a create may be waiting for it */
	}
	pthread_mutex_unlock(&sp.lock);
	return NULL;
}

void prestart_prepare(enum sandbox_backend backend, long box_bytes, const struct session_spec *spec)
{
	const struct sandbox_options *o = sandbox_options();
	int size = o ? o->session_pool : 0;
	if (size <= 0 || !spec || !spec->argv || !spec->argv[0] || box_bytes <= 0)
		return;
	char *key = key_of(backend, box_bytes, spec);
	pthread_mutex_lock(&sp.lock);
	sp.size = size;
	sp.max = o->session_pool_max > size ? o->session_pool_max : size;
	if (!pool_find(key) && sp.npools < MAX_POOLS) {
		struct spool *p = &sp.pools[sp.npools++];
		memset(p, 0, sizeof *p);
		p->target = size;
		p->key = key;
		key = NULL;
		p->backend = backend;
		p->box_bytes = box_bytes;
		session_spec_copy(&p->spec, spec);
	}
	/* refill_main's timed waits are in CLOCK_MONOTONIC time: a cond of the
	 * default clock (CLOCK_REALTIME) would see each deadline long past and
	 * spin a core. Nothing waits on it before the thread starts. */
	if (!sp.running && !sp.stopping && clock_cond_init(&sp.cond) == 0) {
		while (sp.nthreads < REFILLERS &&
		       pthread_create(&sp.threads[sp.nthreads], NULL, refill_main, NULL) == 0)
			sp.nthreads++;
		if (sp.nthreads > 0) {
			sp.running = true;
			sandbox_on_shutdown(prestart_stop);
		}
	}
	pthread_cond_broadcast(&sp.cond);
	pthread_mutex_unlock(&sp.lock);
	free(key);
}

bool prestart_take(struct sandbox *sb, const struct session_spec *spec, struct session **out)
{
	/* only a workspace nothing ran in can take over a pooled box */
	if (!sp.running || !sandbox_is_fresh(sb))
		return false;
	char *key = key_of(sandbox_backend_of(sb), sandbox_box_bytes(sb), spec);
	pthread_mutex_lock(&sp.lock);
	struct spool *p = pool_find(key);
	if (p && !p->ready) {
		/* a miss: the pool grows, and a start under way that no other
		 * create waits for is this one's */
		p->miss_ms = clock_mono_ms();
		if (p->target < sp.max)
			p->target++;
		pthread_cond_broadcast(&sp.cond);
		if (p->starting > p->waiting) {
			p->waiting++;
			struct timespec until = clock_mono_after(TAKE_WAIT_MS);
			while (!p->ready && !sp.stopping && p->starting > 0 &&
			       pthread_cond_timedwait(&sp.cond, &sp.lock, &until) == 0)
				;
			p->waiting--;
		}
	}
	struct pooled *e = p && !sp.stopping ? p->ready : NULL;
	if (e) {
		p->ready = e->next;
		p->nready--;
		pthread_cond_broadcast(&sp.cond);
	}
	pthread_mutex_unlock(&sp.lock);
	free(key);
	if (!e)
		return false;
	sandbox_swap(sb, e->sb); /* sb gets the pooled box */
	session_rebind(e->s, sb);
	sandbox_close(e->sb); /* the caller's fresh box */
	*out = e->s;
	free(e);
	return true;
}

bool prestart_wait(enum sandbox_backend backend, long box_bytes, const struct session_spec *spec,
		   int count, long timeout_ms)
{
	char *key = key_of(backend, box_bytes, spec);
	int64_t until = clock_mono_ms() + timeout_ms;
	bool ready = false;
	while (!ready && clock_mono_ms() < until) {
		pthread_mutex_lock(&sp.lock);
		struct spool *p = pool_find(key);
		ready = p && p->nready >= count;
		pthread_mutex_unlock(&sp.lock);
		if (!ready)
			clock_sleep_ms(10);
	}
	free(key);
	return ready;
}

void prestart_stop(void)
{
	pthread_mutex_lock(&sp.lock);
	bool running = sp.running;
	sp.stopping = true;
	pthread_cond_broadcast(&sp.cond);
	pthread_mutex_unlock(&sp.lock);
	for (int i = 0; running && i < sp.nthreads; i++)
		pthread_join(sp.threads[i], NULL);
	sp.nthreads = 0;
	for (int i = 0; i < sp.npools; i++) {
		struct spool *p = &sp.pools[i];
		while (p->ready) {
			struct pooled *e = p->ready;
			p->ready = e->next;
			pooled_free(e);
		}
		free(p->key);
		session_spec_release(&p->spec);
	}
	sp.npools = 0;
	sp.running = sp.stopping = false;
}
