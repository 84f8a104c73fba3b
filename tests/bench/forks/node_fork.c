/* node_fork.c: a Node addon for tests/bench/forks.sh only, the measurement behind
 * docs/warm-start.md's "Node": fork() from a started node, the child made able to
 * run (V8's heap pages are MADV_DONTFORK: without MADV_DOFORK the child has no
 * heap and dies at its first JS; libuv's loop re-made), wait4 with the child's
 * CPU, and _exit (node's own exit joins the platform's threads, which a forked
 * child does not have). N-API is a C ABI: the few calls are declared here, so
 * that no node headers are needed. Not used by the judge. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;
typedef struct napi_callback_info__ *napi_callback_info;
typedef napi_value (*napi_callback)(napi_env, napi_callback_info);
int napi_create_function(napi_env, const char *, size_t, napi_callback, void *, napi_value *);
int napi_set_named_property(napi_env, napi_value, const char *, napi_value);
int napi_create_int32(napi_env, int, napi_value *);
int napi_create_double(napi_env, double, napi_value *);
int napi_get_value_int32(napi_env, napi_value, int *);
int napi_get_cb_info(napi_env, napi_callback_info, size_t *, napi_value *, napi_value *, void **);
void *uv_default_loop(void);
int uv_loop_fork(void *loop);

/* Every mapping copied on fork again. V8 marks its heap pages MADV_DONTFORK
 * (smaps' VmFlags "dc"); gVisor's smaps does not show that flag, so every
 * mapping is advised (those that cannot be, such as [vvar], refuse: no harm). */
static void heap_forkable(void)
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

static napi_value fork_child(napi_env env, napi_callback_info info)
{
	(void)info;
	heap_forkable();
	pid_t pid = fork();
	if (pid == 0)
		uv_loop_fork(uv_default_loop());
	napi_value r;
	napi_create_int32(env, pid, &r);
	return r;
}

/* wait4(pid): the child's CPU in ms, or -1 when it did not exit 0 */
static napi_value wait_child(napi_env env, napi_callback_info info)
{
	size_t argc = 1;
	napi_value arg, r;
	int pid, st = 0;
	struct rusage ru;
	napi_get_cb_info(env, info, &argc, &arg, NULL, NULL);
	napi_get_value_int32(env, arg, &pid);
	if (wait4(pid, &st, 0, &ru) < 0 || st != 0)
		fprintf(stderr, "child %d: wait status %#x\n", pid, st);
	double ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	napi_create_double(env, st == 0 ? ms : -1, &r);
	return r;
}

static napi_value exit_now(napi_env env, napi_callback_info info)
{
	size_t argc = 1;
	napi_value arg;
	int code = 0;
	napi_get_cb_info(env, info, &argc, &arg, NULL, NULL);
	if (argc > 0)
		napi_get_value_int32(env, arg, &code);
	_exit(code);
}

napi_value napi_register_module_v1(napi_env env, napi_value exports)
{
	static const struct {
		const char *name;
		napi_callback fn;
	} fns[] = {{"fork", fork_child}, {"wait", wait_child}, {"exit", exit_now}};
	for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
		napi_value f;
		napi_create_function(env, fns[i].name, strlen(fns[i].name), fns[i].fn, NULL, &f);
		napi_set_named_property(env, exports, fns[i].name, f);
	}
	return exports;
}
