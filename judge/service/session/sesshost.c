/* sesshost: a worker's sessions: claims, a thread per session, routed calls (sesshost.h). */
#include "judge/service/session/sesshost.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "judge/service/session/sessrun.h"
#include "judge/service/outstream.h"
#include "judge/service/session/sessdb.h"
#include "judge/service/session/sessegress.h"
#include "judge/service/blobstore.h"
#include "judge/service/session/sessimage.h"
#include "judge/service/session/sessnet.h"
#include "judge/service/session/sessopen.h"
#include "judge/service/session/sessproc.h"
#include "judge/service/session/sesswatch.h"
#include "judge/service/session/sessreq.h"
#include "judge/service/slots.h"
#include "judge/store/db.h"
#include "runner/install/install.h"
#include "runner/session/session.h"

#define TICK_MS 1000
/* Calls claimed per NOTIFY (the rest on the next one or the tick). */
#define CLAIM_CALLS 64

/* Process calls running at once per session (each in a thread of its own). */
#define QUICK_MAX 64

/* A held session. Its thread owns env; q, nq, aq, stop and quick are under h->lock. */
struct hsess {
	struct sesshost *h;
	char id[37];
	struct sessrun_env env;
	struct sessproc *procs;	   /* its processes */
	struct sesswatch *watches; /* its folder watchers */
	int quick; /* process calls running now, and usage readings (they use env.s) */
	bool live; /* env.s started: usage_pass may read it (until stop) */
	/* CPU its sandbox used before it was ready (a gVisor sandbox's start, a
	 * prestarted one's warm-up): not the user's, so not in its usage */
	long cpu0_ms;
	/* the previous usage reading (usage_pass's alone): the CPU share since */
	int64_t last_cpu_ms, last_read_ms;
	int slot, slot_fd;
	struct sess_call *q; /* calls waiting, oldest first */
	size_t nq, aq;
	pthread_cond_t cond;	   /* a call came, or stop */
	bool stop;		   /* end after the current call */
	int64_t running;	   /* the cell's call running now, 0 for none */
	struct outstream *out;	   /* live output of streamed cells, opened at the first */
	struct sessnet_policy net; /* its egress policy */
	struct sessegress *egress; /* its egress proxy: NULL for none */
	/* what every driver starts with besides its language's: the session's
	 * own variables, then the proxy's (NULL for none) */
	char **drv_env;
	char **proc_env;   /* what its processes start with (with drv_env) */
	char image_id[37]; /* the image it starts from (sessimage.h), "" = none */
	struct hsess *next;
};

struct sesshost {
	const struct judge_config *cfg;
	const struct lang_registry *langs;
	enum sandbox_backend backend;
	char *url;
	int64_t worker_id;
	struct db_pool *pool;	  /* the session threads' */
	struct db_pool *out_pool; /* their live output's (outstream_open_pooled) */
	struct sessopen_common common;
	struct install_options inst;
	char *inst_strings[4]; /* what inst points to */
	pthread_t thread, beat;
	bool started, beating;
	atomic_bool halt;
	pthread_mutex_t lock;
	pthread_cond_t gone; /* a session thread ended, or a process call */
	struct hsess *list;
	long nheld;
	int64_t next_sweep_ms; /* when reconcile next ends paused sessions past their end */
};

static void hs_lock(struct sesshost *h)
{
	pthread_mutex_lock(&h->lock);
}

static void hs_unlock(struct sesshost *h)
{
	pthread_mutex_unlock(&h->lock);
}

/* Stores a call's answer (end: SESS_READY, or how the session ends, with
 * reason), retrying a while when PostgreSQL is away. */
static void finish(struct sesshost *h, int64_t call_id, enum scall_kind k,
		   const struct sess_reply *r, enum sess_status end, const char *reason)
{
	char err[512];
	for (int tries = 0; tries < 60 && !atomic_load(&h->halt); tries++) {
		struct db *db = db_pool_get(h->pool, 5000);
		int rc =
		    db ? sessdb_call_finish(db, call_id, k, r, end, reason, err, sizeof err) : -1;
		if (db)
			db_pool_put(h->pool, db);
		if (rc == 0)
			return;
		if (tries % 10 == 0)
			log_warn("sessions: cannot store the answer of call %" PRId64 ": %s",
				 call_id, db ? err : "no connection");
		clock_sleep_ms(500);
	}
}

static void finish_error(struct sesshost *h, int64_t call_id, enum scall_kind k, enum sess_err e,
			 const char *msg)
{
	struct sess_reply r;
	sess_reply_init(&r);
	sess_reply_fail(&r, e, "%s", msg);
	finish(h, call_id, k, &r, SESS_READY, NULL);
	sess_reply_release(&r);
}

/* ---- one session's thread ---- */

/* Opens the sandbox and starts the driver. Returns 0, or -1 with err. */
static int session_open(struct sesshost *h, struct hsess *s, char *err, size_t errlen)
{
	struct sessopen_net net = {.netns_fd = s->egress ? sessegress_netns_fd(s->egress) : -1,
				   .env = (const char *const *)s->drv_env};
	return sessopen_open(h->cfg, &h->common, h->backend, s->env.lang, &s->env.limits, s->slot,
			     s->egress || s->drv_env ? &net : NULL, &s->env.sb, &s->env.s, err,
			     errlen);
}

static void session_free(struct sesshost *h, struct hsess *s)
{
	outstream_close(s->out);
	/* the process calls still running return at once, then none comes */
	session_halt(s->env.s);
	hs_lock(h);
	s->stop = true;
	while (s->quick > 0)
		pthread_cond_wait(&h->gone, &h->lock);
	hs_unlock(h);
	/* the watchers list the box: ended before it closes */
	sesswatch_free(s->watches);
	if (s->env.s)
		session_stop(s->env.s);
	sessproc_free(s->procs);
	sessrun_env_release(&s->env);
	if (s->env.sb)
		sandbox_close(s->env.sb);
	/* after the sandbox: nothing is left to connect through it */
	sessegress_stop(s->egress);
	xstrvfree(s->drv_env);
	xstrvfree(s->proc_env);
	if (s->slot_fd >= 0)
		close(s->slot_fd);
	hs_lock(h);
	for (struct hsess **p = &h->list; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	h->nheld--;
	for (size_t i = 0; i < s->nq; i++)
		sess_call_release(&s->q[i]);
	pthread_cond_broadcast(&h->gone);
	hs_unlock(h);
	free(s->q);
	pthread_cond_destroy(&s->cond);
	free(s);
}

/* Waits for the next call; false when the session ends. */
static bool next_call(struct sesshost *h, struct hsess *s, struct sess_call *c)
{
	hs_lock(h);
	while (!s->nq && !s->stop)
		pthread_cond_wait(&s->cond, &h->lock);
	bool got = s->nq && !s->stop;
	if (got) {
		*c = s->q[0];
		memmove(s->q, s->q + 1, (s->nq - 1) * sizeof *s->q);
		s->nq--;
	}
	hs_unlock(h);
	return got;
}

/* An idle pause (sess_call.idle) or a periodic checkpoint (.checkpoint) that
 * has calls behind it: the session is in use again, so it stays as it is (a
 * later checkpoint takes it); the call is answered and dropped. */
static bool idle_pause_moot(struct sesshost *h, struct hsess *s, const struct sess_call *c)
{
	if (!c->idle && !c->checkpoint)
		return false;
	hs_lock(h);
	bool used = s->nq > 0;
	hs_unlock(h);
	if (used)
		finish_error(h, c->id, c->kind, SERR_CONFLICT,
			     c->checkpoint ? "the session was used again before its checkpoint"
					   : "the session was used again before its idle pause");
	return used;
}

/* Why s's memory cannot be checkpointed, or NULL when it can. */
static const char *no_memory_why(const struct sesshost *h, const struct hsess *s)
{
	if (h->backend != SANDBOX_GVISOR)
		return "the native backend keeps no memory";
	if (s->egress)
		return "a session with network access keeps no memory";
	return NULL;
}

/* A new empty folder for a checkpoint under box_root into dir, named after
 * this process (ckpt_sweep); false with err. */
static bool ckpt_dir(const struct sesshost *h, char *dir, size_t len, char *err, size_t errlen)
{
	snprintf(dir, len, "%s/ckpt-%d-XXXXXX", h->cfg->box_root, (int)getpid());
	if (mkdtemp(dir))
		return true;
	snprintf(err, errlen, "cannot create '%s': %s", dir, strerror(errno));
	dir[0] = 0;
	return false;
}

/* Removes the files of folder dir (a checkpoint's: no subfolders). */
static void dir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
}

static void ckpt_dir_remove(char *dir)
{
	if (!dir[0])
		return;
	dir_empty(dir);
	rmdir(dir);
	dir[0] = 0;
}

/* Removes the checkpoint folders that processes no longer running left in
 * box_root (a worker killed in the middle of a pause): they can be as large
 * as a session's memory, on a tmpfs. */
static void ckpt_sweep(const char *box_root)
{
	DIR *d = opendir(box_root);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		int pid = 0, n = 0;
		if (sscanf(e->d_name, "ckpt-%d-%n", &pid, &n) != 1 || n == 0 || pid <= 0 ||
		    pid == (int)getpid() || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s/%s", box_root, e->d_name);
		log_info("sessions: removing '%s', left by process %d", dir, pid);
		ckpt_dir_remove(dir);
	}
	if (d)
		closedir(d);
}

/* The worker's copy of the last image it paused a session to, kept so that
 * a resume here reads it from disk instead of PostgreSQL (it is used only
 * when blobstore_verify_parts finds it is still the stored image). It is the
 * checkpoint's folder itself, its files hard links (sessimage_copy_write), so
 * keeping it copies no memory and a resume hands it to the restore as it is.
 * One at most: it is as large as the session's memory and box_root may be a
 * tmpfs. Its folder is named like a checkpoint's, so ckpt_sweep removes one a
 * dead worker left. */
static void image_copy_path(const struct sesshost *h, char *path, size_t len)
{
	snprintf(path, len, "%s/ckpt-%d-copy", h->cfg->box_root, (int)getpid());
}

/* Keeps packed, just stored as image_id, as the copy (the one before goes);
 * dir: the checkpoint it holds ("" none). Failing only costs a resume the
 * database read. */
static void image_copy_keep(const struct sesshost *h, const struct strbuf *packed, const char *dir,
			    const char *image_id)
{
	char tmp[PATH_MAX], root[PATH_MAX], old[PATH_MAX], head[64], err[300];
	if (!ckpt_dir(h, tmp, sizeof tmp, err, sizeof err))
		return;
	snprintf(head, sizeof head, "head-%s", image_id);
	image_copy_path(h, root, sizeof root);
	snprintf(old, sizeof old, "%s", root);
	if (sessimage_copy_write(packed, dir[0] ? dir : NULL, tmp, head, err, sizeof err) < 0)
		log_warn("sessions: no copy of image %s: %s", image_id, err);
	else if (ckpt_dir_remove(old), rename(tmp, root) == 0)
		return;
	ckpt_dir_remove(tmp);
}

/* Takes the copy of image_id when there is one: moved to a checkpoint folder
 * of its own into dir (a pause meanwhile writes a new copy beside); "" when
 * there is none. */
static void image_copy_take(const struct sesshost *h, const char *image_id, char *dir, size_t len)
{
	char root[PATH_MAX], head[PATH_MAX + 64], err[300];
	image_copy_path(h, root, sizeof root);
	snprintf(head, sizeof head, "%s/head-%s", root, image_id);
	dir[0] = 0;
	if (access(head, F_OK) < 0 || !ckpt_dir(h, dir, len, err, sizeof err))
		return;
	if (rename(root, dir) < 0)
		ckpt_dir_remove(dir);
}

/* The memory section of an image that holds none: its only file says why. */
#define NO_MEMORY_FILE "no-memory"

static void pack_no_memory(struct strbuf *packed, const char *why)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], err[256];
	snprintf(dir, sizeof dir, "/tmp/judge-nomem-XXXXXX");
	if (!mkdtemp(dir))
		return;
	snprintf(path, sizeof path, "%s/" NO_MEMORY_FILE, dir);
	FILE *f = fopen(path, "we");
	if (f) {
		fputs(why, f);
		fclose(f);
		if (sessimage_pack_memory(dir, packed, err, sizeof err) < 0)
			log_warn("sessions: %s", err);
	}
	ckpt_dir_remove(dir);
}

/* Starts s's session again in its box after a checkpoint ended its sandbox
 * (a snapshot, a pause that was not stored): from dir with its memory, else
 * afresh with its contexts (restarted: the next cell says why). 0, or -1 with
 * err (the session cannot go on). */
static int resume_here(struct sesshost *h, struct hsess *s, const char *dir, char *err,
		       size_t errlen)
{
	struct sessopen_net net = {.netns_fd = s->egress ? sessegress_netns_fd(s->egress) : -1,
				   .env = (const char *const *)s->drv_env};
	const struct sessopen_net *np = s->egress || s->drv_env ? &net : NULL;
	char why[256];
	session_stop(s->env.s);
	s->env.s = NULL;
	if (sessopen_start(h->cfg, &h->common, s->env.lang, &s->env.limits, np, s->env.sb, dir,
			   &s->env.s, why, sizeof why) == 0)
		return 0;
	log_warn("sessions: %s: its checkpoint did not restore here: %s", s->id, why);
	cJSON *contexts = sessrun_contexts_json(&s->env);
	sessrun_env_release(&s->env);
	sessrun_env_init(&s->env);
	int rc = sessopen_start(h->cfg, &h->common, s->env.lang, &s->env.limits, np, s->env.sb,
				NULL, &s->env.s, err, errlen);
	if (rc == 0)
		rc = sessrun_contexts_restore(&s->env, contexts, err, errlen);
	if (rc == 0) {
		s->env.restored = true;
		snprintf(s->env.restored_why, sizeof s->env.restored_why,
			 "its checkpoint did not restore: %.150s", why);
	}
	cJSON_Delete(contexts);
	return rc;
}

/* Pause or snapshot: packs the session folder and stores it as an image
 * (sessimage.h) with its contexts; a pause then ends the sandbox, the session
 * row saying paused. An idle pause that fails closes the session, as an idle
 * session of idle_action close would be. */
static void image_call(struct sesshost *h, struct hsess *s, const struct sess_call *c)
{
	struct sess_reply out;
	struct strbuf packed = STRBUF_INIT;
	char err[512];
	int64_t t0 = clock_mono_ms();
	if (idle_pause_moot(h, s, c))
		return;
	sess_reply_init(&out);
	bool pause = c->kind == SCALL_PAUSE;
	cJSON *contexts = sessrun_contexts_json(&s->env);
	struct db *db = NULL;
	/* the memory first (the sandbox ends), then the files as it left them */
	char dir[PATH_MAX] = "", mwhy[300] = "";
	bool memory = false, alive = true;
	const char *no = no_memory_why(h, s);
	if (no)
		snprintf(mwhy, sizeof mwhy, "%s", no);
	else if (ckpt_dir(h, dir, sizeof dir, mwhy, sizeof mwhy)) {
		char cerr[256];
		memory = session_checkpoint(s->env.s, dir, &alive, cerr, sizeof cerr) == 0;
		if (!memory) {
			snprintf(mwhy, sizeof mwhy, "its checkpoint failed: %s", cerr);
			log_warn("sessions: %s: %s", s->id, mwhy);
		}
	}
	int64_t ckpt_ms = clock_mono_ms() - t0;
	if (sessimage_pack(s->env.sb, &packed, &out.image.files, &out.image.skipped, err,
			   sizeof err) < 0) {
		sess_reply_fail(&out, SERR_INTERNAL, "cannot pack the session folder: %s", err);
		goto answer;
	}
	if (memory && sessimage_pack_memory(dir, &packed, err, sizeof err) < 0) {
		sess_reply_fail(&out, SERR_INTERNAL, "cannot pack the session's memory: %s", err);
		goto answer;
	}
	if (!memory)
		pack_no_memory(&packed, mwhy);
	out.image.memory = memory;
	int64_t packed_ms = clock_mono_ms() - t0;
	db = db_pool_get(h->pool, 10000);
	const char *kind = pause ? "pause" : c->checkpoint ? "checkpoint" : "snapshot";
	/* connections the pool has to spare write chunks too (none: one does) */
	struct db *more[BLOBSTORE_WRITERS];
	int nmore = 0;
	while (db && nmore < BLOBSTORE_WRITERS && (more[nmore] = db_pool_get(h->pool, 0)))
		nmore++;
	int rc =
	    db ? sessimage_save(db, more, nmore, s->id, kind, c->image_name, contexts, &packed,
				out.image.files, (long long)h->cfg->session_images_mb_per_key << 20,
				(long)(clock_mono_ms() - t0), out.image.id, &out.image.stored, err,
				sizeof err)
	       : -1;
	for (int i = 0; i < nmore; i++)
		db_pool_put(h->pool, more[i]);
	if (!db)
		snprintf(err, sizeof err, "no database connection");
	if (pause && rc == 0)
		image_copy_keep(h, &packed, dir, out.image.id); /* for a resume here */
	if (rc == 1)
		sess_reply_fail(&out, SERR_IMAGE_TOO_LARGE, "%s", err);
	else if (rc < 0)
		sess_reply_fail(&out, SERR_INTERNAL, "cannot store the image: %s", err);
	out.image.size = (long long)packed.len;
	snprintf(out.image.name, sizeof out.image.name, "%s", c->image_name);
	out.image.ms = (long)(clock_mono_ms() - t0);
	log_info("sessions: %s %s image: %zu bytes (memory: %s) checkpointed in %" PRId64
		 " ms, packed in %" PRId64 " ms, stored in %" PRId64 " ms",
		 s->id, pause ? "pause" : "snapshot", packed.len, memory ? "yes" : mwhy, ckpt_ms,
		 packed_ms - ckpt_ms, out.image.ms - packed_ms);
answer:
	if (pause) {
		int n = -1;
		for (int tries = 0; tries < 20 && n < 0 && !atomic_load(&h->halt); tries++) {
			if (!db)
				db = db_pool_get(h->pool, 5000);
			n = db && out.err != SERR_NONE && c->idle ? 0
			    : db ? sessdb_pause_finish(db, c->id, &out, h->cfg->paused_retention_s,
						       err, sizeof err)
				 : -1;
			if (n < 0)
				clock_sleep_ms(500);
		}
		if (n == 1) {
			log_info("sessions: %s paused: %lld bytes (%lld stored), %ld files in %ld "
				 "ms",
				 s->id, out.image.size, out.image.stored, out.image.files,
				 out.image.ms);
			/* calls that came while it paused: no sandbox runs them now */
			hs_lock(h);
			s->stop = true;
			struct sess_call *q = s->q;
			size_t nq = s->nq;
			s->q = NULL;
			s->nq = s->aq = 0;
			hs_unlock(h);
			for (size_t i = 0; i < nq; i++) {
				finish_error(
				    h, q[i].id, q[i].kind, SERR_CONFLICT,
				    "the session was paused while this call waited; send it "
				    "again (a call on a paused session resumes it)");
				sess_call_release(&q[i]);
			}
			free(q);
		} else if (n == 0 && c->idle) {
			char why[700];
			snprintf(why, sizeof why, "it was idle and could not be paused: %s",
				 out.message);
			log_warn("sessions: %s: %s", s->id, why);
			finish(h, c->id, c->kind, &out, SESS_EXPIRED, why);
			hs_lock(h);
			s->stop = true;
			hs_unlock(h);
		}
	} else {
		finish(h, c->id, c->kind, &out, SESS_READY, NULL);
	}
	/* the session goes on (a snapshot, a pause not stored): its sandbox again */
	hs_lock(h);
	bool goes_on = !s->stop;
	hs_unlock(h);
	if (goes_on && memory) {
		char rerr[256];
		if (resume_here(h, s, dir, rerr, sizeof rerr) < 0) {
			log_warn("sessions: %s cannot go on after its checkpoint: %s", s->id, rerr);
			hs_lock(h);
			s->stop = true;
			hs_unlock(h);
		}
	}
	ckpt_dir_remove(dir);
	if (db)
		db_pool_put(h->pool, db);
	cJSON_Delete(contexts);
	strbuf_release(&packed);
	sess_reply_release(&out);
}

/* Opens the session's sandbox from image s->image_id: its files, then, when
 * the image holds its memory and this session may have it, the checkpointed
 * session restored (every context's variables); else a fresh driver in each
 * context (restarted, the first cell says why). 0, or -1 with err. */
static int open_from_image(struct sesshost *h, struct hsess *s, char *err, size_t errlen)
{
	struct strbuf packed = STRBUF_INIT;
	cJSON *contexts = NULL;
	long files = 0;
	int ret = -1;
	char dir[PATH_MAX] = "", why[300] = "";
	bool memory = false;
	int64_t t0 = clock_mono_ms();
	struct db *db = db_pool_get(h->pool, 10000);
	char copy[PATH_MAX];
	bool from_copy = false;
	image_copy_take(h, s->image_id, copy, sizeof copy);
	int rc = db ? sessimage_load(db, s->image_id, copy[0] ? copy : NULL, &packed, &contexts,
				     &from_copy, err, errlen)
		    : -1;
	if (from_copy)
		snprintf(dir, sizeof dir, "%s", copy); /* its memory files, where they lie */
	else
		ckpt_dir_remove(copy); /* the session's next pause is another image */
	/* a resumed session's processes before its pause left their output
	 * streams (proc:<id>:<pid>): new processes take ids after theirs */
	long last_pid = rc == 1 ? sessproc_last_pid(db, s->id, err, errlen) : 0;
	if (last_pid < 0)
		rc = -1;
	if (db)
		db_pool_put(h->pool, db);
	if (!db)
		snprintf(err, errlen, "no database connection");
	else if (rc == 0)
		snprintf(err, errlen, "the session's image is gone");
	if (rc != 1)
		goto out;
	int64_t loaded_ms = clock_mono_ms() - t0;
	if (sessopen_sandbox(h->backend, &s->env.limits, s->slot, &s->env.sb, err, errlen) < 0)
		goto out;
	const char *no = no_memory_why(h, s);
	if (no)
		snprintf(why, sizeof why, "%s", no);
	else if (!dir[0] && !ckpt_dir(h, dir, sizeof dir, why, sizeof why))
		log_warn("sessions: %s: %s", s->id, why);
	if (sessimage_unpack(s->env.sb, packed.buf, packed.len, !no && dir[0] ? dir : NULL,
			     from_copy, &memory, &files, err, errlen) < 0)
		goto out;
	int64_t unpacked_ms = clock_mono_ms() - t0;
	if (memory) {
		/* an image that says why it holds no memory */
		char path[PATH_MAX + 16];
		snprintf(path, sizeof path, "%s/" NO_MEMORY_FILE, dir);
		struct strbuf note = STRBUF_INIT;
		if (strbuf_read_file(&note, path, sizeof why - 1) == 0) {
			memory = false;
			snprintf(why, sizeof why, "%s", note.buf);
		}
		strbuf_release(&note);
	} else if (!no && dir[0]) {
		snprintf(why, sizeof why, "the image holds no memory");
	}
	struct sessopen_net net = {.netns_fd = s->egress ? sessegress_netns_fd(s->egress) : -1,
				   .env = (const char *const *)s->drv_env};
	const struct sessopen_net *np = s->egress || s->drv_env ? &net : NULL;
	if (memory) {
		char merr[256];
		if (sessopen_start(h->cfg, &h->common, s->env.lang, &s->env.limits, np, s->env.sb,
				   dir, &s->env.s, merr, sizeof merr) == 0 &&
		    sessrun_contexts_adopt(&s->env, contexts, merr, sizeof merr) == 0) {
			session_pids_after(s->env.s, last_pid);
			int64_t all_ms = clock_mono_ms() - t0;
			log_info("sessions: %s restored with its memory from image %s: %ld files, "
				 "%zu bytes in %" PRId64 " ms (read and checked in %" PRId64
				 " ms from %s, unpacked in %" PRId64 " ms, restored in %" PRId64
				 " ms)",
				 s->id, s->image_id, files, packed.len, all_ms, loaded_ms,
				 from_copy ? "this worker's copy (the bytes: its head; the memory "
					     "read where it lies)"
					   : "the database",
				 unpacked_ms - loaded_ms, all_ms - unpacked_ms);
			ret = 0;
			goto out;
		}
		log_warn("sessions: %s: its memory did not restore: %s", s->id, merr);
		snprintf(why, sizeof why, "its memory did not restore: %s", merr);
		session_stop(s->env.s);
		s->env.s = NULL;
		sessrun_env_release(&s->env);
		sessrun_env_init(&s->env);
	}
	if (sessopen_start(h->cfg, &h->common, s->env.lang, &s->env.limits, np, s->env.sb, NULL,
			   &s->env.s, err, errlen) < 0 ||
	    sessrun_contexts_restore(&s->env, contexts, err, errlen) < 0)
		goto out;
	session_pids_after(s->env.s, last_pid);
	s->env.restored = true;
	snprintf(s->env.restored_why, sizeof s->env.restored_why, "%.199s", why);
	log_info("sessions: %s restored from image %s: %ld files, %zu bytes in %" PRId64
		 " ms (read and checked in %" PRId64 " ms from %s)",
		 s->id, s->image_id, files, packed.len, clock_mono_ms() - t0, loaded_ms,
		 from_copy ? "this worker's copy" : "the database");
	ret = 0;
out:
	ckpt_dir_remove(dir);
	cJSON_Delete(contexts);
	strbuf_release(&packed);
	return ret;
}

/* sessrun_env.on_start of a streamed cell: its first event, written at once
 * (serve holds the answer until it sees it). */
static void cell_started(void *arg, long n)
{
	char data[48];
	snprintf(data, sizeof data, "{\"execution_count\":%ld}", n);
	outstream_event(arg, "start", data);
	outstream_flush(arg, 2000);
}

static void run_call(struct sesshost *h, struct hsess *s, const struct sess_call *c)
{
	struct sess_reply out;
	if (c->kind == SCALL_PAUSE || c->kind == SCALL_SNAPSHOT) {
		image_call(h, s, c);
		return;
	}
	if (c->kind == SCALL_CLOSE) {
		sess_reply_init(&out);
		snprintf(out.closed, sizeof out.closed, "%s", s->id);
		finish(h, c->id, c->kind, &out, SESS_CLOSED, SESS_REASON_CLIENT);
		sess_reply_release(&out);
		hs_lock(h);
		s->stop = true;
		hs_unlock(h);
		return;
	}
	int64_t t0 = clock_mono_ms();
	bool stream = c->kind == SCALL_EXECUTE && c->exec.stream;
	if (stream) {
		char id[48];
		snprintf(id, sizeof id, "cell:%" PRId64, c->id);
		if (!s->out)
			s->out = outstream_open_pooled(h->out_pool);
		outstream_begin(s->out, id);
	}
	s->env.on_output = stream ? outstream_output : NULL;
	s->env.on_start = stream ? cell_started : NULL;
	s->env.output_arg = stream ? s->out : NULL;
	bool cell = c->kind == SCALL_EXECUTE;
	if (cell) {
		hs_lock(h);
		s->running = c->id;
		hs_unlock(h);
	}
	sessrun_call(&s->env, c, &out);
	if (cell) {
		hs_lock(h);
		s->running = 0;
		hs_unlock(h);
	}
	/* the output first: the answer's trigger writes result and done after it */
	if (stream)
		outstream_flush(s->out, 2000);
	finish(h, c->id, c->kind, &out, SESS_READY, NULL);
	log_debug("sessions: %s %s call %" PRId64 " (%" PRId64 " ms)", s->id,
		  scall_kind_name(c->kind), c->id, clock_mono_ms() - t0);
	sess_reply_release(&out);
}

static void *session_main(void *arg)
{
	struct hsess *s = arg;
	struct sesshost *h = s->h;
	char err[512] = "";
	int64_t t0 = clock_mono_ms();
	int rc = s->image_id[0] ? open_from_image(h, s, err, sizeof err)
				: session_open(h, s, err, sizeof err);
	if (rc == 0 && s->image_id[0]) {
		/* moved here from its periodic checkpoint: the first cell says how old */
		struct db *cdb = db_pool_get(h->pool, 10000);
		char cerr[256];
		if (cdb && sessdb_checkpoint_age(cdb, s->id, &s->env.checkpoint_age_s, cerr,
						 sizeof cerr) == 1) {
			s->env.from_checkpoint = true;
			log_info("sessions: %s moved here from its checkpoint of %.1f s ago", s->id,
				 s->env.checkpoint_age_s);
		}
		if (cdb)
			db_pool_put(h->pool, cdb);
	}
	struct db *db = db_pool_get(h->pool, 10000);
	char dberr[256];
	int marked =
	    db ? sessdb_started(db, s->id, h->worker_id, rc == 0, err,
				!s->image_id[0] ? -1 : !s->env.restored, dberr, sizeof dberr)
	       : -1;
	if (db)
		db_pool_put(h->pool, db);
	if (rc < 0)
		log_warn("sessions: %s (%s) did not start: %s", s->id, s->env.lang->name, err);
	else if (marked != 1)
		log_warn("sessions: %s started but is no longer wanted", s->id);
	else
		log_info("sessions: %s (%s) ready in %" PRId64 " ms, slot %d, %s", s->id,
			 s->env.lang->name, clock_mono_ms() - t0, s->slot,
			 session_pooled(s->env.s) ? "from the pool" : "started");
	if (rc == 0 && marked == 1) {
		struct session_usage u0;
		session_usage(s->env.s, &u0);
		hs_lock(h);
		s->cpu0_ms = u0.cpu_ms;
		s->live = true;
		hs_unlock(h);
	}
	struct sess_call c;
	while (rc == 0 && marked == 1 && next_call(h, s, &c)) {
		run_call(h, s, &c);
		sess_call_release(&c);
	}
	log_info("sessions: %s ended after %ld cells", s->id, s->env.execution_count);
	session_free(h, s);
	return NULL;
}

/* ---- the host thread ---- */

/* sessegress's on_attempt: one row of the session's egress history. */
static void egress_attempt(void *arg, const struct sessegress_attempt *a)
{
	struct hsess *s = arg;
	char err[256];
	struct sess_egress e = {.port = a->port,
				.allowed = a->allowed,
				.bytes_out = a->bytes_out,
				.bytes_in = a->bytes_in};
	snprintf(e.method, sizeof e.method, "%s", a->method);
	snprintf(e.host, sizeof e.host, "%s", a->host);
	snprintf(e.reason, sizeof e.reason, "%s", a->reason);
	snprintf(e.addr, sizeof e.addr, "%s", a->addr);
	struct db *db = db_pool_get(s->h->pool, 5000);
	if (!db || sessdb_egress_add(db, s->id, &e, err, sizeof err) < 0)
		log_warn("sessions: %s: egress %s:%d not recorded: %s", s->id, a->host, a->port,
			 db ? err : "no database connection");
	if (db)
		db_pool_put(s->h->pool, db);
}

/* Sets the environments of s's drivers and processes (the session's own
 * variables, env), and starts its egress proxy when its policy lets anything
 * out (then its variables too). 0, or -1 with err. */
static int env_open(struct sesshost *h, struct hsess *s, const cJSON *network, const cJSON *env,
		    char *err, size_t errlen)
{
	if (sessnet_parse(network, &s->net, err, errlen) < 0)
		return -1;
	size_t n = cJSON_IsObject(env) ? (size_t)cJSON_GetArraySize(env) : 0;
	char **own = xcalloc(n + 1, sizeof *own);
	const cJSON *it;
	n = 0;
	cJSON_ArrayForEach(it, env)
	{
		if (it->string && cJSON_IsString(it))
			own[n++] = xasprintf("%s=%s", it->string, it->valuestring);
	}
	/* a later NAME= replaces an earlier one (the session's own win over the
	 * judge's, the proxy's over both) */
	s->proc_env =
	    sessproc_env((const char *const *)h->common.proc_env, (const char *const *)own);
	if (n)
		s->drv_env = own;
	else
		xstrvfree(own);
	if (s->net.mode == SESSNET_NONE)
		return 0;
	struct sessegress_options o = {
	    .policy = s->net,
	    .hosts = h->cfg->egress_hosts,
	    .addr_allow = h->cfg->egress_addr_allow,
	    .max_bytes = (long long)h->cfg->egress_max_mb << 20,
	    .max_conns = h->cfg->egress_max_connections,
	    .on_attempt = egress_attempt,
	    .arg = s,
	};
	if (sessegress_start(&o, &s->egress, err, errlen) < 0)
		return -1;
	static const char *const vars[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
					   "https_proxy"};
	char *proxy[5] = {NULL};
	for (size_t i = 0; i < 4; i++)
		proxy[i] = xasprintf("%s=http://127.0.0.1:%d", vars[i], sessegress_port(s->egress));
	char **v = sessproc_env((const char *const *)s->proc_env, (const char *const *)proxy);
	xstrvfree(s->proc_env);
	s->proc_env = v;
	v = sessproc_env((const char *const *)s->drv_env, (const char *const *)proxy);
	xstrvfree(s->drv_env);
	s->drv_env = v;
	for (size_t i = 0; i < 4; i++)
		free(proxy[i]);
	return 0;
}

/* Starts the thread of a claimed session. Returns 0, or -1 (then it is failed). */
static int adopt(struct sesshost *h, struct db *db, const char *id, const char *language,
		 const cJSON *limits, const cJSON *network, const cJSON *env, const char *image_id)
{
	char neterr[256];
	char err[256];
	struct hsess *s = xcalloc(1, sizeof *s);
	s->h = h;
	snprintf(s->id, sizeof s->id, "%s", id);
	snprintf(s->image_id, sizeof s->image_id, "%s", image_id);
	s->env = (struct sessrun_env){.cfg = h->cfg, .langs = h->langs, .install = &h->inst};
	s->env.lang = lang_find(h->langs, language);
	sessreq_limits_load(limits, &s->env.limits);
	s->slot_fd = -1;
	pthread_cond_init(&s->cond, NULL);
	const char *why = NULL;
	if (!s->env.lang || !s->env.lang->session_argv)
		why = "the worker lacks the language";
	else if (env_open(h, s, network, env, neterr, sizeof neterr) < 0)
		why = neterr;
	else if ((s->slot = slots_take(h->cfg->box_root, SLOT_SESSION, &s->slot_fd)) < 0)
		why = "no sandbox slot is free";
	s->env.drv_env = (const char *const *)s->drv_env;
	s->procs = sessproc_new(h->out_pool, id, (const char *const *)s->proc_env);
	s->watches = sesswatch_new(h->out_pool, id);
	if (s->env.lang)
		sessrun_env_init(&s->env);
	hs_lock(h);
	s->next = h->list;
	h->list = s;
	h->nheld++;
	hs_unlock(h);
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (!why && pthread_create(&t, &at, session_main, s))
		why = "cannot start a thread";
	pthread_attr_destroy(&at);
	if (!why)
		return 0;
	sessdb_started(db, id, h->worker_id, false, why, -1, err, sizeof err);
	session_free(h, s);
	return -1;
}

static void claim_sessions(struct sesshost *h, struct db *db)
{
	char err[256], id[37], language[32], image_id[37] = "";
	for (;;) {
		hs_lock(h);
		bool room = h->nheld < h->cfg->sessions_per_worker && !atomic_load(&h->halt);
		hs_unlock(h);
		cJSON *limits = NULL, *network = NULL, *env = NULL;
		int rc = room ? sessdb_claim(db, h->worker_id, id, language, &limits, &network,
					     &env, image_id, err, sizeof err)
			      : 0;
		if (rc < 0)
			log_debug("sessions: %s", err);
		if (rc != 1)
			return;
		adopt(h, db, id, language, limits, network, env, image_id);
		cJSON_Delete(limits);
		cJSON_Delete(network);
		cJSON_Delete(env);
	}
}

static struct hsess *find_locked(struct sesshost *h, const char *id)
{
	for (struct hsess *s = h->list; s; s = s->next)
		if (!strcmp(s->id, id))
			return s;
	return NULL;
}

/* A process call, in a thread of its own beside its session's cells. */
struct quick {
	struct sesshost *h;
	struct hsess *s;
	struct sess_call call;
};

/* An interrupt call: the session's running cell, if it is the one asked
 * for, gets interrupted (under h's lock, so that the cell it names cannot end
 * and another begin in between). */
static void interrupt_call(struct sesshost *h, struct hsess *s, const struct sess_call *c,
			   struct sess_reply *out)
{
	sess_reply_init(out);
	hs_lock(h);
	if (s->running && (!c->target || c->target == s->running))
		out->interrupted = session_interrupt(s->env.s);
	hs_unlock(h);
}

static void *quick_main(void *arg)
{
	struct quick *q = arg;
	struct sess_reply out;
	if (q->call.kind == SCALL_INTERRUPT)
		interrupt_call(q->h, q->s, &q->call, &out);
	else if (q->call.kind == SCALL_WATCH_START || q->call.kind == SCALL_WATCH_EVENTS ||
		 q->call.kind == SCALL_WATCH_STOP)
		sesswatch_call(q->s->watches, q->s->env.sb, &q->call, &out);
	else
		sessproc_call(q->s->procs, q->s->env.s, &q->call, &out);
	finish(q->h, q->call.id, q->call.kind, &out, SESS_READY, NULL);
	sess_reply_release(&out);
	sess_call_release(&q->call);
	hs_lock(q->h);
	q->s->quick--;
	pthread_cond_broadcast(&q->h->gone);
	hs_unlock(q->h);
	free(q);
	return NULL;
}

/* Starts process call c (taken) beside its session's cells, or answers it. */
static void run_quick(struct sesshost *h, struct sess_call *c)
{
	hs_lock(h);
	struct hsess *s = find_locked(h, c->session_id);
	bool ok = s && !s->stop && s->env.s && s->quick < QUICK_MAX;
	if (ok)
		s->quick++;
	hs_unlock(h);
	if (!ok) {
		finish_error(
		    h, c->id, c->kind, s && s->quick >= QUICK_MAX ? SERR_LIMIT : SERR_SESSION_LOST,
		    s && s->quick >= QUICK_MAX ? "too many process calls of this session at once"
					       : "this worker no longer holds the session");
		return;
	}
	struct quick *q = xcalloc(1, sizeof *q);
	q->h = h;
	q->s = s;
	q->call = *c;
	sess_call_init(c, c->kind);
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, quick_main, q))
		quick_main(q); /* no thread: here */
	pthread_attr_destroy(&at);
}

/* Claims the pending calls of our sessions and queues each on its session. */
static void dispatch_calls(struct sesshost *h, struct db *db)
{
	char err[256];
	for (;;) {
		struct sess_claimed *calls = NULL;
		int n = sessdb_calls_claim(db, h->worker_id, CLAIM_CALLS, &calls, err, sizeof err);
		if (n < 0)
			log_debug("sessions: %s", err);
		for (int i = 0; i < n; i++) {
			struct sess_call *c = &calls[i].call;
			if (calls[i].load_error[0]) {
				log_warn("sessions: call %" PRId64 ": %s", c->id,
					 calls[i].load_error);
				finish_error(h, c->id, c->kind, SERR_INTERNAL, calls[i].load_error);
				sess_claimed_release(&calls[i]);
				continue;
			}
			int64_t id = c->id;
			if (!scall_kind_serial(c->kind)) {
				run_quick(h, c);
				sess_claimed_release(&calls[i]);
				continue;
			}
			hs_lock(h);
			struct hsess *s = find_locked(h, c->session_id);
			if (s && !s->stop) {
				if (s->nq == s->aq) {
					s->aq = s->aq ? 2 * s->aq : 8;
					s->q = xreallocarray(s->q, s->aq, sizeof *s->q);
				}
				s->q[s->nq++] = *c;
				pthread_cond_signal(&s->cond);
				memset(c, 0, sizeof *c);
			}
			hs_unlock(h);
			if (c->id) {
				finish_error(h, id, c->kind, SERR_SESSION_LOST,
					     "this worker no longer holds the session");
				sess_claimed_release(&calls[i]);
			}
		}
		free(calls);
		if (n < CLAIM_CALLS)
			return;
	}
}

/* Ends the threads of sessions that are no longer open in the database
 * (expired, lost, closed elsewhere). */
static void reconcile(struct sesshost *h, struct db *db)
{
	char err[256];
	cJSON *open = NULL;
	int64_t now = clock_mono_ms();
	if (now >= h->next_sweep_ms) {
		/* every worker sweeps, at most every 10 s: the rows are few */
		h->next_sweep_ms = now + 10000;
		if (sessdb_paused_sweep(db, err, sizeof err) < 0 ||
		    sessimage_sweep(db, err, sizeof err) < 0)
			log_debug("sessions: %s", err);
	}
	/* a session may ask for checkpoints when judge.ini takes none */
	if (h->backend == SANDBOX_GVISOR &&
	    sessdb_checkpoint_due(db, h->worker_id, h->cfg->checkpoint_interval_s, err,
				  sizeof err) < 0)
		log_debug("sessions: %s", err);
	if (sessdb_idle_pause(db, h->worker_id, err, sizeof err) < 0 ||
	    sessdb_expire(db, h->worker_id, err, sizeof err) < 0 ||
	    sessdb_open_ids(db, h->worker_id, &open, err, sizeof err) < 0) {
		log_debug("sessions: %s", err);
		return;
	}
	hs_lock(h);
	for (struct hsess *s = h->list; s; s = s->next) {
		bool found = false;
		const cJSON *it;
		cJSON_ArrayForEach(it, open) found = found || !strcmp(it->valuestring, s->id);
		if (!found && !s->stop) {
			s->stop = true;
			pthread_cond_signal(&s->cond);
		}
	}
	hs_unlock(h);
	cJSON_Delete(open);
}

/* Connects, LISTENs on both channels; NULL (logged once) to retry. */
static struct db *host_connect(struct sesshost *h, bool *down)
{
	struct db *db = NULL;
	char err[256], chan[48];
	snprintf(chan, sizeof chan, "judge_w%" PRId64, h->worker_id);
	if (db_open(&db, h->url, 1000, err, sizeof err) < 0) {
		if (!*down)
			log_warn("sessions: %s", err);
		*down = true;
		return NULL;
	}
	db_set_reconnect_ms(db, 1000);
	if (db_listen(db, chan) < 0 || db_listen(db, SESS_CHANNEL_NEW) < 0) {
		log_warn("sessions: cannot listen: %s", db_error(db));
		db_close(db);
		return NULL;
	}
	*down = false;
	return db;
}

/* The heartbeat has a thread and a connection of its own: claims, starts and
 * calls that are slow (a loaded host, a slow database) must not make the
 * worker look dead. */
static void *beat_main(void *arg)
{
	struct sesshost *h = arg;
	struct db *db = NULL;
	char err[256];
	while (!atomic_load(&h->halt)) {
		if (!db && db_open(&db, h->url, 1000, err, sizeof err) < 0)
			db = NULL;
		if (db) {
			db_set_reconnect_ms(db, 1000);
			if (sessdb_heartbeat(db, h->worker_id, false, err, sizeof err) < 0)
				log_debug("sessions: %s", err);
		}
		for (int i = 0; i < 10 && !atomic_load(&h->halt); i++)
			clock_sleep_ms(TICK_MS / 10);
	}
	db_close(db);
	return NULL;
}

/* The reason a session over its CPU budget is closed with. */
static void budget_reason(char *out, size_t len, long cpu_ms, long budget_s)
{
	snprintf(out, len,
		 SESS_REASON_CPU_BUDGET
		 ": %ld.%01ld s of CPU time, every process included, over the "
		 "%ld s allowed",
		 cpu_ms / 1000, cpu_ms % 1000 / 100, budget_s);
}

/* Reads what each live session used (its sandbox's cgroup), stores it for
 * GET /v1/sessions/{id}, and closes the sessions past their CPU budget: the
 * row first (the API shows closed with the reason, open calls answer
 * session_closed), then the sandbox is killed, a cell in progress with it. */
static void usage_pass(struct sesshost *h, struct db *db)
{
	char err[256];
	hs_lock(h);
	size_t n = 0, k = 0;
	for (struct hsess *s = h->list; s; s = s->next)
		n += s->live && !s->stop;
	struct hsess **pinned = xcalloc(n ? n : 1, sizeof *pinned);
	bool *over = xcalloc(n ? n : 1, sizeof *over);
	long *cpu = xcalloc(n ? n : 1, sizeof *cpu);
	/* pinned like a process call: session_free waits for them */
	for (struct hsess *s = h->list; s && k < n; s = s->next)
		if (s->live && !s->stop) {
			s->quick++;
			pinned[k++] = s;
		}
	hs_unlock(h);
	cJSON *all = cJSON_CreateObject();
	for (size_t i = 0; i < k; i++) {
		struct session_usage u;
		long budget_s = pinned[i]->env.limits.cpu_budget_s;
		if (session_usage(pinned[i]->env.s, &u) < 0 && !u.cpu_ms)
			continue;
		u.cpu_ms = u.cpu_ms > pinned[i]->cpu0_ms ? u.cpu_ms - pinned[i]->cpu0_ms : 0;
		cJSON *o = cJSON_AddObjectToObject(all, pinned[i]->id);
		/* when it was read (a time, not a duration: readers take rates from it) */
		cJSON_AddNumberToObject(o, "sampled_at_ms", (double)clock_real_ms());
		cJSON_AddNumberToObject(o, "cpu_ms", (double)u.cpu_ms);
		cJSON_AddNumberToObject(o, "memory_kb", (double)u.memory_kb);
		cJSON_AddNumberToObject(o, "processes", (double)u.tasks);
		cJSON_AddNumberToObject(o, "pids_refused", (double)u.pids_refused);
		cJSON_AddNumberToObject(o, "throttled_ms", (double)u.throttled_ms);
		if (u.disk_kb >= 0)
			cJSON_AddNumberToObject(o, "disk_kb", (double)u.disk_kb);
		/* the share of one CPU since the previous reading (about a second) */
		int64_t now = clock_mono_ms(), dt = now - pinned[i]->last_read_ms;
		int64_t dcpu = u.cpu_ms - pinned[i]->last_cpu_ms;
		if (pinned[i]->last_read_ms > 0 && dt > 0)
			cJSON_AddNumberToObject(o, "cpu_pct",
						(double)((dcpu > 0 ? dcpu : 0) * 1000 / dt) / 10);
		pinned[i]->last_cpu_ms = u.cpu_ms;
		pinned[i]->last_read_ms = now;
		if (budget_s > 0)
			cJSON_AddNumberToObject(o, "cpu_budget_ms", (double)budget_s * 1000);
		cpu[i] = u.cpu_ms;
		over[i] = budget_s > 0 && u.cpu_ms >= budget_s * 1000;
	}
	if (cJSON_GetArraySize(all) > 0 &&
	    sessdb_usage_store(db, h->worker_id, all, err, sizeof err) < 0)
		log_debug("sessions: %s", err);
	cJSON_Delete(all);
	for (size_t i = 0; i < k; i++) {
		struct hsess *s = pinned[i];
		if (over[i]) {
			char reason[256];
			budget_reason(reason, sizeof reason, cpu[i], s->env.limits.cpu_budget_s);
			if (sessdb_end(db, s->id, SESS_CLOSED, reason, err, sizeof err) < 0) {
				log_warn("sessions: %s: %s", s->id, err);
				over[i] = false; /* the next pass tries again */
			} else {
				log_info("sessions: %s closed: %s", s->id, reason);
				session_kill(s->env.s);
			}
		}
		hs_lock(h);
		if (over[i]) {
			s->stop = true;
			pthread_cond_signal(&s->cond);
		}
		s->quick--;
		pthread_cond_broadcast(&h->gone);
		hs_unlock(h);
	}
	free(pinned);
	free(over);
	free(cpu);
}

static void tick(struct sesshost *h, struct db *db)
{
	usage_pass(h, db);
	reconcile(h, db);
	dispatch_calls(h, db);
	claim_sessions(h, db);
}

static void *host_main(void *arg)
{
	struct sesshost *h = arg;
	struct db *db = NULL;
	bool down = false;
	int64_t next_tick = 0;
	while (!atomic_load(&h->halt)) {
		if (!db && !(db = host_connect(h, &down))) {
			clock_sleep_ms(500);
			continue;
		}
		int64_t now = clock_mono_ms();
		if (now >= next_tick) {
			tick(h, db);
			next_tick = now + TICK_MS;
		}
		struct db_notify n;
		int rc = db_wait_notify(db, (int)(next_tick - now), &n);
		if (rc < 0) {
			if (!down)
				log_warn("sessions: lost the database: %s", db_error(db));
			down = true;
			db_close(db);
			db = NULL;
			continue;
		}
		if (rc == 2) {
			next_tick = 0; /* calls and sessions may have come meanwhile */
			continue;
		}
		if (rc == 1 && !strcmp(n.channel, SESS_CHANNEL_NEW))
			claim_sessions(h, db);
		else if (rc == 1)
			dispatch_calls(h, db);
	}
	db_close(db);
	return NULL;
}

/* The package manager of a language with one (its package_* keys). */
static void manager_of(const struct lang *l, struct install_manager *m)
{
	m->argv = (const char *const *)l->package_argv;
	m->ro_paths = (const char *const *)l->ro_paths;
	m->dir = l->package_dir;
}

/* pip and npm of the worker's languages, for installs into sessions. */
static void install_setup(struct sesshost *h)
{
	const struct judge_config *cfg = h->cfg;
	const struct lang *pip = lang_by_package_manager(h->langs, "pip");
	const struct lang *npm = lang_by_package_manager(h->langs, "npm");
	struct install_options *o = &h->inst;
	o->pip_index_url = cfg->pip_index_url;
	o->npm_registry = cfg->npm_registry;
	h->inst_strings[0] = xasprintf("%s/install-cache", cfg->state_dir);
	o->cache_dir = h->inst_strings[0];
	/* the proxy makes the cache folder, not its parents */
	if (mkdir(cfg->state_dir, 0755) < 0 && errno != EEXIST)
		log_warn("sessions: cannot create '%s': %s (installs fail)", cfg->state_dir,
			 strerror(errno));
	if (pip)
		manager_of(pip, &o->pip);
	if (npm)
		manager_of(npm, &o->npm);
	struct limits_policy p;
	limits_policy_from_config(cfg, &p);
	limits_install(&p, &o->limits);
}

int sesshost_start(struct sesshost **out, const struct judge_config *cfg,
		   const struct lang_registry *langs, enum sandbox_backend backend, const char *url,
		   char *err, size_t errlen)
{
	struct sesshost *h = xcalloc(1, sizeof *h);
	h->cfg = cfg;
	h->langs = langs;
	h->backend = backend;
	h->url = xstrdup(url);
	pthread_mutex_init(&h->lock, NULL);
	clock_cond_init(&h->gone);
	install_setup(h);
	sessopen_common_init(&h->common, langs, &h->inst);
	ckpt_sweep(cfg->box_root);
	char host[64] = "localhost", name[128];
	gethostname(host, sizeof host - 1);
	snprintf(name, sizeof name, "%s:%d", host, (int)getpid());
	struct db *db = NULL;
	if (db_pool_new(&h->pool, url, 4, 10000, err, errlen) < 0 ||
	    db_pool_new(&h->out_pool, url, 4, 10000, err, errlen) < 0 ||
	    db_open(&db, url, 10000, err, errlen) < 0 ||
	    sessdb_worker_register(db, name, host, cfg->sessions_per_worker, &h->worker_id, err,
				   errlen) < 0)
		goto fail;
	db_close(db);
	db = NULL;
	if (pthread_create(&h->thread, NULL, host_main, h)) {
		snprintf(err, errlen, "cannot start the sessions thread");
		goto fail;
	}
	h->started = true;
	h->beating = pthread_create(&h->beat, NULL, beat_main, h) == 0;
	sessopen_prepare(cfg, &h->common, langs, backend);
	log_info("sessions: worker %" PRId64 " (%s) holds up to %ld sessions", h->worker_id, name,
		 cfg->sessions_per_worker);
	*out = h;
	return 0;
fail:
	db_close(db);
	sesshost_stop(h);
	return -1;
}

void sesshost_stop(struct sesshost *h)
{
	if (!h)
		return;
	atomic_store(&h->halt, true);
	if (h->started)
		pthread_join(h->thread, NULL);
	if (h->beating)
		pthread_join(h->beat, NULL);
	/* say so first: readers see the sessions lost before the sandboxes go */
	struct db *db = h->pool && h->worker_id ? db_pool_get(h->pool, 2000) : NULL;
	char err[256];
	if (db) {
		db_set_reconnect_ms(db, 1000);
		if (sessdb_heartbeat(db, h->worker_id, true, err, sizeof err) < 0 ||
		    sessdb_reap_lost(db, h->cfg->worker_timeout_s, err, sizeof err) < 0)
			log_warn("sessions: %s", err);
		db_pool_put(h->pool, db);
	}
	hs_lock(h);
	for (struct hsess *s = h->list; s; s = s->next) {
		s->stop = true;
		pthread_cond_signal(&s->cond);
	}
	/* a cell in progress ends within its wall limit */
	struct timespec until = clock_mono_after(30000);
	while (h->nheld > 0)
		if (pthread_cond_timedwait(&h->gone, &h->lock, &until))
			break;
	long left = h->nheld;
	hs_unlock(h);
	if (left) {
		log_warn("sessions: %ld sessions did not end in time", left);
		return; /* their threads still use h: the process ends soon */
	}
	if (h->cfg) {
		char copies[PATH_MAX];
		image_copy_path(h, copies, sizeof copies);
		ckpt_dir_remove(copies);
	}
	if (h->pool)
		db_pool_free(h->pool);
	if (h->out_pool)
		db_pool_free(h->out_pool);
	for (int i = 0; i < 4; i++)
		free(h->inst_strings[i]);
	sessopen_common_release(&h->common);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->gone);
	free(h->url);
	free(h);
}
