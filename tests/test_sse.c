/* test_sse: the Server-Sent Events wire format: multi-line data, every kind of
 * line end, empty data, Last-Event-ID parsing. */
#include <criterion/criterion.h>

#include "judge/api/sse.h"

static void enc(const char *event, long long id, const char *data, const char *want)
{
	struct strbuf sb = STRBUF_INIT;
	sse_encode(&sb, id, event, data);
	cr_assert_str_eq(sb.buf, want);
	strbuf_release(&sb);
}

Test(sse, one_line)
{
	enc("stdout", 7, "\"hi\\n\"", "id: 7\nevent: stdout\ndata: \"hi\\n\"\n\n");
}

Test(sse, every_line_end_splits_into_data_lines)
{
	/* a client joins data lines with \n: LF, CRLF and CR all come back as \n */
	enc("x", 1, "a\nb\r\nc\rd", "id: 1\nevent: x\ndata: a\ndata: b\ndata: c\ndata: d\n\n");
	/* a final line end is an empty last line, so it survives the trip */
	enc("x", 2, "a\n", "id: 2\nevent: x\ndata: a\ndata: \n\n");
	enc("x", 3, "\n\n", "id: 3\nevent: x\ndata: \ndata: \ndata: \n\n");
}

Test(sse, empty_data_no_id_no_event)
{
	enc(NULL, 0, "", "data: \n\n");
	enc(NULL, -5, NULL, "data: \n\n");
	enc("done", 0, "{}", "event: done\ndata: {}\n\n");
}

Test(sse, bytes_that_are_not_line_ends_pass_as_they_are)
{
	/* JSON data never holds raw control bytes, but the encoding does not care */
	enc("x", 9, "\t\x01\xc3\xa9\xff:", "id: 9\nevent: x\ndata: \t\x01\xc3\xa9\xff:\n\n");
}

Test(sse, last_event_id)
{
	cr_assert_eq(sse_last_event_id(NULL), 0);
	cr_assert_eq(sse_last_event_id(""), 0);
	cr_assert_eq(sse_last_event_id("42"), 42);
	cr_assert_eq(sse_last_event_id("9223372036854775"), 9223372036854775LL);
	cr_assert_eq(sse_last_event_id("-1"), -1);
	cr_assert_eq(sse_last_event_id(" 4"), -1);
	cr_assert_eq(sse_last_event_id("4x"), -1);
	cr_assert_eq(sse_last_event_id("1234567890123456789012"), -1);
}
