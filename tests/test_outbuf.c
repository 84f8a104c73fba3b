/* test_outbuf: batching live output into events: coalescing, UTF-8 cut between
 * reads, invalid bytes, the stream cap and the backlog bound. */
#include <criterion/criterion.h>
#include <string.h>

#include "judge/service/outbuf.h"

/* Takes everything into one string "name:data|name:data|". */
static void take_all(struct outbuf *b, bool at_end, struct strbuf *out)
{
	struct outbuf_event *ev;
	size_t n = outbuf_take(b, at_end, &ev);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(out, "%s:%s|", ev[i].name, ev[i].data.buf);
	outbuf_events_free(ev, n);
}

Test(outbuf, same_fd_coalesces_other_fd_and_events_cut)
{
	struct outbuf b;
	struct strbuf s = STRBUF_INIT;
	outbuf_init(&b, 1 << 20, 1 << 20);
	outbuf_output(&b, 1, "a\n", 2);
	outbuf_output(&b, 1, "b\"\\\r\t\x01", 6);
	outbuf_output(&b, 2, "err", 3);
	outbuf_event(&b, "test", "{\"name\":\"1\"}");
	outbuf_output(&b, 1, "c", 1);
	cr_assert_eq(outbuf_pending(&b), 2 + 6 + 3 + 12 + 1);
	take_all(&b, false, &s);
	cr_assert_str_eq(s.buf, "stdout:\"a\\nb\\\"\\\\\\r\\t\\u0001\"|stderr:\"err\"|"
				"test:{\"name\":\"1\"}|stdout:\"c\"|");
	cr_assert_eq(outbuf_pending(&b), 0);
	strbuf_reset(&s);
	take_all(&b, true, &s);
	cr_assert_str_eq(s.buf, "");
	strbuf_release(&s);
	outbuf_release(&b);
}

Test(outbuf, big_output_is_cut_into_events)
{
	static char big[OUTBUF_EVENT_BYTES * 2 + 10];
	memset(big, 'x', sizeof big);
	struct outbuf b;
	outbuf_init(&b, 1 << 20, 1 << 20);
	outbuf_output(&b, 1, big, sizeof big);
	struct outbuf_event *ev;
	size_t n = outbuf_take(&b, true, &ev);
	cr_assert_eq(n, 3);
	cr_assert_eq(ev[0].data.len, OUTBUF_EVENT_BYTES + 2); /* the quotes */
	cr_assert_eq(ev[2].data.len, 12);
	outbuf_events_free(ev, n);
	outbuf_release(&b);
}

Test(outbuf, utf8_cut_between_reads_is_held_back)
{
	struct outbuf b;
	struct strbuf s = STRBUF_INIT;
	outbuf_init(&b, 1 << 20, 1 << 20);
	outbuf_output(&b, 1, "h\xc3", 2); /* é cut after its first byte */
	take_all(&b, false, &s);
	cr_assert_str_eq(s.buf, "stdout:\"h\"|");
	outbuf_output(&b, 1, "\xa9!", 2);
	strbuf_reset(&s);
	take_all(&b, false, &s);
	cr_assert_str_eq(s.buf, "stdout:\"\xc3\xa9!\"|");
	/* only the cut sequence, alone: nothing to take yet */
	outbuf_output(&b, 1, "\xe2\x82", 2);
	strbuf_reset(&s);
	take_all(&b, false, &s);
	cr_assert_str_eq(s.buf, "");
	cr_assert_eq(outbuf_pending(&b), 2);
	/* at the end it goes anyway, as U+FFFD */
	strbuf_reset(&s);
	take_all(&b, true, &s);
	cr_assert_str_eq(s.buf, "stdout:\"\xef\xbf\xbd\xef\xbf\xbd\"|");
	strbuf_release(&s);
	outbuf_release(&b);
}

Test(outbuf, invalid_bytes_and_nul_become_replacement)
{
	struct outbuf b;
	struct strbuf s = STRBUF_INIT;
	outbuf_init(&b, 1 << 20, 1 << 20);
	outbuf_output(&b, 2, "a\xff\0b", 4);
	take_all(&b, true, &s);
	cr_assert_str_eq(s.buf, "stderr:\"a\xef\xbf\xbd\xef\xbf\xbd"
				"b\"|");
	strbuf_release(&s);
	outbuf_release(&b);
}

Test(outbuf, stream_cap_then_one_marker_then_events_only)
{
	struct outbuf b;
	struct strbuf s = STRBUF_INIT;
	outbuf_init(&b, 10, 1 << 20);
	outbuf_output(&b, 1, "12345678", 8);
	outbuf_output(&b, 1, "90abc", 5);
	outbuf_output(&b, 2, "more", 4);
	outbuf_event(&b, "test", "{}");
	take_all(&b, true, &s);
	cr_assert_str_eq(s.buf,
			 "stdout:\"1234567890\"|truncated:{\"reason\":\"limit\",\"bytes\":10}|"
			 "test:{}|");
	/* the cap is over the whole stream, not per batch */
	outbuf_output(&b, 1, "x", 1);
	strbuf_reset(&s);
	take_all(&b, true, &s);
	cr_assert_str_eq(s.buf, "");
	/* a new stream starts afresh */
	outbuf_reset(&b);
	outbuf_output(&b, 1, "x", 1);
	strbuf_reset(&s);
	take_all(&b, true, &s);
	cr_assert_str_eq(s.buf, "stdout:\"x\"|");
	strbuf_release(&s);
	outbuf_release(&b);
}

Test(outbuf, backlog_drops_output_with_a_marker)
{
	struct outbuf b;
	struct strbuf s = STRBUF_INIT;
	outbuf_init(&b, 1 << 20, 8);
	outbuf_output(&b, 1, "1234", 4);
	outbuf_output(&b, 1, "56789", 5); /* would pass the backlog: what fits */
	outbuf_output(&b, 1, "x", 1);
	take_all(&b, true, &s);
	cr_assert_str_eq(s.buf,
			 "stdout:\"12345678\"|truncated:{\"reason\":\"backlog\",\"bytes\":8}|");
	strbuf_release(&s);
	outbuf_release(&b);
}

/* One burst larger than the backlog bound, nothing waiting: the stream keeps
 * the bound's worth, not nothing (a slow capture hands over 2 MiB at once) */
Test(outbuf, a_burst_over_the_backlog_keeps_what_fits)
{
	struct outbuf b;
	struct strbuf s = STRBUF_INIT;
	outbuf_init(&b, 1 << 20, 8);
	outbuf_output(&b, 1, "0123456789abcdef", 16);
	take_all(&b, true, &s);
	cr_assert_str_eq(s.buf,
			 "stdout:\"01234567\"|truncated:{\"reason\":\"backlog\",\"bytes\":8}|");
	strbuf_release(&s);
	outbuf_release(&b);
}

Test(outbuf, the_compilers_output_is_its_own_event)
{
	struct outbuf b;
	struct strbuf s = STRBUF_INIT;
	outbuf_init(&b, 1 << 20, 1 << 20);
	outbuf_output(&b, 3, "a.c:1: error\n", 13);
	outbuf_output(&b, 1, "x", 1);
	take_all(&b, true, &s);
	cr_assert_str_eq(s.buf, "compile:\"a.c:1: error\\n\"|stdout:\"x\"|");
	strbuf_release(&s);
	outbuf_release(&b);
}
