/* sessreq: the bodies and paths of the session endpoints, parsed once into
 * typed calls (sesscall.h).
 *
 * Pure functions of plain values (no database, no sandbox): a front checks a
 * request here before anything is stored, and what it stores is the typed
 * call this fills. Errors are request.h's struct request_error (HTTP status, code,
 * message), since only fronts call these.
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "judge/grading/limits.h"
#include "judge/grading/request.h"
#include "judge/service/session/sesscall.h"
#include "judge/service/session/sessnet.h"

struct judge_config;
struct lang;
struct lang_registry;

struct sessreq_create {
	const struct lang *lang; /* in the registry given */
	long idle_ttl_s;
	bool idle_pause;	      /* idle_action "pause": idle, it pauses instead of closing */
	struct limits_session limits; /* complete (limits_session) */
	struct sessnet_policy net;    /* within judge.ini's egress cap */
	cJSON *env;	 /* {"NAME": "value"}, checked; NULL: none (the caller deletes it) */
	cJSON *metadata; /* {"key": "value"}, checked; NULL: none (the caller deletes it) */
	long checkpoint_interval_s; /* its own periodic checkpoints; -1: judge.ini's */
};
/* A session's metadata: at most this many pairs, of keys and values this long. */
#define SESS_META_PAIRS 64
#define SESS_META_KEY	128
#define SESS_META_VALUE 1024

/* The language of a session or context: name or alias ("python3",
 * "javascript") of a language with a session driver. Returns it, or NULL with
 * e (422 unknown_language). */
const struct lang *sessreq_language(const struct lang_registry *langs, const char *name,
				    struct request_error *e);
/* The egress cap of the key that creates a session, when it has its own
 * (api_keys.egress, sessnet_keycap_parse): it replaces judge.ini's. */
struct sessreq_keycap {
	long long key_id;
	struct sessnet_policy cap;
};
/* POST /v1/sessions {language, idle_ttl?, idle_action?, limits?: {memory_mb, cpu_ms,
 * wall_ms, disk_mb, cpus, cpu_budget_s}, network?, env?, metadata?}: ranges and defaults from the
 * limits policy of cfg; network (sessnet.h) within the key's cap (kc, NULL: none of its own) or
 * else cfg's egress cap, beyond it 403 egress_forbidden naming the rule. Returns 0, or -1 with e.
 */
int sessreq_create(const struct judge_config *cfg, const struct lang_registry *langs,
		   const cJSON *in, const struct sessreq_keycap *kc, struct sessreq_create *out,
		   struct request_error *e);
/* The JSON of limits (for sessions.limits) and back (missing fields 0). */
cJSON *sessreq_limits_json(const struct limits_session *l);
void sessreq_limits_load(const cJSON *j, struct limits_session *out);

/* POST /v1/sessions/{id}/execute {code, stdin?, timeout_ms?, expected_output?,
 * compare?, context?}: 0 with *out (an execute call; the caller releases it),
 * or -1 with e. compare is checked as one-shot grading checks it. */
int sessreq_execute(const struct judge_config *cfg, const struct lang_registry *langs,
		    const cJSON *in, struct sess_call *out, struct request_error *e);
/* POST /v1/sessions/{id}/install {manager: "pip" | "npm", packages: [...]}:
 * every spec checked with install_check_package; 1 to SESS_MAX_PACKAGES.
 * Returns 0 with *out, or -1 with e (422 invalid_package for a refused name). */
int sessreq_install(const cJSON *in, struct sess_call *out, struct request_error *e);
/* A files call of kind (file_put with body, file_get, file_list, file_delete)
 * on path (already URL-decoded; "" is the folder, for file_list only): 0 with
 * *out, or -1 with e (400 bad_path). */
int sessreq_file(enum scall_kind kind, const char *path, const void *body, size_t len,
		 struct sess_call *out, struct request_error *e);
/* One file of a write of several. */
struct sessreq_part {
	const char *path; /* as sessreq_file takes it */
	const void *data;
	size_t len;
};
/* A file_put of n files (1 to SESS_MAX_PARTS), each path checked as
 * sessreq_file checks one; the bytes are copied. 0 with *out, or -1 with e
 * (400 bad_path, bad_request). */
int sessreq_file_parts(size_t n, const struct sessreq_part *parts, struct sess_call *out,
		       struct request_error *e);
/* A watch_start of folder path (checked as sessreq_file checks one; "" the
 * session folder), of its subfolders too when recursive, living timeout_ms
 * (<= 0 or more than SESS_WATCH_MAX_MS: that), its events streamed or kept
 * for polling. 0 with *out, or -1 with e. */
int sessreq_watch_start(const char *path, bool recursive, long timeout_ms, bool stream,
			struct sess_call *out, struct request_error *e);
/* A watch_events or watch_stop of watcher (hex digits; else 404 not_found). */
int sessreq_watch(enum scall_kind kind, const char *watcher, struct sess_call *out,
		  struct request_error *e);
/* A file_move call of from to to (both checked as sessreq_file checks a path). */
int sessreq_file_move(const char *from, const char *to, struct sess_call *out,
		      struct request_error *e);

/* POST /v1/sessions/{id}/contexts {language?, cwd?}: a context of a language
 * with a session driver (default: the session's), working in cwd (a folder of
 * the session, default the session folder). */
int sessreq_context_create(const struct lang_registry *langs, const cJSON *in,
			   struct sess_call *out, struct request_error *e);
/* A call of kind (context_restart, context_remove) on context id (from the path):
 * 0, or -1 with e (404 not_found: not a context id). */
int sessreq_context(enum scall_kind kind, const char *id, struct sess_call *out,
		    struct request_error *e);
/* True when s is a context id: 1 to SESS_ID_MAX - 1 of [A-Za-z0-9_-]. */
bool sessreq_context_id_valid(const char *s);

/* POST /v1/sessions/{id}/processes {argv: [...], cwd?, env?: {K: V}, stdin?,
 * timeout_ms?, tag?}: argv 1 to 256 strings (argv[0] an absolute path or a name
 * looked up in PATH), together with env at most max_source_kb. */
int sessreq_process_start(const struct judge_config *cfg, const cJSON *in, struct sess_call *out,
			  struct request_error *e);
/* The process calls that name one (pid from the path, checked here): input
 * {data, encoding?: "utf-8" | "base64"} (body), close_stdin, signal {signal:
 * "SIGTERM" | 15 ...}, wait (timeout_ms from ?wait_ms=, at most
 * SESSREQ_MAX_WAIT_MS). in is the body (NULL for none). */
#define SESSREQ_MAX_WAIT_MS 300000L
int sessreq_process(const struct judge_config *cfg, enum scall_kind kind, const char *pid,
		    const cJSON *in, long wait_ms, struct sess_call *out, struct request_error *e);
/* The signal named s ("SIGTERM", "TERM", "15"), among those a process may get
 * (HUP INT QUIT KILL USR1 USR2 TERM CONT STOP); 0 when none. */
int sessreq_signal(const char *s);

/* An MCP session tool's arguments (judge/api/mcp.c): session_id (into id, 37
 * bytes: 422 missing_field when absent, 404 not_found when no session id),
 * then for kind execute and install the body's other fields as their
 * endpoints take them; close nothing more; file_list path (default the
 * folder), file_get path, file_put path and content (text, or base64 with
 * "encoding": "base64"). 0 with *out, or -1 with e. */
int sessreq_tool(const struct judge_config *cfg, const struct lang_registry *langs,
		 enum scall_kind kind, const cJSON *args, char *id, struct sess_call *out,
		 struct request_error *e);

/* A path of the session folder as the files API takes it (already URL-decoded):
 * relative, parts separated by single '/', no "." or ".." part, no NUL or
 * control character, valid UTF-8, at most 1024 bytes, not empty unless
 * empty_ok (the folder itself). Returns true, or false with e (400 bad_path). */
bool sessreq_path(const char *path, bool empty_ok, struct request_error *e);
/* The Content-Type a file is served with, from its name's extension
 * ("application/octet-stream" when unknown). Static. */
const char *sessreq_content_type(const char *name);
/* Whether a file of content_type may be shown inline: a browser runs no
 * script in it (raster images, plain text, CSV, JSON). */
bool sessreq_inline_ok(const char *content_type);
/* Appends the Content-Disposition a session file named name is served
 * with: "inline" when sessreq_inline_ok of its type, else "attachment" with its
 * base name (RFC 6266, filename*=UTF-8''percent-encoded). */
void sessreq_disposition(const char *name, struct strbuf *out);
/* True when s is a session id: a UUID in lower- or upper-case hex. */
bool sessreq_id_valid(const char *s);
