/* capture: the pipe pump shared by both backends (see capture.h). */
#define _GNU_SOURCE
#include "runner/capture.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"

#define READ_CHUNK 65536

static void set_nonblock(int fd)
{
	if (fd < 0)
		return;
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && !(fl & O_NONBLOCK))
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

void capture_init(struct capture *c)
{
	memset(c, 0, sizeof(*c));
	c->in_fd = c->in_file = c->out_fd = c->err_fd = c->wait_fd = -1;
}

static void close_in(struct capture *c)
{
	if (c->in_fd >= 0)
		close(c->in_fd);
	c->in_fd = -1;
}

void capture_release(struct capture *c)
{
	close_in(c);
}

/* Writes what it can without blocking. A reader that is gone (EPIPE) or any
 * other write error just ends stdin: a program need not read its input. */
static void feed_stdin(struct capture *c)
{
	for (;;) {
		const char *p;
		size_t n;
		if (c->in_file >= 0) {
			if (c->in_buf_off == c->in_buf_len) {
				ssize_t r = read(c->in_file, c->in_buf, sizeof(c->in_buf));
				if (r < 0 && errno == EINTR)
					continue;
				if (r <= 0) {
					close_in(c);
					return;
				}
				c->in_buf_len = (size_t)r;
				c->in_buf_off = 0;
			}
			p = c->in_buf + c->in_buf_off;
			n = c->in_buf_len - c->in_buf_off;
		} else {
			if (c->in_off >= c->in_len) {
				close_in(c);
				return;
			}
			p = c->in_data + c->in_off;
			n = c->in_len - c->in_off;
		}
		ssize_t w = write(c->in_fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				close_in(c);
			return;
		}
		if (c->in_file >= 0)
			c->in_buf_off += (size_t)w;
		else
			c->in_off += (size_t)w;
	}
}

/* Reads what is available on fd into sb, keeping at most max bytes. Returns 1
 * when bytes beyond the cap arrived (they are dropped), 0 otherwise; sets *eof
 * at end of file. */
static int drain(int fd, struct strbuf *sb, size_t max, bool *eof, int *error)
{
	char scratch[16384];
	for (int rounds = 0; rounds < 16; rounds++) {
		ssize_t r;
		if (sb->len < max) {
			size_t room = max - sb->len;
			if (room > READ_CHUNK)
				room = READ_CHUNK;
			strbuf_grow(sb, room);
			r = read(fd, sb->buf + sb->len, room);
			if (r > 0) {
				sb->len += (size_t)r;
				sb->buf[sb->len] = 0;
				continue;
			}
		} else {
			r = read(fd, scratch, sizeof(scratch));
			if (r > 0)
				return 1;
		}
		if (r == 0) {
			*eof = true;
			return 0;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			*error = errno;
		return 0;
	}
	return 0;
}

static bool ends_with_mark(const struct capture *c)
{
	const struct strbuf *sb = c->out;
	return c->out_mark && sb->len >= c->out_mark_len &&
	       !memcmp(sb->buf + sb->len - c->out_mark_len, c->out_mark, c->out_mark_len);
}

/* stdout ended with its mark: every writer is gone, so stderr holds all it will
 * get; read it to the end of what is there. */
static void drain_rest_of_err(struct capture *c, int *error)
{
	while (!c->err_eof && !*error) {
		size_t before = c->err->len;
		int dropped = drain(c->err_fd, c->err, c->err_max, &c->err_eof, error);
		if (dropped)
			c->err_truncated = true;
		else if (c->err->len == before)
			break;
	}
	c->err_eof = true;
}

/* How many bytes at the end of s[0..n) may begin the trailer: the longest
 * suffix that is a proper prefix of the mark. */
static size_t mark_prefix_tail(const char *s, size_t n, const char *mark, size_t mark_len)
{
	for (size_t k = mark_len - 1 < n ? mark_len - 1 : n; k > 0; k--)
		if (!memcmp(s + n - k, mark, k))
			return k;
	return 0;
}

/* Where the live view of stdout ends now: before the trailer (its first
 * bytes are out_mark, which the program cannot know), before bytes that may
 * begin it, and within out_max - out_tail. */
static size_t live_out_end(struct capture *c)
{
	const struct strbuf *sb = c->out;
	size_t end = sb->len;
	if (!c->out_tail || !c->out_mark || !c->out_mark_len)
		return end;
	const char *from = sb->buf + c->out_sent;
	const char *hit = memmem(from, end - c->out_sent, c->out_mark, c->out_mark_len);
	if (hit) {
		end = (size_t)(hit - sb->buf);
		c->live_out_over = true;
	} else {
		end -= mark_prefix_tail(from, end - c->out_sent, c->out_mark, c->out_mark_len);
	}
	if (c->out_max > c->out_tail && end > c->out_max - c->out_tail)
		end = c->out_max - c->out_tail;
	return end;
}

/* Gives on_output what was kept since its last call. */
static void emit_live(struct capture *c)
{
	if (!c->on_output)
		return;
	if (!c->live_out_over) {
		size_t end = live_out_end(c);
		if (end > c->out_sent) {
			c->on_output(c->output_arg, 1, c->out->buf + c->out_sent,
				     end - c->out_sent);
			c->out_sent = end;
		}
	}
	if (c->err->len > c->err_sent) {
		c->on_output(c->output_arg, 2, c->err->buf + c->err_sent,
			     c->err->len - c->err_sent);
		c->err_sent = c->err->len;
	}
}

enum capture_end capture_pump(struct capture *c)
{
	enum capture_end end = CAPTURE_FAILED;
	sigset_t pipe_set, old_set;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	/* A write to a pipe whose reader is gone raises SIGPIPE in this thread:
	 * block it here, and consume it below, instead of ignoring it process-wide
	 * (an ignored SIGPIPE would be inherited by programs). */
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
	sigset_t pending;
	sigpending(&pending);
	bool pipe_was_pending = sigismember(&pending, SIGPIPE);

	set_nonblock(c->in_fd);
	set_nonblock(c->out_fd);
	set_nonblock(c->err_fd);
	if (c->out_fd < 0)
		c->out_eof = true;
	if (c->err_fd < 0)
		c->err_eof = true;
	if (c->wait_fd < 0)
		c->waited = true;
	if (c->in_fd >= 0 && !c->in_data && c->in_file < 0)
		close_in(c);
	if (!c->live_started) {
		/* the hook sees this run's bytes only */
		c->live_started = true;
		c->out_sent = c->out ? c->out->len : 0;
		c->err_sent = c->err ? c->err->len : 0;
	}
	if (!c->out || !c->err)
		c->on_output = NULL;

	int64_t next_tick = c->tick && c->tick_ms > 0 ? clock_mono_us() + c->tick_ms * 1000LL : 0;
	for (;;) {
		if (c->out_eof && c->err_eof && c->waited) {
			end = CAPTURE_DONE;
			break;
		}
		int64_t now = clock_mono_us();
		if (c->deadline_us && now >= c->deadline_us) {
			end = CAPTURE_DEADLINE;
			break;
		}
		if (next_tick && now >= next_tick) {
			if (c->tick(c->tick_arg)) {
				end = CAPTURE_STOPPED;
				break;
			}
			now = clock_mono_us();
			next_tick = now + c->tick_ms * 1000LL;
		}
		int64_t wait_us = -1;
		if (c->deadline_us)
			wait_us = c->deadline_us - now;
		if (next_tick && (wait_us < 0 || next_tick - now < wait_us))
			wait_us = next_tick - now;
		int timeout = wait_us < 0 ? -1 : (int)((wait_us + 999) / 1000);

		struct pollfd pfd[4];
		int n = 0, i_in = -1, i_out = -1, i_err = -1, i_wait = -1;
		if (c->in_fd >= 0) {
			i_in = n;
			pfd[n++] = (struct pollfd){.fd = c->in_fd, .events = POLLOUT};
		}
		if (!c->out_eof) {
			i_out = n;
			pfd[n++] = (struct pollfd){.fd = c->out_fd, .events = POLLIN};
		}
		if (!c->err_eof) {
			i_err = n;
			pfd[n++] = (struct pollfd){.fd = c->err_fd, .events = POLLIN};
		}
		if (!c->waited) {
			i_wait = n;
			pfd[n++] = (struct pollfd){.fd = c->wait_fd, .events = POLLIN};
		}
		int pr = poll(pfd, (nfds_t)n, timeout);
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			c->error = errno;
			end = CAPTURE_FAILED;
			break;
		}
		if (pr == 0)
			continue;
		if (i_in >= 0 && pfd[i_in].revents) {
			if (pfd[i_in].revents & (POLLERR | POLLNVAL))
				close_in(c);
			else
				feed_stdin(c);
		}
		int error = 0;
		if (i_out >= 0 && pfd[i_out].revents) {
			if (drain(c->out_fd, c->out, c->out_max, &c->out_eof, &error)) {
				c->out_truncated = true;
				end = CAPTURE_OUTPUT_LIMIT;
				break;
			}
			if (!c->out_eof && ends_with_mark(c)) {
				c->out_eof = true;
				drain_rest_of_err(c, &error);
			}
		}
		if (i_err >= 0 && pfd[i_err].revents) {
			if (drain(c->err_fd, c->err, c->err_max, &c->err_eof, &error))
				c->err_truncated = true;
		}
		emit_live(c);
		if (error) {
			c->error = error;
			end = CAPTURE_FAILED;
			break;
		}
		if (i_wait >= 0 && pfd[i_wait].revents)
			c->waited = true;
	}

	emit_live(c);
	if (!pipe_was_pending) {
		struct timespec zero = {0, 0};
		while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old_set, NULL);
	return end;
}

int capture_write_all(int fd, const void *buf, size_t len, int64_t deadline_us)
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
			int64_t left = deadline_us - clock_mono_us();
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
