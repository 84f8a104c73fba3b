/* sesswatch: the folder watchers of a session a worker holds (E2B's
 * files.watchDir and its polling trio) — their calls (watch_start,
 * watch_events, watch_stop: sesscall.h) and their events.
 *
 * How it works. A watcher is a thread that lists its folder every
 * SESSWATCH_POLL_MS beneath the box (runner/sandbox.h's sandbox_file_list,
 * never following a link) and compares the listing with the one before
 * (sesswatch_diff): an entry that appears is a create (and a write when it
 * is a file with bytes), one whose size or time in nanoseconds changes a
 * write, whose permission bits change a chmod, that goes a remove, or a
 * rename when its inode shows up under another name (then a create of the
 * new name). Polling from the host is the one way that sees every change on
 * both backends: the native sandbox's programs write the box's host folder
 * directly, gVisor's through its gofer, and the calls of the API write it
 * from the worker; inotify on the host folder would see all of that too but
 * not what a gVisor sandbox keeps in its own page cache until it writes
 * back, and inotify inside the sandbox would miss the worker's writes. The
 * cost: a change is seen within SESSWATCH_POLL_MS, changes undone within
 * that time are not seen, and the listing is capped (SESSWATCH_MAX_ENTRIES).
 *
 * A streamed watcher (WatchDir) writes its events to the stream
 * "watch:<session id>:<watcher id>" (outstream.h): "start" first, "fs" per
 * event ({"name": its path below the folder, "type": "EVENT_TYPE_..."}),
 * "done" last. A polled one keeps up to SESSWATCH_MAX_QUEUE events for
 * watch_events. A watcher ends at its lifetime (watch.timeout_ms, at most
 * SESS_WATCH_MAX_MS), when its folder goes, when a polled one was not polled
 * for SESSWATCH_IDLE_MS, at watch_stop, or with its session; a session holds
 * at most SESS_MAX_WATCHERS.
 */
#pragma once
#include <stddef.h>

#include "judge/service/session/sesscall.h"

#define SESSWATCH_POLL_MS     150
#define SESSWATCH_IDLE_MS     60000
#define SESSWATCH_MAX_QUEUE   1000
#define SESSWATCH_MAX_ENTRIES 10000

struct sandbox;
struct db_pool;
struct sesswatch;

/* The watchers of session session_id, whose streams go through PostgreSQL
 * with connections of out_pool (outstream_open_pooled, as the session's
 * processes; it outlives the watchers). */
struct sesswatch *sesswatch_new(struct db_pool *out_pool, const char *session_id);
/* Runs watch call c on the session's sandbox sb: fills out (initialized
 * here). Any thread. */
void sesswatch_call(struct sesswatch *w, struct sandbox *sb, const struct sess_call *c,
		    struct sess_reply *out);
/* Ends every watcher (before their sandbox closes) and frees w. NULL is fine. */
void sesswatch_free(struct sesswatch *w);

/* The stream of watcher id of session_id ("watch:<id>:<watcher>"), in out. */
void sesswatch_stream(const char *session_id, const char *id, char *out, size_t len);

/* One entry of a listing: its path below the watched folder. */
struct sesswatch_entry {
	char *name;
	char type; /* sandbox_dirent's */
	long long size, mtime;
	long mtime_ns;
	int mode;
	unsigned long long ino;
};
/* The events from listing a to listing b (each sorted by name), appended to
 * events (a JSON array) as {"name", "type"}: removes and renames first, then
 * creates, writes and chmods. Pure. */
void sesswatch_diff(const struct sesswatch_entry *a, size_t na, const struct sesswatch_entry *b,
		    size_t nb, cJSON *events);
