/* test_sha256: FIPS 180-4's vectors, streamed at every split, and a large
 * random buffer against sha256sum(1): the same digests whether the CPU's SHA
 * extensions do the work or the portable loop does. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sha256.h"

static void hex_of(const void *data, size_t len, char hex[65])
{
	unsigned char d[32];
	sha256_buf(data, len, d);
	sha256_hex(d, hex);
}

Test(sha256, known_vectors)
{
	char hex[65];
	hex_of("", 0, hex);
	cr_expect_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	hex_of("abc", 3, hex);
	cr_expect_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	hex_of(two, strlen(two), hex);
	cr_expect_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	size_t n = 1000000;
	char *a = malloc(n);
	memset(a, 'a', n);
	hex_of(a, n, hex);
	cr_expect_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
	cr_log_info("accelerated: %d", sha256_accelerated());
}

Test(sha256, streamed_at_every_split)
{
	unsigned char buf[300];
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	char whole[65];
	hex_of(buf, sizeof buf, whole);
	for (size_t cut = 0; cut <= sizeof buf; cut++) {
		struct sha256 s;
		unsigned char d[32];
		char hex[65];
		sha256_init(&s);
		sha256_update(&s, buf, cut);
		sha256_update(&s, buf + cut, sizeof buf - cut);
		sha256_final(&s, d);
		sha256_hex(d, hex);
		cr_assert_str_eq(hex, whole, "split at %zu", cut);
	}
}

Test(sha256, large_buffer_as_sha256sum)
{
	size_t n = (3 << 20) + 17;
	unsigned char *b = malloc(n);
	srand(26);
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)rand();
	char path[] = "/tmp/test_sha256_XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, b, n), (ssize_t)n);
	close(fd);
	char cmd[128], want[65] = "", hex[65];
	snprintf(cmd, sizeof cmd, "sha256sum %s", path);
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	cr_assert_eq(fscanf(p, "%64s", want), 1);
	pclose(p);
	unlink(path);
	hex_of(b, n, hex);
	cr_expect_str_eq(hex, want);
	free(b);
}
