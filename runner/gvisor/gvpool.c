/* gvpool: gVisor sandboxes started ahead of need, one pool per runtime, and their
 * end — the half of the gVisor backend that is not one run (see gvisor.c).
 *
 * How it works. A cold `runsc run` costs ~200 ms here, so sandboxes are created
 * *and started* ahead of need, in a pool per runtime signature (the spec's
 * ro_paths and the warm-up its language gives: warm_argv, preload), pool_size of
 * each, filled from the second run of a signature on (or at once after
 * gvpool_prepare). A pool entry is an OCI bundle (oci.c) whose process is
 * box_init (runner/gvisor/init/box_init.c), started with `runsc run --detach`; init
 * warms the runtime up (as nobody, before any job exists), says 'R' and waits on
 * its stdin, a pipe held by this process. A refill thread (at a low CPU
 * priority, raised when the entry is taken) starts new ones in the background.
 *
 * The end of an entry: we SIGKILL every process of the sandbox's cgroup
 * (sentry, gofer, stubs), unmount the box and hand the entry to a reaper thread,
 * which runs `runsc delete --force` and removes the bundle and the cgroups
 * runsc made (cg.c, every hierarchy). Nothing waits on `runsc wait`, `state`
 * or `delete` in the latency path.
 *
 * Reuse (gvpool_park): an entry whose workspace ended cleanly may wait, its box
 * unmounted, in an idle list for a later workspace of the same reuse key and
 * runtime signature (gvpool_take_idle). init blocks on its job pipe meanwhile:
 * an idle entry costs memory, no CPU. The list holds at most idle_max entries
 * (the oldest are discarded first); the reapers, which otherwise sleep, wake
 * when the first parked entry reaches the end of its life (reuse_us from its
 * start) and discard it, so nothing idles forever.
 */
#define _GNU_SOURCE
#include "runner/gvisor/gvpool.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "runner/backend.h"
#include "runner/gvisor/gvhost.h"
#include "runner/gvisor/oci.h"

#define MAX_POOLS 16
/* Every runsc subcommand gets the same global flags (start without --network=none
 * fails). Mounts other than the root may be cached by the sentry without
 * revalidation (exclusive): runtimes are read-only, and the box of a run is only
 * ever seen by that one sandbox, which walks it first after it is mounted. */
#define GLOBAL_FLAGS "--network=none", "--file-access-mounts=exclusive"
/* Live sandboxes (sandbox_start: sessions) share the box with the host while they
 * run: the host's writes must be seen inside at once, and the program's outside,
 * so their mounts are revalidated (shared). The read-only runtime is too: a few
 * per cent on imports, measured. */
#define LIVE_FLAGS "--network=none", "--file-access-mounts=shared"
/* A live sandbox of a session with an egress policy: the sentry's sockets are host
 * sockets in the namespace its spec names (the proxy's, only lo and the listener). */
#define HOSTNET_FLAGS "--network=host", "--file-access-mounts=shared"
#define LIVE_SIG      "live|"
#define REAPERS	      2
/* starts that hang in a row before they fail at once for a while (entry_start) */
#define HUNG_TRIP    2
#define HUNG_WAIT_MS 60000

struct gv_pool {
	char *sig;	  /* ro_paths and init_args joined: the pool's key */
	char **ro_paths;  /* NULL-terminated copy */
	char **init_args; /* the container's process: box_init and its warm-up arguments */
	bool shared;	  /* a pool of live sandboxes (LIVE_FLAGS) */
	struct gv_entry *ready;
	int nready, starting;
	int64_t last_use_us;
	/* runs taken so far; the pool fills from the second one on (or once
	 * gvpool_prepare named it): a one-shot `judge run` starts nothing extra */
	unsigned long uses;
	bool wanted;
	int64_t retry_us; /* after a failed start: no refill before this time */
	/* a container created (not started) for the next restore of this
	 * runtime, so that a restore only runs `runsc restore` (gvpool_want_restore) */
	struct gv_entry *spare;
	bool spare_wanted, spare_starting;
};

static struct {
	struct gvpool_env env; /* a copy of gvpool_start's */
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t refill_cond, reap_cond;
	struct gv_pool pools[MAX_POOLS];
	int npools;
	struct gv_entry *dead; /* reaper queue */
	struct gv_entry *idle; /* parked entries, the most recently parked first */
	int nidle;
	int reaping;
	bool stopping;
	pthread_t refiller, reapers[REAPERS];
	pthread_once_t cond_once; /* refill_cond measures on CLOCK_MONOTONIC from then on */
	bool threads;
	unsigned long serial;
	/* starts that hung in a row (none got ready between them), the last
	 * one's error, and until when starts now fail at once (entry_start) */
	int hung;
	char hung_why[256];
	int64_t hung_until_ms;
} gp = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .refill_cond = PTHREAD_COND_INITIALIZER,
    .cond_once = PTHREAD_ONCE_INIT,
    .reap_cond = PTHREAD_COND_INITIALIZER,
};

static int runsc_flags(const struct gvpool_env *env, bool host_net, const char *a1, const char *a2,
		       const char *a3, const char *a4)
{
	char rootopt[PATH_MAX + 8];
	gvhost_fmt(rootopt, sizeof(rootopt), "--root=%s", env->root);
	const char *plain[] = {env->runsc, rootopt, GLOBAL_FLAGS, env->platform, a1,
			       a2,	   a3,	    a4,		  NULL};
	const char *host[] = {env->runsc, rootopt, HOSTNET_FLAGS, env->platform, a1, a2,
			      a3,	  a4,	   NULL};
	pid_t pid;
	if (gvhost_spawn_group(host_net ? host : plain, -1, -1, -1, &pid) < 0)
		return -1;
	int st = gvhost_wait_exit_ms(pid, GVPOOL_RUNSC_TIMEOUT_MS);
	if (st == GVHOST_WAIT_TIMEOUT)
		log_error("gvisor: runsc %s %s killed after %d s", a1, a3 ? a3 : "",
			  GVPOOL_RUNSC_TIMEOUT_MS / 1000);
	return st;
}

int gvpool_runsc(const struct gvpool_env *env, const char *a1, const char *a2, const char *a3)
{
	return runsc_flags(env, false, a1, a2, a3, NULL);
}

int gvpool_runsc_on(const struct gvpool_env *env, const struct gv_entry *e, const char *a1,
		    const char *a2, const char *a3)
{
	return runsc_flags(env, e->host_net, a1, a2, a3, NULL);
}

int gvpool_checkpoint(const struct gvpool_env *env, const struct gv_entry *e, const char *dir)
{
	char opt[PATH_MAX + 16];
	gvhost_fmt(opt, sizeof(opt), "--image-path=%s", dir);
	/* uncompressed: the blob store deflates the image once anyway, and runsc's
	 * own flate tripled the time of a checkpoint of 100 MB (and doubled its
	 * restore), measured */
	return runsc_flags(env, e->host_net, "checkpoint", "--compression=none", opt, e->id);
}

/* ---- entries ------------------------------------------------------------ */

static void entry_free(struct gv_entry *e)
{
	free(e->sig);
	free(e->reuse_key);
	if (e->in_fd >= 0)
		close(e->in_fd);
	if (e->out_fd >= 0)
		close(e->out_fd);
	if (e->err_fd >= 0)
		close(e->err_fd);
	free(e);
}

/* The cgroups of e's container (attached on first use, once runsc made them), or
 * NULL when they are not there. Only the thread holding e calls it. */
struct cg *gvpool_cg(struct gv_entry *e)
{
	if (!e->cg_open && gp.env.cg_ready && cg_open(&gp.env.cg_root, e->id, &e->cg) == 0)
		e->cg_open = true;
	return e->cg_open ? &e->cg : NULL;
}

/* SIGKILLs every process of the container (sentry, gofer, stubs): immediate, no
 * runsc, no waiting. Their pids are kept: we are their subreaper, the reaper
 * collects them. */
void gvpool_kill(struct gv_entry *e)
{
	struct cg *cg = gvpool_cg(e);
	pid_t pids[256];
	int n = cg ? cg_list(cg, false, pids, 256) : 0;
	for (int i = 0; i < n; i++) {
		kill(pids[i], SIGKILL);
		if (e->npids < (int)(sizeof(e->pids) / sizeof(e->pids[0])))
			e->pids[e->npids++] = pids[i];
	}
	if (e->sandbox_pid > 0)
		kill(e->sandbox_pid, SIGKILL);
}

/* Collects the killed processes of a container (orphans of runsc, reparented to
 * us as their subreaper: see gvisor_global_init). Only pids of this container. */
static void entry_collect(struct gv_entry *e)
{
	if (e->sandbox_pid > 0 && e->npids < (int)(sizeof(e->pids) / sizeof(e->pids[0])))
		e->pids[e->npids++] = e->sandbox_pid;
	/* SIGKILLed already: they go within milliseconds; a pid that is not our child
	 * (ECHILD) is someone else's to reap */
	int64_t until = clock_mono_us() + 2000000;
	for (int i = 0; i < e->npids; i++) {
		for (;;) {
			pid_t w = waitpid(e->pids[i], NULL, WNOHANG | __WALL);
			if (w != 0 && !(w < 0 && errno == EINTR))
				break;
			if (clock_mono_us() > until)
				break;
			clock_sleep_ms(2);
		}
	}
	e->npids = 0;
}

/* Sets the CPU priority of every thread of the container (the pool starts them
 * at a low one so that they do not slow down the runs in progress). */
static void entry_renice(struct gv_entry *e, int prio)
{
	struct cg *cg = gvpool_cg(e);
	pid_t tids[1024];
	int n = cg ? cg_list(cg, true, tids, 1024) : 0;
	for (int i = 0; i < n; i++)
		setpriority(PRIO_PROCESS, (id_t)tids[i], prio);
}

/* Unmounts the box bound at <dir>/b/box-<box_seq> and removes its mount point.
 * False when it stays mounted. */
static bool entry_unmount_box(struct gv_entry *e)
{
	if (!e->box_mounted)
		return true;
	char path[PATH_MAX];
	gvhost_fmt(path, sizeof(path), "%s/b/box-%u", e->dir, e->box_seq);
	if (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0) {
		if (!sandbox_aborting()) /* else it is gone already */
			log_warn("gvisor: cannot unmount '%s': %s", path, strerror(errno));
		return false;
	}
	rmdir(path);
	e->box_mounted = false;
	return true;
}

int gvpool_bind_box(struct gv_entry *e, const char *box, char *err, size_t errlen)
{
	if (!entry_unmount_box(e)) {
		gvhost_fmt(err, errlen, "cannot unmount the box of %s", e->id);
		return -1;
	}
	char path[PATH_MAX];
	e->box_seq++;
	gvhost_fmt(path, sizeof(path), "%s/b/box-%u", e->dir, e->box_seq);
	if ((mkdir(path, 0755) < 0 && errno != EEXIST) ||
	    mount(box, path, NULL, MS_BIND, NULL) < 0) {
		gvhost_fmt(err, errlen, "cannot bind the box at '%s': %s", path, strerror(errno));
		rmdir(path);
		return -1;
	}
	e->box_mounted = true;
	return 0;
}

/* Hands e to the reapers (they delete the container and its files). */
void gvpool_discard(struct gv_entry *e)
{
	if (e->in_fd >= 0)
		close(e->in_fd), e->in_fd = -1;
	gvpool_kill(e);
	entry_unmount_box(e);
	pthread_mutex_lock(&gp.lock);
	e->next = gp.dead;
	gp.dead = e;
	pthread_cond_signal(&gp.reap_cond);
	pthread_mutex_unlock(&gp.lock);
}

/* Deletes the container and everything it left: runs in a reaper thread. */
static void entry_reap(struct gv_entry *e)
{
	int64_t t0 = clock_mono_us();
	gvpool_kill(e); /* the entry may come straight from a pool */
	/* reap first: runsc delete polls for the sandbox process to vanish, and a
	 * zombie never does (~1.5 s wasted per container) */
	entry_collect(e);
	/* what the sandbox cost the host (sentry, gofer, stubs), for tuning */
	long long cpu_us = -1000;
	struct cg *cg = gvpool_cg(e);
	if (cg)
		cg_cpu_us(cg, &cpu_us);
	int r = gvpool_runsc_on(&gp.env, e, "delete", "--force", e->id);
	gvhost_reap_orphans();
	/* what runsc leaves of a container that never started (its start killed),
	 * or when its delete failed (it does, now and then, exit 128): every process
	 * is dead and the cgroups go below, so its state is only files */
	char leftover[PATH_MAX];
	gvhost_fmt(leftover, sizeof(leftover), "%s/%s_sandbox:%s.lock", gp.env.root, e->id, e->id);
	unlink(leftover);
	gvhost_fmt(leftover, sizeof(leftover), "%s/%s_sandbox:%s.state", gp.env.root, e->id, e->id);
	unlink(leftover);
	gvhost_fmt(leftover, sizeof(leftover), "%s/runsc-%s.sock", gp.env.root, e->id);
	unlink(leftover);
	/* what runsc left, in every hierarchy (also after a failed create, where
	 * cg_open finds none of ours but others may hold it) */
	if (!cg && gp.env.cg_ready)
		cg_open(&gp.env.cg_root, e->id, &e->cg), cg = &e->cg;
	if (cg)
		cg_remove(cg);
	e->cg_open = false;
	/* in case: nothing may stay mounted */
	if (e->box_mounted) {
		char path[PATH_MAX];
		gvhost_fmt(path, sizeof(path), "%s/b/box-%u", e->dir, e->box_seq);
		umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW);
		e->box_mounted = false;
	}
	gvhost_rm_tree(e->dir);
	if (r != 0)
		log_debug("gvisor: runsc delete %s exited %d", e->id, r);
	log_debug("gvisor: reaped %s in %lld ms; it used %lld ms of CPU over %u runs", e->id,
		  (long long)(clock_mono_us() - t0) / 1000, cpu_us / 1000, e->runs);
	entry_free(e);
}

/* Moves the parked entries past their life (all of them when all) to the
 * reaper queue; gp.lock held. Returns when the next one left ends (0: none). */
static int64_t expire_idle(bool all)
{
	int64_t now = clock_mono_us(), next = 0;
	for (struct gv_entry **pp = &gp.idle; *pp;) {
		struct gv_entry *e = *pp;
		int64_t end = e->started_us + gp.env.reuse_us;
		if (all || end <= now) {
			*pp = e->next;
			gp.nidle--;
			e->next = gp.dead;
			gp.dead = e;
			continue;
		}
		if (!next || end < next)
			next = end;
		pp = &e->next;
	}
	return next;
}

static void *reaper_main(void *arg)
{
	(void)arg;
	/* deleting is background work: below the runs (nice is per thread on Linux,
	 * and runsc inherits it). Without a pool (a one-shot `judge run`) it is what
	 * the exit waits for: normal priority. */
	if (gp.env.pool_size > 0)
		setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
	pthread_mutex_lock(&gp.lock);
	for (;;) {
		while (!gp.dead && !gp.stopping) {
			/* parked entries end with their life: wake for the first one */
			int64_t next = expire_idle(false);
			if (gp.dead)
				break;
			if (!next) {
				pthread_cond_wait(&gp.reap_cond, &gp.lock);
				continue;
			}
			struct timespec ts = clock_mono_after((next - clock_mono_us()) / 1000 + 1);
			pthread_cond_timedwait(&gp.reap_cond, &gp.lock, &ts);
		}
		if (!gp.dead && gp.stopping)
			break;
		struct gv_entry *e = gp.dead;
		gp.dead = e->next;
		gp.reaping++;
		pthread_mutex_unlock(&gp.lock);
		entry_reap(e);
		pthread_mutex_lock(&gp.lock);
		gp.reaping--;
		pthread_cond_broadcast(&gp.reap_cond);
	}
	pthread_mutex_unlock(&gp.lock);
	return NULL;
}

/* Reads what runsc wrote on the container's stderr (its own error message). */
static void read_runsc_error(int fd, char *buf, size_t len)
{
	buf[0] = 0;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	ssize_t n = read(fd, buf, len - 1);
	if (n > 0) {
		buf[n] = 0;
		buf[strcspn(buf, "\n")] = 0;
	}
}

/* Mount points of pool p's runtime folders in the (shared, read-only) root: a
 * folder for a folder, an empty file for a file. 0, or -1 with err. */
static int make_mount_points(const struct gv_pool *p, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int r;
	for (char **rp = p->ro_paths; rp && *rp; rp++) {
		struct stat st;
		gvhost_fmt(path, sizeof(path), "%s%s", gp.env.rootfs, *rp);
		if (stat(*rp, &st) < 0) {
			gvhost_fmt(err, errlen, "read-only path '%s': %s", *rp, strerror(errno));
			return -1;
		}
		bool is_file = !S_ISDIR(st.st_mode);
		if (lstat(path, &st) == 0)
			continue;
		if (is_file) {
			/* a file is bound onto an empty file */
			char dir[PATH_MAX];
			gvhost_fmt(dir, sizeof(dir), "%s", path);
			*strrchr(dir, '/') = 0;
			int fd = -1;
			if ((r = gvhost_mkdir_p(dir, 0755)) < 0 ||
			    (fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0) {
				gvhost_fmt(err, errlen, "cannot create '%s': %s", path,
					   strerror(r < 0 ? -r : errno));
				return -1;
			}
			close(fd);
			continue;
		}
		if ((r = gvhost_mkdir_p(path, 0755)) < 0) {
			gvhost_fmt(err, errlen, "cannot create '%s': %s", path, strerror(-r));
			return -1;
		}
	}
	return 0;
}

/* Milliseconds until deadline (a clock_mono_us time), at least 0. */
static int left_ms(int64_t deadline)
{
	int64_t left = (deadline - clock_mono_us() + 999) / 1000;
	return left > 0 ? (int)left : 0;
}

/* The sandbox process runsc wrote in pidfile, if any (gvpool_kill kills it). */
static void read_pid_file(struct gv_entry *e, const char *pidfile)
{
	struct strbuf sb = STRBUF_INIT;
	if (strbuf_read_file(&sb, pidfile, 64) == 0 && atol(sb.buf) > 0)
		e->sandbox_pid = (pid_t)atol(sb.buf);
	strbuf_release(&sb);
}

/* Creates and starts one sandbox for pool p: ~170 ms, mostly runsc itself. netns:
 * the network namespace it joins (by path, --network=host), or NULL. */
/* What a restored sandbox comes from (gvpool_restore). Both NULL: a container
 * only created, its box bound and its restore run when one comes (a spare). */
struct gv_restore {
	const char *image; /* the folder runsc checkpoint wrote */
	const char *box;   /* the host folder bound at /.b/box-<box_seq> */
	unsigned box_seq;  /* the name the checkpointed sandbox had it under */
};

/* runsc restore of rs into e, created already: its stdio is create's (our new
 * pipes), which the sentry gives to the restored processes in place of the old.
 * 0, or -1 with err. */
static int entry_restore(struct gv_entry *e, const struct gv_restore *rs, const char *rootopt,
			 int64_t deadline, char *err, size_t errlen)
{
	char img[PATH_MAX + 16];
	int ep[2] = {-1, -1};
	pid_t pid;
	gvhost_fmt(img, sizeof(img), "--image-path=%s", rs->image);
	const char *live[] = {gp.env.runsc, rootopt,	LIVE_FLAGS, gp.env.platform,
			      "restore",    "--detach", "--bundle", e->dir,
			      img,	    e->id,	NULL};
	if (pipe2(ep, O_CLOEXEC) < 0) {
		gvhost_fmt(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	int r = gvhost_spawn_group(live, -1, -1, ep[1], &pid);
	close(ep[1]);
	if (r < 0) {
		close(ep[0]);
		gvhost_fmt(err, errlen, "cannot run '%s': %s", gp.env.runsc, strerror(-r));
		return -1;
	}
	int st = gvhost_wait_exit_ms(pid, left_ms(deadline));
	char msg[512] = "";
	if (st != 0)
		read_runsc_error(ep[0], msg, sizeof(msg));
	close(ep[0]);
	if (st == GVHOST_WAIT_TIMEOUT) {
		gvhost_fmt(err, errlen, "runsc restore did not end in time");
		return -1;
	}
	if (st != 0) {
		gvhost_fmt(err, errlen, "runsc restore exited %d: %s", st,
			   msg[0] ? msg : "no message");
		return -1;
	}
	return 0;
}

/* One start; *hung when it failed for its deadline (runsc or init never got
 * ready: a platform that hangs, as kvm does where it cannot run). */
static int entry_start_once(struct gv_pool *p, const char *netns, const struct gv_restore *rs,
			    struct gv_entry **out, bool *hung, char *err, size_t errlen)
{
	int ret = -1, in[2] = {-1, -1}, o[2] = {-1, -1}, e2[2] = {-1, -1};
	struct gv_entry *e = xcalloc(1, sizeof(*e));
	int64_t t0 = clock_mono_us();
	e->in_fd = e->out_fd = e->err_fd = -1;
	e->pool = p;
	e->host_net = netns != NULL;
	pthread_mutex_lock(&gp.lock);
	unsigned long n = ++gp.serial;
	pthread_mutex_unlock(&gp.lock);
	gvhost_fmt(e->id, sizeof(e->id), GVHOST_ID_PREFIX "%s-%lu", gp.env.owner, n);
	gvhost_fmt(e->dir, sizeof(e->dir), "%s/%s", gp.env.work, e->id);

	char path[PATH_MAX], cgpath[160];
	int r;
	if (sandbox_aborting()) {
		gvhost_fmt(err, errlen, "the sandbox is stopping");
		free(e);
		return -1;
	}
	if (mkdir(e->dir, 0700) < 0) {
		gvhost_fmt(err, errlen, "cannot create '%s': %s", e->dir, strerror(errno));
		free(e);
		return -1;
	}
	gvhost_fmt(path, sizeof(path), "%s/b", e->dir);
	if (mkdir(path, 0700) < 0) {
		gvhost_fmt(err, errlen, "cannot create '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (make_mount_points(p, err, errlen) < 0)
		goto fail;
	char bdir[PATH_MAX + 8];
	gvhost_fmt(bdir, sizeof(bdir), "%s/b", e->dir);
	gvhost_fmt(cgpath, sizeof(cgpath), "/%s/%s", gp.env.cg_sub, e->id);
	struct oci_params op = {
	    .rootfs = gp.env.rootfs,
	    .args = (const char *const *)p->init_args,
	    .ro_paths = (const char *const *)p->ro_paths,
	    .std_binds = gp.env.std_binds,
	    .control_dir = bdir,
	    .cgroups_path = cgpath,
	    .memory_bytes = gp.env.max_memory_bytes + GVPOOL_HEADROOM_BYTES,
	    .pids = 4096,
	    .tmp_bytes = gp.env.tmp_bytes,
	    .netns_path = netns,
	};
	gvhost_fmt(path, sizeof(path), "%s/config.json", e->dir);
	if (oci_write_config(path, &op, err, errlen) < 0)
		goto fail;
	if (rs && rs->box) {
		/* the box under the name the restored sentry knows it by */
		e->box_seq = rs->box_seq - 1;
		if (gvpool_bind_box(e, rs->box, err, errlen) < 0)
			goto fail;
	}

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(o, O_CLOEXEC) < 0 || pipe2(e2, O_CLOEXEC) < 0) {
		gvhost_fmt(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	char rootopt[PATH_MAX + 8], pidfile[PATH_MAX + 8];
	gvhost_fmt(rootopt, sizeof(rootopt), "--root=%s", gp.env.root);
	gvhost_fmt(pidfile, sizeof(pidfile), "%s/pid", e->dir);
	const char *exclusive[] = {gp.env.runsc, rootopt,    GLOBAL_FLAGS, gp.env.platform,
				   "run",	 "--detach", "--bundle",   e->dir,
				   "--pid-file", pidfile,    e->id,	   NULL};
	const char *shared[] = {gp.env.runsc, rootopt,	  LIVE_FLAGS, gp.env.platform,
				"run",	      "--detach", "--bundle", e->dir,
				"--pid-file", pidfile,	  e->id,      NULL};
	const char *host[] = {gp.env.runsc, rootopt,	HOSTNET_FLAGS, gp.env.platform,
			      "run",	    "--detach", "--bundle",    e->dir,
			      "--pid-file", pidfile,	e->id,	       NULL};
	const char *create[] = {gp.env.runsc, rootopt,	  LIVE_FLAGS, gp.env.platform,
				"create",     "--bundle", e->dir,     "--pid-file",
				pidfile,      e->id,	  NULL};
	const char **argv = rs ? create : netns ? host : p->shared ? shared : exclusive;
	pid_t pid;
	/* every wait below is bounded by the start's deadline: a platform that never
	 * starts (kvm where it hangs) costs that long, then everything is killed */
	int limit_ms =
	    gp.env.start_timeout_ms > 0 ? gp.env.start_timeout_ms : GVPOOL_START_TIMEOUT_MS;
	int64_t deadline = t0 + (int64_t)limit_ms * 1000;
	if ((r = gvhost_spawn_group(argv, in[0], o[1], e2[1], &pid)) < 0) {
		gvhost_fmt(err, errlen, "cannot run '%s': %s", gp.env.runsc, strerror(-r));
		goto fail;
	}
	close(in[0]), close(o[1]), close(e2[1]);
	in[0] = o[1] = e2[1] = -1;
	e->in_fd = in[1], e->out_fd = o[0], e->err_fd = e2[0];
	in[1] = o[0] = e2[0] = -1;
	int st = gvhost_wait_exit_ms(pid, left_ms(deadline));
	if (st == GVHOST_WAIT_TIMEOUT) {
		read_pid_file(e, pidfile); /* runsc may have started the sandbox already */
		gvhost_fmt(err, errlen, "gvisor sandbox did not start within %d s (runsc run hung)",
			   limit_ms / 1000);
		*hung = true;
		goto discard;
	}
	if (st != 0) {
		char msg[512];
		read_runsc_error(e->err_fd, msg, sizeof(msg));
		gvhost_fmt(err, errlen, "runsc run exited %d: %s", st, msg[0] ? msg : "no message");
		goto discard;
	}
	read_pid_file(e, pidfile);
	if (rs && !rs->image) {
		log_debug("gvisor: created %s for a restore in %lld ms", e->id,
			  (long long)((clock_mono_us() - t0) / 1000));
		*out = e;
		return 0;
	}
	if (rs) {
		/* init said 'R' and read its job before the checkpoint */
		if (entry_restore(e, rs, rootopt, deadline, err, errlen) < 0)
			goto discard;
		e->started_us = clock_mono_us();
		log_debug("gvisor: restored %s in %lld ms", e->id, (e->started_us - t0) / 1000);
		*out = e;
		return 0;
	}
	/* init says 'R' when its warm-up is done and it waits for the job */
	struct pollfd pfd = {.fd = e->out_fd, .events = POLLIN};
	char ready = 0;
	int pr;
	while ((pr = poll(&pfd, 1, left_ms(deadline))) < 0 && errno == EINTR)
		;
	if (pr == 0) {
		gvhost_fmt(err, errlen, "gvisor sandbox did not start within %d s (init not ready)",
			   limit_ms / 1000);
		*hung = true;
		goto discard;
	}
	if (pr != 1 || read(e->out_fd, &ready, 1) != 1 || ready != 'R') {
		gvhost_fmt(err, errlen, "gvisor sandbox %s did not get ready", e->id);
		goto discard;
	}
	e->started_us = clock_mono_us();
	log_debug("gvisor: started %s in %lld ms", e->id, (e->started_us - t0) / 1000);
	*out = e;
	return 0;
discard:
	gvpool_discard(e);
	return ret;
fail:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (o[i] >= 0)
			close(o[i]);
		if (e2[i] >= 0)
			close(e2[i]);
	}
	/* never the files of a box bound for a restore */
	if (!entry_unmount_box(e)) {
		entry_free(e);
		return ret;
	}
	gvhost_rm_tree(e->dir);
	entry_free(e);
	return ret;
}

/* Starts a sandbox of p (entry_start_once), unless starts keep hanging: after
 * HUNG_TRIP in a row, each start fails at once with why for HUNG_WAIT_MS, and
 * then one is tried again (a runsc that cannot start, e.g. gvisor_platform =
 * kvm where KVM hangs, would otherwise cost every run the whole start
 * timeout: a `judge eval` of hundreds of samples, hours). A start that gets
 * ready ends it. */
static int entry_start(struct gv_pool *p, const char *netns, const struct gv_restore *rs,
		       struct gv_entry **out, char *err, size_t errlen)
{
	int64_t now = clock_mono_ms();
	pthread_mutex_lock(&gp.lock);
	if (gp.hung >= HUNG_TRIP && now < gp.hung_until_ms) {
		gvhost_fmt(err, errlen,
			   "gvisor sandboxes do not start here: %d starts in a row hung (the last: "
			   "%s); the next try in %lld s",
			   gp.hung, gp.hung_why, (long long)(gp.hung_until_ms - now + 999) / 1000);
		pthread_mutex_unlock(&gp.lock);
		return -1;
	}
	pthread_mutex_unlock(&gp.lock);
	bool hung = false;
	int r = entry_start_once(p, netns, rs, out, &hung, err, errlen);
	pthread_mutex_lock(&gp.lock);
	if (r == 0) {
		gp.hung = 0;
	} else if (hung) {
		gp.hung++;
		gvhost_fmt(gp.hung_why, sizeof gp.hung_why, "%s", err);
		if (gp.hung >= HUNG_TRIP) {
			gp.hung_until_ms = clock_mono_ms() + HUNG_WAIT_MS;
			log_error(
			    "gvisor: %d sandbox starts in a row hung (%s): starts fail at once "
			    "for %d s",
			    gp.hung, err, HUNG_WAIT_MS / 1000);
		}
	}
	pthread_mutex_unlock(&gp.lock);
	return r;
}

/* ---- pools -------------------------------------------------------------- */

/* box_init's zygote arguments (docs/warm-start.md), NUL-separated, when
 * warm_start is on and the runtime has one. The zygote starts after the first
 * job, so cold sandboxes get them too. */
static void zygote_args(const struct run_spec *spec, struct strbuf *out)
{
	const struct sandbox_options *o = sandbox_options();
	if (!spec->zygote_argv || !spec->zygote_argv[0] || !o || !o->warm_start)
		return;
	strbuf_addstr(out, "-z");
	strbuf_addch(out, 0);
	for (const char *const *z = spec->zygote_argv; *z; z++) {
		strbuf_addstr(out, *z);
		strbuf_addch(out, 0);
	}
	strbuf_addstr(out, "--");
	strbuf_addch(out, 0);
}

/* Warm-up of a runtime inside a fresh sandbox, before any job: box_init's
 * arguments (see box_init.c), NUL-separated in out. Only the runtime's own code
 * runs, as nobody, before the box is even mounted; it leaves the sentry's caches
 * of read-only runtime files warm and nothing else. What to run and read comes
 * from the language (spec's warm_argv and preload); without it, the program
 * itself is read when it lies outside the box. */
static void warm_args(const struct run_spec *spec, struct strbuf *out)
{
	const char *a0 = spec->argv ? spec->argv[0] : NULL;
	strbuf_addstr(out, GVPOOL_INIT_INSIDE);
	strbuf_addch(out, 0);
#define ARG(s) (strbuf_addstr(out, (s)), strbuf_addch(out, 0))
	if (spec->warm_argv && spec->warm_argv[0]) {
		ARG("-x");
		for (const char *const *w = spec->warm_argv; *w; w++)
			ARG(*w);
		ARG("--");
	}
	zygote_args(spec, out);
	for (const char *const *r = spec->preload; r && *r; r++)
		if (access(*r, R_OK) == 0)
			ARG("-r"), ARG(*r);
	if (!spec->warm_argv && !spec->preload && a0 && a0[0] == '/' && strncmp(a0, "/box/", 5))
		ARG("-r"), ARG(a0);
#undef ARG
}

/* The pool key: ro_paths, then the warm-up arguments. */
static void sig_of(const char *const *ro_paths, const struct strbuf *warm, struct strbuf *sb)
{
	for (const char *const *p = ro_paths; p && *p; p++) {
		strbuf_addstr(sb, *p);
		strbuf_addch(sb, '\n');
	}
	strbuf_addch(sb, '|');
	for (size_t i = 0; i < warm->len; i++)
		strbuf_addch(sb, warm->buf[i] ? warm->buf[i] : ' ');
}

static char **split_nul(const struct strbuf *sb)
{
	size_t n = 0;
	for (size_t i = 0; i < sb->len; i++)
		n += !sb->buf[i];
	char **v = xcalloc(n + 1, sizeof(char *));
	size_t k = 0;
	for (size_t i = 0; i < sb->len; i += strlen(sb->buf + i) + 1)
		v[k++] = xstrdup(sb->buf + i);
	return v;
}

/* Finds or adds the pool of a signature; gp.lock held. NULL when the table is full. */
static struct gv_pool *pool_get(const char *sig, const char *const *ro_paths,
				const struct strbuf *warm)
{
	for (int i = 0; i < gp.npools; i++)
		if (!strcmp(gp.pools[i].sig, sig))
			return &gp.pools[i];
	if (gp.npools == MAX_POOLS)
		return NULL;
	struct gv_pool *p = &gp.pools[gp.npools];
	size_t n = 0;
	while (ro_paths && ro_paths[n])
		n++;
	p->sig = xstrdup(sig);
	p->ro_paths = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		p->ro_paths[i] = xstrdup(ro_paths[i]);
	p->init_args = split_nul(warm);
	p->shared = !strncmp(sig, LIVE_SIG, strlen(LIVE_SIG));
	gp.npools++;
	return p;
}

/* Picks a pool that lacks a sandbox, most recently used first; gp.lock held. */
static struct gv_pool *pool_needing(void)
{
	struct gv_pool *best = NULL;
	for (int i = 0; i < gp.npools; i++) {
		struct gv_pool *p = &gp.pools[i];
		if ((p->wanted || p->uses >= 2) && p->nready + p->starting < gp.env.pool_size &&
		    p->retry_us <= clock_mono_us() && (!best || p->last_use_us > best->last_use_us))
			best = p;
	}
	return best;
}

/* Creates the spare of one pool that wants it (gvpool_want_restore); gp.lock
 * held, released meanwhile. False when none wants one. */
static bool spare_make(void)
{
	struct gv_pool *p = NULL;
	for (int i = 0; i < gp.npools && !p; i++)
		if (gp.pools[i].spare_wanted && !gp.pools[i].spare && !gp.pools[i].spare_starting)
			p = &gp.pools[i];
	if (!p)
		return false;
	p->spare_wanted = false;
	p->spare_starting = true;
	pthread_mutex_unlock(&gp.lock);
	struct gv_restore none = {.image = NULL};
	struct gv_entry *e = NULL;
	char err[512];
	/* below everything else: the pause that asked for it is still storing its
	 * image, and a resume that comes first creates its own as before */
	setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	if (entry_start(p, NULL, &none, &e, err, sizeof(err)) < 0)
		log_warn("gvisor: cannot create a container for restores: %s", err);
	setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
	pthread_mutex_lock(&gp.lock);
	p->spare_starting = false;
	if (e && (gp.stopping || p->spare)) {
		pthread_mutex_unlock(&gp.lock);
		gvpool_discard(e);
		pthread_mutex_lock(&gp.lock);
	} else if (e) {
		e->pool = NULL;
		e->tainted = true; /* never parked: it will hold a session */
		e->sig = xstrdup(p->sig);
		p->spare = e;
	}
	return true;
}

static void *refill_main(void *arg)
{
	(void)arg;
	/* new sandboxes start below the runs in progress; entry_take raises them */
	setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
	pthread_mutex_lock(&gp.lock);
	while (!gp.stopping) {
		if (spare_make())
			continue;
		struct gv_pool *p = pool_needing();
		if (!p) {
			pthread_cond_wait(&gp.refill_cond, &gp.lock);
			continue;
		}
		p->starting++;
		pthread_mutex_unlock(&gp.lock);
		struct gv_entry *e = NULL;
		char err[512];
		int r = entry_start(p, NULL, NULL, &e, err, sizeof(err));
		pthread_mutex_lock(&gp.lock);
		p->starting--;
		if (r < 0) {
			log_error("gvisor: cannot start a pool sandbox: %s", err);
			p->retry_us = clock_mono_us() + 30000000LL;
			/* do not spin on a broken runsc: wait a while */
			struct timespec ts = clock_mono_after(2000);
			pthread_cond_timedwait(&gp.refill_cond, &gp.lock, &ts);
			continue;
		}
		if (gp.stopping) {
			pthread_mutex_unlock(&gp.lock);
			gvpool_discard(e);
			pthread_mutex_lock(&gp.lock);
			break;
		}
		e->next = p->ready;
		p->ready = e;
		p->nready++;
		pthread_cond_broadcast(&gp.refill_cond);
	}
	pthread_mutex_unlock(&gp.lock);
	return NULL;
}

/* The warm-up and pool signature of the runtime of spec (live: for sandbox_start). */
static void runtime_of(const struct run_spec *spec, bool live, struct strbuf *warm,
		       struct strbuf *sig)
{
	warm_args(spec, warm);
	if (live)
		strbuf_addstr(sig, LIVE_SIG);
	sig_of(spec->ro_paths, warm, sig);
}

/* Takes a started sandbox for the runtime of spec (its warm-up and signature from
 * runtime_of): from the pool, or cold when none is ready. The entry keeps sig. */
static int entry_take(const struct run_spec *spec, const struct strbuf *warm,
		      const struct strbuf *sig, struct gv_entry **out, bool *cold, char *err,
		      size_t errlen)
{
	const char *const *ro_paths = spec->ro_paths;
	char *sig_copy = xstrdup(sig->buf);
	pthread_mutex_lock(&gp.lock);
	struct gv_pool *p = pool_get(sig->buf, ro_paths, warm);
	struct gv_entry *e = NULL;
	if (p) {
		p->last_use_us = clock_mono_us();
		p->uses++;
		/* the oldest ready entry: the others stay warm for the next runs */
		struct gv_entry **pp = &p->ready;
		while (*pp && (*pp)->next)
			pp = &(*pp)->next;
		if ((e = *pp)) {
			*pp = NULL;
			p->nready--;
		}
		if (gp.threads)
			pthread_cond_broadcast(&gp.refill_cond);
	}
	pthread_mutex_unlock(&gp.lock);
	*cold = !e;
	int r = 0;
	if (e) {
		entry_renice(e, 0);
	} else {
		/* cold (and, with more runtime signatures than pools, unpooled when !p):
		 * the run waits for this sandbox, so it starts with no warm-up, which
		 * would only start the runtime twice (a one-shot `judge run`: ~1/3 of
		 * its start) */
		struct strbuf bare = STRBUF_INIT;
		strbuf_addstr(&bare, GVPOOL_INIT_INSIDE);
		strbuf_addch(&bare, 0);
		zygote_args(spec, &bare);
		struct gv_pool tmp;
		memset(&tmp, 0, sizeof(tmp));
		tmp.ro_paths = p ? p->ro_paths : (char **)ro_paths;
		tmp.init_args = split_nul(&bare);
		tmp.shared = !strncmp(sig->buf, LIVE_SIG, strlen(LIVE_SIG));
		r = entry_start(&tmp, NULL, NULL, &e, err, errlen);
		xstrvfree(tmp.init_args);
		strbuf_release(&bare);
		if (r == 0)
			e->pool = p;
	}
	if (r < 0) {
		free(sig_copy);
		return r;
	}
	e->sig = sig_copy;
	*out = e;
	return 0;
}

void gvpool_park(struct gv_entry *e, const char *key)
{
	int64_t now = clock_mono_us();
	if (!key || gp.env.reuse_runs <= 0 || e->tainted || e->in_fd < 0 ||
	    e->runs >= (unsigned)gp.env.reuse_runs || now - e->started_us >= gp.env.reuse_us ||
	    !entry_unmount_box(e)) {
		gvpool_discard(e);
		return;
	}
	free(e->reuse_key);
	e->reuse_key = xstrdup(key);
	pthread_mutex_lock(&gp.lock);
	if (gp.stopping || !gp.threads) {
		pthread_mutex_unlock(&gp.lock);
		gvpool_discard(e);
		return;
	}
	e->next = gp.idle;
	gp.idle = e;
	gp.nidle++;
	/* too many parked: the oldest go (the list's tail) */
	while (gp.nidle > gp.env.idle_max) {
		struct gv_entry **pp = &gp.idle;
		while ((*pp)->next)
			pp = &(*pp)->next;
		struct gv_entry *old = *pp;
		*pp = NULL;
		gp.nidle--;
		old->next = gp.dead;
		gp.dead = old;
	}
	pthread_cond_broadcast(&gp.reap_cond);
	pthread_mutex_unlock(&gp.lock);
	log_debug("gvisor: %s parked for key %s after %u runs", e->id, key, e->runs);
}

struct gv_entry *gvpool_take_idle(const char *key, const char *sig)
{
	struct gv_entry *got = NULL;
	pthread_mutex_lock(&gp.lock);
	expire_idle(false);
	for (struct gv_entry **pp = &gp.idle; *pp; pp = &(*pp)->next) {
		struct gv_entry *e = *pp;
		if (!strcmp(e->reuse_key, key) && !strcmp(e->sig, sig)) {
			*pp = e->next;
			gp.nidle--;
			got = e;
			break;
		}
	}
	if (gp.dead)
		pthread_cond_broadcast(&gp.reap_cond);
	pthread_mutex_unlock(&gp.lock);
	if (got) {
		got->next = NULL;
		free(got->reuse_key);
		got->reuse_key = NULL;
	}
	return got;
}

void gvpool_sig(const struct run_spec *spec, struct strbuf *sig)
{
	struct strbuf warm = STRBUF_INIT;
	runtime_of(spec, false, &warm, sig);
	strbuf_release(&warm);
}

int gvpool_take(const struct run_spec *spec, struct gv_entry **out, bool *cold, char *err,
		size_t errlen)
{
	return gvpool_take_live(spec, false, out, cold, err, errlen);
}

/* A live sandbox in the namespace of spec's net_ns_fd: never from a pool (pooled
 * ones have no network, and this one's namespace is its session's), never parked
 * (tainted), started cold like entry_take's. runsc opens the namespace through
 * our fd's path while it starts. */
static int take_netns(const struct run_spec *spec, struct gv_entry **out, bool *cold, char *err,
		      size_t errlen)
{
	struct strbuf warm = STRBUF_INIT, sig = STRBUF_INIT;
	runtime_of(spec, true, &warm, &sig);
	char *bare[] = {GVPOOL_INIT_INSIDE, NULL};
	struct gv_pool tmp;
	memset(&tmp, 0, sizeof(tmp));
	tmp.ro_paths = (char **)spec->ro_paths;
	tmp.init_args = bare;
	tmp.shared = true;
	char netns[64];
	gvhost_fmt(netns, sizeof(netns), "/proc/%d/fd/%d", (int)getpid(), spec->net_ns_fd);
	struct gv_entry *e = NULL;
	int r = entry_start(&tmp, netns, NULL, &e, err, errlen);
	if (r == 0) {
		e->pool = NULL; /* not &tmp */
		e->tainted = true;
		e->sig = strbuf_detach(&sig, NULL);
		*out = e;
	}
	*cold = true;
	strbuf_release(&warm);
	strbuf_release(&sig);
	return r;
}

int gvpool_take_live(const struct run_spec *spec, bool live, struct gv_entry **out, bool *cold,
		     char *err, size_t errlen)
{
	if (live && spec->net_ns_fd > 0)
		return take_netns(spec, out, cold, err, errlen);
	struct strbuf warm = STRBUF_INIT, sig = STRBUF_INIT;
	runtime_of(spec, live, &warm, &sig);
	int r = entry_take(spec, &warm, &sig, out, cold, err, errlen);
	strbuf_release(&warm);
	strbuf_release(&sig);
	return r;
}

void gvpool_want_restore(const char *sig)
{
	if (!gp.started || gp.env.pool_size <= 0 || !sig)
		return;
	pthread_mutex_lock(&gp.lock);
	for (int i = 0; i < gp.npools; i++)
		if (!strcmp(gp.pools[i].sig, sig) && !gp.pools[i].spare) {
			gp.pools[i].spare_wanted = true;
			pthread_cond_broadcast(&gp.refill_cond);
		}
	pthread_mutex_unlock(&gp.lock);
}

/* The spare of the pool of sig, taken (the caller's), or NULL. */
static struct gv_entry *spare_take(const char *sig)
{
	struct gv_entry *e = NULL;
	pthread_mutex_lock(&gp.lock);
	for (int i = 0; i < gp.npools && !e; i++)
		if (!strcmp(gp.pools[i].sig, sig)) {
			e = gp.pools[i].spare;
			gp.pools[i].spare = NULL;
		}
	pthread_mutex_unlock(&gp.lock);
	return e;
}

/* runsc restore of rs into the spare e: its box bound first, its processes
 * back to normal priority (the refill thread created it at nice 19). 0; or -1
 * with err, e discarded (the caller then creates a container as usual). */
static int spare_restore(struct gv_entry *e, const struct gv_restore *rs, char *err, size_t errlen)
{
	int64_t t0 = clock_mono_us();
	int limit_ms =
	    gp.env.start_timeout_ms > 0 ? gp.env.start_timeout_ms : GVPOOL_START_TIMEOUT_MS;
	char rootopt[PATH_MAX + 8];
	gvhost_fmt(rootopt, sizeof(rootopt), "--root=%s", gp.env.root);
	entry_renice(e, 0);
	e->box_seq = rs->box_seq - 1;
	if (gvpool_bind_box(e, rs->box, err, errlen) < 0 ||
	    entry_restore(e, rs, rootopt, t0 + (int64_t)limit_ms * 1000, err, errlen) < 0) {
		log_warn("gvisor: the container created for restores did not restore: %s", err);
		gvpool_discard(e);
		return -1;
	}
	e->started_us = clock_mono_us();
	log_debug("gvisor: restored %s (created ahead) in %lld ms", e->id,
		  (e->started_us - t0) / 1000);
	return 0;
}

int gvpool_restore(const struct run_spec *spec, const char *image, const char *box,
		   unsigned box_seq, struct gv_entry **out, char *err, size_t errlen)
{
	struct strbuf warm = STRBUF_INIT, sig = STRBUF_INIT;
	runtime_of(spec, true, &warm, &sig);
	/* the bundle of a pooled live sandbox of this runtime: its mounts are what
	 * the image expects */
	char **args = split_nul(&warm);
	struct gv_pool tmp;
	memset(&tmp, 0, sizeof(tmp));
	tmp.ro_paths = (char **)spec->ro_paths;
	tmp.init_args = args;
	tmp.shared = true;
	struct gv_restore rs = {.image = image, .box = box, .box_seq = box_seq};
	struct gv_entry *e = NULL;
	int r = -1;
	if (box_seq == 0)
		gvhost_fmt(err, errlen, "the checkpoint names no box");
	else if ((e = spare_take(sig.buf)) && spare_restore(e, &rs, err, errlen) == 0)
		r = 0;
	else
		e = NULL, r = entry_start(&tmp, NULL, &rs, &e, err, errlen);
	if (r == 0) {
		e->pool = NULL;
		e->tainted = true; /* never parked: it held a session */
		e->sig = strbuf_detach(&sig, NULL);
		*out = e;
	}
	for (char **a = args; *a; a++)
		free(*a);
	free(args);
	strbuf_release(&warm);
	strbuf_release(&sig);
	return r;
}

/* Once, not at every start: a gvpool_wait of an earlier start may still wait on it. */
static void refill_cond_init(void)
{
	clock_cond_init(&gp.refill_cond);
	clock_cond_init(&gp.reap_cond);
}

int gvpool_start(const struct gvpool_env *env, char *err, size_t errlen)
{
	if (gp.started)
		return 0;
	pthread_once(&gp.cond_once, refill_cond_init);
	gp.env = *env;
	gp.stopping = false;
	gp.started = true;
	gp.hung = 0; /* a new runsc, platform or timeout may start */
	if (gp.env.pool_size > 0 && pthread_create(&gp.refiller, NULL, refill_main, NULL) != 0)
		goto fail;
	for (int i = 0; i < REAPERS; i++)
		if (pthread_create(&gp.reapers[i], NULL, reaper_main, NULL) != 0)
			goto fail;
	gp.threads = true;
	return 0;
fail:
	gvhost_fmt(err, errlen, "cannot start the gvisor threads");
	gp.started = false;
	/* started threads are joined by a later stop: only when out of resources */
	return -1;
}

void gvpool_prepare(const struct run_spec *spec)
{
	gvpool_prepare_live(spec, false);
}

void gvpool_prepare_live(const struct run_spec *spec, bool live)
{
	if (!gp.started || gp.env.pool_size <= 0)
		return;
	const char *const *ro_paths = spec->ro_paths;
	struct strbuf sig = STRBUF_INIT, warm = STRBUF_INIT;
	runtime_of(spec, live, &warm, &sig);
	pthread_mutex_lock(&gp.lock);
	struct gv_pool *p = pool_get(sig.buf, ro_paths, &warm);
	if (p) {
		p->last_use_us = clock_mono_us();
		p->wanted = true;
	}
	pthread_cond_broadcast(&gp.refill_cond);
	pthread_mutex_unlock(&gp.lock);
	strbuf_release(&sig);
	strbuf_release(&warm);
}

bool gvpool_wait(const struct run_spec *spec, long timeout_ms)
{
	if (!gp.started || gp.env.pool_size <= 0)
		return false;
	const char *const *ro_paths = spec->ro_paths;
	struct strbuf sig = STRBUF_INIT, warm = STRBUF_INIT;
	runtime_of(spec, false, &warm, &sig);
	struct timespec ts = clock_mono_after(timeout_ms);
	bool full = false;
	pthread_mutex_lock(&gp.lock);
	for (;;) {
		struct gv_pool *p = pool_get(sig.buf, ro_paths, &warm);
		if (!p)
			break;
		p->wanted = true;
		if (p->nready >= gp.env.pool_size) {
			full = true;
			break;
		}
		pthread_cond_broadcast(&gp.refill_cond);
		if (pthread_cond_timedwait(&gp.refill_cond, &gp.lock, &ts) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&gp.lock);
	strbuf_release(&sig);
	strbuf_release(&warm);
	return full;
}

void gvpool_stop(void)
{
	if (!gp.started)
		return;
	pthread_mutex_lock(&gp.lock);
	gp.stopping = true;
	expire_idle(true); /* parked entries: to the reapers */
	pthread_cond_broadcast(&gp.refill_cond);
	pthread_mutex_unlock(&gp.lock);
	if (gp.threads && gp.env.pool_size > 0)
		pthread_join(gp.refiller, NULL);
	/* unused pool sandboxes: to the reapers */
	for (int i = 0; i < gp.npools; i++) {
		struct gv_pool *p = &gp.pools[i];
		while (p->ready) {
			struct gv_entry *e = p->ready;
			p->ready = e->next;
			gvpool_discard(e);
		}
		p->nready = 0;
		if (p->spare)
			gvpool_discard(p->spare);
		p->spare = NULL;
		p->spare_wanted = false;
	}
	pthread_mutex_lock(&gp.lock);
	pthread_cond_broadcast(&gp.reap_cond);
	pthread_mutex_unlock(&gp.lock);
	if (gp.threads)
		for (int i = 0; i < REAPERS; i++)
			pthread_join(gp.reapers[i], NULL);
	/* the reapers leave the queue empty; anything left was never handed over */
	while (gp.dead) {
		struct gv_entry *e = gp.dead;
		gp.dead = e->next;
		entry_reap(e);
	}
	for (int i = 0; i < gp.npools; i++) {
		struct gv_pool *p = &gp.pools[i];
		for (char **rp = p->ro_paths; rp && *rp; rp++)
			free(*rp);
		free(p->ro_paths);
		for (char **a = p->init_args; a && *a; a++)
			free(*a);
		free(p->init_args);
		free(p->sig);
	}
	gp.npools = 0;
	gp.threads = false;
	gp.started = false;
}
