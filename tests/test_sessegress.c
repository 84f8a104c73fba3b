/* test_sessegress: the egress proxy's options (judge/service/session/sessegress.c):
 * judge.ini's egress_hosts map and egress_addr_allow as serve checks them at
 * start. The proxy itself runs on real traffic in
 * tests/integration/sessions_proxy.sh. */
#include <criterion/criterion.h>
#include <string.h>

#include "judge/service/session/sessegress.h"

static int check(const char *hosts, const char *addrs, char *err, size_t len)
{
	err[0] = 0;
	return sessegress_check_options(hosts, addrs, err, len);
}

Test(sessegress, options_taken)
{
	char err[256];
	cr_assert_eq(check("", "", err, sizeof err), 0);
	cr_assert_eq(check(NULL, NULL, err, sizeof err), 0);
	cr_assert_eq(check("api.test=127.0.0.2, Other.Test = 10.0.0.1 ,v6.test=fd00::1", NULL, err,
			   sizeof err),
		     0, "%s", err);
	cr_assert_eq(check(NULL, "127.0.0.2, ::1,10.1.2.3", err, sizeof err), 0, "%s", err);
}

Test(sessegress, options_refused)
{
	char err[256];
	static const char *const bad_hosts[] = {
	    "api.test",		  "api.test=",		"=127.0.0.1",
	    "api.test=localhost", "api.test=1.2.3.4.5", "a=1.1.1.1, b"};
	for (size_t i = 0; i < sizeof bad_hosts / sizeof bad_hosts[0]; i++) {
		cr_assert_eq(check(bad_hosts[i], NULL, err, sizeof err), -1, "%s", bad_hosts[i]);
		cr_assert(strstr(err, "egress_hosts: "), "%s: %s", bad_hosts[i], err);
	}
	cr_assert_eq(check(NULL, "127.0.0.2, example.org", err, sizeof err), -1);
	cr_assert_str_eq(err, "egress_addr_allow: 'example.org' is not an address");
	cr_assert_eq(check(NULL, "10.0.0.0/8", err, sizeof err), -1);
}
