/* e2b_process: envd's process.Process over a session's processes (see e2b_process.h). */
#define _GNU_SOURCE /* strsignal */
#include "judge/api/e2b_process.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/base64.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "judge/api/e2b_connect.h"
#include "judge/api/e2b_envd.h"
#include "judge/api/http.h"
#include "judge/api/sessions.h"
#include "judge/api/sse.h"

#define STREAM_TYPE E2B_CONNECT_STREAM_TYPE

/* The selected process's pid as text ({"process": {"pid": N}}), or NULL. */
static const char *pid_of(const cJSON *in, char buf[24])
{
	cJSON *sel = e2b_connect_field(in, "process", NULL);
	cJSON *pid = e2b_connect_field(sel, "pid", NULL);
	double v = cJSON_IsNumber(pid)		       ? pid->valuedouble
		   : cJSON_GetStringValue(pid) != NULL ? strtod(pid->valuestring, NULL)
						       : 0;
	if (v < 1 || v > 1e9 || v != (double)(long)v)
		return NULL;
	snprintf(buf, 24, "%ld", (long)v);
	return buf;
}

/* ---- the stream's events ---- */

/* Go's text of an ended process (envd's status and error): "exit status 3",
 * "signal: killed". */
static void go_status(int exit_code, int sig, bool exited, char out[64])
{
	if (exited) {
		snprintf(out, 64, "exit status %d", exit_code);
		return;
	}
	const char *s = sig == 9 ? "killed" : strsignal(sig);
	snprintf(out, 64, "signal: %s", s ? s : "unknown");
	out[8] = (char)tolower((unsigned char)out[8]);
}

/* http_request.event_transform of a process stream: the relay's events as
 * ProcessEvent envelopes. */
static bool to_envelope(struct http_request *r, const char *event, const char *data,
			struct strbuf *out, void *arg)
{
	(void)r;
	(void)arg;
	cJSON *d = cJSON_Parse(data);
	cJSON *o = cJSON_CreateObject(), *ev = cJSON_AddObjectToObject(o, "event");
	bool end = false;
	if (!strcmp(event, "start")) {
		cJSON *pid = cJSON_GetObjectItemCaseSensitive(d, "pid");
		cJSON_AddNumberToObject(cJSON_AddObjectToObject(ev, "start"), "pid",
					cJSON_IsNumber(pid) ? pid->valuedouble : 0);
	} else if ((!strcmp(event, "stdout") || !strcmp(event, "stderr")) && cJSON_IsString(d)) {
		struct strbuf b = STRBUF_INIT;
		base64_encode(&b, d->valuestring, strlen(d->valuestring));
		cJSON_AddStringToObject(cJSON_AddObjectToObject(ev, "data"), event,
					b.buf ? b.buf : "");
		strbuf_release(&b);
	} else if (!strcmp(event, "done")) {
		cJSON *code = cJSON_GetObjectItemCaseSensitive(d, "exit_code");
		cJSON *sig = cJSON_GetObjectItemCaseSensitive(d, "signal");
		bool exited = cJSON_IsNumber(code);
		int ec = exited ? code->valueint : -1;
		char status[64];
		go_status(ec, cJSON_IsNumber(sig) ? sig->valueint : 9, exited, status);
		cJSON *e = cJSON_AddObjectToObject(ev, "end");
		cJSON_AddNumberToObject(e, "exitCode", ec);
		cJSON_AddBoolToObject(e, "exited", exited);
		cJSON_AddStringToObject(e, "status", status);
		if (ec != 0)
			cJSON_AddStringToObject(e, "error", status);
		end = true;
	} else {
		cJSON_Delete(o); /* "truncated" and the like: nothing of E2B's */
		o = NULL;
	}
	if (o)
		e2b_connect_envelope_json(out, 0, o);
	if (end)
		e2b_connect_envelope(out, E2B_CONNECT_FLAG_END, "{}");
	cJSON_Delete(d);
	return end;
}

#define KEEPALIVE_JSON "{\"event\":{\"keepalive\":{}}}"
static const char keepalive[] = "\0\0\0\0\x1a" KEEPALIVE_JSON;
_Static_assert(sizeof KEEPALIVE_JSON - 1 == 0x1a, "the keep-alive envelope's length byte");
static const struct sse_opts framing = {
    .content_type = STREAM_TYPE, .keepalive = keepalive, .keepalive_len = sizeof keepalive - 1};

static void as_stream(struct http_request *r)
{
	r->transform = e2b_connect_stream_render;
	r->transform_arg = (void *)"the process did not start";
	r->transform_type = STREAM_TYPE;
	r->event_transform = to_envelope;
}

/* Start: ProcessConfig onto POST .../processes: argv cmd + args, env (the
 * sandbox's marks first), cwd under the home, stdin kept unless false,
 * Connect-Timeout-Ms as the lifetime. */
static void start(struct http_request *r, struct api *a, const char *sandbox, const cJSON *in)
{
	cJSON *p = e2b_connect_field(in, "process", NULL);
	const char *cmd = cJSON_GetStringValue(e2b_connect_field(p, "cmd", NULL));
	if (e2b_connect_field(in, "pty", NULL))
		return e2b_connect_respond_stream_error(
		    r, "unimplemented", "this judge gives processes no terminal (pty) yet");
	if (!cmd || !*cmd)
		return e2b_connect_respond_stream_error(r, "invalid_argument",
							"process.cmd is required");
	cJSON *v1 = cJSON_CreateObject(), *argv = cJSON_AddArrayToObject(v1, "argv");
	cJSON_AddItemToArray(argv, cJSON_CreateString(cmd));
	const cJSON *arg;
	cJSON_ArrayForEach(arg, e2b_connect_field(p, "args", NULL))
	{
		if (!cJSON_IsString(arg)) {
			cJSON_Delete(v1);
			return e2b_connect_respond_stream_error(r, "invalid_argument",
								"process.args must be strings");
		}
		cJSON_AddItemToArray(argv, cJSON_CreateString(arg->valuestring));
	}
	cJSON *env = cJSON_AddObjectToObject(v1, "env");
	cJSON_AddStringToObject(env, "E2B_SANDBOX", "true");
	cJSON_AddStringToObject(env, "E2B_SANDBOX_ID", sandbox);
	const cJSON *e;
	cJSON_ArrayForEach(e, e2b_connect_field(p, "envs", NULL))
	{
		if (cJSON_IsString(e)) {
			cJSON_DeleteItemFromObjectCaseSensitive(env, e->string);
			cJSON_AddStringToObject(env, e->string, e->valuestring);
		}
	}
	const char *cwd = cJSON_GetStringValue(e2b_connect_field(p, "cwd", NULL));
	if (cwd && *cwd) {
		struct strbuf rel = STRBUF_INIT;
		char abs[1024];
		if (e2b_envd_path(cwd, &rel, abs) < 0) {
			strbuf_release(&rel);
			cJSON_Delete(v1);
			char m[1200];
			snprintf(m, sizeof m, "cwd '%.1000s' does not exist", cwd);
			return e2b_connect_respond_stream_error(r, "invalid_argument", m);
		}
		if (rel.len)
			cJSON_AddStringToObject(v1, "cwd", rel.buf);
		strbuf_release(&rel);
	}
	cJSON *sin = e2b_connect_field(in, "stdin", NULL);
	cJSON_AddBoolToObject(v1, "stdin", !cJSON_IsFalse(sin));
	const char *tag = cJSON_GetStringValue(e2b_connect_field(in, "tag", NULL));
	if (tag && *tag)
		cJSON_AddStringToObject(v1, "tag", tag);
	const char *to = http_header(r, "Connect-Timeout-Ms");
	double ms = to ? strtod(to, NULL) : 0; /* lenient: old SDKs sent "500.0" */
	if (ms >= 1)
		cJSON_AddNumberToObject(v1, "timeout_ms", ms);
	as_stream(r);
	sessions_process_start_events(r, a, sandbox, v1, &framing);
	cJSON_Delete(v1);
}

static void connect_to(struct http_request *r, struct api *a, const char *sandbox, const cJSON *in)
{
	char pid[24];
	if (!pid_of(in, pid))
		return e2b_connect_respond_stream_error(
		    r, "invalid_argument", "process.pid is required (tags are not served yet)");
	as_stream(r);
	sessions_process_events(r, a, sandbox, pid, &framing);
}

/* ---- unary calls ---- */

enum unary { U_EMPTY, U_LIST };

/* A unary call's /v1 answer as Connect's: {} (or List's processes), or the
 * error with its code. */
static int unary_render(struct http_request *r, int status, const char *body, size_t len,
			struct strbuf *out, void *arg)
{
	(void)r;
	(void)len;
	if (status >= 300)
		return e2b_connect_render_error(status, body, out);
	cJSON *o = cJSON_CreateObject();
	if ((enum unary)(long)arg == U_LIST) {
		cJSON *in = cJSON_Parse(body), *list = cJSON_AddArrayToObject(o, "processes");
		const cJSON *p;
		cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(in, "processes"))
		{
			if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "running")))
				continue; /* envd lists the running ones only */
			cJSON *x = cJSON_CreateObject(),
			      *cfg = cJSON_AddObjectToObject(x, "config");
			cJSON *pid = cJSON_GetObjectItemCaseSensitive(p, "pid");
			cJSON_AddNumberToObject(x, "pid",
						cJSON_IsNumber(pid) ? pid->valuedouble : 0);
			cJSON *argv = cJSON_GetObjectItemCaseSensitive(p, "argv"), *args;
			const char *cmd = cJSON_GetStringValue(cJSON_GetArrayItem(argv, 0));
			cJSON_AddStringToObject(cfg, "cmd", cmd ? cmd : "");
			args = cJSON_AddArrayToObject(cfg, "args");
			for (int i = 1; i < cJSON_GetArraySize(argv); i++)
				cJSON_AddItemToArray(
				    args, cJSON_Duplicate(cJSON_GetArrayItem(argv, i), false));
			const char *cwd =
			    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "cwd"));
			char abs[1100];
			snprintf(abs, sizeof abs, "/home/user%s%s", cwd && *cwd ? "/" : "",
				 cwd ? cwd : "");
			cJSON_AddStringToObject(cfg, "cwd", abs);
			const char *tag =
			    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "tag"));
			if (tag)
				cJSON_AddStringToObject(x, "tag", tag);
			cJSON_AddItemToArray(list, x);
		}
		cJSON_Delete(in);
	}
	char *s = cJSON_PrintUnformatted(o);
	strbuf_addstr(out, s);
	cJSON_free(s);
	cJSON_Delete(o);
	return 200;
}

static void as_unary(struct http_request *r, enum unary u)
{
	r->transform = unary_render;
	r->transform_arg = (void *)(long)u;
}

/* SendInput, CloseStdin, SendSignal: a call on the selected process. */
static void on_process(struct http_request *r, struct api *a, const char *sandbox,
		       const char *method, const cJSON *in)
{
	char pid[24];
	if (!pid_of(in, pid))
		return e2b_connect_respond_error(r, "invalid_argument", "process.pid is required");
	cJSON *v1 = cJSON_CreateObject();
	enum scall_kind kind;
	if (!strcmp(method, "SendInput")) {
		cJSON *input = e2b_connect_field(in, "input", NULL);
		const char *b64 = cJSON_GetStringValue(e2b_connect_field(input, "stdin", NULL));
		if (!b64) {
			cJSON_Delete(v1);
			return e2b_connect_respond_error(
			    r,
			    e2b_connect_field(input, "pty", NULL) ? "unimplemented"
								  : "invalid_argument",
			    "input.stdin (base64) is required; processes have no pty here");
		}
		cJSON_AddStringToObject(v1, "data", b64);
		cJSON_AddStringToObject(v1, "encoding", "base64");
		kind = SCALL_PROCESS_INPUT;
	} else if (!strcmp(method, "CloseStdin")) {
		kind = SCALL_PROCESS_CLOSE_STDIN;
	} else {
		cJSON *sig = e2b_connect_field(in, "signal", NULL);
		const char *name = cJSON_GetStringValue(sig);
		char num[16];
		if (cJSON_IsNumber(sig))
			snprintf(num, sizeof num, "%d", sig->valueint), name = num;
		else if (name && !strncmp(name, "SIGNAL_", 7))
			name += 7;
		cJSON_AddStringToObject(v1, "signal", name ? name : "SIGKILL");
		kind = SCALL_PROCESS_SIGNAL;
	}
	as_unary(r, U_EMPTY);
	sessions_process(r, a, sandbox, kind, pid, v1);
	cJSON_Delete(v1);
}

void e2b_process_handle(struct http_request *r, struct api *a, const char *sandbox,
			const char *method)
{
	bool stream = !strcmp(method, "Start") || !strcmp(method, "Connect");
	if (strcmp(r->method, "POST"))
		return e2b_connect_respond_error(r, "unimplemented", "Connect calls are POSTs");
	cJSON *in = e2b_connect_message(r, stream);
	if (!in)
		return;
	if (!strcmp(method, "Start"))
		start(r, a, sandbox, in);
	else if (!strcmp(method, "Connect"))
		connect_to(r, a, sandbox, in);
	else if (!strcmp(method, "List")) {
		as_unary(r, U_LIST);
		sessions_call(r, a, sandbox, SCALL_PROCESS_LIST, NULL);
	} else if (!strcmp(method, "SendInput") || !strcmp(method, "CloseStdin") ||
		   !strcmp(method, "SendSignal"))
		on_process(r, a, sandbox, method, in);
	else
		e2b_connect_respond_error(r, "unimplemented",
					  "this judge does not serve that process call (no pty, no "
					  "StreamInput)");
	cJSON_Delete(in);
}
