/* sessweak: stand-ins, until the runner's session, file and install calls are
 * merged (branch sess-runner), so the judge links meanwhile.
 * Each is weak: the runner's real definition replaces it at link time. They
 * fail cleanly ("not built"), so a session cannot start without the runner.
 * Delete this file once runner/session.c and the file calls are in. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runner/session.h"

#define WEAK	  __attribute__((weak))
#define NOT_BUILT "this judge was built without the runner's session support"

WEAK int session_start(struct sandbox *sb, const struct session_spec *spec, struct session **out,
		       char *err, size_t errlen)
{
	(void)sb, (void)spec, (void)out;
	snprintf(err, errlen, NOT_BUILT);
	return -1;
}

WEAK int session_exec(struct session *s, const struct cell_spec *cell, struct cell_result *res)
{
	(void)s, (void)cell;
	res->status = RUN_INTERNAL_ERROR;
	snprintf(res->message, sizeof res->message, NOT_BUILT);
	return 0;
}

WEAK long session_memory_kb(struct session *s)
{
	(void)s;
	return -1;
}

WEAK void session_stop(struct session *s)
{
	(void)s;
}

WEAK void cell_result_init(struct cell_result *res)
{
	memset(res, 0, sizeof *res);
	strbuf_init(&res->out);
	strbuf_init(&res->err);
	strbuf_init(&res->reply);
}

WEAK void cell_result_release(struct cell_result *res)
{
	strbuf_release(&res->out);
	strbuf_release(&res->err);
	strbuf_release(&res->reply);
}

WEAK int sandbox_file_put(struct sandbox *sb, const char *path, const void *data, size_t len)
{
	(void)sb, (void)path, (void)data, (void)len;
	return -ENOSYS;
}

WEAK int sandbox_file_get(struct sandbox *sb, const char *path, struct strbuf *out, size_t max)
{
	(void)sb, (void)path, (void)out, (void)max;
	return -ENOSYS;
}

WEAK int sandbox_file_list(struct sandbox *sb, const char *dir, struct sandbox_dirent **out,
			   size_t *n)
{
	(void)sb, (void)dir, (void)out, (void)n;
	return -ENOSYS;
}

WEAK int sandbox_file_remove(struct sandbox *sb, const char *path)
{
	(void)sb, (void)path;
	return -ENOSYS;
}
