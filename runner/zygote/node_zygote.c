/* node_zygote.c: the Node addon of languages/drivers/node_zygote.js: zcore's
 * loop, with what a forked node needs (docs/warm-start.md, "Node"): every
 * mapping copied on fork (V8 marks its heap MADV_DONTFORK), libuv's loop re-made
 * in the child. N-API is a C ABI: its few calls are declared here.
 * WORK IN PROGRESS (branch node-zygote). */
#define _GNU_SOURCE
#include <elf.h>
#include <execinfo.h>
#include <signal.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runner/zygote/zcore.h"

typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;
typedef struct napi_callback_info__ *napi_callback_info;
typedef napi_value (*napi_callback)(napi_env, napi_callback_info);
int napi_create_function(napi_env, const char *, size_t, napi_callback, void *, napi_value *);
int napi_set_named_property(napi_env, napi_value, const char *, napi_value);
int napi_create_int32(napi_env, int, napi_value *);
int napi_get_value_int32(napi_env, napi_value, int *);
int napi_create_string_utf8(napi_env, const char *, size_t, napi_value *);
int napi_create_array_with_length(napi_env, size_t, napi_value *);
int napi_set_element(napi_env, napi_value, unsigned, napi_value);
int napi_create_object(napi_env, napi_value *);
int napi_get_cb_info(napi_env, napi_callback_info, size_t *, napi_value *, napi_value *, void **);
int napi_get_undefined(napi_env, napi_value *);
void *uv_default_loop(void);
int uv_loop_fork(void *loop);

/* The platform's threads of the zygote do not exist in a child, and node's exit
 * joins them (NodePlatform::Shutdown: SIGSEGV on their stale handles). In the
 * child, node's pthread_create and pthread_join are redirected (its GOT): the
 * first join of a thread the child did not create is node's teardown, after
 * the 'exit' event and the report of an uncaught error: the child ends there,
 * with the code node_zygote.js noted at that event (SIGABRT when none was). */
static int exit_code = -1;
static pthread_t made[256];
static int nmade;
static pthread_mutex_t made_lock = PTHREAD_MUTEX_INITIALIZER;

static int child_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	int rc = pthread_create(t, a, fn, arg);
	pthread_mutex_lock(&made_lock);
	if (rc == 0 && nmade < (int)(sizeof made / sizeof *made))
		made[nmade++] = *t;
	pthread_mutex_unlock(&made_lock);
	return rc;
}

static int child_join(pthread_t t, void **ret)
{
	bool mine = false;
	pthread_mutex_lock(&made_lock);
	for (int i = 0; i < nmade; i++)
		mine = mine || pthread_equal(made[i], t);
	pthread_mutex_unlock(&made_lock);
	if (mine)
		return pthread_join(t, ret);
	if (exit_code < 0) {
		dprintf(2, "node_zygote: stale join before any exit event\n");
		abort();
	}
	_exit(exit_code);
}

static int redirect(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size, (void)data;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0; /* the executable only */
	const ElfW(Dyn) *dyn = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	const ElfW(Rela) *rel = NULL;
	const ElfW(Sym) *sym = NULL;
	const char *str = NULL;
	size_t relsz = 0;
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_JMPREL)
			rel = (const ElfW(Rela) *)dyn->d_un.d_ptr;
		else if (dyn->d_tag == DT_PLTRELSZ)
			relsz = dyn->d_un.d_val;
		else if (dyn->d_tag == DT_SYMTAB)
			sym = (const ElfW(Sym) *)dyn->d_un.d_ptr;
		else if (dyn->d_tag == DT_STRTAB)
			str = (const char *)dyn->d_un.d_ptr;
	}
	if (!rel || !sym || !str)
		return 1;
	for (size_t i = 0; i < relsz / sizeof *rel; i++) {
		const char *name = str + sym[ELF64_R_SYM(rel[i].r_info)].st_name;
		void *to = !strcmp(name, "pthread_join")     ? (void *)child_join
			   : !strcmp(name, "pthread_create") ? (void *)child_create
							     : NULL;
		if (!to)
			continue;
		void **slot = (void **)(info->dlpi_addr + rel[i].r_offset);
		uintptr_t page = (uintptr_t)slot & ~(uintptr_t)4095;
		if (mprotect((void *)page, 4096, PROT_READ | PROT_WRITE) == 0) {
			*slot = to;
			mprotect((void *)page, 4096, PROT_READ);
		}
	}
	return 1;
}

static void on_abort(int sig)
{
	void *bt[64];
	int n = backtrace(bt, 64);
	dprintf(2, "DEBUG signal %d\n", sig);
	backtrace_symbols_fd(bt, n, 2);
	_exit(99);
}

static void forkable(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			madvise((void *)lo, hi - lo, MADV_DOFORK);
	}
	fclose(f);
}

/* serve(): returns {argv, errfd} in a child only */
static napi_value serve(napi_env env, napi_callback_info info)
{
	(void)info;
	char exe[4096];
	FILE *f = fopen("/proc/self/cmdline", "r");
	size_t n = f ? fread(exe, 1, sizeof exe - 1, f) : 0;
	if (f)
		fclose(f);
	exe[n] = 0;
	struct zc_child c;
	if (zc_serve(exe, forkable, &c) < 0)
		_exit(1);
	uv_loop_fork(uv_default_loop());
	dl_iterate_phdr(redirect, NULL);
	signal(SIGABRT, on_abort);
	napi_value o, a, s, e;
	napi_create_object(env, &o);
	size_t argc = 0;
	while (c.argv[argc])
		argc++;
	napi_create_array_with_length(env, argc, &a);
	for (size_t i = 0; i < argc; i++) {
		napi_create_string_utf8(env, c.argv[i], strlen(c.argv[i]), &s);
		napi_set_element(env, a, (unsigned)i, s);
	}
	napi_set_named_property(env, o, "argv", a);
	napi_create_int32(env, c.errfd, &e);
	napi_set_named_property(env, o, "errfd", e);
	return o;
}

static int int_arg(napi_env env, napi_callback_info info)
{
	size_t argc = 1;
	napi_value v;
	int x = 0;
	napi_get_cb_info(env, info, &argc, &v, NULL, NULL);
	if (argc > 0)
		napi_get_value_int32(env, v, &x);
	return x;
}

static napi_value set_code(napi_env env, napi_callback_info info)
{
	exit_code = int_arg(env, info) & 0xff;
	napi_value u;
	napi_get_undefined(env, &u);
	return u;
}

static napi_value pid(napi_env env, napi_callback_info info)
{
	(void)info;
	napi_value v;
	napi_create_int32(env, (int)getpid(), &v);
	return v;
}

static napi_value close_fd(napi_env env, napi_callback_info info)
{
	int fd = int_arg(env, info);
	if (fd >= 0)
		close(fd);
	napi_value u;
	napi_get_undefined(env, &u);
	return u;
}

napi_value napi_register_module_v1(napi_env env, napi_value exports)
{
	static const struct {
		const char *name;
		napi_callback fn;
	} fns[] = {{"serve", serve}, {"setCode", set_code}, {"closeFd", close_fd}, {"pid", pid}};
	for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
		napi_value f;
		napi_create_function(env, fns[i].name, strlen(fns[i].name), fns[i].fn, NULL, &f);
		napi_set_named_property(env, exports, fns[i].name, f);
	}
	return exports;
}
