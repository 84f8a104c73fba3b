/* gvisor: the gVisor backend — runs the programs of each workspace in a runsc
 * sandbox of their own.
 *
 * Theory of operation.
 *
 * A cold `runsc run` costs ~200 ms here, so sandboxes are created *and
 * started* ahead of need, in a pool per runtime signature (the spec's ro_paths
 * and the warm-up its language gives: warm_argv, preload), gvisor_pool of each, filled from the
 * second run of a signature on (or at once after gvisor_pool_prepare). A pool
 * entry is an OCI bundle (oci.c) whose process is box_init
 * (runner/init/box_init.c), started with `runsc run --detach`; init warms the
 * runtime up (e.g. python3 -c pass, as nobody, before any job exists), says
 * 'R' and waits on its stdin, a pipe held by this process. A refill thread (at
 * a low CPU priority, raised when the entry is taken) starts new ones in the
 * background.
 *
 * Sessions. An entry serves the runs of one workspace (one submission: its
 * tests, run after run) for one runtime, and is destroyed with the workspace
 * (gvisor_close) or as soon as a run does not end cleanly (output limit, host
 * deadline, OOM of the sandbox, no valid trailer). Different workspaces never
 * share a sandbox. Every run gets a fresh /tmp and is reaped to the last
 * process before the next starts. Because the sentry caches what it has seen
 * of the box (exclusive file access), a session also ends when the box may
 * have changed behind it (sandbox.box_changes: a host write, a native run).
 *
 * The box arrives after start: every entry binds its own empty host folder
 * <work>/<id>/b (mode 0700) at /.b inside. <work> is a shared mount, so the
 * gofer (in its own mount namespace, a slave of ours) sees what we mount under
 * it later. When the first job comes we bind the submission's box onto
 * <work>/<id>/b/box; init binds /.b/box at /box inside (the gofer opens files
 * lazily by path, so it finds the new mount). The stdin of each run is a new
 * file <work>/<id>/b/in-N that init opens as root and hands to the program as
 * fd 0; its fds 1/2 go straight to our pipes.
 *
 * The end of a run: init reaps every process of the run, then writes a status
 * trailer and the job's secret token as the last bytes of the run on stdout;
 * we read stdout until it ends with the token (and stderr to what it holds
 * then: every writer is dead) (capture.c), check and strip the trailer. The
 * end of a session: we SIGKILL every process of the sandbox's cgroup (sentry,
 * gofer, stubs), unmount the box and hand the entry to a reaper thread, which
 * runs `runsc delete --force` and removes the bundle and any cgroup left.
 * Nothing waits on `runsc wait`, `state` or `delete` in the latency path, and
 * runsc's own exit code is never read as the program's status.
 *
 * Leftovers of a process that died (SIGKILL of the worker): container ids are
 * "jgv-<pid>-<n>", bundles live in <box_root>/gvisor/<pid>, cgroups in
 * /sys/fs/cgroup/<controller>/judge-gvisor/<id>; gvisor_sweep() deletes the
 * containers, mounts, folders and cgroups of every pid that is gone.
 */
#define _GNU_SOURCE
#include "runner/gvisor.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "runner/backend.h"
#include "runner/capture.h"
#include "runner/cg.h"
#include "runner/gvhost.h"
#include "runner/init/box_proto.h"
#include "runner/oci.h"
#include "runner/scmp.h"
#include "runner/verdict.h"

#define INIT_INSIDE "/.judge-init"
/* The bundle's memory limit covers the sentry and gofer too (~15 MB idle, more
 * for their page tables and caches while a program runs): the program's own
 * limit is enforced inside by box_init; the cgroup is the backstop. */
#define HEADROOM_BYTES (160LL << 20)
#define MAX_POOLS      16
/* Every runsc subcommand gets the same global flags (start without --network=none
 * fails). Mounts other than the root may be cached by the sentry without
 * revalidation (exclusive): runtimes are read-only, and the box of a run is only
 * ever seen by that one sandbox, which walks it first after it is mounted. */
#define GLOBAL_FLAGS	 "--network=none", "--platform=ptrace", "--file-access-mounts=exclusive"
#define REAPERS		 2
#define READY_TIMEOUT_MS 20000

struct gv_pool;

struct gv_entry {
	struct gv_entry *next;
	struct gv_pool *pool;
	char id[64];
	char dir[PATH_MAX];
	int in_fd, out_fd, err_fd;
	pid_t sandbox_pid;
	pid_t pids[256]; /* processes of the container when it was killed, to reap */
	int npids;
	bool box_mounted;
	long long started_us;
	/* the session: the workspace it serves runs of (see gvisor_run) */
	char *sig;		   /* its pool's signature: runs of another runtime need another */
	unsigned long box_changes; /* sandbox.box_changes when it began */
	unsigned runs;		   /* jobs sent so far (names the stdin files) */
	long ooms0, failcnt0;	   /* memory cgroup counters before the current run */
	struct cg cg;		   /* the cgroups runsc made for it (see entry_cg) */
	bool cg_open;
};

struct gv_pool {
	char *sig;	  /* ro_paths and init_args joined: the pool's key */
	char **ro_paths;  /* NULL-terminated copy */
	char **init_args; /* the container's process: box_init and its warm-up arguments */
	struct gv_entry *ready;
	int nready, starting;
	long long last_use_us;
	/* runs taken so far; the pool fills from the second one on (or once
	 * gvisor_pool_prepare named it): a one-shot `judge run` starts nothing extra */
	unsigned long uses;
	bool wanted;
	long long retry_us; /* after a failed start: no refill before this time */
};

static struct {
	bool inited;
	const struct judge_config *cfg;
	char runsc[PATH_MAX];
	char root[PATH_MAX];   /* runsc --root */
	char base[PATH_MAX];   /* <box_root>/gvisor */
	char work[PATH_MAX];   /* <base>/<pid>: a shared bind mount of itself */
	char rootfs[PATH_MAX]; /* <work>/rootfs */
	const char *std_binds[8];
	int pool_size;
	long long max_memory_bytes;
	struct scmp_filter filter; /* the program's seccomp policy, installed by box_init */

	pthread_mutex_t lock;
	pthread_cond_t refill_cond, reap_cond;
	struct gv_pool pools[MAX_POOLS];
	int npools;
	struct gv_entry *dead; /* reaper queue */
	int reaping;
	bool stopping;
	pthread_t refiller, reapers[REAPERS];
	bool threads;
	unsigned long serial;
	char init_error[512];	/* why the backend is not running */
	struct cg_root cg_root; /* where runsc puts the containers' cgroups */
	bool cg_ready;
} gv = {
    .init_error = "gvisor backend not started",
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .refill_cond = PTHREAD_COND_INITIALIZER,
    .reap_cond = PTHREAD_COND_INITIALIZER,
};

/* ---- small helpers ------------------------------------------------------ */

/* Runs "runsc <global flags> <args...>" with stdio on /dev/null; returns its exit status. */
static int runsc(const char *a1, const char *a2, const char *a3)
{
	char rootopt[PATH_MAX + 8];
	gvhost_fmt(rootopt, sizeof(rootopt), "--root=%s", gv.root);
	const char *argv[] = {gv.runsc, rootopt, GLOBAL_FLAGS, a1, a2, a3, NULL};
	pid_t pid;
	if (gvhost_spawn(argv, -1, -1, -1, &pid) < 0)
		return -1;
	return gvhost_wait_exit(pid);
}

/* ---- entries ------------------------------------------------------------ */

static void entry_free(struct gv_entry *e)
{
	free(e->sig);
	if (e->in_fd >= 0)
		close(e->in_fd);
	if (e->out_fd >= 0)
		close(e->out_fd);
	if (e->err_fd >= 0)
		close(e->err_fd);
	free(e);
}

/* Finds where runsc puts the containers' cgroups (once, before any thread). */
static bool gv_cgroups(void)
{
	char err[256];
	if (!gv.cg_ready && cg_root_oci(&gv.cg_root, NULL, GVHOST_CG_PARENT, err, sizeof(err)) == 0)
		gv.cg_ready = true;
	return gv.cg_ready;
}

/* The cgroups of e's container (attached on first use, once runsc made them), or
 * NULL when they are not there. Only the thread holding e calls it. */
static struct cg *entry_cg(struct gv_entry *e)
{
	if (!e->cg_open && gv.cg_ready && cg_open(&gv.cg_root, e->id, &e->cg) == 0)
		e->cg_open = true;
	return e->cg_open ? &e->cg : NULL;
}

/* SIGKILLs every process of the container (sentry, gofer, stubs): immediate, no
 * runsc, no waiting. Their pids are kept: we are their subreaper, the reaper
 * collects them. */
static void entry_kill(struct gv_entry *e)
{
	struct cg *cg = entry_cg(e);
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
	long long until = sandbox_now_us() + 2000000;
	for (int i = 0; i < e->npids; i++) {
		for (;;) {
			pid_t w = waitpid(e->pids[i], NULL, WNOHANG | __WALL);
			if (w != 0 && !(w < 0 && errno == EINTR))
				break;
			if (sandbox_now_us() > until)
				break;
			usleep(2000);
		}
	}
	e->npids = 0;
}

/* Sets the CPU priority of every thread of the container (the pool starts them
 * at a low one so that they do not slow down the runs in progress). */
static void entry_renice(struct gv_entry *e, int prio)
{
	struct cg *cg = entry_cg(e);
	pid_t tids[1024];
	int n = cg ? cg_list(cg, true, tids, 1024) : 0;
	for (int i = 0; i < n; i++)
		setpriority(PRIO_PROCESS, (id_t)tids[i], prio);
}

static void entry_unmount_box(struct gv_entry *e)
{
	if (!e->box_mounted)
		return;
	char path[PATH_MAX];
	gvhost_fmt(path, sizeof(path), "%s/b/box", e->dir);
	if (umount2(path, MNT_DETACH) < 0)
		log_warn("gvisor: cannot unmount '%s': %s", path, strerror(errno));
	e->box_mounted = false;
}

/* Hands e to the reapers (they delete the container and its files). */
static void entry_discard(struct gv_entry *e)
{
	if (e->in_fd >= 0)
		close(e->in_fd), e->in_fd = -1;
	entry_kill(e);
	entry_unmount_box(e);
	pthread_mutex_lock(&gv.lock);
	e->next = gv.dead;
	gv.dead = e;
	pthread_cond_signal(&gv.reap_cond);
	pthread_mutex_unlock(&gv.lock);
}

/* Deletes the container and everything it left: runs in a reaper thread. */
static void entry_reap(struct gv_entry *e)
{
	long long t0 = sandbox_now_us();
	entry_kill(e); /* the entry may come straight from a pool */
	/* reap first: runsc delete polls for the sandbox process to vanish, and a
	 * zombie never does (~1.5 s wasted per container) */
	entry_collect(e);
	/* what the sandbox cost the host (sentry, gofer, stubs), for tuning */
	long long cpu_us = -1000;
	struct cg *cg = entry_cg(e);
	if (cg)
		cg_cpu_us(cg, &cpu_us);
	int r = runsc("delete", "--force", e->id);
	gvhost_reap_orphans();
	/* what runsc left, in every hierarchy (also after a failed create, where
	 * cg_open finds none of ours but others may hold it) */
	if (!cg && gv.cg_ready)
		cg_open(&gv.cg_root, e->id, &e->cg), cg = &e->cg;
	if (cg)
		cg_remove(cg);
	e->cg_open = false;
	char path[PATH_MAX];
	gvhost_fmt(path, sizeof(path), "%s/b/box", e->dir);
	umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW); /* in case: nothing may stay mounted */
	gvhost_rm_tree(e->dir);
	if (r != 0)
		log_debug("gvisor: runsc delete %s exited %d", e->id, r);
	log_debug("gvisor: reaped %s in %lld ms; it used %lld ms of CPU over %u runs", e->id,
		  (sandbox_now_us() - t0) / 1000, cpu_us / 1000, e->runs);
	entry_free(e);
}

static void *reaper_main(void *arg)
{
	(void)arg;
	/* deleting is background work: below the runs (nice is per thread on Linux,
	 * and runsc inherits it) */
	setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
	pthread_mutex_lock(&gv.lock);
	for (;;) {
		while (!gv.dead && !gv.stopping)
			pthread_cond_wait(&gv.reap_cond, &gv.lock);
		if (!gv.dead && gv.stopping)
			break;
		struct gv_entry *e = gv.dead;
		gv.dead = e->next;
		gv.reaping++;
		pthread_mutex_unlock(&gv.lock);
		entry_reap(e);
		pthread_mutex_lock(&gv.lock);
		gv.reaping--;
		pthread_cond_broadcast(&gv.reap_cond);
	}
	pthread_mutex_unlock(&gv.lock);
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

/* Creates and starts one sandbox for pool p: ~170 ms, mostly runsc itself. */
static int entry_start(struct gv_pool *p, struct gv_entry **out, char *err, size_t errlen)
{
	int ret = -1, in[2] = {-1, -1}, o[2] = {-1, -1}, e2[2] = {-1, -1};
	struct gv_entry *e = calloc(1, sizeof(*e));
	long long t0 = sandbox_now_us();
	if (!e) {
		gvhost_fmt(err, errlen, "out of memory");
		return -1;
	}
	e->in_fd = e->out_fd = e->err_fd = -1;
	e->pool = p;
	pthread_mutex_lock(&gv.lock);
	unsigned long n = ++gv.serial;
	pthread_mutex_unlock(&gv.lock);
	gvhost_fmt(e->id, sizeof(e->id), GVHOST_ID_PREFIX "%ld-%lu", (long)getpid(), n);
	gvhost_fmt(e->dir, sizeof(e->dir), "%s/%s", gv.work, e->id);

	char path[PATH_MAX], cgpath[128];
	int r;
	if (mkdir(e->dir, 0700) < 0) {
		gvhost_fmt(err, errlen, "cannot create '%s': %s", e->dir, strerror(errno));
		free(e);
		return -1;
	}
	gvhost_fmt(path, sizeof(path), "%s/b", e->dir);
	if (mkdir(path, 0700) < 0 || (strcat(path, "/box"), mkdir(path, 0755) < 0)) {
		gvhost_fmt(err, errlen, "cannot create '%s': %s", path, strerror(errno));
		goto fail;
	}
	/* mount points of the runtime's folders in the (shared, read-only) root */
	for (char **rp = p->ro_paths; rp && *rp; rp++) {
		struct stat st;
		gvhost_fmt(path, sizeof(path), "%s%s", gv.rootfs, *rp);
		if (stat(*rp, &st) < 0) {
			gvhost_fmt(err, errlen, "read-only path '%s': %s", *rp, strerror(errno));
			goto fail;
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
				goto fail;
			}
			close(fd);
			continue;
		}
		if ((r = gvhost_mkdir_p(path, 0755)) < 0) {
			gvhost_fmt(err, errlen, "cannot create '%s': %s", path, strerror(-r));
			goto fail;
		}
	}
	char bdir[PATH_MAX + 8];
	gvhost_fmt(bdir, sizeof(bdir), "%s/b", e->dir);
	gvhost_fmt(cgpath, sizeof(cgpath), "/" GVHOST_CG_PARENT "/%s", e->id);
	struct oci_params op = {
	    .rootfs = gv.rootfs,
	    .args = (const char *const *)p->init_args,
	    .ro_paths = (const char *const *)p->ro_paths,
	    .std_binds = gv.std_binds,
	    .control_dir = bdir,
	    .cgroups_path = cgpath,
	    .memory_bytes = gv.max_memory_bytes + HEADROOM_BYTES,
	    .pids = 4096,
	    .tmp_bytes = (long long)gv.cfg->tmp_size_mb << 20,
	};
	gvhost_fmt(path, sizeof(path), "%s/config.json", e->dir);
	if (oci_write_config(path, &op, err, errlen) < 0)
		goto fail;

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(o, O_CLOEXEC) < 0 || pipe2(e2, O_CLOEXEC) < 0) {
		gvhost_fmt(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	char rootopt[PATH_MAX + 8], pidfile[PATH_MAX + 8];
	gvhost_fmt(rootopt, sizeof(rootopt), "--root=%s", gv.root);
	gvhost_fmt(pidfile, sizeof(pidfile), "%s/pid", e->dir);
	const char *argv[] = {gv.runsc, rootopt,      GLOBAL_FLAGS, "run", "--detach", "--bundle",
			      e->dir,	"--pid-file", pidfile,	    e->id, NULL};
	pid_t pid;
	if ((r = gvhost_spawn(argv, in[0], o[1], e2[1], &pid)) < 0) {
		gvhost_fmt(err, errlen, "cannot run '%s': %s", gv.runsc, strerror(-r));
		goto fail;
	}
	close(in[0]), close(o[1]), close(e2[1]);
	in[0] = o[1] = e2[1] = -1;
	e->in_fd = in[1], e->out_fd = o[0], e->err_fd = e2[0];
	in[1] = o[0] = e2[0] = -1;
	int st = gvhost_wait_exit(pid);
	if (st != 0) {
		char msg[512];
		read_runsc_error(e->err_fd, msg, sizeof(msg));
		gvhost_fmt(err, errlen, "runsc run exited %d: %s", st, msg[0] ? msg : "no message");
		goto discard;
	}
	struct strbuf sb = STRBUF_INIT;
	if (strbuf_read_file(&sb, pidfile, 64) == 0)
		e->sandbox_pid = (pid_t)atol(sb.buf);
	strbuf_release(&sb);
	/* init says 'R' when its warm-up is done and it waits for the job */
	struct pollfd pfd = {.fd = e->out_fd, .events = POLLIN};
	char ready = 0;
	if (poll(&pfd, 1, READY_TIMEOUT_MS) != 1 || read(e->out_fd, &ready, 1) != 1 ||
	    ready != 'R') {
		gvhost_fmt(err, errlen, "gvisor sandbox %s did not get ready", e->id);
		goto discard;
	}
	e->started_us = sandbox_now_us();
	log_debug("gvisor: started %s in %lld ms", e->id, (e->started_us - t0) / 1000);
	*out = e;
	return 0;
discard:
	entry_discard(e);
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
	gvhost_rm_tree(e->dir);
	entry_free(e);
	return ret;
}

/* ---- pools -------------------------------------------------------------- */

/* Warm-up of a runtime inside a fresh sandbox, before any job: box_init's
 * arguments (see box_init.c), NUL-separated in out. Only the runtime's own code
 * runs, as nobody, before the box is even mounted; it leaves the sentry's caches
 * of read-only runtime files warm and nothing else. What to run and read comes
 * from the language (spec's warm_argv and preload); without it, the program
 * itself is read when it lies outside the box. */
static void warm_args(const struct run_spec *spec, struct strbuf *out)
{
	const char *a0 = spec->argv ? spec->argv[0] : NULL;
	strbuf_addstr(out, INIT_INSIDE);
	strbuf_addch(out, 0);
#define ARG(s) (strbuf_addstr(out, (s)), strbuf_addch(out, 0))
	if (spec->warm_argv && spec->warm_argv[0]) {
		ARG("-x");
		for (const char *const *w = spec->warm_argv; *w; w++)
			ARG(*w);
		ARG("--");
	}
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
	char **v = calloc(n + 1, sizeof(char *));
	if (!v)
		abort();
	size_t k = 0;
	for (size_t i = 0; i < sb->len; i += strlen(sb->buf + i) + 1)
		if (!(v[k++] = strdup(sb->buf + i)))
			abort();
	return v;
}

/* Finds or adds the pool of a signature; gv.lock held. NULL when the table is full. */
static struct gv_pool *pool_get(const char *sig, const char *const *ro_paths,
				const struct strbuf *warm)
{
	for (int i = 0; i < gv.npools; i++)
		if (!strcmp(gv.pools[i].sig, sig))
			return &gv.pools[i];
	if (gv.npools == MAX_POOLS)
		return NULL;
	struct gv_pool *p = &gv.pools[gv.npools];
	size_t n = 0;
	while (ro_paths && ro_paths[n])
		n++;
	p->sig = strdup(sig);
	p->ro_paths = calloc(n + 1, sizeof(char *));
	if (!p->sig || !p->ro_paths) {
		free(p->sig);
		free(p->ro_paths);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (!(p->ro_paths[i] = strdup(ro_paths[i])))
			abort();
	p->init_args = split_nul(warm);
	gv.npools++;
	return p;
}

/* Picks a pool that lacks a sandbox, most recently used first; gv.lock held. */
static struct gv_pool *pool_needing(void)
{
	struct gv_pool *best = NULL;
	for (int i = 0; i < gv.npools; i++) {
		struct gv_pool *p = &gv.pools[i];
		if ((p->wanted || p->uses >= 2) && p->nready + p->starting < gv.pool_size &&
		    p->retry_us <= sandbox_now_us() &&
		    (!best || p->last_use_us > best->last_use_us))
			best = p;
	}
	return best;
}

static void *refill_main(void *arg)
{
	(void)arg;
	/* new sandboxes start below the runs in progress; entry_take raises them */
	setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
	pthread_mutex_lock(&gv.lock);
	while (!gv.stopping) {
		struct gv_pool *p = pool_needing();
		if (!p) {
			pthread_cond_wait(&gv.refill_cond, &gv.lock);
			continue;
		}
		p->starting++;
		pthread_mutex_unlock(&gv.lock);
		struct gv_entry *e = NULL;
		char err[512];
		int r = entry_start(p, &e, err, sizeof(err));
		pthread_mutex_lock(&gv.lock);
		p->starting--;
		if (r < 0) {
			log_error("gvisor: cannot start a pool sandbox: %s", err);
			p->retry_us = sandbox_now_us() + 30000000LL;
			/* do not spin on a broken runsc: wait a while */
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 2;
			pthread_cond_timedwait(&gv.refill_cond, &gv.lock, &ts);
			continue;
		}
		if (gv.stopping) {
			pthread_mutex_unlock(&gv.lock);
			entry_discard(e);
			pthread_mutex_lock(&gv.lock);
			break;
		}
		e->next = p->ready;
		p->ready = e;
		p->nready++;
		pthread_cond_broadcast(&gv.refill_cond);
	}
	pthread_mutex_unlock(&gv.lock);
	return NULL;
}

/* The warm-up and pool signature of the runtime of spec. */
static void runtime_of(const struct run_spec *spec, struct strbuf *warm, struct strbuf *sig)
{
	warm_args(spec, warm);
	sig_of(spec->ro_paths, warm, sig);
}

/* Takes a started sandbox for the runtime of spec (its warm-up and signature from
 * runtime_of): from the pool, or cold when none is ready. The entry keeps sig. */
static int entry_take(const struct run_spec *spec, const struct strbuf *warm,
		      const struct strbuf *sig, struct gv_entry **out, bool *cold, char *err,
		      size_t errlen)
{
	const char *const *ro_paths = spec->ro_paths;
	char *sig_copy = strdup(sig->buf);
	if (!sig_copy) {
		gvhost_fmt(err, errlen, "out of memory");
		return -1;
	}
	pthread_mutex_lock(&gv.lock);
	struct gv_pool *p = pool_get(sig->buf, ro_paths, warm);
	struct gv_entry *e = NULL;
	if (p) {
		p->last_use_us = sandbox_now_us();
		p->uses++;
		/* the oldest ready entry: the others stay warm for the next runs */
		struct gv_entry **pp = &p->ready;
		while (*pp && (*pp)->next)
			pp = &(*pp)->next;
		if ((e = *pp)) {
			*pp = NULL;
			p->nready--;
		}
		if (gv.threads)
			pthread_cond_broadcast(&gv.refill_cond);
	}
	pthread_mutex_unlock(&gv.lock);
	*cold = !e;
	int r = 0;
	if (e) {
		entry_renice(e, 0);
	} else if (!p) {
		/* more runtime signatures than pools: a private, unpooled one */
		struct gv_pool tmp;
		memset(&tmp, 0, sizeof(tmp));
		tmp.ro_paths = (char **)ro_paths;
		tmp.init_args = split_nul(warm);
		r = entry_start(&tmp, &e, err, errlen);
		if (r == 0)
			e->pool = NULL;
		for (char **a = tmp.init_args; *a; a++)
			free(*a);
		free(tmp.init_args);
	} else {
		r = entry_start(p, &e, err, errlen);
	}
	if (r < 0) {
		free(sig_copy);
		return r;
	}
	e->sig = sig_copy;
	*out = e;
	return 0;
}

/* ---- one run ------------------------------------------------------------ */

/* Writes the whole job header (small) before the pump; SIGPIPE is blocked and
 * consumed as in capture.c, so a dead sandbox gives EPIPE, not a signal. */
static int send_job(int fd, const void *buf, size_t len, long long deadline_us)
{
	sigset_t set, old, pending;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	sigpending(&pending);
	bool was = sigismember(&pending, SIGPIPE);
	int ret = 0;
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			long long left = deadline_us - sandbox_now_us();
			if (left <= 0) {
				ret = -ETIMEDOUT;
				break;
			}
			struct pollfd pfd = {.fd = fd, .events = POLLOUT};
			poll(&pfd, 1, (int)(left / 1000) + 1);
			continue;
		}
		ret = n < 0 ? -errno : -EIO;
		break;
	}
	if (!was) {
		struct timespec zero = {0, 0};
		while (sigtimedwait(&set, NULL, &zero) == SIGPIPE)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

static void build_job(const struct sandbox *sb, const struct run_spec *spec, struct strbuf *job,
		      uint8_t token[BX_TOKEN_LEN], unsigned stdin_seq)
{
	struct bx_job h;
	memset(&h, 0, sizeof(h));
	h.magic = BX_JOB_MAGIC;
	h.cpu_ms = spec->limits.cpu_ms;
	h.wall_ms = spec->limits.wall_ms;
	h.memory_kb = spec->limits.memory_kb;
	h.processes = spec->limits.processes;
	h.file_bytes = spec->limits.file_bytes;
	h.open_files = spec->limits.open_files;
	/* the stack may use all the memory the run has, as in most judges */
	h.stack_kb = spec->limits.memory_kb;
	h.uid = sb->host_uid;
	h.gid = sb->host_gid;
	h.filter_len = gv.filter.len;
	h.stdin_seq = stdin_seq;
	h.tmp_bytes = spec->limits.tmp_bytes;
	for (const char *const *a = spec->argv; *a; a++)
		h.argc++;
	for (const char *const *a = spec->env; a && *a; a++)
		h.envc++;
	memcpy(h.token, token, BX_TOKEN_LEN);
	strbuf_add(job, &h, sizeof(h));
	for (const char *const *a = spec->argv; *a; a++)
		strbuf_add(job, *a, strlen(*a) + 1);
	for (const char *const *a = spec->env; a && *a; a++)
		strbuf_add(job, *a, strlen(*a) + 1);
	/* the same policy as the native backend: gVisor enforces seccomp for its guests */
	strbuf_add(job, gv.filter.insns, gv.filter.len * sizeof(struct sock_filter));
	h.len = (uint32_t)job->len;
	memcpy(job->buf, &h, sizeof(h));
}

/* Lowers the container's cgroup limits to this run's (the entry was made for any run). */
static void set_run_limits(struct gv_entry *e, const struct run_spec *spec)
{
	struct cg *cg = entry_cg(e);
	if (!cg)
		return;
	long memory_kb = 0, pids = 0;
	if (spec->limits.memory_kb > 0)
		memory_kb = spec->limits.memory_kb + (long)(HEADROOM_BYTES >> 10);
	if (spec->limits.processes > 0) {
		/* gVisor's own threads count too (~50 idle, and on ptrace each guest
		 * process is a host stub with threads): a coarse backstop only, whose hit
		 * kills the sentry. box_init's RLIMIT_NPROC is the real limit. */
		long cur = 0;
		if (cg_pids_current(cg, &cur) < 0 || cur <= 0)
			cur = 64;
		pids = cur + 64L * spec->limits.processes + 256;
		if (pids < 4096)
			pids = 4096;
	}
	char err[256];
	if (cg_set_limits(cg, memory_kb, pids, err, sizeof(err)) < 0)
		log_debug("gvisor: %s: %s", e->id, err);
}

/* What this run showed: init's status trailer st (NULL when none came), how the
 * capture ended, and the sandbox cgroup's memory events. */
static void gather_facts(const struct run_spec *spec, const struct run_result *res,
			 const struct bx_status *st, enum capture_end end, struct gv_entry *e,
			 bool host_oom, struct run_facts *f)
{
	const struct run_limits *l = &spec->limits;
	f->host_oom = host_oom;
	f->output_over = end == CAPTURE_OUTPUT_LIMIT ||
			 (l->stdout_bytes > 0 && res->out.len > (size_t)l->stdout_bytes);
	f->deadline_hit = end == CAPTURE_DEADLINE;
	if (!st) {
		/* the sandbox ended without init's report: the host OOM killer, or a fault */
		long pids_hits = -1, failcnt = -1;
		struct cg *cg = entry_cg(e);
		if (cg) {
			cg_pids_limit_hits(cg, &pids_hits);
			cg_memory_failcnt(cg, &failcnt);
		}
		snprintf(f->message, sizeof(f->message),
			 "gvisor sandbox %s ended without a status (pids limit hit %ld times, "
			 "memory failcnt %ld)",
			 e->id, pids_hits, failcnt);
		return;
	}
	f->cpu_us = st->cpu_us;
	f->wall_us = st->wall_us;
	/* the peak of a process from its rusage (which counts file pages, polled
	 * apart) or the tree's polled peak, whichever is larger */
	long long own = st->maxrss_kb - st->file_rss_kb;
	f->peak_kb = (long)(own > st->peak_tree_kb ? own : st->peak_tree_kb);
	if (st->kind == BX_SETUP_FAILED) {
		run_facts_fault(f, "gvisor init failed at step %u: %s", st->setup_step,
				strerror(st->err));
		return;
	}
	if (st->kind == BX_EXEC_FAILED) {
		run_facts_fault(f, "cannot execute '%s' in the gvisor sandbox: %s", spec->argv[0],
				strerror(st->err));
		return;
	}
	f->end = st->kind == BX_SIGNALED ? RUN_END_SIGNALED : RUN_END_EXITED;
	f->code = st->code;
	f->oom_kill = st->flags & BX_MEM_LIMIT;
	f->cpu_limit_hit = st->flags & BX_CPU_LIMIT;
	f->deadline_hit = f->deadline_hit || (st->flags & BX_WALL_LIMIT);
}

/* Ends sb's session: its sandbox goes to the reapers. */
static void gvisor_close(struct sandbox *sb)
{
	struct gv_entry *e = sb->state[SANDBOX_GVISOR];
	sb->state[SANDBOX_GVISOR] = NULL;
	if (e)
		entry_discard(e);
}

/* The memory cgroup's OOM kills and failures so far (they only grow). */
static void memory_events(struct gv_entry *e, long *ooms, long *failcnt)
{
	struct cg *cg = entry_cg(e);
	*ooms = *failcnt = -1;
	if (cg) {
		cg_oom_kills(cg, ooms);
		cg_memory_failcnt(cg, failcnt);
	}
}

/* The session's sandbox for a run of spec: the one sb already has when it runs
 * the same runtime and the box did not change behind it, else a new one (from
 * the pool) with the box bound in. *fresh tells which. */
static int session_take(struct sandbox *sb, const struct run_spec *spec, struct gv_entry **out,
			bool *cold, bool *fresh, char *err, size_t errlen)
{
	struct strbuf warm = STRBUF_INIT, sig = STRBUF_INIT;
	runtime_of(spec, &warm, &sig);
	struct gv_entry *e = sb->state[SANDBOX_GVISOR];
	*cold = *fresh = false;
	if (e && (strcmp(e->sig, sig.buf) || e->box_changes != sb->box_changes))
		gvisor_close(sb), e = NULL;
	int r = 0;
	if (!e) {
		*fresh = true;
		r = entry_take(spec, &warm, &sig, &e, cold, err, errlen);
	}
	strbuf_release(&warm);
	strbuf_release(&sig);
	if (r < 0)
		return r;
	if (*fresh) {
		char path[PATH_MAX];
		gvhost_fmt(path, sizeof(path), "%s/b/box", e->dir);
		if (mount(sandbox_box_path(sb), path, NULL, MS_BIND, NULL) < 0) {
			gvhost_fmt(err, errlen, "cannot bind the box at '%s': %s", path,
				   strerror(errno));
			entry_discard(e);
			return -1;
		}
		e->box_mounted = true;
		e->box_changes = sb->box_changes;
		sb->state[SANDBOX_GVISOR] = e;
	}
	*out = e;
	return 0;
}

/* Puts the stdin of the run into the session's control folder as in-<seq>;
 * *seq = 0 when the program's stdin is empty. */
static int write_stdin(struct gv_entry *e, const struct run_spec *spec, unsigned *seq, char *path,
		       size_t pathlen, char *err, size_t errlen)
{
	*seq = 0;
	if (!spec->stdin_path && (!spec->stdin_data || !spec->stdin_len))
		return 0;
	*seq = e->runs;
	gvhost_fmt(path, pathlen, "%s/b/in-%u", e->dir, *seq);
	int r = spec->stdin_path ? gvhost_copy_file(spec->stdin_path, path, 0600)
				 : gvhost_write_file(path, spec->stdin_data, spec->stdin_len, 0600);
	if (r < 0) {
		gvhost_fmt(err, errlen, "cannot copy stdin to '%s': %s", path, strerror(-r));
		unlink(path);
		*seq = 0;
		return -1;
	}
	return 0;
}

static int gvisor_run(struct sandbox *sb, const struct run_spec *spec, struct run_result *res)
{
	if (!sb || !spec || !res || !spec->argv || !spec->argv[0])
		return -1;
	if (!gv.inited)
		return sandbox_fail(res, "gvisor sandbox unavailable: %s", gv.init_error);

	int ret = 0;
	struct gv_entry *e = NULL;
	struct strbuf job = STRBUF_INIT;
	char err[512], in_path[PATH_MAX] = "";
	bool cold, fresh, keep = false;
	unsigned seq = 0;
	long long t0 = sandbox_now_us();

	int attempts = 0;
again:
	if (session_take(sb, spec, &e, &cold, &fresh, err, sizeof(err)) < 0) {
		e = NULL;
		ret = sandbox_fail(res, "cannot start a gvisor sandbox: %s", err);
		goto out;
	}
	long long t_take = sandbox_now_us();
	e->runs++;
	set_run_limits(e, spec);
	memory_events(e, &e->ooms0, &e->failcnt0);
	if (write_stdin(e, spec, &seq, in_path, sizeof(in_path), err, sizeof(err)) < 0) {
		ret = sandbox_fail(res, "%s", err);
		goto out;
	}
	uint8_t token[BX_TOKEN_LEN];
	if (getrandom(token, sizeof(token), 0) != (ssize_t)sizeof(token)) {
		ret = sandbox_fail(res, "getrandom: %s", strerror(errno));
		goto out;
	}
	build_job(sb, spec, &job, token, seq);
	long long wall_us = spec->limits.wall_ms > 0 ? spec->limits.wall_ms * 1000LL : 0;
	/* init kills the run at wall_ms; this is the backstop if the sandbox hangs */
	long long deadline = wall_us ? sandbox_now_us() + wall_us + 500000 : 0;
	fcntl(e->in_fd, F_SETFL, O_NONBLOCK);
	int r = send_job(e->in_fd, job.buf, job.len, deadline ? deadline : LLONG_MAX);
	if (r == -EPIPE && !cold && attempts++ == 0) {
		/* a sandbox that died while it waited (in the pool or between the
		 * runs of this session): take another one */
		log_warn("gvisor: sandbox %s was dead, taking another", e->id);
		gvisor_close(sb);
		e = NULL;
		strbuf_reset(&job);
		if (in_path[0])
			unlink(in_path), in_path[0] = 0;
		goto again;
	}
	if (r < 0) {
		ret = sandbox_fail(res, "cannot send the job to gvisor sandbox %s: %s", e->id,
				   strerror(-r));
		goto out;
	}
	long long t_sent = sandbox_now_us();

	struct capture c;
	capture_init(&c);
	c.out_fd = e->out_fd;
	c.err_fd = e->err_fd;
	const size_t tail = sizeof(struct bx_status) + BX_TOKEN_LEN;
	c.out_max =
	    (spec->limits.stdout_bytes > 0 ? (size_t)spec->limits.stdout_bytes : SIZE_MAX / 2) +
	    tail;
	c.err_max =
	    spec->limits.stderr_bytes > 0 ? (size_t)spec->limits.stderr_bytes : SIZE_MAX / 2;
	c.out = &res->out;
	c.err = &res->err;
	c.out_mark = token;
	c.out_mark_len = BX_TOKEN_LEN;
	c.deadline_us = deadline;
	enum capture_end end = capture_pump(&c);
	capture_release(&c);
	long long t_done = sandbox_now_us();

	struct bx_status st, *stp = NULL;
	if (end == CAPTURE_DONE && res->out.len >= tail &&
	    !memcmp(res->out.buf + res->out.len - BX_TOKEN_LEN, token, BX_TOKEN_LEN)) {
		memcpy(&st, res->out.buf + res->out.len - tail, sizeof(st));
		if (st.magic == BX_STATUS_MAGIC && !memcmp(st.token, token, BX_TOKEN_LEN)) {
			stp = &st;
			res->out.len -= tail;
			res->out.buf[res->out.len] = 0;
		}
	}
	long ooms, failcnt;
	memory_events(e, &ooms, &failcnt);
	bool host_oom = ooms > e->ooms0 || failcnt > e->failcnt0;
	/* the sandbox serves the next run only after a clean end of this one */
	keep = stp && stp->kind != BX_SETUP_FAILED && !host_oom;
	if (!keep)
		entry_kill(e);
	res->err_truncated = c.err_truncated;
	res->out_truncated = c.out_truncated;
	struct run_facts f;
	run_facts_init(&f);
	gather_facts(spec, res, stp, end, e, host_oom, &f);
	f.capture_failed = end == CAPTURE_FAILED;
	f.capture_errno = c.error;
	if (!stp)
		f.wall_us = t_done - t_sent;
	run_verdict(&f, &spec->limits, res);
	if (spec->limits.stdout_bytes > 0 && res->out.len > (size_t)spec->limits.stdout_bytes) {
		res->out.len = (size_t)spec->limits.stdout_bytes;
		res->out.buf[res->out.len] = 0;
		res->out_truncated = true;
	}
	log_debug("gvisor: run %u of %s%s: take %lld us, send %lld us, run+read %lld us", e->runs,
		  e->id, cold ? " (cold)" : "", t_take - t0, t_sent - t_take, t_done - t_sent);
	if (stp)
		log_debug("gvisor: inside %s, from the job read: fork +%lld us, exec'd +%lld, "
			  "program gone +%lld, status written +%lld; host: job sent to end %lld us",
			  e->id, (long long)(stp->t_fork - stp->t_job),
			  (long long)(stp->t_exec - stp->t_job),
			  (long long)(stp->t_main - stp->t_job),
			  (long long)(stp->t_end - stp->t_job), t_done - t_sent);
out:
	if (in_path[0])
		unlink(in_path);
	if (e && !keep)
		gvisor_close(sb);
	strbuf_release(&job);
	return ret;
}

/* ---- set-up, sweep, shutdown ------------------------------------------- */

/* Host path of box_init: $JUDGE_BOX_INIT, else bin/box_init beside or above the binary. */
static int find_init(char *out, size_t len)
{
	const char *env = getenv("JUDGE_BOX_INIT");
	if (env && access(env, X_OK) == 0)
		return gvhost_fmt(out, len, "%s", env), 0;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	static const char *const rel[] = {"box_init", "../bin/box_init", "../../bin/box_init",
					  "../../../bin/box_init"};
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		gvhost_fmt(out, len, "%s/%s", exe, rel[i]);
		if (access(out, X_OK) == 0)
			return 0;
	}
	gvhost_fmt(out, len, "bin/box_init");
	return access(out, X_OK) == 0 ? 0 : -1;
}

/* Builds the read-only root: mount points, a minimal /etc, the init binary. */
static int make_rootfs(const char *init, char *err, size_t errlen)
{
	char p[PATH_MAX];
	static const char *const dirs[] = {"",	   "/etc", "/box", "/tmp", "/proc", "/dev",
					   "/sys", "/.b",  "/usr", "/opt", NULL};
	for (const char *const *d = dirs; *d; d++) {
		gvhost_fmt(p, sizeof(p), "%s%s", gv.rootfs, *d);
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			goto fail;
	}
	/* /bin, /lib ... : symlinks where the host has merged /usr (fewer mounts, faster
	 * start), else read-only binds */
	static const char *const top[] = {"/bin",   "/sbin",   "/lib", "/lib64",
					  "/lib32", "/libx32", NULL};
	int nb = 0;
	gv.std_binds[nb++] = "/usr";
	for (const char *const *t = top; *t; t++) {
		char target[PATH_MAX];
		struct stat st;
		gvhost_fmt(p, sizeof(p), "%s%s", gv.rootfs, *t);
		ssize_t n = readlink(*t, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = 0;
			if (symlink(target, p) < 0 && errno != EEXIST)
				goto fail;
		} else if (stat(*t, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				goto fail;
			gv.std_binds[nb++] = *t;
		}
	}
	gv.std_binds[nb] = NULL;

	struct strbuf pw = STRBUF_INIT, gr = STRBUF_INIT;
	strbuf_addstr(&pw, "root:x:0:0:root:/root:/usr/sbin/nologin\n");
	strbuf_addstr(&gr, "root:x:0:\n");
	for (long i = 0; i < 64; i++) {
		long id = gv.cfg->box_uid + i;
		strbuf_addf(&pw, "box%ld:x:%ld:%ld:box:/box:/usr/sbin/nologin\n", i, id, id);
		strbuf_addf(&gr, "box%ld:x:%ld:\n", i, id);
	}
	strbuf_addstr(&pw, "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
	strbuf_addstr(&gr, "nogroup:x:65534:\n");
	int r = 0;
	gvhost_fmt(p, sizeof(p), "%s/etc/passwd", gv.rootfs);
	r = r ? r : gvhost_write_file(p, pw.buf, pw.len, 0644);
	gvhost_fmt(p, sizeof(p), "%s/etc/group", gv.rootfs);
	r = r ? r : gvhost_write_file(p, gr.buf, gr.len, 0644);
	strbuf_release(&pw);
	strbuf_release(&gr);
	static const char hosts[] = "127.0.0.1 localhost\n::1 localhost\n";
	gvhost_fmt(p, sizeof(p), "%s/etc/hosts", gv.rootfs);
	r = r ? r : gvhost_write_file(p, hosts, sizeof(hosts) - 1, 0644);
	/* the loader finds libraries through the cache instead of probing paths
	 * one gofer round trip at a time */
	gvhost_fmt(p, sizeof(p), "%s/etc/ld.so.cache", gv.rootfs);
	if (!r && access("/etc/ld.so.cache", R_OK) == 0)
		r = gvhost_copy_file("/etc/ld.so.cache", p, 0644);
	gvhost_fmt(p, sizeof(p), "%s" INIT_INSIDE, gv.rootfs);
	r = r ? r : gvhost_copy_file(init, p, 0755);
	if (r < 0) {
		gvhost_fmt(err, errlen, "cannot write the sandbox root '%s': %s", p, strerror(-r));
		return -1;
	}
	return 0;
fail:
	gvhost_fmt(err, errlen, "cannot create '%s': %s", p, strerror(errno));
	return -1;
}

static void paths_from_config(const struct judge_config *cfg)
{
	const char *box_root = cfg && cfg->box_root ? cfg->box_root : "/run/judge";
	gvhost_fmt(gv.runsc, sizeof(gv.runsc), "%s", cfg && cfg->runsc ? cfg->runsc : "runsc");
	gvhost_fmt(gv.root, sizeof(gv.root), "%s/runsc", box_root);
	gvhost_fmt(gv.base, sizeof(gv.base), "%s/gvisor", box_root);
}

static void gvisor_sweep(void)
{
	const struct judge_config *cfg = sandbox_config();
	if (!gv.inited)
		paths_from_config(cfg);
	/* containers of dead owners: runsc keeps "<id>_sandbox:<id>.state" in its root */
	DIR *d = opendir(gv.root);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			long pid = gvhost_owner_pid(e->d_name);
			char *dot = strstr(e->d_name, ".state");
			if (pid < 0 || gvhost_pid_alive(pid) || !dot)
				continue;
			char id[256];
			gvhost_fmt(id, sizeof(id), "%.*s", (int)strcspn(e->d_name, "_"), e->d_name);
			log_info("gvisor: deleting container %s left by dead process %ld", id, pid);
			struct cg cg;
			if (gv_cgroups() && cg_open(&gv.cg_root, id, &cg) == 0) {
				cg_kill(&cg);
				cg_close(&cg);
			}
			runsc("delete", "--force", id);
		}
		closedir(d);
	}
	/* bundles and box mounts of dead owners */
	d = opendir(gv.base);
	if (d) {
		struct dirent *e;
		char dir[PATH_MAX];
		while ((e = readdir(d))) {
			char *end;
			long pid = strtol(e->d_name, &end, 10);
			if (*end || pid <= 0 || gvhost_pid_alive(pid))
				continue;
			gvhost_fmt(dir, sizeof(dir), "%s/%s", gv.base, e->d_name);
			log_info("gvisor: removing '%s' left by dead process %ld", dir, pid);
			gvhost_umount_below(dir);
			gvhost_rm_tree(dir);
		}
		closedir(d);
	}
	if (gv_cgroups())
		cg_sweep(&gv.cg_root, GVHOST_CG_PREFIX);
}

static bool gvisor_works(char *why, size_t whylen)
{
	if (!gv.inited)
		paths_from_config(sandbox_config());
	if (geteuid() != 0) {
		gvhost_fmt(why, whylen, "the gvisor backend needs root (runsc with cgroups)");
		return false;
	}
	if (!gvhost_find_program(gv.runsc[0] ? gv.runsc : "runsc", why, whylen))
		return false;
	char init[PATH_MAX];
	if (!gv.inited && find_init(init, sizeof(init)) < 0) {
		gvhost_fmt(why, whylen, "bin/box_init not found (run make)");
		return false;
	}
	if (access("/sys/fs/cgroup/memory", F_OK) < 0 &&
	    access("/sys/fs/cgroup/cgroup.controllers", F_OK) < 0) {
		gvhost_fmt(why, whylen, "no memory cgroup for runsc");
		return false;
	}
	return true;
}

static int setup(const struct judge_config *cfg, char *err, size_t errlen)
{
	char init[PATH_MAX];
	if (gv.inited)
		return 0;
	gv.cfg = cfg;
	paths_from_config(cfg);
	if (!gvisor_works(err, errlen))
		return -1;
	if (find_init(init, sizeof(init)) < 0) {
		gvhost_fmt(err, errlen, "bin/box_init not found (run make)");
		return -1;
	}
	gv.pool_size = (int)cfg->gvisor_pool;
	/* runsc leaves the sandbox and gofer processes to the parent's subreaper: be it,
	 * so that we can reap them (else killed ones stay zombies where pid 1 does not
	 * reap). We only ever wait for pids of our containers. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	gv.max_memory_bytes = cfg->max_memory_limit_mb << 20;
	gvhost_fmt(gv.work, sizeof(gv.work), "%s/%ld", gv.base, (long)getpid());
	gvhost_fmt(gv.rootfs, sizeof(gv.rootfs), "%s/rootfs", gv.work);
	int r;
	if ((r = gvhost_mkdir_p(gv.root, 0700)) < 0 || (r = gvhost_mkdir_p(gv.base, 0700)) < 0 ||
	    (r = gvhost_mkdir_p(gv.work, 0700)) < 0) {
		gvhost_fmt(err, errlen, "cannot create '%s': %s", gv.work, strerror(-r));
		return -1;
	}
	/* <work> is a shared mount of itself, so that boxes we bind in it later reach
	 * the gofers' mount namespaces (slaves of ours) */
	gvhost_umount_below(gv.work);
	if (mount(gv.work, gv.work, NULL, MS_BIND, NULL) < 0 ||
	    mount(NULL, gv.work, NULL, MS_SHARED, NULL) < 0) {
		gvhost_fmt(err, errlen, "cannot make '%s' a shared mount: %s", gv.work,
			   strerror(errno));
		umount2(gv.work, MNT_DETACH);
		return -1;
	}
	if (!gv_cgroups()) {
		gvhost_fmt(err, errlen, "no cgroups for runsc under /sys/fs/cgroup");
		goto fail;
	}
	if (scmp_build(&gv.filter, err, errlen) < 0)
		goto fail;
	if (mkdir(gv.rootfs, 0755) < 0 && errno != EEXIST) {
		gvhost_fmt(err, errlen, "cannot create '%s': %s", gv.rootfs, strerror(errno));
		goto fail;
	}
	if (make_rootfs(init, err, errlen) < 0)
		goto fail;
	gv.stopping = false;
	gv.inited = true;
	if (gv.pool_size > 0) {
		if (pthread_create(&gv.refiller, NULL, refill_main, NULL) != 0)
			goto threads;
	}
	for (int i = 0; i < REAPERS; i++)
		if (pthread_create(&gv.reapers[i], NULL, reaper_main, NULL) != 0)
			goto threads;
	gv.threads = true;
	log_debug("gvisor: ready (root %s, work %s, pool %d)", gv.root, gv.work, gv.pool_size);
	return 0;
threads:
	gvhost_fmt(err, errlen, "cannot start the gvisor threads");
	gv.inited = false;
	/* threads already started are joined by a later shutdown; keep it simple: this
	 * only happens when the process is out of resources */
fail:
	scmp_release(&gv.filter);
	gvhost_umount_below(gv.work);
	gvhost_rm_tree(gv.work);
	return -1;
}

static int gvisor_global_init(const struct judge_config *cfg, char *err, size_t errlen)
{
	int r = setup(cfg, err, errlen);
	if (r < 0)
		gvhost_fmt(gv.init_error, sizeof(gv.init_error), "%s", err);
	return r;
}

void gvisor_pool_prepare(const struct run_spec *spec)
{
	if (!gv.inited || gv.pool_size <= 0)
		return;
	const char *const *ro_paths = spec->ro_paths;
	struct strbuf sig = STRBUF_INIT, warm = STRBUF_INIT;
	runtime_of(spec, &warm, &sig);
	pthread_mutex_lock(&gv.lock);
	struct gv_pool *p = pool_get(sig.buf, ro_paths, &warm);
	if (p) {
		p->last_use_us = sandbox_now_us();
		p->wanted = true;
	}
	pthread_cond_broadcast(&gv.refill_cond);
	pthread_mutex_unlock(&gv.lock);
	strbuf_release(&sig);
	strbuf_release(&warm);
}

bool gvisor_pool_wait(const struct run_spec *spec, long timeout_ms)
{
	if (!gv.inited || gv.pool_size <= 0)
		return false;
	const char *const *ro_paths = spec->ro_paths;
	struct strbuf sig = STRBUF_INIT, warm = STRBUF_INIT;
	runtime_of(spec, &warm, &sig);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_sec++, ts.tv_nsec -= 1000000000L;
	bool full = false;
	pthread_mutex_lock(&gv.lock);
	for (;;) {
		struct gv_pool *p = pool_get(sig.buf, ro_paths, &warm);
		if (!p)
			break;
		p->wanted = true;
		if (p->nready >= gv.pool_size) {
			full = true;
			break;
		}
		pthread_cond_broadcast(&gv.refill_cond);
		if (pthread_cond_timedwait(&gv.refill_cond, &gv.lock, &ts) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&gv.lock);
	strbuf_release(&sig);
	strbuf_release(&warm);
	return full;
}

static void gvisor_global_shutdown(void)
{
	if (!gv.inited)
		return;
	pthread_mutex_lock(&gv.lock);
	gv.stopping = true;
	pthread_cond_broadcast(&gv.refill_cond);
	pthread_mutex_unlock(&gv.lock);
	if (gv.threads && gv.pool_size > 0)
		pthread_join(gv.refiller, NULL);
	/* unused pool sandboxes: to the reapers */
	for (int i = 0; i < gv.npools; i++) {
		struct gv_pool *p = &gv.pools[i];
		while (p->ready) {
			struct gv_entry *e = p->ready;
			p->ready = e->next;
			entry_discard(e);
		}
		p->nready = 0;
	}
	pthread_mutex_lock(&gv.lock);
	pthread_cond_broadcast(&gv.reap_cond);
	pthread_mutex_unlock(&gv.lock);
	if (gv.threads)
		for (int i = 0; i < REAPERS; i++)
			pthread_join(gv.reapers[i], NULL);
	/* the reapers leave the queue empty; anything left was never handed over */
	while (gv.dead) {
		struct gv_entry *e = gv.dead;
		gv.dead = e->next;
		entry_reap(e);
	}
	for (int i = 0; i < gv.npools; i++) {
		struct gv_pool *p = &gv.pools[i];
		for (char **rp = p->ro_paths; rp && *rp; rp++)
			free(*rp);
		free(p->ro_paths);
		for (char **a = p->init_args; a && *a; a++)
			free(*a);
		free(p->init_args);
		free(p->sig);
	}
	gv.npools = 0;
	gv.threads = false;
	scmp_release(&gv.filter);
	gvhost_umount_below(gv.work);
	gvhost_rm_tree(gv.work);
	gv.inited = false;
}

const struct sandbox_ops gvisor_ops = {
    .name = "gvisor",
    .sweep = gvisor_sweep,
    .global_init = gvisor_global_init,
    .global_shutdown = gvisor_global_shutdown,
    .works = gvisor_works,
    .prepare = gvisor_pool_prepare,
    .run = gvisor_run,
    .close = gvisor_close,
};
