/* capture: the pipe pump shared by both backends — feeds stdin, reads stdout and
 * stderr with hard caps, and watches a wall deadline and a periodic callback.
 *
 * The caller creates three pipes, gives the child its ends, closes them in the
 * parent, and hands the parent ends here. capture_pump() returns as soon as the
 * run must end (stdout cap, deadline, callback) or when stdout and stderr are at
 * EOF and wait_fd (e.g. a pidfd) is readable. It never waits for a flood of
 * output to finish: stdout beyond its cap stops the pump at once.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

enum capture_end {
	CAPTURE_DONE,	      /* both outputs at EOF and wait_fd readable (or -1) */
	CAPTURE_OUTPUT_LIMIT, /* stdout went over out_max: kill the run now */
	CAPTURE_DEADLINE,     /* deadline_us passed */
	CAPTURE_STOPPED,      /* tick returned non-zero */
	CAPTURE_FAILED,	      /* poll/read failed: errno-like code in capture.error */
};

struct capture {
	/* Inputs. Fds are owned by the caller (capture never closes out/err/wait);
	 * in_fd is closed by capture once stdin is fully written or the reader is gone
	 * (set to -1 then). Fds are made non-blocking by capture_pump. */
	int in_fd;	     /* write end of the child's stdin pipe, or -1 */
	const char *in_data; /* stdin bytes to feed (when in_file < 0) */
	size_t in_len;
	int in_file;	    /* host file to feed instead, or -1 (owned by the caller) */
	int out_fd, err_fd; /* read ends; -1 when absent */
	int wait_fd;	    /* readable when the run is over (pidfd), or -1 */
	/* When set, stdout is over once its bytes end with out_mark (a stream that
	 * outlives the run, with an end written after every writer is dead); what
	 * stderr holds then is read without waiting for its EOF. */
	const void *out_mark;
	size_t out_mark_len;
	size_t out_max, err_max;
	struct strbuf *out, *err;
	int64_t deadline_us;	/* a clock_mono_us() time (common/clock.h); 0 = none */
	int tick_ms;		/* period of tick; 0 = no tick */
	int (*tick)(void *arg); /* returns non-zero to stop the pump (CAPTURE_STOPPED) */
	void *tick_arg;
	/* Optional live hook (the run spec's on_output): gets the bytes capture
	 * keeps as they are read (fd 1 stdout, 2 stderr), in the pump's thread, so
	 * it must not block. With out_tail > 0, stdout ends in a trailer of
	 * out_tail bytes that begins (and ends) with out_mark: the hook never sees
	 * it, nor more than out_max - out_tail bytes. Bytes that may begin the
	 * trailer are held back until later bytes show they do not; a run that
	 * ends without its trailer leaves those (< out_mark_len) unseen. */
	void (*on_output)(void *arg, int fd, const char *data, size_t len);
	void *output_arg;
	size_t out_tail;
	/* Outputs. */
	bool out_truncated, err_truncated;
	bool waited; /* wait_fd became readable */
	int error;   /* CAPTURE_FAILED: the errno */
	/* Private. */
	bool out_eof, err_eof;
	bool live_started, live_out_over;
	size_t out_sent, err_sent; /* bytes of out / err given to on_output */
	size_t in_off;
	char in_buf[65536];
	size_t in_buf_len, in_buf_off;
};

/* Sets every field to its empty value (fds -1, caps 0). */
void capture_init(struct capture *c);
/* Runs the pump (see above). May be called again after CAPTURE_STOPPED etc. to
 * drain what remains (e.g. after a kill, with a short deadline). */
enum capture_end capture_pump(struct capture *c);
/* Closes in_fd if still open. Does not touch the other fds. */
void capture_release(struct capture *c);
/* Writes all of buf to fd (a pipe to a sandbox, blocking or not) before the pump,
 * waiting at most until deadline_us (clock_mono_us) when the pipe is full. SIGPIPE
 * is blocked and consumed as in capture_pump, so a reader that is gone gives
 * -EPIPE, not a signal. Returns 0 or -errno (-ETIMEDOUT). */
int capture_write_all(int fd, const void *buf, size_t len, int64_t deadline_us);
