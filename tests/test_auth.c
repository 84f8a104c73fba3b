/* test_auth: SHA-256 vectors, constant-time compare, loopback detection, admission. */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "judge/service/auth.h"

static void hexs(const unsigned char *d, char *out)
{
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

Test(auth, sha256_vectors)
{
	struct {
		const char *in;
		const char *hex;
	} v[] = {
	    {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	    {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		unsigned char d[32];
		char h[65];
		auth_sha256(v[i].in, strlen(v[i].in), d);
		hexs(d, h);
		cr_expect_str_eq(h, v[i].hex, "sha256(%s)", v[i].in);
	}
	/* a million 'a' crosses many blocks */
	static char m[1000000];
	memset(m, 'a', sizeof m);
	unsigned char d[32];
	char h[65];
	auth_sha256(m, sizeof m, d);
	hexs(d, h);
	cr_expect_str_eq(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	/* lengths around the padding boundary */
	for (size_t n = 54; n <= 66; n++) {
		auth_sha256(m, n, d);
		cr_expect(d[0] || d[1] || d[2]);
	}
}

Test(auth, ct_equal)
{
	cr_expect(auth_ct_equal("abcd", "abcd", 4));
	cr_expect(!auth_ct_equal("abcd", "abce", 4));
	cr_expect(auth_ct_equal("", "x", 0));
}

Test(auth, loopback)
{
	cr_expect(auth_listen_is_loopback("127.0.0.1:8080"));
	cr_expect(auth_listen_is_loopback("127.5.0.1:1"));
	cr_expect(auth_listen_is_loopback("localhost:80"));
	cr_expect(auth_listen_is_loopback("[::1]:8080"));
	cr_expect(!auth_listen_is_loopback("0.0.0.0:8080"));
	cr_expect(!auth_listen_is_loopback(":8080"));
	cr_expect(!auth_listen_is_loopback("[::]:8080"));
	cr_expect(!auth_listen_is_loopback("10.0.0.1:8080"));
	cr_expect(!auth_listen_is_loopback("example.com:80"));
}

Test(auth, admission)
{
	/* 600/min = 10/s, burst 60; in-flight cap 3 */
	struct auth *a = auth_new(NULL, 600, 3);
	int retry = 0;
	cr_assert_eq(auth_admit(a, 1, &retry), 0);
	cr_assert_eq(auth_admit(a, 1, &retry), 0);
	cr_assert_eq(auth_admit(a, 1, &retry), 0);
	cr_expect_eq(auth_admit(a, 1, &retry), -1, "in-flight cap");
	cr_expect_eq(retry, 1);
	cr_expect_eq(auth_admit(a, 2, &retry), 0, "other keys are not affected");
	auth_done(a, 1);
	cr_expect_eq(auth_admit(a, 1, &retry), 0);
	for (int i = 0; i < 4; i++)
		auth_done(a, 1);
	/* drain the burst */
	int ok = 0;
	for (int i = 0; i < 200; i++) {
		if (auth_admit(a, 3, &retry) == 0) {
			ok++;
			auth_done(a, 3);
		}
	}
	cr_expect(ok >= 60 && ok <= 62, "burst admitted %d", ok);
	cr_expect(retry >= 1);
	usleep(250000); /* ~2.5 tokens */
	cr_expect_eq(auth_admit(a, 3, &retry), 0);
	auth_free(a);
}
