/* test_capture: the pipe pump against real pipes and a forked writer/reader. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner/capture.h"

static long long now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct child {
	pid_t pid;
	int in, out, err; /* parent ends */
};

/* Forks fn(stdin, stdout, stderr) with pipes on all three. */
static struct child spawn(void (*fn)(void))
{
	int i[2], o[2], e[2];
	cr_assert_eq(pipe2(i, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(o, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(e, O_CLOEXEC), 0);
	pid_t pid = fork();
	if (pid == 0) {
		/* no exec here: the parent's ends must go by hand */
		close(i[1]);
		close(o[0]);
		close(e[0]);
		dup2(i[0], 0);
		dup2(o[1], 1);
		dup2(e[1], 2);
		fn();
		_exit(0);
	}
	close(i[0]);
	close(o[1]);
	close(e[1]);
	return (struct child){pid, i[1], o[0], e[0]};
}

static void finish(struct child *c)
{
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	close(c->out);
	close(c->err);
}

static void echo_stdin(void)
{
	char buf[4096];
	ssize_t n;
	while ((n = read(0, buf, sizeof buf)) > 0)
		if (write(1, buf, (size_t)n) != n)
			_exit(1);
}

static void flood(void)
{
	static char buf[65536];
	memset(buf, 'y', sizeof buf);
	for (;;)
		if (write(1, buf, sizeof buf) < 0)
			_exit(1);
}

static void err_flood_then_ok(void)
{
	static char buf[65536];
	memset(buf, 'e', sizeof buf);
	for (int k = 0; k < 64; k++) /* 4 MB */
		if (write(2, buf, sizeof buf) < 0)
			_exit(1);
	if (write(1, "ok\n", 3) != 3)
		_exit(1);
}

static void never_reads(void)
{
	close(0);
	usleep(100000);
	if (write(1, "bye\n", 4) != 4)
		_exit(1);
}

static void sleeps(void)
{
	sleep(30);
}

static void setup_capture(struct capture *c, struct child *ch, struct strbuf *out,
			  struct strbuf *err)
{
	capture_init(c);
	c->in_fd = ch->in;
	c->out_fd = ch->out;
	c->err_fd = ch->err;
	c->out = out;
	c->err = err;
	c->out_max = 1 << 20;
	c->err_max = 1 << 20;
	c->deadline_us = now_us() + 10 * 1000000LL;
}

Test(capture, stdin_round_trip_larger_than_a_pipe)
{
	static char data[3 << 20];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (char)('a' + i % 26);
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct child ch = spawn(echo_stdin);
	struct capture c;
	setup_capture(&c, &ch, &out, &err);
	c.in_data = data;
	c.in_len = sizeof data;
	c.out_max = sizeof data;
	cr_assert_eq(capture_pump(&c), CAPTURE_DONE);
	cr_assert_eq(out.len, sizeof data);
	cr_assert(!memcmp(out.buf, data, sizeof data));
	cr_assert(!c.out_truncated);
	capture_release(&c);
	finish(&ch);
	strbuf_release(&out);
	strbuf_release(&err);
}

Test(capture, stdout_over_cap_stops_at_once)
{
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct child ch = spawn(flood);
	struct capture c;
	setup_capture(&c, &ch, &out, &err);
	c.out_max = 100000;
	long long t0 = now_us();
	cr_assert_eq(capture_pump(&c), CAPTURE_OUTPUT_LIMIT);
	cr_assert(now_us() - t0 < 2000000);
	cr_assert_eq(out.len, 100000);
	cr_assert(c.out_truncated);
	capture_release(&c);
	finish(&ch);
	strbuf_release(&out);
	strbuf_release(&err);
}

Test(capture, stderr_over_cap_is_drained_and_dropped)
{
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct child ch = spawn(err_flood_then_ok);
	struct capture c;
	setup_capture(&c, &ch, &out, &err);
	c.err_max = 1000;
	cr_assert_eq(capture_pump(&c), CAPTURE_DONE);
	cr_assert_eq(err.len, 1000);
	cr_assert(c.err_truncated);
	cr_assert_str_eq(out.buf, "ok\n");
	capture_release(&c);
	finish(&ch);
	strbuf_release(&out);
	strbuf_release(&err);
}

Test(capture, a_reader_that_never_reads_is_no_error)
{
	static char data[1 << 20];
	memset(data, 'x', sizeof data);
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct child ch = spawn(never_reads);
	struct capture c;
	setup_capture(&c, &ch, &out, &err);
	c.in_data = data;
	c.in_len = sizeof data;
	cr_assert_eq(capture_pump(&c), CAPTURE_DONE); /* and no SIGPIPE killed us */
	cr_assert_str_eq(out.buf, "bye\n");
	capture_release(&c);
	finish(&ch);
	strbuf_release(&out);
	strbuf_release(&err);
}

static int ticks;
static int stop_at_third(void *arg)
{
	(void)arg;
	return ++ticks >= 3;
}

Test(capture, deadline_and_tick)
{
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct child ch = spawn(sleeps);
	struct capture c;
	setup_capture(&c, &ch, &out, &err);
	c.deadline_us = now_us() + 200000;
	long long t0 = now_us();
	cr_assert_eq(capture_pump(&c), CAPTURE_DEADLINE);
	long long took = now_us() - t0;
	cr_assert(took >= 190000 && took < 1000000, "took %lld us", took);
	capture_release(&c);
	finish(&ch);

	ch = spawn(sleeps);
	setup_capture(&c, &ch, &out, &err);
	c.tick_ms = 10;
	c.tick = stop_at_third;
	t0 = now_us();
	cr_assert_eq(capture_pump(&c), CAPTURE_STOPPED);
	cr_assert_eq(ticks, 3);
	cr_assert(now_us() - t0 < 1000000);
	capture_release(&c);
	finish(&ch);
	strbuf_release(&out);
	strbuf_release(&err);
}

/* ---- the live hook (run_spec.on_output) ---- */

struct live {
	struct strbuf out, err;
	long long first_us; /* when the first stdout bytes came */
	int calls;
};

static void live_hook(void *arg, int fd, const char *data, size_t len)
{
	struct live *l = arg;
	if (fd == 1 && !l->out.len)
		l->first_us = now_us();
	strbuf_add(fd == 1 ? &l->out : &l->err, data, len);
	l->calls++;
}

static void prints_sleeps_prints(void)
{
	if (write(1, "one\n", 4) != 4 || write(2, "e1\n", 3) != 3)
		_exit(1);
	usleep(400000);
	if (write(1, "two\n", 4) != 4)
		_exit(1);
}

Test(capture, hook_gets_output_while_the_program_runs)
{
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct live l = {STRBUF_INIT, STRBUF_INIT, 0, 0};
	struct child ch = spawn(prints_sleeps_prints);
	struct capture c;
	setup_capture(&c, &ch, &out, &err);
	c.on_output = live_hook;
	c.output_arg = &l;
	long long t0 = now_us();
	cr_assert_eq(capture_pump(&c), CAPTURE_DONE);
	long long t_end = now_us();
	cr_assert_str_eq(l.out.buf, "one\ntwo\n");
	cr_assert_str_eq(l.err.buf, "e1\n");
	cr_assert_str_eq(out.buf, "one\ntwo\n");
	cr_assert(l.first_us - t0 < 300000 && t_end - l.first_us > 300000,
		  "first bytes after %lld us, end %lld us later", l.first_us - t0,
		  t_end - l.first_us);
	capture_release(&c);
	finish(&ch);
	strbuf_release(&out);
	strbuf_release(&err);
	strbuf_release(&l.out);
	strbuf_release(&l.err);
}

Test(capture, hook_sees_only_kept_bytes)
{
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct live l = {STRBUF_INIT, STRBUF_INIT, 0, 0};
	struct child ch = spawn(err_flood_then_ok);
	struct capture c;
	setup_capture(&c, &ch, &out, &err);
	c.err_max = 1000;
	c.on_output = live_hook;
	c.output_arg = &l;
	cr_assert_eq(capture_pump(&c), CAPTURE_DONE);
	cr_assert_eq(l.err.len, 1000);
	cr_assert_str_eq(l.out.buf, "ok\n");
	capture_release(&c);
	finish(&ch);

	ch = spawn(flood);
	strbuf_reset(&out);
	strbuf_reset(&l.out);
	setup_capture(&c, &ch, &out, &err);
	c.out_max = 100000;
	c.on_output = live_hook;
	c.output_arg = &l;
	cr_assert_eq(capture_pump(&c), CAPTURE_OUTPUT_LIMIT);
	cr_assert_eq(l.out.len, 100000);
	capture_release(&c);
	finish(&ch);
	strbuf_release(&out);
	strbuf_release(&err);
	strbuf_release(&l.out);
	strbuf_release(&l.err);
}

/* A gVisor-like stream: output, then a trailer (mark + status + mark) that
 * arrives in pieces, the first piece after a pause. */
static const char MARK[] = "0123456789abcdef";
static void writes_a_trailer(void)
{
	/* "01" could begin the mark: it is held until "2x" shows it does not */
	if (write(1, "out 01", 6) != 6)
		_exit(1);
	usleep(100000);
	if (write(1, "2x\n", 3) != 3 || write(1, "0123", 4) != 4)
		_exit(1);
	usleep(100000);
	if (write(1, "456789abcdefSTATUS0123456789abcdef", 34) != 34)
		_exit(1);
}

Test(capture, hook_never_sees_the_trailer)
{
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct live l = {STRBUF_INIT, STRBUF_INIT, 0, 0};
	struct child ch = spawn(writes_a_trailer);
	struct capture c;
	setup_capture(&c, &ch, &out, &err);
	c.out_mark = MARK;
	c.out_mark_len = 16;
	c.out_tail = 16 + 6 + 16;
	c.on_output = live_hook;
	c.output_arg = &l;
	cr_assert_eq(capture_pump(&c), CAPTURE_DONE);
	cr_assert_str_eq(out.buf, "out 012x\n0123456789abcdefSTATUS0123456789abcdef");
	cr_assert_str_eq(l.out.buf, "out 012x\n");
	capture_release(&c);
	finish(&ch);

	/* over the cap: the hook stops at out_max - out_tail, like the result */
	ch = spawn(flood);
	strbuf_reset(&out);
	strbuf_reset(&l.out);
	setup_capture(&c, &ch, &out, &err);
	c.out_mark = MARK;
	c.out_mark_len = 16;
	c.out_tail = 38;
	c.out_max = 1000 + 38;
	c.on_output = live_hook;
	c.output_arg = &l;
	cr_assert_eq(capture_pump(&c), CAPTURE_OUTPUT_LIMIT);
	cr_assert_eq(l.out.len, 1000);
	capture_release(&c);
	finish(&ch);
	strbuf_release(&out);
	strbuf_release(&err);
	strbuf_release(&l.out);
	strbuf_release(&l.err);
}
