/* session: a language driver kept running in a live sandbox (sandbox_start),
 * one cell at a time (runner/session/session.h, languages/drivers/PROTOCOL.md).
 *
 * How it works. session_start starts the driver with a fresh JUDGE_TOKEN and
 * reads its stdout until the ready reply. A cell is one request on the driver's
 * stdin; then its stdout and stderr are pumped to the caller as they come,
 * until the reply "<token> <n>\n<json>" shows on stdout. Everything before the
 * token is the cell's output; a tail that could be the token's start is held
 * back until the next read tells (the token may come split across reads).
 *
 * Limits. Every POLL_MS the cell's CPU (the sandbox cgroup's usage since the
 * cell began: for gVisor the sentry's work counts, which is the real cost) and
 * wall time are checked. Over either, or over the stdout cap, the driver gets
 * SIGINT and a second to reply: it did -> timeout (or output_limit) and the
 * session keeps its state; it did not -> it is killed and started again
 * (restarted: state lost). Memory, processes and files hold for the driver's
 * whole life (the sandbox's limits): a driver that dies (memory limit, exit(),
 * a crash) ends the cell as memory_limit or runtime_error and is restarted.
 */
#define _GNU_SOURCE
#include "runner/session/session.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "runner/session/prestart.h"

#define POLL_MS		   10
#define INTERRUPT_GRACE_MS 1000
#define START_TIMEOUT_MS   20000
#define TOKEN_HEX	   32
/* The driver's own life: CPU and wall limits of its sandbox (cells have their own). */
#define DRIVER_LIFE_MS (7L * 24 * 3600 * 1000)
#define REPLY_MAX      (8 << 20)

struct session {
	struct sandbox *sb;
	struct session_spec spec; /* deep copy (session_pool.c) */
	struct sandbox_proc *proc;
	int in_fd, out_fd, err_fd;
	char token[TOKEN_HEX + 2]; /* the hex token and a blank: what starts a reply */
	struct strbuf pending;	   /* stdout read but not yet handed out */
	char start_error[256];	   /* why the last (re)start failed, "" when running */
};

/* ---- the driver's start ---- */

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

static void driver_stop(struct session *s)
{
	sandbox_proc_free(s->proc);
	s->proc = NULL;
	s->in_fd = s->out_fd = s->err_fd = -1;
	strbuf_reset(&s->pending);
}

/* Where a reply starts in buf[0..len): its offset, or len minus the held-back
 * tail that may be the token's start. *found tells which. */
static size_t find_token(const struct session *s, const char *buf, size_t len, bool *found)
{
	const size_t tl = TOKEN_HEX + 1;
	const char *hit = memmem(buf, len, s->token, tl);
	*found = hit != NULL;
	if (hit)
		return (size_t)(hit - buf);
	size_t keep = len < tl - 1 ? len : tl - 1;
	for (; keep > 0; keep--)
		if (!memcmp(buf + len - keep, s->token, keep))
			break;
	return len - keep;
}

/* Takes a whole reply off the front of s->pending into reply: 1 done, 0 more
 * bytes needed, -1 malformed. pending starts with the token. */
static int take_reply(struct session *s, struct strbuf *reply)
{
	const size_t tl = TOKEN_HEX + 1;
	char *nl = memchr(s->pending.buf + tl, '\n', s->pending.len - tl);
	if (!nl)
		return s->pending.len - tl > 12 ? -1 : 0;
	char *end;
	long n = strtol(s->pending.buf + tl, &end, 10);
	if (end != nl || n < 0 || n > REPLY_MAX)
		return -1;
	size_t head = (size_t)(nl + 1 - s->pending.buf);
	if (s->pending.len < head + (size_t)n)
		return 0;
	strbuf_reset(reply);
	strbuf_add(reply, s->pending.buf + head, (size_t)n);
	size_t rest = s->pending.len - head - (size_t)n;
	memmove(s->pending.buf, s->pending.buf + head + n, rest);
	s->pending.len = rest;
	s->pending.buf[rest] = 0;
	return 1;
}

/* Reads what fd holds now into sb (non-blocking fd): bytes read, 0 at EOF, -1
 * when nothing was there. */
static ssize_t read_some(int fd, struct strbuf *sb)
{
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) < 0 && errno == EINTR)
		;
	if (n > 0)
		strbuf_add(sb, buf, (size_t)n);
	return n < 0 ? -1 : n;
}

/* Reads stdout until the ready reply (output before it is dropped). 0 or -1 with err. */
static int read_ready(struct session *s, long timeout_ms, char *err, size_t errlen)
{
	int64_t deadline = clock_mono_ms() + timeout_ms;
	struct strbuf reply = STRBUF_INIT, errout = STRBUF_INIT;
	int ret = -1;
	for (;;) {
		bool found;
		size_t at = find_token(s, s->pending.buf, s->pending.len, &found);
		if (found) {
			memmove(s->pending.buf, s->pending.buf + at, s->pending.len - at);
			s->pending.len -= at;
			int r = take_reply(s, &reply);
			if (r != 0)
				break;
		}
		struct pollfd pfd[2] = {{.fd = s->out_fd, .events = POLLIN},
					{.fd = s->err_fd, .events = POLLIN}};
		int64_t left = deadline - clock_mono_ms();
		if (left <= 0) {
			snprintf(err, errlen, "the driver did not get ready within %ld ms",
				 timeout_ms);
			goto out;
		}
		if (poll(pfd, 2, (int)left) <= 0)
			continue;
		if (pfd[1].revents && errout.len < 4096)
			read_some(s->err_fd, &errout);
		if (pfd[0].revents && read_some(s->out_fd, &s->pending) == 0) {
			snprintf(err, errlen, "the driver ended before it was ready: %.200s",
				 errout.len ? errout.buf : "no message");
			goto out;
		}
	}
	cJSON *j = cJSON_Parse(reply.buf);
	if (!j || !cJSON_IsTrue(cJSON_GetObjectItem(j, "ready")))
		snprintf(err, errlen, "the driver's first reply is not ready: %.200s", reply.buf);
	else
		ret = 0;
	cJSON_Delete(j);
out:
	strbuf_release(&reply);
	strbuf_release(&errout);
	return ret;
}

/* Starts the driver with a new token and waits for it. 0 or -1 with err. */
static int driver_start(struct session *s, char *err, size_t errlen)
{
	size_t n = 0;
	while (s->spec.env[n])
		n++;
	char tokenvar[TOKEN_HEX + 16];
	new_token(s->token);
	snprintf(tokenvar, sizeof tokenvar, "JUDGE_TOKEN=%.*s", TOKEN_HEX, s->token);
	const char **env = xcalloc(n + 2, sizeof *env);
	for (size_t i = 0; i < n; i++)
		env[i] = s->spec.env[i];
	env[n] = tokenvar;
	struct run_spec rs = {.argv = s->spec.argv,
			      .env = env,
			      .ro_paths = s->spec.ro_paths,
			      .limits = s->spec.limits,
			      .warm_argv = s->spec.warm_argv,
			      .preload = s->spec.preload};
	rs.limits.cpu_ms = rs.limits.wall_ms = DRIVER_LIFE_MS;
	int rc = sandbox_start(s->sb, &rs, &s->proc, err, errlen);
	free(env);
	if (rc < 0)
		return -1;
	sandbox_proc_fds(s->proc, &s->in_fd, &s->out_fd, &s->err_fd);
	fcntl(s->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(s->err_fd, F_SETFL, O_NONBLOCK);
	long timeout = s->spec.start_timeout_ms > 0 ? s->spec.start_timeout_ms : START_TIMEOUT_MS;
	if (read_ready(s, timeout, err, errlen) < 0) {
		driver_stop(s);
		return -1;
	}
	s->start_error[0] = 0;
	return 0;
}

/* The driver is gone or hopeless: a new one (state lost). */
static void driver_restart(struct session *s, struct cell_result *res)
{
	driver_stop(s);
	res->restarted = true;
	if (driver_start(s, s->start_error, sizeof s->start_error) < 0)
		log_warn("session: cannot restart the driver: %s", s->start_error);
}

/* ---- one cell ---- */

struct cell_run {
	struct session *s;
	const struct cell_spec *cell;
	struct cell_result *res;
	long cpu_ms, wall_ms;
	long cpu0;
	int64_t t0, interrupt_at; /* clock_mono_ms; 0 = no SIGINT sent */
	enum run_status why;	  /* what the interrupt was for */
	bool replied, died;
};

static void emit(struct cell_run *c, int fd, const char *data, size_t len)
{
	struct strbuf *to = fd == 1 ? &c->res->out : &c->res->err;
	long cap = fd == 1 ? c->s->spec.limits.stdout_bytes : c->s->spec.limits.stderr_bytes;
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

/* Hands out pending stdout up to the reply (or the held-back tail); takes the
 * reply when it is whole. */
static void scan_stdout(struct cell_run *c)
{
	struct session *s = c->s;
	bool found;
	size_t at = find_token(s, s->pending.buf, s->pending.len, &found);
	emit(c, 1, s->pending.buf, at);
	memmove(s->pending.buf, s->pending.buf + at, s->pending.len - at);
	s->pending.len -= at;
	s->pending.buf[s->pending.len] = 0;
	if (!found)
		return;
	int r = take_reply(s, &c->res->reply);
	if (r < 0) {
		/* the token is right but the frame is not: the driver is broken */
		snprintf(c->res->message, sizeof c->res->message, "malformed driver reply");
		c->died = true;
	}
	c->replied = r > 0;
}

static void interrupt(struct cell_run *c, enum run_status why)
{
	if (c->interrupt_at)
		return;
	c->why = why;
	c->interrupt_at = clock_mono_ms();
	int rc = sandbox_proc_signal(c->s->proc, SIGINT);
	if (rc < 0)
		log_debug("session: SIGINT to the driver: %s", strerror(-rc));
}

/* The per-tick checks: CPU and wall of the cell, output over its cap. */
static void check_limits(struct cell_run *c)
{
	long cpu = 0, mem = 0;
	if (sandbox_proc_usage(c->s->proc, &cpu, &mem) == 0) {
		c->res->cpu_ms = cpu - c->cpu0;
		if (mem > c->res->memory_kb)
			c->res->memory_kb = mem;
	}
	if (c->res->out_truncated)
		interrupt(c, RUN_OUTPUT_LIMIT);
	else if (c->res->cpu_ms > c->cpu_ms || clock_mono_ms() - c->t0 > c->wall_ms)
		interrupt(c, RUN_TIMEOUT);
}

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
		poll(&pfd, 1, (int)left);
	}
	return 0;
}

/* Writes the request (the driver reads it whole before it runs anything); a
 * driver that does not take it by deadline gives -ETIMEDOUT. */
static int send_cell(struct session *s, const struct cell_spec *cell, int64_t deadline)
{
	char head[64];
	int hl = snprintf(head, sizeof head, "CELL %zu %zu\n", cell->code_len,
			  cell->stdin_data ? cell->stdin_len : 0);
	const struct {
		const char *p;
		size_t n;
	} parts[] = {{head, (size_t)hl},
		     {cell->code, cell->code_len},
		     {cell->stdin_data, cell->stdin_data ? cell->stdin_len : 0}};
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	int ret = 0;
	fcntl(s->in_fd, F_SETFL, O_NONBLOCK);
	for (size_t i = 0; i < 3 && !ret; i++)
		ret = write_by(s->in_fd, parts[i].p, parts[i].n, deadline);
	struct timespec zero = {0, 0};
	if (ret == -EPIPE)
		sigtimedwait(&set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

/* One poll round: reads both pipes, checks limits. */
static void pump_once(struct cell_run *c)
{
	struct session *s = c->s;
	struct pollfd pfd[2] = {{.fd = s->out_fd, .events = POLLIN},
				{.fd = s->err_fd, .events = POLLIN}};
	if (poll(pfd, 2, POLL_MS) > 0) {
		struct strbuf tmp = STRBUF_INIT;
		if (pfd[1].revents && read_some(s->err_fd, &tmp) > 0)
			emit(c, 2, tmp.buf, tmp.len);
		strbuf_release(&tmp);
		if (pfd[0].revents) {
			ssize_t n = read_some(s->out_fd, &s->pending);
			if (n == 0)
				c->died = true;
			else if (n > 0)
				scan_stdout(c);
		}
	}
	if (!c->replied && !c->died)
		check_limits(c);
}

/* The driver died during the cell: its end decides the status. */
static void cell_died(struct cell_run *c)
{
	struct run_result rr;
	run_result_init(&rr);
	sandbox_proc_wait(c->s->proc, 2000, &rr);
	struct cell_result *res = c->res;
	res->status = rr.status == RUN_MEMORY_LIMIT ? RUN_MEMORY_LIMIT
		      : rr.status == RUN_TIMEOUT    ? RUN_TIMEOUT
						    : RUN_RUNTIME_ERROR;
	if (!res->message[0])
		snprintf(res->message, sizeof res->message, "the driver ended (%s %d)%s%.180s",
			 rr.signal ? "signal" : "exit code", rr.signal ? rr.signal : rr.exit_code,
			 rr.message[0] ? ": " : "", rr.message);
	run_result_release(&rr);
}

/* After the reply: what stderr holds now (the driver flushed it before). */
static void drain_stderr(struct cell_run *c)
{
	struct strbuf tmp = STRBUF_INIT;
	while (read_some(c->s->err_fd, &tmp) > 0) {
		emit(c, 2, tmp.buf, tmp.len);
		strbuf_reset(&tmp);
	}
	strbuf_release(&tmp);
}

static void cell_loop(struct cell_run *c)
{
	while (!c->replied && !c->died) {
		pump_once(c);
		if (c->interrupt_at && !c->replied &&
		    clock_mono_ms() - c->interrupt_at > INTERRUPT_GRACE_MS)
			break;
	}
	long cpu = 0, mem = 0;
	if (!c->died && sandbox_proc_usage(c->s->proc, &cpu, &mem) == 0)
		c->res->cpu_ms = cpu - c->cpu0;
	c->res->wall_ms = (long)(clock_mono_ms() - c->t0);
}

int session_exec(struct session *s, const struct cell_spec *cell, struct cell_result *res)
{
	if (!s || !cell || !res || (!cell->code && cell->code_len))
		return -1;
	strbuf_reset(&res->out), strbuf_reset(&res->err), strbuf_reset(&res->reply);
	res->out_truncated = res->err_truncated = res->restarted = false;
	res->cpu_ms = res->wall_ms = res->memory_kb = 0;
	res->message[0] = 0;
	res->status = RUN_INTERNAL_ERROR;
	if (!s->proc && driver_start(s, s->start_error, sizeof s->start_error) < 0) {
		snprintf(res->message, sizeof res->message, "no driver: %.200s", s->start_error);
		return 0;
	}
	struct cell_run c = {.s = s, .cell = cell, .res = res};
	c.cpu_ms = cell->cpu_ms > 0 ? cell->cpu_ms : s->spec.limits.cpu_ms;
	c.wall_ms = cell->wall_ms > 0 ? cell->wall_ms : s->spec.limits.wall_ms;
	sandbox_proc_usage(s->proc, &c.cpu0, NULL);
	c.t0 = clock_mono_ms();
	int sent = send_cell(s, cell, c.t0 + c.wall_ms);
	if (sent == -ETIMEDOUT) {
		c.why = RUN_TIMEOUT; /* not read: restarted below */
		c.res->wall_ms = c.wall_ms;
	} else if (sent < 0) {
		c.died = true;
	} else {
		cell_loop(&c);
	}
	if (c.replied) {
		drain_stderr(&c);
		res->status = c.interrupt_at ? c.why : RUN_OK;
		return 0;
	}
	if (c.died) {
		cell_died(&c);
	} else if (sent == -ETIMEDOUT) {
		res->status = RUN_TIMEOUT;
		snprintf(res->message, sizeof res->message,
			 "the driver did not read the cell within %ld ms", c.wall_ms);
	} else {
		res->status = c.why;
		snprintf(res->message, sizeof res->message,
			 "the driver did not stop within %d ms of SIGINT", INTERRUPT_GRACE_MS);
	}
	driver_restart(s, res);
	return 0;
}

/* ---- the session ---- */

static const char *const *copy_list(const char *const *v)
{
	if (!v)
		return NULL;
	size_t n = 0;
	while (v[n])
		n++;
	char **c = xcalloc(n + 1, sizeof *c);
	for (size_t i = 0; i < n; i++)
		c[i] = xstrdup(v[i]);
	return (const char *const *)c;
}

static void free_list(const char *const *v)
{
	for (const char *const *p = v; p && *p; p++)
		free((char *)*p);
	free((void *)v);
}

void session_spec_copy(struct session_spec *dst, const struct session_spec *src)
{
	*dst = *src;
	dst->argv = copy_list(src->argv);
	dst->env = copy_list(src->env);
	dst->ro_paths = copy_list(src->ro_paths);
	dst->warm_argv = copy_list(src->warm_argv);
	dst->preload = copy_list(src->preload);
}

void session_spec_release(struct session_spec *s)
{
	free_list(s->argv);
	free_list(s->env);
	free_list(s->ro_paths);
	free_list(s->warm_argv);
	free_list(s->preload);
	memset(s, 0, sizeof *s);
}

int session_start(struct sandbox *sb, const struct session_spec *spec, struct session **out,
		  char *err, size_t errlen)
{
	*out = NULL;
	if (!sb || !spec || !spec->argv || !spec->argv[0] || !spec->env) {
		snprintf(err, errlen, "invalid session specification");
		return -1;
	}
	if (prestart_take(sb, spec, out))
		return 0;
	return session_start_new(sb, spec, out, err, errlen);
}

int session_start_new(struct sandbox *sb, const struct session_spec *spec, struct session **out,
		      char *err, size_t errlen)
{
	struct session *s = xcalloc(1, sizeof *s);
	s->sb = sb;
	s->in_fd = s->out_fd = s->err_fd = -1;
	strbuf_init(&s->pending);
	session_spec_copy(&s->spec, spec);
	if (driver_start(s, err, errlen) < 0) {
		session_stop(s);
		return -1;
	}
	*out = s;
	return 0;
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
	if (!s || !s->proc || sandbox_proc_usage(s->proc, NULL, &mem) < 0)
		return -1;
	return mem;
}

void session_stop(struct session *s)
{
	if (!s)
		return;
	driver_stop(s);
	strbuf_release(&s->pending);
	session_spec_release(&s->spec);
	free(s);
}

void cell_result_init(struct cell_result *res)
{
	memset(res, 0, sizeof *res);
	strbuf_init(&res->out);
	strbuf_init(&res->err);
	strbuf_init(&res->reply);
	res->status = RUN_INTERNAL_ERROR;
}

void cell_result_release(struct cell_result *res)
{
	strbuf_release(&res->out);
	strbuf_release(&res->err);
	strbuf_release(&res->reply);
}
