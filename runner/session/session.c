/* session: a live sandbox running sessd, which holds the session's code
 * contexts (a language driver each) and processes (runner/session/session.h,
 * init/sessd_proto.h, languages/drivers/PROTOCOL.md).
 *
 * How it works. session_start starts sessd as the sandbox's live process and a
 * reader thread that drains sessd's stdout all the time: frames of the
 * children's output, starts and ends, dispatched under the session's lock to
 * the context or process they name, waking whoever waits (one condition
 * variable). Whatever sends a frame to sessd holds the write lock only, never
 * the session's lock: the reader must always be free to drain, or sessd would
 * block on its stdout and stop reading ours.
 *
 * A context is a driver started with a fresh JUDGE_TOKEN; its stdout stream is
 * scanned for "<token> <n>\n<json>" replies. A cell is one request on the
 * driver's stdin; everything before the reply's token is the cell's output (a
 * tail that could be the token's start is held back until the next bytes tell).
 *
 * Limits. Every POLL_MS the cell's CPU (the sandbox cgroup's usage since the
 * cell began: for gVisor the sentry's work counts, which is the real cost;
 * processes running meanwhile count too) and wall time are checked. Over
 * either, or over the stdout cap, the driver's process group gets SIGINT and a
 * second to reply: it did -> timeout (or output_limit) and the context keeps
 * its state; it did not -> it is killed and started again (restarted: state
 * lost). A driver that did not take the cell by its wall limit is killed and
 * started again too. Memory, processes and files hold for the sandbox's whole
 * life: a driver killed for memory (the cgroup's OOM count grew) ends the cell
 * as memory_limit, one that ended otherwise as the code's error; either is
 * started again. When sessd itself ends (gVisor's memory limit ends the whole
 * sandbox) the sandbox starts again, every context gets a fresh driver and
 * every process ends.
 */
#define _GNU_SOURCE
#include "runner/session/session_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "runner/session/init/sessd_proto.h"
#include "runner/session/prestart.h"

/* ---- lists ---- */

void session_spec_copy(struct session_spec *dst, const struct session_spec *src)
{
	*dst = *src;
	dst->argv = (const char *const *)xstrvdup(src->argv);
	dst->env = (const char *const *)xstrvdup(src->env);
	dst->ro_paths = (const char *const *)xstrvdup(src->ro_paths);
	dst->warm_argv = (const char *const *)xstrvdup(src->warm_argv);
	dst->preload = (const char *const *)xstrvdup(src->preload);
	dst->box_dirs = (const char *const *)xstrvdup(src->box_dirs);
}

void session_spec_release(struct session_spec *s)
{
	xstrvfree((char **)s->argv);
	xstrvfree((char **)s->env);
	xstrvfree((char **)s->ro_paths);
	xstrvfree((char **)s->warm_argv);
	xstrvfree((char **)s->preload);
	xstrvfree((char **)s->box_dirs);
	memset(s, 0, sizeof *s);
}

/* ---- sessd, where the sandbox sees it ---- */

static struct {
	pthread_once_t once;
	char path[PATH_MAX + 64]; /* bound read-only at the same path inside */
	char error[PATH_MAX + 256];
} sessd = {.once = PTHREAD_ONCE_INIT};

/* bin/sessd, bound into every session's sandbox at its own path. Where every
 * sandbox's private /tmp or /dev/shm would hide it (a clone under /tmp), a copy
 * under /var/tmp named after its content (two builds never share one). */
static void sessd_locate(void)
{
	char bin[PATH_MAX];
	struct strbuf data = STRBUF_INIT;
	if (sandbox_helper_path("sessd", "JUDGE_SESSD", bin, sizeof bin) < 0 ||
	    !realpath(bin, sessd.path)) {
		snprintf(sessd.error, sizeof sessd.error, "%s not found (run make)", bin);
		return;
	}
	if (strncmp(sessd.path, "/tmp/", 5) && strncmp(sessd.path, "/dev/shm/", 9))
		return;
	if (strbuf_read_file(&data, sessd.path, 64 << 20) < 0) {
		snprintf(sessd.error, sizeof sessd.error, "cannot read '%s'", sessd.path);
		return;
	}
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (size_t i = 0; i < data.len; i++)
		h = (h ^ (unsigned char)data.buf[i]) * 1099511628211ULL;
	char tmp[PATH_MAX + 96];
	snprintf(sessd.path, sizeof sessd.path, "/var/tmp/judge-sessd-%016llx",
		 (unsigned long long)h);
	snprintf(tmp, sizeof tmp, "%s.%d", sessd.path, (int)getpid());
	int fd = -1;
	if (access(sessd.path, X_OK) < 0 &&
	    ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755)) < 0 ||
	     write(fd, data.buf, data.len) != (ssize_t)data.len || fchmod(fd, 0755) < 0 ||
	     close(fd) < 0 || rename(tmp, sessd.path) < 0)) {
		snprintf(sessd.error, sizeof sessd.error, "cannot copy sessd to '%s': %s",
			 sessd.path, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(tmp);
	}
	strbuf_release(&data);
}

/* ---- frames to sessd ---- */

/* Writes all of data to fd (non-blocking) by deadline (clock_mono_ms). 0 or -errno. */
static int write_by(int fd, const char *data, size_t len, int64_t deadline)
{
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, data + off, len - off);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;
		int64_t left = deadline - clock_mono_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd pfd = {.fd = fd, .events = POLLOUT};
		poll(&pfd, 1, (int)(left > 1000 ? 1000 : left));
	}
	return 0;
}

/* Sends one frame whose payload is the parts' bytes, by deadline. 0 or
 * -errno (-ETIMEDOUT: sessd did not take it; -EPIPE: it is gone). */
int session_send_frame(struct session *s, char op, unsigned long id, const char *const *parts,
		       const size_t *lens, int nparts, int64_t deadline)
{
	size_t len = 0;
	for (int i = 0; i < nparts; i++)
		len += lens[i];
	char head[SESSD_MAX_HEAD];
	int hl = snprintf(head, sizeof head, "%c %lu %zu\n", op, id, len);
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	pthread_mutex_lock(&s->wlock);
	int ret = s->in_fd < 0 ? -EPIPE : write_by(s->in_fd, head, (size_t)hl, deadline);
	for (int i = 0; i < nparts && !ret; i++)
		ret = write_by(s->in_fd, parts[i], lens[i], deadline);
	pthread_mutex_unlock(&s->wlock);
	struct timespec zero = {0, 0};
	if (ret == -EPIPE)
		sigtimedwait(&set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

int session_send_simple(struct session *s, char op, unsigned long id, const char *payload)
{
	size_t len = payload ? strlen(payload) : 0;
	return session_send_frame(s, op, id, &payload, &len, payload ? 1 : 0,
				  clock_mono_ms() + SEND_TIMEOUT_MS);
}

void session_send_signal(struct session *s, unsigned long id, int sig)
{
	char num[16];
	snprintf(num, sizeof num, "%d", sig);
	int rc = session_send_simple(s, SESSD_KILL, id, num);
	if (rc < 0)
		log_debug("session: signal %d to child %lu: %s", sig, id, strerror(-rc));
}

/* Sends "spawn id": flags, cwd, lifetime, argv, env (sessd_proto.h). */
int session_send_spawn(struct session *s, unsigned long id, bool with_stdin, const char *cwd,
		       long timeout_ms, const char *const *argv, const char *const *env)
{
	struct strbuf p = STRBUF_INIT;
	int argc = 0;
	while (argv[argc])
		argc++;
	strbuf_addstr(&p, with_stdin ? "i" : "-");
	strbuf_addch(&p, 0);
	strbuf_addstr(&p, cwd && *cwd ? cwd : SANDBOX_HOME);
	strbuf_addch(&p, 0);
	strbuf_addf(&p, "%ld", timeout_ms > 0 ? timeout_ms : 0);
	strbuf_addch(&p, 0);
	strbuf_addf(&p, "%d", argc);
	strbuf_addch(&p, 0);
	for (int i = 0; i < argc; i++) {
		strbuf_addstr(&p, argv[i]);
		strbuf_addch(&p, 0);
	}
	for (const char *const *e = env; e && *e; e++) {
		strbuf_addstr(&p, *e);
		strbuf_addch(&p, 0);
	}
	const char *parts[] = {p.buf};
	size_t lens[] = {p.len};
	int rc = session_send_frame(s, SESSD_SPAWN, id, parts, lens, 1,
				    clock_mono_ms() + SEND_TIMEOUT_MS);
	strbuf_release(&p);
	return rc;
}

/* ---- the reader: frames from sessd ---- */

static struct context *ctx_of(struct session *s, unsigned long sid)
{
	for (int i = 0; i < SESSION_MAX_CONTEXTS; i++)
		if (s->ctx[i].state != CTX_FREE && s->ctx[i].sid == sid)
			return &s->ctx[i];
	return NULL;
}

static struct proc *proc_of_sid(struct session *s, unsigned long sid)
{
	for (int i = 0; i < SESSION_MAX_PROCS; i++)
		if (s->procs[i].used && s->procs[i].sid == sid)
			return &s->procs[i];
	return NULL;
}

/* Where a reply starts in buf[0..len): its offset, or len minus the held-back
 * tail that may be the token's start. *found tells which. */
static size_t find_token(const char *token, const char *buf, size_t len, bool *found)
{
	const size_t tl = TOKEN_HEX + 1;
	const char *hit = buf ? memmem(buf, len, token, tl) : NULL;
	*found = hit != NULL;
	if (hit)
		return (size_t)(hit - buf);
	size_t keep = len < tl - 1 ? len : tl - 1;
	for (; keep > 0; keep--)
		if (!memcmp(buf + len - keep, token, keep))
			break;
	return len - keep;
}

/* Takes a whole reply off the front of pending (which starts with the token)
 * into reply: 1 done, 0 more bytes needed, -1 malformed. */
static int take_reply(struct strbuf *pending, struct strbuf *reply)
{
	const size_t tl = TOKEN_HEX + 1;
	char *nl = memchr(pending->buf + tl, '\n', pending->len - tl);
	if (!nl)
		return pending->len - tl > 12 ? -1 : 0;
	char *end;
	long n = strtol(pending->buf + tl, &end, 10);
	if (end != nl || n < 0 || n > REPLY_MAX)
		return -1;
	size_t head = (size_t)(nl + 1 - pending->buf);
	if (pending->len < head + (size_t)n)
		return 0;
	strbuf_reset(reply);
	strbuf_add(reply, pending->buf + head, (size_t)n);
	size_t rest = pending->len - head - (size_t)n;
	memmove(pending->buf, pending->buf + head + n, rest);
	pending->len = rest;
	pending->buf[rest] = 0;
	return 1;
}

/* The run of one cell (see session_exec). */
struct cell_run {
	const struct cell_spec *cell;
	struct cell_result *res;
	long stdout_cap, stderr_cap;
	bool replied, malformed;
	bool interrupt; /* session_interrupt asked (under the session's lock) */
};

static void emit(struct cell_run *c, int fd, const char *data, size_t len)
{
	struct strbuf *to = fd == 1 ? &c->res->out : &c->res->err;
	long cap = fd == 1 ? c->stdout_cap : c->stderr_cap;
	bool *trunc = fd == 1 ? &c->res->out_truncated : &c->res->err_truncated;
	size_t room = to->len < (size_t)cap ? (size_t)cap - to->len : 0;
	if (len > room) {
		*trunc = true;
		len = room;
	}
	if (!len)
		return;
	strbuf_add(to, data, len);
	if (c->cell->on_output)
		c->cell->on_output(c->cell->arg, fd, data, len);
}

/* What a context's pending stdout holds now: during a cell, the output up to
 * the reply (or the held-back tail) and the reply when whole; while it
 * starts, its ready reply (output before it dropped). Lock held. */
static void ctx_scan(struct context *c)
{
	bool found;
	size_t at = find_token(c->token, c->pending.buf, c->pending.len, &found);
	if (c->state == CTX_STARTING || c->cell) {
		if (c->cell)
			emit(c->cell, 1, c->pending.buf, at);
		memmove(c->pending.buf, c->pending.buf + at, c->pending.len - at);
		c->pending.len -= at;
		if (c->pending.buf)
			c->pending.buf[c->pending.len] = 0;
	}
	if (!found || (!c->cell && c->state != CTX_STARTING))
		return;
	struct strbuf *to = c->cell ? &c->cell->res->reply : &c->reply;
	int r = take_reply(&c->pending, to);
	if (r < 0 && c->cell)
		c->cell->malformed = true; /* the token is right but the frame is not */
	else if (r < 0)
		c->failed = true, snprintf(c->fail, sizeof c->fail, "malformed driver reply");
	else if (r > 0 && c->cell)
		c->cell->replied = true;
	else if (r > 0)
		c->got_reply = true;
}

static void ctx_frame(struct context *c, char op, const char *data, size_t len)
{
	switch (op) {
	case SESSD_STDOUT:
		if (!c->cell && c->state != CTX_STARTING && c->pending.len + len > PENDING_MAX)
			return; /* printed between cells, past what is kept */
		strbuf_add(&c->pending, data, len);
		ctx_scan(c);
		break;
	case SESSD_STDERR:
		if (c->cell)
			emit(c->cell, 2, data, len);
		else if (c->state == CTX_STARTING && c->errout.len < ERROUT_MAX)
			strbuf_add(&c->errout, data, len < ERROUT_MAX ? len : ERROUT_MAX);
		break;
	case SESSD_DRAINED:
		c->drained = true;
		break;
	case SESSD_FAILED:
		c->failed = true;
		snprintf(c->fail, sizeof c->fail, "%.*s", (int)len, data);
		break;
	case SESSD_EXITED:
		c->ended = true;
		c->status = atoi(data);
		if (!c->cell && c->state == CTX_READY) {
			/* it ended between cells: the next cell starts a new one */
			c->state = CTX_DEAD;
			c->state_lost = true;
		}
		break;
	default:
		break;
	}
}

/* One frame; lock held. */
static void on_frame(struct session *s, char op, unsigned long id, const char *data, size_t len)
{
	if (id == 0) {
		s->ready = s->ready || op == SESSD_READY;
		return;
	}
	struct context *c = ctx_of(s, id);
	struct proc *p = c ? NULL : proc_of_sid(s, id);
	if (c)
		ctx_frame(c, op, data, len);
	else if (p)
		session_proc_frame(s, p, op, data, len);
}

/* Runs every whole frame of s->rbuf. False when sessd broke the protocol. */
static bool frames(struct session *s)
{
	struct strbuf *b = &s->rbuf;
	size_t at = 0;
	bool ok = true;
	for (;;) {
		size_t avail = b->len - at;
		char *nl =
		    memchr(b->buf + at, '\n', avail < SESSD_MAX_HEAD ? avail : SESSD_MAX_HEAD);
		if (!nl) {
			ok = avail < SESSD_MAX_HEAD;
			break;
		}
		char op;
		unsigned long id;
		size_t len;
		int used = 0;
		*nl = 0;
		if (sscanf(b->buf + at, "%c %lu %zu%n", &op, &id, &len, &used) != 3 ||
		    b->buf + at + used != nl || len > SESSD_MAX_FRAME) {
			ok = false;
			break;
		}
		size_t head = (size_t)(nl + 1 - (b->buf + at));
		if (avail - head < len) {
			*nl = '\n';
			break;
		}
		/* payloads are read as text where they are text (pids, statuses) */
		char saved = nl[1 + len];
		nl[1 + len] = 0;
		session_lock(s);
		on_frame(s, op, id, nl + 1, len);
		pthread_cond_broadcast(&s->cond);
		session_unlock(s);
		nl[1 + len] = saved;
		at += head + len;
	}
	memmove(b->buf, b->buf + at, b->len - at);
	b->len -= at;
	if (b->buf)
		b->buf[b->len] = 0;
	return ok;
}

static void *reader_main(void *arg)
{
	struct session *s = arg;
	char chunk[65536];
	int err_fd = s->err_fd;
	for (;;) {
		struct pollfd pfd[3] = {{.fd = s->out_fd, .events = POLLIN},
					{.fd = s->wake[0], .events = POLLIN},
					{.fd = err_fd, .events = POLLIN}};
		if (poll(pfd, err_fd >= 0 ? 3 : 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
		if (err_fd >= 0 && pfd[2].revents) {
			ssize_t n = read(err_fd, chunk, sizeof chunk - 1);
			if (n > 0) {
				chunk[n] = 0;
				log_warn("session: sessd: %.200s", chunk);
			} else if (n == 0 || errno != EINTR) {
				err_fd = -1;
			}
		}
		if (!pfd[0].revents)
			continue;
		ssize_t n = read(s->out_fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		strbuf_add(&s->rbuf, chunk, (size_t)n);
		if (!frames(s)) {
			log_warn("session: a malformed frame from sessd");
			break;
		}
	}
	session_lock(s);
	s->gone = true;
	pthread_cond_broadcast(&s->cond);
	session_unlock(s);
	return NULL;
}

/* ---- the sandbox: sessd ---- */

/* Stops the reader and sessd's sandbox; every running process ends with why.
 * The contexts keep their specs, to be started again. */
void session_sandbox_end(struct session *s, const char *why)
{
	if (s->reader_on) {
		if (write(s->wake[1], "x", 1) < 0)
			log_debug("session: wake: %s", strerror(errno));
		pthread_join(s->reader, NULL);
		s->reader_on = false;
	}
	pthread_mutex_lock(&s->wlock);
	long cpu = 0;
	if (s->proc && sandbox_proc_usage(s->proc, &cpu, NULL) == 0 && cpu > s->cpu_now_ms)
		s->cpu_now_ms = cpu;
	s->cpu_before_ms += s->cpu_now_ms;
	s->cpu_now_ms = 0;
	sandbox_proc_free(s->proc);
	s->proc = NULL;
	s->in_fd = s->out_fd = s->err_fd = -1;
	pthread_mutex_unlock(&s->wlock);
	char drop;
	while (read(s->wake[0], &drop, 1) == 1)
		;
	session_lock(s);
	s->gone = true;
	s->ready = false;
	strbuf_reset(&s->rbuf);
	for (int i = 0; i < SESSION_MAX_PROCS; i++)
		if (s->procs[i].used && (s->procs[i].running || !s->procs[i].started))
			session_proc_ended(&s->procs[i], -1, 0, false, why);
	for (int i = 0; i < SESSION_MAX_CONTEXTS; i++)
		if (s->ctx[i].state != CTX_FREE)
			s->ctx[i].state = CTX_DEAD;
	pthread_cond_broadcast(&s->cond);
	session_unlock(s);
}

/* Starts sessd in a live sandbox around the box and waits for its R. 0 or -1 with err. */
int session_sandbox_begin(struct session *s, const char *restore_dir, char *err, size_t errlen)
{
	pthread_once(&sessd.once, sessd_locate);
	if (sessd.error[0]) {
		snprintf(err, errlen, "%s", sessd.error);
		return -1;
	}
	size_t n = 0;
	while (s->spec.ro_paths && s->spec.ro_paths[n])
		n++;
	const char **ro = xcalloc(n + 2, sizeof *ro);
	for (size_t i = 0; i < n; i++)
		ro[i] = s->spec.ro_paths[i];
	ro[n] = sessd.path;
	const char *const argv[] = {sessd.path, NULL};
	const char *const env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", NULL};
	struct run_spec rs = {.argv = argv,
			      .env = env,
			      .ro_paths = ro,
			      .limits = s->spec.limits,
			      .warm_argv = s->spec.warm_argv,
			      .preload = s->spec.preload,
			      .cpu_millis = s->spec.cpu_millis,
			      .cpu_weight = s->spec.cpu_weight,
			      .net_ns_fd = s->spec.net_ns_fd,
			      .box_home = true,
			      .restore_dir = restore_dir};
	rs.limits.cpu_ms = rs.limits.wall_ms = SANDBOX_LIFE_MS;
	pthread_mutex_lock(&s->wlock);
	int rc = sandbox_start(s->sb, &rs, &s->proc, err, errlen);
	if (rc == 0) {
		sandbox_proc_fds(s->proc, &s->in_fd, &s->out_fd, &s->err_fd);
		fcntl(s->in_fd, F_SETFL, O_NONBLOCK);
	}
	pthread_mutex_unlock(&s->wlock);
	free(ro);
	if (rc < 0)
		return -1;
	session_lock(s);
	s->gone = false;
	/* a restored sessd said R before its checkpoint */
	s->ready = restore_dir != NULL;
	session_unlock(s);
	if (pthread_create(&s->reader, NULL, reader_main, s)) {
		snprintf(err, errlen, "cannot start the session's reader thread");
		session_sandbox_end(s, "the session could not start");
		return -1;
	}
	s->reader_on = true;
	long timeout = s->spec.start_timeout_ms > 0 ? s->spec.start_timeout_ms : START_TIMEOUT_MS;
	int64_t deadline = clock_mono_ms() + timeout;
	session_lock(s);
	while (!s->ready && !s->gone && clock_mono_ms() < deadline)
		session_wait_until(s, deadline);
	bool ready = s->ready;
	session_unlock(s);
	if (!ready) {
		snprintf(err, errlen, "the session's sandbox did not start sessd within %ld ms",
			 timeout);
		session_sandbox_end(s, "the session could not start");
		return -1;
	}
	return 0;
}

/* ---- contexts' drivers ---- */

static void new_token(char out[TOKEN_HEX + 2])
{
	unsigned char raw[TOKEN_HEX / 2];
	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
		/* not secret then, but still new: the clock and the address */
		unsigned long long x = (unsigned long long)clock_mono_us() ^ (uintptr_t)out;
		memcpy(raw, &x, sizeof x);
		memcpy(raw + 8, &x, sizeof x);
	}
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	out[TOKEN_HEX] = ' ';
	out[TOKEN_HEX + 1] = 0;
}

/* Starts c's driver (a new one, with a new token) and waits for its ready
 * reply. 0, or -1 with err (c is then dead). */
int session_ctx_launch(struct session *s, struct context *c, char *err, size_t errlen)
{
	size_t n = 0;
	while (c->env && c->env[n])
		n++;
	char tokenvar[TOKEN_HEX + 16];
	const char **env = xcalloc(n + 2, sizeof *env);
	session_lock(s);
	unsigned long old = c->sid;
	new_token(c->token);
	c->sid = ++s->next_sid;
	c->state = CTX_STARTING;
	c->got_reply = c->failed = c->ended = c->drained = false;
	strbuf_reset(&c->pending);
	strbuf_reset(&c->errout);
	strbuf_reset(&c->reply);
	unsigned long sid = c->sid;
	session_unlock(s);
	if (old)
		session_send_signal(s, old, SIGKILL); /* the old driver's group, if any is left */
	snprintf(tokenvar, sizeof tokenvar, "JUDGE_TOKEN=%.*s", TOKEN_HEX, c->token);
	for (size_t i = 0; i < n; i++)
		env[i] = c->env[i];
	env[n] = tokenvar;
	int rc = session_send_spawn(s, sid, true, c->cwd, 0, (const char *const *)c->argv, env);
	free(env);
	long timeout = s->spec.start_timeout_ms > 0 ? s->spec.start_timeout_ms : START_TIMEOUT_MS;
	int64_t deadline = clock_mono_ms() + timeout;
	session_lock(s);
	while (rc == 0 && !c->got_reply && !c->failed && !c->ended && !s->gone &&
	       clock_mono_ms() < deadline)
		session_wait_until(s, deadline);
	int ret = -1;
	if (rc < 0)
		snprintf(err, errlen, "cannot reach the session's sessd: %s", strerror(-rc));
	else if (c->failed)
		snprintf(err, errlen, "cannot start the driver: %s", c->fail);
	else if (c->got_reply) {
		cJSON *j = cJSON_Parse(c->reply.buf);
		if (!j || !cJSON_IsTrue(cJSON_GetObjectItem(j, "ready")))
			snprintf(err, errlen, "the driver's first reply is not ready: %.200s",
				 c->reply.buf);
		else
			ret = 0;
		cJSON_Delete(j);
	} else if (s->gone)
		snprintf(err, errlen, "the session's sandbox ended before the driver was ready");
	else if (c->ended)
		snprintf(err, errlen, "the driver ended before it was ready: %.200s",
			 c->errout.len ? c->errout.buf : "no message");
	else
		snprintf(err, errlen, "the driver did not get ready within %ld ms", timeout);
	c->state = ret == 0 ? CTX_READY : CTX_DEAD;
	strbuf_reset(&c->errout);
	session_unlock(s);
	if (ret < 0 && rc == 0)
		session_send_signal(s, sid, SIGKILL);
	return ret;
}

/* The sandbox again, and a fresh driver in every context (their state lost;
 * keep tells the one whose cell says so itself). 0, or -1 with err. */
int session_restart(struct session *s, struct context *keep, char *err, size_t errlen)
{
	if (s->halted) {
		snprintf(err, errlen, "the session ended");
		return -1;
	}
	session_sandbox_end(s, "the session's sandbox ended");
	if (session_sandbox_begin(s, NULL, err, errlen) < 0)
		return -1;
	for (int i = 0; i < SESSION_MAX_CONTEXTS; i++) {
		struct context *c = &s->ctx[i];
		if (c->state == CTX_FREE)
			continue;
		char why[256];
		if (session_ctx_launch(s, c, why, sizeof why) < 0)
			log_warn("session: cannot restart context %d: %s", i, why);
		c->state_lost = c != keep;
	}
	return 0;
}

/* ---- one cell ---- */

/* The cell's status from what the run decided (st: RUN_OK when the driver
 * replied in time) and the driver's reply: the one place a cell's status is
 * decided. stdout cut at its cap is output_limit, as in one-shot runs, also
 * when the reply came before the next limit check; a driver that ended
 * (exit(), a crash) is the code's error. */
static enum cell_status cell_decide(enum run_status st, bool reply_ok, bool out_truncated)
{
	if (st == RUN_OK && out_truncated)
		return CELL_OUTPUT_LIMIT;
	switch (st) {
	case RUN_OK:
		return reply_ok ? CELL_OK : CELL_ERROR;
	case RUN_TIMEOUT:
		return CELL_TIMEOUT;
	case RUN_MEMORY_LIMIT:
		return CELL_MEMORY_LIMIT;
	case RUN_OUTPUT_LIMIT:
		return CELL_OUTPUT_LIMIT;
	case RUN_RUNTIME_ERROR:
		return CELL_ERROR;
	default:
		return CELL_INTERNAL_ERROR;
	}
}

static char *json_text(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return xstrdup(cJSON_IsString(v) ? v->valuestring : "");
}

/* Reads the driver's reply into res (result, error); true when its status is ok. */
static bool read_reply(struct cell_result *res)
{
	cJSON *j = res->reply.len ? cJSON_Parse(res->reply.buf) : NULL;
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "result");
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
	if (cJSON_IsString(r))
		res->result = xstrdup(r->valuestring);
	const cJSON *rs = cJSON_GetObjectItemCaseSensitive(j, "results");
	if (cJSON_IsArray(rs) && rs->child)
		res->results = cJSON_PrintUnformatted(rs);
	const cJSON *dropped = cJSON_GetObjectItemCaseSensitive(j, "results_dropped");
	if (cJSON_IsNumber(dropped) && dropped->valuedouble > 0)
		res->results_dropped = (long)dropped->valuedouble;
	if (cJSON_IsObject(e)) {
		res->has_error = true;
		res->error_name = json_text(e, "name");
		res->error_value = json_text(e, "value");
		res->error_traceback = json_text(e, "traceback");
	}
	bool ok = cJSON_IsString(st) && !strcmp(st->valuestring, "ok");
	cJSON_Delete(j);
	return ok;
}

static void cell_result_reset(struct cell_result *res)
{
	strbuf_reset(&res->out), strbuf_reset(&res->err), strbuf_reset(&res->reply);
	free(res->result), free(res->error_name), free(res->error_value);
	free(res->error_traceback);
	free(res->results);
	res->result = res->error_name = res->error_value = res->error_traceback = NULL;
	res->results = NULL;
	res->results_dropped = 0;
	res->has_error = false;
	res->out_truncated = res->err_truncated = res->restarted = false;
	res->cpu_ms = res->wall_ms = res->memory_kb = 0;
	res->message[0] = 0;
	res->status = CELL_INTERNAL_ERROR;
}

/* The cell's request on the driver's stdin: "CELL <code bytes> <stdin bytes>
 * <env bytes>\n", code, stdin, env: "K=V\0" each (PROTOCOL.md). */
static int send_cell(struct session *s, unsigned long sid, const struct cell_spec *cell,
		     int64_t deadline)
{
	struct strbuf env;
	strbuf_init(&env);
	for (const char *const *e = cell->env; e && *e; e++)
		strbuf_add(&env, *e, strlen(*e) + 1);
	char head[96];
	size_t in_len = cell->stdin_data ? cell->stdin_len : 0;
	int hl = snprintf(head, sizeof head, "CELL %zu %zu %zu\n", cell->code_len, in_len, env.len);
	const char *parts[] = {head, cell->code, in_len ? cell->stdin_data : "",
			       env.buf ? env.buf : ""};
	size_t lens[] = {(size_t)hl, cell->code_len, in_len, env.len};
	int rc = session_send_frame(s, SESSD_INPUT, sid, parts, lens, 4, deadline);
	strbuf_release(&env);
	return rc;
}

/* The driver's exit status as the cell's message. */
static void driver_ended_message(struct cell_result *res, int status)
{
	if (res->message[0])
		return;
	snprintf(res->message, sizeof res->message, "the driver ended (%s %d)",
		 WIFSIGNALED(status) ? "signal" : "exit code",
		 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* Runs the cell in c; the run's status (RUN_OK: replied in time) in *st. */
static void cell_run(struct session *s, struct context *c, const struct cell_spec *cell,
		     struct cell_result *res, enum run_status *st)
{
	char err[256];
	*st = RUN_INTERNAL_ERROR;
	if (s->gone) {
		if (session_restart(s, c, err, sizeof err) < 0) {
			snprintf(res->message, sizeof res->message, "no sandbox: %.200s", err);
			return;
		}
		/* the sandbox ended between cells: this one runs in a fresh driver */
		res->restarted = true;
	}
	if (c->state != CTX_READY) {
		/* a sandbox that ended while the driver started (what the last cell
		 * left filled its memory) starts again, once */
		if (session_ctx_launch(s, c, err, sizeof err) < 0 &&
		    (!s->gone || session_restart(s, c, err, sizeof err) < 0 ||
		     c->state != CTX_READY)) {
			snprintf(res->message, sizeof res->message, "no driver: %.200s", err);
			return;
		}
		res->restarted = true;
	}
	long cpu_ms = cell->cpu_ms > 0 ? cell->cpu_ms : s->spec.limits.cpu_ms;
	long wall_ms = cell->wall_ms > 0 ? cell->wall_ms : s->spec.limits.wall_ms;
	struct cell_run run = {.cell = cell,
			       .res = res,
			       .stdout_cap = s->spec.limits.stdout_bytes,
			       .stderr_cap = s->spec.limits.stderr_bytes};
	long cpu0 = 0, ooms0 = 0;
	sandbox_proc_usage(s->proc, &cpu0, NULL);
	sandbox_proc_oom_kills(s->proc, &ooms0);
	session_lock(s);
	c->cell = &run;
	c->drained = c->ended = false;
	ctx_scan(c); /* what it printed between cells is this cell's */
	unsigned long sid = c->sid;
	session_unlock(s);
	int64_t t0 = clock_mono_ms(), interrupt_at = 0;
	enum run_status why = RUN_TIMEOUT;
	bool deaf = false, asked = false;
	/* the mark dates what this cell starts, for the sweep below */
	int sent = session_send_simple(s, SESSD_MARK, sid, NULL);
	if (sent == 0)
		sent = send_cell(s, sid, cell, t0 + wall_ms);
	session_lock(s);
	while (sent == 0 && !run.replied && !run.malformed && !c->ended && !s->gone) {
		session_wait_until(s, clock_mono_ms() + POLL_MS);
		if (run.replied || run.malformed || c->ended || s->gone)
			break;
		bool drained = c->drained, interrupt = run.interrupt;
		session_unlock(s);
		long cpu = 0, mem = 0;
		if (sandbox_proc_usage(s->proc, &cpu, &mem) == 0) {
			res->cpu_ms = cpu - cpu0;
			if (mem > res->memory_kb)
				res->memory_kb = mem;
		}
		int64_t now = clock_mono_ms();
		if (now - t0 > wall_ms && !drained && !interrupt_at) {
			deaf = true; /* it never took the whole cell */
			session_lock(s);
			break;
		}
		bool over = res->out_truncated || res->cpu_ms > cpu_ms || now - t0 > wall_ms;
		if (!interrupt_at && (over || interrupt)) {
			/* asked: the driver's answer (its KeyboardInterrupt) is the cell's */
			asked = !over;
			why = asked		   ? RUN_RUNTIME_ERROR
			      : res->out_truncated ? RUN_OUTPUT_LIMIT
						   : RUN_TIMEOUT;
			interrupt_at = now;
			session_send_signal(s, sid, SIGINT);
		}
		session_lock(s);
		if (interrupt_at && now - interrupt_at > INTERRUPT_GRACE_MS)
			break;
	}
	c->cell = NULL;
	bool replied = run.replied, ended = c->ended, gone = s->gone;
	int status = c->status;
	session_unlock(s);
	long cpu = 0, ooms = 0;
	if (!gone && sandbox_proc_usage(s->proc, &cpu, NULL) == 0)
		res->cpu_ms = cpu - cpu0;
	res->wall_ms = (long)(clock_mono_ms() - t0);
	if (replied) {
		*st = interrupt_at && !asked ? why : RUN_OK;
		/* what the interrupted cell started in the driver's group ends with
		 * it: a fork bomb's children born after the SIGINT never got it */
		if (interrupt_at)
			session_send_simple(s, SESSD_SWEEP, sid, NULL);
		return;
	}
	if (gone || sent == -ETIMEDOUT || sent == -EPIPE) {
		/* sessd itself ended (gVisor's memory limit ends the sandbox), or took
		 * nothing: the sandbox starts again, every context's state lost */
		struct run_result rr;
		run_result_init(&rr);
		if (s->proc)
			sandbox_proc_wait(s->proc, 2000, &rr);
		*st = rr.status == RUN_MEMORY_LIMIT ? RUN_MEMORY_LIMIT
		      : interrupt_at		    ? why
						    : RUN_RUNTIME_ERROR;
		snprintf(res->message, sizeof res->message, "the session's sandbox ended%s%.180s",
			 rr.message[0] ? ": " : "", rr.message);
		run_result_release(&rr);
		if (session_restart(s, c, err, sizeof err) < 0)
			log_warn("session: cannot restart the sandbox: %s", err);
		res->restarted = true;
		return;
	}
	if (ended || run.malformed) {
		sandbox_proc_oom_kills(s->proc, &ooms);
		*st = ooms > ooms0    ? RUN_MEMORY_LIMIT
		      : interrupt_at  ? why
		      : run.malformed ? RUN_INTERNAL_ERROR
				      : RUN_RUNTIME_ERROR;
		if (run.malformed)
			snprintf(res->message, sizeof res->message, "malformed driver reply");
		else
			driver_ended_message(res, status);
	} else if (deaf) {
		*st = RUN_TIMEOUT;
		snprintf(res->message, sizeof res->message,
			 "the driver did not read the cell within %ld ms", wall_ms);
	} else {
		*st = why;
		snprintf(res->message, sizeof res->message,
			 "the driver did not stop within %d ms of SIGINT", INTERRUPT_GRACE_MS);
	}
	res->restarted = true;
	if (session_ctx_launch(s, c, err, sizeof err) < 0)
		log_warn("session: cannot restart the driver: %s", err);
}

int session_interrupt(struct session *s)
{
	int n = 0;
	session_lock(s);
	for (int i = 0; i < SESSION_MAX_CONTEXTS; i++)
		if (s->ctx[i].cell && !s->ctx[i].cell->interrupt) {
			s->ctx[i].cell->interrupt = true;
			n++;
		}
	pthread_cond_broadcast(&s->cond); /* the cell's wait looks again now */
	session_unlock(s);
	return n;
}

int session_exec(struct session *s, const struct cell_spec *cell, struct cell_result *res)
{
	if (!s || !cell || !res || (!cell->code && cell->code_len) || cell->context < 0 ||
	    cell->context >= SESSION_MAX_CONTEXTS)
		return -1;
	cell_result_reset(res);
	struct context *c = &s->ctx[cell->context];
	session_lock(s);
	bool free_ctx = c->state == CTX_FREE, lost = c->state_lost;
	c->state_lost = false;
	session_unlock(s);
	if (free_ctx)
		return -1;
	enum run_status st;
	pthread_mutex_lock(&s->plock);
	cell_run(s, c, cell, res, &st);
	pthread_mutex_unlock(&s->plock);
	res->restarted = res->restarted || lost;
	bool ok = read_reply(res);
	res->status = cell_decide(st, ok, res->out_truncated);
	return 0;
}

/* ---- the session ---- */

/* env with HOME at SANDBOX_HOME, the box's second path (a language's HOME
 * goes): `~` in a cell is the folder the files API sees. */
static char **home_env(const char *const *env)
{
	size_t n = 0, k = 0;
	while (env && env[n])
		n++;
	char **v = xcalloc(n + 2, sizeof *v);
	for (size_t i = 0; i < n; i++)
		if (strncmp(env[i], "HOME=", 5))
			v[k++] = xstrdup(env[i]);
	v[k] = xstrdup("HOME=" SANDBOX_HOME);
	return v;
}

void session_ctx_set(struct context *c, const char *const *argv, const char *const *env,
		     const char *cwd)
{
	c->argv = xstrvdup(argv);
	c->env = home_env(env);
	c->cwd = xstrdup(cwd ? cwd : SANDBOX_HOME);
	c->state = CTX_DEAD;
	strbuf_init(&c->pending);
	strbuf_init(&c->errout);
	strbuf_init(&c->reply);
}

static void ctx_clear(struct context *c)
{
	xstrvfree(c->argv);
	xstrvfree(c->env);
	free(c->cwd);
	strbuf_release(&c->pending);
	strbuf_release(&c->errout);
	strbuf_release(&c->reply);
	memset(c, 0, sizeof *c);
}

int session_start(struct sandbox *sb, const struct session_spec *spec, struct session **out,
		  char *err, size_t errlen)
{
	*out = NULL;
	if (!sb || !spec || !spec->argv || !spec->argv[0] || !spec->env) {
		snprintf(err, errlen, "invalid session specification");
		return -1;
	}
	if (spec->net_ns_fd <= 0 && prestart_take(sb, spec, out)) {
		(*out)->pooled = true;
		return 0;
	}
	return session_start_new(sb, spec, out, err, errlen);
}

struct session *session_alloc(struct sandbox *sb, const struct session_spec *spec, char *err,
			      size_t errlen)
{
	struct session *s = xcalloc(1, sizeof *s);
	s->sb = sb;
	s->in_fd = s->out_fd = s->err_fd = -1;
	s->wake[0] = s->wake[1] = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->wlock, NULL);
	pthread_mutex_init(&s->plock, NULL);
	clock_cond_init(&s->cond);
	strbuf_init(&s->rbuf);
	session_spec_copy(&s->spec, spec);
	session_ctx_set(&s->ctx[0], spec->argv, spec->env, NULL);
	if (pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		session_stop(s);
		return NULL;
	}
	return s;
}

int session_start_new(struct sandbox *sb, const struct session_spec *spec, struct session **out,
		      char *err, size_t errlen)
{
	struct session *s = session_alloc(sb, spec, err, errlen);
	if (!s)
		return -1;
	for (const char *const *d = spec->box_dirs; d && *d; d++) {
		int rc = sandbox_file_mkdir(sb, *d);
		if (rc < 0) {
			snprintf(err, errlen, "cannot make the folder '%s' of the box: %s", *d,
				 strerror(-rc));
			goto fail;
		}
	}
	if (session_sandbox_begin(s, NULL, err, errlen) < 0 ||
	    session_ctx_launch(s, &s->ctx[0], err, errlen) < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	session_stop(s);
	return -1;
}

void session_rebind(struct session *s, struct sandbox *sb)
{
	s->sb = sb;
	if (s->proc)
		sandbox_proc_rebind(s->proc, sb);
}

long session_memory_kb(struct session *s)
{
	long mem = -1;
	if (!s)
		return -1;
	pthread_mutex_lock(&s->plock);
	if (!s->proc || sandbox_proc_usage(s->proc, NULL, &mem) < 0)
		mem = -1;
	pthread_mutex_unlock(&s->plock);
	return mem;
}

void session_pids_after(struct session *s, long pid)
{
	pthread_mutex_lock(&s->lock);
	if (s->next_pid < pid)
		s->next_pid = pid;
	pthread_mutex_unlock(&s->lock);
}

bool session_pooled(const struct session *s)
{
	return s && s->pooled;
}

int session_usage(struct session *s, struct session_usage *out)
{
	memset(out, 0, sizeof *out);
	if (!s)
		return -EINVAL;
	int rc = -ESRCH;
	/* wlock, not plock: proc is replaced under both, and a cell holds plock */
	pthread_mutex_lock(&s->wlock);
	if (s->proc) {
		long cpu = 0, mem = 0;
		rc = sandbox_proc_usage(s->proc, &cpu, &mem);
		if (rc == 0) {
			if (cpu > s->cpu_now_ms)
				s->cpu_now_ms = cpu;
			out->memory_kb = mem;
			sandbox_proc_tasks(s->proc, &out->tasks, &out->pids_refused,
					   &out->throttled_ms);
		}
	}
	out->cpu_ms = s->cpu_before_ms + s->cpu_now_ms;
	out->disk_kb = s->sb ? sandbox_box_used_kb(s->sb) : -1;
	pthread_mutex_unlock(&s->wlock);
	return rc;
}

void session_kill(struct session *s)
{
	if (!s)
		return;
	session_lock(s);
	s->halted = true;
	session_unlock(s);
	pthread_mutex_lock(&s->wlock);
	if (s->proc)
		sandbox_proc_signal(s->proc, SIGKILL);
	pthread_mutex_unlock(&s->wlock);
}

void session_halt(struct session *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->plock);
	s->halted = true;
	if (s->proc)
		session_send_simple(s, SESSD_QUIT, 0, NULL);
	session_sandbox_end(s, "the session ended");
	pthread_mutex_unlock(&s->plock);
}

void session_stop(struct session *s)
{
	if (!s)
		return;
	session_halt(s);
	for (int i = 0; i < SESSION_MAX_CONTEXTS; i++)
		ctx_clear(&s->ctx[i]);
	for (int i = 0; i < SESSION_MAX_PROCS; i++)
		session_proc_clear(&s->procs[i]);
	for (int i = 0; i < 2; i++)
		if (s->wake[i] >= 0)
			close(s->wake[i]);
	strbuf_release(&s->rbuf);
	session_spec_release(&s->spec);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->wlock);
	pthread_mutex_destroy(&s->plock);
	pthread_cond_destroy(&s->cond);
	free(s);
}

/* ---- code contexts ---- */

int session_context_start(struct session *s, const struct session_driver *d, const char *cwd,
			  int *ctx, char *err, size_t errlen)
{
	if (!d || !d->argv || !d->argv[0]) {
		snprintf(err, errlen, "invalid driver");
		return -1;
	}
	session_lock(s);
	int i = 1;
	while (i < SESSION_MAX_CONTEXTS && s->ctx[i].state != CTX_FREE)
		i++;
	if (i < SESSION_MAX_CONTEXTS)
		session_ctx_set(&s->ctx[i], d->argv, d->env, cwd);
	session_unlock(s);
	if (i == SESSION_MAX_CONTEXTS) {
		snprintf(err, errlen, "too many contexts: a session holds at most %d",
			 SESSION_MAX_CONTEXTS);
		return -1;
	}
	pthread_mutex_lock(&s->plock);
	int rc = (s->gone && session_restart(s, NULL, err, errlen) < 0) ||
			 session_ctx_launch(s, &s->ctx[i], err, errlen) < 0
		     ? -1
		     : 0;
	pthread_mutex_unlock(&s->plock);
	if (rc < 0) {
		session_lock(s);
		ctx_clear(&s->ctx[i]);
		session_unlock(s);
		return -1;
	}
	*ctx = i;
	return 0;
}

int session_context_restart(struct session *s, int ctx, char *err, size_t errlen)
{
	if (ctx < 0 || ctx >= SESSION_MAX_CONTEXTS || s->ctx[ctx].state == CTX_FREE) {
		snprintf(err, errlen, "no context %d", ctx);
		return -1;
	}
	pthread_mutex_lock(&s->plock);
	int rc = s->gone ? session_restart(s, &s->ctx[ctx], err, errlen)
			 : session_ctx_launch(s, &s->ctx[ctx], err, errlen);
	pthread_mutex_unlock(&s->plock);
	return rc;
}

int session_context_stop(struct session *s, int ctx)
{
	if (ctx <= 0 || ctx >= SESSION_MAX_CONTEXTS || s->ctx[ctx].state == CTX_FREE)
		return -1;
	session_lock(s);
	unsigned long sid = s->ctx[ctx].sid;
	ctx_clear(&s->ctx[ctx]);
	session_unlock(s);
	session_send_signal(s, sid, SIGKILL);
	return 0;
}

/* ---- processes ---- */

/* ---- results ---- */

const char *cell_status_name(enum cell_status s)
{
	static const char *const names[CELL_STATUS_COUNT] = {
	    "ok", "error", "timeout", "memory_limit", "output_limit", "internal_error"};
	return s >= 0 && s < CELL_STATUS_COUNT ? names[s] : "internal_error";
}

void cell_result_init(struct cell_result *res)
{
	memset(res, 0, sizeof *res);
	strbuf_init(&res->out);
	strbuf_init(&res->err);
	strbuf_init(&res->reply);
	res->status = CELL_INTERNAL_ERROR;
}

void cell_result_release(struct cell_result *res)
{
	strbuf_release(&res->out);
	strbuf_release(&res->err);
	strbuf_release(&res->reply);
	free(res->result);
	free(res->error_name);
	free(res->error_value);
	free(res->error_traceback);
	free(res->results);
	memset(res, 0, sizeof *res);
}
