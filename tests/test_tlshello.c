/* test_tlshello: the server name of a TLS ClientHello (common/tlshello.c),
 * on hellos built here field by field and on a real one from Python's ssl
 * (OpenSSL), whole, cut short, split over records and damaged. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/tlshello.h"

struct bytes {
	uint8_t b[70000];
	size_t n;
};

static void put(struct bytes *x, unsigned v, int width)
{
	for (int i = width - 1; i >= 0; i--)
		x->b[x->n++] = (uint8_t)(v >> (8 * i));
}

static void put_raw(struct bytes *x, const void *p, size_t n)
{
	memcpy(x->b + x->n, p, n);
	x->n += n;
}

/* A server_name extension (type 0) with the given entries, each "T:name"
 * where T is the name type's digit. */
static void sni_ext(struct bytes *x, const char *const *entries, int n)
{
	struct bytes list = {.n = 0};
	for (int i = 0; i < n; i++) {
		put(&list, (unsigned)(entries[i][0] - '0'), 1);
		put(&list, (unsigned)strlen(entries[i] + 2), 2);
		put_raw(&list, entries[i] + 2, strlen(entries[i] + 2));
	}
	put(x, 0, 2);
	put(x, (unsigned)list.n + 2, 2);
	put(x, (unsigned)list.n, 2);
	put_raw(x, list.b, list.n);
}

/* A ClientHello's record(s): the body with the given extensions block
 * (NULL: none at all), in records of at most frag bytes. */
static void hello(struct bytes *out, const struct bytes *exts, size_t frag)
{
	struct bytes body = {.n = 0};
	put(&body, 0x0303, 2);
	for (int i = 0; i < 32; i++)
		put(&body, (unsigned)i, 1);
	put(&body, 0, 1);						/* session id */
	put(&body, 4, 2), put(&body, 0x1301, 2), put(&body, 0x00ff, 2); /* suites */
	put(&body, 1, 1), put(&body, 0, 1);				/* compression */
	if (exts) {
		put(&body, (unsigned)exts->n, 2);
		put_raw(&body, exts->b, exts->n);
	}
	struct bytes msg = {.n = 0};
	put(&msg, 1, 1);
	put(&msg, (unsigned)body.n, 3);
	put_raw(&msg, body.b, body.n);
	out->n = 0;
	for (size_t at = 0; at < msg.n; at += frag) {
		size_t k = msg.n - at < frag ? msg.n - at : frag;
		put(out, 22, 1), put(out, 0x0301, 2), put(out, (unsigned)k, 2);
		put_raw(out, msg.b + at, k);
	}
}

static enum tlshello read_name(const struct bytes *x, char *name)
{
	return tlshello_server_name(x->b, x->n, name);
}

Test(tlshello, a_built_hello_names_its_host_lower_cased_without_the_dot)
{
	static struct bytes exts, rec;
	const char *e[] = {"0:Api.Example.ORG."};
	put(&exts, 0x000a, 2), put(&exts, 2, 2), put(&exts, 0x001d, 2); /* groups first */
	sni_ext(&exts, e, 1);
	hello(&rec, &exts, 16384);
	char name[TLSHELLO_NAME_MAX];
	cr_assert_eq(read_name(&rec, name), TLSHELLO_NAME);
	cr_assert_str_eq(name, "api.example.org");
}

Test(tlshello, every_prefix_asks_for_more_and_records_of_seven_bytes_still_read)
{
	static struct bytes exts, rec;
	const char *e[] = {"0:a.test"};
	sni_ext(&exts, e, 1);
	hello(&rec, &exts, 7);
	char name[TLSHELLO_NAME_MAX];
	for (size_t n = 0; n < rec.n; n++)
		cr_assert_eq(tlshello_server_name(rec.b, n, name), TLSHELLO_MORE, "prefix %zu", n);
	cr_assert_eq(read_name(&rec, name), TLSHELLO_NAME);
	cr_assert_str_eq(name, "a.test");
}

Test(tlshello, no_extensions_or_no_server_name_is_no_name)
{
	static struct bytes exts, rec;
	char name[TLSHELLO_NAME_MAX];
	hello(&rec, NULL, 16384);
	cr_assert_eq(read_name(&rec, name), TLSHELLO_NO_NAME);
	put(&exts, 0x000a, 2), put(&exts, 2, 2), put(&exts, 0x001d, 2);
	hello(&rec, &exts, 16384);
	cr_assert_eq(read_name(&rec, name), TLSHELLO_NO_NAME);
	cr_assert_str_eq(name, "");
	/* a name of another type than host_name is no host name */
	exts.n = 0;
	const char *e[] = {"7:other"};
	sni_ext(&exts, e, 1);
	hello(&rec, &exts, 16384);
	cr_assert_eq(read_name(&rec, name), TLSHELLO_NO_NAME);
}

Test(tlshello, two_host_names_or_two_extensions_are_malformed)
{
	static struct bytes exts, rec;
	char name[TLSHELLO_NAME_MAX];
	const char *two[] = {"0:allowed.test", "0:evil.test"};
	sni_ext(&exts, two, 2);
	hello(&rec, &exts, 16384);
	cr_assert_eq(read_name(&rec, name), TLSHELLO_MALFORMED);
	exts.n = 0;
	const char *a[] = {"0:allowed.test"}, *b[] = {"0:evil.test"};
	sni_ext(&exts, a, 1);
	sni_ext(&exts, b, 1);
	hello(&rec, &exts, 16384);
	cr_assert_eq(read_name(&rec, name), TLSHELLO_MALFORMED);
	cr_assert_str_eq(name, "");
}

Test(tlshello, names_with_other_bytes_are_malformed)
{
	static struct bytes exts, rec;
	char name[TLSHELLO_NAME_MAX];
	const char *bad[] = {"0:a b.test", "0:a\xc3\xa9.test", "0:.", "0:a.test/x"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		exts.n = 0;
		sni_ext(&exts, &bad[i], 1);
		hello(&rec, &exts, 16384);
		cr_assert_eq(read_name(&rec, name), TLSHELLO_MALFORMED, "%s", bad[i]);
	}
	/* a NUL inside the name */
	exts.n = 0;
	put(&exts, 0, 2), put(&exts, 10, 2), put(&exts, 8, 2), put(&exts, 0, 1), put(&exts, 5, 2);
	put_raw(&exts, "a\0.xy", 5);
	hello(&rec, &exts, 16384);
	cr_assert_eq(read_name(&rec, name), TLSHELLO_MALFORMED);
}

Test(tlshello, other_protocols_are_not_tls)
{
	char name[TLSHELLO_NAME_MAX];
	const char *plain[] = {"GET / HTTP/1.1\r\n", "SSH-2.0-x\r\n", "\x16\x02"};
	for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
		cr_assert_eq(
		    tlshello_server_name((const uint8_t *)plain[i], strlen(plain[i]), name),
		    TLSHELLO_NOT_TLS, "%s", plain[i]);
	cr_assert_eq(tlshello_server_name((const uint8_t *)"", 0, name), TLSHELLO_MORE);
}

Test(tlshello, broken_records_and_messages_are_malformed)
{
	static struct bytes exts, rec;
	char name[TLSHELLO_NAME_MAX];
	const char *e[] = {"0:a.test"};
	sni_ext(&exts, e, 1);
	hello(&rec, &exts, 16384);
	/* a record of length 0, and one over 2^14 */
	uint8_t r0[] = {22, 3, 1, 0, 0, 1};
	cr_assert_eq(tlshello_server_name(r0, sizeof r0, name), TLSHELLO_MALFORMED);
	uint8_t big[] = {22, 3, 1, 0x40, 0x01};
	cr_assert_eq(tlshello_server_name(big, sizeof big, name), TLSHELLO_MALFORMED);
	/* a handshake that is no ClientHello (a ServerHello) */
	struct bytes x = rec;
	x.b[5] = 2;
	cr_assert_eq(read_name(&x, name), TLSHELLO_MALFORMED);
	/* a ClientHello that claims more than the cap */
	x = rec;
	x.b[6] = 0x7f;
	cr_assert_eq(read_name(&x, name), TLSHELLO_MALFORMED);
	/* a second record of another type inside the hello */
	static struct bytes split;
	hello(&split, &exts, 20);
	split.b[25] = 23;
	cr_assert_eq(read_name(&split, name), TLSHELLO_MALFORMED);
	/* an extensions length one past the end, and one short */
	x = rec;
	size_t el = 5 + 4 + 2 + 32 + 1 + 6 + 2;
	x.b[el + 1]++;
	cr_assert_eq(read_name(&x, name), TLSHELLO_MALFORMED);
	x = rec;
	x.b[el + 1]--;
	cr_assert_eq(read_name(&x, name), TLSHELLO_MALFORMED);
}

Test(tlshello, every_single_byte_change_reads_without_overrun)
{
	static struct bytes exts, rec, x;
	char name[TLSHELLO_NAME_MAX];
	const char *e[] = {"0:flip.test"};
	sni_ext(&exts, e, 1);
	hello(&rec, &exts, 40);
	for (size_t i = 0; i < rec.n; i++)
		for (int v = 0; v < 256; v += 17) {
			x = rec;
			x.b[i] = (uint8_t)v;
			enum tlshello r = read_name(&x, name);
			cr_assert(r != TLSHELLO_NAME || strlen(name) < TLSHELLO_NAME_MAX);
		}
}

/* A real ClientHello: OpenSSL's, through Python's ssl with a memory BIO. */
static size_t real_hello(const char *host, uint8_t *out, size_t cap)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd,
		 "python3 -c 'import ssl, sys\n"
		 "c = ssl.create_default_context()\n"
		 "i, o = ssl.MemoryBIO(), ssl.MemoryBIO()\n"
		 "s = c.wrap_bio(i, o, server_hostname=sys.argv[1])\n"
		 "try:\n    s.do_handshake()\nexcept ssl.SSLWantReadError:\n    pass\n"
		 "sys.stdout.buffer.write(o.read())' %s",
		 host);
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	size_t n = fread(out, 1, cap, p);
	cr_assert_eq(pclose(p), 0);
	return n;
}

Test(tlshello, a_real_openssl_hello)
{
	static uint8_t b[8192];
	char name[TLSHELLO_NAME_MAX];
	size_t n = real_hello("Files.Example.COM", b, sizeof b);
	cr_assert_gt(n, 100);
	cr_assert_eq(tlshello_server_name(b, n, name), TLSHELLO_NAME);
	cr_assert_str_eq(name, "files.example.com");
	for (size_t k = 0; k < n; k += 13)
		cr_assert_eq(tlshello_server_name(b, k, name), TLSHELLO_MORE, "prefix %zu", k);
	/* an address as server_hostname: OpenSSL sends no SNI */
	n = real_hello("127.0.0.2", b, sizeof b);
	cr_assert_eq(tlshello_server_name(b, n, name), TLSHELLO_NO_NAME);
}
