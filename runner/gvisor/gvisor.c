/* gvisor: the gVisor backend — runs the programs of each workspace in a runsc
 * sandbox, which may serve later workspaces of the same reuse key.
 *
 * Theory of operation.
 *
 * Sandboxes are started ahead of need, in a pool per runtime (gvpool.c: pools,
 * the refill thread, the reapers). This file is the run path: it takes an
 * entry, binds the box in, sends a job to box_init inside and turns what came
 * back into facts for verdict_decide (verdict.c).
 *
 * Sessions. An entry serves the runs of one workspace (its tests, run after
 * run) for one runtime. It is destroyed as soon as a run does not end cleanly
 * (output limit, host deadline, OOM of the sandbox, no valid trailer, a setup
 * failure). A run that hit a limit inside (CPU, memory, wall: init killed it
 * and reported) leaves the entry to its workspace but taints it: it will serve
 * no other. Every run gets a fresh /tmp and /dev/shm and an IPC namespace of its
 * own, and is reaped to the last process before its status is written.
 *
 * Reuse across workspaces. A workspace with a reuse key (sandbox_set_reuse_key:
 * the worker uses one per API key) hands its entry on when it closes
 * (gvisor_close): its box is emptied (the sentry keeps files of it open in its
 * caches, which would pin their data), unmounted on our side, and the entry
 * parked (gvpool_park) for a later workspace of the same key and runtime, which
 * takes it (gvpool_take_idle) before the pool. Never another key's, never one
 * without a key, never a live one (sandbox_start). It is recycled (deleted)
 * after gvisor_reuse_runs runs or gvisor_reuse_s seconds from its start, when
 * tainted, and when more than max(4, 2 x pool) are parked; idle ones past their
 * life are deleted by the reaper threads. What a workspace may leave for the
 * next in the sandbox: nothing (box_init.c lists why; tests/test_gvisor_reuse.c
 * checks files, /tmp, /dev/shm, processes, IPC, signals, env and uid).
 *
 * The box arrives after start: every entry binds its own empty host folder
 * <work>/<id>/b (mode 0700) at /.b inside. <work> is a shared mount, so the
 * gofer (in its own mount namespace, a slave of ours) sees what we mount under
 * it later. Before a job we bind the workspace's box onto <work>/<id>/b/box-N
 * and the job tells init N (bx_job.box_seq); init binds /.b/box-N at /box when
 * it has another there (the gofer opens files lazily by path, so it finds the
 * new mount). N is new for every box bound: the sentry caches what it has seen
 * under a name (--file-access-mounts=exclusive), never what it has not. So a
 * workspace whose box changed behind the sandbox (sandbox.box_changes: a host
 * write, a native run) keeps its sandbox: the same box is bound again under a
 * new N, and the next run sees the host's files. The stdin of each run is a
 * new file <work>/<id>/b/in-N that init opens as root and hands to the program
 * as fd 0; its fds 1/2 go straight to our pipes.
 *
 * The end of a run: init reaps every process of the run, then writes a status
 * trailer and the job's secret token as the last bytes of the run on stdout;
 * we read stdout until it ends with the token (and stderr to what it holds
 * then: every writer is dead) (capture.c), check and strip the trailer. The
 * end of a session: gvpool_park (above), or gvpool_discard (kill the cgroup's
 * processes, unmount the box, hand the entry to a reaper). runsc's own exit
 * code is never read as the program's status. The sandbox's cgroups (made by
 * runsc from oci.c's cgroupsPath) are read, limited and removed through cg.c,
 * v1 or v2.
 *
 * Leftovers of a process that died (SIGKILL of the worker, a crash): everything
 * is the process's owner's (runner/owner.h). Container ids are
 * "jgv-<owner>-<n>", runsc's --root is <owner folder>/runsc, bundles and boxes
 * live in <owner folder>/gvisor, cgroups are <parent>-gvisor/<id> of every
 * hierarchy (noted in the owner folder). Whoever reclaims a dead owner kills
 * the processes of those cgroups and any runsc still running with that
 * --root, unmounts, removes the cgroups and the folder: no runsc call, no pid
 * guessed from a name.
 */
#define _GNU_SOURCE
#include "runner/gvisor/gvpool.h"

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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "runner/backend.h"
#include "runner/capture.h"
#include "runner/cg.h"
#include "runner/gvisor/gvhost.h"
#include "runner/gvisor/init/box_proto.h"
#include "runner/gvisor/oci.h"
#include "runner/owner.h"
#include "runner/scmp.h"
#include "runner/verdict.h"

static struct {
	bool inited;
	const struct sandbox_options *opts;
	struct gvpool_env env;	   /* paths, limits and cgroups every pool entry is made from */
	struct scmp_filter filter; /* the program's seccomp policy, installed by box_init */
	char init_error[512];	   /* why the backend is not running */
} gv = {
    .init_error = "gvisor backend not started",
};

/* cg_root_parents: tells the owner where its containers' cgroups are. */
static void note_parent(const char *parent, void *arg)
{
	(void)arg;
	owner_note_cgroup_parent(parent);
}

/* Finds where runsc puts the containers' cgroups (once, before any thread):
 * <cgroup_parent>-gvisor in every hierarchy. */
static bool gv_cgroups(void)
{
	char err[256];
	if (!gv.env.cg_ready &&
	    cg_root_oci(&gv.env.cg_root, NULL, gv.env.cg_sub, err, sizeof(err)) == 0) {
		gv.env.cg_ready = true;
		cg_root_parents(&gv.env.cg_root, note_parent, NULL);
	}
	return gv.env.cg_ready;
}

/* ---- one run ------------------------------------------------------------ */

static void build_job(const struct sandbox *sb, const struct gv_entry *e,
		      const struct run_spec *spec, struct strbuf *job,
		      const uint8_t token[BX_TOKEN_LEN], unsigned stdin_seq, uint32_t flags)
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
	h.job_flags = flags | (spec->box_home && !spec->box_subdir ? BX_JOB_HOME : 0);
	h.box_seq = e->box_seq;
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
	struct cg *cg = gvpool_cg(e);
	if (!cg)
		return;
	long memory_kb = 0, pids = 0;
	if (spec->limits.memory_kb > 0)
		memory_kb = spec->limits.memory_kb + (long)(GVPOOL_HEADROOM_BYTES >> 10);
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
		struct cg *cg = gvpool_cg(e);
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
		verdict_fault(f, "gvisor init failed at step %u: %s", st->setup_step,
			      strerror(st->err));
		return;
	}
	if (st->kind == BX_EXEC_FAILED) {
		verdict_fault(f, "cannot execute '%s' in the gvisor sandbox: %s", spec->argv[0],
			      strerror(st->err));
		return;
	}
	f->end = st->kind == BX_SIGNALED ? RUN_END_SIGNALED : RUN_END_EXITED;
	f->code = st->code;
	f->oom_kill = st->flags & BX_MEM_LIMIT;
	f->cpu_limit_hit = st->flags & BX_CPU_LIMIT;
	f->deadline_hit = f->deadline_hit || (st->flags & BX_WALL_LIMIT);
}

/* Ends sb's session: when park, its sandbox may wait for a later workspace of
 * sb's reuse key (gvpool_park decides), else it goes to the reapers. */
static void session_end(struct sandbox *sb, bool park)
{
	struct gv_entry *e = sb->state[SANDBOX_GVISOR];
	sb->state[SANDBOX_GVISOR] = NULL;
	if (e && park && sb->reuse_key)
		gvpool_park(e, sb->reuse_key);
	else if (e)
		gvpool_discard(e);
}

/* The workspace is closed: its last run ended cleanly (else the sandbox is gone
 * already), so the sandbox may serve another workspace of the key. The sentry
 * and gofer keep files of the box open (cached dentries) after it is unmounted,
 * and with them the box's memory: the box is emptied first (its files
 * truncated), and the sandbox discarded when that fails. */
static void gvisor_close(struct sandbox *sb)
{
	struct gv_entry *e = sb->state[SANDBOX_GVISOR];
	bool park = e && sb->reuse_key && !e->tainted;
	int r = park ? sandbox_box_empty(sb) : 0;
	if (r < 0)
		log_debug("gvisor: cannot empty the box of %s (%s): not reused", e->id,
			  strerror(-r));
	session_end(sb, park && r == 0);
}

/* The memory cgroup's OOM kills and failures so far (they only grow). */
static void memory_events(struct gv_entry *e, long *ooms, long *failcnt)
{
	struct cg *cg = gvpool_cg(e);
	*ooms = *failcnt = -1;
	if (cg) {
		cg_oom_kills(cg, ooms);
		cg_memory_failcnt(cg, failcnt);
	}
}

/* The session's sandbox for a run of spec: the one sb already has when it runs
 * the same runtime, else one parked by an earlier workspace of sb's reuse key,
 * else a new one (from the pool). *fresh tells when it is not sb's already.
 * The box is bound under a new name whenever the sandbox is new to it or the
 * box changed behind it (a host write, a native run): the sentry caches what it
 * saw under the old name, never under a name it has not seen. */
static int session_take(struct sandbox *sb, const struct run_spec *spec, struct gv_entry **out,
			bool *cold, bool *fresh, char *err, size_t errlen)
{
	struct strbuf sig = STRBUF_INIT;
	gvpool_sig(spec, &sig);
	struct gv_entry *e = sb->state[SANDBOX_GVISOR];
	*cold = *fresh = false;
	/* another runtime (a tool in gVisor, then the program): not parked, since
	 * its caches pin the box, which is only emptied when the workspace closes */
	if (e && strcmp(e->sig, sig.buf))
		session_end(sb, false), e = NULL;
	int r = 0;
	if (!e) {
		*fresh = true;
		e = sb->reuse_key ? gvpool_take_idle(sb->reuse_key, sig.buf) : NULL;
		if (e)
			log_debug("gvisor: %s reused for key %s", e->id, sb->reuse_key);
		else
			r = gvpool_take(spec, &e, cold, err, errlen);
	}
	strbuf_release(&sig);
	if (r < 0)
		return r;
	if (*fresh || e->box_changes != sb->box_changes) {
		sb->state[SANDBOX_GVISOR] = NULL;
		if (gvpool_bind_box(e, sandbox_box_path(sb), err, errlen) < 0) {
			gvpool_discard(e);
			return -1;
		}
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

/* Takes init's status trailer off the end of out into st: true when out ends
 * with a valid one for this job's token. */
/* capture's live hook holds back what may begin the trailer: its token */
_Static_assert(offsetof(struct bx_status, token) == 0, "the trailer must begin with the token");

static bool take_trailer(struct strbuf *out, const uint8_t token[BX_TOKEN_LEN],
			 struct bx_status *st)
{
	const size_t tail = sizeof(struct bx_status) + BX_TOKEN_LEN;
	if (out->len < tail || memcmp(out->buf + out->len - BX_TOKEN_LEN, token, BX_TOKEN_LEN))
		return false;
	memcpy(st, out->buf + out->len - tail, sizeof(*st));
	if (st->magic != BX_STATUS_MAGIC || memcmp(st->token, token, BX_TOKEN_LEN))
		return false;
	out->len -= tail;
	out->buf[out->len] = 0;
	return true;
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
	int64_t t0 = clock_mono_us();
	int attempts = 0;
again:
	if (session_take(sb, spec, &e, &cold, &fresh, err, sizeof(err)) < 0) {
		e = NULL;
		ret = sandbox_fail(res, "cannot start a gvisor sandbox: %s", err);
		goto out;
	}
	int64_t t_take = clock_mono_us();
	gvhost_fmt(res->sandbox_id, sizeof(res->sandbox_id), "%s", e->id);
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
	build_job(sb, e, spec, &job, token, seq, 0);
	int64_t wall_us = spec->limits.wall_ms > 0 ? spec->limits.wall_ms * 1000LL : 0;
	/* init kills the run at wall_ms; this is the backstop if the sandbox hangs */
	int64_t deadline = wall_us ? clock_mono_us() + wall_us + 500000 : 0;
	fcntl(e->in_fd, F_SETFL, O_NONBLOCK);
	int r = capture_write_all(e->in_fd, job.buf, job.len, deadline ? deadline : INT64_MAX);
	if (r == -EPIPE && !cold && attempts++ == 0) {
		/* a sandbox that died while it waited (in the pool or between the
		 * runs of this session): take another one */
		log_warn("gvisor: sandbox %s was dead, taking another", e->id);
		session_end(sb, false);
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
	int64_t t_sent = clock_mono_us();

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
	c.out_tail = tail; /* struct bx_status begins with the token too */
	c.on_output = spec->on_output;
	c.output_arg = spec->output_arg;
	c.deadline_us = deadline;
	enum capture_end end = capture_pump(&c);
	capture_release(&c);
	int64_t t_done = clock_mono_us();

	struct bx_status st;
	struct bx_status *stp =
	    end == CAPTURE_DONE && take_trailer(&res->out, token, &st) ? &st : NULL;
	long ooms, failcnt;
	memory_events(e, &ooms, &failcnt);
	bool host_oom = ooms > e->ooms0 || failcnt > e->failcnt0;
	/* the sandbox serves the next run only after a clean end of this one */
	keep = stp && stp->kind != BX_SETUP_FAILED && !host_oom;
	if (!keep)
		gvpool_kill(e);
	/* a run that hit a limit may serve on in its workspace, never in another */
	if (!keep || stp->flags ||
	    (spec->limits.stdout_bytes > 0 && res->out.len > (size_t)spec->limits.stdout_bytes))
		e->tainted = true;
	res->err_truncated = c.err_truncated;
	res->out_truncated = c.out_truncated;
	struct run_facts f;
	verdict_facts_init(&f);
	gather_facts(spec, res, stp, end, e, host_oom, &f);
	f.capture_failed = end == CAPTURE_FAILED;
	f.capture_errno = c.error;
	if (!stp)
		f.wall_us = t_done - t_sent;
	verdict_decide(&f, &spec->limits, res);
	if (spec->limits.stdout_bytes > 0 && res->out.len > (size_t)spec->limits.stdout_bytes) {
		res->out.len = (size_t)spec->limits.stdout_bytes;
		res->out.buf[res->out.len] = 0;
		res->out_truncated = true;
	}
	log_debug("gvisor: run %u of %s%s: take %lld us, send %lld us, run+read %lld us", e->runs,
		  e->id, cold ? " (cold)" : "", (long long)(t_take - t0),
		  (long long)(t_sent - t_take), (long long)(t_done - t_sent));
	if (stp)
		log_debug("gvisor: inside %s, from the job read: fork +%lld us, exec'd +%lld, "
			  "program gone +%lld, status written +%lld; host: job sent to end %lld us",
			  e->id, (long long)(stp->t_fork - stp->t_job),
			  (long long)(stp->t_exec - stp->t_job),
			  (long long)(stp->t_main - stp->t_job),
			  (long long)(stp->t_end - stp->t_job), (long long)(t_done - t_sent));
out:
	if (in_path[0])
		unlink(in_path);
	if (e && !keep)
		session_end(sb, false);
	strbuf_release(&job);
	return ret;
}

/* ---- live processes (sandbox_start) --------------------------------------- */

/* A live program: the sandbox serves it alone (its own entry, not sb's session). */
struct gv_proc {
	struct gv_entry *e;
	int pidfd; /* of the sandbox process: it exits after init wrote the status */
	uint8_t token[BX_TOKEN_LEN];
	char argv0[256];
	bool killed;
};

/* A fresh live sandbox of spec's runtime with sb's box bound in. 0 or -1 with err. */
static int live_take(struct sandbox *sb, const struct run_spec *spec, struct gv_entry **out,
		     char *err, size_t errlen)
{
	bool cold;
	struct gv_entry *e;
	if (gvpool_take_live(spec, true, &e, &cold, err, errlen) < 0)
		return -1;
	if (gvpool_bind_box(e, sandbox_box_path(sb), err, errlen) < 0) {
		gvpool_discard(e);
		return -1;
	}
	e->runs++;
	set_run_limits(e, spec);
	memory_events(e, &e->ooms0, &e->failcnt0);
	*out = e;
	return 0;
}

/* What a checkpoint folder holds beside runsc's image: the box's name inside
 * and the job's token (box_init writes it with the status at the end). */
#define CKPT_META "judge-gvisor"

/* Reads dir's CKPT_META into *seq and token. 0, or -1 with err. */
static int meta_read(const char *dir, unsigned *seq, uid_t *uid, uint8_t token[BX_TOKEN_LEN],
		     char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct strbuf sb = STRBUF_INIT;
	gvhost_fmt(path, sizeof(path), "%s/" CKPT_META, dir);
	int ret = -1, used = 0;
	unsigned long n = 0, u = 0;
	if (strbuf_read_file(&sb, path, 256) < 0) {
		gvhost_fmt(err, errlen, "the checkpoint has no '" CKPT_META "'");
		goto out;
	}
	if (sscanf(sb.buf, "%lu %lu %n", &n, &u, &used) != 2 || n == 0 || n > 1000000 ||
	    u < (unsigned long)gv.opts->box_uid || u > (unsigned long)gv.opts->box_uid + 65536 ||
	    sb.len < (size_t)used + 2 * BX_TOKEN_LEN) {
		gvhost_fmt(err, errlen, "the checkpoint's '" CKPT_META "' is malformed");
		goto out;
	}
	for (size_t i = 0; i < BX_TOKEN_LEN; i++) {
		unsigned b;
		if (sscanf(sb.buf + used + 2 * i, "%2x", &b) != 1) {
			gvhost_fmt(err, errlen, "the checkpoint's '" CKPT_META "' is malformed");
			goto out;
		}
		token[i] = (uint8_t)b;
	}
	*seq = (unsigned)n;
	*uid = (uid_t)u;
	ret = 0;
out:
	strbuf_release(&sb);
	return ret;
}

/* A live sandbox restored from spec->restore_dir around sb's box. 0 or -1 with err. */
static int live_restore(struct sandbox *sb, const struct run_spec *spec, struct gv_proc *gp,
			char *err, size_t errlen)
{
	unsigned seq;
	uid_t uid;
	if (meta_read(spec->restore_dir, &seq, &uid, gp->token, err, errlen) < 0)
		return -1;
	/* its processes keep the uid they had, which owns the box then */
	int r = uid == sb->host_uid ? 0 : sandbox_box_adopt_owner(sb, uid, (gid_t)uid);
	if (r < 0) {
		gvhost_fmt(err, errlen, "cannot give the box to uid %u: %s", (unsigned)uid,
			   strerror(-r));
		return -1;
	}
	if (gvpool_restore(spec, spec->restore_dir, sandbox_box_path(sb), seq, &gp->e, err,
			   errlen) < 0)
		return -1;
	gp->e->box_changes = sb->box_changes;
	gp->e->runs++;
	set_run_limits(gp->e, spec);
	memory_events(gp->e, &gp->e->ooms0, &gp->e->failcnt0);
	return 0;
}

static int gvisor_start(struct sandbox *sb, const struct run_spec *spec, struct sandbox_proc *p,
			char *err, size_t errlen)
{
	if (!gv.inited) {
		gvhost_fmt(err, errlen, "gvisor sandbox unavailable: %s", gv.init_error);
		return -1;
	}
	struct gv_proc *gp = xcalloc(1, sizeof(*gp));
	struct strbuf job = STRBUF_INIT;
	gp->pidfd = -1;
	gvhost_fmt(gp->argv0, sizeof(gp->argv0), "%s", spec->argv[0]);
	if (spec->restore_dir && spec->net_ns_fd > 0) {
		gvhost_fmt(err, errlen, "a sandbox in a network namespace is not restored");
		goto fail;
	}
	if (spec->restore_dir ? live_restore(sb, spec, gp, err, errlen) < 0
			      : live_take(sb, spec, &gp->e, err, errlen) < 0)
		goto fail;
	struct gv_entry *e = gp->e;
	/* the container's cgroup in runsc's cpu hierarchy holds the sentry, the
	 * gofer and (ptrace) the stubs that run the program's code */
	struct cg *cg = gvpool_cg(e);
	long weight = spec->cpu_weight != CG_CPU_WEIGHT_DEFAULT ? spec->cpu_weight : 0;
	if ((spec->cpu_millis > 0 || weight > 0) &&
	    (!cg || (spec->cpu_millis > 0 && cg_set_cpu(cg, spec->cpu_millis, err, errlen) < 0) ||
	     (weight > 0 && cg_set_cpu_weight(cg, weight, err, errlen) < 0))) {
		if (!cg)
			gvhost_fmt(err, errlen, "gvisor sandbox %s: no cgroup to limit its CPU",
				   e->id);
		goto fail;
	}
	gp->pidfd = e->sandbox_pid > 0 ? (int)syscall(SYS_pidfd_open, e->sandbox_pid, 0) : -1;
	if (gp->pidfd < 0) {
		gvhost_fmt(err, errlen, "gvisor sandbox %s: no sandbox process to watch", e->id);
		goto fail;
	}
	if (spec->restore_dir)
		goto started; /* the job was read before the checkpoint */
	if (getrandom(gp->token, sizeof(gp->token), 0) != (ssize_t)sizeof(gp->token)) {
		gvhost_fmt(err, errlen, "getrandom: %s", strerror(errno));
		goto fail;
	}
	build_job(sb, e, spec, &job, gp->token, 0, BX_JOB_LIVE);
	int r = capture_write_all(e->in_fd, job.buf, job.len, clock_mono_us() + 5000000);
	if (r < 0) {
		gvhost_fmt(err, errlen, "cannot send the job to gvisor sandbox %s: %s", e->id,
			   strerror(-r));
		goto fail;
	}
started:
	/* the caller's now: the job pipe is the program's stdin */
	p->in_fd = e->in_fd, p->out_fd = e->out_fd, p->err_fd = e->err_fd;
	e->in_fd = e->out_fd = e->err_fd = -1;
	p->impl = gp;
	strbuf_release(&job);
	return 0;
fail:
	if (gp->pidfd >= 0)
		close(gp->pidfd);
	if (gp->e)
		gvpool_discard(gp->e);
	free(gp);
	strbuf_release(&job);
	return -1;
}

/* runsc checkpoint of the live sandbox into dir, with CKPT_META beside: the
 * sandbox exits once its image is written. */
static int gvisor_proc_checkpoint(struct sandbox_proc *p, const char *dir, char *err, size_t errlen)
{
	struct gv_proc *gp = p->impl;
	if (!gp->e) {
		gvhost_fmt(err, errlen, "the sandbox has ended");
		return -1;
	}
	if (gp->e->host_net) {
		/* its sockets are host sockets of a namespace that stays here */
		gvhost_fmt(err, errlen, "a sandbox with network access is not checkpointed");
		return -1;
	}
	char meta[PATH_MAX], text[32 + 2 * BX_TOKEN_LEN + 2];
	int n = snprintf(text, sizeof(text), "%u %u ", gp->e->box_seq, (unsigned)p->sb->host_uid);
	for (size_t i = 0; i < BX_TOKEN_LEN; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "%02x", gp->token[i]);
	snprintf(text + n, sizeof(text) - (size_t)n, "\n");
	gvhost_fmt(meta, sizeof(meta), "%s/" CKPT_META, dir);
	int r = gvhost_write_file(meta, text, strlen(text), 0600);
	if (r < 0) {
		gvhost_fmt(err, errlen, "cannot write '%s': %s", meta, strerror(-r));
		return -1;
	}
	int st = gvpool_checkpoint(&gv.env, gp->e, dir);
	if (st != 0) {
		/* runsc may have stopped it halfway (a full disk): never leave a
		 * sandbox in a state nobody knows */
		gvhost_fmt(err, errlen, "runsc checkpoint of %s exited %d", gp->e->id, st);
		gp->killed = true;
		gvpool_kill(gp->e);
		return -2;
	}
	/* a resume here then skips `runsc create` */
	gvpool_want_restore(gp->e->sig);
	return 0;
}

static int gvisor_proc_signal(struct sandbox_proc *p, int sig)
{
	struct gv_proc *gp = p->impl;
	if (!gp->e)
		return -ESRCH;
	if (sig == SIGKILL) {
		gp->killed = true;
		gvpool_kill(gp->e);
		return 0;
	}
	char num[16];
	gvhost_fmt(num, sizeof(num), "%d", sig);
	/* to init, which passes it on to the program's process group */
	return gvpool_runsc_on(&gv.env, gp->e, "kill", gp->e->id, num) == 0 ? 0 : -ESRCH;
}

static int gvisor_proc_usage(struct sandbox_proc *p, long long *cpu_us, long *memory_kb)
{
	struct gv_proc *gp = p->impl;
	struct cg *cg = gp->e ? gvpool_cg(gp->e) : NULL;
	if (!cg)
		return -ENOENT;
	int rc = cg_cpu_us(cg, cpu_us);
	return rc < 0 ? rc : cg_memory_current_kb(cg, memory_kb);
}

static struct cg *gvisor_proc_cg(struct sandbox_proc *p)
{
	struct gv_proc *gp = p->impl;
	return gp->e ? gvpool_cg(gp->e) : NULL;
}

static int gvisor_proc_ooms(struct sandbox_proc *p, long *count)
{
	struct gv_proc *gp = p->impl;
	if (!gp->e)
		return -ENOENT;
	long ooms, failcnt;
	memory_events(gp->e, &ooms, &failcnt);
	if (ooms < 0)
		return -ENOENT;
	*count = ooms - gp->e->ooms0;
	return 0;
}

/* Reads a live job's status file: true when it holds a valid end for token. */
static bool read_status(struct gv_entry *e, const uint8_t token[BX_TOKEN_LEN], struct bx_status *st)
{
	char path[PATH_MAX];
	struct strbuf sb = STRBUF_INIT;
	gvhost_fmt(path, sizeof(path), "%s/b/status", e->dir);
	bool ok = strbuf_read_file(&sb, path, 4096) == 0 && take_trailer(&sb, token, st);
	strbuf_release(&sb);
	return ok;
}

static void gvisor_proc_wait(struct sandbox_proc *p, int64_t deadline_us, struct run_result *res)
{
	struct gv_proc *gp = p->impl;
	bool late = false;
	for (;;) {
		struct pollfd pfd = {.fd = gp->pidfd, .events = POLLIN};
		int64_t left = deadline_us - clock_mono_us();
		if (left <= 0) {
			late = true;
			break;
		}
		int r = poll(&pfd, 1, (int)(left / 1000) + 1);
		if (r > 0 || (r < 0 && errno != EINTR))
			break;
	}
	if (late)
		gvpool_kill(gp->e);
	struct bx_status st;
	bool have = !late && read_status(gp->e, gp->token, &st);
	long ooms, failcnt;
	memory_events(gp->e, &ooms, &failcnt);
	bool host_oom = ooms > gp->e->ooms0 || failcnt > gp->e->failcnt0;
	const char *argv[] = {gp->argv0, NULL};
	struct run_spec spec = {.argv = argv, .limits = p->limits};
	struct run_facts f;
	verdict_facts_init(&f);
	gather_facts(&spec, res, have ? &st : NULL, late ? CAPTURE_DEADLINE : CAPTURE_DONE, gp->e,
		     host_oom, &f);
	if (!have && gp->killed && !late) {
		f.end = RUN_END_SIGNALED; /* the caller's SIGKILL ended the sandbox */
		f.code = SIGKILL;
	}
	if (!have)
		f.wall_us = clock_mono_us() - p->t0_us;
	verdict_decide(&f, &p->limits, res);
	gvhost_fmt(res->sandbox_id, sizeof(res->sandbox_id), "%s", gp->e->id);
	gvpool_discard(gp->e);
	gp->e = NULL;
}

static void gvisor_proc_free(struct sandbox_proc *p)
{
	struct gv_proc *gp = p->impl;
	if (!gp)
		return;
	if (gp->e)
		gvpool_discard(gp->e);
	if (gp->pidfd >= 0)
		close(gp->pidfd);
	free(gp);
	p->impl = NULL;
}

/* ---- set-up, sweep, shutdown ------------------------------------------- */

/* Builds the read-only root: mount points, a minimal /etc, the init binary. */
static int make_rootfs(const char *init, char *err, size_t errlen)
{
	char p[PATH_MAX];
	static const char *const dirs[] = {"",	    "/etc",	  "/box", "/tmp", "/proc",
					   "/dev",  "/sys",	  "/.b",  "/usr", "/opt",
					   "/home", SANDBOX_HOME, NULL};
	for (const char *const *d = dirs; *d; d++) {
		gvhost_fmt(p, sizeof(p), "%s%s", gv.env.rootfs, *d);
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			goto fail;
	}
	/* /bin, /lib ... : symlinks where the host has merged /usr (fewer mounts, faster
	 * start), else read-only binds */
	static const char *const top[] = {"/bin",   "/sbin",   "/lib", "/lib64",
					  "/lib32", "/libx32", NULL};
	int nb = 0;
	gv.env.std_binds[nb++] = "/usr";
	for (const char *const *t = top; *t; t++) {
		char target[PATH_MAX];
		struct stat st;
		gvhost_fmt(p, sizeof(p), "%s%s", gv.env.rootfs, *t);
		ssize_t n = readlink(*t, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = 0;
			if (symlink(target, p) < 0 && errno != EEXIST)
				goto fail;
		} else if (stat(*t, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				goto fail;
			gv.env.std_binds[nb++] = *t;
		}
	}
	gv.env.std_binds[nb] = NULL;

	struct strbuf pw = STRBUF_INIT, gr = STRBUF_INIT;
	strbuf_addstr(&pw, "root:x:0:0:root:/root:/usr/sbin/nologin\n");
	strbuf_addstr(&gr, "root:x:0:\n");
	for (long i = 0; i < 64; i++) {
		long id = gv.opts->box_uid + i;
		strbuf_addf(&pw, "box%ld:x:%ld:%ld:box:/box:/usr/sbin/nologin\n", i, id, id);
		strbuf_addf(&gr, "box%ld:x:%ld:\n", i, id);
	}
	strbuf_addstr(&pw, "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
	strbuf_addstr(&gr, "nogroup:x:65534:\n");
	int r = 0;
	gvhost_fmt(p, sizeof(p), "%s/etc/passwd", gv.env.rootfs);
	r = r ? r : gvhost_write_file(p, pw.buf, pw.len, 0644);
	gvhost_fmt(p, sizeof(p), "%s/etc/group", gv.env.rootfs);
	r = r ? r : gvhost_write_file(p, gr.buf, gr.len, 0644);
	strbuf_release(&pw);
	strbuf_release(&gr);
	static const char hosts[] = "127.0.0.1 localhost\n::1 localhost\n";
	gvhost_fmt(p, sizeof(p), "%s/etc/hosts", gv.env.rootfs);
	r = r ? r : gvhost_write_file(p, hosts, sizeof(hosts) - 1, 0644);
	/* the loader finds libraries through the cache instead of probing paths
	 * one gofer round trip at a time */
	gvhost_fmt(p, sizeof(p), "%s/etc/ld.so.cache", gv.env.rootfs);
	if (!r && access("/etc/ld.so.cache", R_OK) == 0)
		r = gvhost_copy_file("/etc/ld.so.cache", p, 0644);
	gvhost_fmt(p, sizeof(p), "%s" GVPOOL_INIT_INSIDE, gv.env.rootfs);
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

/* Takes runsc and its flags from o, or the defaults before sandbox_global_init
 * (gvisor_works may be asked first). */
static void paths_from_options(const struct sandbox_options *o)
{
	gvhost_fmt(gv.env.runsc, sizeof(gv.env.runsc), "%s", o ? o->runsc : "runsc");
	gvhost_fmt(gv.env.platform, sizeof(gv.env.platform), "--platform=%s",
		   o ? o->gvisor_platform : "ptrace");
	gvhost_fmt(gv.env.cg_sub, sizeof(gv.env.cg_sub), "%s-gvisor",
		   o ? o->cgroup_parent : "judge");
}

static bool gvisor_works(char *why, size_t whylen)
{
	if (!gv.inited)
		paths_from_options(sandbox_options());
	if (geteuid() != 0) {
		gvhost_fmt(why, whylen, "the gvisor backend needs root (runsc with cgroups)");
		return false;
	}
	if (!gvhost_find_program(gv.env.runsc[0] ? gv.env.runsc : "runsc", why, whylen))
		return false;
	char init[PATH_MAX];
	if (!gv.inited &&
	    sandbox_helper_path("box_init", "JUDGE_BOX_INIT", init, sizeof(init)) < 0) {
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

static int setup(const struct sandbox_options *opts, char *err, size_t errlen)
{
	char init[PATH_MAX];
	if (gv.inited)
		return 0;
	gv.opts = opts;
	paths_from_options(opts);
	if (!gvisor_works(err, errlen))
		return -1;
	if (sandbox_helper_path("box_init", "JUDGE_BOX_INIT", init, sizeof(init)) < 0) {
		gvhost_fmt(err, errlen, "bin/box_init not found (run make)");
		return -1;
	}
	gv.env.pool_size = opts->gvisor_pool;
	gv.env.start_timeout_ms = opts->gvisor_start_timeout_ms > 0 ? opts->gvisor_start_timeout_ms
								    : GVPOOL_START_TIMEOUT_MS;
	/* runsc leaves the sandbox and gofer processes to the parent's subreaper: be it,
	 * so that we can reap them (else killed ones stay zombies where pid 1 does not
	 * reap). We only ever wait for pids of our containers. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	gv.env.max_memory_bytes = opts->gvisor_memory_bytes;
	/* everything of ours is in the owner folder, for whoever reclaims it */
	const char *own = owner_dir(), *own_id = owner_id();
	if (!own || !own_id) {
		gvhost_fmt(err, errlen, "no owner folder (sandbox_global_init)");
		return -1;
	}
	gvhost_fmt(gv.env.owner, sizeof(gv.env.owner), "%s", own_id);
	gvhost_fmt(gv.env.root, sizeof(gv.env.root), "%s/runsc", own);
	gvhost_fmt(gv.env.work, sizeof(gv.env.work), "%s/gvisor", own);
	gvhost_fmt(gv.env.rootfs, sizeof(gv.env.rootfs), "%s/rootfs", gv.env.work);
	int r;
	if ((r = gvhost_mkdir_p(gv.env.root, 0700)) < 0 ||
	    (r = gvhost_mkdir_p(gv.env.work, 0700)) < 0) {
		gvhost_fmt(err, errlen, "cannot create '%s': %s", gv.env.work, strerror(-r));
		return -1;
	}
	/* <work> is a shared mount of itself, so that boxes we bind in it later reach
	 * the gofers' mount namespaces (slaves of ours) */
	gvhost_umount_below(gv.env.work);
	if (mount(gv.env.work, gv.env.work, NULL, MS_BIND, NULL) < 0 ||
	    mount(NULL, gv.env.work, NULL, MS_SHARED, NULL) < 0) {
		gvhost_fmt(err, errlen, "cannot make '%s' a shared mount: %s", gv.env.work,
			   strerror(errno));
		umount2(gv.env.work, MNT_DETACH);
		return -1;
	}
	if (!gv_cgroups()) {
		gvhost_fmt(err, errlen, "no cgroups for runsc under /sys/fs/cgroup");
		goto fail;
	}
	if (scmp_build(&gv.filter, err, errlen) < 0)
		goto fail;
	if (mkdir(gv.env.rootfs, 0755) < 0 && errno != EEXIST) {
		gvhost_fmt(err, errlen, "cannot create '%s': %s", gv.env.rootfs, strerror(errno));
		goto fail;
	}
	if (make_rootfs(init, err, errlen) < 0)
		goto fail;
	gv.env.tmp_bytes = opts->gvisor_tmp_bytes;
	if (opts->gvisor_reuse) {
		gv.env.reuse_runs = opts->gvisor_reuse_runs;
		gv.env.reuse_us = opts->gvisor_reuse_s * 1000000LL;
	}
	gv.env.idle_max = 2 * opts->gvisor_pool > 4 ? 2 * opts->gvisor_pool : 4;
	if (gvpool_start(&gv.env, err, errlen) < 0)
		goto fail;
	gv.inited = true;
	log_debug("gvisor: ready (root %s, work %s, pool %d)", gv.env.root, gv.env.work,
		  gv.env.pool_size);
	return 0;
fail:
	scmp_release(&gv.filter);
	gvhost_umount_below(gv.env.work);
	gvhost_rm_tree(gv.env.work);
	return -1;
}

static int gvisor_global_init(const struct sandbox_options *opts, char *err, size_t errlen)
{
	int r = setup(opts, err, errlen);
	if (r < 0)
		gvhost_fmt(gv.init_error, sizeof(gv.init_error), "%s", err);
	return r;
}

static void gvisor_global_shutdown(void)
{
	if (!gv.inited)
		return;
	gvpool_stop();
	scmp_release(&gv.filter);
	gvhost_umount_below(gv.env.work);
	gvhost_rm_tree(gv.env.work);
	/* the next set-up (another owner, perhaps another cgroup_parent) notes them again */
	gv.env.cg_ready = false;
	gv.inited = false;
}

const struct sandbox_ops gvisor_ops = {
    .name = "gvisor",
    .starts_in_netns = true, /* runsc --network=host in that namespace (gvpool.c) */
    .global_init = gvisor_global_init,
    .global_shutdown = gvisor_global_shutdown,
    .works = gvisor_works,
    .prepare = gvpool_prepare,
    .run = gvisor_run,
    .close = gvisor_close,
    .start = gvisor_start,
    .proc_signal = gvisor_proc_signal,
    .proc_usage = gvisor_proc_usage,
    .proc_ooms = gvisor_proc_ooms,
    .proc_cg = gvisor_proc_cg,
    .proc_wait = gvisor_proc_wait,
    .proc_free = gvisor_proc_free,
    .proc_checkpoint = gvisor_proc_checkpoint,
};
