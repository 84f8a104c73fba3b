/* sesspool: session sandboxes started ahead of need (see sesspool.h). */
#include "judge/service/sesspool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "judge/service/slots.h"
#include "runner/session.h"

#define POOL_MAX 64

struct sesspool {
	const struct judge_config *cfg;
	const struct lang *lang;   /* python */
	struct sess_limits limits; /* judge.ini's defaults */
	enum sandbox_backend backend;
	int size;
	pthread_t thread;
	bool started, stop;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a spare was taken, or stop */
	struct sesspool_item items[POOL_MAX];
	int n;
};

int sesspool_open(const struct judge_config *cfg, enum sandbox_backend backend,
		  const struct lang *l, const struct sess_limits *limits, int slot,
		  struct sandbox **sb, struct session **s, char *err, size_t errlen)
{
	if (sandbox_open(backend, slot, limits->disk_mb << 20, sb, err, errlen) < 0)
		return -1;
	struct limits_policy p;
	limits_policy_from_config(cfg, &p);
	struct limits_request req = {
	    .time_ms = limits->cpu_ms, .wall_ms = limits->wall_ms, .memory_mb = limits->memory_mb};
	struct session_spec spec = {.argv = (const char *const *)l->session_argv,
				    .env = (const char *const *)l->session_env,
				    .ro_paths = (const char *const *)l->session_ro_paths,
				    .warm_argv = (const char *const *)l->warm_argv,
				    .preload = (const char *const *)l->preload};
	limits_run(&p, l, NULL, &req, &spec.limits);
	/* pip, a shell's pipelines and a plotting library's threads */
	if (spec.limits.processes < 128)
		spec.limits.processes = 128;
	return session_start(*sb, &spec, s, err, errlen);
}

void sesspool_item_close(struct sesspool_item *it)
{
	if (it->s)
		session_stop(it->s);
	if (it->sb)
		sandbox_close(it->sb);
	if (it->slot_fd >= 0)
		close(it->slot_fd);
	memset(it, 0, sizeof *it);
	it->slot_fd = -1;
}

/* Starts one spare. Returns 0 with it, or -1 (logged). */
static int start_one(struct sesspool *p, struct sesspool_item *it)
{
	char err[512];
	memset(it, 0, sizeof *it);
	it->slot = slot_take(p->cfg->box_root, &it->slot_fd);
	if (it->slot < 0)
		return -1;
	if (sesspool_open(p->cfg, p->backend, p->lang, &p->limits, it->slot, &it->sb, &it->s, err,
			  sizeof err) < 0) {
		log_warn("sessions: a spare python session did not start: %s", err);
		sesspool_item_close(it);
		return -1;
	}
	return 0;
}

static void *pool_main(void *arg)
{
	struct sesspool *p = arg;
	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		if (p->n >= p->size) {
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		pthread_mutex_unlock(&p->lock);
		struct sesspool_item it;
		int rc = start_one(p, &it);
		if (rc < 0)
			clock_sleep_ms(2000); /* a broken runtime must not spin */
		pthread_mutex_lock(&p->lock);
		if (rc == 0 && !p->stop)
			p->items[p->n++] = it;
		else if (rc == 0) {
			pthread_mutex_unlock(&p->lock);
			sesspool_item_close(&it);
			pthread_mutex_lock(&p->lock);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct sesspool *sesspool_start(const struct judge_config *cfg, const struct lang_registry *langs,
				enum sandbox_backend backend, int size)
{
	struct sesspool *p = xcalloc(1, sizeof *p);
	p->cfg = cfg;
	p->backend = backend;
	p->size = size < POOL_MAX ? size : POOL_MAX;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	/* the defaults are what a create without limits gets */
	cJSON *body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "language", "python");
	struct sreq_create c;
	struct req_error e;
	if (p->size > 0 && sreq_create(cfg, langs, body, &c, &e) == 0) {
		p->lang = c.lang;
		p->limits = c.limits;
		if (pthread_create(&p->thread, NULL, pool_main, p) == 0)
			p->started = true;
	}
	cJSON_Delete(body);
	return p;
}

bool sesspool_take(struct sesspool *p, const struct lang *lang, const struct sess_limits *limits,
		   struct sesspool_item *out)
{
	if (!p->started || lang != p->lang || memcmp(limits, &p->limits, sizeof *limits))
		return false;
	pthread_mutex_lock(&p->lock);
	bool got = p->n > 0;
	if (got) {
		*out = p->items[--p->n];
		pthread_cond_signal(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	return got;
}

void sesspool_stop(struct sesspool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	if (p->started)
		pthread_join(p->thread, NULL);
	for (int i = 0; i < p->n; i++)
		sesspool_item_close(&p->items[i]);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}
