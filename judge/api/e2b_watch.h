/* e2b_watch: envd's folder watching (filesystem.Filesystem's WatchDir stream
 * and its polling trio CreateWatcher, GetWatcherEvents, RemoveWatcher) over
 * a session's watchers (judge/service/session/sesswatch.h).
 *
 * WatchDir {path, recursive}: the relay of the watcher's stream as Connect
 * envelopes, {"start": {}} first, {"filesystem": {name, type}} per event
 * (name relative to the folder), {"keepalive": {}} in silences, then the
 * end-of-stream envelope; it lives Connect-Timeout-Ms (the SDK's timeoutMs).
 * A missing folder is not_found, a file invalid_argument, a path outside
 * /home/user invalid_argument, too many watchers resource_exhausted.
 * CreateWatcher answers {watcherId}; GetWatcherEvents {events} since the
 * last poll; RemoveWatcher {} (no such watcher: not_found).
 */
#pragma once
#include <stdbool.h>

struct api;
struct http_request;

/* Handles filesystem.Filesystem/<method> for the four watch methods;
 * returns false (having done nothing) for any other method. */
bool e2b_watch_handle(struct http_request *r, struct api *a, const char *sandbox,
		      const char *method);
