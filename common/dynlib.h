/* dynlib: shared libraries loaded on first use instead of at program start.
 *
 * `judge` uses libpq, libcurl, libmicrohttpd and libarchive, which pull in ~30 more
 * libraries (Kerberos, LDAP, TLS ...): loading and relocating them costs
 * ~4.5 ms of CPU at every process start (an empty program linked the same
 * way: 5.4 ms, without them 0.7 ms), which a one-shot `judge run` never uses.
 * So the binary does not link them: each function of theirs the code calls
 * is a shim (judge/store/pq_shim.c, judge/api/mhd_shim.c, runner/install/curl_shim.c,
 * common/archive_shim.c) that finds the real one through dynlib_sym the first
 * time it is called.
 * A call of a function without a shim fails to link: add a line to the shim.
 */
#pragma once
#include <pthread.h>

struct dynlib {
	const char *soname; /* e.g. "libpq.so.5" */
	pthread_mutex_t lock;
	void *handle;
};

#define DYNLIB_INIT(so)                                                                            \
	{                                                                                          \
		.soname = (so), .lock = PTHREAD_MUTEX_INITIALIZER                                  \
	}

/* The address of name in lib, which is loaded on the first call. A library
 * or function that is missing is an installation error: the process says so
 * on stderr and exits with status 1. Thread-safe. */
void *dynlib_sym(struct dynlib *lib, const char *name);

/* Defines the function name (returning ret; params: its parameter list in
 * parentheses, args: the names passed on, in parentheses) to call lib's
 * name, found once. DYNLIB_SHIM_VOID for one returning void. */
#define DYNLIB_FN(lib, name)                                                                       \
	static typeof(&name) fn_;                                                                  \
	typeof(&name) f_ = __atomic_load_n(&fn_, __ATOMIC_ACQUIRE);                                \
	if (!f_) {                                                                                 \
		f_ = (typeof(&name))dynlib_sym(&(lib), #name);                                     \
		__atomic_store_n(&fn_, f_, __ATOMIC_RELEASE);                                      \
	}
#define DYNLIB_SHIM(lib, ret, name, params, args)                                                  \
	ret name params                                                                            \
	{                                                                                          \
		DYNLIB_FN(lib, name)                                                               \
		return f_ args;                                                                    \
	}
#define DYNLIB_SHIM_VOID(lib, name, params, args)                                                  \
	void name params                                                                           \
	{                                                                                          \
		DYNLIB_FN(lib, name)                                                               \
		f_ args;                                                                           \
	}
