/* node_zygote.c: the Node addon of languages/drivers/node_zygote.js: zcore's
 * loop, with what a forked node needs (docs/warm-start.md, "Node"): every
 * mapping copied on fork (V8 marks its heap MADV_DONTFORK), libuv's loop re-made
 * in the child, its end taken before node's own teardown (below). N-API is a C
 * ABI: its few calls are declared here. Built by languages/deps.sh. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runner/zygote/zcore.h" /* built from the tree's root: -I. */

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

/* The end of a forked node. Its own exit tears down the platform, whose threads
 * (the zygote's) a child does not have: the teardown aborts or hangs. So the
 * child ends before it: right after the 'exit' event (node_zygote.js calls
 * exit_event), except when the event comes from an uncaught error (fatal was
 * called first), which node reports after the event: then node's fwrite and
 * fputs are redirected (its GOT) and the child ends once the report's last line
 * ("Node.js v...") is out, with the code noted at the event. */
static int exit_code = 1;
static bool fatal_seen;

static void end_after(FILE *f, const void *text, size_t len)
{
	if (fatal_seen && len >= 9 && memmem(text, len, "Node.js v", 9)) {
		fflush(f);
		_exit(exit_code);
	}
}

static size_t z_fwrite(const void *b, size_t sz, size_t n, FILE *f)
{
	size_t r = fwrite(b, sz, n, f);
	end_after(f, b, sz * n);
	return r;
}

static int z_fputs(const char *s, FILE *f)
{
	int r = fputs(s, f);
	end_after(f, s, strlen(s));
	return r;
}

/* V8 marks each heap mapping it makes MADV_DONTFORK; in the zygote that
 * advice is dropped, so the mappings made before serve() are the only ones a
 * fork would lose (forkable, once) */
static int z_madvise(void *addr, size_t len, int advice)
{
	return advice == MADV_DONTFORK ? 0 : madvise(addr, len, advice);
}

/* One of node's imports sent elsewhere: its GOT slot for name holds to */
struct got_redirect {
	const char *name;
	void *to;
};

static const struct got_redirect in_zygote[] = {{"madvise", (void *)z_madvise}, {NULL, NULL}};
static const struct got_redirect in_child[] = {
    {"fwrite", (void *)z_fwrite}, {"fputs", (void *)z_fputs}, {NULL, NULL}};

/* Sends node's own calls (its GOT) of the functions in data (a got_redirect
 * list) to their replacements */
static int redirect(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const struct got_redirect *list = data;
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
		void *to = NULL;
		for (const struct got_redirect *r = list; r->name && !to; r++)
			if (!strcmp(name, r->name))
				to = r->to;
		if (!to)
			continue;
		void **slot = (void **)(info->dlpi_addr + rel[i].r_offset);
		uintptr_t page = (uintptr_t)slot & ~(uintptr_t)4095;
		if (mprotect((void *)page, 4096, PROT_READ | PROT_WRITE) == 0)
			*slot = to;
	}
	return 1;
}

/* Every mapping copied on fork, before the zygote's first one: under gVisor
 * (ptrace) a pass over node's ~100 mappings costs ~3 ms, so not every fork
 * (z_madvise keeps later mappings forkable) */
static void forkable(void)
{
	static bool done;
	if (done)
		return;
	done = true;
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
	/* argv[0] (the runtime) and the last argument (the script node will run as
	 * the main module once the preload returns) of the zygote's command line */
	static char cmd[8192];
	FILE *f = fopen("/proc/self/cmdline", "r");
	size_t n = f ? fread(cmd, 1, sizeof cmd - 1, f) : 0;
	if (f)
		fclose(f);
	cmd[n] = 0;
	const char *script = NULL;
	for (size_t i = 0; i + 1 < n; i++)
		if (!cmd[i])
			script = cmd + i + 1;
	struct zc_child c;
	dl_iterate_phdr(redirect, (void *)in_zygote);
	if (!script || zc_serve(cmd, script, forkable, &c) < 0)
		_exit(1);
	uv_loop_fork(uv_default_loop());
	dl_iterate_phdr(redirect, (void *)in_child);
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

static napi_value fatal(napi_env env, napi_callback_info info)
{
	(void)info;
	fatal_seen = true;
	napi_value u;
	napi_get_undefined(env, &u);
	return u;
}

/* exitEvent(code): the 'exit' event is over; the child ends now, or once the
 * report of its uncaught error is out */
static napi_value exit_event(napi_env env, napi_callback_info info)
{
	exit_code = int_arg(env, info) & 0xff;
	if (!fatal_seen)
		_exit(exit_code);
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
	} fns[] = {{"serve", serve},
		   {"fatal", fatal},
		   {"exitEvent", exit_event},
		   {"closeFd", close_fd},
		   {"pid", pid}};
	for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
		napi_value f;
		napi_create_function(env, fns[i].name, strlen(fns[i].name), fns[i].fn, NULL, &f);
		napi_set_named_property(env, exports, fns[i].name, f);
	}
	return exports;
}
