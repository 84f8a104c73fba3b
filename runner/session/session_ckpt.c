/* session_ckpt: a whole session saved and restored — its sandbox's memory and
 * processes (sandbox_proc_checkpoint) and the host's side of its contexts.
 *
 * How the host finds its drivers again. Everything of a session talks to the
 * host through sessd's stdio, the sandbox's stdio: the drivers' and processes'
 * pipes are sessd's, inside the sandbox, so the image holds them. gVisor gives
 * a restored sandbox the stdio of `runsc create` (new pipes of this host) in
 * place of the old ones, so the restored sessd writes its frames to the new
 * reader and reads ours; no agent, socket or fifo is needed. What the image
 * does not hold is the host's table: each context's sessd id, its reply token,
 * its driver's argv, env and cwd. That goes beside the image in session.json.
 */
#define _GNU_SOURCE
#include "runner/session/session_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/xalloc.h"

#define STATE_FILE "session.json"
#define STATE_MAX  (1 << 20)
/* how long processes of session_proc_start get to end before the checkpoint */
#define PROCS_END_MS 2000

static cJSON *strv_json(char **v)
{
	cJSON *a = cJSON_CreateArray();
	for (; v && *v; v++)
		cJSON_AddItemToArray(a, cJSON_CreateString(*v));
	return a;
}

/* A JSON array of strings as a NULL-terminated vector (owned), or NULL when it
 * is not one. */
static char **json_strv(const cJSON *a)
{
	if (!cJSON_IsArray(a))
		return NULL;
	int n = cJSON_GetArraySize(a);
	char **v = xcalloc((size_t)n + 1, sizeof *v);
	int i = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, a)
	{
		if (!cJSON_IsString(it)) {
			xstrvfree(v);
			return NULL;
		}
		v[i++] = xstrdup(it->valuestring);
	}
	return v;
}

/* The host's side of s (lock held). */
static char *state_json(struct session *s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "next_sid", (double)s->next_sid);
	cJSON_AddNumberToObject(o, "next_pid", (double)s->next_pid);
	cJSON *arr = cJSON_AddArrayToObject(o, "contexts");
	for (int i = 0; i < SESSION_MAX_CONTEXTS; i++) {
		struct context *c = &s->ctx[i];
		if (c->state == CTX_FREE)
			continue;
		cJSON *j = cJSON_CreateObject();
		cJSON_AddNumberToObject(j, "n", i);
		cJSON_AddNumberToObject(j, "sid", (double)c->sid);
		cJSON_AddBoolToObject(j, "ready", c->state == CTX_READY);
		cJSON_AddStringToObject(j, "token", c->token);
		cJSON_AddStringToObject(j, "cwd", c->cwd ? c->cwd : "/box");
		cJSON_AddItemToObject(j, "argv", strv_json(c->argv));
		cJSON_AddItemToObject(j, "env", strv_json(c->env));
		cJSON_AddItemToArray(arr, j);
	}
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return text;
}

/* Ends the processes of session_proc_start (lock held on entry and exit). */
static void procs_end(struct session *s)
{
	bool any = false;
	for (int i = 0; i < SESSION_MAX_PROCS; i++) {
		struct proc *p = &s->procs[i];
		if (p->used && p->running) {
			unsigned long sid = p->sid;
			session_unlock(s);
			session_send_signal(s, sid, SIGKILL);
			session_lock(s);
			any = true;
		}
	}
	int64_t deadline = clock_mono_ms() + PROCS_END_MS;
	while (any && !s->gone && clock_mono_ms() < deadline) {
		any = false;
		for (int i = 0; i < SESSION_MAX_PROCS; i++)
			any = any || (s->procs[i].used && s->procs[i].running);
		if (any)
			session_wait_until(s, deadline);
	}
}

int session_checkpoint(struct session *s, const char *dir, bool *alive, char *err, size_t errlen)
{
	*alive = true;
	int ret = -1;
	char path[PATH_MAX];
	pthread_mutex_lock(&s->plock);
	session_lock(s);
	if (s->halted || !s->proc || s->gone) {
		session_unlock(s);
		snprintf(err, errlen, "the session's sandbox is not running");
		goto out;
	}
	procs_end(s);
	char *text = state_json(s);
	session_unlock(s);
	snprintf(path, sizeof path, "%s/" STATE_FILE, dir);
	FILE *f = fopen(path, "we");
	bool wrote = f && fputs(text, f) >= 0;
	if (f && fclose(f) != 0)
		wrote = false;
	free(text);
	if (!wrote) {
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	/* nothing goes to sessd meanwhile: what sits in its stdin pipe is not saved */
	pthread_mutex_lock(&s->wlock);
	int rc = sandbox_proc_checkpoint(s->proc, dir, err, errlen);
	pthread_mutex_unlock(&s->wlock);
	if (rc < 0) {
		/* -2: it ended; the next cell starts it again (restarted) */
		*alive = rc == -1;
		goto out;
	}
	session_lock(s);
	s->halted = true;
	session_unlock(s);
	session_sandbox_end(s, "the session was paused");
	*alive = false;
	ret = 0;
out:
	pthread_mutex_unlock(&s->plock);
	return ret;
}

/* Sets s's contexts from dir's session.json. 0, or -1 with err. */
static int state_load(struct session *s, const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct strbuf text = STRBUF_INIT;
	cJSON *o = NULL;
	int ret = -1;
	snprintf(path, sizeof path, "%s/" STATE_FILE, dir);
	if (strbuf_read_file(&text, path, STATE_MAX) < 0 || !(o = cJSON_Parse(text.buf))) {
		snprintf(err, errlen, "the checkpoint's " STATE_FILE " is missing or malformed");
		goto out;
	}
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(o, "next_sid");
	const cJSON *np = cJSON_GetObjectItemCaseSensitive(o, "next_pid");
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, "contexts");
	if (!cJSON_IsNumber(ns) || !cJSON_IsNumber(np) || !cJSON_IsArray(arr) ||
	    ns->valuedouble < 0 || np->valuedouble < 0) {
		snprintf(err, errlen, "the checkpoint's " STATE_FILE " is malformed");
		goto out;
	}
	s->next_sid = (unsigned long)ns->valuedouble;
	s->next_pid = (long)np->valuedouble;
	/* context 0 comes from spec; the image says what its driver was */
	session_lock(s);
	xstrvfree(s->ctx[0].argv);
	xstrvfree(s->ctx[0].env);
	free(s->ctx[0].cwd);
	strbuf_release(&s->ctx[0].pending);
	strbuf_release(&s->ctx[0].errout);
	strbuf_release(&s->ctx[0].reply);
	memset(&s->ctx[0], 0, sizeof s->ctx[0]);
	session_unlock(s);
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "n");
		const cJSON *sid = cJSON_GetObjectItemCaseSensitive(it, "sid");
		const cJSON *tok = cJSON_GetObjectItemCaseSensitive(it, "token");
		const cJSON *cwd = cJSON_GetObjectItemCaseSensitive(it, "cwd");
		char **argv = json_strv(cJSON_GetObjectItemCaseSensitive(it, "argv"));
		char **env = json_strv(cJSON_GetObjectItemCaseSensitive(it, "env"));
		bool ok = cJSON_IsNumber(n) && n->valueint >= 0 &&
			  n->valueint < SESSION_MAX_CONTEXTS && cJSON_IsNumber(sid) &&
			  sid->valuedouble >= 1 && sid->valuedouble <= (double)s->next_sid &&
			  cJSON_IsString(tok) && strlen(tok->valuestring) == TOKEN_HEX + 1 &&
			  cJSON_IsString(cwd) && argv && argv[0] && env &&
			  s->ctx[n->valueint].state == CTX_FREE && !s->ctx[n->valueint].argv;
		if (!ok) {
			xstrvfree(argv);
			xstrvfree(env);
			snprintf(err, errlen, "the checkpoint's " STATE_FILE " has a bad context");
			goto out;
		}
		struct context *c = &s->ctx[n->valueint];
		session_ctx_set(c, (const char *const *)argv, (const char *const *)env,
				cwd->valuestring);
		xstrvfree(argv);
		xstrvfree(env);
		c->sid = (unsigned long)sid->valuedouble;
		memcpy(c->token, tok->valuestring, TOKEN_HEX + 2);
		/* a driver that was not ready is started again once the sandbox is */
		c->state = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "ready")) ? CTX_READY
										       : CTX_DEAD;
	}
	if (!s->ctx[0].argv) {
		snprintf(err, errlen, "the checkpoint has no default context");
		goto out;
	}
	ret = 0;
out:
	cJSON_Delete(o);
	strbuf_release(&text);
	return ret;
}

int session_restore(struct sandbox *sb, const struct session_spec *spec, const char *dir,
		    struct session **out, char *err, size_t errlen)
{
	*out = NULL;
	struct session *s = session_alloc(sb, spec, err, errlen);
	if (!s)
		return -1;
	if (state_load(s, dir, err, errlen) < 0 || session_sandbox_begin(s, dir, err, errlen) < 0)
		goto fail;
	for (int i = 0; i < SESSION_MAX_CONTEXTS; i++) {
		struct context *c = &s->ctx[i];
		char why[256];
		if (c->argv && c->state == CTX_DEAD) {
			if (session_ctx_launch(s, c, why, sizeof why) < 0)
				log_warn("session: cannot restart context %d: %s", i, why);
			c->state_lost = true;
		}
	}
	*out = s;
	return 0;
fail:
	session_stop(s);
	return -1;
}
