/* worker: claims submissions from the PostgreSQL queue and grades them; `judge worker`.
 *
 * Threads: the main thread only waits for signals; N slot threads each own a
 * connection and run claim -> grade -> finish; one housekeeping thread owns a
 * connection that LISTENs on judge_new (waking idle slots through a condition
 * variable), extends the leases of the slots' claims and reaps expired leases.
 * A slot's current claim (id, attempt) is shared with the housekeeping thread
 * under w->lock; nothing else is shared.
 */
#include "judge/service/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "judge/store/db.h"
#include "judge/grading/grade.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "common/log.h"
#include "judge/store/migrate.h"
#include "judge/store/pgembed.h"
#include "judge/service/admin.h"
#include "judge/service/outstream.h"
#include "judge/service/problemrun.h"
#include "judge/service/queue.h"
#include "judge/service/session/sesshost.h"
#include "judge/grading/compsrv.h"
#include "judge/service/slots.h"
#include "common/xalloc.h"

/* Idle slots look at the queue at least this often, even without NOTIFY. */
#define IDLE_POLL_MS 5000
/* The live output of a submission is written before its result, for this long at most. */
#define LIVE_FLUSH_MS 2000
/* Ended live output streams are pruned this often (by every worker). */
#define PRUNE_EVERY_MS 60000

struct slot {
	struct worker *w;
	int index; /* machine-wide slot number (see SLOT_LOCKS_MAX) */
	int lock_fd;
	pthread_t thread;
	char name[160];
	/* the current claim, under w->lock; busy == false when idle */
	bool busy;
	int64_t id;
	int attempt;
	atomic_bool lost;	/* the claim went to another worker: stop grading it */
	atomic_bool done;	/* the thread has returned */
	struct outstream *live; /* the slot's live output writer (outstream.h) */
};

struct worker {
	const struct judge_config *cfg;
	char *url;
	struct lang_registry langs;
	enum sandbox_backend backend;
	long lease_ms;
	long lead_ms; /* interactive_lead_ms: bulk work's aging (queue.h) */
	int nslots;
	struct slot *slots;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	unsigned long wake_gen;
	atomic_bool stopping;	   /* no new claims */
	atomic_bool halt;	   /* housekeeping ends */
	atomic_bool sessions_done; /* the drain ended the sessions */
	struct sesshost *sessions; /* the sessions this worker holds, or NULL */
	char name[96];		   /* host:pid, its row in worker_beats (admin.h) */
};

static void wake_slots(struct worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->wake_gen++;
	pthread_cond_broadcast(&w->wake);
	pthread_mutex_unlock(&w->lock);
}

/* Sleeps until woken (new work, stop) or ms passed. */
static void idle_wait(struct worker *w, unsigned long gen, long ms)
{
	struct timespec until = clock_mono_after(ms);
	pthread_mutex_lock(&w->lock);
	while (w->wake_gen == gen && !atomic_load(&w->stopping))
		if (pthread_cond_timedwait(&w->wake, &w->lock, &until) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&w->lock);
}

static void set_claim(struct slot *s, bool busy, int64_t id, int attempt)
{
	pthread_mutex_lock(&s->w->lock);
	s->busy = busy;
	s->id = id;
	s->attempt = attempt;
	atomic_store(&s->lost, false);
	pthread_mutex_unlock(&s->w->lock);
}

/* Stores the result, retrying while the database is unreachable. Unless the
 * worker is stopping, the same statement claims the next submission (saving a
 * round trip per submission): returns true when *next holds it. */
static bool finish_claim(struct slot *s, struct db *db, const struct queue_sub *sub,
			 enum sub_status st, const cJSON *result, long ms, struct queue_sub *next)
{
	char err[512];
	const char *status = status_name(st);
	for (int tries = 0;; tries++) {
		bool claimed = false;
		int rc = atomic_load(&s->w->stopping)
			     ? queue_finish(db, sub->id, s->name, sub->attempts, st, result, err,
					    sizeof err)
			     : queue_finish_claim(db, sub->id, s->name, sub->attempts, st, result,
						  s->w->lease_ms, s->w->lead_ms, next, &claimed,
						  err, sizeof err);
		if (rc == 0)
			log_info("worker %s: submission %" PRId64
				 " finished: %s (%ld ms, attempt %d)",
				 s->name, sub->id, status, ms, sub->attempts);
		if (rc == 1)
			log_warn("worker %s: submission %" PRId64 " was taken from us (lease "
				 "expired); result dropped, another worker runs it",
				 s->name, sub->id);
		if (rc >= 0)
			return claimed;
		if (tries % 10 == 0)
			log_warn("worker %s: cannot store the result of submission %" PRId64
				 ": %s; retrying",
				 s->name, sub->id, err);
		clock_sleep_ms(500);
	}
}

/* Grades a stored request (the normalized JSON of model.h) into res. */
static void grade_stored(const struct grade_env *env, const cJSON *stored, struct grade_result *res)
{
	struct grade_request req;
	char err[512];
	model_result_init(res);
	if (!stored) {
		model_result_fail(res, NULL, "stored request is not JSON");
		return;
	}
	if (model_request_load(stored, &req, err, sizeof err) < 0)
		model_result_fail(res, req.language, "%s", err);
	else
		grade_request(env, &req, res);
	model_request_release(&req);
}

/* grade_env.on_test: a test event on the live output. */
static void live_test(void *arg, const struct grade_test_out *t)
{
	cJSON *j = model_test_render(t);
	char *text = cJSON_PrintUnformatted(j);
	outstream_event(arg, "test", text);
	free(text);
	cJSON_Delete(j);
}

/* Grades sub with its output streamed live as "sub:<id>" (the database adds
 * the done when the result is stored: after everything written here). */
static void grade_live(struct slot *s, struct db *db, struct grade_env *env,
		       const struct queue_sub *sub, struct grade_result *res)
{
	char id[48];
	snprintf(id, sizeof id, "sub:%" PRId64, sub->id);
	outstream_begin(s->live, id);
	if (sub->attempts > 1) {
		/* what the lost attempt printed is in the stream already */
		char json[96];
		snprintf(json, sizeof json, "{\"attempt\":%d}", sub->attempts);
		outstream_event(s->live, "restart", json);
	}
	if (s->live) {
		env->on_output = outstream_output;
		env->on_test = live_test;
		env->live_arg = s->live;
	}
	/* a problem's package: the version it was queued against, from the
	 * worker's copy (problemrun.h) */
	struct problemrun_pkg pk;
	char err[1024];
	int rc = problemrun_load(db, s->w->cfg, &s->w->langs, sub->request, sub->api_key_id, &pk,
				 err, sizeof err);
	if (rc < 0) {
		model_result_init(res);
		model_result_fail(res, NULL, "%s", err);
	} else {
		env->problem = rc ? &pk.p : NULL;
		grade_stored(env, sub->request, res);
	}
	problemrun_pkg_release(&pk);
	if (s->live && outstream_flush(s->live, LIVE_FLUSH_MS) < 0)
		log_warn("worker %s: the live output of submission %" PRId64 " is incomplete",
			 s->name, sub->id);
}

/* A verification job's line: a "verify" event of its live output. */
static void live_line(void *arg, const char *text)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "line", text);
	char *json = cJSON_PrintUnformatted(j);
	outstream_event(arg, "verify", json);
	free(json);
	cJSON_Delete(j);
}

/* Runs the verification job sub (problemrun.h) with its lines streamed live
 * as "sub:<id>". Returns the result JSON and its *status. */
static cJSON *verify_job(struct slot *s, struct db *db, const struct grade_env *env,
			 const struct queue_sub *sub, enum sub_status *status)
{
	char id[48];
	snprintf(id, sizeof id, "sub:%" PRId64, sub->id);
	outstream_begin(s->live, id);
	struct problemrun_env pe = {.cfg = env->cfg,
				    .langs = env->langs,
				    .backend = env->backend,
				    .slot = env->slot,
				    .reuse_key = env->reuse_key,
				    .cancel = env->cancel,
				    .line = s->live ? live_line : NULL,
				    .arg = s->live};
	cJSON *result = problemrun_verify(db, &pe, sub->request, status);
	if (s->live && outstream_flush(s->live, LIVE_FLUSH_MS) < 0)
		log_warn("worker %s: the live output of verification %" PRId64 " is incomplete",
			 s->name, sub->id);
	return result;
}

static void *slot_main(void *arg)
{
	struct slot *s = arg;
	struct worker *w = s->w;
	struct db *db = NULL;
	char err[512];
	bool down = false;
	struct queue_sub sub, next;
	queue_sub_init(&sub);
	queue_sub_init(&next);
	bool have = false; /* sub holds a claim made by the last finish */
	s->live = outstream_open(w->url);
	/* a claim already made is graded even when the worker is stopping */
	while (have || !atomic_load(&w->stopping)) {
		if (!have) {
			unsigned long gen;
			pthread_mutex_lock(&w->lock);
			gen = w->wake_gen;
			pthread_mutex_unlock(&w->lock);
			if (!db) {
				if (db_open(&db, w->url, 2000, err, sizeof err) < 0) {
					if (!down)
						log_warn("worker %s: %s", s->name, err);
					down = true;
					idle_wait(w, gen, 1000);
					continue;
				}
				db_set_reconnect_ms(db, 2000);
			}
			int rc = queue_claim(db, s->name, w->lease_ms, w->lead_ms, &sub, err,
					     sizeof err);
			if (rc < 0) {
				if (!down)
					log_warn("worker %s: %s", s->name, err);
				down = true;
				idle_wait(w, gen, 1000);
				continue;
			}
			if (down)
				log_info("worker %s: database reachable again", s->name);
			down = false;
			if (rc == 0) {
				idle_wait(w, gen, IDLE_POLL_MS);
				continue;
			}
		}
		have = false;
		set_claim(s, true, sub.id, sub.attempts);
		log_info("worker %s: submission %" PRId64 " claimed (attempt %d)", s->name, sub.id,
			 sub.attempts);
		int64_t t0 = clock_mono_ms();
		/* the sandboxes of one API key's submissions may serve each other's runs
		 * (gVisor reuse, runner/gvisor/gvisor.c); never across keys */
		char key[32];
		snprintf(key, sizeof key, "k%" PRId64, sub.api_key_id);
		bool reuse = strcmp(w->cfg->gvisor_reuse ? w->cfg->gvisor_reuse : "key", "never");
		struct grade_env env = {.cfg = w->cfg,
					.langs = &w->langs,
					.backend = w->backend,
					.slot = s->index,
					.reuse_key = reuse ? key : NULL,
					.cancel = &s->lost};
		struct grade_result res;
		model_result_init(&res);
		cJSON *result;
		enum sub_status status;
		if (problemrun_is_verify(sub.request)) {
			result = verify_job(s, db, &env, &sub, &status);
		} else {
			grade_live(s, db, &env, &sub, &res);
			result = model_result_render(&res);
			status = res.status;
		}
		have =
		    finish_claim(s, db, &sub, status, result, (long)(clock_mono_ms() - t0), &next);
		cJSON_Delete(result);
		model_result_release(&res);
		if (have) {
			struct queue_sub t = sub;
			sub = next;
			next = t;
		} else {
			set_claim(s, false, 0, 0);
		}
	}
	queue_sub_release(&sub);
	queue_sub_release(&next);
	db_close(db);
	outstream_close(s->live);
	s->live = NULL;
	atomic_store(&s->done, true);
	return NULL;
}

/* Extends the leases of every running claim of this process. */
static void extend_leases(struct worker *w, struct db *db)
{
	for (int i = 0; i < w->nslots; i++) {
		struct slot *s = &w->slots[i];
		pthread_mutex_lock(&w->lock);
		bool busy = s->busy;
		int64_t id = s->id;
		int attempt = s->attempt;
		pthread_mutex_unlock(&w->lock);
		if (!busy)
			continue;
		char err[512];
		int rc = queue_extend(db, id, s->name, attempt, w->lease_ms, err, sizeof err);
		if (rc == 1) {
			log_warn("worker %s: lost the lease of submission %" PRId64
				 ": its grading stops before the next run",
				 s->name, id);
			pthread_mutex_lock(&w->lock);
			if (s->busy && s->id == id && s->attempt == attempt)
				atomic_store(&s->lost, true);
			pthread_mutex_unlock(&w->lock);
		} else if (rc < 0)
			log_debug("worker %s: cannot extend lease: %s", s->name, err);
	}
}

/* The dashboard's row of this worker: slots and how many grade now. */
static void beat(struct worker *w, struct db *db)
{
	char err[512];
	int busy = 0, alive = 0;
	pthread_mutex_lock(&w->lock);
	for (int i = 0; i < w->nslots; i++) {
		busy += w->slots[i].busy;
		alive += !atomic_load(&w->slots[i].done);
	}
	pthread_mutex_unlock(&w->lock);
	if (admin_worker_beat(db, w->name, sandbox_backend_name(w->backend), alive, busy, err,
			      sizeof err) < 0)
		log_debug("worker housekeeping: %s", err);
}

/* Removes live output streams that ended a while ago (outstream.h). */
static void prune_output(struct db *db)
{
	char err[256];
	long n = outstream_prune(db, OUTSTREAM_KEEP_S, OUTSTREAM_KEEP_MAX_S, err, sizeof err);
	if (n < 0)
		log_debug("worker housekeeping: %s", err);
	else if (n > 0)
		log_debug("worker housekeeping: %ld rows of live output pruned", n);
}

static void *housekeeping_main(void *arg)
{
	struct worker *w = arg;
	struct db *db = NULL;
	char err[512];
	long extend_every = w->lease_ms / 3;
	long reap_every = w->cfg->reap_interval_s * 1000;
	int64_t next_extend = clock_mono_ms() + extend_every, next_reap = clock_mono_ms();
	int64_t next_beat = clock_mono_ms();
	int64_t next_prune = next_reap;
	bool down = false;
	while (!atomic_load(&w->halt)) {
		if (!db) {
			if (db_open(&db, w->url, 1000, err, sizeof err) < 0) {
				if (!down)
					log_warn("worker housekeeping: %s", err);
				down = true;
				db = NULL;
				continue;
			}
			db_set_reconnect_ms(db, 1000);
			if (db_listen(db, QUEUE_CHANNEL_NEW) < 0) {
				db_close(db);
				db = NULL;
				continue;
			}
			wake_slots(w); /* queued while we were away? */
		}
		int64_t now = clock_mono_ms();
		int64_t next = next_extend < next_reap ? next_extend : next_reap;
		long timeout = next - now;
		if (timeout > 1000)
			timeout = 1000; /* check halt */
		if (timeout < 0)
			timeout = 0;
		struct db_notify n;
		int rc = db_wait_notify(db, (int)timeout, &n);
		if (rc == 1 || rc == 2) {
			/* several NOTIFYs at once (a batch) need one wake-up */
			while (db_wait_notify(db, 0, &n) == 1)
				;
			wake_slots(w);
		}
		if (rc < 0) {
			if (!down)
				log_warn("worker housekeeping: %s", db_error(db));
			down = true;
			continue;
		}
		if (rc == 2 && down)
			log_info("worker housekeeping: database reachable again");
		if (rc >= 0)
			down = false;
		now = clock_mono_ms();
		if (now >= next_extend) {
			extend_leases(w, db);
			next_extend = now + extend_every;
		}
		if (now >= next_beat) {
			beat(w, db);
			next_beat = now + ADMIN_BEAT_MS;
		}
		if (now >= next_reap && !atomic_load(&w->stopping)) {
			if (queue_reap(db, (int)w->cfg->max_attempts, NULL, NULL, err, sizeof err) <
			    0)
				log_debug("worker housekeeping: %s", err);
			next_reap = now + reap_every;
			if (now >= next_prune) {
				prune_output(db);
				next_prune = now + PRUNE_EVERY_MS;
			}
		}
	}
	if (db && admin_worker_leave(db, w->name, err, sizeof err) < 0)
		log_debug("worker housekeeping: %s", err);
	db_close(db);
	return NULL;
}

/* Hands back the claims of slots still grading after the drain. */
static void hand_back(struct worker *w)
{
	struct db *db = NULL;
	char err[512];
	if (db_open(&db, w->url, 5000, err, sizeof err) < 0) {
		log_error("worker: cannot hand back running submissions: %s (their leases will "
			  "expire and the reaper requeues them)",
			  err);
		return;
	}
	for (int i = 0; i < w->nslots; i++) {
		struct slot *s = &w->slots[i];
		pthread_mutex_lock(&w->lock);
		bool busy = s->busy;
		int64_t id = s->id;
		int attempt = s->attempt;
		s->busy = false; /* stop extending it */
		pthread_mutex_unlock(&w->lock);
		if (!busy)
			continue;
		int rc = queue_release(db, id, s->name, attempt, err, sizeof err);
		if (rc == 0)
			log_info("worker %s: submission %" PRId64 " handed back", s->name, id);
		else if (rc < 0)
			log_warn("worker %s: cannot hand back submission %" PRId64 ": %s", s->name,
				 id, err);
	}
	db_close(db);
}

static bool all_idle(struct worker *w)
{
	for (int i = 0; i < w->nslots; i++)
		if (!atomic_load(&w->slots[i].done))
			return false;
	return true;
}

/* Start-up: the sandbox backend, the languages, a database whose schema this
 * binary knows, the sandbox's global set-up (*sandbox_up: shut it down) and
 * every language's sandboxes prepared. Returns 0, or -1 (logged). */
static int start_up(struct worker *w, const struct worker_opts *opts, bool *sandbox_up)
{
	const struct judge_config *cfg = w->cfg;
	char err[1024];
	const char *sb = opts->sandbox ? opts->sandbox : cfg->sandbox;
	if (sandbox_backend_parse(sb, &w->backend) < 0) {
		log_error("worker: unknown sandbox '%s' (gvisor, native or auto)", sb);
		return -1;
	}
	if (lang_load_dir(&w->langs, cfg->languages_dir, err, sizeof err) < 0) {
		log_error("worker: %s", err);
		return -1;
	}
	struct db *db;
	if (db_open(&db, w->url, 30000, err, sizeof err) < 0) {
		log_error("worker: %s", err);
		return -1;
	}
	int rc = migrate_check(db, err, sizeof err);
	db_close(db);
	if (rc < 0) {
		log_error("worker: %s", err);
		return -1;
	}
	struct sandbox_options sbopts;
	if (limits_sandbox_options(cfg, &sbopts, err, sizeof err) < 0 ||
	    sandbox_global_init(&sbopts, err, sizeof err) < 0) {
		log_error("worker: sandbox: %s", err);
		return -1;
	}
	*sandbox_up = true;
	if (strcmp(cfg->warm_start, "on") && strcmp(cfg->warm_start, "off")) {
		log_error("worker: warm_start must be on or off, got '%s'", cfg->warm_start);
		return -1;
	}
	/* compile servers start at their language's first compile in a slot */
	if (!strcmp(cfg->warm_start, "on"))
		compsrv_enable();
	/* start gVisor sandboxes for every language now, not at its first runs */
	for (int i = 0; i < w->langs.count; i++) {
		const struct lang *l = &w->langs.langs[i];
		struct run_spec compile = {.argv = (const char *const *)l->compile_argv,
					   .ro_paths = (const char *const *)l->ro_paths};
		struct run_spec run = {.argv = (const char *const *)l->run_argv,
				       .ro_paths = (const char *const *)l->ro_paths,
				       .warm_argv = (const char *const *)l->warm_argv,
				       .preload = (const char *const *)l->preload,
				       .zygote_argv = (const char *const *)l->zygote_argv};
		if (l->compile_argv)
			sandbox_prepare(sandbox_tool_backend(w->backend), &compile);
		sandbox_prepare(w->backend, &run);
	}
	return 0;
}

/* Starts the slot threads in order, each with its slot number; at the first
 * that cannot start, it and the slots after it are marked done. Returns how
 * many started. */
static int start_slots(struct worker *w, const char *host)
{
	int started = 0;
	for (int i = 0; i < w->nslots; i++) {
		struct slot *s = &w->slots[i];
		s->w = w;
		s->index = slots_take(w->cfg->box_root, SLOT_GRADE, &s->lock_fd);
		if (s->index < 0) {
			atomic_store(&s->done, true);
			break;
		}
		snprintf(s->name, sizeof s->name, "%s:%d/%d", host, (int)getpid(), s->index);
		if (pthread_create(&s->thread, NULL, slot_main, s) != 0) {
			log_error("worker: cannot start slot %d", i);
			atomic_store(&s->done, true);
			break;
		}
		started++;
	}
	for (int i = started; i < w->nslots; i++)
		atomic_store(&w->slots[i].done, true);
	return started;
}

/* sesshost_stop in a thread of its own: it may wait for cells in progress,
 * and the main thread must see a second signal meanwhile. */
static void *sessions_stop_main(void *arg)
{
	struct worker *w = arg;
	sesshost_stop(w->sessions);
	atomic_store(&w->sessions_done, true);
	return NULL;
}

/* Waits for SIGTERM / SIGINT (sigs), then drains: the slots finish what they
 * grade and the sessions end, for up to drain_s. A second signal cuts that
 * short: what still grades is handed back at once, and everything the
 * sandboxes hold on the host is removed at once (sandbox_global_abort), so a
 * hurried stop leaves nothing behind either. Joins the housekeeping thread hk,
 * and joins the started slot threads or, still grading, detaches them.
 * Returns true when every slot went idle and the sessions ended (clean: the
 * caller shuts the sandbox down the slow way). */
static bool drain(struct worker *w, const sigset_t *sigs, pthread_t hk, int started)
{
	const struct judge_config *cfg = w->cfg;
	int sig = 0;
	while (sig != SIGTERM && sig != SIGINT)
		sig = sigwaitinfo(sigs, NULL);
	log_info("worker: signal %d: draining (up to %lds)", sig, cfg->drain_s);
	int64_t t0 = clock_mono_ms();
	atomic_store(&w->stopping, true);
	wake_slots(w);
	/* a session cannot move to another worker: end them, saying so at once */
	pthread_t stopper;
	bool stopper_started = false;
	if (!w->sessions)
		atomic_store(&w->sessions_done, true);
	else if (pthread_create(&stopper, NULL, sessions_stop_main, w) == 0)
		stopper_started = true;
	else
		sessions_stop_main(w);
	int64_t deadline = t0 + cfg->drain_s * 1000;
	struct timespec tick = {0, 50 * 1000000L};
	bool hurried = false;
	while (!(all_idle(w) && atomic_load(&w->sessions_done)) && clock_mono_ms() < deadline) {
		if (sigtimedwait(sigs, NULL, &tick) > 0) {
			log_info("worker: second signal: handing back at once");
			hurried = true;
			break;
		}
	}
	bool clean = all_idle(w) && atomic_load(&w->sessions_done);
	if (!clean) {
		hand_back(w);
		/* the threads may still be grading: their sandboxes go from under them */
		sandbox_global_abort();
	}
	if (stopper_started && atomic_load(&w->sessions_done))
		pthread_join(stopper, NULL);
	else if (stopper_started)
		pthread_detach(stopper);
	w->sessions = NULL;
	atomic_store(&w->halt, true);
	pthread_join(hk, NULL);
	for (int i = 0; i < started; i++)
		if (clean)
			pthread_join(w->slots[i].thread, NULL);
		else
			pthread_detach(w->slots[i].thread); /* still grading: exit ends them */
	log_info("worker: stopped in %lld ms%s", (long long)(clock_mono_ms() - t0),
		 clean ? ""
		 : hurried
		     ? " (second signal: running submissions handed back, sandboxes removed)"
		     : " (drain_s passed: running submissions handed back, sandboxes removed)");
	return clean;
}

int worker_run(const struct judge_config *cfg, const struct worker_opts *opts)
{
	int ret = 1;
	/* static, and the URL copied: after an unclean drain, slot threads that are
	 * still grading use both until the caller ends the process */
	static struct worker w;
	memset(&w, 0, sizeof w);
	w.cfg = cfg;
	w.url = xstrdup(opts->url);
	bool sandbox_up = false, hk_started = false;
	pthread_t hk;
	pthread_mutex_init(&w.lock, NULL);
	clock_cond_init(&w.wake);
	w.lease_ms = cfg->lease_s * 1000;
	w.lead_ms = cfg->interactive_lead_ms;

	/* signals go to sigwait in this thread only: block them before any thread */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (start_up(&w, opts, &sandbox_up) < 0)
		goto out;
	w.nslots = (int)(opts->slots ? opts->slots : cfg->worker_slots);
	if (w.nslots <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		w.nslots = n > 0 ? (int)n : 1;
	}
	w.slots = xcalloc((size_t)w.nslots, sizeof *w.slots);
	char host[64] = "localhost";
	gethostname(host, sizeof host - 1);
	snprintf(w.name, sizeof w.name, "%s:%d", host, (int)getpid());
	if (pthread_create(&hk, NULL, housekeeping_main, &w) != 0) {
		log_error("worker: cannot start a thread");
		goto out;
	}
	hk_started = true;
	int started = start_slots(&w, host);
	if (!started) {
		log_error("worker: no slot could start");
		atomic_store(&w.halt, true);
		pthread_join(hk, NULL);
		hk_started = false;
		goto out;
	}
	log_info("worker %s:%d: %d slot%s, sandbox %s, lease %lds", host, (int)getpid(), started,
		 started == 1 ? "" : "s", sandbox_backend_name(w.backend), cfg->lease_s);
	char err[512];
	if (cfg->sessions_per_worker > 0 &&
	    sesshost_start(&w.sessions, cfg, &w.langs, w.backend, w.url, err, sizeof err) < 0)
		log_error("worker: sessions: %s (this worker holds none)", err);

	bool clean = drain(&w, &sigs, hk, started);
	hk_started = false;
	ret = 0;
	if (!clean)
		return WORKER_RC_ABANDONED; /* threads still use w, the sandbox, the languages */
out:
	if (hk_started) {
		atomic_store(&w.stopping, true);
		atomic_store(&w.halt, true);
		pthread_join(hk, NULL);
	}
	if (sandbox_up)
		sandbox_global_shutdown();
	lang_registry_release(&w.langs);
	free(w.slots);
	free(w.url);
	pthread_mutex_destroy(&w.lock);
	pthread_cond_destroy(&w.wake);
	return ret;
}
