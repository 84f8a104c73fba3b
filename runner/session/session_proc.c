/* session_proc: a session's processes (runner/session/session.h, session_proc_*):
 * commands started as sessd's children in the session's sandbox, their
 * output relayed to the caller's callbacks by the session's reader thread. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/xalloc.h"
#include "runner/session/init/sessd_proto.h"
#include "runner/session/session_int.h"

/* Fills info from p (copies). Lock held. */
static void proc_info(const struct proc *p, struct session_proc_info *info)
{
	memset(info, 0, sizeof *info);
	info->pid = p->pid;
	info->os_pid = p->os_pid;
	info->argv = xstrvdup((const char *const *)p->argv);
	info->cwd = xstrdup(p->cwd ? p->cwd : "");
	snprintf(info->tag, sizeof info->tag, "%s", p->tag);
	info->running = p->running;
	info->exited = p->exited;
	info->exit_code = p->exit_code;
	info->signal = p->signal;
	info->timed_out = p->timed_out;
	info->truncated = p->truncated;
	info->cpu_ms = p->cpu_ms;
	snprintf(info->message, sizeof info->message, "%s", p->message);
}

/* p ended (status: a wait status; -1 with why: the session ended it). Lock held. */
void session_proc_ended(struct proc *p, int status, long cpu_ms, bool timed_out, const char *why)
{
	if (!p->running && p->started)
		return;
	p->running = false;
	p->started = true;
	p->cpu_ms = cpu_ms;
	p->timed_out = timed_out;
	if (status >= 0 && WIFEXITED(status)) {
		p->exited = true;
		p->exit_code = WEXITSTATUS(status);
	} else {
		p->exited = false;
		p->signal = status >= 0 && WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
	}
	if (why)
		snprintf(p->message, sizeof p->message, "%s", why);
	else if (timed_out)
		snprintf(p->message, sizeof p->message, "killed at the end of its lifetime");
	if (p->on_exit) {
		struct session_proc_info info;
		proc_info(p, &info);
		p->on_exit(p->arg, &info);
		session_proc_info_release(&info);
	}
}

/* A short frame to sessd from the reader, which must never block: only when
 * no one else is writing, and only when the pipe takes it whole at once (a
 * write of at most PIPE_BUF bytes is). True when sent. */
static bool try_send_small(struct session *s, char op, unsigned long id)
{
	char head[SESSD_MAX_HEAD];
	int hl = snprintf(head, sizeof head, "%c %lu 0\n", op, id);
	if (pthread_mutex_trylock(&s->wlock))
		return false;
	bool sent = false;
	int fl = s->in_fd >= 0 ? fcntl(s->in_fd, F_GETFL) : -1;
	if (fl >= 0 && (fl & O_NONBLOCK))
		sent = write(s->in_fd, head, (size_t)hl) == hl;
	pthread_mutex_unlock(&s->wlock);
	return sent;
}

void session_proc_frame(struct session *s, struct proc *p, char op, const char *data, size_t len)
{
	switch (op) {
	case SESSD_STARTED:
		p->started = p->running = true;
		p->os_pid = (pid_t)atoi(data);
		if (p->on_start) {
			struct session_proc_info info;
			proc_info(p, &info);
			p->on_start(p->arg, &info);
			session_proc_info_release(&info);
		}
		break;
	case SESSD_FAILED:
		p->failed = true;
		snprintf(p->message, sizeof p->message, "%.*s", (int)len, data);
		break;
	case SESSD_STDOUT:
	case SESSD_STDERR: {
		long *n = op == SESSD_STDOUT ? &p->out_n : &p->err_n;
		size_t room = *n < p->output_bytes ? (size_t)(p->output_bytes - *n) : 0;
		if (len > room) {
			p->truncated = true;
			/* sessd drops the rest inside the sandbox, on the session's CPU */
			if (!p->mute_sent)
				p->mute_sent = try_send_small(s, SESSD_MUTE, p->sid);
		}
		len = len < room ? len : room;
		*n += (long)len;
		if (len && p->on_output)
			p->on_output(p->arg, p->pid, op == SESSD_STDOUT ? 1 : 2, data, len);
		break;
	}
	case SESSD_EXITED: {
		int status = 0, killed = 0;
		long long cpu = 0;
		long rss = 0;
		sscanf(data, "%d %lld %ld %d", &status, &cpu, &rss, &killed);
		session_proc_ended(p, status, (long)(cpu / 1000), killed != 0, NULL);
		break;
	}
	default:
		break;
	}
}

void session_proc_clear(struct proc *p)
{
	xstrvfree(p->argv);
	free(p->cwd);
	memset(p, 0, sizeof *p);
}

void session_proc_info_release(struct session_proc_info *p)
{
	xstrvfree(p->argv);
	free(p->cwd);
	memset(p, 0, sizeof *p);
}

static struct proc *proc_find(struct session *s, long pid)
{
	for (int i = 0; i < SESSION_MAX_PROCS; i++)
		if (s->procs[i].used && s->procs[i].pid == pid)
			return &s->procs[i];
	return NULL;
}

/* A free slot (the oldest ended process's, when none is free), or NULL when
 * every slot runs. Lock held. */
static struct proc *proc_slot(struct session *s)
{
	struct proc *oldest = NULL;
	for (int i = 0; i < SESSION_MAX_PROCS; i++) {
		struct proc *p = &s->procs[i];
		if (!p->used)
			return p;
		if (!p->running && p->started && (!oldest || p->pid < oldest->pid))
			oldest = p;
	}
	if (oldest)
		session_proc_clear(oldest);
	return oldest;
}

int session_proc_start(struct session *s, const struct session_proc_spec *spec, long *pid,
		       char *err, size_t errlen)
{
	if (!spec || !spec->argv || !spec->argv[0] || spec->output_bytes <= 0) {
		snprintf(err, errlen, "invalid process specification");
		return -1;
	}
	pthread_mutex_lock(&s->plock);
	int up = s->gone ? session_restart(s, NULL, err, errlen) : 0;
	pthread_mutex_unlock(&s->plock);
	if (up < 0)
		return -1;
	session_lock(s);
	struct proc *p = proc_slot(s);
	if (!p) {
		session_unlock(s);
		snprintf(err, errlen, "too many processes: a session runs at most %d at once",
			 SESSION_MAX_PROCS);
		return -1;
	}
	p->used = true;
	p->pid = ++s->next_pid;
	p->sid = ++s->next_sid;
	p->argv = xstrvdup(spec->argv);
	p->cwd = xstrdup(spec->cwd ? spec->cwd : SANDBOX_HOME);
	snprintf(p->tag, sizeof p->tag, "%s", spec->tag ? spec->tag : "");
	p->stdin_open = spec->stdin_open;
	p->output_bytes = spec->output_bytes;
	p->on_start = spec->on_start;
	p->on_output = spec->on_output;
	p->on_exit = spec->on_exit;
	p->arg = spec->arg;
	long id = p->pid;
	unsigned long sid = p->sid;
	session_unlock(s);
	int rc = session_send_spawn(s, sid, spec->stdin_open, spec->cwd, spec->timeout_ms,
				    spec->argv, spec->env);
	int64_t deadline = clock_mono_ms() + SEND_TIMEOUT_MS;
	session_lock(s);
	p = proc_find(s, id);
	while (rc == 0 && p && !p->started && !p->failed && !s->gone &&
	       clock_mono_ms() < deadline) {
		session_wait_until(s, deadline);
		p = proc_find(s, id);
	}
	int ret = -1;
	if (rc < 0)
		snprintf(err, errlen, "cannot reach the session's sessd: %s", strerror(-rc));
	else if (!p)
		snprintf(err, errlen, "the session ended");
	else if (p->failed)
		snprintf(err, errlen, "%s",
			 strchr(p->message, ' ') ? strchr(p->message, ' ') + 1 : p->message);
	else if (!p->started)
		snprintf(err, errlen, "the process did not start within %d ms", SEND_TIMEOUT_MS);
	else
		ret = 0;
	if (ret < 0 && p) {
		p->on_exit = NULL; /* it never started: nothing to report */
		session_proc_clear(p);
	}
	session_unlock(s);
	if (ret == 0)
		*pid = id;
	return ret;
}

/* The sessd id of running process pid with an open stdin, or 0 with *rc. */
static unsigned long stdin_of(struct session *s, long pid, bool closing, int *rc)
{
	session_lock(s);
	struct proc *p = proc_find(s, pid);
	unsigned long sid = 0;
	*rc = !p || !p->running ? -ESRCH : !p->stdin_open || p->stdin_closed ? -EPIPE : 0;
	if (!*rc) {
		sid = p->sid;
		p->stdin_closed = closing;
	}
	session_unlock(s);
	return sid;
}

int session_proc_input(struct session *s, long pid, const void *data, size_t len)
{
	int rc;
	unsigned long sid = stdin_of(s, pid, false, &rc);
	if (!sid)
		return rc;
	const char *parts[] = {data};
	return session_send_frame(s, SESSD_INPUT, sid, parts, &len, 1,
				  clock_mono_ms() + SEND_TIMEOUT_MS);
}

int session_proc_close_stdin(struct session *s, long pid)
{
	int rc;
	unsigned long sid = stdin_of(s, pid, true, &rc);
	return sid ? session_send_simple(s, SESSD_CLOSE, sid, NULL) : rc;
}

int session_proc_signal(struct session *s, long pid, int sig)
{
	session_lock(s);
	struct proc *p = proc_find(s, pid);
	unsigned long sid = p && p->running ? p->sid : 0;
	session_unlock(s);
	if (!sid)
		return -ESRCH;
	session_send_signal(s, sid, sig);
	return 0;
}

int session_proc_get(struct session *s, long pid, long timeout_ms, struct session_proc_info *out)
{
	int64_t deadline = clock_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	session_lock(s);
	struct proc *p = proc_find(s, pid);
	while (p && p->running && !s->gone && clock_mono_ms() < deadline) {
		session_wait_until(s, deadline);
		p = proc_find(s, pid);
	}
	if (p)
		proc_info(p, out);
	session_unlock(s);
	return p ? 0 : -ESRCH;
}

static int by_pid(const void *a, const void *b)
{
	long x = ((const struct session_proc_info *)a)->pid,
	     y = ((const struct session_proc_info *)b)->pid;
	return x < y ? -1 : x > y;
}

int session_proc_list(struct session *s, struct session_proc_info **out, size_t *n)
{
	*out = xcalloc(SESSION_MAX_PROCS, sizeof **out);
	*n = 0;
	session_lock(s);
	for (int i = 0; i < SESSION_MAX_PROCS; i++)
		if (s->procs[i].used && (s->procs[i].started || s->procs[i].failed))
			proc_info(&s->procs[i], &(*out)[(*n)++]);
	session_unlock(s);
	qsort(*out, *n, sizeof **out, by_pid);
	return 0;
}
