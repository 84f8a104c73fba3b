/* sessrun: runs one routed call (execute, install, files) in a session the worker holds.
 *
 * The answer is the JSON serve relays (sessdb.h's session_calls.response):
 *   {"http": 200, "body": {...}}                       a JSON answer
 *   {"http": 4xx, "error": {"code": ..., "message": ...}}   an error answer
 *   {"http": 200, "raw": true, "content_type": "image/png"} a file's bytes (in out->body)
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>

#include "common/strbuf.h"
#include "judge/service/session/sessdb.h"
#include "judge/service/session/sessreq.h"

struct judge_config;
struct lang;
struct lang_registry;
struct sandbox;
struct session;
struct install_options;

/* What a call may use of its session (owned by the session's thread). */
struct sessrun_env {
	const struct judge_config *cfg;
	const struct lang_registry *langs;
	const struct lang *lang;
	struct sandbox *sb;
	struct session *s;
	struct sess_limits limits;
	long execution_count; /* cells run so far; execute adds one */
	const struct install_options *install;
	/* Optional: each piece of a cell's output as it is printed (fd 1 or 2). */
	void (*on_output)(void *arg, int fd, const char *data, size_t len);
	void *output_arg;
};

struct sessrun_out {
	cJSON *response; /* owned */
	struct strbuf body;
	int cells;	/* 1 when a cell ran */
	bool restarted; /* the driver was started again: state lost */
};

void sessrun_out_init(struct sessrun_out *o);
void sessrun_out_release(struct sessrun_out *o);
/* Runs call c of kind execute, install, file_put, file_get, file_list or
 * file_delete; always fills out->response. */
void sessrun_run(struct sessrun_env *env, const struct sess_call *c, struct sessrun_out *out);
/* {"http": status, "error": {"code", "message"}} (a new object). */
cJSON *sessrun_error(int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
