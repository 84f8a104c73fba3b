/* curl_shim: libcurl, loaded when a transfer is first made (common/dynlib.h). */
#include <stdarg.h>

/* the real prototypes, not curl's type-checking macros */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

#include "common/dynlib.h"

static struct dynlib curl = DYNLIB_INIT("libcurl.so.4");

DYNLIB_SHIM_VOID(curl, curl_easy_cleanup, (CURL * c), (c))
DYNLIB_SHIM(curl, CURL *, curl_easy_init, (void), ())
DYNLIB_SHIM(curl, CURLcode, curl_easy_perform, (CURL * c), (c))
DYNLIB_SHIM_VOID(curl, curl_easy_reset, (CURL * c), (c))
DYNLIB_SHIM(curl, const char *, curl_easy_strerror, (CURLcode code), (code))
DYNLIB_SHIM_VOID(curl, curl_free, (void *p), (p))
DYNLIB_SHIM_VOID(curl, curl_global_cleanup, (void), ())
DYNLIB_SHIM(curl, CURLcode, curl_global_init, (long flags), (flags))
DYNLIB_SHIM(curl, struct curl_slist *, curl_slist_append,
	    (struct curl_slist * list, const char *data), (list, data))
DYNLIB_SHIM_VOID(curl, curl_slist_free_all, (struct curl_slist * list), (list))
DYNLIB_SHIM(curl, CURLU *, curl_url, (void), ())
DYNLIB_SHIM_VOID(curl, curl_url_cleanup, (CURLU * handle), (handle))
DYNLIB_SHIM(curl, CURLUcode, curl_url_get,
	    (CURLU * handle, CURLUPart what, char **part, unsigned int flags),
	    (handle, what, part, flags))
DYNLIB_SHIM(curl, CURLUcode, curl_url_set,
	    (CURLU * handle, CURLUPart what, const char *part, unsigned int flags),
	    (handle, what, part, flags))

/* The variadic two take one argument after the option; its type comes from
 * the option's number (curl.h's CURLOPTTYPE_* and CURLINFO_* ranges). */
CURLcode curl_easy_setopt(CURL *c, CURLoption option, ...)
{
	static typeof(&curl_easy_setopt) fn;
	typeof(&curl_easy_setopt) f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);
	if (!f) {
		f = (typeof(&curl_easy_setopt))dynlib_sym(&curl, "curl_easy_setopt");
		__atomic_store_n(&fn, f, __ATOMIC_RELEASE);
	}
	va_list ap;
	va_start(ap, option);
	CURLcode rc;
	if (option < CURLOPTTYPE_OBJECTPOINT)
		rc = f(c, option, va_arg(ap, long));
	else if (option < CURLOPTTYPE_FUNCTIONPOINT)
		rc = f(c, option, va_arg(ap, void *));
	else if (option < CURLOPTTYPE_OFF_T)
		rc = f(c, option, va_arg(ap, void (*)(void)));
	else if (option < CURLOPTTYPE_BLOB)
		rc = f(c, option, va_arg(ap, curl_off_t));
	else
		rc = f(c, option, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

CURLcode curl_easy_getinfo(CURL *c, CURLINFO info, ...)
{
	static typeof(&curl_easy_getinfo) fn;
	typeof(&curl_easy_getinfo) f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);
	if (!f) {
		f = (typeof(&curl_easy_getinfo))dynlib_sym(&curl, "curl_easy_getinfo");
		__atomic_store_n(&fn, f, __ATOMIC_RELEASE);
	}
	va_list ap;
	va_start(ap, info);
	void *out = va_arg(ap, void *); /* always a pointer to the answer */
	va_end(ap);
	return f(c, info, out);
}
