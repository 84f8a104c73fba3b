/* sesscall: a session call and its reply, typed — the one model of sessions that
 * every layer shares, from a front down to the runner and back.
 *
 * How a call flows (docs/sessions.md walks one cell file by file):
 *   a front parses a body once into a struct sess_call (sessreq.h)
 *   -> sessdb stores it (sesscall_store: the JSON of session_calls.request, its
 *      bytes in session_calls.body) and NOTIFYs the holding worker
 *   -> the worker loads it typed (sesscall_load) and runs it (sessrun.h): the
 *      answer is a struct sess_reply, whose cell status the runner decided
 *      (runner/session/session.h, enum cell_status), or a domain error
 *      (enum sess_err)
 *   -> sessdb stores the reply (sesscall_reply_store: session_calls.response,
 *      a file's bytes in response_body)
 *   -> serve loads it typed (sesscall_reply_load) and its front renders it
 *      (judge/api/sessrender.h maps a domain error to an HTTP status and error
 *      code; MCP, and later the E2B front, render the same struct).
 * Nothing but these functions reads or writes the stored JSON.
 *
 * A session holds code contexts (a language driver each, with its own state;
 * the session's language has the "default" one) and processes (commands with
 * argv, cwd and env, their output streamed). Pure: no database, no sandbox.
 *
 * Adding a call kind: a value of enum scall_kind and its row in the kinds
 * table of sesscall.c; its fields in struct sess_call and struct sess_reply,
 * stored and loaded here; its parse in sessreq.c; its run in sessrun.c; its
 * route and rendering in judge/api (docs/ARCHITECTURE.md, "Add a session call").
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"
#include "judge/grading/compare.h"
#include "judge/grading/model.h"
#include "judge/grading/status.h"
#include "runner/sandbox.h"
#include "runner/session/session.h"

/* The kinds of call. The CHECK constraint of session_calls.kind (migrations/)
 * lists the same names. */
enum scall_kind {
	SCALL_EXECUTE,		   /* run a cell in a context */
	SCALL_INSTALL,		   /* pip or npm install into the session's folder */
	SCALL_FILE_PUT,		   /* write a file of the session folder (bytes in body) */
	SCALL_FILE_GET,		   /* read one (bytes in the reply) */
	SCALL_FILE_LIST,	   /* list a folder */
	SCALL_FILE_DELETE,	   /* remove a file or folder */
	SCALL_CLOSE,		   /* end the session */
	SCALL_CONTEXT_CREATE,	   /* start a code context (a driver) */
	SCALL_CONTEXT_LIST,	   /* the contexts */
	SCALL_CONTEXT_RESTART,	   /* a fresh driver in a context (its state lost, its id kept) */
	SCALL_CONTEXT_REMOVE,	   /* stop and forget a context */
	SCALL_PROCESS_START,	   /* start a command */
	SCALL_PROCESS_INPUT,	   /* bytes for a process's stdin (in body) */
	SCALL_PROCESS_CLOSE_STDIN, /* EOF on its stdin */
	SCALL_PROCESS_SIGNAL,	   /* a signal to its process group */
	SCALL_PROCESS_WAIT,	   /* its end (or how it stands after timeout_ms) */
	SCALL_PROCESS_LIST,	   /* the processes, running and ended */
	SCALL_PAUSE,	    /* store the session's image, then end its sandbox (sessimage.h) */
	SCALL_SNAPSHOT,	    /* store a named image; the session goes on */
	SCALL_FILE_STAT,    /* one entry of the session folder (a link not followed) */
	SCALL_FILE_MKDIR,   /* make a folder and its parents */
	SCALL_FILE_MOVE,    /* rename path to `to`, making to's folders */
	SCALL_WATCH_START,  /* watch folder path (sesswatch.h): streamed, or kept for polling */
	SCALL_WATCH_EVENTS, /* a polled watcher's events since the last call */
	SCALL_WATCH_STOP,   /* end a watcher */
	SCALL_INTERRUPT,    /* interrupt the running cell (of call `target`, 0: any) */
	SCALL_KIND_COUNT
};

/* A kind's name as stored ("execute", "file_put" ...). */
const char *scall_kind_name(enum scall_kind k);
/* The kind named s, or -1. */
int scall_kind_parse(const char *s);
/* True when calls of kind k run on their session's thread, one at a time in the
 * order serve stored them (cells, installs, files, contexts, close); false for
 * the process calls, which run at once beside them (stdin for a command a cell
 * waits on must not wait behind that cell). */
bool scall_kind_serial(enum scall_kind k);

/* The session's errors, as the worker answers them; a front maps each to its
 * own shape (judge/api/sessrender.h: HTTP status and error code). */
enum sess_err {
	SERR_NONE,
	SERR_BAD_REQUEST,     /* arguments the worker refused (an unknown language ...) */
	SERR_NOT_FOUND,	      /* no such file */
	SERR_BAD_PATH,	      /* a path that leaves the session folder or goes through a link */
	SERR_IS_A_DIRECTORY,  /* a folder where a file was wanted */
	SERR_NOT_A_DIRECTORY, /* a file where a folder was wanted */
	SERR_TOO_LARGE,	      /* a file over what a call may carry */
	SERR_DISK_FULL,	      /* the session folder is full */
	SERR_INSTALL_FAILED,  /* an install that could not run at all */
	SERR_NO_CONTEXT,      /* no context of that id */
	SERR_NO_PROCESS,      /* no process of that pid */
	SERR_CONFLICT,	      /* the session's own programs changed the path meanwhile: retry */
	SERR_FORBIDDEN,	      /* what the session's programs made that a call may not touch */
	SERR_LIMIT,	      /* the session holds as many contexts or processes as it may */
	SERR_SESSION_CLOSED,  /* the session ended while the call waited */
	SERR_SESSION_LOST,    /* its worker stopped answering */
	SERR_IMAGE_TOO_LARGE, /* the image is over what the key may store */
	SERR_INTERNAL,	      /* the judge's own fault: message */
	SERR_COUNT
};
/* The error's stored name ("not_found", "session_lost" ...). */
const char *sess_err_name(enum sess_err e);
/* The error named s; SERR_INTERNAL when unknown. */
enum sess_err sess_err_parse(const char *s);

/* A context's id: 1 to SESS_ID_MAX - 1 bytes of [A-Za-z0-9_-]. The session's
 * own language runs in SESS_DEFAULT_CONTEXT, from its start. */
#define SESS_ID_MAX	     64
#define SESS_DEFAULT_CONTEXT "default"
#define SESS_LANGUAGE_MAX    32
/* What a session may hold at once. */
#define SESS_MAX_CONTEXTS  8
#define SESS_MAX_PROCESSES 32
#define SESS_MAX_PACKAGES  64
/* Watchers a session may hold at once, and the longest one lives. */
#define SESS_MAX_WATCHERS 8
#define SESS_WATCH_MAX_MS (3600 * 1000L)
/* The most files one file_put writes, entries one file_list answers. */
#define SESS_MAX_PARTS	 100
#define SESS_MAX_ENTRIES 10000
/* The deepest file_list. */
#define SESS_MAX_DEPTH 16

/* One call, typed. Each kind uses its own part; the rest stays empty. */
struct sess_call {
	enum scall_kind kind;
	int64_t id;		   /* session_calls.id (0 before it is stored) */
	char session_id[37];	   /* "" before it is stored */
	char context[SESS_ID_MAX]; /* execute, context_restart / _remove: "" = default */
	struct {
		char *code;
		char *stdin_data; /* NULL: none */
		char **env;	  /* this cell's variables, "K=V", NULL-terminated (may be NULL) */
		long timeout_ms;  /* 0: the session's limits */
		char *expected;	  /* NULL: no verdict */
		bool has_compare; /* false: lines */
		struct compare_options cmp;
		bool stream; /* its output is streamed (cell:<call id>, judge/api/sse.h) */
		/* a language's name: the cell runs in that language's default
		 * context (made at its first cell); "" = by context */
		char language[SESS_LANGUAGE_MAX];
	} exec;
	struct {
		char manager[8]; /* "pip" or "npm" */
		char **packages; /* NULL-terminated */
	} install;
	char *path;	    /* files: relative to the session folder ("" = the folder);
			       context_create, process_start: the working directory */
	char *to;	    /* file_move: the new path, relative as path */
	struct strbuf body; /* file_put's bytes, process_input's */
	/* file_put of several files (E2B's multipart write): nparts paths, each
	 * with its length; body is their bytes one after another, path the first */
	struct sess_part {
		char *path;
		size_t len;
	} * parts;
	size_t nparts;
	int depth; /* file_list: levels below path (0 and 1: its own entries) */
	struct {
		char id[SESS_ID_MAX]; /* events, stop: the watcher */
		bool recursive;	      /* start: the subfolders too */
		bool stream;	      /* start: events to the stream "watch:<session>:<id>",
					 else kept until polled */
		long timeout_ms;      /* start: its lifetime (0: SESS_WATCH_MAX_MS) */
	} watch;
	struct {
		char language[SESS_LANGUAGE_MAX]; /* "" = the session's */
	} ctx;
	struct {
		long pid;	 /* every process call but start and list */
		char **argv;	 /* start: NULL-terminated, argv[0] a path or a name in PATH */
		char **env;	 /* start: "K=V", NULL-terminated (may be NULL) */
		bool stdin_open; /* start: keep a pipe on its stdin (process_input) */
		long timeout_ms; /* start: its lifetime (0: the session's); wait: how long */
		char tag[SESS_ID_MAX]; /* start: the caller's name for it, "" = none */
		int signal;	       /* signal */
		/* start: the caller relays its output on the same request (it waits
		 * for the start event itself), so the answer need not wait until that
		 * event is written */
		bool relayed;
	} proc;
	char image_name[64]; /* snapshot: the caller's name for it ("" = none) */
	bool idle;	     /* pause: the worker's own, of an idle session (idle_action) */
	bool checkpoint;     /* snapshot: the worker's own periodic one (checkpoint_interval_s) */
	int64_t target;	     /* interrupt: only while this call's cell runs (0: any cell) */
};
void sess_call_init(struct sess_call *c, enum scall_kind k);
void sess_call_release(struct sess_call *c);

/* The JSON of c for session_calls.request (c->body goes beside it, as bytes).
 * Never NULL; the caller deletes it. */
cJSON *sesscall_store(const struct sess_call *c);
/* Reads a stored call of kind k (request JSON and body bytes) into out, which it
 * initializes. Returns 0, or -1 with err (out must be released either way). */
int sesscall_load(enum scall_kind k, const cJSON *request, const void *body, size_t len,
		  struct sess_call *out, char *err, size_t errlen);

/* A cell's answer (execute). */
struct sess_cell {
	enum cell_status status; /* the runner's decision */
	struct strbuf out, err;
	bool out_truncated, err_truncated;
	char *result; /* the last expression's value, NULL: none */
	bool has_error;
	char *error_name, *error_value, *error_traceback;
	/* Rich results (languages/drivers/PROTOCOL.md "results"): a JSON array as
	 * text, NULL when none; results_dropped: those left out over the cap. */
	char *results;
	long results_dropped;
	long execution_count; /* cells run in the session so far, this one included */
	long time_ms, wall_ms, memory_kb;
	long session_memory_kb; /* the whole sandbox's host memory now; -1 unknown */
	bool restarted;		/* the context's driver was started again: state lost */
	/* >= 0: the session's worker died and it was restored from its periodic
	 * checkpoint, this old then (the first cell after says so); -1: not */
	double checkpoint_age_s;
	char message[256]; /* "" = none */
	bool has_verdict;  /* expected_output was given */
	enum sub_status verdict;
	struct grade_feedback feedback; /* when the verdict is wrong_answer */
};

/* A context as it is shown. */
struct sess_context_info {
	char id[SESS_ID_MAX];
	char language[SESS_LANGUAGE_MAX];
	char *cwd; /* relative to the session folder, "" = the folder */
};

/* A process as it is shown. */
struct sess_process_info {
	long pid; /* the session's number of the process (1, 2 ...), never reused */
	char **argv;
	char *cwd;
	char tag[SESS_ID_MAX];
	bool running;
	/* when it ended: exited with exit_code, or killed by signal */
	bool exited;
	int exit_code, signal;
	char message[256]; /* why it ended when the session ended it ("" = none) */
};

/* One answer, typed. err != SERR_NONE: message says why, nothing else holds. */
struct sess_reply {
	enum sess_err err;
	char message[512];
	int cells;	/* cells run (execution_count grows by it) */
	bool restarted; /* a driver was started again (sessions.restarts grows) */
	struct sess_cell cell;
	struct {
		bool ok;
		char **packages; /* NULL-terminated */
		struct strbuf output;
		long time_ms;
		char message[256];
	} install;
	struct {
		char *path;
		long long size;			/* file_put */
		bool deleted;			/* file_delete */
		bool existed;			/* file_mkdir: the folder was there already */
		char type[64];			/* file_get: its Content-Type */
		struct strbuf bytes;		/* file_get */
		struct sandbox_dirent *entries; /* list; stat, mkdir, move: the one */
		size_t nentries;
	} file;
	char closed[37]; /* close: the session's id */
	int interrupted; /* interrupt: the cells it interrupted */
	struct {
		char id[SESS_ID_MAX]; /* start: the new watcher's */
		char *events;	      /* events: a JSON array [{name, type}] (text) */
	} watch;
	struct {
		char id[37];	  /* pause, snapshot: the stored image */
		char name[64];	  /* snapshot: its name */
		long long size;	  /* the packed folder's bytes */
		long long stored; /* compressed, as it counts against the key's cap */
		long files;	  /* files and folders in it */
		long skipped;	  /* FIFOs, sockets and what changed meanwhile, left out */
		long ms;	  /* how long storing it took */
		bool memory;	  /* it holds the sandbox's memory (gVisor's checkpoint) */
	} image;
	struct sess_context_info *contexts;
	size_t ncontexts; /* context_create / _restart: 1; context_list: all */
	struct sess_process_info *procs;
	size_t
	    nprocs; /* process_* but list: 1 (input, close_stdin, signal: its state); list: all */
};
void sess_reply_init(struct sess_reply *r);
void sess_reply_release(struct sess_reply *r);
/* Makes r the error e with a message (printf-style); returns r. */
struct sess_reply *sess_reply_fail(struct sess_reply *r, enum sess_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends a context / a process to r (copies every string). */
void sess_reply_add_context(struct sess_reply *r, const char *id, const char *language,
			    const char *cwd);
struct sess_process_info *sess_reply_add_process(struct sess_reply *r,
						 const struct sess_process_info *p);

/* The JSON of r, an answer to a call of kind k, for session_calls.response:
 * {"reply": {...}} or {"error": {"code": <sess_err name>, "message": ...}}
 * (a file's bytes go beside it: file.bytes). Never NULL; the caller deletes it.
 * migrations/0010_session_model.sql reads "reply"'s result and error of a
 * streamed cell, and writes answers of ended sessions as such errors. */
cJSON *sesscall_reply_store(enum scall_kind k, const struct sess_reply *r);

/* A pause's or snapshot's image numbers (size, stored, files, skipped, time_ms)
 * into o: the stored reply and the API's answer carry the same keys. */
void sesscall_image_numbers(cJSON *o, const struct sess_reply *r);
/* A cell's fields into o, as stored and as the API shows them (one writer of
 * the shape, so the stored reply and the rendered one cannot drift). */
void sesscall_cell_store(cJSON *o, const struct sess_cell *c);
/* Reads a stored answer of kind k (with a file's bytes when body is non-NULL)
 * into out, which it initializes. Lenient: a missing field is empty. Returns
 * 0, or -1 when the JSON is neither form (then out is SERR_INTERNAL). */
int sesscall_reply_load(enum scall_kind k, const cJSON *response, const void *body, size_t len,
			struct sess_reply *out);
