/* test_xalloc: the allocators copy and zero as their libc models do, and an
 * impossible size (or an overflowing product) aborts instead of returning NULL. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

/* Under AddressSanitizer an impossible size is an ASan report unless this is
 * set; with it malloc returns NULL as libc does and xalloc's own abort runs. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

Test(xalloc, copies_and_zeroes)
{
	char *s = xstrdup("hello");
	cr_assert_str_eq(s, "hello");
	free(s);
	s = xstrndup("hello", 3);
	cr_assert_str_eq(s, "hel");
	free(s);
	s = xstrndup("hi", 10);
	cr_assert_str_eq(s, "hi", "n past the end stops at the NUL");
	free(s);
	s = xasprintf("%s-%d", "run", 42);
	cr_assert_str_eq(s, "run-42");
	free(s);
	int *z = xcalloc(100, sizeof *z);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(z[i], 0);
	z = xreallocarray(z, 1000, sizeof *z);
	z[999] = 7;
	cr_assert_eq(z[0], 0, "realloc keeps the old bytes");
	free(z);
	void *zero = xmalloc(0);
	cr_assert_not_null(zero, "zero bytes is still a pointer to free");
	free(zero);
}

Test(xalloc, malloc_too_big_aborts, .signal = SIGABRT)
{
	volatile size_t huge = SIZE_MAX - 4096;
	void *p = xmalloc(huge);
	free(p);
}

Test(xalloc, calloc_overflow_aborts, .signal = SIGABRT)
{
	volatile size_t n = SIZE_MAX / 2;
	void *p = xcalloc(n, 4);
	free(p);
}

Test(xalloc, reallocarray_overflow_aborts, .signal = SIGABRT)
{
	volatile size_t n = SIZE_MAX / 8 + 1;
	void *p = xreallocarray(NULL, n, 8);
	free(p);
}

Test(xalloc, cjson_result_never_null)
{
	xalloc_init();
	cJSON *o = cJSON_CreateObject();
	cr_assert_not_null(cJSON_AddStringToObject(o, "status", "accepted"));
	char *text = cJSON_PrintUnformatted(o);
	cr_assert_str_eq(text, "{\"status\":\"accepted\"}");
	cJSON_free(text);
	cJSON_Delete(o);
}

/* Without xalloc_init, cJSON_malloc returns NULL here and the test fails. */
Test(xalloc, cjson_out_of_memory_aborts, .signal = SIGABRT)
{
	xalloc_init();
	volatile size_t huge = SIZE_MAX - 4096;
	void *p = cJSON_malloc(huge);
	cJSON_free(p);
}
