/* test_dynlib: libraries loaded on first use (common/dynlib.h), and the shims
 * built on it calling the real libpq, libcurl and libmicrohttpd. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <libpq-fe.h>
#include <microhttpd.h>

#include "common/dynlib.h"

static struct dynlib libm = DYNLIB_INIT("libm.so.6");

Test(dynlib, finds_a_function_once_loaded)
{
	double (*c)(double) = (double (*)(double))dynlib_sym(&libm, "cos");
	cr_assert_not_null(c);
	cr_assert_float_eq(c(0.0), 1.0, 1e-12);
	cr_assert_eq(dynlib_sym(&libm, "cos"), (void *)c, "the same address the second time");
	cr_assert_not_null(libm.handle);
}

Test(dynlib, missing_function_exits_1, .exit_code = 1)
{
	dynlib_sym(&libm, "no_such_function_here");
}

static struct dynlib nolib = DYNLIB_INIT("libno-such-library.so.9");

Test(dynlib, missing_library_exits_1, .exit_code = 1)
{
	dynlib_sym(&nolib, "f");
}

static enum MHD_Result no_answer(void *cls, struct MHD_Connection *conn, const char *url,
				 const char *method, const char *version, const char *data,
				 size_t *size, void **state)
{
	(void)cls, (void)conn, (void)url, (void)method, (void)version, (void)data, (void)size,
	    (void)state;
	return MHD_NO;
}

/* the shims reach the real libraries, variadic functions included */
Test(dynlib, shims_call_the_real_libraries)
{
	PGconn *conn = PQconnectdb("host=/nonexistent-socket-dir connect_timeout=1");
	cr_assert_not_null(conn);
	cr_assert_eq(PQstatus(conn), CONNECTION_BAD);
	cr_assert(strlen(PQerrorMessage(conn)) > 0);
	PQfinish(conn);

	cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
	CURL *c = curl_easy_init();
	cr_assert_not_null(c);
	cr_assert_eq(curl_easy_setopt(c, CURLOPT_URL, "file:///nonexistent-file"), CURLE_OK);
	cr_assert_eq(curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 1000L), CURLE_OK);
	cr_assert_eq(curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)1 << 20), CURLE_OK);
	cr_assert_neq(curl_easy_perform(c), CURLE_OK);
	long code = -1;
	cr_assert_eq(curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code), CURLE_OK);
	cr_assert_eq(code, 0);
	cr_assert_str_eq(curl_easy_strerror(CURLE_OK), "No error");
	curl_easy_cleanup(c);
	curl_global_cleanup();

	char s[] = "a%20b";
	cr_assert_eq(MHD_http_unescape(s), 3);
	cr_assert_str_eq(s, "a b");
	struct MHD_Daemon *d =
	    MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, no_answer, NULL,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)5, MHD_OPTION_END);
	cr_assert_not_null(d, "MHD_start_daemon with options through the va_list");
	MHD_stop_daemon(d);
}
