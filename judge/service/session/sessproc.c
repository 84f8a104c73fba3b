/* sessproc: a held session's processes, their calls and live output (see sessproc.h). */
#include "judge/service/session/sessproc.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/xalloc.h"
#include "judge/service/outstream.h"
#include "judge/store/db.h"
#include "runner/session/session.h"

struct sessproc {
	struct db_pool *out_pool;
	char session_id[37];
	const char *const *base_env;
	pthread_mutex_t lock;
	pthread_cond_t idle; /* live reached 0 */
	int live;	     /* writers not closed yet */
};

/* One process's live output. Two references: its start call's (until the
 * start event is written) and its life's (until it ended); the last one
 * writes done and closes the writer. */
struct hproc {
	struct sessproc *owner;
	struct outstream *out;
	int refs;   /* under owner->lock */
	char *done; /* its done event's data, once it ended */
};

char **sessproc_env(const char *const *base, const char *const *env)
{
	size_t nb = 0, ne = 0, n = 0;
	while (base && base[nb])
		nb++;
	while (env && env[ne])
		ne++;
	char **v = xcalloc(nb + ne + 1, sizeof *v);
	const char *const *lists[] = {base, env};
	for (int l = 0; l < 2; l++)
		for (const char *const *e = lists[l]; e && *e; e++) {
			size_t k = strcspn(*e, "=");
			size_t i = 0;
			while (i < n && (strncmp(v[i], *e, k + 1)))
				i++;
			if (i < n)
				free(v[i]);
			else
				n++;
			v[i] = xstrdup(*e);
		}
	return v;
}

void sessproc_stream(const char *session_id, long pid, char *out, size_t len)
{
	snprintf(out, len, "proc:%s:%ld", session_id, pid);
}

struct sessproc *sessproc_new(struct db_pool *out_pool, const char *session_id,
			      const char *const *base_env)
{
	struct sessproc *p = xcalloc(1, sizeof *p);
	p->out_pool = out_pool;
	snprintf(p->session_id, sizeof p->session_id, "%s", session_id);
	p->base_env = base_env;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->idle, NULL);
	return p;
}

void sessproc_free(struct sessproc *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	while (p->live > 0)
		pthread_cond_wait(&p->idle, &p->lock);
	pthread_mutex_unlock(&p->lock);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->idle);
	free(p);
}

long sessproc_last_pid(struct db *db, const char *session_id, char *err, size_t errlen)
{
	char prefix[OUTSTREAM_ID_MAX];
	sessproc_stream(session_id, 0, prefix, sizeof prefix);
	prefix[strlen(prefix) - 1] = 0; /* "proc:<id>:" */
	const char *p[] = {prefix};
	PGresult *res = db_query(db,
				 "SELECT coalesce(max(substr(stream, length($1) + 1)::bigint), 0) "
				 "FROM output_chunks WHERE starts_with(stream, $1) "
				 "AND substr(stream, length($1) + 1) ~ '^[0-9]{1,18}$'",
				 1, p);
	if (!res) {
		snprintf(err, errlen, "cannot read the session's process streams: %s",
			 db_error(db));
		return -1;
	}
	long last = (long)db_value_ll(res, 0, 0);
	PQclear(res);
	return last;
}

/* ---- the runner's callbacks (its reader thread: never block) ---- */

static void on_start(void *arg, const struct session_proc_info *info)
{
	struct hproc *h = arg;
	char stream[OUTSTREAM_ID_MAX];
	sessproc_stream(h->owner->session_id, info->pid, stream, sizeof stream);
	outstream_begin(h->out, stream);
	char data[64];
	snprintf(data, sizeof data, "{\"pid\":%ld}", info->pid);
	outstream_event_now(h->out, "start", data);
}

static void on_output(void *arg, long pid, int fd, const char *data, size_t len)
{
	(void)pid;
	outstream_output(((struct hproc *)arg)->out, fd, data, len);
}

static struct hproc *hproc_new(struct sessproc *p)
{
	struct hproc *h = xcalloc(1, sizeof *h);
	h->owner = p;
	h->out = outstream_open_pooled(p->out_pool);
	h->refs = 2;
	pthread_mutex_lock(&p->lock);
	p->live++;
	pthread_mutex_unlock(&p->lock);
	return h;
}

/* Drops a reference; the last writes done (when it ended) and closes the writer. */
static void hproc_put(struct hproc *h)
{
	struct sessproc *p = h->owner;
	pthread_mutex_lock(&p->lock);
	bool last = --h->refs == 0;
	pthread_mutex_unlock(&p->lock);
	if (!last)
		return;
	if (h->done)
		outstream_event(h->out, "done", h->done);
	outstream_close(h->out);
	free(h->done);
	free(h);
	pthread_mutex_lock(&p->lock);
	if (--p->live == 0)
		pthread_cond_broadcast(&p->idle);
	pthread_mutex_unlock(&p->lock);
}

static void *put_main(void *arg)
{
	hproc_put(arg);
	return NULL;
}

/* Its end: done (its state as a stored reply, which serve renders), then its
 * reference goes in a thread of its own (a close waits for the last batch). */
static void on_exit_(void *arg, const struct session_proc_info *info)
{
	struct hproc *h = arg;
	struct sess_reply r;
	sess_reply_init(&r);
	struct sess_process_info pi = {.pid = info->pid,
				       .argv = info->argv,
				       .cwd = info->cwd,
				       .running = false,
				       .exited = info->exited,
				       .exit_code = info->exit_code,
				       .signal = info->signal};
	snprintf(pi.tag, sizeof pi.tag, "%s", info->tag);
	snprintf(pi.message, sizeof pi.message, "%s", info->message);
	sess_reply_add_process(&r, &pi);
	cJSON *j = sesscall_reply_store(SCALL_PROCESS_WAIT, &r);
	h->done = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	sess_reply_release(&r);
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, put_main, h))
		hproc_put(h); /* no thread: here, a few seconds at most */
	pthread_attr_destroy(&at);
}

/* ---- the calls ---- */

/* The reply's process: pid's state now. */
static void add_state(struct session *s, long pid, long wait_ms, struct sess_reply *out)
{
	struct session_proc_info info;
	if (session_proc_get(s, pid, wait_ms, &info) < 0) {
		sess_reply_fail(out, SERR_NO_PROCESS, "no process %ld in the session", pid);
		return;
	}
	struct sess_process_info pi = {.pid = info.pid,
				       .argv = info.argv,
				       .cwd = info.cwd,
				       .running = info.running,
				       .exited = info.exited,
				       .exit_code = info.exit_code,
				       .signal = info.signal};
	snprintf(pi.tag, sizeof pi.tag, "%s", info.tag);
	snprintf(pi.message, sizeof pi.message, "%s", info.message);
	sess_reply_add_process(out, &pi);
	session_proc_info_release(&info);
}

/* A path of the session folder as the sandbox sees it. */
static char *inside(const char *path)
{
	return path && *path ? xasprintf(SANDBOX_HOME "/%s", path) : xstrdup(SANDBOX_HOME);
}

static void start(struct sessproc *p, struct session *s, const struct sess_call *c,
		  struct sess_reply *out)
{
	char err[512];
	long pid = 0;
	struct hproc *h = hproc_new(p);
	char **env = sessproc_env(p->base_env, (const char *const *)c->proc.env);
	char *cwd = inside(c->path);
	struct session_proc_spec spec = {.argv = (const char *const *)c->proc.argv,
					 .env = (const char *const *)env,
					 .cwd = cwd,
					 .stdin_open = c->proc.stdin_open,
					 .timeout_ms = c->proc.timeout_ms,
					 .output_bytes = OUTSTREAM_MAX_BYTES,
					 .tag = c->proc.tag,
					 .on_start = on_start,
					 .on_output = on_output,
					 .on_exit = on_exit_,
					 .arg = h};
	if (session_proc_start(s, &spec, &pid, err, sizeof err) < 0) {
		h->refs = 1; /* it never started: no life to end */
		hproc_put(h);
		enum sess_err e = strstr(err, "too many")	     ? SERR_LIMIT
				  : strstr(err, "the session ended") ? SERR_SESSION_CLOSED
				  : strstr(err, "sessd")	     ? SERR_INTERNAL
								     : SERR_BAD_REQUEST;
		sess_reply_fail(out, e, "cannot start '%.200s': %s", c->proc.argv[0], err);
	} else {
		/* the start event is in the table before the caller learns the pid,
		 * unless the caller waits for it in the stream anyway (on_start sent
		 * it on its way) */
		if (!c->proc.relayed)
			outstream_flush(h->out, 2000);
		hproc_put(h);
		add_state(s, pid, 0, out);
	}
	xstrvfree(env);
	free(cwd);
}

static void list(struct session *s, struct sess_reply *out)
{
	struct session_proc_info *all;
	size_t n;
	session_proc_list(s, &all, &n);
	for (size_t i = 0; i < n; i++) {
		struct sess_process_info pi = {.pid = all[i].pid,
					       .argv = all[i].argv,
					       .cwd = all[i].cwd,
					       .running = all[i].running,
					       .exited = all[i].exited,
					       .exit_code = all[i].exit_code,
					       .signal = all[i].signal};
		snprintf(pi.tag, sizeof pi.tag, "%s", all[i].tag);
		snprintf(pi.message, sizeof pi.message, "%s", all[i].message);
		sess_reply_add_process(out, &pi);
		session_proc_info_release(&all[i]);
	}
	free(all);
}

void sessproc_call(struct sessproc *p, struct session *s, const struct sess_call *c,
		   struct sess_reply *out)
{
	sess_reply_init(out);
	long pid = c->proc.pid;
	int rc = 0;
	switch (c->kind) {
	case SCALL_PROCESS_START:
		start(p, s, c, out);
		return;
	case SCALL_PROCESS_LIST:
		list(s, out);
		return;
	case SCALL_PROCESS_WAIT:
		add_state(s, pid, c->proc.timeout_ms, out);
		return;
	case SCALL_PROCESS_INPUT:
		rc = session_proc_input(s, pid, c->body.buf ? c->body.buf : "", c->body.len);
		break;
	case SCALL_PROCESS_CLOSE_STDIN:
		rc = session_proc_close_stdin(s, pid);
		break;
	case SCALL_PROCESS_SIGNAL:
		rc = session_proc_signal(s, pid, c->proc.signal);
		break;
	default:
		sess_reply_fail(out, SERR_INTERNAL, "not a process call: %s",
				scall_kind_name(c->kind));
		return;
	}
	if (rc == -ESRCH)
		sess_reply_fail(out, SERR_NO_PROCESS, "no running process %ld in the session", pid);
	else if (rc == -EPIPE)
		sess_reply_fail(out, SERR_BAD_REQUEST,
				"process %ld has no stdin open (start it with \"stdin\": true; "
				"a closed stdin stays closed)",
				pid);
	else if (rc < 0)
		sess_reply_fail(out, SERR_INTERNAL, "process %ld: %s", pid, strerror(-rc));
	else
		add_state(s, pid, 0, out);
}
