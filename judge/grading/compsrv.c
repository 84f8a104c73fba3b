/* compsrv: warm compile servers, a long-lived trusted compiler per (language, slot).
 *
 * How it works: a list of servers, each owned by one compile at a time (busy).
 * compsrv_compile takes the (lang, slot) entry, starts its process when it has
 * none (waiting for READY), writes the request and reads the reply within the
 * compile's wall limit, charges the CPU the server's cgroup used meanwhile, and
 * writes the files into the compile's box. Whatever goes wrong kills the server
 * (the next compile starts another) and returns -1 so that the caller compiles
 * cold: a submission never depends on a server being healthy. A server that
 * cannot even start is not tried again for START_BACKOFF_MS (the compiles of
 * meanwhile go cold at once instead of paying a failed start each).
 */
#include "judge/grading/compsrv.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "judge/grading/lang.h"

/* How long a server may take to say READY (it loads the compiler and compiles
 * a warm-up program; ~2 s alone, much more on a loaded machine). */
#define START_TIMEOUT_MS 60000
#define START_BACKOFF_MS 60000
/* The server's whole-life CPU backstop (RLIMIT_CPU of the live process); it is
 * recycled once it used half of it. */
#define LIFE_CPU_MS    (3600L * 1000)
#define LINE_MAX_BYTES 256
#define MAX_FILES      8
#define POLL_SLICE_MS  200
/* Fault injection for tests (tests/integration/warm_compile.sh): "kill" sends
 * SIGKILL to the server right after each request, as a crash mid-compile. */
#define FAULT_ENV "JUDGE_FAULT_COMPSRV"

struct server {
	const struct lang *lang;
	int slot;
	enum sandbox_backend backend;
	bool busy;
	struct sandbox *sb;
	struct sandbox_proc *proc;
	int in_fd, out_fd, err_fd;
	int compiles;
	int64_t failed_start_ms; /* when its last start failed, 0 = never */
	char rbuf[4096];	 /* bytes read from out_fd, not consumed yet */
	char errline[256];	 /* the start of what it wrote on stderr */
	size_t errlen;
	size_t rlen, roff;
	/* during a compile: the server's CPU time at its start, and the most the
	 * compile may use (0: not compiling) */
	long cpu_start, cpu_max;
	struct server *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct server *servers;
static bool enabled;

void compsrv_enable(void)
{
	pthread_mutex_lock(&lock);
	bool first = !enabled;
	enabled = true;
	pthread_mutex_unlock(&lock);
	if (first)
		sandbox_on_shutdown(compsrv_shutdown);
}

bool compsrv_enabled(void)
{
	pthread_mutex_lock(&lock);
	bool on = enabled;
	pthread_mutex_unlock(&lock);
	return on;
}

/* Ends s's process and workspace (s stays in the list, without a process). */
static void server_stop(struct server *s)
{
	if (s->proc) {
		sandbox_proc_signal(s->proc, SIGKILL);
		struct run_result rr;
		run_result_init(&rr);
		sandbox_proc_wait(s->proc, 2000, &rr);
		run_result_release(&rr);
		sandbox_proc_free(s->proc);
		s->proc = NULL;
	}
	if (s->sb) {
		sandbox_close(s->sb);
		s->sb = NULL;
	}
	s->in_fd = s->out_fd = s->err_fd = -1;
	s->rlen = s->roff = 0;
	s->errlen = 0;
	s->compiles = 0;
}

/* Reads what the server wrote on stderr (it writes there only when it fails,
 * a crash's stack trace can be long): keeps the first line for the log and
 * drops the rest, so that a full pipe never stops the server. */
static void read_stderr(struct server *s)
{
	char buf[4096];
	ssize_t n;
	while (s->err_fd >= 0 && (n = read(s->err_fd, buf, sizeof buf)) > 0) {
		size_t room = sizeof s->errline - 1 - s->errlen;
		size_t k = (size_t)n < room ? (size_t)n : room;
		memcpy(s->errline + s->errlen, buf, k);
		s->errlen += k;
		s->errline[s->errlen] = 0;
	}
}

/* Logs the first line the server wrote on stderr, if any. */
static void log_stderr(struct server *s)
{
	read_stderr(s);
	if (!s->errlen)
		return;
	s->errline[strcspn(s->errline, "\n")] = 0;
	log_warn("compsrv: %s server of slot %d said: %s", s->lang->name, s->slot, s->errline);
	s->errlen = 0;
}

/* Waits until fd is ready for events or the deadline passes, reading the
 * server's stderr meanwhile. 0, or -1 with err. */
static int wait_fd(struct server *s, int fd, short events, int64_t deadline, char *err,
		   size_t errlen)
{
	for (;;) {
		int64_t left = deadline - clock_mono_ms();
		if (left > INT32_MAX)
			left = INT32_MAX;
		if (left <= 0) {
			snprintf(err, errlen, "no answer in time");
			return -1;
		}
		/* a compile in progress: its CPU time is looked at every POLL_SLICE_MS */
		long cpu;
		if (s->cpu_max > 0 && sandbox_proc_usage(s->proc, &cpu, NULL) == 0 &&
		    cpu - s->cpu_start > s->cpu_max) {
			snprintf(err, errlen, "the compile used more than its %ld ms of CPU",
				 s->cpu_max);
			return -1;
		}
		if (s->cpu_max > 0 && left > POLL_SLICE_MS)
			left = POLL_SLICE_MS;
		struct pollfd p[2] = {{.fd = fd, .events = events},
				      {.fd = s->err_fd, .events = POLLIN}};
		int rc = poll(p, 2, (int)left);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			return -1;
		}
		if (p[1].revents)
			read_stderr(s);
		if (p[0].revents)
			return 0;
		if (p[1].revents & (POLLHUP | POLLERR)) /* stderr closed: stop watching it */
			s->err_fd = -1;
	}
}

static int write_some(struct server *s, const char *p, size_t n, int64_t deadline, char *err,
		      size_t errlen)
{
	while (n > 0) {
		if (wait_fd(s, s->in_fd, POLLOUT, deadline, err, errlen) < 0)
			return -1;
		ssize_t k = write(s->in_fd, p, n);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0) {
			snprintf(err, errlen, "writing the request: %s",
				 k < 0 ? strerror(errno) : "closed");
			return k < 0 && errno == EPIPE ? -EPIPE : -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Writes all of p, SIGPIPE blocked in this thread (a server that is gone is
 * an error here, not the end of the process). 0 or -1 with err. */
static int write_all(struct server *s, const char *p, size_t n, int64_t deadline, char *err,
		     size_t errlen)
{
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	int rc = write_some(s, p, n, deadline, err, errlen);
	if (rc == -EPIPE) {
		struct timespec zero = {0, 0};
		sigtimedwait(&set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc < 0 ? -1 : 0;
}

/* Reads exactly n bytes of the reply into out (appended). */
static int read_exact(struct server *s, struct strbuf *out, size_t n, int64_t deadline, char *err,
		      size_t errlen)
{
	while (n > 0) {
		if (s->roff < s->rlen) {
			size_t k = s->rlen - s->roff < n ? s->rlen - s->roff : n;
			if (out)
				strbuf_add(out, s->rbuf + s->roff, k);
			s->roff += k;
			n -= k;
			continue;
		}
		if (wait_fd(s, s->out_fd, POLLIN, deadline, err, errlen) < 0)
			return -1;
		ssize_t k = read(s->out_fd, s->rbuf, sizeof s->rbuf);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0) {
			snprintf(err, errlen, "the server %s",
				 k < 0 ? "cannot be read" : "ended (closed its output)");
			return -1;
		}
		s->rlen = (size_t)k;
		s->roff = 0;
	}
	return 0;
}

/* Reads one line (without its '\n') into line. */
static int read_line(struct server *s, char *line, size_t max, int64_t deadline, char *err,
		     size_t errlen)
{
	size_t n = 0;
	struct strbuf c = STRBUF_INIT;
	int ret = -1;
	for (;;) {
		strbuf_reset(&c);
		if (read_exact(s, &c, 1, deadline, err, errlen) < 0)
			goto out;
		if (c.buf[0] == '\n')
			break;
		if (n + 1 >= max) {
			snprintf(err, errlen, "a reply line longer than %zu bytes", max);
			goto out;
		}
		line[n++] = c.buf[0];
	}
	line[n] = 0;
	ret = 0;
out:
	strbuf_release(&c);
	return ret;
}

/* Starts s's process and waits for READY. 0, or -1 with err. */
static int server_start(struct server *s, const struct compsrv_job *job, char *err, size_t errlen)
{
	int64_t t0 = clock_mono_ms();
	const struct lang *l = s->lang;
	int slot = COMPSRV_SLOT0 + job->slot % COMPSRV_SLOTS;
	if (sandbox_open(s->backend, slot, 16L << 20, &s->sb, err, errlen) < 0)
		return -1;
	struct run_limits lim = job->limits;
	lim.cpu_ms = LIFE_CPU_MS;
	lim.wall_ms = 7L * 24 * 3600 * 1000;
	struct run_spec spec = {
	    .argv = (const char *const *)l->compile_server_argv,
	    .env = (const char *const *)(l->compile_env ? l->compile_env : l->env),
	    .ro_paths = (const char *const *)l->ro_paths,
	    .limits = lim,
	};
	if (sandbox_start(s->sb, &spec, &s->proc, err, errlen) < 0)
		goto fail;
	sandbox_proc_fds(s->proc, &s->in_fd, &s->out_fd, &s->err_fd);
	fcntl(s->err_fd, F_SETFL, fcntl(s->err_fd, F_GETFL) | O_NONBLOCK);
	char line[LINE_MAX_BYTES];
	if (read_line(s, line, sizeof line, t0 + START_TIMEOUT_MS, err, errlen) < 0)
		goto fail;
	if (strncmp(line, "READY ", 6)) {
		snprintf(err, errlen, "it said '%.60s' instead of READY", line);
		goto fail;
	}
	log_info("compsrv: %s server of slot %d ready in %lld ms (%s)", l->name, job->slot,
		 (long long)(clock_mono_ms() - t0), line + 6);
	return 0;
fail:
	log_stderr(s);
	server_stop(s);
	return -1;
}

/* Takes the (lang, slot, backend) server, busy from now on (a new entry when none). */
static struct server *take(const struct compsrv_job *job)
{
	pthread_mutex_lock(&lock);
	struct server *s;
	for (s = servers; s; s = s->next)
		if (s->lang == job->lang && s->slot == job->slot && s->backend == job->backend &&
		    !s->busy)
			break;
	if (!s) {
		s = xcalloc(1, sizeof *s);
		s->lang = job->lang;
		s->slot = job->slot;
		s->backend = job->backend;
		s->in_fd = s->out_fd = s->err_fd = -1;
		s->next = servers;
		servers = s;
	}
	s->busy = true;
	pthread_mutex_unlock(&lock);
	return s;
}

static void give_back(struct server *s)
{
	pthread_mutex_lock(&lock);
	s->busy = false;
	pthread_mutex_unlock(&lock);
}

/* A file name the server may give: one plain name in the box. */
static bool file_name_ok(const char *n)
{
	return n[0] && n[0] != '.' && !strchr(n, '/') && strlen(n) < 200;
}

/* Sends the request, reads the reply into rr and the files into job->box.
 * 0, 1 when the server leaves this compile to the cold path (COLD), -1 when
 * the server failed (err says how). */
static int exchange(struct server *s, const struct compsrv_job *job, struct run_result *rr,
		    int64_t deadline, char *err, size_t errlen)
{
	struct strbuf data = STRBUF_INIT;
	int ret = -1;
	char line[LINE_MAX_BYTES];
	int n =
	    snprintf(line, sizeof line, "COMPILE %s %zu\n", s->lang->source_file, job->source_len);
	if (n < 0 || n >= (int)sizeof line) {
		snprintf(err, errlen, "source file name too long");
		goto out;
	}
	if (write_all(s, line, (size_t)n, deadline, err, errlen) < 0 ||
	    write_all(s, job->source, job->source_len, deadline, err, errlen) < 0)
		goto out;
	const char *fault = getenv(FAULT_ENV);
	if (fault && !strcmp(fault, "kill")) {
		log_warn("compsrv: fault injection: killing the %s server of slot %d mid-compile",
			 s->lang->name, s->slot);
		sandbox_proc_signal(s->proc, SIGKILL);
	}
	if (read_line(s, line, sizeof line, deadline, err, errlen) < 0)
		goto out;
	if (!strncmp(line, "COLD ", 5)) {
		snprintf(err, errlen, "it leaves this compile to a fresh compiler: %.200s",
			 line + 5);
		ret = 1;
		goto out;
	}
	int exit_code, nfiles;
	long long text_len;
	char tail;
	if (sscanf(line, "DONE %d %lld %d%c", &exit_code, &text_len, &nfiles, &tail) != 3 ||
	    text_len < 0 || nfiles < 0 || nfiles > MAX_FILES) {
		snprintf(err, errlen, "a bad reply '%.60s'", line);
		goto out;
	}
	/* more output than the compile may print: the cold path tells output_limit */
	if (text_len > job->limits.stdout_bytes) {
		snprintf(err, errlen, "%lld bytes of output, over the compile's %ld", text_len,
			 job->limits.stdout_bytes);
		goto out;
	}
	if (read_exact(s, &rr->out, (size_t)text_len, deadline, err, errlen) < 0)
		goto out;
	for (int i = 0; i < nfiles; i++) {
		char name[LINE_MAX_BYTES];
		long long len;
		if (read_line(s, line, sizeof line, deadline, err, errlen) < 0)
			goto out;
		if (sscanf(line, "FILE %200s %lld%c", name, &len, &tail) != 2 ||
		    !file_name_ok(name) || len < 0) {
			snprintf(err, errlen, "a bad file line '%.60s'", line);
			goto out;
		}
		if (len > job->limits.file_bytes) {
			snprintf(err, errlen, "file '%s' of %lld bytes is over the compile's %ld",
				 name, len, job->limits.file_bytes);
			goto out;
		}
		strbuf_reset(&data);
		if (read_exact(s, &data, (size_t)len, deadline, err, errlen) < 0)
			goto out;
		int rc = sandbox_write_file(job->box, name, data.buf, data.len, 0644);
		if (rc < 0) {
			snprintf(err, errlen, "cannot write '%s' into the box: %s", name,
				 strerror(-rc));
			goto out;
		}
	}
	rr->exit_code = exit_code;
	ret = 0;
out:
	strbuf_release(&data);
	return ret;
}

int compsrv_compile(const struct compsrv_job *job, struct run_result *rr, char *err, size_t errlen)
{
	struct server *s = take(job);
	int ret = -1;
	int64_t now = clock_mono_ms();
	if (!s->proc && s->failed_start_ms && now - s->failed_start_ms < START_BACKOFF_MS) {
		snprintf(err, errlen, "its last start failed %lld s ago",
			 (long long)(now - s->failed_start_ms) / 1000);
		goto done;
	}
	long cpu0 = 0, cpu1 = 0, mem = 0;
	if (s->proc && (s->compiles >= COMPSRV_MAX_COMPILES ||
			sandbox_proc_usage(s->proc, &cpu0, &mem) < 0 || cpu0 > LIFE_CPU_MS / 2)) {
		log_info("compsrv: recycling the %s server of slot %d after %d compiles",
			 s->lang->name, s->slot, s->compiles);
		server_stop(s);
	}
	if (!s->proc) {
		if (server_start(s, job, err, errlen) < 0) {
			s->failed_start_ms = clock_mono_ms();
			char why[256];
			snprintf(why, sizeof why, "it does not start: %s", err);
			snprintf(err, errlen, "%s", why);
			goto done;
		}
		s->failed_start_ms = 0;
	}
	if (sandbox_proc_usage(s->proc, &cpu0, &mem) < 0)
		cpu0 = 0;
	int64_t t0 = clock_mono_ms();
	strbuf_reset(&rr->out);
	strbuf_reset(&rr->err);
	s->cpu_start = cpu0;
	s->cpu_max = job->limits.cpu_ms;
	int rc = exchange(s, job, rr, t0 + job->limits.wall_ms, err, errlen);
	s->cpu_max = 0;
	if (rc > 0) /* the server is well, this source is for the cold path */
		goto done;
	if (rc < 0) {
		log_stderr(s);
		server_stop(s);
		goto done;
	}
	s->compiles++;
	if (sandbox_proc_usage(s->proc, &cpu1, &mem) < 0) {
		snprintf(err, errlen, "cannot read its CPU time");
		server_stop(s);
		goto done;
	}
	rr->cpu_ms = cpu1 - cpu0;
	/* over the compile's CPU limit: the cold path tells the timeout */
	if (rr->cpu_ms > job->limits.cpu_ms) {
		snprintf(err, errlen, "the compile took %ld ms of CPU, over its %ld", rr->cpu_ms,
			 job->limits.cpu_ms);
		server_stop(s);
		goto done;
	}
	rr->status = RUN_OK;
	rr->signal = 0;
	rr->wall_ms = (long)(clock_mono_ms() - t0);
	rr->memory_kb = mem;
	ret = 0;
done:
	give_back(s);
	return ret;
}

void compsrv_shutdown(void)
{
	pthread_mutex_lock(&lock);
	struct server *list = servers;
	servers = NULL;
	pthread_mutex_unlock(&lock);
	while (list) {
		struct server *next = list->next;
		server_stop(list);
		free(list);
		list = next;
	}
}
